/* Output formats of `vslint check`. Rules (check metadata) come from the registry, results
 * from the stored findings; waived findings are shown as waived, never dropped. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checks/check.h"
#include "daemon/report.h"
#include "daemon/report-private.h"
#include "db/findings.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/log.h"

int vsl_format_parse(const char *s, enum vsl_format *out)
{
    static const char *const names[] = {"text", "json", "junit", "sarif", "gitlab", "github"};
    for (int i = 0; i < (int)(sizeof(names) / sizeof(names[0])); i++) {
        if (!strcmp(s, names[i])) {
            *out = (enum vsl_format)i;
            return 0;
        }
    }
    return -EINVAL;
}

int vsl_location_parse(const char *s, enum vsl_location *out)
{
    if (!strcmp(s, "object"))
        *out = VSL_LOC_OBJECT;
    else if (!strcmp(s, "config"))
        *out = VSL_LOC_CONFIG;
    else
        return -EINVAL;
    return 0;
}

static const char *str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

int vsl_finding_severity(const json_t *finding)
{
    enum vsl_severity s;
    if (vsl_severity_parse(str(finding, "severity"), &s) < 0)
        return 0;
    return (int)s;
}

static void upper(char *dst, const char *s, size_t n)
{
    size_t i = 0;
    for (; s[i] && i + 1 < n; i++)
        dst[i] = (char)(s[i] >= 'a' && s[i] <= 'z' ? s[i] - 32 : s[i]);
    dst[i] = '\0';
}

void vsl_finding_object_name(const json_t *fd, char *out, size_t size)
{
    const json_t *obj = json_object_get(fd, "object"), *host = json_object_get(fd, "host");

    if (json_is_object(host) && !json_is_string(json_object_get(obj, "moref")))
        snprintf(out, size, "%s %s", str(host, "name"), str(obj, "name"));
    else
        snprintf(out, size, "%s", str(obj, "name"));
}

void vsl_row_object_name(const struct db_finding_row *w, char *out, size_t size)
{
    if (w->on_host && !w->object_moref)
        snprintf(out, size, "%s %s", or_empty(w->host_name), or_empty(w->object_name));
    else
        snprintf(out, size, "%s", or_empty(w->object_name));
    /* A long name cut in the middle of a character would be invalid in XML and JSON. */
    vsl_utf8_fix(out);
}

/* ---- walking the stored findings -------------------------------------------------------- */

struct walk {
    const struct vsl_report *r;
    db_findings_row_fn *fn;
    void *ctx;
    int err; /* fn's error (writing the report), as opposed to one of reading the rows */
};

static int walk_row(void *ctx, const struct db_finding_row *w)
{
    struct walk *k = ctx;
    int rc;

    if (k->r->seen && strcmp(w->status, "waived") != 0 && w->sev >= k->r->fail_on)
        k->r->seen->failing = 1;
    rc = k->fn(k->ctx, w);
    if (rc < 0)
        k->err = rc;
    return rc;
}

int vsl_report_walk(const struct vsl_report *r, const struct db_findings_filter *f,
                    db_findings_row_fn *fn, void *ctx)
{
    struct walk k = {r, fn, ctx, 0};

    for (size_t v = 0; v < r->n_vcenters; v++) {
        struct db_findings_filter flt = *f;
        if (f->vcenter && strcmp(f->vcenter, r->vcenters[v]) != 0)
            continue;
        if (vsl_report_unread(r, v))
            continue;
        flt.vcenter = r->vcenters[v];
        int rc = db_findings_each_row(r->db, &flt, walk_row, &k, NULL);
        if (rc < 0 && k.err)
            return rc;
        if (rc < 0)
            vsl_report_read_failed(r, v, rc);
    }
    return 0;
}

int vsl_report_unread(const struct vsl_report *r, size_t v)
{
    return r->seen && r->seen->unread && (!r->seen->unread_of || r->seen->unread_of[v]);
}

