/* `vslint query` and `vslint export`: the public views (docs/schema.md) read through the rules
 * sandbox, printed as an aligned table, CSV (RFC 4180), JSON or JSON lines. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "daemon/cli.h"
#include "daemon/config.h"
#include "db/db.h"
#include "rules/sandbox.h"
#include "rules/views.h"
#include "util/buf.h"
#include "util/log.h"

enum qfmt { Q_TABLE, Q_CSV, Q_JSON, Q_JSONL };

/* One run's output: where it goes, how, and (for the table) the rows held until the widths are
 * known. */
struct out {
    FILE *f;
    enum qfmt fmt;
    long rows;
    int ncols;
    /* table: every cell as printed, row after row (header first); owned */
    char **cells;
    size_t ncells, cap;
    size_t *width; /* owned, ncols */
};

/* ---- CSV ---------------------------------------------------------------------------------- */

/* One field, RFC 4180: quoted when it holds a comma, a quote, CR or LF (or starts or ends with
 * a blank, which spreadsheets would trim), quotes doubled. */
static void csv_field(FILE *f, const char *s, size_t n)
{
    int quote = n && (s[0] == ' ' || s[n - 1] == ' ');

    for (size_t i = 0; i < n && !quote; i++)
        quote = s[i] == ',' || s[i] == '"' || s[i] == '\r' || s[i] == '\n';
    if (!quote) {
        fwrite(s, 1, n, f);
        return;
    }
    fputc('"', f);
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"')
            fputc('"', f);
        fputc(s[i], f);
    }
    fputc('"', f);
}

/* Column i of the current row as text (NULL for SQL NULL) into *s, *n; *owned is the caller's to
 * free (a blob's hex), else NULL. */
static int cell_text(sqlite3_stmt *st, int i, const char **s, size_t *n, char **owned)
{
    *owned = NULL;
    switch (sqlite3_column_type(st, i)) {
    case SQLITE_NULL:
        *s = NULL;
        *n = 0;
        return 0;
    case SQLITE_BLOB:
        *owned =
            rules_db_hex(sqlite3_column_blob(st, i), (size_t)sqlite3_column_bytes(st, i));
        if (!*owned)
            return -ENOMEM;
        *s = *owned;
        *n = strlen(*owned);
        return 0;
    default:
        *s = (const char *)sqlite3_column_text(st, i);
        *n = (size_t)sqlite3_column_bytes(st, i);
        return *s ? 0 : -ENOMEM;
    }
}

/* ---- JSON --------------------------------------------------------------------------------- */

static json_t *json_row(sqlite3_stmt *st)
{
    json_t *o = json_object();

    for (int i = 0; o && i < sqlite3_column_count(st); i++)
        if (json_object_set_new(o, sqlite3_column_name(st, i), rules_db_column_json(st, i)) <
            0) {
            json_decref(o);
            o = NULL;
        }
    return o;
}

/* ---- the table ---------------------------------------------------------------------------- */

/* Characters as a terminal shows them: UTF-8 continuation bytes take no column. */
static size_t display_width(const char *s)
{
    size_t w = 0;

    for (; *s; s++)
        w += ((unsigned char)*s & 0xc0) != 0x80;
    return w;
}

static int table_cell(struct out *o, const char *s, size_t n)
{
    char *c = s ? strndup(s, n) : strdup(""); /* owned by o->cells */

    if (!c || vsl_grow(&o->cells, &o->cap, o->ncells, sizeof(*o->cells), 256) < 0) {
        free(c);
        return -ENOMEM;
    }
    /* One line per row: a line break or tab inside a value would break the alignment. */
    for (char *p = c; *p; p++)
        if (*p == '\n' || *p == '\r' || *p == '\t')
            *p = ' ';
    size_t col = o->ncells % (size_t)o->ncols, w = display_width(c);
    if (w > o->width[col])
        o->width[col] = w;
    o->cells[o->ncells++] = c;
    return 0;
}

static void table_print(struct out *o)
{
    for (size_t i = 0; i < o->ncells; i++) {
        size_t col = i % (size_t)o->ncols;
        const int last = col + 1 == (size_t)o->ncols;
        fputs(o->cells[i], o->f);
        if (!last)
            fprintf(o->f, "%*s", (int)(o->width[col] - display_width(o->cells[i]) + 2), "");
        if (last)
            fputc('\n', o->f);
        if (last && i + 1 == (size_t)o->ncols) {
            /* The header's underline. */
            for (int c = 0; c < o->ncols; c++) {
                for (size_t k = 0; k < o->width[c]; k++)
                    fputc('-', o->f);
                fputs(c + 1 < o->ncols ? "  " : "\n", o->f);
            }
        }
    }
}

