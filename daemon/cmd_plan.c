/* `vslint plan`: poll (or, offline, read the stored findings) and print the remediation plan,
 * an esxcli or PowerCLI script a person reviews and runs; vslint applies nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks/check.h"
#include "checks/plan.h"
#include "daemon/cli.h"
#include "daemon/config.h"
#include "daemon/evaluate.h"
#include "daemon/poll.h"
#include "db/findings.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/isotime.h"
#include "util/log.h"

/* Polls and evaluates each configured vCenter (only `only` when given). 0, or -1 once every
 * failure is said on stderr: a plan from a poll that failed would be a plan for an estate
 * nobody has seen. */
static int refresh(const struct vsl_config *cfg, struct db *db, const char *only)
{
    struct vsl_buf errors;
    int failed = 0;
    int64_t now_ms = vsl_now_ms();

    vsl_buf_init(&errors, 1 << 20);
    for (size_t i = 0; i < cfg->n_vcenters; i++) {
        const struct vsl_vcenter_conf *vc = &cfg->vcenters[i];
        struct vsl_poll_result res;
        if (only && strcmp(only, vc->name))
            continue;
        if (vsl_poll(db, vc, &res) < 0) {
            vsl_buf_line(&errors, "vcenter %s: poll failed: %s", vc->name, res.error);
            failed++;
            continue;
        }
        if (vsl_evaluate(db, cfg, vc->name, now_ms, NULL, &errors) < 0)
            failed++;
    }
    vsl_cli_warn_lines(&errors);
    vsl_buf_free(&errors);
    if (failed)
        log_warnx("no plan: %d vCenter(s) could not be polled and checked (--offline plans "
                  "from the stored findings)",
                  failed);
    return failed ? -1 : 0;
}

/* Whether vcenter is one of the configuration's. */
static int configured(const struct vsl_config *cfg, const char *vcenter)
{
    for (size_t i = 0; i < cfg->n_vcenters; i++)
        if (!strcmp(cfg->vcenters[i].name, vcenter))
            return 1;
    return 0;
}

int cmd_plan(const struct vsl_args *a)
{
    struct vsl_config *cfg = NULL;
    struct db *db = NULL;
    json_t *findings = NULL;
    char *text = NULL, *next = NULL, when[32], scope[512];
    size_t len = 0;
    int64_t total = 0;
    int rc = VSL_EXIT_FAIL, r;
    FILE *out = NULL;
    struct chk_plan_opts o = {.generated_at = when, .scope = scope};

    /* parse_args() let through only the formats plan takes. */
    chk_plan_format_parse(a->format, &o.format);
    if (a->check && !chk_find(a->check)) {
        fprintf(stderr, "vslint: error: --check: no check '%s' (vslint checks lists them)\n",
                a->check);
        return VSL_EXIT_FAIL;
    }
    if (vsl_cli_open(a, a->offline, &cfg, &db) < 0)
        goto out;
    if (a->vcenter && !configured(cfg, a->vcenter)) {
        log_warnx("no [vcenter %s] in %s", a->vcenter, cfg->path);
        goto out;
    }
    if (!a->offline && refresh(cfg, db, a->vcenter) < 0)
        goto out;
    struct db_findings_filter flt = {.vcenter = a->vcenter, .check = a->check};
    if ((r = db_findings_query(db, &flt, &findings, &total, &next)) < 0) {
        log_warnx("cannot read the findings: %s", vsl_strerror(r));
        goto out;
    }
    vsl_iso_time(vsl_now_ms(), when, sizeof(when));
    snprintf(scope, sizeof(scope), "%s%s%s%s%s", a->vcenter ? "vCenter " : "every vCenter",
             a->vcenter ? a->vcenter : "", a->check ? ", check " : "", a->check ? a->check : "",
             a->offline ? " (stored findings, not polled)" : "");
    if ((r = chk_plan(findings, &o, &text, &len)) < 0) {
        log_warnx("cannot write the plan: %s", vsl_strerror(r));
        goto out;
    }
    if (!(out = vsl_cli_output(a)))
        goto out;
    if (fwrite(text, 1, len, out) != len || fflush(out) != 0) {
        log_warnx("cannot write the plan");
        goto out;
    }
    rc = VSL_EXIT_OK;
out:
    vsl_cli_close_output(out);
    free(text);
    free(next);
    json_decref(findings);
    db_close(db);
    vsl_config_free(cfg);
    return rc;
}