void vsl_report_read_failed(const struct vsl_report *r, size_t v, int err)
{
    struct vsl_report_seen *seen = r->seen;

    log_warnx("cannot read findings of %s: %s", r->vcenters[v], vsl_strerror(err));
    if (!seen)
        return;
    if (!seen->unread)
        snprintf(seen->what, sizeof(seen->what), "vcenter %s: cannot read findings: %s",
                 r->vcenters[v], vsl_strerror(err));
    seen->unread = 1;
    if (!seen->unread_of)
        seen->unread_of = calloc(r->n_vcenters, 1);
    /* Without memory for the flags, every vCenter counts as unread from now on. */
    if (seen->unread_of)
        seen->unread_of[v] = 1;
}

/* ---- text ------------------------------------------------------------------------------- */

/* Writes s to f with each character that would break a line or move a terminal's cursor as a
 * visible escape (vsl_control_escape(): \n, \x1B, \u009B, \u2028, as the digest's text):
 * a name from vCenter can neither split a report's line in two nor send the terminal an
 * escape sequence. */
static void put_safe(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)s, *run = p;

    for (size_t k; *p; p++) {
        if (!(k = vsl_control_len(p)))
            continue;
        char e[8];
        fwrite(run, 1, (size_t)(p - run), f);
        vsl_control_escape(p, k, e);
        fputs(e, f);
        p += k - 1;
        run = p + 1;
    }
    fputs((const char *)run, f);
}

/* "  [new]", "  [unverified since 2026-11-30T06:00:00Z: esxcli could not be read ...]" */
static int text_marks(struct vsl_buf *b, const struct db_finding_row *w)
{
    if (w->unverified)
        return vsl_buf_printf(b, "  [unverified since %s: %s]", or_empty(w->unverified_since),
                              or_empty(w->unverified_reason));
    return strcmp(w->status, "new") ? 0 : vsl_buf_addstr(b, "  [new]");
}

/* The text report being written: the unwaived findings of one severity at a time. Findings of
 * one check on one LUN seen from several hosts (one finding per host, consecutive in the
 * stored order) are printed under one line naming the LUN: such a run is held (its lines, as
 * they will be printed) until the next finding shows where it ends. Each line is made in
 * line, then written with its control characters escaped (put_safe()). */
struct text {
    FILE *f;
    int sev;
    int by_sev[3], news, unverified, waived, rows;
    /* The run held: its severity as stored, check, vCenter and LUN, and each finding's
     * message and marks. */
    struct vsl_buf severity, check, vcenter, lun, lines;
    size_t held;
    struct vsl_buf line;
};

/* Writes the line made, escaped, and a newline; empties it. 0 or -EIO. */
static int put_line(struct text *t)
{
    put_safe(t->f, t->line.data ? t->line.data : "");
    fputc('\n', t->f);
    vsl_buf_reset(&t->line);
    return ferror(t->f) ? -EIO : 0;
}

static const char *held(const struct vsl_buf *b)
{
    return b->data ? b->data : "";
}

static int same_run(const struct text *t, const struct db_finding_row *w)
{
    return t->held && w->object_type && !strcmp(w->object_type, "lun") &&
           !strcmp(or_empty(w->check), held(&t->check)) &&
           !strcmp(or_empty(w->vcenter), held(&t->vcenter)) &&
           !strcmp(or_empty(w->object_name), held(&t->lun));
}

/* Prints the run held: one finding as its own line, several under their LUN's. */
static int text_flush(struct text *t)
{
    char u[16];
    const char *line = t->lines.data;
    int r = 0;

    if (!t->held)
        return 0;
    upper(u, held(&t->severity), sizeof(u));
    if (t->held == 1) {
        r = vsl_buf_printf(&t->line, "%-8s  %-22s %s: %s", u, held(&t->check), held(&t->vcenter),
                           line);
        if (r == 0)
            r = put_line(t);
    } else {
        r = vsl_buf_printf(&t->line, "%-8s  %-22s %s: LUN %s, on %zu hosts:", u, held(&t->check),
                           held(&t->vcenter), held(&t->lun), t->held);
        if (r == 0)
            r = put_line(t);
        for (size_t i = 0; r == 0 && i < t->held; i++, line += strlen(line) + 1) {
            r = vsl_buf_printf(&t->line, "          %-22s   %s", "", line);
            if (r == 0)
                r = put_line(t);
        }
    }
    t->held = 0;
    vsl_buf_reset(&t->lines);
    vsl_buf_reset(&t->line);
    return r;
}

