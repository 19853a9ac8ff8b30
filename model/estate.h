/* The estate: one vCenter's stored snapshot as plain C structs, loaded from db/ in one read
 * transaction (db_estate_load) and handed to every check. Checks never see SQL or SOAP. */
#ifndef MODEL_ESTATE_H
#define MODEL_ESTATE_H

#include <stddef.h>
#include <stdint.h>

/* Unknown numbers are EST_UNKNOWN (-1); unknown strings are NULL, except the name of a pod,
 * datastore, DVS, host or VM, which is never NULL (its moref when vCenter gave none).
 * Indexes into the estate's arrays are size_t with EST_NONE for "no such object". All strings
 * and arrays are owned by the estate (its arena) and freed by est_free(), never one by one.
 * An array may be shared between parents: db_estate_load() gives LUNs with equal paths, VMs
 * with equal controllers and datastores with equal mounts one array, so those fields point to
 * const and nothing writes them after the load. */
#define EST_UNKNOWN (-1)
#define EST_NONE    ((size_t)-1)

/* One point of an object's capacity history (db/'s capacity_history: one per successful poll,
 * thinned to one an hour after a day and one a day after a month). */
struct est_capacity_point {
    int64_t t_ms;                 /* when the poll that read it finished */
    int64_t capacity, free_space; /* bytes */
};

/* How far back the estate's capacity histories reach (datastore-runway's longest window). */
#define EST_HISTORY_DAYS 90

struct est_pod {
    const char *moref, *name;
    int64_t capacity, free_space; /* bytes, as vCenter sums them for the datastore cluster */
    /* Its capacity history over the last EST_HISTORY_DAYS, oldest first, at most one point an
     * hour (the latest of each hour); empty when none was recorded. */
    struct est_capacity_point *history;
    size_t n_history;
};

/* Where the host LUN lists have the device of an extent: which host, and which of its LUNs. */
struct est_lun_ref {
    size_t host; /* index into estate.hosts */
    size_t lun;  /* index into that host's luns */
};

/* One extent of a VMFS volume (VmfsDatastoreInfo.vmfs.extent[], a HostScsiDiskPartition). */
struct est_extent {
    const char *disk_name; /* the device's canonical name (naa., eui., t10., mpx.); NULL if not
                              reported */
    int partition;         /* partition number on that device, EST_UNKNOWN */
    /* The LUN behind the extent on each host that mounts the datastore and lists the device
     * (mpx. names are per host, so only mounting hosts are asked). Empty when no mounting
     * host lists it, e.g. the hosts' storage was not read. */
    struct est_lun_ref *luns;
    size_t n_luns;
};

/* A host that mounts a datastore (Datastore.host). */
struct est_mount {
    size_t host;             /* index into estate.hosts; hosts the snapshot lacks are left out */
    int mounted, accessible; /* mountInfo.mounted / .accessible 0/1, EST_UNKNOWN */
    const char *access_mode; /* "readWrite", "readOnly", or NULL */
};

/* Why an NFS datastore is joined to no NAS server, or to no pool, of a configured array
 * (est_datastore.nas_doubt):
 * - EST_NAS_AMBIGUOUS: several NAS servers have its address, none known to be a replication
 *   destination, and the share it is mounted from does not tell them apart (nor does one of
 *   them alone stand on an array of its vCenter's storage);
 * - EST_NAS_DESTINATION: only NAS servers that say they are replication destinations have its
 *   address (they serve nothing before a failover);
 * - EST_NAS_BY_NAME: it is mounted by a host name, which vslint does not resolve (never from a
 *   check), and a NAS server exports a share holding its path: not matched, which is all
 *   that is known;
 * - EST_NAS_NO_SHARE: its NAS server is known (nas_server), but no share of that server holds
 *   its path, so its pool is not;
 * - EST_NAS_SHARES_NOT_READ: its NAS server is known, but its array's file systems or NFS
 *   shares were not read (arr_collect() leaves those types out when it cannot read them), so
 *   its pool is not. */
enum est_nas_doubt {
    EST_NAS_NO_DOUBT = 0,
    EST_NAS_AMBIGUOUS,
    EST_NAS_DESTINATION,
    EST_NAS_BY_NAME,
    EST_NAS_NO_SHARE,
    EST_NAS_SHARES_NOT_READ,
};

