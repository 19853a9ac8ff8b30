/* Check vms-per-datastore: datastores holding more VMs than the guide's target of 15-25, or more
 * powered-on VMs than VMware's maximum of 2048 per VMFS datastore. A VM is on a datastore when it
 * lives there: its configuration or one of its virtual disks, not an ISO image it mounts. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks/check.h"

static const struct chk_param params[] = {
    {"max_vms", 25, 0, 100000, "VMs",
     "warning when a datastore holds more VMs than this (templates excluded)"},
    {"max_powered_on", 2048, 0, 100000, "VMs",
     "critical when a VMFS datastore holds more powered-on VMs than this"},
    {0},
};

struct count {
    int vms, powered_on, templates;
    int other_files_only; /* VMs (not templates) with only other files there, e.g. an ISO image */
    size_t last_vm;       /* the last VM counted here, so a VM counts once per datastore */
    size_t last_other;    /* the same for other_files_only */
};

/* Whether vm lives on datastore ds (see count_vms). */
static int lives_on(const struct est_vm *vm, size_t ds)
{
    if (vm->config_datastore == ds)
        return 1;
    for (size_t k = 0; k < vm->n_disks; k++)
        if (vm->disks[k].datastore == ds && !chk_disk_rdm(&vm->disks[k]))
            return 1;
    return 0;
}

/* Counts vm (index v) on datastore ds unless it was counted there already. */
static void count_on(struct count *n, size_t n_ds, size_t ds, const struct est_vm *vm, size_t v)
{
    if (ds >= n_ds || n[ds].last_vm == v)
        return;
    n[ds].last_vm = v;
    if (vm->template == 1) {
        n[ds].templates++;
        return;
    }
    n[ds].vms++;
    if (vm->power_state && !strcmp(vm->power_state, "poweredOn"))
        n[ds].powered_on++;
}

/* Where each VM lives: the datastore of its configuration (.vmx) and of each virtual disk. An
 * RDM's data is on its own LUN (only a small mapping file is on the datastore), and an ISO image
 * or any other file in VirtualMachine.datastore is not the VM's I/O: neither counts. What is
 * unknown (a disk's or the configuration's datastore) is not guessed. */
static void count_vms(const struct estate *e, struct count *n)
{
    for (size_t i = 0; i < e->n_datastores; i++)
        n[i].last_vm = n[i].last_other = SIZE_MAX;
    for (size_t v = 0; v < e->n_vms; v++) {
        const struct est_vm *vm = &e->vms[v];
        count_on(n, e->n_datastores, vm->config_datastore, vm, v);
        for (size_t k = 0; k < vm->n_disks; k++)
            if (!chk_disk_rdm(&vm->disks[k]))
                count_on(n, e->n_datastores, vm->disks[k].datastore, vm, v);
    }
    /* The VMs that list a datastore without living there, for the evidence. */
    for (size_t v = 0; v < e->n_vms; v++) {
        const struct est_vm *vm = &e->vms[v];
        for (size_t j = 0; vm->template != 1 && j < vm->n_datastores; j++) {
            size_t ds = vm->datastores[j];
            if (ds < e->n_datastores && n[ds].last_other != v && !lives_on(vm, ds)) {
                n[ds].last_other = v;
                n[ds].other_files_only++;
            }
        }
    }
}

void chk_vms_on_datastore(const struct estate *e, size_t ds, int *vms, int *powered_on)
{
    *vms = *powered_on = 0;
    for (size_t v = 0; v < e->n_vms; v++) {
        const struct est_vm *vm = &e->vms[v];
        if (vm->template == 1 || !lives_on(vm, ds))
            continue;
        (*vms)++;
        if (vm->power_state && !strcmp(vm->power_state, "poweredOn"))
            (*powered_on)++;
    }
}