static int text_row(void *ctx, const struct db_finding_row *w)
{
    struct text *t = ctx;
    int r = 0;

    t->rows++;
    t->by_sev[t->sev]++;
    t->unverified += w->unverified;
    t->news += !strcmp(w->status, "new") && !w->unverified;
    if (!same_run(t, w)) {
        r = text_flush(t);
        if (r < 0)
            return r;
        /* Not a LUN: nothing can join it, so it is printed at once. */
        if (!w->object_type || strcmp(w->object_type, "lun") != 0) {
            char u[16];
            upper(u, or_empty(w->severity), sizeof(u));
            vsl_buf_reset(&t->line);
            r = vsl_buf_printf(&t->line, "%-8s  %-22s %s: %s", u, or_empty(w->check),
                               or_empty(w->vcenter), or_empty(w->message));
            if (r == 0)
                r = text_marks(&t->line, w);
            return r == 0 ? put_line(t) : r;
        }
        vsl_buf_reset(&t->severity);
        vsl_buf_reset(&t->check);
        vsl_buf_reset(&t->vcenter);
        vsl_buf_reset(&t->lun);
        r = vsl_buf_addstr(&t->severity, or_empty(w->severity));
        if (r == 0)
            r = vsl_buf_addstr(&t->check, or_empty(w->check));
        if (r == 0)
            r = vsl_buf_addstr(&t->vcenter, or_empty(w->vcenter));
        if (r == 0)
            r = vsl_buf_addstr(&t->lun, or_empty(w->object_name));
    }
    /* The finding's message and marks, NUL-ended, after the run's others. */
    if (r == 0)
        r = vsl_buf_addstr(&t->lines, or_empty(w->message));
    if (r == 0)
        r = text_marks(&t->lines, w);
    if (r == 0)
        r = vsl_buf_add(&t->lines, "", 1);
    if (r < 0)
        return r;
    t->held++;
    return 0;
}

static int text_waived(void *ctx, const struct db_finding_row *w)
{
    struct text *t = ctx;
    int r;

    t->rows++;
    t->waived++;
    t->unverified += w->unverified;
    vsl_buf_reset(&t->line);
    r = vsl_buf_printf(&t->line, "WAIVED    %-22s %s: %s  (waived until %s: %s)",
                       or_empty(w->check), or_empty(w->vcenter), or_empty(w->message),
                       or_empty(w->waiver_expires), or_empty(w->waiver_reason));
    if (r == 0)
        r = text_marks(&t->line, w);
    return r == 0 ? put_line(t) : r;
}

/* Text for people: the unwaived findings, critical first, then the waived ones, then a line of
 * counts. Each section is read from the stored rows as it is printed. */