struct est_datastore {
    const char *moref, *name, *type; /* type: VMFS, NFS, NFS41, vsan, VVOL, OTHER */
    int64_t capacity, free_space;    /* bytes (capacity 750 GiB = 805306368000) */
    int64_t uncommitted;             /* EST_UNKNOWN when vCenter did not report it */
    int accessible;                  /* 0/1 */
    int vmfs_major;                  /* 0 when not VMFS */
    size_t pod;         /* index into estate.pods, EST_NONE when not in a datastore cluster */
    int vm_count;       /* Datastore.vm entries, templates included: every VM with any file
                           there, an ISO image or a disk as much as its configuration; see
                           est_vm.config_datastore for where a VM lives */
    const char *parent; /* moref of its folder or datastore cluster (see est_entity), or NULL */
    /* VMFS only (NULL / EST_UNKNOWN otherwise, or when vCenter did not say): */
    const char *vmfs_version;    /* vmfs.version, e.g. "6.82" */
    int vmfs_local;              /* vmfs.local: 1 for a volume on one host's local disk (a boot
                                    datastore, "datastore1"), 0 for a shared one */
    int vmfs_ssd;                /* vmfs.ssd 0/1 */
    const char *unmap_priority;  /* vmfs.unmapPriority (VMFS6 space reclamation): "none" (off) or
                                    "low"; NULL on VMFS5, which has no automatic unmap */
    const char *nas_remote_host; /* NFS: the server (nas.remoteHost), else NULL */
    const char *nas_remote_path; /* NFS: the export (nas.remotePath, "/share"), else NULL */
    /* NFS: the configured array's NAS server that serves the datastore (one of its file
     * interfaces has nas_remote_host as address; of several such servers, the one exporting
     * the share that holds nas.remotePath: db-private.h DB_NFS_RANKED) and the SP it is placed
     * on (homeSP: "spa", "spb"); NULL when no configured array serves it, or which one does
     * cannot be told. */
    const char *nas_array, *nas_server, *nas_home_sp;
    /* How many storage processors nas_array's ports are on: 1 on a single-SP array (UnityVSA),
     * where no placement can be on both SPs and none is judged; 0 when not told. */
    int nas_array_sps;
    /* NFS, no NAS server or no pool joined although a configured array's NAS server may be the
     * one: why (enum est_nas_doubt; EST_NAS_NO_DOUBT when both are joined, or no array knows the
     * address or share); nas_doubt_server is the first such NAS server, "array/name",
     * nas_doubt_array its array, nas_doubt_count how many there are. Said in the findings,
     * never guessed. */
    int nas_doubt;
    const char *nas_doubt_server, *nas_doubt_array;
    int nas_doubt_count;
    struct est_extent *extents;  /* VMFS: every extent, head extent first; more than one is a
                                    spanned volume */
    size_t n_extents;
    /* The hosts that mount it, in host moref order. May be the same array as another
     * datastore's (db/load.c shares equal ones): never written. */
    const struct est_mount *mounts;
    size_t n_mounts;
    struct est_capacity_point *history; /* as est_pod.history */
    size_t n_history;
    /* The array pools its extents' LUNs live in (indexes into estate.pools), when a configured
     * array holds them; none when no array does (the datastore is then simply not joined). */
    size_t *pools;
    size_t n_pools;
    /* For each of pools: 1 when a LUN of this datastore in that pool is thin (a thick disk on
     * the datastore then takes pool space as it is written), 0 when they are all thick (their
     * space is the pool's already). */
    int *pool_thin;
};

/* A storage pool of a configured array ([array NAME]) behind this vCenter's datastores.
 * Arrays are polled on their own and stored under their own names; db_estate_load() gives a
 * vCenter's estate the pools that hold a LUN whose WWN is the naa. name of one of its
 * datastores' extents (est_naa_from_wwn). A pool that backs none of them is not in it. */
