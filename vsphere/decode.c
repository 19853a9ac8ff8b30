/* Decoders for Datastore, StoragePod, DistributedVirtualSwitch, HostSystem and VirtualMachine
 * properties, and for the per-host follow-up answers. Polymorphic values switch on xsi:type. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "util/keymap.h"
#include "vsphere/decode.h"
#include "vsphere/session.h"

const char *const vim_datastore_paths[] = {"name", "summary", "info", "vm", "parent", "host", NULL};
const char *const vim_storage_pod_paths[] = {"name", "summary", NULL};
const char *const vim_dvswitch_paths[] = {"name", "uuid", "config", NULL};
const char *const vim_host_paths[] = {"name",
                                      "parent",
                                      "runtime.connectionState",
                                      "config.product.version",
                                      "config.network.vnic",
                                      "config.network.vswitch",
                                      "config.network.portgroup",
                                      "config.storageDevice.hostBusAdapter",
                                      "config.storageDevice.scsiLun",
                                      "config.storageDevice.multipathInfo",
                                      "config.storageDevice.plugStoreTopology.device",
                                      "config.storageDevice.plugStoreTopology.plugin",
                                      "configManager.advancedOption",
                                      "configManager.iscsiManager",
                                      NULL};
const char *const vim_vm_paths[] = {"name",
                                    "config.hardware.device",
                                    "config.version",
                                    "config.template",
                                    "runtime.powerState",
                                    "runtime.host",
                                    "summary.runtime.faultToleranceState",
                                    "snapshot",
                                    "datastore",
                                    "summary.config.vmPathName",
                                    "runtime.consolidationNeeded",
                                    "config.managedBy",
                                    "config.guestId",
                                    NULL};

#define EMIT(d, fn, row) ((d)->sink->fn ? (d)->sink->fn((d)->sink->ctx, (row)) : 0)
#define SINK(s, fn, row) ((s)->fn ? (s)->fn((s)->ctx, (row)) : 0)

static int count_children(struct vim_node *n)
{
    int k = 0;
    for (struct vim_node *c = vim_first_elem(n); c; c = vim_next_elem(c))
        k++;
    return k;
}

/* A boolean property vCenter may leave out: VIM_UNKNOWN then, never a guess. */
static int opt_bool(const struct vim_node *n, const char *path)
{
    return vim_path_bool(n, path, VIM_UNKNOWN);
}

/* VmfsDatastoreInfo.vmfs.extent[]: every partition the volume spans, head extent first. */
static int emit_extents(struct vim_decoder *d, const char *moref, struct vim_node *vmfs)
{
    int pos = 0, r;

    for (struct vim_node *e = vim_child(vmfs, "extent"); e; e = vim_next(e, "extent"), pos++) {
        struct vim_datastore_extent x = {
            .datastore = moref,
            .position = pos,
            .disk_name = vim_path_text(e, "diskName"),
            .partition = vim_path_int32(e, "partition", VIM_UNKNOWN),
        };
        if ((r = EMIT(d, datastore_extent, &x)) < 0)
            return r;
    }
    return 0;
}

/* Datastore.host: the hosts that mount it, and whether it is mounted and accessible there. */
static int emit_mounts(struct vim_decoder *d, const char *moref, struct vim_node *hosts)
{
    int r;

    for (struct vim_node *m = vim_first_elem(hosts); m; m = vim_next_elem(m)) {
        struct vim_node *info = vim_child(m, "mountInfo");
        struct vim_datastore_host x = {
            .datastore = moref,
            .host = vim_path_text(m, "key"),
            .mounted = opt_bool(info, "mounted"),
            .accessible = opt_bool(info, "accessible"),
            .access_mode = vim_path_text(info, "accessMode"),
        };
        if (x.host && (r = EMIT(d, datastore_host, &x)) < 0)
            return r;
    }
    return 0;
}

