/* Check datastore-size: VMFS datastores outside the guide's 500-750 GB band, or above VMware's
 * 64 TB maximum; a datastore that holds a virtual disk larger than the band is exempt from the
 * band. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks/check.h"

static const struct chk_param params[] = {
    {"min_gb", 500, 0, 1e6, "GB",
     "warning when a VMFS datastore is smaller than this (10^9 bytes)"},
    {"max_gb", 750, 0, 1e6, "GB",
     "warning when a VMFS datastore is larger than this, unless it holds a virtual disk larger "
     "than this"},
    {"max_size_tib", 64, 0, 1024, "TiB",
     "critical above VMware's maximum datastore size (the guide's \"64 TB\" is the VMFS limit, "
     "64 TiB = 2^46 bytes)"},
    {0},
};

struct largest {
    int64_t bytes;  /* the largest virtual disk on the datastore, 0 when none */
    const char *vm; /* the VM that owns it */
};

/* Raises big[ds] to disk d of vm when d is larger. */
static void note_disk(struct largest *big, size_t ds, const struct est_vm *vm,
                      const struct est_disk *d)
{
    if (d->capacity_bytes > big[ds].bytes) {
        big[ds].bytes = d->capacity_bytes;
        big[ds].vm = vm->name;
    }
}

/* For every datastore, the largest virtual disk stored on it. RDMs keep their data on a LUN, not
 * on the datastore (only the mapping file lives there), so they do not count. A disk whose
 * datastore is unknown counts for every datastore its VM uses. */
static struct largest *largest_disks(const struct estate *e)
{
    struct largest *big = calloc(e->n_datastores ? e->n_datastores : 1, sizeof(*big));
    if (!big)
        return NULL;
    for (size_t v = 0; v < e->n_vms; v++) {
        const struct est_vm *vm = &e->vms[v];
        for (size_t k = 0; k < vm->n_disks; k++) {
            const struct est_disk *d = &vm->disks[k];
            if (d->capacity_bytes <= 0 || (d->format && !strncmp(d->format, "rdm", 3)))
                continue;
            if (d->datastore != EST_NONE && d->datastore < e->n_datastores) {
                note_disk(big, d->datastore, vm, d);
                continue;
            }
            for (size_t j = 0; j < vm->n_datastores; j++)
                if (vm->datastores[j] < e->n_datastores)
                    note_disk(big, vm->datastores[j], vm, d);
        }
    }
    return big;
}

static int run(struct chk_ctx *ctx, const struct estate *e)
{
    double min_gb = chk_param(ctx, "min_gb");
    double max_gb = chk_param(ctx, "max_gb");
    double max_tib = chk_param(ctx, "max_size_tib");
    double min_b = min_gb * 1e9, max_b = max_gb * 1e9, limit_b = max_tib * 1099511627776.0;
    int rc = 0;
    struct largest *big = largest_disks(e);

    if (!big)
        return -ENOMEM;
    for (size_t i = 0; i < e->n_datastores; i++) {
        const struct est_datastore *d = &e->datastores[i];
        const char *name = d->name;
        double cap = (double)d->capacity;
        enum chk_severity sev;
        const char *level;
        char msg[512];

        /* Section 3.5 sizes LUNs: VMFS only. NFS, vSAN and VVol datastores have no LUN of
         * their own, and the guide's NFS section gives no size. Unknown sizes are skipped. */
        if (!d->type || strcmp(d->type, "VMFS") || d->accessible != 1 || d->capacity <= 0)
            continue;
        if (cap > limit_b) {
            sev = CHK_CRITICAL;
            level = "above_maximum";
            snprintf(msg, sizeof(msg),
                     "%s is %.2f TB (%.2f TiB), above VMware's maximum datastore size of %g TiB; "
                     "split it into datastores of %g-%g GB",
                     name, cap / 1e12, cap / 1099511627776.0, max_tib, min_gb, max_gb);
        } else if (cap > max_b) {
            if (big[i].bytes > max_b)
                continue; /* holds a disk larger than the band: the guide exempts it */
            sev = CHK_WARNING;
            level = "above_band";
            snprintf(msg, sizeof(msg),
                     "%s is %.1f GB, above the guide's %g-%g GB datastore size (threshold %g GB), "
                     "and holds no virtual disk larger than %g GB that would need it",
                     name, cap / 1e9, min_gb, max_gb, max_gb, max_gb);
        } else if (cap < min_b) {
            sev = CHK_WARNING;
            level = "below_band";
            snprintf(msg, sizeof(msg),
                     "%s is %.1f GB, below the guide's %g-%g GB datastore size (threshold %g GB)",
                     name, cap / 1e9, min_gb, max_gb, min_gb);
        } else {
            continue;
        }

        json_t *ev =
            json_pack("{s:I, s:f, s:f, s:f, s:f, s:I, s:s?, s:s}", "capacity_bytes",
                      (json_int_t)d->capacity, "capacity_gb", cap / 1e9, "min_gb", min_gb, "max_gb",
                      max_gb, "max_size_tib", max_tib, "largest_disk_bytes",
                      (json_int_t)big[i].bytes, "largest_disk_vm", big[i].vm, "level", level);
        if (!ev) {
            rc = -ENOMEM;
            break;
        }
        rc = chk_emit(ctx, &(struct chk_emit){
                               .severity = sev,
                               .object_type = "datastore",
                               .object_moref = d->moref,
                               .object_name = name,
                               .message = msg,
                               .evidence = ev,
                           });
        if (rc < 0)
            break;
    }
    free(big);
    return rc;
}

const struct check chk_datastore_size = {
    .id = "datastore-size",
    .title = "VMFS datastore size outside the recommended band",
    .severity = CHK_CRITICAL,
    .rationale =
        "The guide sizes LUNs and their VMFS datastores at 500-750 GB so that each holds a "
        "manageable number of VMs (10-15 with 40 GB disks) and I/O contention stays low; VMware "
        "supports at most 64 TB (64 TiB) per datastore. A datastore that holds a virtual disk "
        "larger than the band is exempt from the upper bound, as the guide says large disks need "
        "large datastores (RDMs do not count: their data is on their own LUN). Only VMFS "
        "datastores are judged: the sizing is LUN sizing, and the guide gives no size for NFS, "
        "vSAN or VVol datastores. Inaccessible datastores and unknown capacities are skipped.",
    .reference = "000_5bd48962a767ee9e.txt §3.5.1 (LUN size)",
    .remediation =
        "Provision new LUNs of 500-750 GB and move VMs there with Storage vMotion (PowerCLI: "
        "Move-VM -VM <vm> -Datastore <new-ds>), then unmount and delete the old datastore; grow "
        "a small datastore on the array and then in vSphere (Datastore > Increase Datastore "
        "Capacity, or vmkfstools --growfs). Where your estate needs other sizes, set min_gb and "
        "max_gb in [check datastore-size].",
    .params = params,
    .needs = CHK_NEEDS_DATASTORE,
    .run = run,
};
