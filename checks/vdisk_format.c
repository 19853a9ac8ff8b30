/* vdisk-format: shared-bus (MSCS) VMs, multi-writer disks and Fault Tolerance VMs sit on
 * eager-zeroed thick disks (000 §3.7.1, KB 1034165). One finding per VM. (In-guest space reclaim of
 * thin disks is space-reclaim's.) */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "checks/check.h"

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

/* The controllers of vm on a shared bus, as evidence; NULL when out of memory. */
static json_t *shared_controllers(const struct est_vm *vm)
{
    json_t *a = json_array();

    for (size_t i = 0; a && i < vm->n_controllers; i++) {
        const struct est_controller *c = &vm->controllers[i];
        if (c->shared_bus && strcmp(c->shared_bus, "noSharing"))
            a = chk_ev_append(a, json_pack("{s:i, s:s?, s:s}", "key", c->key, "type", c->type,
                                           "shared_bus", c->shared_bus));
    }
    return a;
}

/* A multi-writer disk (backing.sharing sharingMultiWriter: Oracle RAC, clustered file
 * systems) must be eager-zeroed thick on VMFS (VMware KB 1034165). */
static int multi_writer(const struct est_disk *d)
{
    return d->sharing && !strcmp(d->sharing, "sharingMultiWriter");
}

/* Whether legacy Fault Tolerance (removed in vSphere 6.5; it needed eager-zeroed disks) can
 * still run on the VM's host: 1 on ESXi older than 6.5, 0 on 6.5 and later, EST_UNKNOWN when
 * the host or its version is unknown. */
static int legacy_ft_host(const struct estate *e, const struct est_vm *vm)
{
    const char *v = vm->host < e->n_hosts ? e->hosts[vm->host].product_version : NULL;
    int major = 0, minor = 0;

    if (!v || sscanf(v, "%d.%d", &major, &minor) < 1 || major <= 0)
        return EST_UNKNOWN;
    return major < 6 || (major == 6 && minor < 5);
}

#define GUIDE_FT                                                                                   \
    "\"Best practice is to use the default virtual disk format unless specific needs dictate "     \
    "the use of thick provisioned eager zeroed for performance or availability needs including "   \
    "Microsoft Cluster Service (MSCS) and VMware Fault Tolerance (FT).\""

static int check_vm(struct chk_ctx *ctx, const struct estate *e, const struct est_vm *vm)
{
    int ft = vm->ft_state && strcmp(vm->ft_state, "notConfigured") != 0;
    int legacy = ft ? legacy_ft_host(e, vm) : 0;
    int n_required = 0; /* disks MSCS, multi-writer or legacy FT require eager-zeroed */
    json_t *eager, *not_judged;
    const char *vname = vm->name;
    const char *first_bad = NULL, *first_fmt = NULL, *first_reason = NULL;
    enum vsl_severity sev;
    char msg[1280];

    if (!ft) {
        /* Without FT only a disk on a shared controller, or a multi-writer one, can be at
         * fault. */
        size_t i = 0;
        while (i < vm->n_disks && !shared_bus(vm, &vm->disks[i]) && !multi_writer(&vm->disks[i]))
            i++;
        if (i == vm->n_disks)
            return 0;
    }
    eager = json_array();
    not_judged = json_array();
    if (!eager || !not_judged)
        goto nomem;
    for (size_t i = 0; i < vm->n_disks; i++) {
        const struct est_disk *d = &vm->disks[i];
        const char *sb = shared_bus(vm, d);
        const char *reason = sb                ? sb
                             : multi_writer(d) ? "multi-writer"
                             : ft              ? "fault tolerance"
                                               : NULL;

        if (!format_chosen(e, d) || !reason)
            continue;
        if (is_eager_candidate(d->format)) {
            eager =
                chk_ev_append(eager, chk_ev_set(chk_ev_disk(e, d), "reason", json_string(reason)));
            if (!eager)
                goto nomem;
            int required = sb || multi_writer(d) || legacy == 1;
            /* The message names a disk of the gravest reason. */
            if (!first_bad || (required && !n_required)) {
                first_bad = d->label ? d->label : d->file_name;
                first_fmt = d->format;
                first_reason = reason;
            }
            n_required += required;
        } else if (!d->format || !strcmp(d->format, "other")) {
            if (!(not_judged = chk_ev_append(not_judged, chk_ev_disk(e, d))))
                goto nomem;
        }
    }
    if (json_array_size(eager) == 0) {
        json_decref(eager);
        json_decref(not_judged);
        return 0;
    }

    const char *why = !strcmp(first_reason, "fault tolerance") ? "Fault Tolerance"
                      : !strcmp(first_reason, "multi-writer")  ? "multi-writer disk sharing"
                      : !strcmp(first_reason, "physicalSharing")
                          ? "a physically shared SCSI bus (MSCS)"
                          : "a virtually shared SCSI bus (MSCS)";
    if (n_required) {
        sev = SEV_CRITICAL;
        snprintf(msg, sizeof(msg),
                 "%s uses %s but %zu disk(s) are not eager-zeroed thick (%s is %s); %s", vname, why,
                 json_array_size(eager), first_bad ? first_bad : "a disk", first_fmt,
                 !strcmp(first_reason, "multi-writer")
                     ? "a multi-writer disk on VMFS must be eagerzeroedthick (VMware KB 1034165)"
                 : !strcmp(first_reason, "fault tolerance")
                     ? "its host runs ESXi older than 6.5, where legacy Fault Tolerance needs "
                       "eagerzeroedthick"
                     : "the guide names MSCS among the needs for eager-zeroed thick");
    } else {
        /* FT alone, on a host of 6.5 or later (or of unknown version): current FT supports
         * thin and lazy-zeroed disks, the guide still names FT among the needs for eager
         * zeroing. Advice, not a fault. */
        sev = SEV_INFO;
        snprintf(msg, sizeof(msg),
                 "%s uses Fault Tolerance with %zu disk(s) not eager-zeroed thick (%s is %s); "
                 "Fault Tolerance since vSphere 6.5 supports thin and lazy-zeroed disks, but the "
                 "guide still names it among the needs for eager zeroing: " GUIDE_FT,
                 vname, json_array_size(eager), first_bad ? first_bad : "a disk", first_fmt);
    }
    if (json_array_size(not_judged) == 0) {
        json_decref(not_judged);
        not_judged = NULL; /* "o*": left out */
    }
    /* json_pack takes the arrays, even when it fails: none is read after it. */
    json_t *ev =
        json_pack("{s:s, s:s?, s:o, s:s, s:o, s:o*}", "vm", vname, "ft_state", vm->ft_state,
                  "disks_not_eager_zeroed", eager, "required_format", "eagerzeroedthick",
                  "shared_controllers", shared_controllers(vm), "disks_format_unknown", not_judged);
    if (ft) {
        const char *hv = vm->host < e->n_hosts ? e->hosts[vm->host].product_version : NULL;
        ev = chk_ev_set(ev, "host_version", hv ? json_string(hv) : json_null());
        ev = chk_ev_set(ev, "legacy_ft_possible",
                        legacy == EST_UNKNOWN ? json_null() : json_boolean(legacy));
    }
    return chk_emit_vm(ctx, vm, sev, msg, ev);
nomem:
    json_decref(eager);
    json_decref(not_judged);
    return -ENOMEM;
}