int vim_decode_datastore(struct vim_decoder *d, const char *moref, struct vim_node *objects)
{
    char tbuf[128];
    struct vim_node *summary = vim_prop(objects, "summary");
    struct vim_node *info = vim_prop(objects, "info");
    struct vim_node *vmfs = NULL;
    const char *itype = vim_xsi_type(info, tbuf, sizeof(tbuf));
    struct vim_datastore ds = {
        .moref = moref,
        .name = vim_text(vim_prop(objects, "name")),
        .type = vim_path_text(summary, "type"),
        .url = vim_path_text(summary, "url"),
        .parent = vim_text(vim_prop(objects, "parent")),
        .capacity = vim_path_int(summary, "capacity", VIM_UNKNOWN),
        .free_space = vim_path_int(summary, "freeSpace", VIM_UNKNOWN),
        .uncommitted = vim_path_int(summary, "uncommitted", VIM_UNKNOWN),
        .accessible = vim_path_bool(summary, "accessible", 1),
        .maintenance_mode = vim_path_text(summary, "maintenanceMode"),
        .vm_count = count_children(vim_prop(objects, "vm")),
        .vmfs_local = VIM_UNKNOWN,
        .vmfs_ssd = VIM_UNKNOWN,
    };
    int r;

    if (!ds.name)
        ds.name = vim_path_text(summary, "name");
    if (itype && !strcmp(itype, "VmfsDatastoreInfo")) {
        vmfs = vim_child(info, "vmfs");
        ds.vmfs_major = vim_path_int32(vmfs, "majorVersion", 0);
        ds.vmfs_version = vim_path_text(vmfs, "version");
        ds.vmfs_local = opt_bool(vmfs, "local");
        ds.vmfs_ssd = opt_bool(vmfs, "ssd");
        ds.unmap_priority = vim_path_text(vmfs, "unmapPriority");
    } else if (itype && !strcmp(itype, "NasDatastoreInfo")) {
        ds.nas_remote_host = vim_path_text(info, "nas/remoteHost");
        ds.nas_remote_path = vim_path_text(info, "nas/remotePath");
    }
    if (!ds.name)
        return 0; /* nothing usable: an object deleted while we read it */
    r = EMIT(d, datastore, &ds);
    if (r == 0)
        r = emit_extents(d, moref, vmfs);
    if (r == 0)
        r = emit_mounts(d, moref, vim_prop(objects, "host"));
    return r;
}

int vim_decode_storage_pod(struct vim_decoder *d, const char *moref, struct vim_node *objects)
{
    struct vim_node *summary = vim_prop(objects, "summary");
    struct vim_storage_pod sp = {
        .moref = moref,
        .name = vim_text(vim_prop(objects, "name")),
        .capacity = vim_path_int(summary, "capacity", VIM_UNKNOWN),
        .free_space = vim_path_int(summary, "freeSpace", VIM_UNKNOWN),
    };
    if (!sp.name)
        return 0;
    return EMIT(d, storage_pod, &sp);
}

int vim_decode_dvswitch(struct vim_decoder *d, const char *moref, struct vim_node *objects)
{
    struct vim_node *config = vim_prop(objects, "config");
    struct vim_dvswitch dv = {
        .moref = moref,
        .name = vim_text(vim_prop(objects, "name")),
        .uuid = vim_text(vim_prop(objects, "uuid")),
        .max_mtu = vim_path_int32(config, "maxMtu", VIM_UNKNOWN),
    };
    if (!dv.uuid)
        dv.uuid = vim_path_text(config, "uuid");
    if (!dv.name)
        return 0;
    return EMIT(d, dvswitch, &dv);
}

/* Adapter-level (target NULL) or target-level HostInternetScsiHbaParamValue list. */
static int emit_iscsi_options(struct vim_decoder *d, const struct vim_iscsi_target *target,
                              const char *host, const char *hba, struct vim_node *owner)
{
    char name[300];

    /* Options name their target as iscsi_targets does: "address:port" and the IQN. */
    if (target)
        snprintf(name, sizeof(name), "%s:%d", target->address, target->port);
    for (struct vim_node *o = vim_child(owner, "advancedOptions"); o;
         o = vim_next(o, "advancedOptions")) {
        struct vim_iscsi_option opt = {
            .host = host,
            .hba = hba,
            .kind = target ? target->kind : NULL,
            .target = target ? name : NULL,
            .target_iqn = target ? target->iscsi_name : NULL,
            .key = vim_path_text(o, "key"),
            .value = vim_path_text(o, "value"),
            .inherited = vim_path_bool(o, "isInherited", 0),
        };
        if (!opt.key)
            continue;
        int r = EMIT(d, iscsi_option, &opt);
        if (r < 0)
            return r;
    }
    return 0;
}