static int write_text(FILE *f, const struct vsl_report *r)
{
    struct text t = {.f = f};
    size_t i;
    json_t *fd;
    int rc = 0;

    vsl_buf_init(&t.severity, 1 << 20);
    vsl_buf_init(&t.check, 1 << 20);
    vsl_buf_init(&t.vcenter, 1 << 20);
    vsl_buf_init(&t.lun, 1 << 20);
    /* A run is one LUN's findings, one per host that sees it. */
    vsl_buf_init(&t.lines, (size_t)256 << 20);
    vsl_buf_init(&t.line, (size_t)16 << 20);
    for (t.sev = SEV_CRITICAL; rc == 0 && t.sev >= SEV_INFO; t.sev--) {
        const struct db_findings_filter flt = {
            .status = "open",
            .severity = vsl_severity_name((enum vsl_severity)t.sev),
            .severity_only = 1};
        /* Each vCenter's run ends with its findings: a LUN's run never spans two. */
        for (size_t v = 0; rc == 0 && v < r->n_vcenters; v++) {
            struct db_findings_filter one = flt;
            one.vcenter = r->vcenters[v];
            rc = vsl_report_walk(r, &one, text_row, &t);
            if (rc == 0)
                rc = text_flush(&t);
        }
    }
    if (rc == 0) {
        const struct db_findings_filter flt = {.status = "waived"};
        rc = vsl_report_walk(r, &flt, text_waived, &t);
    }
    vsl_buf_free(&t.severity);
    vsl_buf_free(&t.check);
    vsl_buf_free(&t.vcenter);
    vsl_buf_free(&t.lun);
    vsl_buf_free(&t.lines);
    vsl_buf_free(&t.line);
    if (rc < 0)
        return rc;
    if (t.rows)
        fputc('\n', f);
    fprintf(f, "%d critical, %d warning, %d info", t.by_sev[2], t.by_sev[1], t.by_sev[0]);
    if (t.waived)
        fprintf(f, ", %d waived", t.waived);
    if (t.news)
        fprintf(f, "; %d new since the previous run", t.news);
    json_t *resolved = json_object_get(r->summary, "resolved_this_run");
    if (json_integer_value(resolved) > 0)
        fprintf(f, "; %lld resolved", (long long)json_integer_value(resolved));
    if (t.unverified)
        fprintf(f, "; %d could not be verified this run (kept as last seen)", t.unverified);
    fprintf(f, ".\n");
    json_t *expired = json_object_get(r->summary, "expired_waivers");
    json_array_foreach(expired, i, fd) {
        fputs("note: ", f);
        put_safe(f, json_string_value(fd) ? json_string_value(fd) : "");
        fputc('\n', f);
    }
    if ((r->errors && *r->errors) || (r->seen && r->seen->unread))
        fprintf(f, "The run was incomplete: see the errors on standard error.\n");
    return ferror(f) ? -EIO : 0;
}

int vsl_json_print(FILE *f, const json_t *doc)
{
    if (!doc)
        return -ENOMEM;
    if (json_dumpf(doc, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER) < 0)
        return -EIO;
    fputc('\n', f);
    return 0;
}

/* Check c of the report: the built-in catalogue, then the site rules. */
size_t vsl_report_nchecks(const struct vsl_report *r)
{
    return chk_registry_len + r->n_site;
}

const struct check *vsl_report_check(const struct vsl_report *r, size_t c)
{
    return c < chk_registry_len ? chk_registry[c] : &r->site[c - chk_registry_len];
}

/* The errors of site rule id in r->rule_errors, or of the rule files without an id (id NULL). */
static int rule_failed(const struct vsl_report *r, const char *id, const json_t **err)
{
    size_t i;
    json_t *e;

    json_array_foreach(r->rule_errors, i, e) {
        const char *eid = json_string_value(json_object_get(e, "id"));
        if (id && eid && !strcmp(eid, id)) {
            *err = e;
            return 1;
        }
    }
    return 0;
}

/* The streamed JSON report is built in a buffer and written a block at a time (to a terminal a
 * finding at a time: struct vsl_jstream's tty): written a character or a token at a time through
 * stdio, each call taking the stream's lock, the 24 MB report of 100,000 VMs spent half its
 * time there (perf). */
#define JSON_BLOCK ((size_t)64 * 1024)
/* What the buffer may hold: a block, and one finding or member after it (each bounded where it
 * is made: a finding's text by db_findings_each_text(), the summary by the checks it counts). */
#define JSON_MAX ((size_t)1 << 30)
#ifdef VSL_TEST_HOOKS
size_t vsl_test_report_max;
#endif

void vsl_jstream_init(struct vsl_jstream *s, FILE *f)
{
    size_t max = JSON_MAX;

#ifdef VSL_TEST_HOOKS
    if (vsl_test_report_max)
        max = vsl_test_report_max;
#endif
    *s = (struct vsl_jstream){.f = f, .tty = isatty(fileno(f))};
    vsl_buf_init(&s->out, max);
}

