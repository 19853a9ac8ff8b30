/* The SQLite kit of db/: errors that are never 0, one error message, one bind of text or NULL,
 * a statement's first row, each row or no row, the JSON of a column, the SELECT list of a
 * table, the keyset cursor codec and the ISO time. */
#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db/db-private.h"
#include "db/db.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/isotime.h"
#include "util/log.h"

int db_err(int rc)
{
    switch (rc & 0xff) {
    case SQLITE_OK:
    case SQLITE_ROW:
    case SQLITE_DONE:
        return 0;
    case SQLITE_NOMEM:
        return -ENOMEM;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return -EBUSY;
    case SQLITE_FULL:
        return -ENOSPC;
    case SQLITE_READONLY:
        return -EROFS;
    case SQLITE_IOERR:
        return -EIO;
    case SQLITE_PERM:
    case SQLITE_AUTH:
        return -EACCES;
    default:
        return -VSL_EDB;
    }
}

int db_fail(sqlite3 *h, int rc, const char *what)
{
    const int r = db_err(rc);

    log_debug("db: %s: %s", what, h ? sqlite3_errmsg(h) : sqlite3_errstr(rc));
    return r ? r : -VSL_EDB;
}

void db_set_errmsg(char **errmsg, const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    if (!errmsg)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    free(*errmsg);
    *errmsg = strdup(msg);
}

int db_bind_text(sqlite3_stmt *st, int i, const char *s)
{
    return s ? sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC) : sqlite3_bind_null(st, i);
}

int db_bind_args(sqlite3_stmt *st, int first, const struct db_arg *args, size_t n)
{
    int rc = SQLITE_OK;

    for (size_t k = 0; rc == SQLITE_OK && k < n; k++) {
        int i = first + (int)k;
        switch (args[k].type) {
        case DB_ARG_TEXT:
            rc = db_bind_text(st, i, args[k].s);
            break;
        case DB_ARG_INT:
            rc = sqlite3_bind_int64(st, i, args[k].i);
            break;
        case DB_ARG_REAL:
            rc = sqlite3_bind_double(st, i, args[k].d);
            break;
        case DB_ARG_NULL:
            rc = sqlite3_bind_null(st, i);
            break;
        }
    }
    return rc;
}

/* sql prepared into *st with args bound to ?1, ?2, ...; SQLite's result code (the caller
 * finalizes *st whatever it is). */
static int prepare_args(sqlite3 *h, const char *sql, sqlite3_stmt **st, const struct db_arg *args,
                        size_t n)
{
    int rc = sqlite3_prepare_v2(h, sql, -1, st, NULL);

    return rc == SQLITE_OK ? db_bind_args(*st, 1, args, n) : rc;
}

int db_row_args(sqlite3 *h, const char *sql, sqlite3_stmt **st, const char *what,
                const struct db_arg *args, size_t n)
{
    int rc = prepare_args(h, sql, st, args, n);

    if (rc == SQLITE_OK)
        rc = sqlite3_step(*st);
    if (rc == SQLITE_ROW)
        return 0;
    return rc == SQLITE_DONE ? -VSL_ENOTFOUND : db_fail(h, rc, what);
}

int db_each_row(sqlite3_stmt *st, const char *what, db_row_fn *fn, void *ctx)
{
    int rc = SQLITE_OK, r = 0;

    while (r == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW)
        r = fn(st, ctx);
    if (r == 0 && rc != SQLITE_DONE)
        r = db_fail(sqlite3_db_handle(st), rc, what);
    return r;
}

int db_each_args(sqlite3 *h, const char *sql, const char *what, db_row_fn *fn, void *ctx,
                 const struct db_arg *args, size_t n)
{
    sqlite3_stmt *st = NULL;
    int rc = prepare_args(h, sql, &st, args, n);
    int r = rc == SQLITE_OK ? db_each_row(st, what, fn, ctx) : db_fail(h, rc, what);

    sqlite3_finalize(st);
    return r;
}

int db_run_args(sqlite3 *h, const char *sql, const char *what, const struct db_arg *args, size_t n)
{
    sqlite3_stmt *st = NULL;
    int rc = prepare_args(h, sql, &st, args, n);

    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : db_fail(h, rc, what);
}

static int stmt_cap(const struct db *db)
{
    return db->stmt_cap > 0 && db->stmt_cap < DB_STMT_CACHE ? db->stmt_cap : DB_STMT_CACHE;
}

static void stmt_evict(struct db *db, int i)
{
    sqlite3_finalize(db->stmts[i].st);
    free(db->stmts[i].sql);
    db->stmts[i].st = NULL;
    db->stmts[i].sql = NULL;
    db->stmts[i].out = 0;
}

/* Statements db_stmt() gave out and db_stmt_done() has not taken back, in the process. */
static atomic_long outstanding;

long db_stmt_outstanding(void)
{
    return atomic_load(&outstanding);
}

