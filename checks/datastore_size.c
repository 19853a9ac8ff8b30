/* Check datastore-size: VMFS datastores outside the guide's 500-750 GB band, or above VMware's
 * 64 TB maximum, in the binary units vSphere shows (a LUN created as "750 GB" is 750 GiB); a
 * datastore on which one VM keeps more disk than the band is exempt from the band. */
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "checks/check.h"

static const struct chk_param params[] = {
    {"min_gb", 500, 0, 1e6, "GB",
     "warning when a VMFS datastore is smaller than this (GB as vSphere shows them: 2^30 bytes)"},
    {"max_gb", 750, 0, 1e6, "GB",
     "warning when a VMFS datastore is larger than this (2^30-byte GB), unless a VM's disks on "
     "it total more than this"},
    {"max_size_tib", 64, 0, 1024, "TiB",
     "critical above VMware's maximum datastore size (64 TiB, 2^46 bytes, which vSphere writes "
     "64 TB)"},
    {0},
};

struct largest {
    int64_t bytes;  /* the most disk one VM keeps on the datastore, 0 when none */
    const char *vm; /* that VM */
};

/* For every datastore, the VM whose virtual disks on it add up to the most, and that sum. RDMs
 * keep their data on a LUN, not on the datastore (only the mapping file lives there), so they
 * do not count. A disk whose datastore is unknown counts for every datastore its VM uses. */
static struct largest *largest_vms(const struct estate *e)
{
    size_t n = e->n_datastores ? e->n_datastores : 1;
    struct largest *big = calloc(n, sizeof(*big));
    int64_t *sum = calloc(n, sizeof(*sum)); /* this VM's bytes per datastore */
    size_t *touched = calloc(n, sizeof(*touched));

    if (!big || !sum || !touched) {
        free(big);
        big = NULL;
        goto out;
    }
    for (size_t v = 0; v < e->n_vms; v++) {
        const struct est_vm *vm = &e->vms[v];
        size_t nt = 0;
        for (size_t k = 0; k < vm->n_disks; k++) {
            const struct est_disk *d = &vm->disks[k];
            if (d->capacity_bytes <= 0 || chk_disk_rdm(d))
                continue;
            const size_t *where = &d->datastore;
            size_t n_where = 1;
            if (d->datastore == EST_NONE || d->datastore >= e->n_datastores) {
                where = vm->datastores;
                n_where = vm->n_datastores;
            }
            for (size_t j = 0; j < n_where; j++) {
                size_t ds = where[j];
                if (ds >= e->n_datastores)
                    continue;
                if (sum[ds] == 0)
                    touched[nt++] = ds;
                /* Saturating: a confused server's sizes must not wrap. */
                sum[ds] = d->capacity_bytes > INT64_MAX - sum[ds] ? INT64_MAX
                                                                  : sum[ds] + d->capacity_bytes;
            }
        }
        for (size_t t = 0; t < nt; t++) {
            size_t ds = touched[t];
            if (sum[ds] > big[ds].bytes) {
                big[ds].bytes = sum[ds];
                big[ds].vm = vm->name;
            }
            sum[ds] = 0;
        }
    }
out:
    free(sum);
    free(touched);
    return big;
}