/* A newline and the indent of depth, as json_dumpf(JSON_INDENT(2)) writes them. */
int vsl_json_newline(struct vsl_buf *out, int depth)
{
    static const char blanks[] = "                                ";
    int r = vsl_buf_add(out, "\n", 1);

    for (size_t left = depth > 0 ? 2 * (size_t)depth : 0; r == 0 && left > 0;) {
        size_t n = left < sizeof(blanks) - 1 ? left : sizeof(blanks) - 1;
        r = vsl_buf_add(out, blanks, n);
        left -= n;
    }
    return r;
}

/* The bytes that end a run vsl_json_indented() copies as it is: the structural characters, blanks,
 * a string's opening quote, and NUL. */
static const unsigned char json_stop[256] = {
    ['"'] = 1, ['{'] = 1, ['}'] = 1, ['['] = 1,  [']'] = 1,  [','] = 1,
    [':'] = 1, [' '] = 1, ['\t'] = 1, ['\r'] = 1, ['\n'] = 1, ['\0'] = 1,
};

/* The compact JSON text s[0..n) appended to out as json_dumpf(JSON_INDENT(2)) writes a value at
 * depth depth, so that the report streamed from the stored rows' text reads byte for byte as
 * the one dumped from their trees did. Blanks between tokens are dropped, as a parse would.
 * Text between the structural characters goes in as one piece (a string's escapes included).
 * 0, or the buffer's error. */
int vsl_json_indented(struct vsl_buf *out, const char *s, size_t n, int depth)
{
    size_t i = 0;
    int r = 0;

    while (r == 0 && i < n) {
        size_t k = i;
        if (s[i] == '"') {
            for (k = i + 1; k < n && s[k] != '"'; k++)
                k += s[k] == '\\';
            k = k < n ? k + 1 : n;
        } else {
            while (k < n && !json_stop[(unsigned char)s[k]])
                k++;
        }
        if (k > i) {
            r = vsl_buf_add(out, s + i, k - i);
            i = k;
            continue;
        }
        char c = s[i++];
        switch (c) {
        case '{':
        case '[':
            k = i;
            while (k < n && s[k] && strchr(" \t\r\n", s[k]))
                k++;
            if (k < n && s[k] == (c == '{' ? '}' : ']')) {
                const char empty[2] = {c, s[k]}; /* an empty one stays on its line: "{}", "[]" */
                r = vsl_buf_add(out, empty, 2);
                i = k + 1;
                break;
            }
            r = vsl_buf_add(out, &c, 1);
            if (r == 0)
                r = vsl_json_newline(out, ++depth);
            break;
        case '}':
        case ']':
            r = vsl_json_newline(out, --depth);
            if (r == 0)
                r = vsl_buf_add(out, &c, 1);
            break;
        case ',':
            r = vsl_buf_add(out, &c, 1);
            if (r == 0)
                r = vsl_json_newline(out, depth);
            break;
        case ':':
            r = vsl_buf_add(out, ": ", 2);
            break;
        default: /* a blank */
            break;
        }
    }
    return r;
}


/* Writes out what s holds once it is a block, or all of it, and empties it. 0 or -EIO. */
int vsl_jstream_flush(struct vsl_jstream *s, int all)
{
    if (s->out.len > 0 && (all || s->out.len >= JSON_BLOCK)) {
        fwrite(s->out.data, 1, s->out.len, s->f);
        vsl_buf_reset(&s->out);
    }
    return ferror(s->f) ? -EIO : 0;
}

int vsl_jstream_item(struct vsl_jstream *s, const char *json, size_t len, int depth)
{
    const size_t at = s->out.len; /* where this element starts in the buffer */
    int r = vsl_buf_add(&s->out, ",", s->items ? 1 : 0);

    if (r == 0)
        r = vsl_json_newline(&s->out, depth);
    if (r == 0)
        r = vsl_json_indented(&s->out, json, len, depth);
    if (r < 0) {
        /* Not half an element: the buffer ends where it did before it (the caller fails on
         * werr, but nothing of this element may stand in what it holds). */
        s->out.len = at;
        if (s->out.data)
            s->out.data[at] = '\0';
        return s->werr = r;
    }
    s->items++;
    r = vsl_jstream_flush(s, s->tty);
    return r < 0 ? (s->werr = r) : 0;
}

