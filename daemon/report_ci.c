/* The reports of `vslint check` for CI platforms: SARIF 2.1.0 as GitHub code scanning accepts
 * it, GitLab's Code Quality report, and GitHub Actions workflow annotations for a job's log.
 *
 * What these platforms share: each result must point at a file path in the repository, the
 * same path on every run (their fingerprints and "fixed" states hang on it), and a line. An
 * estate has no files, so a finding's path is made from its object: "vsphere/VCENTER/TYPE/NAME"
 * (a part of a host, which has no moref, under its host: "vsphere/VC/host/HOST/lun/NAA"), each
 * segment percent-encoded so that a name with "/" or spaces stays one segment, with line 1. A
 * site that keeps its configuration in the repository can instead point every finding at the
 * configuration file and the line of its [vcenter NAME] section (--sarif-location config). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks/check.h"
#include "daemon/report.h"
#include "daemon/report-private.h"
#include "util/buf.h"
#include "util/log.h"

#define MAX_PATH_LEN 4096

static const char *str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

static const struct vsl_report_source *source_of(const struct vsl_report *r, const char *name)
{
    for (size_t i = 0; i < r->n_sources; i++)
        if (!strcmp(r->sources[i].name, name))
            return &r->sources[i];
    return NULL;
}

/* The repository-relative path a finding is reported at, into b: its object's path, or the
 * configuration file (with *line its source's section) under VSL_LOC_CONFIG. */
static int finding_path(const struct vsl_report *r, const struct db_finding_row *w,
                        struct vsl_buf *b, int *line)
{
    const char *vc = or_empty(w->vcenter);
    const struct vsl_report_source *src = source_of(r, vc);
    int rc;

    vsl_buf_reset(b);
    *line = 1;
    if (r->location == VSL_LOC_CONFIG && r->config_path) {
        if (src && src->line > 0)
            *line = src->line;
        return vsl_buf_addstr(b, r->config_path);
    }
    rc = vsl_buf_addstr(b, src && src->array ? "array/" : "vsphere/");
    if (rc == 0)
        rc = vsl_buf_addurl(b, vc);
    if (rc == 0 && w->on_host && !w->object_moref) {
        rc = vsl_buf_addstr(b, "/host/");
        if (rc == 0)
            rc = vsl_buf_addurl(b, or_empty(w->host_name));
    }
    if (rc == 0)
        rc = vsl_buf_addstr(b, "/");
    if (rc == 0)
        rc = vsl_buf_addurl(b, or_empty(w->object_type));
    if (rc == 0)
        rc = vsl_buf_addstr(b, "/");
    if (rc == 0)
        rc = vsl_buf_addurl(b, or_empty(w->object_name));
    return rc;
}

static int rule_index(const struct vsl_report *r, const char *id)
{
    for (size_t c = 0; c < vsl_report_nchecks(r); c++)
        if (!strcmp(vsl_report_check(r, c)->id, id))
            return (int)c;
    return -1;
}

/* The rule of a finding, built-in or site, or NULL. */
static const struct check *rule_of(const struct vsl_report *r, const char *id)
{
    int c = rule_index(r, id);
    return c < 0 ? NULL : vsl_report_check(r, (size_t)c);
}

/* A rule's help as a code-scanning tool shows it beside a result, in plain text (markdown 0)
 * or Markdown: the fix, then the seed's own words the rule rests on and what vslint adds to
 * them, so a reader can tell the two apart. A string the caller frees, or NULL (no memory). */
static char *rule_help(const struct check *ck, int markdown)
{
    struct vsl_buf b;
    int r;

    vsl_buf_init(&b, (size_t)1 << 20);
    if (markdown)
        r = vsl_buf_printf(&b, "**%s**\n\n%s\n\n**Fix**\n\n```\n%s\n```", ck->title,
                           ck->rationale, ck->remediation);
    else
        r = vsl_buf_printf(&b, "%s", ck->remediation);
    for (size_t s = 0; r >= 0 && ck->sources && ck->sources[s].document; s++)
        r = vsl_buf_printf(&b, markdown ? "\n\n**Source**, %s %s:\n\n> %s" :
                                          "\n\nSource, %s %s: \"%s\"",
                           ck->sources[s].document, ck->sources[s].section,
                           ck->sources[s].quote);
    if (r >= 0 && ck->own)
        r = vsl_buf_printf(&b, markdown ? "\n\n**vslint's own:** %s\n" : "\n\nvslint's own: %s",
                           ck->own);
    if (r < 0) {
        vsl_buf_free(&b);
        return NULL;
    }
    return vsl_buf_take(&b);
}

