/* Check thin-overcommit: datastores whose thin disks could grow past their capacity by more than
 * a set margin, i.e. (capacity - free + uncommitted) / capacity above 150 %. */
#include <stdio.h>

#include "checks/check.h"

static const struct chk_param params[] = {
    {"max_overcommit_pct", 150, 0, 100000, "%",
     "warning when provisioned space (used + uncommitted) exceeds this share of capacity"},
    {0},
};

static int run(struct chk_ctx *ctx, const struct estate *e)
{
    double max_pct = chk_param(ctx, "max_overcommit_pct");
    const struct est_datastore *d;
    int rc;

    /* Inaccessible datastores and unknown capacities are skipped (chk_measured_datastore). */
    for (size_t i = 0; (d = chk_measured_datastore(e, &i)); i++) {
        char msg[512], used[32], uncommitted[32], size[32];
        /* vCenter leaves summary.uncommitted out when it is 0, so unknown counts as 0. */
        int64_t unc = d->uncommitted > 0 ? d->uncommitted : 0;
        double cap = (double)d->capacity;
        double provisioned = (double)(d->capacity - d->free_space) + (double)unc;
        /* Compare provisioned * 100 with max * capacity rather than a rounded ratio. */
        if (!(provisioned * 100.0 > max_pct * cap))
            continue;
        double pct = provisioned * 100.0 / cap;
        snprintf(msg, sizeof(msg),
                 "%s is %.0f %% provisioned (%s used + %s uncommitted on %s); if its thin disks "
                 "fill up the datastore runs out of space (threshold %g %%)",
                 d->name, pct, chk_size(d->capacity - d->free_space, used, sizeof(used)),
                 chk_size(unc, uncommitted, sizeof(uncommitted)),
                 chk_size(d->capacity, size, sizeof(size)), max_pct);
        rc = chk_emit_datastore(
            ctx, d, SEV_WARNING, msg,
            json_pack("{s:I, s:I, s:I, s:b, s:f, s:f}", "capacity_bytes", (json_int_t)d->capacity,
                      "free_bytes", (json_int_t)d->free_space, "uncommitted_bytes", (json_int_t)unc,
                      "uncommitted_reported", d->uncommitted >= 0, "provisioned_pct", pct,
                      "max_overcommit_pct", max_pct));
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* The seeds' words this check rests on, verbatim (tests/unit/test_registry.c). */
static const struct chk_source sources[] = {
    {CHK_SEED_YELLOW_BRICKS, "Performance: Thin Provisioning", CHK_QUOTE_OVERCOMMIT},
    {0},
};

const struct check chk_thin_overcommit = {
    .id = "thin-overcommit",
    .title = "Datastore overcommitted by thin provisioning",
    .severity = SEV_WARNING,
    .rationale =
        "Thin disks only take space as guests write, so a datastore can promise more than it "
        "holds; when they fill up, VMs stop on out-of-space errors. Yellow Bricks advises alarms "
        "on the level of overcommitment and gives no number: the 150 % is vslint's. Provisioned space is capacity - free + uncommitted; "
        "vCenter omits summary.uncommitted when it is 0, so a missing value counts as 0. "
        "Applies to every datastore type (a thin disk can overcommit NFS as well as VMFS); a "
        "finding names every LUN the datastore spans (extents). Inaccessible datastores and "
        "unknown capacity or free space are skipped.",
    .reference = "003_c6252f56ada835be.txt (Performance: Thin Provisioning: overcommitment alarms)",
    .sources = sources,
    .own =
        "The post asks to watch the level of overcommitment and gives no number; the limit of 150 "
        "% of capacity provisioned (max_overcommit_pct) and the warning are vslint's, a level at "
        "which a third of the promised space cannot be delivered, so that guests filling their "
        "thin disks would stop on out-of-space errors. Applying it to every datastore type is "
        "vslint's too: a thin disk overcommits NFS as it does VMFS.",
    .remediation =
        "Move thin-provisioned VMs to datastores with room (PowerCLI: Move-VM -VM <vm> "
        "-Datastore <other-ds>), grow the datastore, or inflate disks that must not run out "
        "(vmkfstools --inflatedisk <disk>.vmdk). Set a vCenter alarm on datastore usage and "
        "overcommitment.",
    .params = params,
    .needs = CHK_NEEDS_DATASTORE,
    .run = run,
};
