/* The sandboxed connection site rules, `vslint query` and `vslint export` read through: read-only
 * twice over (the file is opened SQLITE_OPEN_READONLY and the connection is query_only), with an
 * authorizer that allows reading the public views and nothing else, and a time limit. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "rules/sandbox.h"
#include "rules/views.h"
#include "util/buf.h"

struct rules_db {
    sqlite3 *h;        /* owned */
    char inner[32];    /* "vsl_i<16 hex>_": the inner views' prefix, unguessable */
    char denied[256];  /* the first thing the authorizer refused in this prepare, or "" */
    char modules[1024]; /* ",dbstat,json_each,...,": the virtual-table modules SQLite has */
    struct timespec deadline; /* of the run in progress; tv_sec 0: none */
    int timed_out;
};

#define RULES_STR_(x) #x
#define RULES_STR(x)  RULES_STR_(x)
/* How much of the database file the connection maps (a literal: it goes into a PRAGMA). */
#define RULES_MMAP_BYTES 268435456

/* Per-connection bounds. There is no per-connection heap limit in SQLite
 * (sqlite3_hard_heap_limit64 is process-wide: it would fail the daemon's own work alongside a
 * greedy rule), so memory is bounded by what a query can hold: no value above RULES_MAX_VALUE,
 * a page cache of at most 8 MiB (the file mapping is the kernel's page cache, not heap), and
 * the time limit on how long it may keep growing. */
static void set_limits(sqlite3 *h)
{
    sqlite3_limit(h, SQLITE_LIMIT_LENGTH, RULES_MAX_VALUE);
    sqlite3_limit(h, SQLITE_LIMIT_SQL_LENGTH, 1024 * 1024);
    sqlite3_limit(h, SQLITE_LIMIT_ATTACHED, 0);
    sqlite3_limit(h, SQLITE_LIMIT_EXPR_DEPTH, 200);
    sqlite3_limit(h, SQLITE_LIMIT_COMPOUND_SELECT, 100);
}

/* What each refused action is, for the message that names it. */
static const char *action_name(int op)
{
    switch (op) {
    case SQLITE_ATTACH: return "ATTACH";
    case SQLITE_DETACH: return "DETACH";
    case SQLITE_PRAGMA: return "PRAGMA";
    case SQLITE_INSERT: return "INSERT";
    case SQLITE_UPDATE: return "UPDATE";
    case SQLITE_DELETE: return "DELETE";
    case SQLITE_TRANSACTION: return "a transaction (BEGIN/COMMIT/ROLLBACK)";
    case SQLITE_SAVEPOINT: return "SAVEPOINT";
    case SQLITE_ANALYZE: return "ANALYZE";
    case SQLITE_REINDEX: return "REINDEX";
    case SQLITE_ALTER_TABLE: return "ALTER TABLE";
    case SQLITE_CREATE_VTABLE: return "CREATE VIRTUAL TABLE";
    case SQLITE_DROP_VTABLE: return "DROP VIRTUAL TABLE";
    default: return "a schema change (CREATE/DROP, or a virtual table other than json_each and "
                    "json_tree)";
    }
}

/* Refuses, keeping the first reason of this prepare for its error message. */
static int deny(struct rules_db *db, const char *why)
{
    if (!db->denied[0])
        snprintf(db->denied, sizeof(db->denied), "%s", why);
    return SQLITE_DENY;
}

/* Whether name is a virtual-table module of the connection (PRAGMA module_list at open). */
static int is_module(const struct rules_db *db, const char *name)
{
    size_t n = strlen(name);

    for (const char *p = db->modules; (p = strstr(p, name)); p++)
        if (p > db->modules && p[-1] == ',' && p[n] == ',')
            return 1;
    return 0;
}

/* The module names into db->modules; a list that does not fit fails the open (a module left
 * out would pass for a common table expression). */