static int run(struct chk_ctx *ctx, const struct estate *e)
{
    for (size_t i = 0; i < e->n_vms; i++) {
        /* A template runs no guest and cannot be protected by FT or clustered. */
        if (e->vms[i].template == 1)
            continue;
        int r = check_vm(ctx, e, &e->vms[i]);
        if (r < 0)
            return r;
    }
    return 0;
}

/* The seeds' words this check rests on, verbatim (tests/unit/test_registry.c). */
static const struct chk_source sources[] = {
    {"000_5bd48962a767ee9e.txt", "§3.7.1",
     "The default virtual disk format is thick provision lazy zeroed. Best practice is to use the "
     "default virtual disk format unless specific needs dictate the use of thick provisioned "
     "eager zeroed for performance or availability needs including Microsoft Cluster Service "
     "(MSCS) and VMware Fault Tolerance (FT)."},
    {"003_c6252f56ada835be.txt", "Performance: Thin Provisioning",
     "The figure shows that the aggregate throughput of the workload is around 180MBps in the "
     "post-zeroing phase of both thin and thick disks, and around 60MBps when the disks are in "
     "zeroing phase."},
    {0},
};

const struct check chk_vdisk_format = {
    .id = "vdisk-format",
    .title = "Virtual disk formats fit Fault Tolerance and MSCS",
    .severity = SEV_CRITICAL,
    .rationale =
        "The guide names Microsoft Cluster Service (a SCSI controller in physicalSharing or "
        "virtualSharing) and VMware Fault Tolerance among the needs for eager-zeroed thick "
        "disks, and VMware KB 1034165 requires them for multi-writer disks (backing.sharing "
        "sharingMultiWriter: Oracle RAC, clustered file systems): a thin or lazy-zeroed one is "
        "critical (RDMs are not judged). Fault Tolerance is critical only on a host older than "
        "ESXi 6.5, where legacy FT can still run; FT since 6.5 supports thin and lazy-zeroed "
        "disks, so there (or where the host's version is unknown) it is info, quoting the "
        "guide. Formats are judged "
        "only on VMFS, where the admin chooses them: on NFS the NAS decides, on vSAN and VVol "
        "the storage policy does. Unknown facts are not guessed: a disk whose format is unknown "
        "is listed as not judged. Templates are skipped. Other VMs' disks are not judged: the "
        "guide's default format is thick provision lazy zeroed, and for a guest's space "
        "reclamation it wants thin disks on thin storage (§3.7.2), which is space-reclaim's "
        "rule.",
    .reference = "000_5bd48962a767ee9e.txt §3.7.1; 003_c6252f56ada835be.txt (zeroing cost)",
    .sources = sources,
    .own =
        "The critical severity is vslint's: the guide names MSCS and Fault Tolerance among the "
        "needs that call for eager-zeroed thick, for performance or availability, and a cluster "
        "or FT VM exists for availability. Formats are judged only on VMFS, where the admin "
        "chooses them. Other VMs' disks are not judged: the guide's default is lazy-zeroed "
        "thick, and for in-guest reclaim it wants thin disks on thin storage (§3.7.2, "
        "space-reclaim's rule).",
    .remediation =
        "With the VM powered off, convert each listed disk to eager-zeroed thick: lazy-zeroed "
        "`vmkfstools --eagerzero /vmfs/volumes/<datastore>/<vm>/<disk>.vmdk`, thin "
        "`vmkfstools --inflatedisk /vmfs/volumes/<datastore>/<vm>/<disk>.vmdk` (or Storage "
        "vMotion with disk format \"Thick Provision Eager Zeroed\": PowerCLI Move-VM -VM <vm> "
        "-Datastore <ds> -DiskStorageFormat EagerZeroedThick).",
    .run = run,
};
