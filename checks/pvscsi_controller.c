/* Check pvscsi-controller: VMs with many or large disks (more than 3, or more than 750 GiB in
 * all) on the emulated LSI Logic or BusLogic controllers rather than VMware Paravirtual SCSI. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "checks/check.h"

static const struct chk_param params[] = {
    {"max_disks", 3, 0, 1000, "disks",
     "a VM with more disks than this on emulated LSI Logic/BusLogic controllers should have "
     "them on PVSCSI"},
    {"max_disk_gb", 750, 0, 1e6, "GiB",
     "a VM with more disk capacity than this on emulated controllers (GiB, 2^30 bytes, as "
     "vSphere shows sizes) should have it on PVSCSI"},
    {0},
};

#define GIB ((double)(1LL << 30))

/* The emulated SCSI controllers the guide's advice is about (000 §3.6: PVSCSI rather than the
 * LSI Logic/BusLogic default). Disks elsewhere are not judged: PVSCSI itself, the virtual NVMe
 * controller (VMware's choice for all-flash), SATA and IDE, and an unknown controller. */
static int emulated(const char *type)
{
    return type && (!strcmp(type, "VirtualLsiLogicController") ||
                    !strcmp(type, "VirtualLsiLogicSASController") ||
                    !strcmp(type, "VirtualBusLogicController"));
}

static int run(struct chk_ctx *ctx, const struct estate *e)
{
    double max_disks = chk_param(ctx, "max_disks");
    double max_gib = chk_param(ctx, "max_disk_gb");
    int rc;

    for (size_t v = 0; v < e->n_vms; v++) {
        const struct est_vm *vm = &e->vms[v];
        int64_t total = 0;
        int n_emulated = 0, n_unknown_ctl = 0, n_unknown_cap = 0;
        json_t *types;

        /* A template runs no I/O; it is judged when deployed. */
        if (vm->template == 1 || !vm->n_disks)
            continue;
        if (!(types = json_array()))
            return -ENOMEM;
        /* "Heavy" is judged on the emulated controllers' disks alone: a boot disk kept on LSI
         * Logic beside data disks on PVSCSI (a deliberate layout: the guest boots without the
         * PVSCSI driver) is one light disk, not a heavy VM. */
        for (size_t k = 0; k < vm->n_disks; k++) {
            const struct est_disk *d = &vm->disks[k];
            const char *type =
                d->controller < vm->n_controllers ? vm->controllers[d->controller].type : NULL;
            if (!type) {
                n_unknown_ctl++;
                continue;
            }
            if (!emulated(type))
                continue;
            n_emulated++;
            if (d->capacity_bytes >= 0)
                /* Saturate: sizes come from vCenter, and a sum past int64 is undefined. */
                total =
                    d->capacity_bytes > INT64_MAX - total ? INT64_MAX : total + d->capacity_bytes;
            else
                n_unknown_cap++;
            if (chk_append_unique(types, type) < 0) {
                json_decref(types);
                return -ENOMEM;
            }
        }
        if (!n_emulated || !((double)n_emulated > max_disks || (double)total > max_gib * GIB)) {
            json_decref(types);
            continue;
        }

        char msg[512];
        const char *first = json_string_value(json_array_get(types, 0));
        snprintf(msg, sizeof(msg),
                 "%s has %d disk%s (%.1f GiB in all) on %s%s, an emulated controller, not "
                 "ParaVirtual SCSI, which gives deeper queues and less CPU per I/O "
                 "(thresholds: more than %g disks or %g GiB on emulated controllers)",
                 vm->name, n_emulated, n_emulated == 1 ? "" : "s", total / GIB, first,
                 json_array_size(types) > 1 ? " and others" : "", max_disks, max_gib);
        json_t *ev =
            json_pack("{s:i, s:i, s:I, s:f, s:o, s:i, s:i, s:f, s:f}", "disks", (int)vm->n_disks,
                      "emulated_controller_disks", n_emulated, "emulated_disk_bytes",
                      (json_int_t)total, "emulated_disk_gib", total / GIB, "controller_types",
                      types, "unknown_controller_disks", n_unknown_ctl, "unknown_capacity_disks",
                      n_unknown_cap, "max_disks", max_disks, "max_disk_gb", max_gib);
        /* NULL ev is out of memory; json_pack has released types then too. */
        rc = chk_emit_vm(ctx, vm, SEV_INFO, msg, ev);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* The seeds' words this check rests on, verbatim (tests/unit/test_registry.c). */
static const struct chk_source sources[] = {
    {"000_5bd48962a767ee9e.txt", "§3.6",
     "The best practice is to maintain the automatically selected virtual SCSI controller under "
     "most circumstances. In some cases, changing to the VMware Paravirtual SCSI controller may "
     "result in better I/O performance as well as reduced CPU utilization on the VM."},
    {"002_5ebbfcf31961a23f.txt", "Running Guest Level BenchMark!",
     "At times there will be contention at the virtual disk level because of the type of virtual "
     "storage controller like LSI-LOGIC , you might want to use PV-SCSI controller to get higher "
     "queue depth upto 256 for heavy VMS , see KB : https://kb.vmware.com/s/article/2053145 ."},
    {0},
};

const struct check chk_pvscsi_controller = {
    .id = "pvscsi-controller",
    .title = "Disk-heavy VM not on the Paravirtual SCSI controller",
    .severity = SEV_INFO,
    .rationale =
        "For VMs with heavy I/O, the VMware Paravirtual SCSI controller may give better "
        "performance and lower CPU use than the emulated LSI Logic/BusLogic ones, with queue "
        "depths up to 256 (KB 2053145). Only disks on LSI Logic, LSI Logic SAS and BusLogic "
        "controllers are counted, and a VM is heavy on those alone: more than 3 of them or "
        "more than 750 GiB (2^30 bytes, as vSphere shows sizes) in all, RDMs included: the seeds give no measure of heavy, so these are vslint's. Disks "
        "on the virtual NVMe controller (VMware's choice for all-flash), SATA, or an unknown "
        "controller are not judged, so an OS disk on LSI Logic beside data disks on PVSCSI is "
        "not flagged; templates are skipped; a disk of unknown size adds nothing to the total "
        "(the evidence says how many). The guide keeps the default "
        "controller in most cases, hence info.",
    .reference = "000_5bd48962a767ee9e.txt §3.6 (guest virtual SCSI adapter); "
                 "002_5ebbfcf31961a23f.txt (PVSCSI queue depth, VMware KB 2053145)",
    .sources = sources,
    .own =
        "Which VM is heavy is vslint's measure, not the seeds': more than 3 disks (max_disks) or "
        "more than 750 GiB (max_disk_gb) in all on the emulated LSI Logic and BusLogic "
        "controllers the seeds speak of; 002 says only \"heavy VMS\" and the guide \"in some "
        "cases\". The severity is info because the guide keeps the automatically selected "
        "controller under most circumstances.",
    .remediation =
        "Make sure the guest has the PVSCSI driver (VMware Tools), then move the data disks to "
        "a new Paravirtual controller with the VM powered off: PowerCLI: $d = Get-HardDisk -VM "
        "<vm> | Select -Skip 1; New-ScsiController -HardDisk $d -Type ParaVirtual. Change the "
        "boot disk's controller (Get-ScsiController -VM <vm> | Set-ScsiController -Type "
        "ParaVirtual) only after the guest has the driver loaded at boot.",
    .params = params,
    .run = run,
};
