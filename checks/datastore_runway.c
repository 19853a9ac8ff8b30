/* Check datastore-runway: datastores and datastore clusters that will fall below the critical
 * free-space threshold soon, at the rate their capacity history shows them filling. */
#include <stdio.h>

#include "checks/check.h"
#include "checks/runway.h"

static const struct chk_param params[] = {
    {"warn_days", 30, 0, 3650, "days",
     "warning when free space is forecast to fall below the critical threshold within this"},
    {"crit_days", 7, 0, 3650, "days",
     "critical when free space is forecast to fall below the critical threshold within this"},
    {"window_days", 30, CHK_RUNWAY_MIN_DAYS, EST_HISTORY_DAYS, "days",
     "the growth rate is measured over this much of the latest capacity history"},
    {0},
};

/* Judges one object: datastore d, or datastore cluster p when d is NULL. */
static int evaluate(struct chk_ctx *ctx, const struct est_datastore *d, const struct est_pod *p)
{
    const struct est_capacity_point *h = d ? d->history : p->history;
    size_t n = d ? d->n_history : p->n_history;
    const char *name = d ? d->name : p->name;
    double warn_days = chk_param(ctx, "warn_days"), crit_days = chk_param(ctx, "crit_days");
    double warn_pct = chk_param_from(ctx, "datastore-free-space", "warn_free_pct");
    double crit_pct = chk_param_from(ctx, "datastore-free-space", "crit_free_pct");
    struct chk_runway rw;
    enum vsl_severity sev;
    char msg[512], rate[32];
    int r = chk_runway_estimate(h, n, chk_now(ctx) * 1000, chk_param(ctx, "window_days"),
                                warn_pct, crit_pct, &rw);

    if (r < 0)
        return r;
    /* Already below the critical threshold is datastore-free-space's finding, not a forecast. */
    if (!rw.has_critical || rw.days_to_critical == 0)
        return 0;
    if ((double)rw.days_to_critical < crit_days)
        sev = SEV_CRITICAL;
    else if ((double)rw.days_to_critical < warn_days)
        sev = SEV_WARNING;
    else
        return 0;
    snprintf(msg, sizeof(msg),
             "%s%s grows by %s a day and will have less than %g %% free in %lld day%s (measured "
             "over %.1f days); act within %g days",
             d ? "" : "datastore cluster ", name,
             chk_size((int64_t)rw.growth_bytes_per_day, rate, sizeof(rate)), crit_pct,
             (long long)rw.days_to_critical, rw.days_to_critical == 1 ? "" : "s",
             rw.history_days, sev == SEV_CRITICAL ? crit_days : warn_days);
    json_t *ev = chk_runway_json(&rw);
    ev = chk_ev_set(ev, "capacity_bytes", json_integer(h[n - 1].capacity));
    ev = chk_ev_set(ev, "free_bytes", json_integer(h[n - 1].free_space));
    ev = chk_ev_set(ev, "warn_free_pct", json_real(warn_pct));
    ev = chk_ev_set(ev, "crit_free_pct", json_real(crit_pct));
    ev = chk_ev_set(ev, "window_days", json_real(chk_param(ctx, "window_days")));
    ev = chk_ev_set(ev, "points", json_integer((json_int_t)rw.points));
    return chk_emit_measured(ctx, d, p, sev, msg, ev);
}

static int run(struct chk_ctx *ctx, const struct estate *e)
{
    /* Inaccessible datastores report stale sizes: skipped, as datastore-free-space does. */
    return chk_each_measured(ctx, e, evaluate);
}

const struct check chk_datastore_runway = {
    .id = "datastore-runway",
    .title = "Datastore or datastore cluster forecast to run low on free space",
    .severity = SEV_CRITICAL,
    .rationale =
        "The Unity guide asks a storage pool to keep at least 10 % free capacity (below 5 % the "
        "array invalidates its snapshots and replication sessions), and datastore-free-space "
        "holds datastores to the same levels; a datastore that fills steadily crosses them on a "
        "date that can be seen coming (the forecast is vslint's). vslint keeps each datastore's capacity at every poll and "
        "measures how fast free space falls with a Theil-Sen slope (robust to a snapshot made "
        "and deleted) over the last window_days of the current series (a grown or shrunk "
        "datastore starts a new one); with at least 3 days of history it counts the days until "
        "free space is below datastore-free-space's crit_free_pct. One already below it is "
        "datastore-free-space's finding, not this one's; inaccessible datastores are skipped.",
    .reference = "000_5bd48962a767ee9e.txt §1.1.1 (storage pool capacity)",
    .sources = chk_pool_capacity_sources,
    .own =
        "The forecast is vslint's: the guide states levels for a storage pool, not trends, and "
        "vslint applies them to datastores as datastore-free-space does. The horizons, a warning "
        "within 30 days (warn_days) and critical within 7 (crit_days) of falling below "
        "crit_free_pct, the 30-day window and the 3 days of history needed are vslint's choices: "
        "long enough to order capacity, short enough to trust the trend.",
    .remediation =
        "Add capacity before the date: grow the LUN on the array and then the datastore "
        "(vSphere Client: Datastore > Increase Datastore Capacity, or vmkfstools --growfs), add a "
        "datastore to the datastore cluster (Move-Datastore -Datastore <ds> -Destination <pod>), "
        "or move the fastest-growing VMs away (Move-VM -VM <vm> -Datastore <other-ds>) and "
        "remove stale snapshots (Get-VM | Get-Snapshot | Remove-Snapshot).",
    .params = params,
    .needs = CHK_NEEDS_DATASTORE,
    .run = run,
};