/* ---- rows --------------------------------------------------------------------------------- */

static int out_begin(struct out *o, sqlite3_stmt *st)
{
    o->ncols = sqlite3_column_count(st);
    o->rows = 0;
    switch (o->fmt) {
    case Q_CSV:
        for (int i = 0; i < o->ncols; i++) {
            const char *name = sqlite3_column_name(st, i);
            if (i)
                fputc(',', o->f);
            csv_field(o->f, name, strlen(name));
        }
        fputs("\r\n", o->f);
        return 0;
    case Q_JSON:
        fputs("[", o->f);
        return 0;
    case Q_JSONL:
        return 0;
    case Q_TABLE:
        o->width = calloc((size_t)(o->ncols ? o->ncols : 1), sizeof(*o->width));
        if (!o->width)
            return -ENOMEM;
        for (int i = 0; i < o->ncols; i++) {
            const char *name = sqlite3_column_name(st, i);
            if (table_cell(o, name, strlen(name)) < 0)
                return -ENOMEM;
        }
        return 0;
    }
    return 0;
}

static int out_row(void *ctx, sqlite3_stmt *st)
{
    struct out *o = ctx;
    const char *s;
    size_t n;
    char *owned;
    int r = 0;

    if (o->fmt == Q_JSON || o->fmt == Q_JSONL) {
        json_t *row = json_row(st);
        char *text = row ? json_dumps(row, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
        json_decref(row);
        if (!text)
            return -ENOMEM;
        if (o->fmt == Q_JSON)
            fprintf(o->f, "%s\n  %s", o->rows ? "," : "", text);
        else
            fprintf(o->f, "%s\n", text);
        free(text);
        o->rows++;
        return 0;
    }
    for (int i = 0; r == 0 && i < o->ncols; i++) {
        r = cell_text(st, i, &s, &n, &owned);
        if (r == 0 && o->fmt == Q_CSV) {
            if (i)
                fputc(',', o->f);
            if (s)
                csv_field(o->f, s, n);
        } else if (r == 0) {
            r = table_cell(o, s, n);
        }
        free(owned);
    }
    if (r == 0 && o->fmt == Q_CSV)
        fputs("\r\n", o->f);
    o->rows++;
    return r;
}

static void out_end(struct out *o)
{
    if (o->fmt == Q_JSON)
        fputs(o->rows ? "\n]\n" : "]\n", o->f);
    else if (o->fmt == Q_TABLE)
        table_print(o);
}

static void out_free(struct out *o)
{
    for (size_t i = 0; i < o->ncells; i++)
        free(o->cells[i]);
    free(o->cells);
    free(o->width);
    o->cells = NULL;
    o->width = NULL;
    o->ncells = o->cap = 0;
}

/* Runs sql on rdb into o. 0, or -1 once the problem is said (prefixed by what). */
static int run_query(struct rules_db *rdb, const char *what, const char *sql, struct out *o)
{
    sqlite3_stmt *st = NULL;
    char err[512];
    int line = 0, r = rules_db_prepare(rdb, sql, &st, &line, err, sizeof(err));

    if (r == 0)
        r = out_begin(o, st);
    if (r == 0)
        r = rules_db_run(rdb, st, 0, 0, out_row, o, err, sizeof(err));
    if (r == 0)
        out_end(o);
    else if (r == -ENOMEM)
        snprintf(err, sizeof(err), "out of memory");
    if (r < 0) {
        if (line > 0)
            log_warnx("%s: line %d: %s", what, line, err);
        else
            log_warnx("%s: %s", what, err);
    }
    sqlite3_finalize(st);
    out_free(o);
    return r < 0 ? -1 : 0;
}

/* The configuration, and the sandbox over its database: the database is opened (and migrated
 * or created, as every reader does) once the normal way first, so the views find the current
 * schema. 0, or -1 once the problem is said. */
static int open_sandbox(const struct vsl_args *a, struct vsl_config **cfg, struct rules_db **rdb)
{
    struct db *db = NULL;
    char err[512];

    *rdb = NULL;
    if (vsl_cli_open(a, 1, cfg, &db) < 0)
        return -1;
    db_close(db);
    if (a->vcenter) {
        int known = 0;
        for (size_t i = 0; i < (*cfg)->n_vcenters && !known; i++)
            known = !strcmp((*cfg)->vcenters[i].name, a->vcenter);
        if (!known) {
            log_warnx("--vcenter %s: no [vcenter %s] in %s", a->vcenter, a->vcenter, a->config);
            goto fail;
        }
    }
    if (rules_db_open((*cfg)->db_path, a->vcenter, rdb, err, sizeof(err)) < 0) {
        log_warnx("%s", err);
        goto fail;
    }
    return 0;
fail:
    vsl_config_free(*cfg);
    *cfg = NULL;
    return -1;
}

static enum qfmt parse_qfmt(const char *s)
{
    return !strcmp(s, "csv") ? Q_CSV : !strcmp(s, "json") ? Q_JSON
                                 : !strcmp(s, "jsonl") ? Q_JSONL : Q_TABLE;
}

int cmd_query(const struct vsl_args *a)
{
    struct vsl_config *cfg = NULL;
    struct rules_db *rdb = NULL;
    struct out o = {.f = stdout, .fmt = parse_qfmt(a->format)};
    int rc = VSL_EXIT_FAIL;

    if (a->n_operands != 1) {
        fprintf(stderr, "vslint: error: query takes one SQL statement, quoted as one argument "
                        "(see 'vslint help query')\n");
        return VSL_EXIT_FAIL;
    }
    if (open_sandbox(a, &cfg, &rdb) < 0)
        return VSL_EXIT_FAIL;
    if (run_query(rdb, "query", a->operands[0], &o) == 0)
        rc = fflush(stdout) == 0 && !ferror(stdout) ? VSL_EXIT_OK : VSL_EXIT_FAIL;
    rules_db_close(rdb);
    vsl_config_free(cfg);
    return rc;
}

/* Writes view into dir/VIEW.csv through a temporary file renamed into place, so a reader never
 * sees half a file and a failed export leaves the previous one. 0 or -1 once said. */
static int export_view(struct rules_db *rdb, const char *dir, const char *view)
{
    char path[4096], tmp[4200], sql[128], what[200];
    struct out o = {.fmt = Q_CSV};
    int r;

    snprintf(path, sizeof(path), "%s/%s.csv", dir, view);
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    /* view is one of our own names (rules_views), not input. */
    snprintf(sql, sizeof(sql), "SELECT * FROM %s", view);
    snprintf(what, sizeof(what), "export %s", view);
    o.f = fopen(tmp, "we");
    if (!o.f) {
        log_warn("cannot write %s", tmp);
        return -1;
    }
    r = run_query(rdb, what, sql, &o);
    if (fclose(o.f) != 0 && r == 0) {
        log_warn("cannot write %s", tmp);
        r = -1;
    }
    if (r == 0 && rename(tmp, path) < 0) {
        log_warn("cannot rename %s to %s", tmp, path);
        r = -1;
    }
    if (r < 0) {
        unlink(tmp);
        return -1;
    }
    printf("%-28s %ld rows\n", path, o.rows);
    return 0;
}

int cmd_export(const struct vsl_args *a)
{
    struct vsl_config *cfg = NULL;
    struct rules_db *rdb = NULL;
    int rc = VSL_EXIT_OK;

    if (!a->output) {
        fprintf(stderr, "vslint: error: export needs --output DIR (see 'vslint help export')\n");
        return VSL_EXIT_FAIL;
    }
    if (mkdir(a->output, 0755) < 0 && errno != EEXIST) {
        fprintf(stderr, "vslint: error: cannot create %s: %s\n", a->output, strerror(errno));
        return VSL_EXIT_FAIL;
    }
    if (open_sandbox(a, &cfg, &rdb) < 0)
        return VSL_EXIT_FAIL;
    for (size_t i = 0; i < rules_nviews; i++)
        if (export_view(rdb, a->output, rules_views[i]) < 0)
            rc = VSL_EXIT_FAIL;
    if (fflush(stdout) != 0)
        rc = VSL_EXIT_FAIL;
    rules_db_close(rdb);
    vsl_config_free(cfg);
    return rc;
}