/* v as a member of the report's top-level object, after what came before it. */
static int put_member(struct vsl_jstream *s, const char *name, const json_t *v)
{
    char *text = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
    int r = text ? 0 : -ENOMEM;

    if (r == 0)
        r = vsl_buf_addstr(&s->out, ",\n  \"");
    if (r == 0)
        r = vsl_buf_addstr(&s->out, name);
    if (r == 0)
        r = vsl_buf_addstr(&s->out, "\": ");
    if (r == 0)
        r = vsl_json_indented(&s->out, text, strlen(text), 1);
    free(text);
    return r == 0 ? vsl_jstream_flush(s, 0) : r;
}

/* One finding of the streamed report, at depth 2 of the document, after those before it. */
static int put_finding(void *ctx, const char *json, size_t len, const char *status,
                       const char *severity)
{
    struct vsl_jstream *s = ctx;
    enum vsl_severity sev;
    int r = vsl_jstream_item(s, json, len, 2);

    if (r == 0 && strcmp(status, "waived") != 0 && vsl_severity_parse(severity, &sev) == 0 &&
        (int)sev >= s->fail_on)
        s->failing = 1;
    return r;
}

/* The JSON report with its findings written from the stored rows' text as the database hands
 * them over, one at a time (db_findings_each_text()), instead of from a tree of them all held
 * in memory (at 100,000 VMs, 110,000 findings as trees were 200 MB of the peak RSS).
 * A read failing part way through still closes the document (valid JSON, without the rest of
 * that vCenter's findings; the other vCenters' are still read), says which vCenter on stderr
 * and sets r->seen->unread for the exit status.
 * The buffer failing (out of memory) or a write failing is returned as it is, after no more
 * than whole findings (the caller says it cannot write the report). */
static int write_json_stream(FILE *f, const struct vsl_report *r)
{
    struct vsl_jstream s;
    int rc;

    vsl_jstream_init(&s, f);
    s.fail_on = r->fail_on;
    rc = vsl_buf_addstr(&s.out, "{\n  \"findings\": [");
    for (size_t v = 0; rc == 0 && v < r->n_vcenters; v++) {
        struct db_findings_filter flt = {.vcenter = r->vcenters[v]};
        int64_t total = 0;
        rc = db_findings_each_text(r->db, &flt, 0, put_finding, &s, &total);
        /* Its findings read so far stay (whole ones); the other vCenters are still read, as
         * in the other formats. */
        if (rc < 0 && !s.werr && !ferror(f)) {
            vsl_report_read_failed(r, v, rc);
            rc = 0;
        }
    }
    if (rc == 0 && r->seen)
        r->seen->failing = s.failing;
    if (rc == 0 && s.items)
        rc = vsl_json_newline(&s.out, 1);
    if (rc == 0)
        rc = vsl_buf_add(&s.out, "]", 1);
    if (rc == 0)
        rc = put_member(&s, "summary", r->summary);
    if (rc == 0 && r->rule_errors)
        rc = put_member(&s, "rule_errors", r->rule_errors);
    if (rc == 0)
        rc = vsl_buf_addstr(&s.out, "\n}\n");
    if (rc == 0)
        rc = vsl_jstream_flush(&s, 1);
    vsl_buf_free(&s.out);
    return rc;
}

static int write_json(FILE *f, const struct vsl_report *r)
{
    if (!r->findings && r->db)
        return write_json_stream(f, r);

    json_t *doc = json_pack("{s:O,s:O}", "findings", r->findings, "summary", r->summary);
    if (doc && r->rule_errors)
        json_object_set(doc, "rule_errors", r->rule_errors);
    int rc = vsl_json_print(f, doc);

    json_decref(doc);
    return rc;
}

/* s with XML's special characters escaped (vsl_buf_addxml()'s), straight to f. */
static void xml_text(FILE *f, const char *s)
{
    while (*s) {
        size_t n = strcspn(s, "&<>\"'");
        fwrite(s, 1, n, f);
        s += n;
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default: continue; /* the end */
        }
        s++;
    }
}