/* The tags a rule is filed under in code scanning: what it is about, from what it reads; a
 * site rule is "site-rule". */
static json_t *rule_tags(const struct vsl_report *r, const struct check *ck)
{
    json_t *t = json_pack("[s,s]", "vsphere", "storage");

    if (rule_index(r, ck->id) >= (int)chk_registry_len)
        json_array_append_new(t, json_string("site-rule"));

    if (ck->needs & (CHK_NEEDS_HOST | CHK_NEEDS_ESXCLI | CHK_NEEDS_OPTIONS |
                     CHK_NEEDS_ISCSI_BINDINGS))
        json_array_append_new(t, json_string("host-configuration"));
    if (ck->needs & CHK_NEEDS_DATASTORE)
        json_array_append_new(t, json_string("capacity"));
    return t;
}

static const char *sarif_level(int sev)
{
    return sev == SEV_CRITICAL ? "error" : sev == SEV_WARNING ? "warning" : "note";
}

static json_t *sarif_rules(const struct vsl_report *r)
{
    json_t *rules = json_array();

    for (size_t c = 0; c < vsl_report_nchecks(r); c++) {
        const struct check *ck = vsl_report_check(r, c);
        char *text = rule_help(ck, 0), *md = rule_help(ck, 1);
        /* A rule left out would shift every later rule's index, and the results' ruleIndex
         * would name the wrong rules: a rule that cannot be written fails the report. */
        json_t *rule =
            json_pack("{s:s,s:s,s:{s:s},s:{s:s},s:{s:s,s:s*},s:{s:s},s:{s:s,s:o,s:s*,s:o}}",
                      "id", ck->id, "name", ck->id, "shortDescription", "text", ck->title,
                      "fullDescription", "text", ck->rationale, "help", "text",
                      text ? text : ck->remediation, /* out of memory: the fix alone */
                      "markdown", md, "defaultConfiguration", "level",
                      sarif_level(ck->severity), "properties", "reference",
                      ck->reference ? ck->reference : "",
                      "sources", chk_sources_json(ck), "own", ck->own, "tags", rule_tags(r, ck));
        free(text);
        free(md);
        if (json_array_append_new(rules, rule) < 0) {
            log_warnx("SARIF: rule %s cannot be written", ck->id);
            json_decref(rules);
            return NULL;
        }
    }
    return rules;
}

/* pre (structure, as it is), then "name": and v as a JSON string (NULL: null). */
static int jmember(struct vsl_buf *b, const char *pre, const char *name, const char *v)
{
    int r = vsl_buf_printf(b, "%s\"%s\":", pre, name);

    if (r == 0)
        r = v ? vsl_buf_addjson(b, v, strlen(v)) : vsl_buf_addstr(b, "null");
    return r;
}

/* The SARIF runs being written: the stream, a result's compact text and its path. */
struct sarif {
    const struct vsl_report *r;
    struct vsl_jstream s;
    struct vsl_buf item, path;
};

/* One finding as a SARIF result of the run being written (at depth 4 of the document), as
 * json_pack() built it before: the same members in the same order. */