static int read_modules(struct rules_db *db, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    size_t len = 1;
    int rc = sqlite3_prepare_v2(db->h, "PRAGMA module_list", -1, &st, NULL);

    snprintf(db->modules, sizeof(db->modules), ",");
    while (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
        const char *m = (const char *)sqlite3_column_text(st, 0);
        int n = m ? snprintf(db->modules + len, sizeof(db->modules) - len, "%s,", m) : 0;
        if (n < 0 || (size_t)n >= sizeof(db->modules) - len) {
            rc = SQLITE_FULL;
            break;
        }
        len += (size_t)n;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_OK)
        snprintf(err, errlen, "cannot list SQLite's virtual-table modules: %s",
                 sqlite3_errstr(rc));
    return rc == SQLITE_OK ? 0 : -EINVAL;
}

/* The authorizer. A read through a public view reaches the stored tables from an inner view
 * whose name starts with db->inner (the 5th argument names the innermost view or trigger):
 * a query's own common table expression can take any name but that one, so no query reaches a
 * stored table, or sqlite_master, except through the views. */
static int authorize(void *u, int op, const char *a3, const char *a4, const char *schema,
                     const char *inner)
{
    struct rules_db *db = u;
    char why[256];

    switch (op) {
    case SQLITE_SELECT:
    case SQLITE_RECURSIVE:
        return SQLITE_OK;
    case SQLITE_READ:
        if (schema && !strcmp(schema, "temp") && a3 && !strncmp(a3, "vsl_", 4))
            return SQLITE_OK;
        if (schema && !strcmp(schema, "main") && inner && !strncmp(inner, db->inner, strlen(db->inner)))
            return SQLITE_OK;
        /* The eponymous json_each and json_tree tables (the main schema holds no table of
         * those names); no other virtual table (dbstat reads raw pages, sqlite_stmt the
         * connection's statements). */
        if (a3 && (!strcmp(a3, "json_each") || !strcmp(a3, "json_tree")))
            return SQLITE_OK;
        /* Without a schema and not a module: a common table expression of the query, whose
         * own reads are authorized one by one. */
        if (!schema && a3 && !is_module(db, a3))
            return SQLITE_OK;
        if (!schema || (a3 && is_module(db, a3)))
            snprintf(why, sizeof(why), "the virtual table %s is not allowed (json_each and "
                     "json_tree are)", a3 ? a3 : "?");
        else
            snprintf(why, sizeof(why), "reading %s is not allowed: a query reads only the vsl_ "
                     "views (docs/schema.md)", a3 ? a3 : "?");
        return deny(db, why);
    case SQLITE_FUNCTION:
        if (a4 && !strcasecmp(a4, "load_extension"))
            return deny(db, "load_extension() is not allowed");
        return SQLITE_OK;
    default:
        if ((op == SQLITE_INSERT || op == SQLITE_UPDATE || op == SQLITE_DELETE) && a3 &&
            !strncmp(a3, "sqlite_", 7))
            op = SQLITE_CREATE_TABLE; /* the schema's own table: a CREATE or DROP */
        snprintf(why, sizeof(why), "%s is not allowed: a query only reads", action_name(op));
        return deny(db, why);
    }
}

static int progress(void *u)
{
    struct rules_db *db = u;
    struct timespec now;

    if (!db->deadline.tv_sec)
        return 0;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec > db->deadline.tv_sec ||
        (now.tv_sec == db->deadline.tv_sec && now.tv_nsec >= db->deadline.tv_nsec)) {
        db->timed_out = 1;
        return 1;
    }
    return 0;
}

