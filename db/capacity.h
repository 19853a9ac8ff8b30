/* The capacity history of datastores and datastore clusters, and their latest runway estimate:
 * what datastore-runway, /api/v1/inventory/datastores and the dashboard's capacity chart read. */
#ifndef DB_CAPACITY_H
#define DB_CAPACITY_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "db/db.h"

#define DB_HOUR_MS 3600000LL
/* Points older than this are thinned to the latest of each hour, older than DB_THIN_DAY_AFTER
 * to the latest of each UTC day. */
#define DB_THIN_HOUR_AFTER (86400000LL)
#define DB_THIN_DAY_AFTER  (30 * 86400000LL)

/* One runway estimate as the daemon computed it, for db_runway_record(). */
struct db_runway_row {
    const char *moref;
    const char *kind;   /* "datastore" or "storage_pod" */
    const char *json;   /* the API's runway object, JSON text */
    double warn_free_pct, crit_free_pct; /* the thresholds it counted down to */
};

/* Replaces vcenter's runway estimates by rows[0..n), computed at now_ms, in one transaction. */
int db_runway_record(struct db *db, const char *vcenter, int64_t now_ms,
                     const struct db_runway_row *rows, size_t n);

/* The capacity series of the datastore or datastore cluster of vcenter named by moref, or by name
 * when moref is NULL, for the dashboard: *out is a new object {"vcenter","moref","name","kind",
 * "points":[{"t","capacity","free_space","uncommitted"}], oldest first, "runway": {...} (every
 * figure null, "not estimated yet", before an evaluation),
 * "computed","warn_free_pct","crit_free_pct"}. -VSL_ENOTFOUND when the snapshot has no such
 * object, -EEXIST when name names several (datastore names repeat across datacenters). */
int db_capacity_series(struct db *db, const char *vcenter, const char *moref, const char *name,
                       json_t **out);

#endif
