/* `vslint check` (poll, run the checks, record history, print findings, exit by --fail-on)
 * and `vslint checks` (the catalogue with rationale, reference, the seeds' quotes, what vslint
 * adds on its own, remediation and parameters). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "checks/engine.h"
#include "daemon/cli.h"
#include "daemon/config.h"
#include "daemon/evaluate.h"
#include "daemon/poll.h"
#include "daemon/report.h"
#include "daemon/site.h"
#include "db/findings.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/log.h"

static int list_checks(const struct vsl_args *a, const struct rules_set *site);

static int fail_on_parse(const char *s, int *out)
{
    enum vsl_severity sev;
    if (!strcmp(s, "never")) {
        *out = 3;
        return 0;
    }
    if (vsl_severity_parse(s, &sev) < 0)
        return -EINVAL;
    *out = (int)sev;
    return 0;
}

/* The configuration file's path as the repository names it, for --sarif-location config: a
 * relative path as given (without "./"), an absolute one relative to the current directory
 * (a CI job runs at the repository's top). NULL, said, when it is outside. */
static const char *repo_path(const char *path, char *buf, size_t size)
{
    if (path[0] != '/') {
        while (!strncmp(path, "./", 2))
            path += 2;
        /* A path that climbs out (../etc/vslint.conf) is no file of the repository. */
        if (!strncmp(path, "../", 3) || strstr(path, "/../")) {
            log_warnx("--sarif-location config: %s leaves the current directory; run vslint "
                      "from the repository's top with the file's path inside it",
                      path);
            return NULL;
        }
        return path;
    }
    if (!getcwd(buf, size))
        return NULL;
    size_t n = strlen(buf);
    if (n > 1 && !strncmp(path, buf, n) && path[n] == '/')
        return path + n + 1;
    if (n == 1) /* the current directory is / */
        return path + 1;
    log_warnx("--sarif-location config: %s is not under the current directory %s; run vslint "
              "from the repository's top, or name the file by a relative path",
              path, buf);
    return NULL;
}

