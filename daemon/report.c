/* Output formats of `vslint check`. Rules (check metadata) come from the registry, results
 * from the stored findings; waived findings are shown as waived, never dropped. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checks/check.h"
#include "daemon/report.h"
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

static int is_waived(const json_t *f)
{
    return !strcmp(str(f, "status"), "waived");
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

/* " [new]", " [unverified since 2026-11-30T06:00:00Z: esxcli could not be read ...]" */
static void text_marks(FILE *f, const json_t *fd)
{
    const json_t *u = json_object_get(fd, "unverified");

    if (json_is_object(u))
        fprintf(f, "  [unverified since %s: %s]", str(u, "since"), str(u, "reason"));
    else if (!strcmp(str(fd, "status"), "new"))
        fputs("  [new]", f);
}

/* Whether a and b are findings of one check about one LUN (on different hosts). */
static int same_lun(const json_t *a, const json_t *b)
{
    const json_t *oa = json_object_get(a, "object"), *ob = json_object_get(b, "object");

    return a && b && !strcmp(str(oa, "type"), "lun") && !strcmp(str(ob, "type"), "lun") &&
           !strcmp(str(oa, "name"), str(ob, "name")) && !strcmp(str(a, "check"), str(b, "check")) &&
           !strcmp(str(a, "vcenter"), str(b, "vcenter")) &&
           vsl_finding_severity(a) == vsl_finding_severity(b) && is_waived(a) == is_waived(b);
}

/* The unwaived findings of one severity. Findings of one check on one LUN seen from several
 * hosts (one finding per host) are printed under one line naming the LUN. */
static void text_severity(FILE *f, const json_t *all, int sev, int *count, int *news)
{
    size_t i, n = json_array_size(all);
    const json_t *prev = NULL;
    char u[16];

    for (i = 0; i < n; i++) {
        const json_t *fd = json_array_get(all, i);
        if (vsl_finding_severity(fd) != sev || is_waived(fd))
            continue;
        upper(u, str(fd, "severity"), sizeof(u));
        (*count)++;
        *news += !strcmp(str(fd, "status"), "new") && !json_is_object(json_object_get(fd, "unverified"));
        /* A run of one LUN starts when the next matching finding is the same LUN. */
        const json_t *next = NULL;
        for (size_t k = i + 1; k < n && !next; k++) {
            const json_t *c = json_array_get(all, k);
            if (vsl_finding_severity(c) == sev && !is_waived(c))
                next = c;
        }
        if (!same_lun(prev, fd) && same_lun(fd, next)) {
            size_t hosts = 1;
            for (size_t k = i + 1; k < n; k++) {
                const json_t *c = json_array_get(all, k);
                if (vsl_finding_severity(c) != sev || is_waived(c))
                    continue;
                if (!same_lun(fd, c))
                    break;
                hosts++;
            }
            fprintf(f, "%-8s  %-22s %s: LUN %s, on %zu hosts:\n", u, str(fd, "check"),
                    str(fd, "vcenter"), str(json_object_get(fd, "object"), "name"), hosts);
        }
        if (same_lun(prev, fd) || same_lun(fd, next))
            fprintf(f, "          %-22s   %s", "", str(fd, "message"));
        else
            fprintf(f, "%-8s  %-22s %s: %s", u, str(fd, "check"), str(fd, "vcenter"),
                    str(fd, "message"));
        text_marks(f, fd);
        fputc('\n', f);
        prev = fd;
    }
}