struct est_pool {
    const char *array, *array_type; /* the [array NAME] and its type ("unity") */
    const char *id, *name;          /* "pool_1", the name in Unisphere */
    int64_t size_total, size_free, size_used, size_subscribed; /* bytes, EST_UNKNOWN */
    int64_t snap_size_used;         /* bytes snapshots hold, EST_UNKNOWN */
    int alert_threshold;            /* % of the pool used at which the array alerts, EST_UNKNOWN */
    int health;                     /* Unity health.value (5 OK), EST_UNKNOWN */
    const char *health_text;
    int n_luns, n_thin_luns;        /* every LUN of the pool on the array, and the thin ones */
    int64_t polled_ms;              /* the array's last successful poll (unix ms) */
    const char *array_error;        /* the array's last poll failed: why; NULL when it worked */
    size_t *datastores;             /* the datastores it backs, indexes into estate.datastores */
    size_t n_datastores;
    /* NULL, or (a what-if judge's estate, which holds only the datastore judged) the names of
     * the n_datastores datastores it backs, in place of datastores: the pool's message names
     * them all, and copying each into the judge made a placement O(n^2) behind one pool.
     * chk_pool_datastore() reads either. */
    const char *const *datastore_names;
};

/* A port of a configured array: a Fibre Channel port a path of this vCenter's hosts ends at
 * (wwpn), or an iSCSI portal (address) and the Ethernet port it is on. */
struct est_array_port {
    const char *array; /* the [array NAME] */
    const char *wwpn;  /* FC: "50:06:01:60:47:e4:1e:49"; NULL for an iSCSI portal */
    const char *sp;    /* the array's id of its storage processor: "spa", "spb" */
    const char *id;    /* the port's id on the array: "spa_fc4", "spa_eth2" */
    /* iSCSI portals (NULL / EST_UNKNOWN for FC): the portal's id and address, its target's
     * IQN, and the MTU of its Ethernet port. */
    const char *portal, *address, *iqn;
    int mtu;
    /* How many storage processors the array's ports (every one it lists) are on: 1 on a
     * single-SP array (UnityVSA has SP A only), where no path can reach both and none is
     * judged; 0 when not told. */
    int array_sps;
};

struct est_dvswitch {
    const char *moref, *name, *uuid;
    int max_mtu; /* EST_UNKNOWN if not reported */
};

struct est_vswitch {
    const char *name;
    int mtu;
};

struct est_vnic {
    const char *device; /* vmk1 */
    int mtu;
    const char *portgroup; /* standard portgroup, or NULL */
    size_t vswitch;        /* index into host.vswitches via the portgroup, or EST_NONE */
    size_t dvswitch;       /* index into estate.dvswitches by uuid, or EST_NONE */
    const char *dvs_uuid;  /* as reported, even when the DVS itself was not found */
    /* spec.ip: IPv4 dotted quads, or NULL (DHCP not yet leased, IPv6 only, not reported);
     * what iscsi-jumbo-frames selects an unbound adapter's vmknics by (the targets' subnets) */
    const char *ip, *subnet_mask;
};

struct est_option { /* an iSCSI advanced option, adapter or target level */
    const char *key, *value;
    int inherited; /* 0/1 */
};

struct est_iscsi_target {
    const char *kind; /* "send" or "static" */
    const char *address;
    int port;
    const char *iscsi_name; /* static targets: the target's IQN (an array may present one IQN
                               per volume, so many static targets share an address and port) */
    /* Static targets: how it was found (staticMethod, sendTargetMethod, slpMethod, isnsMethod,
     * unknownMethod) and what it inherits settings from as vCenter names it (the adapter's
     * device, or the send target's "address:port"); NULL when not reported. */
    const char *discovery_method, *parent;
    size_t send_target; /* a static target whose parent is one of this adapter's send targets:
                           that target's index in hba.targets (its options are what this one
                           inherits); else EST_NONE */
    struct est_option *options;
    size_t n_options;
};

struct est_iscsi_hba {
    const char *device, *iscsi_name;
    struct est_option *options; /* adapter level */
    size_t n_options;
    struct est_iscsi_target *targets;
    size_t n_targets;
    size_t *bound_vnics; /* indexes into host.vnics */
    size_t n_bound_vnics;
};