int cmd_check(const struct vsl_args *a)
{
    const char *only = a->vcenter;
    enum vsl_format fmt = VSL_FMT_TEXT;
    int fail_on = SEV_WARNING, rc = VSL_EXIT_FAIL, failed = 0;
    struct vsl_config *cfg = NULL;
    struct db *db = NULL;
    json_t *expired = json_array(), *summary = NULL;
    json_t *rule_errors = json_array();
    struct vsl_site site = {0};
    struct vsl_buf errors;
    FILE *out = NULL;
    enum vsl_location loc = VSL_LOC_OBJECT;
    struct vsl_report_source *sources = NULL;
    const char **listed = NULL; /* the vCenters whose findings the report reads */
    size_t n_listed = 0;
    const char *config_path = NULL;
    char cwd[4096];
    struct vsl_report_seen seen = {0};
    int reading = 0; /* db_findings_read_begin()'s */

    /* parse_args() let through only values these take. */
    vsl_format_parse(a->format, &fmt);
    if (a->sarif_location)
        vsl_location_parse(a->sarif_location, &loc);
    if (a->fail_on)
        fail_on_parse(a->fail_on, &fail_on);
    vsl_buf_init(&errors, 1 << 20);
    if (vsl_cli_open(a, 0, &cfg, &db) < 0)
        goto out;
    /* One run, whose peak RSS comes after the loads (db_estate_load()). */
    db_set_load_trim(db, 1);
    if (vsl_site_init(cfg, &site) < 0)
        goto out;
    if (loc == VSL_LOC_CONFIG && !(config_path = repo_path(cfg->path, cwd, sizeof(cwd))))
        goto out;
    sources = calloc(cfg->n_arrays + cfg->n_vcenters + 1, sizeof(*sources));
    listed = calloc(cfg->n_vcenters + 1, sizeof(*listed));
    if (!sources || !listed)
        goto out;
    size_t n_sources = 0;
    int64_t now_ms = vsl_now_ms();
    size_t matched = 0;
    /* The arrays first: each vCenter's estate joins the pools behind its datastores. An array
     * that cannot be polled is one line; its last snapshot is still used, and the vCenters'
     * findings are never held back by it. */
    for (size_t i = 0; i < cfg->n_arrays; i++) {
        const struct vsl_vcenter_conf *ac = &cfg->arrays[i];
        struct vsl_poll_result res;
        if (only && strcmp(only, ac->name))
            continue;
        matched++;
        sources[n_sources++] = (struct vsl_report_source){ac->name, ac->line, 1};
        if (!a->offline && vsl_array_poll(db, ac, &res) < 0) {
            vsl_buf_line(&errors, "array %s: poll failed: %s", ac->name, res.error);
            failed++;
        }
    }
    for (size_t i = 0; i < cfg->n_vcenters; i++) {
        const struct vsl_vcenter_conf *vc = &cfg->vcenters[i];
        if (only && strcmp(only, vc->name))
            continue;
        matched++;
        sources[n_sources++] = (struct vsl_report_source){vc->name, vc->line, 0};
        if (!a->offline) {
            struct vsl_poll_result res;
            if (vsl_poll(db, vc, &res) < 0) {
                vsl_buf_line(&errors, "vcenter %s: poll failed: %s", vc->name, res.error);
                failed++;
                continue; /* its previous findings stay as they were */
            }
        }
        int r = vsl_evaluate_ex(db, cfg, &site, vc->name, now_ms, expired, &errors,
                                rule_errors, NULL);
        /* --offline reads what is stored: another process holding the write lock (a backup, an
         * admin's sqlite3) leaves the findings as last recorded, said on stderr, not a failed
         * run. A poll's new snapshot unrecorded is a failure. */
        if (r < 0 && !(r == -EBUSY && a->offline)) {
            failed++;
            continue;
        }
        /* Every report reads them as it writes them (daemon/report.c). */
        listed[n_listed++] = vc->name;
    }
    if (only && !matched) {
        log_warnx("no [vcenter %s] or [array %s] in %s", only, only, cfg->path);
        goto out;
    }
    /* What went wrong goes to stderr, one line each, whatever the format on stdout. */
    vsl_cli_warn_lines(&errors);
    /* The summary, the resolved count and every read of the report (some read the findings
     * more than once) see one state of the database, whatever a daemon commits meanwhile. */
    reading = db_findings_read_begin(db);
    if (reading < 0)
        log_warnx("cannot begin one read of the findings (%s): each part of the report reads "
                  "them on its own", vsl_strerror(reading));
    if (db_findings_summary(db, only, &summary) < 0)
        summary = json_object();
    json_object_set(summary, "expired_waivers", expired);
    {
        /* Findings this run saw fixed: their resolved_at is this run's time. */
        struct db_findings_filter flt = {.vcenter = only,
                                         .status = "resolved",
                                         .resolution = "fixed",
                                         .resolved_at_ms = now_ms,
                                         .limit = 1};
        json_t *res = NULL;
        int64_t total = 0;
        char *next = NULL;
        if (db_findings_query(db, &flt, &res, &total, &next) < 0)
            total = 0;
        json_decref(res);
        free(next);
        json_object_set_new(summary, "resolved_this_run", json_integer(total));
    }
    if (!(out = vsl_cli_output(a)))
        goto out;
    struct vsl_report rep = {.findings = NULL,
                             .summary = summary,
                             .fail_on = fail_on,
                             .errors = errors.data,
                             .sources = sources,
                             .n_sources = n_sources,
                             .location = loc,
                             .config_path = config_path,
                             .site = site.checks,
                             .n_site = site.n,
                             .rule_errors = rule_errors,
                             .db = db,
                             .vcenters = listed,
                             .n_vcenters = n_listed,
                             .seen = &seen};
    struct vsl_watch watch;
    vsl_watch_start(&watch);
    if (vsl_report_write(out, fmt, &rep) < 0 || fflush(out) != 0) {
        log_warnx("cannot write the report");
        goto out;
    }
    double wall, cpu;
    vsl_watch_read(&watch, &wall, &cpu);
    log_debug("check: the %s report written in %.3f s, CPU %.3f s", a->format, wall, cpu);
    if (failed || seen.unread) {
        rc = VSL_EXIT_FAIL;
        goto out;
    }
    /* Decided from the rows the report read, in the read transaction it read them in, so the
     * exit status always agrees with the document printed. */
    rc = seen.failing ? VSL_EXIT_FINDINGS : VSL_EXIT_OK;
out:
    if (db)
        db_findings_read_end(db, reading);
    free(seen.unread_of);
    vsl_cli_close_output(out);
    free(sources);
    free(listed);
    json_decref(expired);
    json_decref(summary);
    json_decref(rule_errors);
    vsl_site_free(&site);
    vsl_buf_free(&errors);
    db_close(db);
    vsl_config_free(cfg);
    return rc;
}