static int emit_iscsi_targets(struct vim_decoder *d, const char *host, const char *hba,
                              struct vim_node *adapter, const char *elem, const char *kind)
{
    for (struct vim_node *t = vim_child(adapter, elem); t; t = vim_next(t, elem)) {
        struct vim_iscsi_target tg = {
            .host = host,
            .hba = hba,
            .kind = kind,
            .address = vim_path_text(t, "address"),
            .port = vim_path_int32(t, "port", 3260),
            .iscsi_name = vim_path_text(t, "iScsiName"),
            .discovery_method = vim_path_text(t, "discoveryMethod"),
            .parent = vim_path_text(t, "parent"),
        };
        int r;

        if (!tg.address)
            continue;
        r = EMIT(d, iscsi_target, &tg);
        if (r < 0)
            return r;
        r = emit_iscsi_options(d, &tg, host, hba, t);
        if (r < 0)
            return r;
    }
    return 0;
}

static int add_string(char ***v, size_t *n, const char *s)
{
    char **nv = realloc(*v, (*n + 1) * sizeof(**v));
    if (!nv)
        return -ENOMEM;
    *v = nv;
    nv[*n] = strdup(s);
    if (!nv[*n])
        return -ENOMEM;
    (*n)++;
    return 0;
}

/* Every adapter of config.storageDevice.hostBusAdapter (its type tells a local controller from
 * a SAN one), and the iSCSI specifics of the iSCSI ones. */
static int decode_hbas(struct vim_decoder *d, struct vim_host_work *w, struct vim_node *val)
{
    char tbuf[128];
    int r;

    for (struct vim_node *a = vim_first_elem(val); a; a = vim_next_elem(a)) {
        const char *type = vim_xsi_type(a, tbuf, sizeof(tbuf));
        struct vim_hba any = {
            .host = w->moref,
            .device = vim_path_text(a, "device"),
            .type = type,
            .driver = vim_path_text(a, "driver"),
            .model = vim_path_text(a, "model"),
            .status = vim_path_text(a, "status"),
        };
        if (!any.device)
            continue;
        if ((r = EMIT(d, hba, &any)) < 0)
            return r;
        if (!type || strcmp(type, "HostInternetScsiHba"))
            continue;
        struct vim_iscsi_hba hba = {
            .host = w->moref,
            .device = any.device,
            .iscsi_name = vim_path_text(a, "iScsiName"),
            .model = any.model,
        };
        r = EMIT(d, iscsi_hba, &hba);
        if (r == 0)
            r = add_string(&w->hbas, &w->n_hbas, hba.device);
        if (r == 0)
            r = emit_iscsi_options(d, NULL, w->moref, hba.device, a);
        if (r == 0)
            r = emit_iscsi_targets(d, w->moref, hba.device, a, "configuredSendTarget", "send");
        if (r == 0)
            r = emit_iscsi_targets(d, w->moref, hba.device, a, "configuredStaticTarget", "static");
        if (r < 0)
            return r;
    }
    return 0;
}

static int decode_network(struct vim_decoder *d, const char *host, struct vim_node *objects)
{
    int r;

    for (struct vim_node *v = vim_first_elem(vim_prop(objects, "config.network.vswitch")); v;
         v = vim_next_elem(v)) {
        struct vim_vswitch vs = {
            .host = host,
            .name = vim_path_text(v, "name"),
            .mtu = vim_path_int32(v, "mtu", vim_path_int32(v, "spec/mtu", 1500)),
        };
        if (vs.name && (r = EMIT(d, vswitch, &vs)) < 0)
            return r;
    }
    for (struct vim_node *p = vim_first_elem(vim_prop(objects, "config.network.portgroup")); p;
         p = vim_next_elem(p)) {
        struct vim_portgroup pg = {
            .host = host,
            .name = vim_path_text(p, "spec/name"),
            .vswitch = vim_path_text(p, "spec/vswitchName"),
        };
        if (pg.name && (r = EMIT(d, portgroup, &pg)) < 0)
            return r;
    }
    for (struct vim_node *n = vim_first_elem(vim_prop(objects, "config.network.vnic")); n;
         n = vim_next_elem(n)) {
        struct vim_node *spec = vim_child(n, "spec");
        struct vim_vnic vn = {
            .host = host,
            .device = vim_path_text(n, "device"),
            .portgroup = vim_path_text(n, "portgroup"),
            .dvs_uuid = vim_path_text(spec, "distributedVirtualPort/switchUuid"),
            .dvs_portgroup = vim_path_text(spec, "distributedVirtualPort/portgroupKey"),
            .mtu = vim_path_int32(spec, "mtu", 1500),
            .ip = vim_path_text(spec, "ip/ipAddress"),
            .subnet_mask = vim_path_text(spec, "ip/subnetMask"),
        };
        if (vn.portgroup && !*vn.portgroup)
            vn.portgroup = NULL;
        if (vn.device && (r = EMIT(d, vnic, &vn)) < 0)
            return r;
    }
    return 0;
}

