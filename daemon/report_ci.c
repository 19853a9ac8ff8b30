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
#include "util/buf.h"
#include "util/log.h"

#define MAX_PATH_LEN 4096

static const char *str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

static int is_waived(const json_t *f)
{
    return !strcmp(str(f, "status"), "waived");
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
static int finding_path(const struct vsl_report *r, const json_t *fd, struct vsl_buf *b, int *line)
{
    const json_t *obj = json_object_get(fd, "object"), *host = json_object_get(fd, "host");
    const char *vc = str(fd, "vcenter");
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
    if (rc == 0 && json_is_object(host) && !json_is_string(json_object_get(obj, "moref"))) {
        rc = vsl_buf_addstr(b, "/host/");
        if (rc == 0)
            rc = vsl_buf_addurl(b, str(host, "name"));
    }
    if (rc == 0)
        rc = vsl_buf_addstr(b, "/");
    if (rc == 0)
        rc = vsl_buf_addurl(b, str(obj, "type"));
    if (rc == 0)
        rc = vsl_buf_addstr(b, "/");
    if (rc == 0)
        rc = vsl_buf_addurl(b, str(obj, "name"));
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

static json_t *sarif_result(const struct vsl_report *r, const json_t *fd, struct vsl_buf *path)
{
    const char *id = str(fd, "check");
    json_t *obj = json_object_get(fd, "object"), *host = json_object_get(fd, "host");
    char fq[1024], name[1024];
    int line;

    if (finding_path(r, fd, path, &line) < 0)
        return NULL;
    vsl_finding_object_name(fd, name, sizeof(name));
    /* A part of a host has no moref: it is found under its host. */
    if (json_is_string(json_object_get(obj, "moref")))
        snprintf(fq, sizeof(fq), "%s/%s/%s", str(fd, "vcenter"), str(obj, "type"),
                 str(obj, "moref"));
    else
        snprintf(fq, sizeof(fq), "%s/host/%s/%s/%s", str(fd, "vcenter"), str(host, "moref"),
                 str(obj, "type"), str(obj, "name"));
    json_t *res = json_pack(
        "{s:s,s:i,s:s,s:{s:s},s:[{s:{s:{s:s,s:s},s:{s:i}},s:[{s:s,s:s,s:s}]}],s:{s:s},"
        "s:{s:s,s:s,s:O*}}",
        "ruleId", id, "ruleIndex", rule_index(r, id), "level",
        sarif_level(vsl_finding_severity(fd)), "message", "text", str(fd, "message"), "locations",
        "physicalLocation", "artifactLocation", "uri", path->data, "uriBaseId", "%SRCROOT%",
        "region", "startLine", line, "logicalLocations", "name", name, "fullyQualifiedName", fq,
        "kind", "resource", "partialFingerprints", "vslintFingerprint/v1", str(fd, "fingerprint"),
        "properties", "vcenter", str(fd, "vcenter"), "status", str(fd, "status"), "evidence",
        json_object_get(fd, "evidence"));
    if (!res)
        return NULL;
    json_t *u = json_object_get(fd, "unverified");
    if (json_is_object(u))
        json_object_set(json_object_get(res, "properties"), "unverified", u);
    if (is_waived(fd)) {
        json_t *w = json_object_get(fd, "waiver");
        char just[1024];
        snprintf(just, sizeof(just), "%s (until %s)", str(w, "reason"), str(w, "expires"));
        /* A long reason cut in the middle of a character would make the pack fail, and the
         * waived finding reach code scanning as an open alert. */
        vsl_utf8_fix(just);
        json_object_set_new(res, "suppressions",
                            json_pack("[{s:s,s:s}]", "kind", "external", "justification", just));
    }
    return res;
}

/* One SARIF run: the tool with every rule, the results of source name (NULL: of every finding
 * whose vCenter no source names), and the run's category, so that code scanning keeps each
 * vCenter's alerts apart: an upload of one vCenter's run closes only that vCenter's alerts. */
static json_t *sarif_run(const struct vsl_report *r, const char *name, int success)
{
    json_t *results = json_array();
    struct vsl_buf path;
    size_t i;
    json_t *fd;
    char category[512];

    vsl_buf_init(&path, MAX_PATH_LEN);
    json_array_foreach(r->findings, i, fd) {
        const char *vc = str(fd, "vcenter");
        if (name ? strcmp(vc, name) != 0 : source_of(r, vc) != NULL)
            continue;
        /* A result left out is, to code scanning, a problem fixed: its alert would close. */
        json_t *res = sarif_result(r, fd, &path);
        if (json_array_append_new(results, res) < 0) {
            log_warnx("SARIF: the %s finding %s cannot be written", str(fd, "check"),
                      str(fd, "fingerprint"));
            json_decref(results);
            vsl_buf_free(&path);
            return NULL;
        }
    }
    vsl_buf_free(&path);
    json_t *rules = sarif_rules(r);
    if (!rules) {
        json_decref(results);
        return NULL;
    }
    snprintf(category, sizeof(category), "vslint/%s/", name ? name : "other");
    return json_pack("{s:{s:{s:s,s:s,s:o}},s:{s:s},s:o,s:[{s:b}],s:s}", "tool", "driver",
                     "name", "vslint", "version", VSL_VERSION, "rules", rules,
                     "automationDetails", "id", category, "results", results, "invocations",
                     "executionSuccessful", success, "columnKind", "unicodeCodePoints");
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
    json_t *runs = json_array();
    int success = !(r->errors && *r->errors), strays = 0;
    size_t i;
    json_t *fd;

    int bad = 0;
    for (i = 0; i < r->n_sources; i++)
        bad |= json_array_append_new(runs, sarif_run(r, r->sources[i].name, success)) < 0;
    json_array_foreach(r->findings, i, fd) strays += source_of(r, str(fd, "vcenter")) == NULL;
    if (strays || !r->n_sources)
        bad |= json_array_append_new(runs, sarif_run(r, NULL, success)) < 0;
    if (bad) {
        json_decref(runs);
        return -EINVAL;
    }
    json_t *notes = sarif_notifications(r);
    json_array_foreach(runs, i, fd) {
        if (json_array_size(notes))
            json_object_set(json_array_get(json_object_get(fd, "invocations"), 0),
                            "toolExecutionNotifications", notes);
    }
    json_decref(notes);
    json_t *doc = json_pack("{s:s,s:s,s:o}", "$schema",
                            "https://json.schemastore.org/sarif-2.1.0.json", "version", "2.1.0",
                            "runs", runs);
    int rc = vsl_json_print(f, doc);

    json_decref(doc);
    return rc;
}

/* ---- GitLab Code Quality ----------------------------------------------------------------- */

/* GitLab's five severities; a warning is "major": it fails vslint's default --fail-on. */
static const char *gitlab_severity(int sev)
{
    return sev == SEV_CRITICAL ? "critical" : sev == SEV_WARNING ? "major" : "info";
}

int vsl_report_gitlab(FILE *f, const struct vsl_report *r)
{
    json_t *issues = json_array();
    struct vsl_buf path;
    size_t i;
    json_t *fd;
    int line;

    vsl_buf_init(&path, MAX_PATH_LEN);
    json_array_foreach(r->findings, i, fd) {
        /* A waived finding is not a problem of this merge request: GitLab has no "suppressed"
         * state, so it is left out of its report (the JSON and SARIF reports keep it). */
        if (is_waived(fd) || finding_path(r, fd, &path, &line) < 0)
            continue;
        const struct check *ck = rule_of(r, str(fd, "check"));
        json_t *issue = json_pack(
            "{s:s,s:s,s:s,s:s,s:s,s:[s],s:{s:s,s:{s:i}},s:{s:s}}", "type", "issue",
            "description", str(fd, "message"), "check_name", str(fd, "check"), "fingerprint",
            str(fd, "fingerprint"), "severity", gitlab_severity(vsl_finding_severity(fd)),
            "categories", "Bug Risk", "location", "path", path.data, "lines", "begin", line,
            "content", "body", ck ? ck->remediation : "");
        /* Left out, the issue would read as fixed in the merge request. */
        if (json_array_append_new(issues, issue) < 0) {
            log_warnx("GitLab report: the %s finding %s cannot be written", str(fd, "check"),
                      str(fd, "fingerprint"));
            json_decref(issues);
            vsl_buf_free(&path);
            return -EINVAL;
        }
    }
    vsl_buf_free(&path);
    int rc = vsl_json_print(f, issues);

    json_decref(issues);
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

int vsl_report_github(FILE *f, const struct vsl_report *r)
{
    struct vsl_buf path;
    size_t i;
    json_t *fd;
    int line, n[3] = {0, 0, 0};

    vsl_buf_init(&path, MAX_PATH_LEN);
    json_array_foreach(r->findings, i, fd) {
        if (is_waived(fd))
            continue;
        int sev = vsl_finding_severity(fd);
        char name[1024], title[1200];
        vsl_finding_object_name(fd, name, sizeof(name));
        snprintf(title, sizeof(title), "vslint %s: %s", str(fd, "check"), name);
        n[sev]++;
        fprintf(f, "::%s ", gh_command(sev));
        /* Only a real file in the repository can carry an annotation on a line. */
        if (r->location == VSL_LOC_CONFIG && finding_path(r, fd, &path, &line) == 0) {
            fputs("file=", f);
            gh_escape(f, path.data, 1);
            fprintf(f, ",line=%d,", line);
        }
        fputs("title=", f);
        gh_escape(f, title, 1);
        fputs("::", f);
        gh_escape(f, str(fd, "vcenter"), 0);
        fputs(": ", f);
        gh_escape(f, str(fd, "message"), 0);
        fputc('\n', f);
    }
    vsl_buf_free(&path);
    fprintf(f, "vslint: %d critical, %d warning, %d info\n", n[2], n[1], n[0]);
    if (r->errors && *r->errors) {
        fputs("::error title=vslint run incomplete::", f);
        gh_escape(f, r->errors, 0);
        fputc('\n', f);
    }
    return 0;
}