/* Any host bus adapter (config.storageDevice.hostBusAdapter). */
struct est_hba {
    const char *device; /* vmhba2 */
    /* The adapter's xsi:type. Local controllers: HostBlockHba (IDE/SATA/AHCI, USB),
     * HostParallelScsiHba (SCSI/RAID, e.g. pvscsi, lsi_mr3), HostSerialAttachedHba (SAS),
     * HostPcieHba (local NVMe). SAN: HostFibreChannelHba, HostFibreChannelOverEthernetHba,
     * HostInternetScsiHba, HostRdmaHba (NVMe over RDMA). NULL if vCenter sent none. */
    const char *type;
    const char *driver, *model; /* "qlnativefc", "QLogic ISP2532 ..."; NULL if not reported */
};

struct est_path {
    const char *name;    /* vmhba2:C0:T1:L5 */
    const char *state;   /* pathState as vCenter sends it: active, standby, disabled, dead, off,
                            unknown */
    const char *adapter; /* the adapter's device (vmhba2), NULL if not reported */
    size_t hba;          /* index into host.hbas, EST_NONE when the host does not list it */
    /* The storage port it ends at, NULL when unknown: a Fibre Channel target's port WWN
     * ("50:06:01:60:47:e4:1e:49", lower case), an iSCSI target's IQN and address. */
    const char *target_wwpn, *target_iqn, *target_address;
};

struct est_lun {
    const char *canonical_name, *display_name, *vendor, *model, *lun_type;
    int local;              /* localDisk 0/1; EST_UNKNOWN when the host did not say (look at
                               the paths' adapters and the SATP, e.g. VMW_SATP_LOCAL) */
    /* Next to local, where it fills what would be padding: 8 bytes less per LUN (129,000 at
     * 100,000 VMs). */
    int iops_limit;         /* Round Robin IOPS limit from esxcli, EST_UNKNOWN */
    const char *psp, *satp; /* VMW_PSP_RR, VMW_SATP_ALUA; HPP policies: LB-RR, FIXED, ... */
    const char *psp_config; /* esxcli PathSelectionPolicyDeviceConfig, or NULL */
    /* The xsi:type of multipathInfo's policy: HostMultipathInfoLogicalUnitPolicy,
     * HostMultipathInfoFixedLogicalUnitPolicy, HostMultipathInfoHppLogicalUnitPolicy. */
    const char *policy_type;
    /* The multipathing plug-in that owns the device: "NMP", "HPP" (NVMe and the high-
     * performance plug-in), or a third party's name such as "PowerPath"; NULL when unknown.
     * Only NMP and HPP devices are in multipathInfo: for any other plug-in psp, satp and
     * policy_type are NULL and the paths are not reported (n_paths 0 means unknown there). */
    const char *multipath_plugin;
    /* ScsiLun.protocolEndpoint 0/1 (a VVol protocol endpoint), EST_UNKNOWN when not said. */
    int protocol_endpoint;
    /* May be the same array as another LUN's (db/load.c shares equal ones): never written. */
    const struct est_path *paths;
    size_t n_paths;
};

/* A SATP claim rule (esxcli storage nmp satp rule list): devices the SATP claims whose vendor
 * and model match get the rule's PSP with its options. NULL vendor/model: any; NULL psp: the
 * rule sets none; NULL psp_options: none. */
struct est_satp_rule {
    const char *satp, *vendor, *model;
    const char *psp, *psp_options; /* VMW_PSP_RR, "iops=1" */
    const char *rule_group;        /* "system" or "user" */
    /* NULL: the rule does not restrict by it. A rule with a device claims only that canonical
     * name; with a driver, only devices behind adapters of that driver (lsi_mr3); with a
     * transport, only that transport (fc, iscsi, sas, usb, ...). claim_options ("tpgs_on")
     * restrict too; options are the SATP's own; description is free text. */
    const char *device, *driver, *transport, *claim_options, *options, *description;
};

struct est_gap {
    const char *what, *error; /* e.g. "esxcli", "host refused ..." */
};

