/* The small handlers: /healthz, /readyz, the findings list and one finding, the check
 * catalogue and POST /api/v1/polls. Each validates its parameters, asks db/ or the daemon,
 * and answers through the respond helpers. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/api-private.h"
#include "checks/check.h"
#include "checks/plan.h"
#include "db/findings.h"
#include "util/err.h"
#include "util/isotime.h"

enum MHD_Result api_h_healthz(struct api_req *r)
{
    return api_respond_json(r, MHD_HTTP_OK, json_pack("{s:s}", "status", "ok"));
}

/* Ready once every configured vCenter has finished its first poll, whatever its outcome:
 * until then the findings would be incomplete, not wrong. */
enum MHD_Result api_h_readyz(struct api_req *r)
{
    struct api_vcenter_status *st = NULL;
    size_t n = 0;
    char waiting[1024] = "";
    int rc = api_status(r, &st, &n);

    if (rc < 0)
        return api_db_error(r, "reading the pollers' state", rc);
    json_t *vcs = json_array();
    /* Ready is "serving what is stored"; what keeps it from being fresh is listed. */
    json_t *problems = json_array();
    char why[512];
    for (size_t i = 0; i < n; i++) {
        size_t used = strlen(waiting);
        if (!st[i].polled_once)
            snprintf(waiting + used, sizeof(waiting) - used, "%s%s", used ? ", " : "",
                     st[i].name);
        json_array_append_new(vcs, api_vcenter_mode_json(&st[i],
                                                         json_pack("{s:s}", "name", st[i].name)));
        if (api_stalled(&st[i]))
            json_array_append_new(
                problems, json_sprintf("vcenter %s: stalled: no answer for %lld s (timeout %d s)",
                                       st[i].name, (long long)(st[i].quiet_ms / 1000),
                                       st[i].timeout_s));
        else if (st[i].stale && st[i].error[0])
            json_array_append_new(problems,
                                  json_sprintf("vcenter %s: stale: %s", st[i].name, st[i].error));
    }
    free(st);
    json_t *site = NULL, *rule_errors = NULL, *e;
    size_t k;
    if (api_site_rules(r, &site, &rule_errors) == 0) {
        /* A broken site rule does not keep the daemon from being ready: it is a problem. */
        json_array_foreach(rule_errors, k, e)
            json_array_append_new(
                problems, json_sprintf("site rule %s:%lld: %s",
                                       json_string_value(json_object_get(e, "file")),
                                       (long long)json_integer_value(json_object_get(e, "line")),
                                       json_string_value(json_object_get(e, "error"))));
    }
    json_decref(site);
    json_decref(rule_errors);
    if (!api_db_writable(r, why, sizeof(why)))
        json_array_append_new(problems,
                              json_sprintf("database: %s; serving the last stored snapshot "
                                           "read-only",
                                           why));
    if (waiting[0]) {
        json_decref(vcs);
        json_decref(problems);
        return api_respond_error(r, MHD_HTTP_SERVICE_UNAVAILABLE, "not_ready",
                                 "waiting for the first poll of: %s", waiting);
    }
    return api_respond_json(r, MHD_HTTP_OK,
                            json_pack("{s:s,s:o,s:o}", "status", "ready", "vcenters", vcs,
                                      "problems", problems));
}

/* Whether id is one of the daemon's site rules (/api/v1/checks lists them). */
static int site_rule(struct api_req *r, const char *id)
{
    json_t *site = NULL, *errors = NULL, *c;
    size_t i;
    int found = 0;

    if (api_site_rules(r, &site, &errors) == 0)
        json_array_foreach(site, i, c)
            found |= !strcmp(json_string_value(json_object_get(c, "id")), id);
    json_decref(site);
    json_decref(errors);
    return found;
}

static int check_enum(struct api_req *r, const char *name, const char *v,
                      const char *const *allowed, const char *list)
{
    if (!v)
        return 0;
    for (size_t i = 0; allowed[i]; i++)
        if (!strcmp(v, allowed[i]))
            return 0;
    return api_bad(r, name, "'%s' is not one of %s", v, list);
}