static int run(struct chk_ctx *ctx, const struct estate *e)
{
    double max_vms = chk_param(ctx, "max_vms");
    double max_on = chk_param(ctx, "max_powered_on");
    int rc = 0;
    struct count *n = calloc(e->n_datastores ? e->n_datastores : 1, sizeof(*n));

    if (!n)
        return -ENOMEM;
    count_vms(e, n);
    for (size_t i = 0; i < e->n_datastores; i++) {
        const struct est_datastore *d = &e->datastores[i];
        const char *name = d->name;
        enum vsl_severity sev;
        char msg[512];

        /* A vSAN or VVol datastore spans a whole cluster or storage container and places each
         * object by policy, not on the one LUN or export the guide counts VMs on: skip them. */
        if (d->type && (!strcmp(d->type, "vsan") || !strcmp(d->type, "VVOL")))
            continue;
        /* VMware's 2048 is a VMFS limit; on NFS only the density target holds. */
        if (n[i].powered_on > max_on && d->type && !strcmp(d->type, "VMFS")) {
            sev = SEV_CRITICAL;
            snprintf(msg, sizeof(msg),
                     "%s holds %d powered-on VMs, above VMware's maximum of %g per VMFS datastore; "
                     "spread them over more datastores (threshold %g)",
                     name, n[i].powered_on, max_on, max_on);
        } else if (n[i].vms > max_vms) {
            sev = SEV_WARNING;
            snprintf(msg, sizeof(msg),
                     "%s holds %d VMs; the guide's target is 15-25 per datastore (threshold %g)",
                     name, n[i].vms, max_vms);
        } else {
            continue;
        }
        rc = chk_emit_datastore(
            ctx, d, sev, msg,
            json_pack("{s:i, s:i, s:i, s:i, s:s, s:f, s:f}", "vms", n[i].vms, "powered_on",
                      n[i].powered_on, "templates_excluded", n[i].templates,
                      "vms_with_other_files_only", n[i].other_files_only, "counted",
                      "VMs whose configuration or a virtual disk is on the datastore", "max_vms",
                      max_vms, "max_powered_on", max_on));
        if (rc < 0)
            break;
    }
    free(n);
    return rc;
}

/* The seeds' words this check rests on, verbatim (tests/unit/test_registry.c). */
static const struct chk_source sources[] = {
    {"000_5bd48962a767ee9e.txt", "§3.5.2",
     "VMware currently supports a maximum of 2048 powered on virtual machines per VMFS datastore. "
     "However, in most circumstances and environments, a target of 15-25 virtual machines per "
     "datastore is the conservative recommendation."},
    {"000_5bd48962a767ee9e.txt", "§3.5.2",
     "Note: The virtual machines per datastore recommendation should be adjusted to support your "
     "particular environment."},
    {0},
};

const struct check chk_vms_per_datastore = {
    .id = "vms-per-datastore",
    .title = "Too many VMs on one datastore",
    .severity = SEV_CRITICAL,
    .rationale =
        "Fewer VMs per datastore means less I/O contention on its LUN and more consistent "
        "performance: the guide targets 15-25 VMs per datastore, and VMware supports at most "
        "2048 powered-on VMs per VMFS datastore (critical on VMFS only). A VM counts on a "
        "datastore when it lives there: its configuration (.vmx) or one of its virtual disks is "
        "there. An ISO image mounted from a datastore, or an RDM's mapping file (its data is on "
        "its own LUN), puts no VM I/O on it and does not count; templates are not counted. "
        "Applies to VMFS and NFS datastores (an NFS export's VMs contend for it as a LUN's do; "
        "the 2048 maximum is VMFS's). vSAN and VVol datastores are skipped: they place objects "
        "by policy across many devices, not on one LUN or export. Adjust max_vms to your "
        "estate's I/O and capacity needs, as the guide itself advises.",
    .reference = "000_5bd48962a767ee9e.txt §3.5.2 (virtual machines per datastore)",
    .sources = sources,
    .own =
        "The threshold 25 is the top of the guide's range; the severities are vslint's (a warning "
        "above it, critical above 2048 powered-on VMs on VMFS). Counting NFS datastores too is "
        "vslint's choice: the guide's reason, I/O contention, holds for an export as for a LUN. "
        "Which VMs count (their configuration or a non-RDM disk there, templates excluded) is "
        "vslint's reading of which VMs put I/O on the datastore.",
    .remediation =
        "Move VMs to less crowded datastores with Storage vMotion (PowerCLI: Move-VM -VM <vm> "
        "-Datastore <other-ds>), or put the datastores in a datastore cluster with Storage DRS "
        "to balance them; provision more 500-750 GB datastores if all are full.",
    .params = params,
    .run = run,
};
