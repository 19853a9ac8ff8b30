/* Check datastore-free-space: datastores and datastore clusters running out of free capacity,
 * with the thresholds of the Unity guide's pool-capacity rule (30 % alert, 10 % floor, 5 %). */
#include <stdio.h>

#include "checks/check.h"

/* The three levels, most severe first. */
static const struct chk_free_level levels[] = {
    {"snap_free_pct", SEV_CRITICAL, "snapshots_at_risk",
     ": snapshots and replication at risk below ", " %; free space or add capacity now"},
    {"crit_free_pct", SEV_CRITICAL, "critical", "; the guide says to keep at least ", " % free"},
    {"warn_free_pct", SEV_WARNING, "warning", "; the guide alerts below ", " % free"},
};

/* Judges one object with known capacity and free space: datastore d, or datastore cluster p
 * when d is NULL. */
static int evaluate(struct chk_ctx *ctx, const struct est_datastore *d, const struct est_pod *p)
{
    const struct estate *e = chk_estate(ctx);
    const char *name = d ? d->name : p->name;
    int64_t capacity = d ? d->capacity : p->capacity,
            free_space = d ? d->free_space : p->free_space;
    double free_pct = (double)free_space * 100.0 / (double)capacity;
    double threshold = 0;
    const struct chk_free_level *l = chk_free_level(ctx, levels, sizeof(levels) / sizeof(levels[0]),
                                                    free_space, capacity, &threshold);
    char msg[512], fr[32], ca[32];

    if (!l)
        return 0;
    /* Name the kind for a datastore cluster: admins do not expect one in a datastore list. */
    snprintf(msg, sizeof(msg), "%s%s has %.1f %% free (%s of %s)%s%g%s (threshold %g %%)",
             d ? "" : "datastore cluster ", name, free_pct, chk_size(free_space, fr, sizeof(fr)),
             chk_size(capacity, ca, sizeof(ca)), l->before, threshold, l->after, threshold);
    json_t *ev = json_pack("{s:I, s:I, s:f}", "capacity_bytes", (json_int_t)capacity,
                           "free_bytes", (json_int_t)free_space, "free_pct", free_pct);
    ev = chk_ev_set(chk_ev_free_params(ev, ctx), "level", json_string(l->name));
    /* The pools behind the datastore, when a configured array holds its LUNs: the space a
     * thin LUN can still take is theirs, whatever the datastore shows. */
    if (d && d->n_pools) {
        json_t *pools = json_array();
        for (size_t i = 0; pools && i < d->n_pools; i++) {
            const struct est_pool *pl = &e->pools[d->pools[i]];
            double pct = chk_pool_free_pct(pl);
            json_t *o = json_pack("{s:s, s:s?, s:s}", "array", pl->array, "name", pl->name,
                                  "id", pl->id);
            o = chk_ev_set(o, "size_free_bytes", chk_ev_known(pl->size_free));
            o = chk_ev_set(o, "free_pct", pct < 0 ? json_null() : json_real(pct));
            pools = chk_ev_append(pools, o);
        }
        ev = chk_ev_set(ev, "pools", pools);
    }
    return chk_emit_measured(ctx, d, p, l->severity, msg, ev);
}

static int run(struct chk_ctx *ctx, const struct estate *e)
{
    /* An inaccessible datastore reports stale or zero sizes; unknown sizes cannot be judged.
     * Both are skipped rather than guessed (chk_each_measured). */
    return chk_each_measured(ctx, e, evaluate);
}

const struct check chk_datastore_free_space = {
    .id = "datastore-free-space",
    .title = "Datastore or datastore cluster low on free space",
    .severity = SEV_CRITICAL,
    .rationale =
        "Thin disks, snapshots and replication all grow into free space; the Unity guide raises "
        "an alert below 30 % free, asks for at least 10 % free, and starts invalidating "
        "snapshots and replication sessions below 5 %. The rule is applied to each datastore "
        "and to each datastore cluster (using the cluster's own capacity and free space). "
        "Datastores that are inaccessible or whose capacity or free space is unknown or zero are "
        "skipped, since their sizes cannot be trusted.",
    .reference = "000_5bd48962a767ee9e.txt §1.1.1 (storage pool capacity)",
    .remediation =
        "Free space or add capacity: delete stale snapshots (PowerCLI: Get-VM | Get-Snapshot | "
        "Remove-Snapshot), move VMs away with Storage vMotion (Move-VM -VM <vm> -Datastore "
        "<other-ds>), or grow the LUN on the array and then the datastore (vSphere Client: "
        "Datastore > Increase Datastore Capacity, or on a host: vmkfstools --growfs). For a "
        "datastore cluster, add a datastore to it (Move-Datastore -Datastore <ds> -Destination "
        "<pod>).",
    .params = chk_free_params,
    .needs = CHK_NEEDS_DATASTORE,
    .run = run,
};
