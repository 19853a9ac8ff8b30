/* Check vms-per-datastore: datastores holding more VMs than the guide's target of 15-25, or more
 * powered-on VMs than VMware's maximum of 2048 per VMFS datastore. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks/check.h"

static const struct chk_param params[] = {
    {"max_vms", 25, 0, 100000, "VMs",
     "warning when a datastore holds more VMs than this (templates excluded)"},
    {"max_powered_on", 2048, 0, 100000, "VMs",
     "critical when a datastore holds more powered-on VMs than this"},
    {0},
};

struct count {
    int vms, powered_on, templates;
};

/* Whether vm lists datastore index ds before position j (a VM counts once per datastore). */
static int seen_before(const struct est_vm *vm, size_t j)
{
    for (size_t k = 0; k < j; k++)
        if (vm->datastores[k] == vm->datastores[j])
            return 1;
    return 0;
}

static int run(struct chk_ctx *ctx, const struct estate *e)
{
    double max_vms = chk_param(ctx, "max_vms");
    double max_on = chk_param(ctx, "max_powered_on");
    int rc = 0;
    struct count *n = calloc(e->n_datastores ? e->n_datastores : 1, sizeof(*n));

    if (!n)
        return -ENOMEM;
    /* A VM is on a datastore when the datastore is in its datastore list (its home or any of
     * its disks), which is what vCenter's Datastore.vm reports too. */
    for (size_t v = 0; v < e->n_vms; v++) {
        const struct est_vm *vm = &e->vms[v];
        for (size_t j = 0; j < vm->n_datastores; j++) {
            size_t ds = vm->datastores[j];
            if (ds >= e->n_datastores || seen_before(vm, j))
                continue;
            if (vm->template == 1) {
                n[ds].templates++;
                continue;
            }
            n[ds].vms++;
            if (vm->power_state && !strcmp(vm->power_state, "poweredOn"))
                n[ds].powered_on++;
        }
    }

    for (size_t i = 0; i < e->n_datastores; i++) {
        const struct est_datastore *d = &e->datastores[i];
        const char *name = d->name;
        enum chk_severity sev;
        char msg[512];

        /* A vSAN or VVol datastore spans a whole cluster or storage container, not the one LUN
         * or export the guide sizes: skip them. */
        if (d->type && (!strcmp(d->type, "vsan") || !strcmp(d->type, "VVOL")))
            continue;
        /* VMware's 2048 is a VMFS limit; on other datastores only the density target holds. */
        if (n[i].powered_on > max_on && d->type && !strcmp(d->type, "VMFS")) {
            sev = CHK_CRITICAL;
            snprintf(msg, sizeof(msg),
                     "%s holds %d powered-on VMs, above VMware's maximum of %g per VMFS datastore; "
                     "spread them over more datastores (threshold %g)",
                     name, n[i].powered_on, max_on, max_on);
        } else if (n[i].vms > max_vms) {
            sev = CHK_WARNING;
            snprintf(msg, sizeof(msg),
                     "%s holds %d VMs; the guide's target is 15-25 per datastore (threshold %g)",
                     name, n[i].vms, max_vms);
        } else {
            continue;
        }
        json_t *ev = json_pack("{s:i, s:i, s:i, s:f, s:f}", "vms", n[i].vms, "powered_on",
                               n[i].powered_on, "templates_excluded", n[i].templates, "max_vms",
                               max_vms, "max_powered_on", max_on);
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
    free(n);
    return rc;
}

const struct check chk_vms_per_datastore = {
    .id = "vms-per-datastore",
    .title = "Too many VMs on one datastore",
    .severity = CHK_CRITICAL,
    .rationale =
        "Fewer VMs per datastore means less I/O contention on its LUN and more consistent "
        "performance: the guide targets 15-25 VMs per datastore, and VMware supports at most "
        "2048 powered-on VMs per VMFS datastore (critical on VMFS only). A VM counts on every "
        "datastore in its datastore "
        "list; templates are not counted. vSAN and VVol datastores are skipped: they are not one "
        "LUN or export. Adjust max_vms to your estate's I/O and capacity needs, as the guide "
        "itself advises.",
    .reference = "000_5bd48962a767ee9e.txt §3.5.2 (virtual machines per datastore)",
    .remediation =
        "Move VMs to less crowded datastores with Storage vMotion (PowerCLI: Move-VM -VM <vm> "
        "-Datastore <other-ds>), or put the datastores in a datastore cluster with Storage DRS "
        "to balance them; provision more 500-750 GB datastores if all are full.",
    .params = params,
    .run = run,
};
