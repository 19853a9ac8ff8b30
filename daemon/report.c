/* Output formats of `vslint check`. Rules (check metadata) come from the registry, results
 * from the stored findings; waived findings are shown as waived, never dropped. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "checks/check.h"
#include "daemon/report.h"
#include "util/buf.h"

int vsl_format_parse(const char *s, enum vsl_format *out)
{
    static const char *const names[] = {"text", "json", "junit", "sarif"};
    for (int i = 0; i < 4; i++) {
        if (!strcmp(s, names[i])) {
            *out = (enum vsl_format)i;
            return 0;
        }
    }
    return -EINVAL;
}

static const char *str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

int vsl_finding_severity(const json_t *finding)
{
    enum chk_severity s;
    if (chk_severity_parse(str(finding, "severity"), &s) < 0)
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

static int write_text(FILE *f, const struct vsl_report *r)
{
    size_t i, n = json_array_size(r->findings);
    json_t *fd;
    int by_sev[3] = {0, 0, 0}, waived = 0, news = 0;

    for (int sev = 2; sev >= 0; sev--) {
        json_array_foreach(r->findings, i, fd) {
            if (vsl_finding_severity(fd) != sev || is_waived(fd))
                continue;
            char u[16];
            upper(u, str(fd, "severity"), sizeof(u));
            int is_new = !strcmp(str(fd, "status"), "new");
            fprintf(f, "%-8s  %-22s %s: %s%s\n", u, str(fd, "check"), str(fd, "vcenter"),
                    str(fd, "message"), is_new ? "  [new]" : "");
            by_sev[sev]++;
            news += is_new;
        }
    }
    json_array_foreach(r->findings, i, fd) {
        if (!is_waived(fd))
            continue;
        json_t *w = json_object_get(fd, "waiver");
        fprintf(f, "WAIVED    %-22s %s: %s  (waived until %s: %s)\n", str(fd, "check"),
                str(fd, "vcenter"), str(fd, "message"), str(w, "expires"), str(w, "reason"));
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
    fprintf(f, ".\n");
    json_t *expired = json_object_get(r->summary, "expired_waivers");
    json_array_foreach(expired, i, fd) fprintf(f, "note: %s\n", json_string_value(fd));
    if (r->errors && *r->errors)
        fprintf(f, "The run was incomplete: see the errors on standard error.\n");
    return 0;
}

static int write_json(FILE *f, const struct vsl_report *r)
{
    json_t *doc = json_pack("{s:O,s:O}", "findings", r->findings, "summary", r->summary);
    if (!doc)
        return -ENOMEM;
    int rc = json_dumpf(doc, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    fputc('\n', f);
    json_decref(doc);
    return rc < 0 ? -EIO : 0;
}

static void xml_text(FILE *f, const char *s)
{
    struct vsl_buf b;
    vsl_buf_init(&b, 1 << 20);
    if (vsl_buf_addxml(&b, s) == 0 && b.data)
        fputs(b.data, f);
    vsl_buf_free(&b);
}

/* JUnit: one <testsuite> per check; one <testcase> per finding (a <failure> when at or above
 * --fail-on, <skipped> when waived), or a single passing case for a check with none. */
static int write_junit(FILE *f, const struct vsl_report *r)
{
    size_t i;
    json_t *fd;
    int total = 0, failures = 0, skipped = 0;

    for (size_t c = 0; c < chk_registry_len; c++) {
        int cases = 0;
        json_array_foreach(r->findings, i, fd) {
            if (strcmp(str(fd, "check"), chk_registry[c]->id))
                continue;
            cases++;
            if (is_waived(fd))
                skipped++;
            else if (vsl_finding_severity(fd) >= r->fail_on)
                failures++;
        }
        total += cases ? cases : 1;
    }
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(f, "<testsuites name=\"vslint\" tests=\"%d\" failures=\"%d\" skipped=\"%d\">\n",
            total, failures, skipped);
    for (size_t c = 0; c < chk_registry_len; c++) {
        const struct check *ck = chk_registry[c];
        int cases = 0, fails = 0, skips = 0;
        json_array_foreach(r->findings, i, fd) {
            if (strcmp(str(fd, "check"), ck->id))
                continue;
            cases++;
            if (is_waived(fd))
                skips++;
            else if (vsl_finding_severity(fd) >= r->fail_on)
                fails++;
        }
        fprintf(f, "  <testsuite name=\"%s\" tests=\"%d\" failures=\"%d\" skipped=\"%d\">\n",
                ck->id, cases ? cases : 1, fails, skips);
        if (!cases)
            fprintf(f, "    <testcase classname=\"%s\" name=\"no findings\"/>\n", ck->id);
        json_array_foreach(r->findings, i, fd) {
            if (strcmp(str(fd, "check"), ck->id))
                continue;
            json_t *obj = json_object_get(fd, "object");
            fprintf(f, "    <testcase classname=\"%s\" name=\"", ck->id);
            xml_text(f, str(fd, "vcenter"));
            fputc('/', f);
            xml_text(f, str(obj, "name"));
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
            fprintf(f, "    </testcase>\n");
        }
        fprintf(f, "  </testsuite>\n");
    }
    fprintf(f, "</testsuites>\n");
    return 0;
}