/* What the host says about its devices besides the ScsiLun list, keyed for lookups. */
struct storage_maps {
    struct vsl_keymap mp;     /* ScsiLun key -> multipathInfo lun element (struct vim_node *) */
    struct vsl_keymap device; /* ScsiLun key -> plugStoreTopology device key (const char *) */
    struct vsl_keymap claim;  /* plugStoreTopology device key -> plug-in name (const char *) */
};

/* The value of key in m as a pointer, NULL when absent. */
static const void *lookup(const struct vsl_keymap *m, const char *key)
{
    const struct vsl_keymap_entry *e = vsl_keymap_get(m, key);
    return e ? (const void *)e->val : NULL;
}

static int storage_maps_build(struct storage_maps *m, struct vim_node *objects)
{
    struct vim_node *mp = vim_prop(objects, "config.storageDevice.multipathInfo");
    struct vim_node *devs = vim_prop(objects, "config.storageDevice.plugStoreTopology.device");
    struct vim_node *plugins = vim_prop(objects, "config.storageDevice.plugStoreTopology.plugin");
    int r = 0;

    for (struct vim_node *l = vim_child(mp, "lun"); l && r == 0; l = vim_next(l, "lun"))
        r = vsl_keymap_add(&m->mp, vim_path_text(l, "lun"), (uintptr_t)l);
    for (struct vim_node *dv = vim_first_elem(devs); dv && r == 0; dv = vim_next_elem(dv))
        r = vsl_keymap_add(&m->device, vim_path_text(dv, "lun"),
                           (uintptr_t)vim_path_text(dv, "key"));
    for (struct vim_node *p = vim_first_elem(plugins); p && r == 0; p = vim_next_elem(p)) {
        const char *name = vim_path_text(p, "name");
        for (struct vim_node *dv = vim_child(p, "device"); dv && r == 0;
             dv = vim_next(dv, "device"))
            r = vsl_keymap_add(&m->claim, vim_text(dv), (uintptr_t)name);
    }
    vsl_keymap_sort(&m->mp);
    vsl_keymap_sort(&m->device);
    vsl_keymap_sort(&m->claim);
    return r;
}

static void storage_maps_free(struct storage_maps *m)
{
    vsl_keymap_free(&m->mp);
    vsl_keymap_free(&m->device);
    vsl_keymap_free(&m->claim);
}

/* The multipathing plug-in that owns a device: the one plugStoreTopology says claims it; else
 * what its multipathInfo policy implies (only NMP's policies are VMW_PSP_*, only HPP's have the
 * HPP type); else unknown. Devices of third-party plug-ins (PowerPath) are not in
 * multipathInfo at all, so only the topology can name those. */
static const char *multipath_plugin(const char *claimed, const char *policy_type, const char *psp)
{
    if (claimed)
        return claimed;
    if (policy_type && !strcmp(policy_type, "HostMultipathInfoHppLogicalUnitPolicy"))
        return "HPP";
    if (psp && !strncmp(psp, "VMW_PSP_", 8))
        return "NMP";
    return NULL;
}

/* A path names its adapter by key (key-vim.host.FibreChannelHba-vmhba2); the adapter list
 * gives its device name, which is how everything else names an adapter. The host's adapters
 * with both, in list order, read once for all its paths (an iSCSI adapter has some 40
 * children to look through for its key and device). */
struct adapters {
    const char **key, **dev; /* owned arrays of borrowed strings */
    size_t n;
};

static int adapters_read(struct adapters *ad, struct vim_node *hbas)
{
    size_t n = (size_t)count_children(hbas);

    ad->n = 0;
    ad->key = calloc(n ? n : 1, sizeof(*ad->key));
    ad->dev = calloc(n ? n : 1, sizeof(*ad->dev));
    if (!ad->key || !ad->dev)
        return -ENOMEM;
    for (struct vim_node *a = vim_first_elem(hbas); a; a = vim_next_elem(a)) {
        const char *k = vim_path_text(a, "key"), *dev = vim_path_text(a, "device");
        if (k && dev) {
            ad->key[ad->n] = k;
            ad->dev[ad->n++] = dev;
        }
    }
    return 0;
}

static void adapters_free(struct adapters *ad)
{
    free(ad->key);
    free(ad->dev);
}

static const char *adapter_device(const struct adapters *ad, const char *key)
{
    if (!key)
        return NULL;
    for (size_t i = 0; i < ad->n; i++)
        if (!strcmp(ad->key[i], key))
            return ad->dev[i];
    return key;
}

