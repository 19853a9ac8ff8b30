/* Check snapshot-consolidation: VMs running on delta disks nobody sees: vCenter's "consolidation
 * needed" (runtime.consolidationNeeded), and delta disks on a VM without snapshots (a backup
 * product that failed to remove its snapshot leaves the VM writing into a growing -00000N.vmdk).
 * Critical when such a delta sits on a datastore under the free-space thresholds. */
#include <errno.h>
#include <stdio.h>

#include "checks/check.h"
#include "checks/clones.h"

/* The free-space levels of datastore-free-space, most severe first: a growing delta on a
 * datastore below any of them is critical. */
static const struct chk_free_level levels[] = {
    {"snap_free_pct", SEV_CRITICAL, "snapshots_at_risk", "", ""},
    {"crit_free_pct", SEV_CRITICAL, "critical", "", ""},
    {"warn_free_pct", SEV_CRITICAL, "warning", "", ""},
};

/* Whether disk d's datastore is measured and below a free-space threshold; its name into *low
 * when it is the first found. */
static int on_low_datastore(struct chk_ctx *ctx, const struct estate *e, const struct est_disk *d,
                            const char **low)
{
    const struct est_datastore *ds;
    double threshold;

    if (d->datastore >= e->n_datastores)
        return 0;
    ds = &e->datastores[d->datastore];
    /* Stale or unknown sizes are not judged (as datastore-free-space skips them). */
    if (ds->accessible != 1 || ds->capacity <= 0 || ds->free_space < 0)
        return 0;
    if (!chk_free_level(ctx, levels, sizeof(levels) / sizeof(levels[0]), ds->free_space,
                        ds->capacity, &threshold))
        return 0;
    if (!*low)
        *low = ds->name;
    return 1;
}

static int check_vm(struct chk_ctx *ctx, const struct estate *e, const struct chk_parents *p,
                    size_t v)
{
    const struct est_vm *vm = &e->vms[v];
    int consolidate = vm->consolidation_needed == 1;
    int n_orphans = 0, n_low = 0, n_clones;
    const char *low = NULL, *first = NULL;
    json_t *deltas = json_array(), *clones = json_array();
    char msg[1024];
    int r = -ENOMEM;

    /* A template runs no guest: nothing writes into its deltas. */
    if (vm->template == 1) {
        r = 0;
        goto out;
    }
    if (!deltas || !clones)
        goto out;
    /* Disks other VMs are linked clones of: consolidating or deleting under them breaks the
     * clones, so no finding may advise it. */
    if ((n_clones = chk_vm_clone_children(p, e, v, clones)) < 0)
        goto out;
    for (size_t k = 0; k < vm->n_disks; k++) {
        const struct est_disk *d = &vm->disks[k];
        if (!chk_disk_is_delta(d))
            continue;
        /* A delta with no snapshot to explain it is orphaned, unless it is by design: a
         * linked clone's (its parent is another VM's disk, in another folder), a replica's
         * (a replication product keeps restore points as deltas: config.managedBy), or one
         * other VMs' clones hang off. */
        int orphan = vm->n_snapshots == 0 && !vm->managed_by && n_clones == 0 &&
                     (!d->parent || chk_disk_own_delta(d));
        if (!orphan && !consolidate)
            continue;
        n_orphans += orphan;
        n_low += on_low_datastore(ctx, e, d, &low);
        if (!first)
            first = d->file_name ? d->file_name : d->label;
        json_t *j = chk_ev_set(chk_ev_disk(e, d), "parent",
                               d->parent ? json_string(d->parent) : json_null());
        if (!(deltas = chk_ev_append(deltas, chk_ev_set(j, "orphaned", json_boolean(orphan)))))
            goto out;
    }
    /* Consolidation needed with no delta in sight (the parent was not reported): the VM's
     * disks are where the redundant deltas live. */
    if (consolidate && json_array_size(deltas) == 0)
        for (size_t k = 0; k < vm->n_disks; k++)
            n_low += on_low_datastore(ctx, e, &vm->disks[k], &low);
    if (!consolidate && !n_orphans) {
        r = 0;
        goto out;
    }

    enum vsl_severity sev = n_low ? SEV_CRITICAL : SEV_WARNING;
    char where[300] = "";
    if (low)
        snprintf(where, sizeof(where),
                 "; the delta grows on %s, which is under the free-space "
                 "thresholds",
                 low);
    if (consolidate)
        snprintf(msg, sizeof(msg),
                 "%s needs disk consolidation: it runs on delta disks that no snapshot in its "
                 "tree accounts for%s; %s",
                 vm->name, where,
                 n_clones ? "linked clones depend on its disks: do not consolidate until they "
                            "are moved off them (the evidence names them)"
                          : "consolidate it (vSphere Client: Snapshots > Consolidate)");
    else
        snprintf(msg, sizeof(msg),
                 "%s has no snapshot but %d disk(s) are delta files (%s): an orphaned snapshot "
                 "delta, e.g. left by a backup product, keeps growing%s; create a snapshot and "
                 "delete all snapshots (or consolidate) to merge it",
                 vm->name, n_orphans, first ? first : "a disk", where);
    json_t *ev =
        json_pack("{s:b, s:i, s:i, s:o, s:s?, s:s?}", "consolidation_needed", consolidate,
                  "snapshots", (int)vm->n_snapshots, "orphaned_deltas", n_orphans, "delta_disks",
                  deltas, "low_datastore", low, "managed_by", vm->managed_by);
    deltas = NULL; /* json_pack took it, even when it failed */
    ev = chk_ev_set(ev, "linked_clones", clones);
    clones = NULL;
    r = chk_emit_vm(ctx, vm, sev, msg, chk_ev_free_params(ev, ctx));
out:
    json_decref(deltas);
    json_decref(clones);
    return r;
}