static const char *sarif_level(int sev)
{
    return sev == CHK_CRITICAL ? "error" : sev == CHK_WARNING ? "warning" : "note";
}

static int write_sarif(FILE *f, const struct vsl_report *r)
{
    json_t *rules = json_array(), *results = json_array();
    size_t i;
    json_t *fd;

    for (size_t c = 0; c < chk_registry_len; c++) {
        const struct check *ck = chk_registry[c];
        json_array_append_new(
            rules, json_pack("{s:s,s:s,s:{s:s},s:{s:s},s:{s:s},s:{s:s},s:{s:s}}", "id", ck->id,
                             "name", ck->id, "shortDescription", "text", ck->title,
                             "fullDescription", "text", ck->rationale, "help", "text",
                             ck->remediation, "defaultConfiguration", "level",
                             sarif_level(ck->severity), "properties", "reference", ck->reference));
    }
    json_array_foreach(r->findings, i, fd) {
        const char *id = str(fd, "check");
        int idx = -1;
        for (size_t c = 0; c < chk_registry_len; c++)
            if (!strcmp(chk_registry[c]->id, id))
                idx = (int)c;
        json_t *obj = json_object_get(fd, "object");
        char fq[1024];
        snprintf(fq, sizeof(fq), "%s/%s/%s", str(fd, "vcenter"), str(obj, "type"),
                 str(obj, "moref"));
        json_t *res = json_pack(
            "{s:s,s:i,s:s,s:{s:s},s:[{s:[{s:s,s:s,s:s}]}],s:{s:s},s:{s:s,s:s,s:O*}}", "ruleId",
            id, "ruleIndex", idx, "level", sarif_level(vsl_finding_severity(fd)), "message",
            "text", str(fd, "message"), "locations", "logicalLocations", "name",
            str(obj, "name"), "fullyQualifiedName", fq, "kind", "resource",
            "partialFingerprints", "vslintFingerprint/v1", str(fd, "fingerprint"), "properties",
            "vcenter", str(fd, "vcenter"), "status", str(fd, "status"), "evidence",
            json_object_get(fd, "evidence"));
        if (!res)
            continue;
        if (is_waived(fd)) {
            json_t *w = json_object_get(fd, "waiver");
            char just[1024];
            snprintf(just, sizeof(just), "%s (until %s)", str(w, "reason"), str(w, "expires"));
            json_object_set_new(res, "suppressions",
                                json_pack("[{s:s,s:s}]", "kind", "external", "justification",
                                          just));
        }
        json_array_append_new(results, res);
    }
    json_t *doc = json_pack(
        "{s:s,s:s,s:[{s:{s:{s:s,s:s,s:o}},s:o,s:[{s:b}]}]}", "$schema",
        "https://json.schemastore.org/sarif-2.1.0.json", "version", "2.1.0", "runs", "tool",
        "driver", "name", "vslint", "version", "0.1.0", "rules", rules, "results", results,
        "invocations",
        "executionSuccessful", r->errors && *r->errors ? 0 : 1);
    if (!doc)
        return -ENOMEM;
    int rc = json_dumpf(doc, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    fputc('\n', f);
    json_decref(doc);
    return rc < 0 ? -EIO : 0;
}

int vsl_report_write(FILE *f, enum vsl_format fmt, const struct vsl_report *r)
{
    switch (fmt) {
    case VSL_FMT_TEXT: return write_text(f, r);
    case VSL_FMT_JSON: return write_json(f, r);
    case VSL_FMT_JUNIT: return write_junit(f, r);
    case VSL_FMT_SARIF: return write_sarif(f, r);
    }
    return -EINVAL;
}
