/* vdisk-format: Fault Tolerance and shared-bus (MSCS) VMs sit on eager-zeroed thick disks, and
 * thin disks can have their guest space reclaimed (000 §3.7). One finding per VM. */
#include <stdio.h>
#include <string.h>

#include "checks/check.h"

static const struct chk_param params[] = {
    {"min_hw_version", 11, 4, 99, "vmx",
     "lowest VM hardware version with in-guest space reclaim on VMFS5 (vmx-11, ESXi 6.0)"},
    {0},
};

static int is_eager_candidate(const char *format)
{
    /* The two VMDK formats that zero blocks on first write; RDMs are not VMDKs and are not
     * judged, and an unclassified backing ("other", NULL) is not guessed at. */
    return format && (!strcmp(format, "thin") || !strcmp(format, "lazyzeroedthick"));
}

static const char *shared_bus(const struct est_vm *vm, const struct est_disk *d)
{
    if (d->controller == EST_NONE || d->controller >= vm->n_controllers)
        return NULL;
    const char *s = vm->controllers[d->controller].shared_bus;
    if (s && (!strcmp(s, "physicalSharing") || !strcmp(s, "virtualSharing")))
        return s;
    return NULL;
}

static const char *ds_name(const struct estate *e, size_t ds)
{
    return ds != EST_NONE && ds < e->n_datastores && e->datastores[ds].name ? e->datastores[ds].name
                                                                            : NULL;
}

static json_t *disk_json(const struct estate *e, const struct est_disk *d)
{
    json_t *j = json_pack("{s:s?, s:s?, s:s?}", "label", d->label, "file_name", d->file_name,
                          "format", d->format);
    if (j) {
        const char *n = ds_name(e, d->datastore);
        json_object_set_new(j, "datastore", n ? json_string(n) : json_null());
        if (d->capacity_bytes != EST_UNKNOWN)
            json_object_set_new(j, "capacity_bytes", json_integer(d->capacity_bytes));
    }
    return j;
}

/* Why in-guest reclaim cannot work for thin disk d, as a JSON array of reasons; NULL when it
 * can, when the disk is not on VMFS5, or when the facts needed are unknown (*unknown set). */
static json_t *reclaim_blockers(const struct estate *e, const struct est_vm *vm,
                                const struct est_disk *d, int min_hw, int *unknown)
{
    const struct est_datastore *ds;
    const struct est_host *h =
        vm->host != EST_NONE && vm->host < e->n_hosts ? &e->hosts[vm->host] : NULL;
    int ebd = h ? h->enable_block_delete : EST_UNKNOWN;
    json_t *why;
    char buf[256];

    *unknown = 0;
    if (d->datastore == EST_NONE || d->datastore >= e->n_datastores) {
        *unknown = 1;
        return NULL;
    }
    ds = &e->datastores[d->datastore];
    /* VMFS6 only needs a 1 MB reclaim unit, which the guest decides; NFS and vSAN are not
     * what §3.7.2 speaks of. Only VMFS5 has host and hardware requirements. */
    if (!ds->type || strcmp(ds->type, "VMFS") || ds->vmfs_major != 5)
        return NULL;
    why = json_array();
    if (vm->hw_version != EST_UNKNOWN && vm->hw_version < min_hw) {
        snprintf(buf, sizeof(buf), "hardware vmx-%02d is below vmx-%02d", vm->hw_version, min_hw);
        json_array_append_new(why, json_string(buf));
    }
    if (ebd != EST_UNKNOWN && ebd != 1) {
        snprintf(buf, sizeof(buf), "VMFS3.EnableBlockDelete is %d on host %s", ebd,
                 h->name);
        json_array_append_new(why, json_string(buf));
    }
    if (json_array_size(why) == 0) {
        *unknown = vm->hw_version == EST_UNKNOWN || ebd == EST_UNKNOWN;
        json_decref(why);
        return NULL;
    }
    return why;
}

/* Whether the admin chose d's format: on VMFS (or an unknown datastore, which is not guessed
 * away). On NFS the server decides (thin unless a VAAI-NAS plugin reserves space), on vSAN and
 * VVol the storage policy does: no rule about formats applies there. */