/* A JUnit test suite's counts: the findings of a check (its cases), how many are waived
 * (skipped), and how many of the others are at or above --fail-on (failures). */
struct suite_counts {
    int cases, failures, skipped;
};

struct junit_tally {
    const struct vsl_report *r;
    struct suite_counts *n; /* one per check of the report */
};

static int junit_count(void *ctx, const char *check, const char *severity, int waived,
                       int64_t n)
{
    struct junit_tally *t = ctx;
    enum vsl_severity sev;
    int s = severity && vsl_severity_parse(severity, &sev) == 0 ? (int)sev : 0;

    /* Every finding counts for the exit status, as in the other formats, whether or not its
     * check is one this report lists. */
    if (!waived && s >= t->r->fail_on && t->r->seen && n > 0)
        t->r->seen->failing = 1;
    for (size_t c = 0; check && c < vsl_report_nchecks(t->r); c++) {
        if (strcmp(vsl_report_check(t->r, c)->id, check) != 0)
            continue;
        t->n[c].cases += (int)n;
        if (waived)
            t->n[c].skipped += (int)n;
        else if (s >= t->r->fail_on)
            t->n[c].failures += (int)n;
        break;
    }
    return 0;
}

/* Whether the report lists a check with id (a site rule that loaded). */
static int report_has(const struct vsl_report *r, const char *id)
{
    for (size_t c = 0; c < vsl_report_nchecks(r); c++)
        if (!strcmp(vsl_report_check(r, c)->id, id))
            return 1;
    return 0;
}

/* A site rule that failed, as a failed JUnit case of suite: FILE:LINE and the cause. */
static void junit_rule_error(FILE *f, const char *suite, const json_t *e)
{
    char where[4200];
    json_int_t line = json_integer_value(json_object_get(e, "line"));

    if (line > 0)
        snprintf(where, sizeof(where), "%s:%lld", str(e, "file"), (long long)line);
    else
        snprintf(where, sizeof(where), "%s", str(e, "file"));
    fprintf(f, "    <testcase classname=\"%s\" name=\"rule ", suite);
    xml_text(f, where);
    fprintf(f, "\">\n      <failure type=\"rule-error\" message=\"");
    xml_text(f, str(e, "error"));
    fprintf(f, "\"/>\n    </testcase>\n");
}

struct junit {
    FILE *f;
    const struct vsl_report *r;
    const struct check *ck;
};

/* One finding of the check's suite, as its test case. */
static int junit_case(void *ctx, const struct db_finding_row *w)
{
    struct junit *j = ctx;
    FILE *f = j->f;
    char name[1024];

    vsl_row_object_name(w, name, sizeof(name));
    fprintf(f, "    <testcase classname=\"%s\" name=\"", j->ck->id);
    xml_text(f, or_empty(w->vcenter));
    fputc('/', f);
    xml_text(f, name);
    fprintf(f, "\">\n");
    if (!strcmp(w->status, "waived")) {
        fprintf(f, "      <skipped message=\"waived until ");
        xml_text(f, or_empty(w->waiver_expires));
        fprintf(f, ": ");
        xml_text(f, or_empty(w->waiver_reason));
        fprintf(f, "\"/>\n");
    } else if (w->sev >= j->r->fail_on) {
        fprintf(f, "      <failure type=\"%s\" message=\"", or_empty(w->severity));
        xml_text(f, or_empty(w->message));
        fprintf(f, "\">");
        xml_text(f, j->ck->remediation);
        fprintf(f, "</failure>\n");
    } else {
        fprintf(f, "      <system-out>%s: ", or_empty(w->severity));
        xml_text(f, or_empty(w->message));
        fprintf(f, "</system-out>\n");
    }
    if (w->unverified) {
        fprintf(f, "      <system-err>unverified since ");
        xml_text(f, or_empty(w->unverified_since));
        fprintf(f, ": ");
        xml_text(f, or_empty(w->unverified_reason));
        fprintf(f, "</system-err>\n");
    }
    fprintf(f, "    </testcase>\n");
    return ferror(f) ? -EIO : 0;
}

