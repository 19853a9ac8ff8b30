/* Check datastore-free-space: datastores and datastore clusters running out of free capacity,
 * held to the levels of the Unity guide's pool-capacity rule (30 % alert, 10 % floor, 5 %): the
 * guide states them for a storage pool; applying them to datastores is vslint's choice. */
#include <stdio.h>

#include "checks/check.h"

/* The three levels, most severe first. */
static const struct chk_free_level levels[] = {
    /* The seed's figures are a Unity pool's: the messages say so and claim nothing of the
     * datastore's snapshots (the evidence's level keeps its name for existing consumers). */
    {"snap_free_pct", SEV_CRITICAL, "snapshots_at_risk", ": below ",
     " % free, the level at which a Unity pool invalidates its snapshots and replication "
     "sessions; free space or add capacity now"},
    {"crit_free_pct", SEV_CRITICAL, "critical", "; below ",
     " % free, the least the Unity guide wants a storage pool to keep"},
    {"warn_free_pct", SEV_WARNING, "warning", "; below ",
     " % free, where Unity alerts on a storage pool"},
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
        "Thin disks, VM snapshots and swap files grow into a datastore's free space, and a full "
        "datastore stops its VMs. The Unity guide's rule for a storage pool (Unity alerts below "
        "30 % free, Dell EMC asks for at least 10 % free, and the array invalidates the pool's "
        "snapshots and replication sessions below 5 %) gives the levels, which vslint applies "
        "to each datastore and to each datastore cluster (using the cluster's own capacity and "
        "free space). "
        "Datastores that are inaccessible or whose capacity or free space is unknown or zero are "
        "skipped, since their sizes cannot be trusted.",
    .reference = "000_5bd48962a767ee9e.txt §1.1.1 (storage pool capacity)",
    .sources = chk_pool_capacity_sources,
    .own =
        "The seed's three levels are a Unity storage pool's; vslint holds each datastore and "
        "datastore cluster to the same 30 %, 10 % and 5 % free, because thin disks, VM snapshots "
        "and swap files grow into a datastore as a pool's objects grow into the pool, and a full "
        "datastore stops its VMs. The severities are vslint's: a warning below 30 %, critical "
        "below 10 % and below 5 %. Below 5 % the array invalidates a pool's snapshots and "
        "replication sessions; nothing does so to a datastore, and the finding does not say it "
        "would.",
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