static int run(struct chk_ctx *ctx, const struct estate *e)
{
    double min_gb = chk_param(ctx, "min_gb");
    double max_gb = chk_param(ctx, "max_gb");
    double max_tib = chk_param(ctx, "max_size_tib");
    double min_b = min_gb * CHK_GIB, max_b = max_gb * CHK_GIB, limit_b = max_tib * CHK_TIB;
    int rc = 0;
    struct largest *big = largest_vms(e);

    if (!big)
        return -ENOMEM;
    for (size_t i = 0; i < e->n_datastores; i++) {
        const struct est_datastore *d = &e->datastores[i];
        const char *name = d->name;
        double cap = (double)d->capacity;
        enum vsl_severity sev;
        const char *level;
        char msg[512], size[32];

        /* Section 3.5 sizes LUNs: VMFS only. NFS, vSAN and VVol datastores have no LUN of
         * their own, and the guide's NFS section gives no size. A local VMFS volume (a host's
         * boot disk, "datastore1") is the size of that disk, no array LUN anyone sized, and
         * holds no shared VMs. Unknown sizes are skipped. */
        if (!d->type || strcmp(d->type, "VMFS") || d->vmfs_local == 1 || d->accessible != 1 ||
            d->capacity <= 0)
            continue;
        chk_size(d->capacity, size, sizeof(size));
        if (cap > limit_b) {
            sev = SEV_CRITICAL;
            level = "above_maximum";
            snprintf(msg, sizeof(msg),
                     "%s is %s, above %g TB (VMware supports datastores of at most 64 TB); "
                     "split it into datastores of %g-%g GB",
                     name, size, max_tib, min_gb, max_gb);
        } else if (cap > max_b) {
            if (big[i].bytes > max_b)
                continue; /* a VM keeps more than the band on it: the guide exempts it */
            sev = SEV_WARNING;
            level = "above_band";
            snprintf(msg, sizeof(msg),
                     "%s is %s, above the %g-%g GB band (the guide recommends 500-750 GB; "
                     "threshold %g GB), and no VM keeps more than %g GB of disks on it that would "
                     "need it",
                     name, size, min_gb, max_gb, max_gb, max_gb);
        } else if (cap < min_b) {
            sev = SEV_WARNING;
            level = "below_band";
            snprintf(msg, sizeof(msg),
                     "%s is %s, below the %g-%g GB band (the guide recommends 500-750 GB; "
                     "threshold %g GB)",
                     name, size, min_gb, max_gb, min_gb);
        } else {
            continue;
        }

        rc = chk_emit_datastore(
            ctx, d, sev, msg,
            json_pack("{s:I, s:f, s:f, s:f, s:f, s:I, s:s?, s:s, s:s}", "capacity_bytes",
                      (json_int_t)d->capacity, "capacity_gb", cap / CHK_GIB, "min_gb", min_gb,
                      "max_gb", max_gb, "max_size_tib", max_tib, "largest_vm_disks_bytes",
                      (json_int_t)big[i].bytes, "largest_vm", big[i].vm, "units",
                      "GB = 2^30 bytes, as vSphere shows them", "level", level));
        if (rc < 0)
            break;
    }
    free(big);
    return rc;
}

/* The seeds' words this check rests on, verbatim (tests/unit/test_registry.c). */
static const struct chk_source sources[] = {
    {"000_5bd48962a767ee9e.txt", "§3.5.1",
     "VMware currently supports a maximum datastore size of 64 TB."},
    {"000_5bd48962a767ee9e.txt", "§3.5.1",
     "Since LUNs and vSphere datastores can be expanded to address future growth, the "
     "recommendation is to create LUNs and datastores with sizes in the range of 500-750GB for "
     "most environments."},
    {"000_5bd48962a767ee9e.txt", "§3.5.1",
     "Virtual machines requiring a large virtual disk would require a larger LUN/datastore size, "
     "and would not fall outside of these best practices."},
    {0},
};

const struct check chk_datastore_size = {
    .id = "datastore-size",
    .title = "VMFS datastore size outside the recommended band",
    .severity = SEV_CRITICAL,
    .rationale =
        "The guide sizes LUNs and their VMFS datastores at 500-750 GB so that each holds a "
        "manageable number of VMs (10-15 with 40 GB disks) and I/O contention stays low; VMware "
        "supports at most 64 TB per datastore. Sizes are judged and printed as vSphere shows "
        "them, in binary units (1 GB = 2^30 bytes: a LUN created as 750 GB is inside the band). "
        "A datastore on which one VM keeps more virtual disk than the band (one large disk, or "
        "several that add up) is exempt from the upper bound, as the guide says large disks need "
        "large datastores (RDMs do not count: their data is on their own LUN). Only VMFS "
        "datastores are judged: the sizing is LUN sizing, and the guide gives no size for NFS, "
        "vSAN or VVol datastores. A local VMFS datastore (a host's boot disk, vmfs.local) is "
        "skipped too: its size is the disk's, not a LUN's anyone chose. A spanned VMFS volume is "
        "judged by its whole capacity, and its finding names every LUN it spans (extents). "
        "Inaccessible datastores and unknown capacities are skipped.",
    .reference = "000_5bd48962a767ee9e.txt §3.5.1 (LUN size)",
    .sources = sources,
    .own =
        "The severities are vslint's: outside the band a warning, above 64 TB critical (beyond "
        "what VMware supports). GB are read as vSphere prints them (2^30 bytes). Only shared VMFS "
        "datastores are judged, since the guide sizes LUNs; what counts as a VM \"requiring a "
        "large virtual disk\" is vslint's reading: one VM keeping more disk on the datastore than "
        "the band's upper bound.",
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