static int sarif_result(void *ctx, const struct db_finding_row *w)
{
    struct sarif *x = ctx;
    struct vsl_buf *b = &x->item;
    const char *id = or_empty(w->check);
    char fq[1024], name[1024], num[64];
    int line, rc;

    vsl_buf_reset(b);
    rc = finding_path(x->r, w, &x->path, &line);
    vsl_row_object_name(w, name, sizeof(name));
    /* A part of a host has no moref: it is found under its host. */
    if (w->object_moref)
        snprintf(fq, sizeof(fq), "%s/%s/%s", or_empty(w->vcenter), or_empty(w->object_type),
                 w->object_moref);
    else
        snprintf(fq, sizeof(fq), "%s/host/%s/%s/%s", or_empty(w->vcenter), or_empty(w->host_moref),
                 or_empty(w->object_type), or_empty(w->object_name));
    /* snprintf may have cut a character in two. */
    vsl_utf8_fix(name);
    vsl_utf8_fix(fq);
    if (rc == 0)
        rc = jmember(b, "{", "ruleId", id);
    if (rc == 0) {
        snprintf(num, sizeof(num), ",\"ruleIndex\":%d", rule_index(x->r, id));
        rc = vsl_buf_addstr(b, num);
    }
    if (rc == 0)
        rc = jmember(b, ",", "level", sarif_level(w->sev));
    if (rc == 0)
        rc = jmember(b, ",\"message\":{", "text", or_empty(w->message));
    if (rc == 0)
        rc = vsl_buf_add(b, "}", 1);
    if (rc == 0)
        rc = jmember(b, ",\"locations\":[{\"physicalLocation\":{\"artifactLocation\":{", "uri",
                     x->path.data ? x->path.data : "");
    if (rc == 0) {
        snprintf(num, sizeof(num), ",\"uriBaseId\":\"%%SRCROOT%%\"},\"region\":{\"startLine\":%d}}",
                 line);
        rc = vsl_buf_addstr(b, num);
    }
    if (rc == 0)
        rc = jmember(b, ",\"logicalLocations\":[{", "name", name);
    if (rc == 0)
        rc = jmember(b, ",", "fullyQualifiedName", fq);
    if (rc == 0)
        rc = vsl_buf_addstr(b, ",\"kind\":\"resource\"}]}]");
    if (rc == 0)
        rc = jmember(b, ",\"partialFingerprints\":{", "vslintFingerprint/v1",
                     or_empty(w->fingerprint));
    if (rc == 0)
        rc = jmember(b, "},\"properties\":{", "vcenter", or_empty(w->vcenter));
    if (rc == 0)
        rc = jmember(b, ",", "status", w->status);
    if (rc == 0)
        rc = vsl_buf_addstr(b, ",\"evidence\":");
    if (rc == 0)
        rc = vsl_buf_add(b, w->evidence, w->evidence_len);
    if (rc == 0 && w->unverified) {
        rc = jmember(b, ",\"unverified\":{", "since", w->unverified_since);
        if (rc == 0)
            rc = jmember(b, ",", "reason", w->unverified_reason);
        if (rc == 0)
            rc = vsl_buf_add(b, "}", 1);
    }
    if (rc == 0)
        rc = vsl_buf_add(b, "}", 1);
    if (rc == 0 && !strcmp(w->status, "waived")) {
        char just[1024];
        snprintf(just, sizeof(just), "%s (until %s)", or_empty(w->waiver_reason),
                 or_empty(w->waiver_expires));
        /* A long reason cut in the middle of a character would make the report invalid, and
         * the waived finding reach code scanning as an open alert. */
        vsl_utf8_fix(just);
        rc = jmember(b, ",\"suppressions\":[{\"kind\":\"external\",", "justification", just);
        if (rc == 0)
            rc = vsl_buf_addstr(b, "}]");
    }
    if (rc == 0)
        rc = vsl_buf_add(b, "}", 1);
    if (rc < 0) {
        /* A result left out is, to code scanning, a problem fixed: its alert would close. */
        log_warnx("SARIF: the %s finding %s cannot be written", id, or_empty(w->fingerprint));
        return x->s.werr = rc;
    }
    return vsl_jstream_item(&x->s, b->data, b->len, 4);
}

/* Appends the compact text of the members of the object o (without its braces) at depth. */
static int put_members(struct vsl_buf *out, const json_t *o, int depth)
{
    char *text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    size_t n = text ? strlen(text) : 0;
    int r = n >= 2 ? vsl_json_indented(out, text + 1, n - 2, depth) : -ENOMEM;

    free(text);
    return r;
}