/* JUnit: one <testsuite> per check; one <testcase> per finding (a <failure> when at or above
 * --fail-on, <skipped> when waived), or a single passing case for a check with none. The
 * counts come first in the document: they are counted in the database (db_findings_tally()),
 * then each check's findings are read as its suite is written. */
static int write_junit(FILE *f, const struct vsl_report *r)
{
    size_t i, nchecks = vsl_report_nchecks(r);
    int total = 0, failures = 0, skipped = 0, rc = 0;
    struct suite_counts *n = calloc(nchecks + 1, sizeof(*n));
    struct junit_tally tally = {r, n};

    if (!n)
        return -ENOMEM;
    for (size_t v = 0; v < r->n_vcenters; v++) {
        int e = db_findings_tally(r->db, r->vcenters[v], junit_count, &tally);
        if (e < 0)
            vsl_report_read_failed(r, v, e);
    }
    for (size_t c = 0; c < nchecks; c++) {
        const json_t *e;
        total += n[c].cases ? n[c].cases : 1;
        failures += n[c].failures + rule_failed(r, vsl_report_check(r, c)->id, &e);
        total += rule_failed(r, vsl_report_check(r, c)->id, &e);
        skipped += n[c].skipped;
    }
    json_t *e;
    json_array_foreach(r->rule_errors, i, e) {
        if (!json_is_string(json_object_get(e, "id")) || !report_has(r, str(e, "id"))) {
            total++;
            failures++;
        }
    }
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(f, "<testsuites name=\"vslint\" tests=\"%d\" failures=\"%d\" skipped=\"%d\">\n",
            total, failures, skipped);
    for (size_t c = 0; rc == 0 && c < nchecks; c++) {
        const struct check *ck = vsl_report_check(r, c);
        const json_t *rerr = NULL;
        const int broke = rule_failed(r, ck->id, &rerr);
        fprintf(f, "  <testsuite name=\"%s\" tests=\"%d\" failures=\"%d\" skipped=\"%d\">\n",
                ck->id, (n[c].cases ? n[c].cases : 1) + broke, n[c].failures + broke,
                n[c].skipped);
        if (broke)
            junit_rule_error(f, ck->id, rerr);
        if (!n[c].cases)
            fprintf(f, "    <testcase classname=\"%s\" name=\"no findings\"/>\n", ck->id);
        else {
            struct junit j = {f, r, ck};
            const struct db_findings_filter flt = {.check = ck->id};
            rc = vsl_report_walk(r, &flt, junit_case, &j);
        }
        fprintf(f, "  </testsuite>\n");
    }
    free(n);
    if (rc < 0)
        return rc;
    /* Rule files that did not load have no check: one suite holds their failed cases. */
    size_t unloaded = 0;
    json_array_foreach(r->rule_errors, i, e)
        unloaded += !json_is_string(json_object_get(e, "id")) || !report_has(r, str(e, "id"));
    if (unloaded) {
        fprintf(f, "  <testsuite name=\"site-rules\" tests=\"%zu\" failures=\"%zu\" "
                   "skipped=\"0\">\n", unloaded, unloaded);
        json_array_foreach(r->rule_errors, i, e)
            if (!json_is_string(json_object_get(e, "id")) || !report_has(r, str(e, "id")))
                junit_rule_error(f, "site-rules", e);
        fprintf(f, "  </testsuite>\n");
    }
    fprintf(f, "</testsuites>\n");
    return ferror(f) ? -EIO : 0;
}

int vsl_report_write(FILE *f, enum vsl_format fmt, const struct vsl_report *r)
{
    switch (fmt) {
    case VSL_FMT_TEXT: return write_text(f, r);
    case VSL_FMT_JSON: return write_json(f, r);
    case VSL_FMT_JUNIT: return write_junit(f, r);
    case VSL_FMT_SARIF: return vsl_report_sarif(f, r);
    case VSL_FMT_GITLAB: return vsl_report_gitlab(f, r);
    case VSL_FMT_GITHUB: return vsl_report_github(f, r);
    }
    return -EINVAL;
}
