/* Site rule files: the header parsed, the files of a directory loaded (ids checked against the
 * built-in catalogue and each other), and a rule run in the sandbox, its rows turned into
 * findings. A rule file is untrusted input: every problem names FILE:LINE and the cause. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules/rule.h"
#include "util/buf.h"

#define MAX_RULE_FILE (1024 * 1024)
#define MAX_ID 64

static const char *const required_cols[] = {"object_type", "object_moref", "object_name",
                                            "message"};
static const char *const optional_cols[] = {"severity", "host_name", "detail", "evidence"};
#define NREQ (sizeof(required_cols) / sizeof(required_cols[0]))
#define NOPT (sizeof(optional_cols) / sizeof(optional_cols[0]))

void rules_rule_free(struct rules_rule *r)
{
    if (!r)
        return;
    free(r->file);
    free(r->id);
    free(r->title);
    free(r->rationale);
    free(r->remediation);
    free(r->sql);
    for (size_t i = 0; i < r->n_params; i++) {
        free(r->params[i].name);
        free(r->params[i].unit);
        free(r->params[i].help);
    }
    memset(r, 0, sizeof(*r));
}

/* s without leading and trailing blanks, copied (the caller frees), or NULL (out of memory). */
static char *trimmed(const char *s, size_t n)
{
    while (n && isspace((unsigned char)*s))
        s++, n--;
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    return strndup(s, n);
}

/* Appends " more" to the text field *field (a continuation line). 0 or -ENOMEM. */
static int append_text(char **field, const char *more)
{
    size_t a = strlen(*field), b = strlen(more);
    char *s = realloc(*field, a + b + 2);

    if (!s)
        return -ENOMEM;
    if (a && b)
        s[a++] = ' ';
    memcpy(s + a, more, b + 1);
    *field = s;
    return 0;
}

static int valid_id(const char *s)
{
    size_t n = strlen(s);

    if (n == 0 || n > MAX_ID || !islower((unsigned char)s[0]) || s[n - 1] == '-')
        return 0;
    for (; *s; s++)
        if (!islower((unsigned char)*s) && !isdigit((unsigned char)*s) && *s != '-')
            return 0;
    return 1;
}

static int valid_param_name(const char *s, size_t n)
{
    if (n == 0 || n > 64 || !(islower((unsigned char)s[0]) || s[0] == '_'))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!islower((unsigned char)s[i]) && !isdigit((unsigned char)s[i]) && s[i] != '_')
            return 0;
    return 1;
}

/* "name = 200 (GiB) help text" into p. 0, or -EINVAL with the cause in err. */
static int parse_param(const char *v, struct rules_param *p, char *err, size_t errlen)
{
    const char *eq = strchr(v, '=');
    const char *name = v, *end;
    size_t n;

    if (!eq) {
        snprintf(err, errlen, "a param is written 'param: NAME = DEFAULT (UNIT) help'");
        return -EINVAL;
    }
    while (isspace((unsigned char)*name))
        name++;
    n = (size_t)(eq - name);
    while (n && isspace((unsigned char)name[n - 1]))
        n--;
    if (!valid_param_name(name, n)) {
        snprintf(err, errlen, "param name '%.*s' is not lower-case letters, digits and '_'",
                 (int)n, name);
        return -EINVAL;
    }
    errno = 0;
    double d = strtod(eq + 1, (char **)&end);
    if (errno || end == eq + 1 || !isfinite(d)) {
        snprintf(err, errlen, "param %.*s: the default is not a number", (int)n, name);
        return -EINVAL;
    }
    while (isspace((unsigned char)*end))
        end++;
    const char *unit = "", *unit_end = "";
    if (*end == '(') {
        unit = end + 1;
        unit_end = strchr(unit, ')');
        if (!unit_end) {
            snprintf(err, errlen, "param %.*s: the unit's '(' has no ')'", (int)n, name);
            return -EINVAL;
        }
        end = unit_end + 1;
    }
    p->name = strndup(name, n);
    p->dflt = d;
    p->unit = trimmed(unit, (size_t)(unit_end - unit));
    p->help = trimmed(end, strlen(end));
    if (!p->name || !p->unit || !p->help) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    return 0;
}