/* One SARIF run, at depth 2: the tool with every rule, the results of source name (NULL: of
 * no vCenter), and the run's category, so that code scanning keeps each vCenter's alerts
 * apart: an upload of one vCenter's run closes only that vCenter's alerts. Its results are
 * read as they are written. */
static int sarif_run(struct sarif *x, const char *name, int success, const json_t *notes)
{
    const struct vsl_report *r = x->r;
    struct vsl_buf *out = &x->s.out;
    char category[512];
    json_t *rules = sarif_rules(r), *head = NULL, *tail = NULL;
    int rc = rules ? 0 : -EINVAL;

    snprintf(category, sizeof(category), "vslint/%s/", name ? name : "other");
    if (rc == 0) {
        head = json_pack("{s:{s:{s:s,s:s,s:O}},s:{s:s}}", "tool", "driver", "name", "vslint",
                         "version", VSL_VERSION, "rules", rules, "automationDetails", "id",
                         category);
        tail = json_pack("{s:[{s:b}],s:s}", "invocations", "executionSuccessful", 0,
                         "columnKind", "unicodeCodePoints");
        if (!head || !tail)
            rc = -ENOMEM;
    }
    if (rc == 0 && json_array_size(notes))
        json_object_set(json_array_get(json_object_get(tail, "invocations"), 0),
                        "toolExecutionNotifications", (json_t *)notes);
    if (rc == 0)
        rc = vsl_buf_add(out, "{", 1);
    if (rc == 0)
        rc = vsl_json_newline(out, 3);
    if (rc == 0)
        rc = put_members(out, head, 3);
    if (rc == 0)
        rc = vsl_buf_add(out, ",", 1);
    if (rc == 0)
        rc = vsl_json_newline(out, 3);
    if (rc == 0)
        rc = vsl_buf_addstr(out, "\"results\": [");
    x->s.items = 0; /* the results of this run */
    if (rc == 0 && name) {
        const struct db_findings_filter flt = {.vcenter = name};
        rc = vsl_report_walk(r, &flt, sarif_result, x);
    }
    /* A run is successful when the run had no error and every read of its report so far
     * succeeded (a read that fails after it cannot take back what was written). */
    if (rc == 0)
        rc = json_object_set_new(json_array_get(json_object_get(tail, "invocations"), 0),
                                 "executionSuccessful",
                                 json_boolean(success && !(r->seen && r->seen->unread)))
                 ? -ENOMEM
                 : 0;
    if (rc == 0 && x->s.items)
        rc = vsl_json_newline(out, 3);
    if (rc == 0)
        rc = vsl_buf_add(out, "],", 2);
    if (rc == 0)
        rc = vsl_json_newline(out, 3);
    if (rc == 0)
        rc = put_members(out, tail, 3);
    if (rc == 0)
        rc = vsl_json_newline(out, 2);
    if (rc == 0)
        rc = vsl_buf_add(out, "}", 1);
    json_decref(rules);
    json_decref(head);
    json_decref(tail);
    return rc;
}

/* Each site rule that failed, as a tool execution notification of a run's invocation: level
 * error, the rule's id as its descriptor, FILE:LINE as its location. A new reference. */
static json_t *sarif_notifications(const struct vsl_report *r)
{
    json_t *list = json_array(), *e;
    size_t i;

    json_array_foreach(r->rule_errors, i, e) {
        json_int_t line = json_integer_value(json_object_get(e, "line"));
        json_t *n = json_pack("{s:s,s:{s:s},s:[{s:{s:{s:s},s:{s:I}}}]}", "level", "error",
                              "message", "text", str(e, "error"), "locations",
                              "physicalLocation", "artifactLocation", "uri", str(e, "file"),
                              "region", "startLine", line > 0 ? line : (json_int_t)1);
        if (n && json_is_string(json_object_get(e, "id")))
            json_object_set_new(n, "descriptor",
                                json_pack("{s:O}", "id", json_object_get(e, "id")));
        json_array_append_new(list, n);
    }
    return list;
}

