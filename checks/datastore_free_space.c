/* Check datastore-free-space: datastores and datastore clusters running out of free capacity,
 * with the thresholds of the Unity guide's pool-capacity rule (30 % alert, 10 % floor, 5 %). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "checks/check.h"

static const struct chk_param params[] = {
    {"warn_free_pct", 30, 0, 100, "%", "warning when free space is below this share of capacity"},
    {"crit_free_pct", 10, 0, 100, "%", "critical when free space is below this share of capacity"},
    {"snap_free_pct", 5, 0, 100, "%",
     "critical, snapshots and replication at risk, when free space is below this share"},
    {0},
};

/* One object (datastore or datastore cluster) with known capacity and free space; d is the
 * datastore (whose LUNs the evidence names), NULL for a datastore cluster. */
static int evaluate(struct chk_ctx *ctx, const char *type, const char *moref, const char *name,
                    int64_t capacity, int64_t free_space, const struct est_datastore *d)
{
    double warn = chk_param(ctx, "warn_free_pct");
    double crit = chk_param(ctx, "crit_free_pct");
    double snap = chk_param(ctx, "snap_free_pct");
    /* free * 100 < pct * capacity: products of byte counts below 2^53 are exact in a double, so
     * exactly 5 % free is not "below 5 %". */
    double free100 = (double)free_space * 100.0, cap = (double)capacity;
    double free_pct = free100 / cap;
    enum vsl_severity sev;
    const char *level;
    char msg[512], fr[32], ca[32];
    /* Name the kind for a datastore cluster: admins do not expect one in a datastore list. */
    const char *what = strcmp(type, "storage_pod") ? "" : "datastore cluster ";

    chk_size(free_space, fr, sizeof(fr));
    chk_size(capacity, ca, sizeof(ca));

    if (free100 < snap * cap) {
        sev = SEV_CRITICAL;
        level = "snapshots_at_risk";
        snprintf(msg, sizeof(msg),
                 "%s%s has %.1f %% free (%s of %s): snapshots and replication at risk below %g %%; "
                 "free space or add capacity now (threshold %g %%)",
                 what, name, free_pct, fr, ca, snap, snap);
    } else if (free100 < crit * cap) {
        sev = SEV_CRITICAL;
        level = "critical";
        snprintf(msg, sizeof(msg),
                 "%s%s has %.1f %% free (%s of %s); the guide says to keep at least %g %% free "
                 "(threshold %g %%)",
                 what, name, free_pct, fr, ca, crit, crit);
    } else if (free100 < warn * cap) {
        sev = SEV_WARNING;
        level = "warning";
        snprintf(msg, sizeof(msg),
                 "%s%s has %.1f %% free (%s of %s); the guide alerts below %g %% free (threshold "
                 "%g %%)",
                 what, name, free_pct, fr, ca, warn, warn);
    } else {
        return 0;
    }

    json_t *ev =
        json_pack("{s:I, s:I, s:f, s:f, s:f, s:f, s:s}", "capacity_bytes", (json_int_t)capacity,
                  "free_bytes", (json_int_t)free_space, "free_pct", free_pct, "warn_free_pct", warn,
                  "crit_free_pct", crit, "snap_free_pct", snap, "level", level);
    if (d)
        ev = chk_ev_extents(ev, d);
    if (!ev)
        return -ENOMEM;
    return chk_emit(ctx, &(struct chk_emit){
                             .severity = sev,
                             .object_type = type,
                             .object_moref = moref,
                             .object_name = name,
                             .message = msg,
                             .evidence = ev,
                         });
}

static int run(struct chk_ctx *ctx, const struct estate *e)
{
    int rc;

    for (size_t i = 0; i < e->n_datastores; i++) {
        const struct est_datastore *d = &e->datastores[i];
        /* An inaccessible datastore reports stale or zero sizes; unknown sizes cannot be
         * judged. Both are skipped rather than guessed. */
        if (d->accessible != 1 || d->capacity <= 0 || d->free_space < 0)
            continue;
        if ((rc = evaluate(ctx, "datastore", d->moref, d->name, d->capacity, d->free_space,
                           d)) < 0)
            return rc;
    }
    for (size_t i = 0; i < e->n_pods; i++) {
        const struct est_pod *p = &e->pods[i];
        if (p->capacity <= 0 || p->free_space < 0)
            continue;
        if ((rc = evaluate(ctx, "storage_pod", p->moref, p->name, p->capacity, p->free_space,
                           NULL)) < 0)
            return rc;
    }
    return 0;
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
    .params = params,
    .needs = CHK_NEEDS_DATASTORE,
    .run = run,
};