int db_stmt(struct db *db, const char *sql, sqlite3_stmt **out)
{
    const int cap = stmt_cap(db);
    int i, k, rc;

    *out = NULL;
    for (i = 0; i < cap; i++) {
        if (db->stmts[i].sql && !db->stmts[i].out && !strcmp(db->stmts[i].sql, sql)) {
            db->stmts[i].out = 1;
            *out = db->stmts[i].st;
            atomic_fetch_add(&outstanding, 1);
            return 0;
        }
    }
    /* The oldest entry nobody holds makes room: finalizing one a caller still holds would
     * leave it stepping or resetting freed memory. */
    for (k = 0, i = -1; k < cap && i < 0; k++) {
        const int j = (db->stmt_next + k) % cap;
        if (!db->stmts[j].out)
            i = j;
    }
    if (i < 0) {
        /* Every entry is held (a statement asked for while its twin is in use, or a cache
         * made tiny): this one is the caller's alone, finalized when given back. */
        rc = sqlite3_prepare_v2(db->h, sql, -1, out, NULL);
        if (rc != SQLITE_OK) {
            sqlite3_finalize(*out);
            *out = NULL;
            return db_fail(db->h, rc, sql);
        }
        atomic_fetch_add(&outstanding, 1);
        return 0;
    }
    db->stmt_next = (i + 1) % cap;
    stmt_evict(db, i);
    db->stmts[i].sql = strdup(sql);
    if (!db->stmts[i].sql)
        return -ENOMEM;
    rc = sqlite3_prepare_v3(db->h, sql, -1, SQLITE_PREPARE_PERSISTENT, &db->stmts[i].st, NULL);
    if (rc != SQLITE_OK) {
        stmt_evict(db, i);
        return db_fail(db->h, rc, sql);
    }
    db->stmts[i].out = 1;
    *out = db->stmts[i].st;
    atomic_fetch_add(&outstanding, 1);
    return 0;
}

void db_stmt_done(struct db *db, sqlite3_stmt *st)
{
    if (!st)
        return;
    atomic_fetch_sub(&outstanding, 1);
    for (int i = 0; i < DB_STMT_CACHE; i++) {
        if (db->stmts[i].st == st) {
            sqlite3_reset(st);
            sqlite3_clear_bindings(st);
            db->stmts[i].out = 0;
            if (i >= stmt_cap(db))
                stmt_evict(db, i); /* held while the cache shrank */
            return;
        }
    }
    sqlite3_finalize(st);
}

void db_stmt_cache_size(struct db *db, int n)
{
    assert(n >= 1 && n <= DB_STMT_CACHE);
    db->stmt_cap = n;
    db->stmt_next = 0;
    for (int i = n; i < DB_STMT_CACHE; i++)
        if (!db->stmts[i].out)
            stmt_evict(db, i);
}

void db_stmt_free(struct db *db)
{
    for (int i = 0; i < DB_STMT_CACHE; i++)
        stmt_evict(db, i);
}

int db_exec(sqlite3 *h, const char *sql)
{
    const int rc = sqlite3_exec(h, sql, NULL, NULL, NULL);

    return rc == SQLITE_OK ? 0 : db_fail(h, rc, sql);
}

json_t *db_json_text(sqlite3_stmt *st, int i)
{
    const char *s = (const char *)sqlite3_column_text(st, i);
    json_t *v;

    if (!s)
        return json_null();
    v = json_stringn(s, (size_t)sqlite3_column_bytes(st, i));
    if (!v)
        log_debug("db: column %s is not UTF-8", sqlite3_column_name(st, i));
    return v ? v : json_null();
}

json_t *db_json_utf8(const char *s)
{
    json_t *v = json_string(s);
    char *copy; /* owned */

    if (v || !s || !(copy = strdup(s)))
        return v;
    vsl_utf8_fix(copy);
    v = json_string(copy);
    free(copy);
    return v;
}

json_t *db_json_time(sqlite3_stmt *st, int i)
{
    char buf[32];
    const char *s;

    if (sqlite3_column_type(st, i) == SQLITE_NULL)
        return json_null();
    s = vsl_iso_time(sqlite3_column_int64(st, i), buf, sizeof(buf));
    return s ? json_string(s) : json_null();
}

int db_select_columns(struct vsl_buf *sql, int t, const char *alias)
{
    const struct db_table_def *d = &db_tables[t];
    int i, r = 0;

    for (i = 0; i < d->ncols && r == 0; i++) {
        const char *c = d->cols[i].name, *sep = i ? ", " : "";
        if (d->cols[i].flags & DB_EMPTY_NULL)
            r = vsl_buf_printf(sql, "%snullif(%s.%s, '')", sep, alias, c);
        else
            r = vsl_buf_printf(sql, "%s%s.%s", sep, alias, c);
    }
    return r;
}

/* ---- views ------------------------------------------------------------------------------- */

/* Whether word (len bytes) is one of the blank-separated words of list. */
static int in_list(const char *list, const char *word, size_t len)
{
    for (const char *p = list; p && *p;) {
        size_t n = strcspn(p, " ");
        if (n == len && strncmp(p, word, len) == 0)
            return 1;
        p += n + (p[n] == ' ');
    }
    return 0;
}