struct est_host {
    const char *moref, *name, *parent, *connection_state;
    const char *product_version; /* ESXi version, config.product.version ("6.7.0"), or NULL */
    int enable_block_delete;     /* VMFS3.EnableBlockDelete 0/1, EST_UNKNOWN */
    struct est_vswitch *vswitches;
    size_t n_vswitches;
    struct est_vnic *vnics;
    size_t n_vnics;
    struct est_hba *hbas; /* every adapter, of any type, in device order (vmhba2 before vmhba10) */
    size_t n_hbas;
    struct est_iscsi_hba *iscsi_hbas;
    size_t n_iscsi_hbas;
    struct est_lun *luns;
    size_t n_luns;
    /* Read with esxcli on hosts with SAN LUNs. A host always lists its system rules, so none
     * at all means not read: an "esxcli" gap, no SAN LUN when polled, or a snapshot taken
     * before vslint read them. */
    struct est_satp_rule *satp_rules;
    size_t n_satp_rules;
    struct est_gap *gaps; /* what the poll could not read on this host ("esxcli", ...) */
    size_t n_gaps;
};

struct est_controller {
    int key;
    const char *type;       /* ParaVirtualSCSIController, VirtualLsiLogicController, ... */
    const char *shared_bus; /* noSharing, virtualSharing, physicalSharing, or NULL */
};

struct est_disk {
    int key;
    const char *label, *file_name;
    size_t datastore; /* index into estate.datastores, EST_NONE if unknown */
    int64_t capacity_bytes;
    const char *format; /* thin, lazyzeroedthick, eagerzeroedthick, rdm-physical, rdm-virtual,
                           other */
    size_t controller;  /* index into vm.controllers, EST_NONE */
    /* backing.parent's file: the disk this one is a delta of (a snapshot's or a linked clone's
     * disk), "[ds] dir/base.vmdk"; NULL for a base disk or when not reported. */
    const char *parent;
    const char *sharing; /* backing.sharing: "sharingNone", "sharingMultiWriter", or NULL */
};

struct est_snapshot {
    const char *name;
    int64_t created; /* unix seconds, EST_UNKNOWN */
    int depth;       /* 1 = root */
};

struct est_vm {
    const char *moref, *name;
    /* The ints side by side, not each padded to 8 bytes: 8 bytes less per VM. */
    int template;
    int hw_version; /* the number of "vmx-13", EST_UNKNOWN */
    const char *power_state, *ft_state;
    size_t host;    /* index into estate.hosts, EST_NONE */
    /* Where the VM's configuration (.vmx) lives: summary.config.vmPathName as vCenter gave it,
     * "[datastore name] dir/vm.vmx", or NULL; and that datastore, resolved by name (preferring
     * one of the VM's own datastores when names repeat across datacenters), EST_NONE when
     * unknown. */
    const char *vm_path_name;
    size_t config_datastore;
    /* VirtualMachine.datastore: every datastore holding any of the VM's files (configuration,
     * disks, a mounted ISO image), indexes into estate.datastores */
    size_t *datastores;
    size_t n_datastores;
    /* May be the same array as another VM's (db/load.c shares equal ones): never written. */
    const struct est_controller *controllers;
    size_t n_controllers;
    struct est_disk *disks;
    size_t n_disks;
    struct est_snapshot *snapshots;
    size_t n_snapshots;
    /* config.managedBy: the extension managing the VM (a replication product's replica:
     * "com.vmware.vcDr", "com.zerto..."), and its type; NULL when none or unreported. */
    const char *managed_by, *managed_by_type;
    int consolidation_needed; /* runtime.consolidationNeeded 0/1, EST_UNKNOWN */
};

/* A container above datastores: a folder (one that can hold datastores, datastore clusters or
 * datacenters), a datacenter or a datastore cluster. A datastore's chain of parents, through
 * these, ends at the root folder, which is named as a parent but has no entry of its own.
 * Also a cluster of hosts (a host's parent), whose own parent, a host folder, is not stored. */
struct est_entity {
    const char *moref, *type, *name; /* type: Folder, Datacenter, StoragePod,
                                        ClusterComputeResource */
    const char *parent;              /* moref, NULL at the top */
};

/* An alarm disabled on one entity and below it (vim_alarm_disabled). */
struct est_alarm_disabled {
    const char *entity, *alarm; /* morefs */
};

/* A metric condition that raises its alarm on its own (the expression itself, or a member of
 * an OrAlarmExpression). yellow and red are the thresholds in vCenter's unit, hundredths of a
 * percent for a usage counter (7500 = 75 %), EST_UNKNOWN when unset. */
