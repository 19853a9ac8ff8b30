/* Site rules in an evaluation: each rule of the configuration run in the sandbox over one
 * vCenter's views, its rows recorded as findings beside the built-in checks' (history, waivers,
 * every output), a rule that fails said once and its earlier findings kept, unverified. */
#ifndef VSL_SITE_H
#define VSL_SITE_H

#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "checks/engine.h"
#include "daemon/config.h"
#include "util/buf.h"

/* The site rules as checks (id, title, severity, rationale, remediation; reference: the file),
 * for the engine's results, which point at them: the array outlives every result built on it. */
struct vsl_site {
    struct check *checks; /* owned, cfg->rules.n; strings borrowed from cfg's rules */
    size_t n;
};
int vsl_site_init(const struct vsl_config *cfg, struct vsl_site *out); /* 0 or -ENOMEM */
void vsl_site_free(struct vsl_site *site);

/* Runs every site rule of cfg over vcenter's views in the database at cfg->db_path and adds
 * their findings and outcomes to res (vcenter borrowed: it must outlive res). A rule that does
 * not load or fails is one line in errors ("FILE:LINE: cause") and, when rule_errors is not
 * NULL, an object {id, file, line, error} appended to it; the others run. Returns the number of
 * rules that failed (0: all ran). */
int vsl_site_run(const struct vsl_site *site, const struct vsl_config *cfg, const char *vcenter,
                 int64_t now, struct chk_results *res, struct vsl_buf *errors,
                 json_t *rule_errors);

/* The rules of set as `vslint checks --format json` and /api/v1/checks list them after the
 * catalogue: a check's fields, with "source": "site" and "file". A new reference (an array),
 * NULL when memory runs out. */
json_t *vsl_site_catalogue(const struct rules_set *set);

/* Says each file of set that did not load, as FILE:LINE: cause, on f. Returns how many. */
int vsl_rules_print_errors(const struct rules_set *set, FILE *f);
/* Prepares each rule of set against the views of cfg's database (when it exists yet), saying
 * each that fails on f. Returns how many failed. */
int vsl_rules_prepare_all(const struct vsl_config *cfg, const struct rules_set *set, FILE *f);

#endif