/* The storage port a path ends at, from its transport: a Fibre Channel target's port WWN in
 * the colon form arrays print ("50:06:01:60:47:e4:1e:49", into wwpn), an iSCSI target's IQN
 * and first address. vCenter sends the WWN as a signed xsd:long; its 64 bits are the WWN. */
static void path_target(struct vim_lun_path *path, struct vim_node *transport, char *wwpn,
                        size_t size)
{
    char tbuf[128];
    const char *type = vim_xsi_type(transport, tbuf, sizeof(tbuf));

    if (type && !strcmp(type, "HostFibreChannelTargetTransport")) {
        struct vim_node *w = vim_child(transport, "portWorldWideName");
        if (!vim_text(w))
            return;
        static const char hex[] = "0123456789abcdef";
        uint64_t v = (uint64_t)vim_path_int(transport, "portWorldWideName", 0);
        size_t n = 0;
        /* by hand: snprintf per byte was a visible share of a path-dense host's decoding */
        for (int shift = 56; shift >= 0 && n + 3 < size; shift -= 8) {
            if (shift != 56)
                wwpn[n++] = ':';
            wwpn[n++] = hex[(v >> (shift + 4)) & 0xf];
            wwpn[n++] = hex[(v >> shift) & 0xf];
        }
        wwpn[n] = '\0';
        path->target_wwpn = wwpn;
    } else if (type && !strcmp(type, "HostInternetScsiTargetTransport")) {
        path->target_iqn = vim_path_text(transport, "iScsiName");
        path->target_address = vim_path_text(transport, "address");
    }
}

static int emit_paths(struct vim_decoder *d, const char *host, const char *lun,
                      struct vim_node *mlun, const struct adapters *hbas)
{
    char wwpn[32];
    int r;

    for (struct vim_node *p = vim_child(mlun, "path"); p; p = vim_next(p, "path")) {
        struct vim_lun_path path = {
            .host = host,
            .lun = lun,
            .name = vim_path_text(p, "name"),
            .state = vim_path_text(p, "pathState"),
            .adapter = adapter_device(hbas, vim_path_text(p, "adapter")),
        };
        path_target(&path, vim_child(p, "transport"), wwpn, sizeof(wwpn));
        if (!path.state)
            path.state = vim_path_text(p, "state");
        if (!path.name)
            path.name = vim_path_text(p, "key");
        if (path.name && (r = EMIT(d, lun_path, &path)) < 0)
            return r;
    }
    return 0;
}

/* Every ScsiLun of the host, with its multipath policy and paths (multipathInfo lists the
 * devices of NMP and HPP) and the plug-in that owns it. */
static int decode_storage(struct vim_decoder *d, struct vim_host_work *w, struct vim_node *objects)
{
    struct vim_node *luns = vim_prop(objects, "config.storageDevice.scsiLun");
    struct adapters hbas = {0};
    struct storage_maps maps = {0};
    char tbuf[128];
    int r = storage_maps_build(&maps, objects);

    if (r == 0)
        r = adapters_read(&hbas, vim_prop(objects, "config.storageDevice.hostBusAdapter"));

    for (struct vim_node *l = vim_first_elem(luns); l && r == 0; l = vim_next_elem(l)) {
        const char *key = vim_path_text(l, "key");
        struct vim_node *mlun = (struct vim_node *)lookup(&maps.mp, key);
        struct vim_node *policy = vim_child(mlun, "policy");
        struct vim_lun lun = {
            .host = w->moref,
            .key = key,
            .canonical_name = vim_path_text(l, "canonicalName"),
            .display_name = vim_path_text(l, "displayName"),
            .vendor = vim_path_text(l, "vendor"),
            .model = vim_path_text(l, "model"),
            .lun_type = vim_path_text(l, "lunType"),
            /* Only what the host says: a disk that does not answer localDisk is of unknown
             * locality, whatever its adapter (checks may weigh the adapter and SATP). */
            .local = opt_bool(l, "localDisk"),
            .protocol_endpoint = opt_bool(l, "protocolEndpoint"),
            .psp = vim_path_text(policy, "policy"),
            .satp = vim_path_text(mlun, "storageArrayTypePolicy/policy"),
            .policy_type = vim_xsi_type(policy, tbuf, sizeof(tbuf)),
        };
        if (!key || !lun.canonical_name)
            continue;
        lun.multipath_plugin = multipath_plugin(lookup(&maps.claim, lookup(&maps.device, key)),
                                                lun.policy_type, lun.psp);
        if (lun.local == 0)
            w->san_luns++;
        r = EMIT(d, lun, &lun);
        if (r == 0)
            r = emit_paths(d, w->moref, lun.canonical_name, mlun, &hbas);
    }
    storage_maps_free(&maps);
    adapters_free(&hbas);
    return r;
}