static int write_text(FILE *f, const struct vsl_report *r)
{
    size_t i, n = json_array_size(r->findings);
    json_t *fd;
    int by_sev[3] = {0, 0, 0}, waived = 0, news = 0, unverified = 0;

    for (int sev = 2; sev >= 0; sev--)
        text_severity(f, r->findings, sev, &by_sev[sev], &news);
    json_array_foreach(r->findings, i, fd) {
        if (json_is_object(json_object_get(fd, "unverified")))
            unverified++;
        if (!is_waived(fd))
            continue;
        json_t *w = json_object_get(fd, "waiver");
        fprintf(f, "WAIVED    %-22s %s: %s  (waived until %s: %s)", str(fd, "check"),
                str(fd, "vcenter"), str(fd, "message"), str(w, "expires"), str(w, "reason"));
        text_marks(f, fd);
        fputc('\n', f);
        waived++;
    }
    if (n)
        fputc('\n', f);
    fprintf(f, "%d critical, %d warning, %d info", by_sev[2], by_sev[1], by_sev[0]);
    if (waived)
        fprintf(f, ", %d waived", waived);
    if (news)
        fprintf(f, "; %d new since the previous run", news);
    json_t *resolved = json_object_get(r->summary, "resolved_this_run");
    if (json_integer_value(resolved) > 0)
        fprintf(f, "; %lld resolved", (long long)json_integer_value(resolved));
    if (unverified)
        fprintf(f, "; %d could not be verified this run (kept as last seen)", unverified);
    fprintf(f, ".\n");
    json_t *expired = json_object_get(r->summary, "expired_waivers");
    json_array_foreach(expired, i, fd) fprintf(f, "note: %s\n", json_string_value(fd));
    if (r->errors && *r->errors)
        fprintf(f, "The run was incomplete: see the errors on standard error.\n");
    return 0;
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
 * finding at a time: struct stream's tty): written a character or a token at a time through
 * stdio, each call taking the stream's lock, the 24 MB report of 100,000 VMs spent half its
 * time there (perf). */
#define JSON_BLOCK ((size_t)64 * 1024)
/* What the buffer may hold: a block, and one finding or member after it (each bounded where it
 * is made: a finding's text by db_findings_each_text(), the summary by the checks it counts). */
#define JSON_MAX ((size_t)1 << 30)
#ifdef VSL_TEST_HOOKS
size_t vsl_test_report_max;
#endif

/* A newline and the indent of depth, as json_dumpf(JSON_INDENT(2)) writes them. */
static int newline(struct vsl_buf *out, int depth)
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

/* The bytes that end a run put_indented() copies as it is: the structural characters, blanks,
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
static int put_indented(struct vsl_buf *out, const char *s, size_t n, int depth)
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
                r = newline(out, ++depth);
            break;
        case '}':
        case ']':
            r = newline(out, --depth);
            if (r == 0)
                r = vsl_buf_add(out, &c, 1);
            break;
        case ',':
            r = vsl_buf_add(out, &c, 1);
            if (r == 0)
                r = newline(out, depth);
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

struct stream {
    FILE *f;
    struct vsl_buf out; /* written to f a block at a time (flush()) */
    /* f is a terminal: each finding is written as soon as it is made, so that a warning on
     * stderr shows among the findings where it happened (stdio's line buffering then writes
     * it out line by line, as when the report went to stdio a character at a time). */
    int tty;
    size_t items;
    int fail_on;
    int failing; /* an unwaived finding at fail_on or above was written */
    /* The first error of building or writing the report (the buffer's -ENOMEM or
     * -VSL_ETOOBIG, a write's -EIO), as opposed to one of reading the findings: the report
     * cannot be written whole, where a read error still closes the document. 0: none. */
    int werr;
};

/* Writes out what s holds once it is a block, or all of it, and empties it. 0 or -EIO. */
static int flush(struct stream *s, int all)
{
    if (s->out.len > 0 && (all || s->out.len >= JSON_BLOCK)) {
        fwrite(s->out.data, 1, s->out.len, s->f);
        vsl_buf_reset(&s->out);
    }
    return ferror(s->f) ? -EIO : 0;
}

/* v as a member of the report's top-level object, after what came before it. */
static int put_member(struct stream *s, const char *name, const json_t *v)
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
        r = put_indented(&s->out, text, strlen(text), 1);
    free(text);
    return r == 0 ? flush(s, 0) : r;
}

/* One finding of the streamed report, at depth 2 of the document, after those before it. */
static int put_finding(void *ctx, const char *json, size_t len, const char *status,
                       const char *severity)
{
    struct stream *s = ctx;
    const size_t at = s->out.len; /* where this finding starts in the buffer */
    enum vsl_severity sev;
    int r = vsl_buf_add(&s->out, ",", s->items ? 1 : 0);

    if (r == 0)
        r = newline(&s->out, 2);
    if (r == 0)
        r = put_indented(&s->out, json, len, 2);
    if (r < 0) {
        /* Not half a finding: the buffer ends where it did before it (the caller fails on
         * werr, but nothing of this finding may stand in what it holds). */
        s->out.len = at;
        if (s->out.data)
            s->out.data[at] = '\0';
        s->werr = r;
        return r;
    }
    s->items++;
    if (strcmp(status, "waived") != 0 && vsl_severity_parse(severity, &sev) == 0 &&
        (int)sev >= s->fail_on)
        s->failing = 1;
    r = flush(s, s->tty);
    if (r < 0)
        s->werr = r;
    return r;
}

/* The JSON report with its findings written from the stored rows' text as the database hands
 * them over, one at a time (db_findings_each_text()), instead of from a tree of them all held
 * in memory (at 100,000 VMs, 110,000 findings as trees were 200 MB of the peak RSS).
 * A read failing part way through still closes the document (valid JSON, without the rest of
 * the findings), says which vCenter on stderr and sets r->seen->unread for the exit status.
 * The buffer failing (out of memory) or a write failing is returned as it is, after no more
 * than whole findings (the caller says it cannot write the report). */
