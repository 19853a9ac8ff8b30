/* Capacity runway: how fast a datastore fills and how many days are left before its free space
 * falls below the datastore-free-space thresholds, out of its capacity history. Pure: no I/O. */
#ifndef CHK_RUNWAY_H
#define CHK_RUNWAY_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "checks/engine.h"
#include "model/estate.h"

#define CHK_RUNWAY_MIN_DAYS 3.0 /* no estimate from a shorter history */
#define CHK_DAY_MS          86400000.0

/* What the estimate says about one datastore or datastore cluster. A figure that cannot be
 * given is not a number: has_* is 0 and reason says why, in words a person reads ("not
 * growing", "less than 3 days of history", "capacity changed 1.5 days ago"). */
struct chk_runway {
    int has_growth;
    double growth_bytes_per_day; /* signed: negative while the datastore frees up */
    /* Whole days until free space falls below each threshold (0: already below); never
     * negative or infinite. */
    int has_warning, has_critical;
    int64_t days_to_warning, days_to_critical;
    double history_days;     /* span of the points the estimate used (the current series) */
    int64_t series_start_ms; /* the first point of the current series, 0 when none */
    size_t points;           /* how many points the estimate used */
    char reason[96];         /* "" when every figure is known */
};

/* Estimates from pts[0..n), oldest first, the history of one object up to now_ms, with its
 * current free space last. Only the current series counts (since the capacity last changed by
 * more than 0.1 %), and of it only the last window_days. The growth rate is the Theil-Sen slope
 * (the median of the slopes between every two points, over at most CHK_RUNWAY_MAX_POINTS points
 * evenly spread over the window), which a few outliers (a snapshot made and deleted) do not
 * move; the days count from the latest free space at that rate down to warn_pct and crit_pct of
 * the capacity. 0, or -ENOMEM (out is then "out of memory", every figure unknown). */
#define CHK_RUNWAY_MAX_POINTS 120
int chk_runway_estimate(const struct est_capacity_point *pts, size_t n, int64_t now_ms,
                         double window_days, double warn_pct, double crit_pct,
                         struct chk_runway *out);

/* The thresholds the estimate counts down to, as the engine applies them: datastore-free-space's
 * warn_free_pct and crit_free_pct, and datastore-runway's window_days, from cfg (NULL: the
 * defaults). */
struct chk_runway_settings {
    double warn_free_pct, crit_free_pct, window_days;
};
void chk_runway_settings(const struct chk_config *cfg, struct chk_runway_settings *out);

/* The estimate as the API shows it: {"days_to_warning": N|null, "days_to_critical": N|null,
 * "growth_gb_per_day": x|null, "history_days": x, "reason": "..." (only when a figure is
 * null)}, GB being 2^30 bytes as vSphere shows them. A new reference, NULL when out of memory. */
json_t *chk_runway_json(const struct chk_runway *r);

#endif