/* Whether the check is listed: every one when no id was named, else those named. */
static int listed(const struct vsl_args *a, const char *id)
{
    for (int i = 0; id && i < a->n_operands; i++)
        if (!strcmp(a->operands[i], id))
            return 1;
    return a->n_operands == 0;
}

/* "enabled = true|false and severity = info|warning|critical": what every [check ID] takes,
 * from the option table. */
static void print_common_keys(void)
{
    struct vsl_config_doc d;
    const char *sep = "";

    for (size_t i = 0; vsl_config_doc(i, &d) == 0; i++) {
        if (strcmp(d.section, "check ID"))
            continue;
        printf("%s%s = %s", sep, d.key, d.syntax);
        sep = " and ";
    }
}

/* The site rules of the configuration of -c, if one was given: listed after the catalogue. */
static const struct rules_set *site_rules(const struct vsl_config *cfg)
{
    static const struct rules_set none;

    return cfg ? &cfg->rules : &none;
}

int cmd_checks(const struct vsl_args *a)
{
    struct vsl_config *cfg = NULL;
    int rc;

    if (a->config && vsl_cli_load_config(a->config, &cfg, VSL_CONFIG_COMMAND) < 0)
        return VSL_EXIT_FAIL;
    rc = list_checks(a, site_rules(cfg));
    vsl_config_free(cfg);
    return rc;
}

static int list_checks(const struct vsl_args *a, const struct rules_set *site)
{
    /* Checks named after the options: only those (the bash completion offers their ids). */
    for (int i = 0; i < a->n_operands; i++) {
        if (!chk_find(a->operands[i]) && !rules_find(site, a->operands[i])) {
            fprintf(stderr, "vslint: error: no check '%s' (vslint checks lists them)\n",
                    a->operands[i]);
            return VSL_EXIT_FAIL;
        }
    }
    if (!strcmp(a->format, "json")) {
        json_t *doc = chk_catalogue_json();
        json_t *list = json_object_get(doc, "checks");
        size_t i = 0;
        json_t *more = vsl_site_catalogue(site);
        if (!more || json_array_extend(list, more) < 0) {
            json_decref(more);
            json_decref(doc);
            return VSL_EXIT_FAIL;
        }
        json_decref(more);
        while (i < json_array_size(list)) {
            if (listed(a, json_string_value(json_object_get(json_array_get(list, i), "id"))))
                i++;
            else
                json_array_remove(list, i);
        }
        int r = vsl_json_print(stdout, doc);
        json_decref(doc);
        return r < 0 ? VSL_EXIT_FAIL : VSL_EXIT_OK;
    }
    for (size_t i = 0; i < chk_registry_len; i++) {
        const struct check *ck = chk_registry[i];
        if (!listed(a, ck->id))
            continue;
        printf("%s  (%s)\n  %s\n", ck->id, vsl_severity_name(ck->severity), ck->title);
        printf("  Why: %s\n  Source: %s\n", ck->rationale, ck->reference);
        /* The seed's own words, then what vslint adds: a reader sees which is which. */
        for (size_t s = 0; ck->sources && ck->sources[s].document; s++)
            printf("  Quote (%s %s): \"%s\"\n", ck->sources[s].document, ck->sources[s].section,
                   ck->sources[s].quote);
        printf("  vslint's own: %s\n  Fix: %s\n", ck->own, ck->remediation);
        for (size_t p = 0; ck->params && ck->params[p].name; p++)
            printf("  [check %s] %s = %g %s  (%g-%g) %s\n", ck->id, ck->params[p].name,
                   ck->params[p].dflt, ck->params[p].unit ? ck->params[p].unit : "",
                   ck->params[p].min, ck->params[p].max,
                   ck->params[p].help ? ck->params[p].help : "");
        printf("\n");
    }
    for (size_t i = 0; i < site->n; i++) {
        const struct rules_rule *r = &site->rules[i];
        if (!listed(a, r->id))
            continue;
        printf("%s  (%s, site rule %s)\n  %s\n", r->id, vsl_severity_name(r->severity), r->file,
               r->title);
        printf("  Why: %s\n  Fix: %s\n", r->rationale, r->remediation);
        for (size_t p = 0; p < r->n_params; p++)
            printf("  [check %s] %s = %g %s  %s\n", r->id, r->params[p].name, r->params[p].dflt,
                   r->params[p].unit, r->params[p].help);
        printf("\n");
    }
    printf("Every check also takes ");
    print_common_keys();
    printf(" in its [check ID] section.\n");
    return VSL_EXIT_OK;
}