/* since=: an ISO-8601 UTC time as the API writes them ("2026-12-01T07:30:00Z", seconds and
 * a fraction optional) or a date ("2026-12-01", its midnight UTC), into unix ms. Absolute on
 * purpose: an answer is cached until the data changes, and "24 h ago" would drift from it.
 * -1 for anything else. */
static int parse_since(const char *s, int64_t *ms)
{
    int y, mo, d, h = 0, mi = 0, sec = 0, n = 0;
    struct tm tm, back;
    const char *p;

    /* Digits where digits go: sscanf's %d would take a sign or blanks (2026-12-01T-1:30Z). */
    for (size_t i = 0; s[i]; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || strchr("-T:.Z", s[i])) ||
            (s[i] == '-' && i != 4 && i != 7))
            return -1;
    if (sscanf(s, "%4d-%2d-%2d%n", &y, &mo, &d, &n) != 3 || n != 10)
        return -1;
    p = s + n;
    if (*p == 'T') {
        if (sscanf(p, "T%2d:%2d%n", &h, &mi, &n) != 2 || n != 6)
            return -1;
        p += n;
        if (*p == ':' && (sscanf(p, ":%2d%n", &sec, &n) != 1 || n != 3))
            return -1;
        if (*p == ':')
            p += n;
        if (*p == '.')
            for (p++; *p >= '0' && *p <= '9'; p++)
                ;
        if (*p++ != 'Z')
            return -1;
    }
    if (*p || y < 1970 || mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || sec > 59)
        return -1;
    tm = (struct tm){.tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d, .tm_hour = h,
                     .tm_min = mi, .tm_sec = sec};
    time_t t = timegm(&tm);
    if (t == (time_t)-1 || !gmtime_r(&t, &back) || back.tm_mday != d) /* 2026-02-30 */
        return -1;
    *ms = (int64_t)t * 1000;
    return 0;
}

#define MAX_PAGE_TEXT (256 << 20) /* 1000 findings with the largest evidence stay far below */

/* fields= as DB_FF_* bits (0: every member). A name no finding has is refused only when the
 * page has items, as api_page() does for the inventory: unknown gets the first one ("": none). */
static int finding_fields(struct api_req *r, unsigned *mask, char unknown[48])
{
    char names[API_MAX_FIELDS][48];
    size_t n, i, k;

    *mask = 0;
    unknown[0] = '\0';
    if (api_fields(r, names, &n) < 0)
        return -1;
    for (i = 0; i < n; i++) {
        for (k = 0; db_finding_fields[k] && strcmp(db_finding_fields[k], names[i]); k++)
            ;
        if (db_finding_fields[k])
            *mask |= 1u << k;
        else if (!unknown[0])
            memcpy(unknown, names[i], 48);
    }
    return 0;
}

/* The page is written as text straight from the rows (db_findings_page_text()), and kept
 * until the data changes: most requests are answered from the cache. */
static enum MHD_Result findings_page(struct api_req *r, const struct db_findings_filter *f)
{
    struct db *db = api_db(r);
    struct vsl_buf b;
    enum MHD_Result ret;
    char unknown[48], *next = NULL, *url = NULL;
    unsigned fields;
    int64_t total;
    uint64_t gen;
    int rc, n;

    if (!db)
        return api_db_unavailable(r);
    gen = api_generation(r);
    if (api_respond_cached(r, gen, &ret))
        return ret;
    if (finding_fields(r, &fields, unknown) < 0)
        return api_fail(r);
    vsl_buf_init(&b, MAX_PAGE_TEXT);
    rc = vsl_buf_addstr(&b, "{\"findings\":");
    if (rc == 0)
        rc = db_findings_page_text(db, f, fields, &b, &n, &total, &next);
    if (rc == -EINVAL) {
        vsl_buf_free(&b);
        return api_bad(r, "cursor", "not a cursor this server issued"), api_fail(r);
    }
    if (rc < 0) {
        vsl_buf_free(&b);
        return api_db_error(r, "querying findings", rc);
    }
    if (unknown[0] && n > 0) {
        free(next);
        vsl_buf_free(&b);
        return api_bad(r, "fields", "no field '%s'", unknown), api_fail(r);
    }
    if (next && !(url = api_next_url(r, next)))
        rc = -ENOMEM;
    free(next);
    if (rc == 0)
        rc = vsl_buf_printf(&b, ",\"total\":%lld", (long long)total);
    if (rc == 0 && url)
        rc = vsl_buf_addstr(&b, ",\"next\":");
    if (rc == 0 && url)
        rc = vsl_buf_addjson(&b, url, strlen(url));
    if (rc == 0)
        rc = vsl_buf_addstr(&b, "}");
    free(url);
    if (rc < 0) {
        vsl_buf_free(&b);
        return api_db_error(r, "querying findings", rc);
    }
    size_t len = b.len;
    return api_respond_json_text(r, gen, vsl_buf_take(&b), len);
}