int rules_db_open(const char *path, const char *vcenter, struct rules_db **out, char *err,
                  size_t errlen)
{
    struct rules_db *db = calloc(1, sizeof(*db)); /* owned until *out takes it */
    unsigned char rnd[8];
    int rc, r = -EINVAL;

    *out = NULL;
    if (!db) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    if (getentropy(rnd, sizeof(rnd)) < 0) {
        snprintf(err, errlen, "cannot read random bytes: %s", strerror(errno));
        r = -errno;
        goto fail;
    }
    snprintf(db->inner, sizeof(db->inner), "vsl_i%02x%02x%02x%02x%02x%02x%02x%02x_", rnd[0],
             rnd[1], rnd[2], rnd[3], rnd[4], rnd[5], rnd[6], rnd[7]);
    rc = sqlite3_open_v2(path, &db->h, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        snprintf(err, errlen, "cannot open %s: %s", path,
                 db->h ? sqlite3_errmsg(db->h) : sqlite3_errstr(rc));
        goto fail;
    }
    sqlite3_busy_timeout(db->h, 5000);
    set_limits(db->h);
    /* Our own constant settings, no input. The views go to the temp schema, which a read-only
     * connection may write until query_only says otherwise. The file is read through a mapping
     * (RULES_MMAP_BYTES, the rest with pread): 20 rules that scan the same tables each read
     * them again, and through the 8 MiB page cache each page was copied out of the kernel's
     * every time (a fifth of the rules' CPU at 20,000 VMs, docs/performance.md). The mapped
     * pages are the kernel's page cache, shared and reclaimable, not this process's heap; the
     * mapping goes when the connection closes after the evaluation. */
    rc = sqlite3_exec(db->h,
                      "PRAGMA cache_size = -8192; PRAGMA trusted_schema = OFF; "
                      "PRAGMA mmap_size = " RULES_STR(RULES_MMAP_BYTES),
                      NULL, NULL, NULL);
    if (rc != SQLITE_OK) {
        snprintf(err, errlen, "cannot read %s: %s", path, sqlite3_errmsg(db->h));
        goto fail;
    }
    r = rules_views_create(db->h, db->inner, vcenter, err, errlen);
    if (r < 0)
        goto fail;
    rc = sqlite3_exec(db->h, "PRAGMA query_only = ON", NULL, NULL, NULL);
    if (rc != SQLITE_OK) {
        snprintf(err, errlen, "cannot make the connection read-only: %s", sqlite3_errmsg(db->h));
        r = -EINVAL;
        goto fail;
    }
    r = read_modules(db, err, errlen);
    if (r < 0)
        goto fail;
    /* The eponymous virtual tables a query may use are set up once per connection, and SQLite
     * asks the authorizer to let that set-up write the schema: it happens here, before. */
    rc = sqlite3_exec(db->h, "SELECT 1 FROM json_each('[]'), json_tree('[]')", NULL, NULL, NULL);
    if (rc != SQLITE_OK) {
        snprintf(err, errlen, "cannot set up json_each: %s", sqlite3_errmsg(db->h));
        r = -EINVAL;
        goto fail;
    }
    sqlite3_set_authorizer(db->h, authorize, db);
    sqlite3_progress_handler(db->h, 1000, progress, db);
    *out = db;
    return 0;

fail:
    rules_db_close(db);
    return r;
}

void rules_db_close(struct rules_db *db)
{
    if (!db)
        return;
    sqlite3_close(db->h);
    free(db);
}

/* The 1-based line of sql at byte offset off (negative: unknown, 0). */
static int line_at(const char *sql, int off)
{
    int line = 1;

    if (off < 0)
        return 0;
    for (int i = 0; i < off && sql[i]; i++)
        line += sql[i] == '\n';
    return line;
}