static int run(struct chk_ctx *ctx, const struct estate *e)
{
    return chk_each_vm_parents(ctx, e, check_vm);
}

const struct check chk_snapshot_consolidation = {
    .id = "snapshot-consolidation",
    .title = "VMs running on delta disks that need consolidation",
    .severity = SEV_CRITICAL,
    .rationale =
        "A backup product that fails to remove its snapshot can leave a VM with an empty "
        "snapshot tree writing into a growing delta (-00000N.vmdk): the snapshot cost of the "
        "guide (pool capacity, CPU and IOPS) with nothing in the snapshot list to show for it. "
        "A VM vCenter marks runtime.consolidationNeeded, or with a delta disk (backing.parent "
        "set, or a file named name-NNNNNN.vmdk) and no snapshot, is a warning; critical when "
        "the delta sits on a datastore under datastore-free-space's thresholds (warn_free_pct "
        "and below), where it can fill the datastore. Deltas by design are not judged: a linked "
        "clone's (its parent is another VM's disk), a replica's of a replication product "
        "(config.managedBy set), and those other VMs' linked clones hang off, which must never "
        "be consolidated. Templates are skipped.",
    .reference = "000_5bd48962a767ee9e.txt §4.2 (snapshots); vSphere \"Consolidate Snapshots\"",
    .sources = chk_snapshot_cost_sources,
    .own = "The whole rule is vslint's: the guide speaks of snapshots' cost in pool capacity, "
           "CPU and IOPS, not of consolidation. A delta nobody sees is that cost without an end, "
           "and vCenter's own consolidationNeeded flag says the same; the severities (warning, "
           "critical on a datastore under datastore-free-space's thresholds, where the delta can "
           "fill it) are vslint's, as are the exemptions for linked clones and replicas, whose "
           "deltas exist by design.",
    .remediation =
        "Consolidate: vSphere Client: the VM > Snapshots > Consolidate; PowerCLI (Get-VM <vm>)."
        "ExtensionData.ConsolidateVMDisks(). For an orphaned delta with no snapshot listed, "
        "take a snapshot and then delete all snapshots (Get-VM <vm> | New-Snapshot -Name tmp; "
        "Get-VM <vm> | Get-Snapshot | Remove-Snapshot -Confirm:$false), after making sure the "
        "backup product's job is not running.",
    .params = chk_free_params,
    .run = run,
};