int vsl_report_sarif(FILE *f, const struct vsl_report *r)
{
    struct sarif x = {.r = r};
    int success = !(r->errors && *r->errors), rc;
    json_t *notes = sarif_notifications(r);

    vsl_jstream_init(&x.s, f);
    vsl_buf_init(&x.item, (size_t)64 << 20);
    vsl_buf_init(&x.path, MAX_PATH_LEN);
    rc = vsl_buf_addstr(&x.s.out, "{\n  \"$schema\": \"https://json.schemastore.org/sarif-2.1.0"
                                  ".json\",\n  \"version\": \"2.1.0\",\n  \"runs\": [");
    for (size_t i = 0; rc == 0 && i < r->n_sources; i++) {
        rc = vsl_buf_add(&x.s.out, ",", i ? 1 : 0);
        if (rc == 0)
            rc = vsl_json_newline(&x.s.out, 2);
        if (rc == 0)
            rc = sarif_run(&x, r->sources[i].name, success, notes);
    }
    /* Every finding read is of a vCenter the report names: a run of its own only when the
     * configuration names none. */
    if (rc == 0 && !r->n_sources) {
        rc = vsl_json_newline(&x.s.out, 2);
        if (rc == 0)
            rc = sarif_run(&x, NULL, success, notes);
    }
    if (rc == 0)
        rc = vsl_buf_addstr(&x.s.out, "\n  ]\n}\n");
    if (rc == 0)
        rc = vsl_jstream_flush(&x.s, 1);
    json_decref(notes);
    vsl_buf_free(&x.item);
    vsl_buf_free(&x.path);
    vsl_buf_free(&x.s.out);
    return rc;
}

/* ---- GitLab Code Quality ----------------------------------------------------------------- */

/* GitLab's five severities; a warning is "major": it fails vslint's default --fail-on. */
static const char *gitlab_severity(int sev)
{
    return sev == SEV_CRITICAL ? "critical" : sev == SEV_WARNING ? "major" : "info";
}

struct gitlab {
    const struct vsl_report *r;
    struct vsl_jstream s;
    struct vsl_buf item, path;
};

/* One unwaived finding as an issue of the report (at depth 1), as json_pack() built it. */
static int gitlab_issue(void *ctx, const struct db_finding_row *w)
{
    struct gitlab *g = ctx;
    struct vsl_buf *b = &g->item;
    const struct check *ck = rule_of(g->r, or_empty(w->check));
    char num[64];
    int line, rc;

    if (finding_path(g->r, w, &g->path, &line) < 0)
        return 0;
    vsl_buf_reset(b);
    rc = jmember(b, "{\"type\":\"issue\",", "description", or_empty(w->message));
    if (rc == 0)
        rc = jmember(b, ",", "check_name", or_empty(w->check));
    if (rc == 0)
        rc = jmember(b, ",", "fingerprint", or_empty(w->fingerprint));
    if (rc == 0)
        rc = jmember(b, ",", "severity", gitlab_severity(w->sev));
    if (rc == 0)
        rc = jmember(b, ",\"categories\":[\"Bug Risk\"],\"location\":{", "path",
                     g->path.data);
    if (rc == 0) {
        snprintf(num, sizeof(num), ",\"lines\":{\"begin\":%d}}", line);
        rc = vsl_buf_addstr(b, num);
    }
    if (rc == 0)
        rc = jmember(b, ",\"content\":{", "body", ck ? ck->remediation : "");
    if (rc == 0)
        rc = vsl_buf_addstr(b, "}}");
    if (rc < 0) {
        /* Left out, the issue would read as fixed in the merge request. */
        log_warnx("GitLab report: the %s finding %s cannot be written", or_empty(w->check),
                  or_empty(w->fingerprint));
        return g->s.werr = rc;
    }
    return vsl_jstream_item(&g->s, b->data, b->len, 1);
}

