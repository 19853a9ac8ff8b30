/* The findings' and polls' history by day, for /api/v1/history and the dashboard's charts. */
#ifndef DB_HISTORY_H
#define DB_HISTORY_H

#include <jansson.h>
#include <stdint.h>

#include "db/db.h"

#define DB_DAY_MS 86400000LL

/* What was open at the end of one day (or now, for today), counted from the findings' own
 * first_seen and resolved_at: severity and waivers as they are now (history keeps no earlier
 * ones). objects is the datastores, hosts and VMs of each vCenter's last successful full read by
 * then; vcenters how many vCenters had one (0: no snapshot yet, no score). */
struct db_history_day {
    int64_t end_ms;
    int64_t critical, warning, info;
    int64_t objects;
    int64_t vcenters;
    /* Findings first seen that day (not waived now), and fixed that day: what the history can
     * tell (a finding that came back keeps only its latest occurrence). */
    int64_t opened, fixed;
};

/* Fills days[0..n) for the n UTC days ending with today (now_ms), oldest first; vcenter NULL:
 * all. 0 or a negative error. */
int db_history_days(struct db *db, const char *vcenter, int64_t now_ms, size_t n,
                    struct db_history_day *days);

/* The polls of those days per vCenter and day: *out is a new JSON array of
 * {"vcenter","day","polls","failed","mean_ms","max_ms", "full" and "incremental": the same four
 * of the polls of that mode, "last_full": the last successful full read by the day's end (ISO
 * time, or null)} (day: 0 for the oldest), in vCenter then day order, days without polls left
 * out. An incremental round is in the polls when it applied changes or failed. 0 or a
 * negative error. */
int db_history_polls(struct db *db, const char *vcenter, int64_t now_ms, size_t n, json_t **out);

#endif