/* The header keys; a "-- WORD:" line with another WORD continues the previous text (or is a
 * comment before the first key). */
enum hkey { H_ID, H_TITLE, H_SEVERITY, H_RATIONALE, H_REMEDIATION, H_PARAM, H_NONE };
static const char *const hkeys[] = {"id", "title", "severity", "rationale", "remediation",
                                    "param"};

static enum hkey header_key(const char *s, const char **value)
{
    for (int k = 0; k < H_NONE; k++) {
        size_t n = strlen(hkeys[k]);
        if (!strncmp(s, hkeys[k], n) && s[n] == ':') {
            *value = s + n + 1;
            return (enum hkey)k;
        }
    }
    return H_NONE;
}

/* The first byte of text that is not well-formed UTF-8, or -1. */
static long bad_utf8_at(const char *text)
{
    char *copy = strdup(text);
    long at = -1;

    if (!copy)
        return -1;
    vsl_utf8_fix(copy);
    for (size_t i = 0; copy[i]; i++)
        if (copy[i] != text[i]) {
            at = (long)i;
            break;
        }
    free(copy);
    return at;
}

int rules_parse(const char *file, const char *text, struct rules_rule *out, int *line, char *err,
                size_t errlen)
{
    const char *p = text;
    char **cont = NULL; /* the text field a continuation line extends */
    int ln = 0, r = 0;

    memset(out, 0, sizeof(*out));
    *line = 0;
    long bad = bad_utf8_at(text);
    if (bad >= 0) {
        *line = 1;
        for (long i = 0; i < bad; i++)
            *line += text[i] == '\n';
        snprintf(err, errlen, "not UTF-8 text (byte %ld)", bad + 1);
        return -EINVAL;
    }
    out->file = strdup(file);
    out->rationale = strdup("");
    out->remediation = strdup("");
    if (!out->file || !out->rationale || !out->remediation)
        goto nomem;
    out->severity = (enum vsl_severity)-1;
    for (; *p; ) {
        const char *eol = strchr(p, '\n');
        size_t n = eol ? (size_t)(eol - p) : strlen(p);
        char *l = trimmed(p, n);
        const char *v;
        ln++;
        if (!l)
            goto nomem;
        if (!*l) { /* a blank line ends a text, not the header */
            cont = NULL;
            free(l);
            p += n + (eol != NULL);
            continue;
        }
        if (strncmp(l, "--", 2)) { /* the statement starts here */
            free(l);
            break;
        }
        const char *body = l + 2;
        while (isspace((unsigned char)*body))
            body++;
        enum hkey k = header_key(body, &v);
        *line = ln;
        char *val = k == H_NONE ? NULL : trimmed(v, strlen(v));
        if (k != H_NONE && !val) {
            free(l);
            goto nomem;
        }
        switch (k) {
        case H_ID:
        case H_TITLE:
            if ((k == H_ID ? out->id : out->title)) {
                snprintf(err, errlen, "a second %s line", hkeys[k]);
                r = -EINVAL;
            } else if (k == H_ID && !valid_id(val)) {
                snprintf(err, errlen, "id '%s' is not kebab-case (a-z, 0-9 and '-', at most %d, "
                         "starting with a letter)", val, MAX_ID);
                r = -EINVAL;
            } else {
                char **f = k == H_ID ? &out->id : &out->title;
                *f = val;
                val = NULL;
                cont = k == H_TITLE ? f : NULL;
            }
            break;
        case H_SEVERITY:
            if (vsl_severity_parse(val, &out->severity) < 0) {
                snprintf(err, errlen, "severity '%s' is not info, warning or critical", val);
                r = -EINVAL;
            }
            cont = NULL;
            break;
        case H_RATIONALE:
        case H_REMEDIATION:
            cont = k == H_RATIONALE ? &out->rationale : &out->remediation;
            r = append_text(cont, val);
            break;
        case H_PARAM:
            cont = NULL;
            if (out->n_params == RULES_MAX_PARAMS) {
                snprintf(err, errlen, "more than %d params", RULES_MAX_PARAMS);
                r = -EINVAL;
                break;
            }
            r = parse_param(val, &out->params[out->n_params], err, errlen);
            if (r == 0) {
                struct rules_param *np = &out->params[out->n_params];
                np->line = ln;
                for (size_t i = 0; i < out->n_params && r == 0; i++)
                    if (!strcmp(out->params[i].name, np->name)) {
                        snprintf(err, errlen, "param %s is declared twice (first on line %d)",
                                 np->name, out->params[i].line);
                        r = -EINVAL;
                    }
            }
            out->n_params++; /* counted even on error: rules_rule_free frees what was set */
            break;
        case H_NONE:
            if (cont)
                r = append_text(cont, body);
            break;
        }
        free(val);
        free(l);
        if (r < 0)
            goto fail;
        p += n + (eol != NULL);
    }
    *line = ln;
    if (!out->id || !out->title || (int)out->severity < 0) {
        *line = 1;
        snprintf(err, errlen, "the header has no %s line (a rule starts with '-- id:', "
                 "'-- title:' and '-- severity:' lines)",
                 !out->id ? "'-- id:'" : !out->title ? "'-- title:'" : "'-- severity:'");
        r = -EINVAL;
        goto fail;
    }
    out->sql_line = ln;
    out->sql = strdup(p);
    if (!out->sql)
        goto nomem;
    if (!*out->sql) {
        snprintf(err, errlen, "no SELECT after the header");
        r = -EINVAL;
        goto fail;
    }
    return 0;

nomem:
    snprintf(err, errlen, "out of memory");
    r = -ENOMEM;
fail:
    rules_rule_free(out);
    return r;
}