/* GitLab Code Quality: an array of issues, the unwaived findings, written as they are read. */
int vsl_report_gitlab(FILE *f, const struct vsl_report *r)
{
    struct gitlab g = {.r = r};
    /* A waived finding is not a problem of this merge request: GitLab has no "suppressed"
     * state, so it is left out of its report (the JSON and SARIF reports keep it). */
    const struct db_findings_filter flt = {.status = "open"};
    int rc;

    vsl_jstream_init(&g.s, f);
    vsl_buf_init(&g.item, (size_t)64 << 20);
    vsl_buf_init(&g.path, MAX_PATH_LEN);
    rc = vsl_buf_add(&g.s.out, "[", 1);
    if (rc == 0)
        rc = vsl_report_walk(r, &flt, gitlab_issue, &g);
    if (rc == 0 && g.s.items)
        rc = vsl_json_newline(&g.s.out, 0);
    if (rc == 0)
        rc = vsl_buf_addstr(&g.s.out, "]\n");
    if (rc == 0)
        rc = vsl_jstream_flush(&g.s, 1);
    vsl_buf_free(&g.item);
    vsl_buf_free(&g.path);
    vsl_buf_free(&g.s.out);
    return rc;
}

/* ---- GitHub Actions workflow annotations -------------------------------------------------- */

/* Writes s as a workflow command's message (props 0) or property value (props 1): "%", CR and
 * LF are percent-encoded so that a name cannot end the command or start another one, and in a
 * property also ":" and "," (which separate properties and the message). */
static void gh_escape(FILE *f, const char *s, int props)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '%' || c == '\r' || c == '\n' || (props && (c == ':' || c == ',')))
            fprintf(f, "%%%02X", c);
        else
            fputc(c, f);
    }
}

static const char *gh_command(int sev)
{
    return sev == SEV_CRITICAL ? "error" : sev == SEV_WARNING ? "warning" : "notice";
}

struct github {
    const struct vsl_report *r;
    FILE *f;
    struct vsl_buf path;
    int n[3];
};

static int github_annotation(void *ctx, const struct db_finding_row *w)
{
    struct github *g = ctx;
    FILE *f = g->f;
    char name[1024], title[1200];
    int line;

    vsl_row_object_name(w, name, sizeof(name));
    snprintf(title, sizeof(title), "vslint %s: %s", or_empty(w->check), name);
    g->n[w->sev]++;
    fprintf(f, "::%s ", gh_command(w->sev));
    /* Only a real file in the repository can carry an annotation on a line. */
    if (g->r->location == VSL_LOC_CONFIG && finding_path(g->r, w, &g->path, &line) == 0) {
        fputs("file=", f);
        gh_escape(f, g->path.data, 1);
        fprintf(f, ",line=%d,", line);
    }
    fputs("title=", f);
    gh_escape(f, title, 1);
    fputs("::", f);
    gh_escape(f, or_empty(w->vcenter), 0);
    fputs(": ", f);
    gh_escape(f, or_empty(w->message), 0);
    fputc('\n', f);
    return ferror(f) ? -EIO : 0;
}

/* GitHub Actions: a workflow command per unwaived finding, written as it is read. */
int vsl_report_github(FILE *f, const struct vsl_report *r)
{
    struct github g = {.r = r, .f = f};
    const struct db_findings_filter flt = {.status = "open"};
    int rc;

    vsl_buf_init(&g.path, MAX_PATH_LEN);
    rc = vsl_report_walk(r, &flt, github_annotation, &g);
    vsl_buf_free(&g.path);
    if (rc < 0)
        return rc;
    fprintf(f, "vslint: %d critical, %d warning, %d info\n", g.n[2], g.n[1], g.n[0]);
    if ((r->errors && *r->errors) || (r->seen && r->seen->unread)) {
        fputs("::error title=vslint run incomplete::", f);
        gh_escape(f, r->errors ? r->errors : "", 0);
        /* A read that failed as the report was written, after the run's errors. */
        if (r->seen && r->seen->unread) {
            gh_escape(f, r->seen->what, 0);
            gh_escape(f, "\n", 0);
        }
        fputc('\n', f);
    }
    return ferror(f) ? -EIO : 0;
}
