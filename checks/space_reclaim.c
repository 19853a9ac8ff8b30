/* Check space-reclaim: what returning freed space to a thin array LUN needs (000 §3.7.2). A VMFS6
 * datastore with automatic space reclamation off; a host with VMFS3.EnableBlockDelete=0 that runs
 * VMs with thin disks on VMFS5; a VM with such disks whose hardware is older than vmx-11; a VM
 * whose disk is provisioned otherwise than the array LUN under it (thin on thin). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks/check.h"

static const struct chk_param params[] = {
    {"min_hw_version", 11, 4, 99, "vmx",
     "lowest VM hardware version whose guest can reclaim space on VMFS5 (vmx-11, ESXi 6.0)"},
    {0},
};

/* Whether d is a VMFS volume on array storage of at least major version min (exactly 5 when
 * exact): reclaim gives blocks back to a thin LUN, and a local volume (a host's boot disk) has
 * no array pool to give them to. */
static int array_vmfs(const struct est_datastore *d, int major, int exact)
{
    if (!d->type || strcmp(d->type, "VMFS") || d->vmfs_local == 1)
        return 0;
    return exact ? d->vmfs_major == major : d->vmfs_major >= major;
}

/* Whether d is a thin VMDK on an array VMFS5 volume: the disks whose guests' reclaim needs
 * EnableBlockDelete on the host and vmx-11 on the VM. */
static int thin_on_vmfs5(const struct estate *e, const struct est_disk *d)
{
    return d->format && !strcmp(d->format, "thin") && d->datastore < e->n_datastores &&
           array_vmfs(&e->datastores[d->datastore], 5, 1);
}

/* vm's thin disks on VMFS5 as a JSON array (empty when none); NULL when out of memory. */
static json_t *thin_vmfs5_disks(const struct estate *e, const struct est_vm *vm)
{
    json_t *a = json_array();

    for (size_t k = 0; a && k < vm->n_disks; k++)
        if (thin_on_vmfs5(e, &vm->disks[k]))
            a = chk_ev_append(a, chk_ev_disk(e, &vm->disks[k]));
    return a;
}

/* s as one shell word: as it is when every character is safe, else single-quoted. The caller
 * frees the result; NULL when out of memory. */
static char *shell_word(const char *s)
{
    size_t n = strlen(s), k = 0;
    char *w;

    if (n && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-/") == n)
        return strdup(s);
    if (n > (SIZE_MAX - 3) / 4 || !(w = malloc(4 * n + 3)))
        return NULL;
    w[k++] = '\'';
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\'') { /* close, an escaped quote, reopen */
            memcpy(w + k, "'\\''", 4);
            k += 4;
        } else {
            w[k++] = s[i];
        }
    }
    w[k++] = '\'';
    w[k] = '\0';
    return w;
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(json_string_value(*(json_t *const *)a), json_string_value(*(json_t *const *)b));
}

/* The connected hosts that mount d and can reach it, by name: the volume's reclaim priority is
 * set from any one of them (vslint plan takes the first). A new reference, NULL on ENOMEM. */
static json_t *mounted_by(const struct estate *e, const struct est_datastore *d)
{
    json_t **names = calloc(d->n_mounts + 1, sizeof(*names)), *a = json_array();
    size_t n = 0;

    if (!names || !a) {
        free(names);
        json_decref(a);
        return NULL;
    }
    for (size_t i = 0; i < d->n_mounts; i++) {
        const struct est_mount *m = &d->mounts[i];
        const struct est_host *h = m->host < e->n_hosts ? &e->hosts[m->host] : NULL;
        if (!h || !h->name || m->mounted == 0 || m->accessible == 0 ||
            (h->connection_state && strcmp(h->connection_state, "connected") != 0))
            continue;
        if (!(names[n++] = json_string(h->name))) {
            json_decref(a);
            a = NULL; /* chk_ev_append(NULL, ...) releases the rest */
            n--;
        }
    }
    if (a)
        qsort(names, n, sizeof(*names), name_cmp);
    for (size_t i = 0; i < n; i++)
        a = chk_ev_append(a, names[i]);
    free(names);
    return a;
}