static int write_json_stream(FILE *f, const struct vsl_report *r)
{
    struct stream s = {.f = f, .tty = isatty(fileno(f)), .fail_on = r->fail_on};
    int rc;

    size_t max = JSON_MAX;
#ifdef VSL_TEST_HOOKS
    if (vsl_test_report_max)
        max = vsl_test_report_max;
#endif
    vsl_buf_init(&s.out, max);
    rc = vsl_buf_addstr(&s.out, "{\n  \"findings\": [");
    for (size_t v = 0; rc == 0 && v < r->n_vcenters; v++) {
        struct db_findings_filter flt = {.vcenter = r->vcenters[v]};
        int64_t total = 0;
        rc = db_findings_each_text(r->db, &flt, 0, put_finding, &s, &total);
        if (rc < 0 && !s.werr && !ferror(f)) {
            log_warnx("cannot read findings of %s: %s", r->vcenters[v], vsl_strerror(rc));
            if (r->seen)
                r->seen->unread = 1;
            rc = 0;
            break;
        }
    }
    if (rc == 0 && r->seen)
        r->seen->failing = s.failing;
    if (rc == 0 && s.items)
        rc = newline(&s.out, 1);
    if (rc == 0)
        rc = vsl_buf_add(&s.out, "]", 1);
    if (rc == 0)
        rc = put_member(&s, "summary", r->summary);
    if (rc == 0 && r->rule_errors)
        rc = put_member(&s, "rule_errors", r->rule_errors);
    if (rc == 0)
        rc = vsl_buf_addstr(&s.out, "\n}\n");
    if (rc == 0)
        rc = flush(&s, 1);
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

static void xml_text(FILE *f, const char *s)
{
    struct vsl_buf b;
    vsl_buf_init(&b, 1 << 20);
    if (vsl_buf_addxml(&b, s) == 0 && b.data)
        fputs(b.data, f);
    vsl_buf_free(&b);
}

/* A JUnit test suite's counts: the findings of check id in r (its cases), how many are waived
 * (skipped), and how many of the others are at or above --fail-on (failures). */
struct suite_counts {
    int cases, failures, skipped;
};

static struct suite_counts count_suite(const struct vsl_report *r, const char *id)
{
    struct suite_counts n = {0};
    size_t i;
    json_t *fd;

    json_array_foreach(r->findings, i, fd)
    {
        if (strcmp(str(fd, "check"), id))
            continue;
        n.cases++;
        if (is_waived(fd))
            n.skipped++;
        else if (vsl_finding_severity(fd) >= r->fail_on)
            n.failures++;
    }
    return n;
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

/* JUnit: one <testsuite> per check; one <testcase> per finding (a <failure> when at or above
 * --fail-on, <skipped> when waived), or a single passing case for a check with none. */
static int write_junit(FILE *f, const struct vsl_report *r)
{
    size_t i;
    json_t *fd;
    int total = 0, failures = 0, skipped = 0;

    for (size_t c = 0; c < vsl_report_nchecks(r); c++) {
        struct suite_counts n = count_suite(r, vsl_report_check(r, c)->id);
        const json_t *e;
        total += n.cases ? n.cases : 1;
        failures += n.failures + rule_failed(r, vsl_report_check(r, c)->id, &e);
        total += rule_failed(r, vsl_report_check(r, c)->id, &e);
        skipped += n.skipped;
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
    for (size_t c = 0; c < vsl_report_nchecks(r); c++) {
        const struct check *ck = vsl_report_check(r, c);
        struct suite_counts n = count_suite(r, ck->id);
        const json_t *rerr = NULL;
        const int broke = rule_failed(r, ck->id, &rerr);
        fprintf(f, "  <testsuite name=\"%s\" tests=\"%d\" failures=\"%d\" skipped=\"%d\">\n",
                ck->id, (n.cases ? n.cases : 1) + broke, n.failures + broke, n.skipped);
        if (broke)
            junit_rule_error(f, ck->id, rerr);
        if (!n.cases)
            fprintf(f, "    <testcase classname=\"%s\" name=\"no findings\"/>\n", ck->id);
        json_array_foreach(r->findings, i, fd) {
            if (strcmp(str(fd, "check"), ck->id))
                continue;
            char name[1024];
            vsl_finding_object_name(fd, name, sizeof(name));
            fprintf(f, "    <testcase classname=\"%s\" name=\"", ck->id);
            xml_text(f, str(fd, "vcenter"));
            fputc('/', f);
            xml_text(f, name);
            fprintf(f, "\">\n");
            if (is_waived(fd)) {
                json_t *w = json_object_get(fd, "waiver");
                fprintf(f, "      <skipped message=\"waived until ");
                xml_text(f, str(w, "expires"));
                fprintf(f, ": ");
                xml_text(f, str(w, "reason"));
                fprintf(f, "\"/>\n");
            } else if (vsl_finding_severity(fd) >= r->fail_on) {
                fprintf(f, "      <failure type=\"%s\" message=\"", str(fd, "severity"));
                xml_text(f, str(fd, "message"));
                fprintf(f, "\">");
                xml_text(f, ck->remediation);
                fprintf(f, "</failure>\n");
            } else {
                fprintf(f, "      <system-out>%s: ", str(fd, "severity"));
                xml_text(f, str(fd, "message"));
                fprintf(f, "</system-out>\n");
            }
            const json_t *u = json_object_get(fd, "unverified");
            if (json_is_object(u)) {
                fprintf(f, "      <system-err>unverified since ");
                xml_text(f, str(u, "since"));
                fprintf(f, ": ");
                xml_text(f, str(u, "reason"));
                fprintf(f, "</system-err>\n");
            }
            fprintf(f, "    </testcase>\n");
        }
        fprintf(f, "  </testsuite>\n");
    }
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
    return 0;
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
