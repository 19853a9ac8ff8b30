/* `vslint rules test`: for rule authors and their CI, each site rule parsed, prepared against the
 * public views and run against the current database with the configured limits; and the rule
 * checks `vslint config-check` makes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checks/check.h"
#include "daemon/cli.h"
#include "daemon/config.h"
#include "daemon/site.h"
#include "db/db.h"
#include "rules/rule.h"
#include "rules/sandbox.h"
#include "util/log.h"

/* Says each file of set that did not load, as FILE:LINE: cause. Returns how many. */
int vsl_rules_print_errors(const struct rules_set *set, FILE *f)
{
    for (size_t i = 0; i < set->n_errors; i++) {
        const struct rules_error *e = &set->errors[i];
        if (e->line > 0)
            fprintf(f, "%s:%d: %s\n", e->file, e->line, e->cause);
        else
            fprintf(f, "%s: %s\n", e->file, e->cause);
    }
    return (int)set->n_errors;
}

static int builtin(const char *id, void *ctx)
{
    (void)ctx;
    return chk_find(id) != NULL;
}

struct printed {
    long n;
};

static int print_finding(void *ctx, const struct rules_rule *rule, struct rules_row *row)
{
    struct printed *p = ctx;

    printf("%s  %-8s %s %s%s%s: %s\n", rule->id, vsl_severity_name(row->severity),
           row->object_type, row->host_name ? row->host_name : "", row->host_name ? " " : "",
           row->object_name, row->message);
    json_decref(row->evidence);
    p->n++;
    return 0;
}

/* The values of rule's params in cfg ([check ID] of its id), or NULL (its defaults) when cfg's
 * rules do not hold it (a file named on the command line). */
static const double *params_of(const struct vsl_config *cfg, const struct rules_rule *rule)
{
    for (size_t i = 0; i < cfg->rules.n; i++)
        if (!strcmp(cfg->rules.rules[i].id, rule->id) &&
            !strcmp(cfg->rules.rules[i].file, rule->file))
            return vsl_config_rule_settings(cfg, i)->params;
    return NULL;
}

int vsl_rules_prepare_all(const struct vsl_config *cfg, const struct rules_set *set, FILE *f)
{
    struct rules_db *rdb = NULL;
    char err[512];
    int bad = 0;

    if (!set->n)
        return 0;
    if (access(cfg->db_path, F_OK) < 0) {
        fprintf(f, "%s: no database yet: the site rules were parsed, not prepared\n",
                cfg->db_path);
        return 0;
    }
    if (rules_db_open(cfg->db_path, NULL, &rdb, err, sizeof(err)) < 0) {
        fprintf(f, "%s: %s\n", cfg->db_path, err);
        return 1;
    }
    for (size_t i = 0; i < set->n; i++) {
        sqlite3_stmt *st = NULL;
        int line = 0;
        if (rules_prepare(rdb, &set->rules[i], &st, &line, err, sizeof(err)) < 0) {
            fprintf(f, "%s:%d: %s\n", set->rules[i].file, line, err);
            bad++;
        }
        sqlite3_finalize(st);
    }
    rules_db_close(rdb);
    return bad;
}

int cmd_rules(const struct vsl_args *a)
{
    struct vsl_config *cfg = NULL;
    struct db *db = NULL;
    struct rules_set named = {0};
    const struct rules_set *set;
    struct rules_db *rdb = NULL;
    struct printed printed = {0};
    char err[512];
    int broken = 0, rc = VSL_EXIT_FAIL;

    if (a->n_operands < 1 || strcmp(a->operands[0], "test")) {
        fprintf(stderr, "vslint: error: rules takes 'test' (see 'vslint help rules')\n");
        return VSL_EXIT_FAIL;
    }
    if (vsl_cli_open(a, 1, &cfg, &db) < 0)
        return VSL_EXIT_FAIL;
    db_close(db);
    set = &cfg->rules;
    if (a->n_operands > 1) {
        if (rules_load_files(a->operands + 1, (size_t)a->n_operands - 1, builtin, NULL,
                             &named) < 0) {
            log_warnx("out of memory loading the rules");
            goto out;
        }
        set = &named;
    }
    broken = vsl_rules_print_errors(set, stderr);
    if (rules_db_open(cfg->db_path, NULL, &rdb, err, sizeof(err)) < 0) {
        log_warnx("%s", err);
        goto out;
    }
    for (size_t i = 0; i < set->n; i++) {
        const struct rules_rule *rule = &set->rules[i];
        int line = 0;
        long before = printed.n;
        int r = rules_run(rdb, rule, params_of(cfg, rule), cfg->rules_timeout_s * 1000L,
                          cfg->rules_max_findings, print_finding, &printed, &line, err,
                          sizeof(err));
        if (r < 0) {
            if (line > 0)
                fprintf(stderr, "%s:%d: %s\n", rule->file, line, err);
            else
                fprintf(stderr, "%s: rule %s: %s\n", rule->file, rule->id, err);
            broken++;
        } else {
            fprintf(stderr, "%s: rule %s: %ld findings\n", rule->file, rule->id,
                    printed.n - before);
        }
    }
    if (set->n == 0 && set->n_errors == 0)
        fprintf(stderr, "no site rules in %s\n", a->n_operands > 1 ? "the files named"
                                                                   : cfg->rules_dir);
    rc = broken ? VSL_EXIT_FAIL : printed.n ? VSL_EXIT_FINDINGS : VSL_EXIT_OK;
out:
    if (fflush(stdout) != 0)
        rc = VSL_EXIT_FAIL;
    rules_db_close(rdb);
    rules_set_free(&named);
    vsl_config_free(cfg);
    return rc;
}