static void field_of_column(const struct db_column *c, const char *name, const char *alias,
                            struct db_field *f)
{
    snprintf(f->name, sizeof(f->name), "%s", name);
    if (c->flags & DB_EMPTY_NULL)
        snprintf(f->own, sizeof(f->own), "nullif(%s.%s, '')", alias, c->name);
    else
        snprintf(f->own, sizeof(f->own), "%s.%s", alias, c->name);
    f->expr = f->own;
    f->type = c->type == DB_FN ? DB_TEXT : c->type;
}

int db_view(int t, const char *alias, const char *spec, const struct db_extra *extras,
            const char *skip, struct db_field out[DB_MAX_FIELDS])
{
    const struct db_table_def *d = &db_tables[t];
    char used[64] = {0}; /* columns named so far */
    int n = 0, i;

    assert(d->ncols <= (int)sizeof(used));
    for (const char *p = spec; *p;) {
        const size_t len = strcspn(p, " ");
        const char *eq = memchr(p, '=', len);
        const size_t nlen = eq ? (size_t)(eq - p) : len;
        const char *col = eq ? eq + 1 : p;
        const size_t clen = eq ? len - nlen - 1 : len;
        int found = 0;

        if (len == 1 && *p == '*') {
            for (i = 0; i < d->ncols; i++) {
                const struct db_column *c = &d->cols[i];
                if (used[i] || (c->flags & DB_HIDDEN) || in_list(skip, c->name, strlen(c->name)))
                    continue;
                assert(n < DB_MAX_FIELDS);
                used[i] = 1;
                field_of_column(c, c->name, alias, &out[n++]);
            }
            found = 1;
        }
        for (i = 0; !found && extras && extras[i].name; i++) {
            if (strlen(extras[i].name) == len && strncmp(extras[i].name, p, len) == 0) {
                assert(n < DB_MAX_FIELDS);
                snprintf(out[n].name, sizeof(out[n].name), "%s", extras[i].name);
                out[n].expr = extras[i].expr;
                out[n++].type = extras[i].type;
                found = 1;
            }
        }
        if (!found && clen == 7 && strncmp(col, "vcenter", 7) == 0) {
            assert(n < DB_MAX_FIELDS);
            snprintf(out[n].name, sizeof(out[n].name), "%.*s", (int)nlen, p);
            snprintf(out[n].own, sizeof(out[n].own), "%s.vcenter", alias);
            out[n].expr = out[n].own;
            out[n++].type = DB_TEXT;
            found = 1;
        }
        for (i = 0; !found && i < d->ncols; i++) {
            if (strlen(d->cols[i].name) == clen && strncmp(d->cols[i].name, col, clen) == 0) {
                char name[40];
                assert(n < DB_MAX_FIELDS);
                snprintf(name, sizeof(name), "%.*s", (int)nlen, p);
                used[i] = 1;
                field_of_column(&d->cols[i], name, alias, &out[n++]);
                found = 1;
            }
        }
        assert(found);
        p += len + (p[len] == ' ');
    }
    return n;
}

/* ---- cursors ------------------------------------------------------------------------------ */

char *db_cursor_encode(sqlite3_stmt *st, const int *cols, int n)
{
    static const char digits[] = "0123456789abcdef";
    struct vsl_buf hex;
    int i, r = 0;

    vsl_buf_init(&hex, DB_CURSOR_MAX);
    for (i = 0; i < n && r == 0; i++) {
        const unsigned char *p = sqlite3_column_text(st, cols[i]);
        if (i > 0)
            r = vsl_buf_add(&hex, "00", 2);
        for (; r == 0 && p && *p; p++) {
            const char h[2] = {digits[*p >> 4], digits[*p & 0xf]};
            r = vsl_buf_add(&hex, h, 2);
        }
    }
    if (r < 0) {
        vsl_buf_free(&hex);
        return NULL;
    }
    return vsl_buf_take(&hex);
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

static int cursor_parse(const char *s, int n, struct db_cursor *c)
{
    size_t i, len = strlen(s);

    if (len == 0 || len % 2 || len > DB_CURSOR_MAX)
        return -EINVAL;
    c->n = 1;
    c->field[0] = c->buf;
    for (i = 0; i < len / 2; i++) {
        const int hi = hexval(s[2 * i]), lo = hexval(s[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -EINVAL;
        c->buf[i] = (char)(hi << 4 | lo);
        if (c->buf[i] == '\0') {
            if (c->n == n)
                return -EINVAL;
            c->field[c->n++] = c->buf + i + 1;
        }
    }
    c->buf[len / 2] = '\0';
    return c->n == n ? 0 : -EINVAL;
}

int db_cursor_decode(const char *s, int n, struct db_cursor **out)
{
    int r;

    assert(n > 0 && n <= DB_CURSOR_FIELDS);
    *out = NULL;
    if (!s)
        return 0;
    *out = malloc(sizeof(**out));
    if (!*out)
        return -ENOMEM;
    r = cursor_parse(s, n, *out);
    if (r < 0) {
        free(*out);
        *out = NULL;
    }
    return r;
}
