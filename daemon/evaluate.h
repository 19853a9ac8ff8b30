/* Evaluation of a vCenter's stored snapshot: checks run, findings recorded with history. */
#ifndef VSL_EVALUATE_H
#define VSL_EVALUATE_H

#include <jansson.h>
#include <stdint.h>

#include "daemon/config.h"
#include "db/db.h"
#include "util/buf.h"

/* Runs the configured checks over vcenter's last stored snapshot at now_ms and records the
 * findings (db_findings_record). Appends one line per problem to errors, and to expired (a
 * JSON array, may be NULL) one note per expired waiver that matched. 0 or a negative error;
 * -VSL_ENOTFOUND when the vCenter has no snapshot yet; -EBUSY when the checks ran but another
 * connection or process held the write lock past the busy timeout, so the findings stay as
 * last recorded. */
int vsl_evaluate(struct db *db, const struct vsl_config *cfg, const char *vcenter, int64_t now_ms,
                 json_t *expired, struct vsl_buf *errors);

struct vsl_site;
/* vsl_evaluate() with cfg's site rules (site, from vsl_site_init(cfg); NULL: built here) run
 * after the built-in checks; a rule that fails is a line in errors and an entry of rule_errors
 * (may be NULL) but not an error of the evaluation: the findings of everything else are
 * recorded. *record_err (record_err may be NULL) says apart from the result whether the
 * findings were recorded: 0 when they were (or there is no snapshot: -VSL_ENOTFOUND is
 * returned), else the error that kept them from it (the snapshot not loaded, the store's
 * write refused), even when the result is a check's error that came first. */
int vsl_evaluate_ex(struct db *db, const struct vsl_config *cfg, const struct vsl_site *site,
                    const char *vcenter, int64_t now_ms, json_t *expired,
                    struct vsl_buf *errors, json_t *rule_errors, int *record_err);

struct estate;
/* Leaves in e only the pools of the arrays cfg configures ([array NAME]): the stored snapshot
 * of an array no longer configured joins nothing. */
void vsl_keep_configured_pools(struct estate *e, const struct vsl_config *cfg);

#endif