int vim_decode_host(struct vim_decoder *d, const char *moref, struct vim_node *objects)
{
    struct vim_host h = {
        .moref = moref,
        .name = vim_text(vim_prop(objects, "name")),
        .parent = vim_text(vim_prop(objects, "parent")),
        .connection_state = vim_text(vim_prop(objects, "runtime.connectionState")),
        .product_version = vim_text(vim_prop(objects, "config.product.version")),
    };
    int r;

    if (!h.name)
        return 0;
    struct vim_host_work *nw = realloc(d->hosts, (d->n_hosts + 1) * sizeof(*nw));
    if (!nw)
        return -ENOMEM;
    d->hosts = nw;
    struct vim_host_work *w = &d->hosts[d->n_hosts++];
    memset(w, 0, sizeof(*w));
    const char *om = vim_text(vim_prop(objects, "configManager.advancedOption"));
    const char *im = vim_text(vim_prop(objects, "configManager.iscsiManager"));
    w->moref = strdup(moref);
    w->name = strdup(h.name);
    w->option_manager = om ? strdup(om) : NULL;
    w->iscsi_manager = im ? strdup(im) : NULL;
    if (!w->moref || !w->name || (om && !w->option_manager) || (im && !w->iscsi_manager))
        return -ENOMEM;

    r = EMIT(d, host, &h);
    if (r == 0)
        r = decode_network(d, moref, objects);
    if (r == 0)
        r = decode_hbas(d, w, vim_prop(objects, "config.storageDevice.hostBusAdapter"));
    if (r == 0)
        r = decode_storage(d, w, objects);
    return r;
}

/* The on-disk format of a VirtualDisk backing, as vSphere's UI names it. */
static const char *disk_format(struct vim_node *backing, const char *btype)
{
    if (!btype)
        return "other";
    if (!strcmp(btype, "VirtualDiskRawDiskMappingVer1BackingInfo")) {
        const char *mode = vim_path_text(backing, "compatibilityMode");
        return mode && !strcmp(mode, "physicalMode") ? "rdm-physical" : "rdm-virtual";
    }
    if (!strcmp(btype, "VirtualDiskFlatVer2BackingInfo") ||
        !strcmp(btype, "VirtualDiskFlatVer1BackingInfo")) {
        if (vim_path_bool(backing, "thinProvisioned", 0))
            return "thin";
        if (vim_path_bool(backing, "eagerlyScrub", 0))
            return "eagerzeroedthick";
        return "lazyzeroedthick";
    }
    if (!strcmp(btype, "VirtualDiskSeSparseBackingInfo") ||
        !strcmp(btype, "VirtualDiskSparseVer2BackingInfo"))
        return "thin";
    return "other";
}

static int is_controller(const char *type)
{
    size_t n = strlen(type);
    return n > 10 && !strcmp(type + n - 10, "Controller") && strcmp(type, "VirtualPCIController") &&
           strcmp(type, "VirtualPS2Controller") && strcmp(type, "VirtualSIOController") &&
           strcmp(type, "VirtualUSBController") && strcmp(type, "VirtualUSBXHCIController");
}