enum MHD_Result api_h_findings(struct api_req *r)
{
    static const char *const names[] = {"severity", "check",      "vcenter",    "object",
                                        "host",     "status",     "unverified", "resolution",
                                        "limit",    "cursor",     "fields",     "since",
                                        "sort",     NULL};
    static const char *const severities[] = {"info", "warning", "critical", NULL};
    static const char *const statuses[] = {"new", "open", "waived", "resolved", NULL};
    static const char *const booleans[] = {"true", "false", NULL};
    static const char *const resolutions[] = {"fixed", "disabled", NULL};
    static const char *const sorts[] = {"severity",  "-severity", "first_seen", "-first_seen",
                                        "last_seen", "-last_seen", "check",      "-check",
                                        "object",    "-object",    NULL};
    const char *unverified, *since = api_arg(r, "since");
    struct db_findings_filter f = {0};

    f.severity = api_arg(r, "severity");
    f.check = api_arg(r, "check");
    f.vcenter = api_arg(r, "vcenter");
    f.object = api_arg(r, "object");
    f.host = api_arg(r, "host");
    f.status = api_arg(r, "status");
    f.resolution = api_arg(r, "resolution");
    f.cursor = api_arg(r, "cursor");
    f.sort = api_arg(r, "sort");
    unverified = api_arg(r, "unverified");
    if (api_args_allowed(r, names) < 0 ||
        check_enum(r, "severity", f.severity, severities, "info, warning, critical") < 0 ||
        check_enum(r, "status", f.status, statuses, "new, open, waived, resolved") < 0 ||
        check_enum(r, "unverified", unverified, booleans, "true, false") < 0 ||
        check_enum(r, "resolution", f.resolution, resolutions, "fixed, disabled") < 0 ||
        check_enum(r, "sort", f.sort, sorts,
                   "severity, first_seen, last_seen, check, object (a leading - reverses)") < 0 ||
        api_arg_limit(r, &f.limit) < 0)
        return api_fail(r);
    if (since && (parse_since(since, &f.since_ms) < 0 || f.since_ms == 0))
        return api_bad(r, "since",
                       "'%s' is not a UTC time such as 2026-12-01T07:30:00Z or a date such as "
                       "2026-12-01",
                       since),
               api_fail(r);
    if (unverified)
        f.unverified = strcmp(unverified, "true") == 0 ? 1 : -1;
    if (f.check && !chk_find(f.check) && !site_rule(r, f.check))
        return api_bad(r, "check", "no check '%s' (see /api/v1/checks)", f.check), api_fail(r);
    return findings_page(r, &f);
}

enum MHD_Result api_h_finding(struct api_req *r)
{
    json_t *f = NULL;
    struct db *db;
    int rc;

    if (api_args_allowed(r, NULL) < 0)
        return api_fail(r);
    if (strlen(r->path_arg) > 64)
        return api_respond_error(r, MHD_HTTP_NOT_FOUND, "not_found", "no such finding");
    if (!(db = api_db(r)))
        return api_db_unavailable(r);
    rc = db_finding_get(db, r->path_arg, &f);
    if (rc == -VSL_ENOTFOUND)
        return api_respond_error(r, MHD_HTTP_NOT_FOUND, "not_found", "no finding %s",
                                 r->path_arg);
    if (rc < 0)
        return api_db_error(r, "reading a finding", rc);
    return api_respond_json_etag(r, f);
}

