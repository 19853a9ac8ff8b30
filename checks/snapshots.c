/* Check snapshots: VMs with a snapshot older than 7 days or a snapshot chain deeper than 3,
 * one finding per VM carrying both facts when both apply. */
#include <errno.h>
#include <stdio.h>

#include "checks/check.h"
#include "checks/clones.h"

static const struct chk_param params[] = {
    {"max_age_days", 7, 0, 36500, "days", "warning when a snapshot is older than this"},
    {"max_chain_depth", 3, 1, 1000, "snapshots",
     "warning when a chain holds more snapshots than this (tree depth)"},
    {0},
};

/* Judges VM v; p: the estate's disk parents (linked clones). */
static int check_vm(struct chk_ctx *ctx, const struct estate *e, const struct chk_parents *p,
                    size_t v)
{
    double max_age_days = chk_param(ctx, "max_age_days");
    double max_depth = chk_param(ctx, "max_chain_depth");
    int64_t now = chk_now(ctx);
    const struct est_vm *vm = &e->vms[v];
    const struct est_snapshot *oldest = NULL;
    int depth = 0, n_old = 0, n_unknown_age = 0, n_clones;
    json_t *old_names, *clones;

    /* Snapshots by design: a replica VM of a replication product (config.managedBy) keeps its
     * restore points as snapshots, which the product ages and deletes itself. */
    if (!vm->n_snapshots || vm->managed_by)
        return 0;
    if (!(old_names = json_array()))
        return -ENOMEM;
    for (size_t i = 0; i < vm->n_snapshots; i++) {
        const struct est_snapshot *s = &vm->snapshots[i];
        if (s->depth > depth)
            depth = s->depth;
        /* A snapshot without a creation time cannot be aged; it still counts for depth. */
        if (s->created < 0) {
            n_unknown_age++;
            continue;
        }
        if (!oldest || s->created < oldest->created)
            oldest = s;
        if ((double)(now - s->created) > max_age_days * 86400.0) {
            n_old++;
            old_names = chk_ev_append(old_names, json_string(s->name ? s->name : ""));
        }
    }
    int deep = depth > max_depth;
    if (!n_old && !deep) {
        json_decref(old_names);
        return 0;
    }
    /* A golden image or the source of linked clones: other VMs' disks are children of its
     * snapshot's disks, and deleting or consolidating the snapshot would break them. Told,
     * as info, never advised away. */
    if (!(clones = json_array()) || (n_clones = chk_vm_clone_children(p, e, v, clones)) < 0) {
        json_decref(clones);
        json_decref(old_names);
        return -ENOMEM;
    }

    /* The oldest one's age in whole days, as a person counts them (a snapshot of 10 days and
     * 5 hours is 10 days old): in fractions it differed at every evaluation of an unchanged
     * estate, so every snapshots finding was rewritten each run and two reports of the same
     * estate differed. What is flagged is still judged on the exact age above. */
    json_int_t oldest_days = oldest ? (json_int_t)((now - oldest->created) / 86400) : -1;
    char msg[512], part_old[200] = "", part_deep[100] = "";
    /* Flagged, yet within the threshold in whole days (7 days and an hour past a 7-day limit,
     * 0.7 days past a 0.5-day one): "7 days old" would read as not over the limit, so the
     * message says "more than" the limit, which moves no more often than the whole days. */
    if (n_old && (double)oldest_days <= max_age_days)
        snprintf(part_old, sizeof(part_old),
                 " %d snapshot%s older than %g days (oldest \"%s\", more than %g days old)",
                 n_old, n_old == 1 ? "" : "s", max_age_days, oldest->name ? oldest->name : "",
                 max_age_days);
    else if (n_old)
        snprintf(part_old, sizeof(part_old),
                 " %d snapshot%s older than %g days (oldest \"%s\", %lld day%s old)", n_old,
                 n_old == 1 ? "" : "s", max_age_days, oldest->name ? oldest->name : "",
                 (long long)oldest_days, oldest_days == 1 ? "" : "s");
    if (deep)
        snprintf(part_deep, sizeof(part_deep), " a snapshot chain %d deep (threshold %g)", depth,
                 max_depth);
    snprintf(msg, sizeof(msg), "%s has%s%s%s; %s", vm->name, part_old, n_old && deep ? " and" : "",
             part_deep,
             n_clones ? "linked clones depend on its snapshot disks (the evidence names "
                        "them): keep the snapshot, do not delete or consolidate it"
                      : "delete or consolidate snapshots");

    json_t *ev = json_pack("{s:i, s:i, s:i, s:o, s:s?, s:o?, s:i, s:b, s:b, s:f, s:f}", "snapshots",
                           (int)vm->n_snapshots, "max_depth", depth, "older_than_threshold", n_old,
                           "old_snapshots", old_names, "oldest_name", oldest ? oldest->name : NULL,
                           "oldest_age_days", oldest ? json_integer(oldest_days) : NULL, "unknown_age",
                           n_unknown_age, "too_old", n_old > 0, "too_deep", deep, "max_age_days",
                           max_age_days, "max_chain_depth", max_depth);
    /* NULL ev is out of memory; json_pack has released old_names then too. */
    /* Its creation time, which does not move: what a site rule or a query ages exactly. */
    ev = chk_ev_set(ev, "oldest_created", oldest ? chk_ev_time(oldest->created) : json_null());
    ev = chk_ev_set(ev, "linked_clones", clones);
    return chk_emit_vm(ctx, vm, n_clones ? SEV_INFO : SEV_WARNING, msg, ev);
}