static int decode_devices(struct vim_decoder *d, const char *vm, struct vim_node *devices)
{
    char tbuf[128], bbuf[128];
    int r;

    for (struct vim_node *dev = vim_first_elem(devices); dev; dev = vim_next_elem(dev)) {
        const char *type = vim_xsi_type(dev, tbuf, sizeof(tbuf));
        if (!type)
            continue;
        if (!strcmp(type, "VirtualDisk")) {
            struct vim_node *backing = vim_child(dev, "backing");
            const char *btype = vim_xsi_type(backing, bbuf, sizeof(bbuf));
            int64_t cap = vim_path_int(dev, "capacityInBytes", VIM_UNKNOWN);
            if (cap == VIM_UNKNOWN) {
                int64_t kb = vim_path_int(dev, "capacityInKB", VIM_UNKNOWN);
                /* A size no disk can have (negative, or past int64 in bytes) is unknown. */
                cap = kb < 0 || kb > INT64_MAX / 1024 ? VIM_UNKNOWN : kb * 1024;
            }
            struct vim_vdisk disk = {
                .vm = vm,
                .key = vim_path_int32(dev, "key", VIM_UNKNOWN),
                .label = vim_path_text(dev, "deviceInfo/label"),
                .file_name = vim_path_text(backing, "fileName"),
                .datastore = vim_path_text(backing, "datastore"),
                .capacity_bytes = cap,
                .format = disk_format(backing, btype),
                .controller_key = vim_path_int32(dev, "controllerKey", VIM_UNKNOWN),
                .unit_number = vim_path_int32(dev, "unitNumber", VIM_UNKNOWN),
                .parent = vim_path_text(backing, "parent/fileName"),
                .sharing = vim_path_text(backing, "sharing"),
            };
            if ((r = EMIT(d, vdisk, &disk)) < 0)
                return r;
        } else if (is_controller(type)) {
            struct vim_controller ctl = {
                .vm = vm,
                .key = vim_path_int32(dev, "key", VIM_UNKNOWN),
                .type = type,
                .shared_bus = vim_path_text(dev, "sharedBus"),
                .bus_number = vim_path_int32(dev, "busNumber", VIM_UNKNOWN),
            };
            if ((r = EMIT(d, controller, &ctl)) < 0)
                return r;
        }
    }
    return 0;
}

static int decode_snapshots(struct vim_decoder *d, const char *vm, struct vim_node *list, int depth)
{
    int r;

    if (depth > 512)
        return 0; /* a deeper chain than vSphere allows: stop rather than recurse forever */
    for (; list;
         list = vim_next(list, vim_name_is(list, "rootSnapshotList") ? "rootSnapshotList"
                                                                     : "childSnapshotList")) {
        struct vim_snapshot s = {.vm = vm, .name = vim_path_text(list, "name"), .depth = depth};
        if (vim_parse_time(vim_path_text(list, "createTime"), &s.created) < 0)
            s.created = VIM_UNKNOWN;
        if ((r = EMIT(d, snapshot, &s)) < 0)
            return r;
        r = decode_snapshots(d, vm, vim_child(list, "childSnapshotList"), depth + 1);
        if (r < 0)
            return r;
    }
    return 0;
}

int vim_decode_vm(struct vim_decoder *d, const char *moref, struct vim_node *objects)
{
    struct vim_vm vm = {
        .moref = moref,
        .name = vim_text(vim_prop(objects, "name")),
        .hw_version = vim_text(vim_prop(objects, "config.version")),
        .template = vim_path_bool(vim_prop(objects, "config.template"), "", 0),
        .power_state = vim_text(vim_prop(objects, "runtime.powerState")),
        .ft_state = vim_text(vim_prop(objects, "summary.runtime.faultToleranceState")),
        .host = vim_text(vim_prop(objects, "runtime.host")),
        .vm_path_name = vim_text(vim_prop(objects, "summary.config.vmPathName")),
        .consolidation_needed = opt_bool(vim_prop(objects, "runtime.consolidationNeeded"), ""),
        .managed_by = vim_path_text(vim_prop(objects, "config.managedBy"), "extensionKey"),
        .managed_by_type = vim_path_text(vim_prop(objects, "config.managedBy"), "type"),
        .guest_id = vim_text(vim_prop(objects, "config.guestId")),
    };
    int r;

    if (!vm.name)
        return 0;
    if ((r = EMIT(d, vm, &vm)) < 0)
        return r;
    for (struct vim_node *ds = vim_first_elem(vim_prop(objects, "datastore")); ds;
         ds = vim_next_elem(ds)) {
        struct vim_vm_datastore row = {.vm = moref, .datastore = vim_text(ds)};
        if (row.datastore && (r = EMIT(d, vm_datastore, &row)) < 0)
            return r;
    }
    r = decode_devices(d, moref, vim_prop(objects, "config.hardware.device"));
    if (r == 0)
        r = decode_snapshots(d, moref, vim_child(vim_prop(objects, "snapshot"), "rootSnapshotList"),
                             1);
    return r;
}

int vim_decode_options(struct vim_sink *sink, const char *host, struct vim_node *response)
{
    for (struct vim_node *o = vim_child(response, "returnval"); o; o = vim_next(o, "returnval")) {
        struct vim_host_option opt = {
            .host = host,
            .key = vim_path_text(o, "key"),
            .value = vim_path_text(o, "value"),
        };
        int r;
        if (opt.key && (r = SINK(sink, host_option, &opt)) < 0)
            return r;
    }
    return 0;
}