/* VMFS6 datastores with automatic UNMAP off. */
static int check_datastores(struct chk_ctx *ctx, const struct estate *e)
{
    for (size_t i = 0; i < e->n_datastores; i++) {
        const struct est_datastore *d = &e->datastores[i];
        char msg[512], *label, *cmd;
        int r;

        /* unmapPriority is VMFS6's: "none" turns it off. Unknown (not reported) is not off. */
        if (!array_vmfs(d, 6, 0) || !d->unmap_priority || strcmp(d->unmap_priority, "none"))
            continue;
        snprintf(msg, sizeof(msg),
                 "%s is VMFS%d with automatic space reclamation off (unmap priority none): the "
                 "blocks of deleted and moved files, and those its guests free, stay allocated "
                 "on its thin LUN",
                 d->name, d->vmfs_major);
        if (!(label = shell_word(d->name)))
            return -ENOMEM;
        static const char fmt[] =
            "esxcli storage vmfs reclaim config set --volume-label=%s --reclaim-priority=low";
        size_t n = sizeof(fmt) + strlen(label);
        if ((cmd = malloc(n)))
            snprintf(cmd, n, fmt, label);
        free(label);
        if (!cmd)
            return -ENOMEM;
        json_t *ev = json_pack("{s:i, s:s?, s:s, s:s, s:s, s:o}", "vmfs_major", d->vmfs_major,
                               "vmfs_version", d->vmfs_version, "unmap_priority",
                               d->unmap_priority, "recommended", "low", "command", cmd,
                               "mounted_by", mounted_by(e, d));
        free(cmd);
        if ((r = chk_emit_datastore(ctx, d, SEV_WARNING, msg, ev)) < 0)
            return r;
    }
    return 0;
}

/* One finding per host with EnableBlockDelete 0 that runs VMs with thin disks on VMFS5,
 * listing them. A host whose setting is unknown is not judged. */
static int check_hosts(struct chk_ctx *ctx, const struct estate *e)
{
    for (size_t i = 0; i < e->n_hosts; i++) {
        const struct est_host *h = &e->hosts[i];
        const char *first_vm = NULL, *first_ds = NULL;
        size_t n_disks = 0;
        json_t *vms;
        char msg[1024];

        if (h->enable_block_delete != 0)
            continue;
        if (!(vms = json_array()))
            return -ENOMEM;
        for (size_t v = 0; v < e->n_vms; v++) {
            const struct est_vm *vm = &e->vms[v];
            json_t *disks;
            /* A template runs no guest to reclaim anything. */
            if (vm->host != i || vm->template == 1)
                continue;
            if (!(disks = thin_vmfs5_disks(e, vm))) {
                json_decref(vms);
                return -ENOMEM;
            }
            if (json_array_size(disks) == 0) {
                json_decref(disks);
                continue;
            }
            if (!first_vm) {
                first_vm = vm->name;
                first_ds = json_string_value(
                    json_object_get(json_array_get(disks, 0), "datastore"));
            }
            n_disks += json_array_size(disks);
            vms = chk_ev_append(vms, json_pack("{s:s, s:s, s:o, s:o}", "vm", vm->name, "moref",
                                               vm->moref, "hw_version",
                                               chk_ev_known(vm->hw_version), "disks", disks));
            if (!vms)
                return -ENOMEM;
        }
        if (json_array_size(vms) == 0) {
            json_decref(vms);
            continue;
        }
        size_t n_vms = json_array_size(vms);
        snprintf(msg, sizeof(msg),
                 "%s has VMFS3.EnableBlockDelete=0 and runs %zu VM(s) with %zu thin disk(s) on "
                 "VMFS5 (%s on %s%s): the space their guests free is never given back to the "
                 "array",
                 h->name, n_vms, n_disks, first_vm, first_ds ? first_ds : "?",
                 n_vms > 1 ? ", ..." : "");
        json_t *ev = json_pack(
            "{s:i, s:i, s:o, s:s}", "enable_block_delete", h->enable_block_delete, "recommended",
            1, "vms", vms, "command",
            "esxcli system settings advanced set --option=/VMFS3/EnableBlockDelete --int-value=1");
        int r = chk_emit_host(ctx, h, NULL, SEV_WARNING, msg, ev);
        if (r < 0)
            return r;
    }
    return 0;
}

/* VMs with thin disks on VMFS5 whose hardware is too old for their guests to reclaim space. */
static int check_vms(struct chk_ctx *ctx, const struct estate *e, int min_hw)
{
    for (size_t v = 0; v < e->n_vms; v++) {
        const struct est_vm *vm = &e->vms[v];
        const struct est_host *h = vm->host < e->n_hosts ? &e->hosts[vm->host] : NULL;
        json_t *disks;
        char msg[1024];

        if (vm->template == 1 || vm->hw_version == EST_UNKNOWN || vm->hw_version >= min_hw)
            continue;
        if (!(disks = thin_vmfs5_disks(e, vm)))
            return -ENOMEM;
        if (json_array_size(disks) == 0) {
            json_decref(disks);
            continue;
        }
        const char *ds = json_string_value(json_object_get(json_array_get(disks, 0), "datastore"));
        snprintf(msg, sizeof(msg),
                 "%s is hardware vmx-%02d with %zu thin disk(s) on VMFS5 (%s%s): its guest can "
                 "reclaim space there only from vmx-%02d on",
                 vm->name, vm->hw_version, json_array_size(disks), ds ? ds : "?",
                 json_array_size(disks) > 1 ? ", ..." : "", min_hw);
        json_t *ev = json_pack("{s:i, s:i, s:o, s:s?, s:o}", "hw_version", vm->hw_version,
                               "min_hw_version", min_hw, "thin_disks_on_vmfs5", disks, "host",
                               h ? h->name : NULL, "enable_block_delete",
                               h ? chk_ev_known(h->enable_block_delete) : json_null());
        int r = chk_emit_vm(ctx, vm, SEV_INFO, msg, ev);
        if (r < 0)
            return r;
    }
    return 0;
}

