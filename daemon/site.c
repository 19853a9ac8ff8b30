/* Site rules run beside the built-in checks: the sandbox opened once per evaluation on the
 * vCenter's views, each rule's rows turned into the engine's findings, and each failure said. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/site.h"
#include "rules/rule.h"
#include "rules/sandbox.h"
#include "util/log.h"

int vsl_site_init(const struct vsl_config *cfg, struct vsl_site *out)
{
    out->n = 0;
    out->checks = calloc(cfg->rules.n ? cfg->rules.n : 1, sizeof(*out->checks));
    if (!out->checks)
        return -ENOMEM;
    for (size_t i = 0; i < cfg->rules.n; i++) {
        const struct rules_rule *r = &cfg->rules.rules[i];
        out->checks[i] = (struct check){.id = r->id,
                                        .title = r->title,
                                        .severity = r->severity,
                                        .rationale = r->rationale,
                                        .reference = r->file,
                                        .remediation = r->remediation};
    }
    out->n = cfg->rules.n;
    return 0;
}

void vsl_site_free(struct vsl_site *site)
{
    free(site->checks);
    site->checks = NULL;
    site->n = 0;
}

struct sink {
    const struct vsl_config *cfg;
    const struct check *check;
    const struct chk_settings *settings;
    const char *vcenter;
    int64_t now;
    struct chk_results *res;
};

static int add_row(void *ctx, const struct rules_rule *rule, struct rules_row *row)
{
    struct sink *s = ctx;
    struct chk_emit f = {.severity = row->severity,
                         .object_type = row->object_type,
                         .object_moref = row->object_moref,
                         .object_name = row->object_name,
                         .detail = row->detail,
                         .message = row->message,
                         .evidence = row->evidence};

    (void)rule;
    row->evidence = NULL; /* taken */
    return chk_add_finding(&s->cfg->checks, s->check, s->settings, s->vcenter, &f,
                           row->host_name, s->now, s->res);
}

/* One failed rule: said in errors and rule_errors, and its findings kept as unverified. */
static void failed(const char *file, int line, const char *id, const char *cause,
                   const struct check *c, struct chk_results *res, struct vsl_buf *errors,
                   json_t *rule_errors)
{
    char where[4200];

    if (line > 0)
        snprintf(where, sizeof(where), "%s:%d", file, line);
    else
        snprintf(where, sizeof(where), "%s", file);
    /* Said once per run, not once per vCenter evaluated. */
    size_t k;
    json_t *e;
    json_array_foreach(rule_errors, k, e) {
        if (!strcmp(json_string_value(json_object_get(e, "file")), file) &&
            !strcmp(json_string_value(json_object_get(e, "error")), cause))
            rule_errors = NULL, errors = NULL;
        if (!rule_errors)
            break;
    }
    if (errors)
        vsl_buf_line(errors, "%s: site rule%s%s: %s", where, id ? " " : "", id ? id : "", cause);
    if (rule_errors)
        json_array_append_new(rule_errors,
                              json_pack("{s:s?, s:s, s:i, s:s}", "id", id, "file", file, "line",
                                        line, "error", cause));
    if (c) {
        char reason[700];
        snprintf(reason, sizeof(reason), "site rule %s failed: %s", c->id, cause);
        chk_add_outcome(res, c, CHK_FAILED, reason);
    }
}

int vsl_site_run(const struct vsl_site *site, const struct vsl_config *cfg, const char *vcenter,
                 int64_t now, struct chk_results *res, struct vsl_buf *errors,
                 json_t *rule_errors)
{
    struct rules_db *rdb = NULL;
    struct vsl_watch watch;
    size_t found = res->n;
    char err[512];
    int nfailed = 0;

    for (size_t i = 0; i < cfg->rules.n_errors; i++) {
        const struct rules_error *e = &cfg->rules.errors[i];
        failed(e->file, e->line, e->id, e->cause, NULL, res, errors, rule_errors);
        nfailed++;
    }
    if (site->n == 0)
        return nfailed;
    vsl_watch_start(&watch);
    if (rules_db_open(cfg->db_path, vcenter, &rdb, err, sizeof(err)) < 0) {
        for (size_t i = 0; i < site->n; i++)
            failed(cfg->rules.rules[i].file, 0, site->checks[i].id, err, &site->checks[i], res,
                   errors, rule_errors);
        return nfailed + (int)site->n;
    }
    for (size_t i = 0; i < site->n; i++) {
        const struct rules_rule *rule = &cfg->rules.rules[i];
        const struct chk_settings *st = vsl_config_rule_settings(cfg, i);
        struct sink s = {cfg, &site->checks[i], st, vcenter, now, res};
        size_t before = res->n;
        struct vsl_watch one;
        int line = 0;
        if (!st->enabled) {
            chk_add_outcome(res, &site->checks[i], CHK_DISABLED, NULL);
            continue;
        }
        vsl_watch_start(&one);
        int r = rules_run(rdb, rule, st->params, cfg->rules_timeout_s * 1000L,
                          cfg->rules_max_findings, add_row, &s, &line, err, sizeof(err));
        /* Each rule's cost, so that a slow one can be told from the others (-v). */
        double w1, c1;
        vsl_watch_read(&one, &w1, &c1);
        log_debug("site rule %s: %zu findings in %.3f s, CPU %.3f s%s", rule->id,
                  res->n - before, w1, c1, r < 0 ? " (failed)" : "");
        if (r < 0) {
            /* What the rule gave before it failed is not a verdict: drop it. */
            chk_results_truncate(res, before);
            failed(rule->file, line, rule->id, r == -ENOMEM ? "out of memory" : err,
                   &site->checks[i], res, errors, rule_errors);
            nfailed++;
            continue;
        }
        chk_add_outcome(res, &site->checks[i], CHK_COMPLETED, NULL);
    }
    rules_db_close(rdb);
    double wall, cpu;
    vsl_watch_read(&watch, &wall, &cpu);
    log_debug("site rules: %zu rules ran over vCenter %s (%zu findings) in %.3f s, CPU %.3f s",
              site->n, vcenter, res->n - found, wall, cpu);
    return nfailed;
}

/* Site rule r as the catalogue shows a check, marked "source": "site" with its file (its own
 * function: the built-in entries' fields are chk_catalogue_json()'s). */
static json_t *site_entry(const struct rules_rule *r)
{
    json_t *params = json_array();

    for (size_t p = 0; p < r->n_params; p++)
        json_array_append_new(params, json_pack("{s:s,s:f,s:f,s:f,s:s,s:s}", "name",
                                                r->params[p].name, "default", r->params[p].dflt,
                                                "min", RULES_PARAM_MIN, "max", RULES_PARAM_MAX,
                                                "unit", r->params[p].unit, "help",
                                                r->params[p].help));
    /* A site rule rests on no seed: its sources are none, and all of it is the site's own. */
    return json_pack("{s:s,s:s,s:s,s:s,s:s,s:[],s:s,s:s,s:o,s:s,s:s}", "id", r->id, "title",
                     r->title, "severity", vsl_severity_name(r->severity), "rationale",
                     r->rationale, "reference", r->file, "sources", "own",
                     "a site rule: the rule, its thresholds and its severity are the site's, "
                     "not the seeds'",
                     "remediation", r->remediation, "parameters", params, "source", "site",
                     "file", r->file);
}

json_t *vsl_site_catalogue(const struct rules_set *set)
{
    json_t *a = json_array();

    for (size_t i = 0; a && i < set->n; i++)
        if (json_array_append_new(a, site_entry(&set->rules[i])) < 0) {
            json_decref(a);
            a = NULL;
        }
    return a;
}