static int run(struct chk_ctx *ctx, const struct estate *e)
{
    return chk_each_vm_parents(ctx, e, check_vm);
}

/* The seeds' words this check rests on, verbatim (tests/unit/test_registry.c). */
const struct check chk_snapshots = {
    .id = "snapshots",
    .title = "Old snapshots or long snapshot chains",
    .severity = SEV_WARNING,
    .rationale =
        "The Unity guide (§4.2) warns that the array's snapshots add CPU load and drive IOPS and "
        "use pool capacity until they are deleted. A VM snapshot costs alike: its delta disk "
        "grows as the VM writes and holds datastore (and pool) capacity until it is deleted, and "
        "every level of a chain adds read overhead. One older than 7 days or a chain deeper "
        "than 3 is flagged (vslint's defaults; the guide gives no number). Snapshots without a "
        "creation time count for the chain depth but are not aged (the evidence says how many). "
        "Snapshots by design are exempt or downgraded: a replica VM of a replication product "
        "(config.managedBy set) is skipped, and a VM whose snapshot disks other VMs' disks are "
        "children of (a golden image, the source of linked clones) is info, told to keep the "
        "snapshot. A delta disk without a snapshot is snapshot-consolidation's.",
    .reference = "000_5bd48962a767ee9e.txt §4.2 (snapshots)",
    .sources = chk_snapshot_cost_sources,
    .own =
        "The seed speaks of the array's snapshots (their CPU load and pool capacity); vslint "
        "applies its point to vSphere VM snapshots, whose delta disks grow as the VM writes and "
        "hold datastore (and pool) capacity until deleted, and whose chains add read overhead. "
        "The limits, 7 days (max_age_days) and 3 deep (max_chain_depth), and the warning are "
        "vslint's: the seeds give no number.",
    .remediation =
        "Delete snapshots that are no longer needed, or consolidate: PowerCLI Get-VM <vm> | "
        "Get-Snapshot | Where-Object {$_.Created -lt (Get-Date).AddDays(-7)} | Remove-Snapshot "
        "-Confirm:$false; on the host: vim-cmd vmsvc/snapshot.removeall <vmid>. Check for "
        "'Virtual machine disks consolidation is needed' afterwards.",
    .params = params,
    .run = run,
};
