/* Check pool-free-space: the array pools behind the datastores, judged by the Unity guide's
 * own rule for them (alert below 30 % free, keep 10 %, snapshots invalidated below 5 %). */
#include <stdio.h>

#include "checks/check.h"

static const struct chk_free_level levels[] = {
    {"snap_free_pct", SEV_CRITICAL, "snapshots_invalidated", "; below ",
     " % free the array invalidates snapshots and replication sessions"},
    {"crit_free_pct", SEV_CRITICAL, "critical", "; the guide says to keep at least ", " % free"},
    {"warn_free_pct", SEV_WARNING, "warning", "; the array alerts below ", " % free"},
};

/* "ds-a, ds-b" (cut with ", ..." when long): the datastores the pool backs, for the message. */
static void datastore_list(const struct estate *e, const struct est_pool *p, char *out,
                           size_t size)
{
    size_t o = 0;

    out[0] = '\0';
    for (size_t i = 0; i < p->n_datastores && o < size; i++) {
        int n = snprintf(out + o, size - o, "%s%s", i ? ", " : "",
                         chk_pool_datastore(e, p, i));
        if (n < 0 || (size_t)n >= size - o) {
            snprintf(out + (o < size - 5 ? o : size - 5), 5, ", ..");
            break;
        }
        o += (size_t)n;
    }
}

static int run(struct chk_ctx *ctx, const struct estate *e)
{
    for (size_t i = 0; i < e->n_pools; i++) {
        const struct est_pool *p = &e->pools[i];
        double pct = chk_pool_free_pct(p);
        const struct chk_free_level *l = NULL;
        double threshold = 0;
        char msg[1024], dss[512], fr[32], to[32];

        if (pct < 0)
            continue; /* sizes unknown: not judged, never guessed */
        /* As datastore-free-space: exactly 5 % is not below 5 %. */
        l = chk_free_level(ctx, levels, sizeof(levels) / sizeof(levels[0]), p->size_free,
                           p->size_total, &threshold);
        if (!l)
            continue;
        datastore_list(e, p, dss, sizeof(dss));
        snprintf(msg, sizeof(msg),
                 "pool %s of array %s has %.1f %% free (%s of %s)%s%g%s; it backs %s",
                 p->name ? p->name : p->id, p->array, pct, chk_size(p->size_free, fr, sizeof(fr)),
                 chk_size(p->size_total, to, sizeof(to)), l->before, threshold, l->after, dss);
        /* The pool's evidence names every datastore it backs (thousands under one pool); a
         * what-if judge, one per datastore in a placement, would throw it away. */
        json_t *ev = chk_wants_evidence(ctx) ? chk_ev_pool(e, p) : json_object();
        ev = chk_ev_set(ev, "level", json_string(l->name));
        ev = chk_ev_free_params(ev, ctx);
        int rc = chk_emit_pool(ctx, p, l->severity, msg, ev);
        if (rc < 0)
            return rc;
    }
    /* An NFS datastore a configured array may serve but that is joined to no pool is said, not
     * skipped: its pool is not judged, and the reason is the user's to fix or to accept. */
    for (size_t i = 0; i < e->n_datastores; i++) {
        const struct est_datastore *d = &e->datastores[i];
        char why[1024], msg[1280];
        /* A datastore mounted by a name is not known to be the array's at all: a share of the
         * same name elsewhere is no ground for a finding (nfs-server-redundancy's evidence says
         * it was not matched). */
        if (d->nas_doubt == EST_NAS_BY_NAME || !chk_nas_doubt(d, why, sizeof(why)))
            continue;
        snprintf(msg, sizeof(msg), "NFS datastore %s: the array pool behind it is not judged: %s",
                 d->name, why);
        json_t *ev = json_pack("{s:s?, s:s?, s:s?, s:i, s:s}", "remote_host", d->nas_remote_host,
                               "remote_path", d->nas_remote_path, "nas_server",
                               d->nas_doubt_server, "nas_servers", d->nas_doubt_count,
                               "not_judged", why);
        int rc = chk_emit_datastore(ctx, d, SEV_INFO, msg, ev);
        if (rc < 0)
            return rc;
    }
    return 0;
}

const struct check chk_pool_free_space = {
    .id = "pool-free-space",
    .title = "Array pool behind datastores low on free space",
    .severity = SEV_CRITICAL,
    .rationale =
        "A datastore on a thin LUN can show plenty of free space while the array pool under it "
        "fills up, and a full pool stops every LUN in it. Per the Unity guide, Unity raises an "
        "alert below 30 % pool free space and invalidates snapshots and replication sessions "
        "below 5 %, and Dell EMC asks for at least 10 % free. Applied to the pools of configured [array NAME] "
        "sections behind one of the vCenter's datastores: a VMFS datastore's LUN (joined by WWN "
        "and naa. name), an NFS datastore's file system (the NFS share holding its path, "
        "/share or a folder under it, on the NAS server found by its address as "
        "nfs-server-redundancy finds it), a VVol datastore's storage container (the array's "
        "vmwareUUID in the datastore's URL); the pool's own alert threshold is shown in the "
        "evidence. An NFS datastore at a configured array's NAS server address that joins no "
        "pool (several NAS servers at its address that its share does not tell apart; only "
        "replication destinations there; no share of its server holds its path; the array's "
        "shares not read) is an info finding saying why it is not judged, never a silent skip. "
        "A datastore mounted by a host name is not matched (vslint resolves no names) and gets "
        "no finding: a share of the same name on an array is no proof.",
    .reference = "000_5bd48962a767ee9e.txt §1.1.1 (storage pool capacity)",
    .sources = chk_pool_capacity_sources,
    .own =
        "The levels are the guide's own for a pool; the severities are vslint's: a warning below "
        "30 % free (where Unity alerts), critical below 10 % (the guide's floor) and below 5 % "
        "(where the array invalidates snapshots and replication sessions). Only pools of "
        "configured arrays that back one of the vCenter's datastores (VMFS, NFS or VVol) are "
        "judged. The info finding on an NFS datastore whose pool cannot be told is vslint's, so "
        "that a datastore out of the rule's reach is seen.",
    .remediation =
        "Add drives to the pool (Unisphere: Storage > Pools > Expand Pool; uemcli /stor/config/"
        "pool -id <pool> extend), delete or expire snapshots in the pool, or move LUNs to "
        "another pool (Unisphere: LUN > Move); on the vSphere side reclaim dead space "
        "(esxcli storage vmfs unmap -l <datastore>) so freed blocks return to the pool.",
    .params = chk_free_params,
    .run = run,
};