static int format_chosen(const struct estate *e, const struct est_disk *d)
{
    const struct est_datastore *ds;

    if (d->datastore == EST_NONE || d->datastore >= e->n_datastores)
        return 1;
    ds = &e->datastores[d->datastore];
    return !ds->type || strcmp(ds->type, "VMFS") == 0;
}

static int check_vm(struct chk_ctx *ctx, const struct estate *e, const struct est_vm *vm,
                    int min_hw)
{
    int ft = vm->ft_state && strcmp(vm->ft_state, "notConfigured") != 0;
    json_t *eager = json_array(), *reclaim = json_array(), *not_judged = json_array();
    json_t *reclaim_unknown = json_array();
    const char *vname = vm->name;
    const char *first_bad = NULL, *first_fmt = NULL, *first_reason = NULL;
    const char *first_thin_ds = NULL;
    char first_thin_why[512] = "";
    char msg[1024];
    int r;

    for (size_t i = 0; i < vm->n_disks; i++) {
        const struct est_disk *d = &vm->disks[i];
        const char *sb = shared_bus(vm, d);
        int unknown = 0;

        if (!format_chosen(e, d))
            continue;
        if (ft || sb) {
            if (is_eager_candidate(d->format)) {
                json_t *j = disk_json(e, d);
                json_object_set_new(j, "reason", json_string(ft ? "fault tolerance" : sb));
                json_array_append_new(eager, j);
                if (!first_bad) {
                    first_bad = d->label ? d->label : d->file_name;
                    first_fmt = d->format;
                    first_reason = ft ? "Fault Tolerance" : sb;
                }
                continue;
            }
            if (!d->format || !strcmp(d->format, "other"))
                json_array_append_new(not_judged, disk_json(e, d));
        }
        if (!d->format || strcmp(d->format, "thin"))
            continue;
        json_t *why = reclaim_blockers(e, vm, d, min_hw, &unknown);
        if (!why) {
            if (unknown)
                json_array_append_new(reclaim_unknown, disk_json(e, d));
            continue;
        }
        json_t *j = disk_json(e, d);
        json_object_set_new(j, "reasons", why);
        json_array_append_new(reclaim, j);
        if (!first_thin_ds) {
            first_thin_ds = ds_name(e, d->datastore);
            for (size_t k = 0; k < json_array_size(why); k++) {
                size_t n = strlen(first_thin_why);
                snprintf(first_thin_why + n, sizeof(first_thin_why) - n, "%s%s", k ? "; " : "",
                         json_string_value(json_array_get(why, k)));
            }
        }
    }

    if (json_array_size(eager) == 0 && json_array_size(reclaim) == 0) {
        json_decref(eager);
        json_decref(reclaim);
        json_decref(not_judged);
        json_decref(reclaim_unknown);
        return 0;
    }

    const struct est_host *h =
        vm->host != EST_NONE && vm->host < e->n_hosts ? &e->hosts[vm->host] : NULL;
    json_t *ev =
        json_pack("{s:s, s:s?, s:o, s:o, s:s, s:i}", "vm", vname, "ft_state", vm->ft_state,
                  "disks_not_eager_zeroed", eager, "thin_disks_without_guest_reclaim", reclaim,
                  "required_format", "eagerzeroedthick", "min_hw_version", min_hw);
    if (ev) {
        json_t *sc = json_array();
        for (size_t i = 0; i < vm->n_controllers; i++) {
            const struct est_controller *c = &vm->controllers[i];
            if (c->shared_bus && strcmp(c->shared_bus, "noSharing"))
                json_array_append_new(sc, json_pack("{s:i, s:s?, s:s}", "key", c->key, "type",
                                                    c->type, "shared_bus", c->shared_bus));
        }
        json_object_set_new(ev, "shared_controllers", sc);
        json_object_set_new(ev, "hw_version",
                            vm->hw_version != EST_UNKNOWN ? json_integer(vm->hw_version)
                                                          : json_null());
        json_object_set_new(ev, "host", h && h->name ? json_string(h->name) : json_null());
        json_object_set_new(ev, "enable_block_delete",
                            h && h->enable_block_delete != EST_UNKNOWN
                                ? json_integer(h->enable_block_delete)
                                : json_null());
        if (json_array_size(not_judged))
            json_object_set_new(ev, "disks_format_unknown", json_incref(not_judged));
        if (json_array_size(reclaim_unknown))
            json_object_set_new(ev, "thin_disks_reclaim_unknown", json_incref(reclaim_unknown));
    }
    json_decref(not_judged);
    json_decref(reclaim_unknown);

    size_t n_eager = json_array_size(eager), n_reclaim = json_array_size(reclaim);
    if (n_eager)
        snprintf(msg, sizeof(msg),
                 "%s uses %s but %zu disk(s) are not eager-zeroed thick (%s is %s); the guide "
                 "requires eagerzeroedthick for MSCS and Fault Tolerance",
                 vname,
                 !strcmp(first_reason, "Fault Tolerance")   ? "Fault Tolerance"
                 : !strcmp(first_reason, "physicalSharing") ? "a physically shared SCSI bus (MSCS)"
                                                            : "a virtually shared SCSI bus (MSCS)",
                 n_eager, first_bad ? first_bad : "a disk", first_fmt);
    else
        snprintf(msg, sizeof(msg),
                 "%s has %zu thin disk(s) on VMFS5 (%s%s) where in-guest space reclaim cannot "
                 "work: %s",
                 vname, n_reclaim, first_thin_ds ? first_thin_ds : "?",
                 n_reclaim > 1 ? ", ..." : "", first_thin_why);
    r = chk_emit(ctx, &(struct chk_emit){
                          .severity = n_eager ? CHK_CRITICAL : CHK_INFO,
                          .object_type = "vm",
                          .object_moref = vm->moref,
                          .object_name = vname,
                          .detail = NULL,
                          .message = msg,
                          .evidence = ev,
                      });
    return r;
}