/* How the LUNs behind d are provisioned on the array: 1 all thin, 0 all thick, EST_UNKNOWN when
 * no configured array holds them or they are mixed (a spanned volume): then not judged. */
static int lun_thin(const struct est_datastore *d)
{
    int thin = EST_UNKNOWN;

    for (size_t i = 0; i < d->n_pools; i++) {
        if (thin != EST_UNKNOWN && thin != d->pool_thin[i])
            return EST_UNKNOWN;
        thin = d->pool_thin[i];
    }
    return thin;
}

/* Whether disk k is provisioned otherwise than the array LUN under it: a thin VMDK on a thick
 * LUN, or a thick (lazy or eager zeroed) VMDK on a thin LUN. */
static int mixed(const struct estate *e, const struct est_disk *k)
{
    if (!k->format || k->datastore >= e->n_datastores ||
        !array_vmfs(&e->datastores[k->datastore], 5, 0))
        return 0;
    int thin_lun = lun_thin(&e->datastores[k->datastore]);
    int thin_disk = !strcmp(k->format, "thin");
    int thick_disk = !strcmp(k->format, "lazyzeroedthick") || !strcmp(k->format, "eagerzeroedthick");
    return (thin_lun == 0 && thin_disk) || (thin_lun == 1 && thick_disk);
}

/* VMs with a disk provisioned otherwise than its LUN, where the array says how the LUN is
 * (000 §3.7.2: reclaim from within the guest "DOES require thin provisioning be used on both
 * the storage and the virtual disks"). One finding per VM, apart from its hardware finding. */
static int check_thin_on_thin(struct chk_ctx *ctx, const struct estate *e)
{
    for (size_t v = 0; v < e->n_vms; v++) {
        const struct est_vm *vm = &e->vms[v];
        const struct est_disk *first = NULL;
        char msg[1024];

        if (vm->template == 1)
            continue;
        json_t *disks = json_array();
        for (size_t k = 0; disks && k < vm->n_disks; k++) {
            const struct est_disk *d = &vm->disks[k];
            if (!mixed(e, d))
                continue;
            first = first ? first : d;
            json_t *j = chk_ev_disk(e, d);
            j = chk_ev_set(j, "lun_thin", json_boolean(lun_thin(&e->datastores[d->datastore])));
            disks = chk_ev_append(disks, j);
        }
        if (!disks)
            return -ENOMEM;
        if (!first) {
            json_decref(disks);
            continue;
        }
        int thin_disk = !strcmp(first->format, "thin");
        snprintf(msg, sizeof(msg),
                 "%s has %zu disk(s) provisioned otherwise than the array LUN under them (%s is "
                 "%s on a %s LUN of %s%s): the guest cannot reclaim space, which needs thin "
                 "provisioning on both the storage and the virtual disk",
                 vm->name, json_array_size(disks), first->label ? first->label : "a disk",
                 thin_disk ? "thin" : first->format, thin_disk ? "thick" : "thin",
                 e->datastores[first->datastore].name, json_array_size(disks) > 1 ? ", ..." : "");
        int r = chk_emit(ctx, &(struct chk_emit){.severity = SEV_INFO,
                                                 .object_type = "vm",
                                                 .object_moref = vm->moref,
                                                 .object_name = vm->name,
                                                 .detail = "thin-on-thin",
                                                 .message = msg,
                                                 .evidence = json_pack("{s:s, s:o}", "rule",
                                                                       "thin-on-thin", "disks",
                                                                       disks)});
        if (r < 0)
            return r;
    }
    return 0;
}

static int run(struct chk_ctx *ctx, const struct estate *e)
{
    int r = check_datastores(ctx, e);

    if (r == 0)
        r = check_hosts(ctx, e);
    if (r == 0)
        r = check_vms(ctx, e, (int)chk_param(ctx, "min_hw_version"));
    if (r == 0)
        r = check_thin_on_thin(ctx, e);
    return r;
}