enum MHD_Result api_h_checks(struct api_req *r)
{
    json_t *doc, *site = NULL, *errors = NULL;

    if (api_args_allowed(r, NULL) < 0)
        return api_fail(r);
    doc = chk_catalogue_json();
    /* The site rules follow the catalogue, marked "source": "site" with their file. */
    if (!doc || api_site_rules(r, &site, &errors) < 0 ||
        json_array_extend(json_object_get(doc, "checks"), site) < 0) {
        json_decref(doc);
        doc = NULL;
    }
    json_decref(site);
    json_decref(errors);
    return api_respond_json_etag(r, doc);
}

/* Poll now: wakes the pollers and answers at once; the polls run in the background. */
enum MHD_Result api_h_polls(struct api_req *r)
{
    static const char *const names[] = {"vcenter", NULL};
    const char *vc = api_arg(r, "vcenter");
    struct api_vcenter_status *st = NULL;
    size_t n = 0;
    json_t *queued;
    int rc;

    if (api_args_allowed(r, names) < 0)
        return api_fail(r);
    if (!r->srv->hooks.poll_now)
        return api_respond_error(r, MHD_HTTP_SERVICE_UNAVAILABLE, "unavailable",
                                 "this server does not poll");
    rc = r->srv->hooks.poll_now(r->srv->hooks.ctx, vc);
    if (rc == -VSL_ENOTFOUND)
        return api_bad(r, "vcenter", "no [vcenter %s] is configured", vc), api_fail(r);
    if (rc < 0)
        return api_db_error(r, "waking the pollers", rc);
    queued = json_array();
    if (vc) {
        json_array_append_new(queued, json_string(vc));
    } else if (api_status(r, &st, &n) == 0) {
        for (size_t i = 0; i < n; i++)
            json_array_append_new(queued, json_string(st[i].name));
    }
    free(st);
    return api_respond_json(r, MHD_HTTP_ACCEPTED, json_pack("{s:o}", "queued", queued));
}

/* The remediation plan of the stored findings as a script (text/plain): the same text as
 * `vslint plan --offline`. */
enum MHD_Result api_h_plan(struct api_req *r)
{
    static const char *const names[] = {"format", "check", "vcenter", "host", NULL};
    const char *format = api_arg(r, "format"), *check = api_arg(r, "check");
    const char *vcenter = api_arg(r, "vcenter"), *host = api_arg(r, "host");
    char when[32], scope[API_MAX_ARG * 3 + 64];
    struct chk_plan_opts o = {.generated_at = when, .scope = scope};
    struct db_findings_filter f = {.vcenter = vcenter, .check = check, .host = host};
    json_t *findings = NULL;
    char *text = NULL, *next = NULL;
    int64_t total = 0;
    size_t len = 0;
    struct db *db;
    int rc;

    if (api_args_allowed(r, names) < 0)
        return api_fail(r);
    if (chk_plan_format_parse(format ? format : "esxcli", &o.format) < 0)
        return api_bad(r, "format", "'%s' is not one of esxcli, powercli", format), api_fail(r);
    if (check && !chk_find(check))
        return api_bad(r, "check", "no check '%s' (see /api/v1/checks)", check), api_fail(r);
    if (!(db = api_db(r)))
        return api_db_error(r, "opening the database", -VSL_EDB);
    if ((rc = db_findings_query(db, &f, &findings, &total, &next)) < 0)
        return api_db_error(r, "querying findings", rc);
    free(next);
    vsl_iso_time((int64_t)time(NULL) * 1000, when, sizeof(when));
    snprintf(scope, sizeof(scope), "%s%s%s%s%s%s", vcenter ? "vCenter " : "every vCenter",
             vcenter ? vcenter : "", check ? ", check " : "", check ? check : "",
             host ? ", hosts named like " : "", host ? host : "");
    rc = chk_plan(findings, &o, &text, &len);
    json_decref(findings);
    if (rc < 0)
        return api_db_error(r, "writing the plan", rc);
    return api_respond_text(r, MHD_HTTP_OK, "text/plain; charset=utf-8", text, len);
}