static int run(struct chk_ctx *ctx, const struct estate *e)
{
    int min_hw = (int)chk_param(ctx, "min_hw_version");

    for (size_t i = 0; i < e->n_vms; i++) {
        /* A template runs no guest, cannot be protected by FT, and reclaims nothing. */
        if (e->vms[i].template == 1)
            continue;
        int r = check_vm(ctx, e, &e->vms[i], min_hw);
        if (r < 0)
            return r;
    }
    return 0;
}

const struct check chk_vdisk_format = {
    .id = "vdisk-format",
    .title = "Virtual disk formats fit FT, MSCS and in-guest space reclaim",
    .severity = CHK_CRITICAL,
    .rationale =
        "Microsoft Cluster Service (a SCSI controller in physicalSharing or virtualSharing) and "
        "VMware Fault Tolerance need eager-zeroed thick disks: a thin or lazy-zeroed disk on an "
        "FT VM, or on a shared controller, is critical (RDMs are not judged). Formats are judged "
        "only on VMFS, where the admin chooses them: on NFS the NAS decides, on vSAN and VVol "
        "the storage policy does. Thin disks are "
        "fine on VMFS6, but on VMFS5 the guest can only reclaim space when the VM is hardware "
        "vmx-11 or later and the host has VMFS3.EnableBlockDelete=1; a thin disk on VMFS5 "
        "missing either is reported as info. Unknown facts are not guessed: a disk whose "
        "format is unknown is listed as not judged, and a VMFS5 thin disk whose hardware version "
        "and EnableBlockDelete are unknown is skipped. Templates are skipped. Array-side thin "
        "provisioning, which in-guest reclaim also needs, is outside vCenter's view.",
    .reference = "000_5bd48962a767ee9e.txt §3.7.1, §3.7.2; 003_c6252f56ada835be.txt (zeroing "
                 "cost)",
    .remediation =
        "FT/MSCS: with the VM powered off, convert each listed disk to eager-zeroed thick: "
        "lazy-zeroed `vmkfstools --eagerzero /vmfs/volumes/<datastore>/<vm>/<disk>.vmdk`, thin "
        "`vmkfstools --inflatedisk /vmfs/volumes/<datastore>/<vm>/<disk>.vmdk` (or Storage "
        "vMotion with disk format \"Thick Provision Eager Zeroed\"). In-guest reclaim on VMFS5: "
        "`esxcli system settings advanced set --option=/VMFS3/EnableBlockDelete --int-value=1` "
        "on every host that runs the VM, and upgrade the VM's hardware to vmx-11 or later "
        "(PowerCLI `Set-VM -VM <vm> -HardwareVersion vmx-11` while powered off), or Storage "
        "vMotion the VM to a VMFS6 datastore.",
    .params = params,
    .run = run,
};