struct est_alarm_metric {
    const char *object_type; /* Datastore, HostSystem, ... */
    int counter_id;
    const char *counter; /* group.name.rollup of counter_id, NULL when not resolved */
    const char *op;      /* isAbove, isBelow */
    int yellow, red;
};

/* An alarm definition; it covers the entity it is defined on and everything below it. */
struct est_alarm {
    const char *moref, *name, *system_name;
    int enabled;                      /* 0/1, EST_UNKNOWN */
    const char *entity, *entity_type; /* where it is defined */
    struct est_alarm_metric *metrics;
    size_t n_metrics;
};

struct estate {
    const char *vcenter; /* the configuration's name */
    int64_t polled_ms;   /* when the snapshot was taken (last successful poll) */
    struct est_pod *pods;
    size_t n_pods;
    struct est_datastore *datastores;
    size_t n_datastores;
    struct est_dvswitch *dvswitches;
    size_t n_dvswitches;
    struct est_host *hosts;
    size_t n_hosts;
    struct est_vm *vms;
    size_t n_vms;
    void *arena; /* owner of every string and array above */
    /* Sorted by moref (est_entity() looks them up). */
    struct est_entity *entities;
    size_t n_entities;
    /* Every alarm definition of the vCenter when alarms_read is 1; when it is 0 the snapshot
     * does not say (an "alarms" gap in gaps says why, or it predates vslint reading alarms). */
    struct est_alarm *alarms;
    size_t n_alarms;
    int alarms_read;
    /* Alarms disabled on one entity and below it, by entity then alarm. */
    struct est_alarm_disabled *alarms_disabled;
    size_t n_alarms_disabled;
    struct est_gap *gaps; /* gaps about the vCenter itself (object ""), e.g. "alarms" */
    size_t n_gaps;
    /* The configured arrays' FC ports its hosts' paths end at, by wwpn (est_array_port()),
     * and their iSCSI portals (est_array_portal()). */
    struct est_array_port *array_ports;
    size_t n_array_ports;
    /* The array pools behind its datastores (see est_pool), by array then pool id. */
    struct est_pool *pools;
    size_t n_pools;
};

/* Lookups (linear or hashed; NULL when absent). */
const struct est_option *est_option(const struct est_option *opts, size_t n, const char *key);
/* The host's gap about what ("esxcli", "options", ...), or NULL when that read worked. */
const struct est_gap *est_gap(const struct est_host *h, const char *what);

/* The container with moref, or NULL. */
const struct est_entity *est_entity(const struct estate *e, const char *moref);
/* The configured array's FC port with that port WWN, or NULL. */
const struct est_array_port *est_array_port(const struct estate *e, const char *wwpn);
/* The configured array's iSCSI portal at address, an IPv4 or IPv6 address with or without
 * ":port" ("10.0.1.21:3260", "[fe80::1]:3260", as a path's target names it), or NULL. Private
 * addresses repeat from site to site: of several portals there, the one serving iqn (when
 * given) is chosen, else the first (its IQN then tells the caller it is another target);
 * without an IQN, portals of two arrays at one address are NULL: which one is not known. */
const struct est_array_port *est_array_portal(const struct estate *e, const char *address,
                                              const char *iqn);
/* Whether a host's target naming iqn (NULL: not told) is another target than portal p: both
 * IQNs known and different (compared as est_array_portal() chooses, case aside). */
int est_portal_other_iqn(const struct est_array_port *p, const char *iqn);
/* The vCenter's own gap about what ("alarms"), or NULL. */
const struct est_gap *est_vcenter_gap(const struct estate *e, const char *what);

/* Copies s without leading and trailing blanks into out (SCSI inquiry strings, a LUN's vendor
 * and model, are space-padded); "" for NULL; cut to size - 1 characters. */
void est_trimmed(const char *s, char *out, size_t size);
void est_free(struct estate *e); /* NULL is a no-op */

/* Leaves in e only the pools whose array keep(array, ctx) accepts, and the datastores' links
 * to them: the stored snapshot of an array no longer configured joins nothing. */
void est_keep_pools(struct estate *e, int (*keep)(const char *array, void *ctx), void *ctx);

#endif