int vim_decode_bound_vnics(struct vim_sink *sink, const char *host, const char *hba,
                           struct vim_node *response)
{
    for (struct vim_node *o = vim_child(response, "returnval"); o; o = vim_next(o, "returnval")) {
        struct vim_iscsi_binding b = {
            .host = host, .hba = hba, .vnic = vim_path_text(o, "vnicDevice")};
        int r;
        if (b.vnic && (r = SINK(sink, iscsi_binding, &b)) < 0)
            return r;
    }
    return 0;
}

int vim_parse_rr_iops(const char *config)
{
    const char *p;

    if (!config)
        return VIM_UNKNOWN;
    for (p = strstr(config, "iops="); p; p = strstr(p + 1, "iops=")) {
        /* "iops=" must start a field, not end another name. */
        if (p != config && p[-1] != '{' && p[-1] != ',' && p[-1] != ' ')
            continue;
        char *end;
        errno = 0;
        long v = strtol(p + 5, &end, 10);
        if (errno || end == p + 5 || v < 0 || v > 0x7fffffff)
            return VIM_UNKNOWN;
        return (int)v;
    }
    return VIM_UNKNOWN;
}

/* An esxcli answer (the unescaped inner document): one row for each element under its root,
 * decoded by row(). 0, or the first error (-VSL_EXML when the document does not parse). */
static int esxcli_rows(struct vim_sink *sink, const char *host, const char *doc, size_t len,
                       int (*row)(struct vim_sink *sink, const char *host, struct vim_node *o))
{
    struct vim_xml *x = NULL;
    int r = vim_xml_parse_all(doc, len, 0, NULL, NULL, &x);

    if (r == 0) {
        struct vim_node *root = vim_xml_root(x);
        for (struct vim_node *o = vim_first_elem(root); o && r >= 0; o = vim_next_elem(o))
            r = row(sink, host, o);
    }
    vim_xml_free(x);
    return r;
}

static int nmp_device(struct vim_sink *sink, const char *host, struct vim_node *o)
{
    struct vim_nmp_device dev = {
        .host = host,
        .device = vim_path_text(o, "Device"),
        .psp = vim_path_text(o, "PathSelectionPolicy"),
        .psp_config = vim_path_text(o, "PathSelectionPolicyDeviceConfig"),
    };
    dev.iops = vim_parse_rr_iops(dev.psp_config);
    return dev.device ? SINK(sink, nmp_device, &dev) : 0;
}

int vim_decode_nmp_devices(struct vim_sink *sink, const char *host, const char *doc, size_t len)
{
    return esxcli_rows(sink, host, doc, len, nmp_device);
}

/* An esxcli field as a rule means it: NULL when empty or blank ("any vendor", "no options"). */
static const char *rule_field(struct vim_node *o, const char *name)
{
    const char *s = vim_path_text(o, name);

    if (!s || !s[strspn(s, " \t\r\n")])
        return NULL;
    return s;
}

static int satp_rule(struct vim_sink *sink, const char *host, struct vim_node *o)
{
    struct vim_satp_rule rule = {
        .host = host,
        .satp = rule_field(o, "Name"),
        .vendor = rule_field(o, "Vendor"),
        .model = rule_field(o, "Model"),
        .psp = rule_field(o, "DefaultPSP"),
        .psp_options = rule_field(o, "PSPOptions"),
        .rule_group = rule_field(o, "RuleGroup"),
        .device = rule_field(o, "Device"),
        .driver = rule_field(o, "Driver"),
        .transport = rule_field(o, "Transport"),
        .claim_options = rule_field(o, "ClaimOptions"),
        .options = rule_field(o, "Options"),
        .description = rule_field(o, "Description"),
    };
    return rule.satp ? SINK(sink, satp_rule, &rule) : 0;
}

int vim_decode_satp_rules(struct vim_sink *sink, const char *host, const char *doc, size_t len)
{
    return esxcli_rows(sink, host, doc, len, satp_rule);
}

void vim_decoder_free(struct vim_decoder *d)
{
    for (size_t i = 0; i < d->n_hosts; i++) {
        struct vim_host_work *w = &d->hosts[i];
        free(w->moref);
        free(w->name);
        free(w->option_manager);
        free(w->iscsi_manager);
        for (size_t j = 0; j < w->n_hbas; j++)
            free(w->hbas[j]);
        free(w->hbas);
    }
    free(d->hosts);
    d->hosts = NULL;
    d->n_hosts = 0;
}