/* ---- sets --------------------------------------------------------------------------------- */

static int add_error(struct rules_set *set, const char *file, int line, const char *id,
                     const char *cause)
{
    if (vsl_grow(&set->errors, &set->cap_errors, set->n_errors, sizeof(*set->errors), 8) < 0)
        return -ENOMEM;
    struct rules_error *e = &set->errors[set->n_errors];
    e->file = strdup(file);
    e->cause = strdup(cause);
    e->id = id ? strdup(id) : NULL;
    e->line = line;
    set->n_errors++;
    return e->file && e->cause && (!id || e->id) ? 0 : -ENOMEM;
}

const struct rules_rule *rules_find(const struct rules_set *set, const char *id)
{
    for (size_t i = 0; set && i < set->n; i++)
        if (!strcmp(set->rules[i].id, id))
            return &set->rules[i];
    return NULL;
}

/* Reads and parses one file into set (or its error). 0 or -ENOMEM. */
static int load_one(struct rules_set *set, const char *path,
                    int (*taken)(const char *id, void *ctx), void *ctx)
{
    struct rules_rule rule;
    char *text = NULL, err[512];
    int line = 0, r = vsl_read_file(path, MAX_RULE_FILE, &text);

    if (r < 0) {
        snprintf(err, sizeof(err), "cannot read: %s",
                 r == -EFBIG || r < -1000 ? "larger than 1 MiB" : strerror(-r));
        return add_error(set, path, 0, NULL, err);
    }
    r = rules_parse(path, text, &rule, &line, err, sizeof(err));
    free(text);
    if (r == -ENOMEM)
        return r;
    if (r < 0)
        return add_error(set, path, line, NULL, err);
    if (taken && taken(rule.id, ctx)) {
        snprintf(err, sizeof(err), "id %s is a built-in check's", rule.id);
        r = add_error(set, path, 1, rule.id, err);
        rules_rule_free(&rule);
        return r;
    }
    const struct rules_rule *dup = rules_find(set, rule.id);
    if (dup) {
        snprintf(err, sizeof(err), "id %s is also the id of %s", rule.id, dup->file);
        r = add_error(set, path, 1, rule.id, err);
        rules_rule_free(&rule);
        return r;
    }
    if (vsl_grow(&set->rules, &set->cap, set->n, sizeof(*set->rules), 8) < 0) {
        rules_rule_free(&rule);
        return -ENOMEM;
    }
    set->rules[set->n++] = rule;
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int rules_load_files(char *const *files, size_t n, int (*taken)(const char *id, void *ctx),
                     void *ctx, struct rules_set *set)
{
    int r = 0;

    for (size_t i = 0; i < n && r == 0; i++)
        r = load_one(set, files[i], taken, ctx);
    return r;
}

int rules_load_dir(const char *dir, int (*taken)(const char *id, void *ctx), void *ctx,
                   struct rules_set *set, char *err, size_t errlen)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char **names = NULL;
    size_t n = 0, cap = 0;
    int r = 0;

    if (!d) {
        if (errno == ENOENT)
            return 0; /* no rules: not an error */
        snprintf(err, errlen, "cannot read the rules directory %s: %s", dir, strerror(errno));
        return -errno;
    }
    while (r == 0 && (de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (de->d_name[0] == '.' || len < 5 || strcmp(de->d_name + len - 4, ".sql"))
            continue;
        char *path = malloc(strlen(dir) + len + 2);
        if (!path || vsl_grow(&names, &cap, n, sizeof(*names), 16) < 0) {
            free(path);
            r = -ENOMEM;
            break;
        }
        snprintf(path, strlen(dir) + len + 2, "%s/%s", dir, de->d_name);
        names[n++] = path;
    }
    closedir(d);
    if (r == 0) {
        qsort(names, n, sizeof(*names), by_name);
        r = rules_load_files(names, n, taken, ctx, set);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    if (r < 0)
        snprintf(err, errlen, "out of memory loading %s", dir);
    return r;
}

void rules_set_free(struct rules_set *set)
{
    for (size_t i = 0; i < set->n; i++)
        rules_rule_free(&set->rules[i]);
    for (size_t i = 0; i < set->n_errors; i++) {
        free(set->errors[i].file);
        free(set->errors[i].cause);
        free(set->errors[i].id);
    }
    free(set->rules);
    free(set->errors);
    memset(set, 0, sizeof(*set));
}

/* ---- running ------------------------------------------------------------------------------ */

static int column_index(sqlite3_stmt *st, const char *name)
{
    for (int i = 0; i < sqlite3_column_count(st); i++)
        if (!strcmp(sqlite3_column_name(st, i), name))
            return i;
    return -1;
}

int rules_prepare(struct rules_db *db, const struct rules_rule *rule, sqlite3_stmt **out,
                  int *line, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    int l = 0, r = rules_db_prepare(db, rule->sql, &st, &l, err, errlen);

    *out = NULL;
    *line = l > 0 ? rule->sql_line + l - 1 : rule->sql_line;
    if (r < 0)
        return r;
    for (int i = 1; i <= sqlite3_bind_parameter_count(st); i++) {
        const char *name = sqlite3_bind_parameter_name(st, i);
        size_t k = 0;
        while (name && name[0] == ':' && k < rule->n_params &&
               strcmp(rule->params[k].name, name + 1))
            k++;
        if (!name || name[0] != ':' || k == rule->n_params) {
            snprintf(err, errlen, "the query uses %s, which no '-- param:' line declares",
                     name ? name : "a '?' parameter");
            sqlite3_finalize(st);
            return -EINVAL;
        }
    }
    for (size_t i = 0; i < NREQ; i++)
        if (column_index(st, required_cols[i]) < 0) {
            snprintf(err, errlen, "the query returns no column %s (required: object_type, "
                     "object_moref, object_name, message)", required_cols[i]);
            sqlite3_finalize(st);
            return -EINVAL;
        }
    *out = st;
    return 0;
}

struct run {
    const struct rules_rule *rule;
    rules_emit_fn *emit;
    void *ctx;
    int col[NREQ + NOPT];
    long row;
    char *err;
    size_t errlen;
};

static const char *text_or_null(sqlite3_stmt *st, int i)
{
    return i < 0 || sqlite3_column_type(st, i) == SQLITE_NULL
               ? NULL
               : (const char *)sqlite3_column_text(st, i);
}

static int is_named(const char *name)
{
    for (size_t i = 0; i < NREQ; i++)
        if (!strcmp(name, required_cols[i]))
            return 1;
    for (size_t i = 0; i < NOPT; i++)
        if (!strcmp(name, optional_cols[i]))
            return 1;
    return 0;
}

static int run_row(void *u, sqlite3_stmt *st)
{
    struct run *run = u;
    struct rules_row row = {.severity = run->rule->severity};
    const char *sev, *ev;

    run->row++;
    row.object_type = text_or_null(st, run->col[0]);
    row.object_moref = text_or_null(st, run->col[1]);
    row.object_name = text_or_null(st, run->col[2]);
    row.message = text_or_null(st, run->col[3]);
    sev = text_or_null(st, run->col[NREQ + 0]);
    row.host_name = text_or_null(st, run->col[NREQ + 1]);
    row.detail = text_or_null(st, run->col[NREQ + 2]);
    ev = text_or_null(st, run->col[NREQ + 3]);
    const char *missing = !row.object_type ? "object_type" : !row.object_name ? "object_name"
                          : !row.message ? "message" : NULL;
    if (missing) {
        snprintf(run->err, run->errlen, "row %ld: %s is NULL (it is required)", run->row,
                 missing);
        return -EINVAL;
    }
    if (sev && vsl_severity_parse(sev, &row.severity) < 0)
        row.severity = run->rule->severity;
    if (ev) {
        json_error_t jerr;
        row.evidence = json_loads(ev, JSON_REJECT_DUPLICATES, &jerr);
        if (!json_is_object(row.evidence)) {
            json_decref(row.evidence);
            snprintf(run->err, run->errlen, "row %ld: evidence is not a JSON object: %s",
                     run->row, ev);
            return -EINVAL;
        }
    } else {
        row.evidence = json_object();
        for (int i = 0; row.evidence && i < sqlite3_column_count(st); i++) {
            const char *name = sqlite3_column_name(st, i);
            if (!is_named(name) &&
                json_object_set_new(row.evidence, name, rules_db_column_json(st, i)) < 0) {
                json_decref(row.evidence);
                row.evidence = NULL;
            }
        }
    }
    if (!row.evidence)
        return -ENOMEM;
    return run->emit(run->ctx, run->rule, &row);
}

int rules_run(struct rules_db *db, const struct rules_rule *rule, const double *params,
              long timeout_ms, long max_rows, rules_emit_fn *emit, void *ctx, int *line,
              char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    struct run run = {.rule = rule, .emit = emit, .ctx = ctx, .err = err, .errlen = errlen};
    int r = rules_prepare(db, rule, &st, line, err, errlen);

    if (r < 0)
        return r;
    *line = 0;
    for (size_t i = 0; i < NREQ; i++)
        run.col[i] = column_index(st, required_cols[i]);
    for (size_t i = 0; i < NOPT; i++)
        run.col[NREQ + i] = column_index(st, optional_cols[i]);
    for (size_t i = 0; i < rule->n_params; i++) {
        char name[80];
        double v = params ? params[i] : rule->params[i].dflt;
        snprintf(name, sizeof(name), ":%s", rule->params[i].name);
        int k = sqlite3_bind_parameter_index(st, name);
        if (k <= 0)
            continue; /* declared, not used */
        /* A whole number binds as an integer, so "LIMIT :n" and integer comparisons work. */
        if (v == floor(v) && fabs(v) < 9e15)
            sqlite3_bind_int64(st, k, (sqlite3_int64)v);
        else
            sqlite3_bind_double(st, k, v);
    }
    r = rules_db_run(db, st, timeout_ms, max_rows, run_row, &run, err, errlen);
    sqlite3_finalize(st);
    return r;
}
