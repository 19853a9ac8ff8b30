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

#endif