const struct check chk_space_reclaim = {
    .id = "space-reclaim",
    .title = "Freed space can be reclaimed to the array",
    .severity = SEV_WARNING,
    .rationale =
        "A thin LUN gives the array back the blocks VMFS frees only through UNMAP; without it "
        "the pool fills with space no datastore uses (and free-space alarms on the array follow). "
        "The guide (§3.7.2) lists what reclaim needs besides thin disks on thin LUNs: VMFS6, or on "
        "VMFS5 VM hardware vmx-11 or later and VMFS3.EnableBlockDelete=1 on the host. Three "
        "rules: a VMFS6 datastore whose automatic space reclamation is off (unmap priority "
        "none) is a warning, as every file deleted or moved there leaks pool space until someone "
        "notices (vslint's own rule: the guide says of VMFS6 only that a guest's reclaim is "
        "processed in units of 1 MB or multiples); a host with EnableBlockDelete=0 that runs VMs with thin disks on VMFS5 is one "
        "warning for the host (one setting fixes all its VMs, which the evidence lists); a VM "
        "with thin disks on VMFS5 whose hardware is older than vmx-11 is info (only its own "
        "guest's reclaim is lost, and the fix needs a power cycle). Only VMFS volumes on array "
        "storage are judged: a local VMFS volume has no pool to give blocks back to, and NFS, "
        "vSAN and vVol reclaim space their own way. Unknown facts are not guessed: a host whose "
        "EnableBlockDelete was not read, a VM whose hardware version is unknown, and a datastore "
        "whose unmap priority is not reported are not judged. Templates run no guest and are "
        "skipped. Whether the LUN itself is thin is the array's to say: where a configured "
        "array holds a VMFS datastore's LUNs, a VM with a thin disk on a thick LUN, or a thick "
        "(lazy or eager zeroed) disk on a thin LUN, is info (\"thin on thin\": in-guest reclaim "
        "needs thin provisioning on both the storage and the virtual disk), one finding per VM "
        "(detail thin-on-thin); a datastore whose LUNs are mixed, or on no configured array, is "
        "not judged.",
    .reference = "000_5bd48962a767ee9e.txt §3.7.2 (space reclamation within the guest: VMFS6, "
                 "or VMFS5 with hardware version 11 and EnableBlockDelete=1)",
    .sources = chk_reclaim_sources,
    .own =
        "The rule on VMFS6's automatic space reclamation (unmap priority none) is vslint's: the "
        "seed asks only that the VMs be on VMFS 6 and says reclaim there is processed in units of "
        "1 MB or multiples; it does not speak of automatic UNMAP. The severities are vslint's: a "
        "warning for a VMFS6 datastore that leaks pool space and for a host whose "
        "EnableBlockDelete=0 stops its VMs' reclaim on VMFS5, info for one VM whose hardware is "
        "older than vmx-11 (only its guest's reclaim is lost). Whether the LUN is thin on the "
        "array, which the seed also requires, is judged where a configured array says how the "
        "LUN is provisioned: a thin disk on a thick LUN, or a thick disk on a thin LUN, is info "
        "(vslint's severity: §3.7.1 still calls lazy-zeroed thick disks the default).",
    .remediation =
        "VMFS6 datastore: turn automatic space reclamation back on, on any host that mounts it: "
        "`esxcli storage vmfs reclaim config set --volume-label=<datastore> "
        "--reclaim-priority=low` (vSphere Client: Datastore > Configure > Space Reclamation). "
        "Host: `esxcli system settings advanced set --option=/VMFS3/EnableBlockDelete "
        "--int-value=1` (PowerCLI: Get-AdvancedSetting -Entity <host> -Name "
        "VMFS3.EnableBlockDelete | Set-AdvancedSetting -Value 1 -Confirm:$false). VM: with the "
        "VM powered off, upgrade its hardware (PowerCLI: Set-VM -VM <vm> -HardwareVersion vmx-11 "
        "or later). Or move the VMs to a VMFS6 datastore with Storage vMotion (Move-VM -VM <vm> "
        "-Datastore <vmfs6-ds>), which needs neither. Space already leaked on VMFS5 comes back "
        "with `esxcli storage vmfs unmap --volume-label=<datastore>`. Thin on thin: move the "
        "disk to thin format on a thin LUN's datastore with Storage vMotion (Move-VM -VM <vm> "
        "-Datastore <datastore> -DiskStorageFormat Thin), or make the LUN thin on the array.",
    .params = params,
    .needs = CHK_NEEDS_HOST | CHK_NEEDS_OPTIONS | CHK_NEEDS_DATASTORE,
    .run = run,
};