int rules_db_prepare(struct rules_db *db, const char *sql, sqlite3_stmt **out, int *line,
                     char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL, *next = NULL;
    const char *tail = NULL;
    int rc, dummy;

    *out = NULL;
    line = line ? line : &dummy;
    *line = 0;
    db->denied[0] = '\0';
    rc = sqlite3_prepare_v2(db->h, sql, -1, &st, &tail);
    if (rc != SQLITE_OK) {
        *line = line_at(sql, sqlite3_error_offset(db->h));
        snprintf(err, errlen, "%s", db->denied[0] ? db->denied : sqlite3_errmsg(db->h));
        return db->denied[0] ? -EPERM : -EINVAL;
    }
    if (!st) {
        snprintf(err, errlen, "no SQL statement");
        return -EINVAL;
    }
    if (!sqlite3_stmt_readonly(st)) {
        sqlite3_finalize(st);
        snprintf(err, errlen, "the statement writes: a query only reads");
        return -EPERM;
    }
    /* Whatever follows must be nothing but blanks and comments: a second statement, even a
     * harmless one, is refused (prepared, never run, to tell a comment from a statement). */
    rc = sqlite3_prepare_v2(db->h, tail, -1, &next, NULL);
    if (rc != SQLITE_OK || next) {
        *line = line_at(sql, (int)(tail - sql));
        sqlite3_finalize(next);
        sqlite3_finalize(st);
        snprintf(err, errlen, "a second statement follows the first: a query is one SELECT");
        return -EPERM;
    }
    *out = st;
    return 0;
}

int rules_db_run(struct rules_db *db, sqlite3_stmt *st, long timeout_ms, long max_rows,
                 rules_row_fn *fn, void *ctx, char *err, size_t errlen)
{
    long rows = 0;
    int rc, r = 0;

    db->timed_out = 0;
    db->deadline.tv_sec = 0;
    if (timeout_ms > 0) {
        clock_gettime(CLOCK_MONOTONIC, &db->deadline);
        db->deadline.tv_sec += timeout_ms / 1000;
        db->deadline.tv_nsec += (timeout_ms % 1000) * 1000000L;
        if (db->deadline.tv_nsec >= 1000000000L) {
            db->deadline.tv_sec++;
            db->deadline.tv_nsec -= 1000000000L;
        }
    }
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (max_rows > 0 && ++rows > max_rows) {
            snprintf(err, errlen, "more than %ld rows: the limit is %ld ([rules] max_findings)",
                     max_rows, max_rows);
            r = -E2BIG;
            break;
        }
        r = fn(ctx, st);
        if (r < 0)
            break;
    }
    if (r == 0 && rc != SQLITE_DONE) {
        if (db->timed_out) {
            snprintf(err, errlen, "stopped after %ld ms: the time limit ([rules] timeout)",
                     timeout_ms);
            r = -ETIMEDOUT;
        } else {
            snprintf(err, errlen, "%s", sqlite3_errmsg(sqlite3_db_handle(st)));
            r = -EINVAL;
        }
    }
    db->deadline.tv_sec = 0;
    sqlite3_reset(st);
    return r;
}

char *rules_db_hex(const void *p, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    const unsigned char *b = p;
    char *s = malloc(2 * n + 1); /* the caller's */

    if (!s)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        s[2 * i] = digits[b[i] >> 4];
        s[2 * i + 1] = digits[b[i] & 15];
    }
    s[2 * n] = '\0';
    return s;
}

json_t *rules_db_column_json(sqlite3_stmt *st, int i)
{
    char *s;
    json_t *v;

    switch (sqlite3_column_type(st, i)) {
    case SQLITE_NULL:
        return json_null();
    case SQLITE_INTEGER:
        return json_integer(sqlite3_column_int64(st, i));
    case SQLITE_FLOAT:
        return json_real(sqlite3_column_double(st, i));
    case SQLITE_BLOB:
        s = rules_db_hex(sqlite3_column_blob(st, i), (size_t)sqlite3_column_bytes(st, i));
        break;
    default: {
        const char *t = (const char *)sqlite3_column_text(st, i);
        s = t ? strndup(t, (size_t)sqlite3_column_bytes(st, i)) : NULL;
        if (s)
            vsl_utf8_fix(s); /* jansson takes only UTF-8 */
    }
    }
    v = s ? json_string(s) : NULL;
    free(s);
    return v;
}
