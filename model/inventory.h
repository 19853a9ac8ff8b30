/* The typed rows the collector emits, one struct per inventory table, and the sink that takes them.
 * Strings are borrowed: valid only for the duration of the sink call; the sink copies what it
 * keeps. */
#ifndef MODEL_INVENTORY_H
#define MODEL_INVENTORY_H

#include <stddef.h>
#include <stdint.h>

/* Unknown numeric values are VIM_UNKNOWN; unknown strings are NULL. */
#define VIM_UNKNOWN (-1)

struct vim_datastore {
    const char *moref, *name;
    const char *type;   /* summary.type: VMFS, NFS, NFS41, vsan, VVOL, OTHER */
    const char *url;    /* summary.url */
    const char *parent; /* moref of the folder or StoragePod that holds it */
    int64_t capacity, free_space, uncommitted; /* bytes; uncommitted may be VIM_UNKNOWN */
    int accessible;                            /* 0/1 */
    const char *maintenance_mode;              /* "normal", "inMaintenance", ... or NULL */
    int vmfs_major;              /* VmfsDatastoreInfo.vmfs.majorVersion, 0 if not VMFS */
    const char *nas_remote_host; /* NasDatastoreInfo.nas.remoteHost, or NULL */
    int vm_count;                /* number of entries in Datastore.vm */
    /* VmfsDatastoreInfo.vmfs; NULL / VIM_UNKNOWN when not VMFS or not reported. */
    const char *vmfs_version;   /* vmfs.version, e.g. "6.82" */
    int vmfs_local;             /* vmfs.local 0/1: a volume on a host's local disk */
    int vmfs_ssd;               /* vmfs.ssd 0/1 */
    const char *unmap_priority; /* vmfs.unmapPriority (VMFS6): "none", "low" */
    const char *nas_remote_path; /* NasDatastoreInfo.nas.remotePath ("/export"), or NULL */
};

/* One entry of VmfsDatastoreInfo.vmfs.extent[] (a HostScsiDiskPartition), in vCenter's order:
 * position 0 is the head extent. */
struct vim_datastore_extent {
    const char *datastore;
    int position;
    const char *disk_name; /* the device's canonical name, e.g. naa.600... */
    int partition;
};

/* One entry of Datastore.host (DatastoreHostMount): a host that mounts the datastore. */
struct vim_datastore_host {
    const char *datastore, *host; /* host moref */
    int mounted, accessible;      /* mountInfo.mounted / .accessible 0/1, VIM_UNKNOWN */
    const char *access_mode;      /* mountInfo.accessMode: readWrite, readOnly */
};

struct vim_storage_pod {
    const char *moref, *name;
    int64_t capacity, free_space;
};

struct vim_vm {
    const char *moref, *name;
    const char *hw_version;   /* config.version, e.g. "vmx-13" */
    int template;             /* config.template */
    const char *power_state;  /* poweredOn, poweredOff, suspended */
    const char *ft_state;     /* summary.runtime.faultToleranceState: notConfigured, running, ... */
    const char *host;         /* runtime.host moref */
    const char *vm_path_name; /* summary.config.vmPathName: "[datastore name] dir/vm.vmx" */
    int consolidation_needed; /* runtime.consolidationNeeded 0/1, VIM_UNKNOWN when not sent */
    /* config.managedBy: the extension that manages the VM (a replication product's replica,
     * e.g. "com.vmware.vcDr"), and its type for it ("placeholderVm"); NULL when none. */
    const char *managed_by, *managed_by_type;
    /* config.guestId: the guest OS the VM is configured for ("rhel8_64Guest"), NULL if unset. */
    const char *guest_id;
};

struct vim_vm_datastore { /* one row per entry of VirtualMachine.datastore */
    const char *vm, *datastore;
};

struct vim_controller {
    const char *vm;
    int key;
    const char *type; /* xsi:type, e.g. ParaVirtualSCSIController, VirtualLsiLogicController */
    const char *shared_bus; /* noSharing, virtualSharing, physicalSharing; NULL if not SCSI */
    int bus_number;
};

struct vim_vdisk {
    const char *vm;
    int key;
    const char *label, *file_name;
    const char *datastore; /* backing.datastore moref */
    int64_t capacity_bytes;
    const char *format; /* "thin", "lazyzeroedthick", "eagerzeroedthick", "rdm-physical",
                           "rdm-virtual", or "other" */
    int controller_key, unit_number;
    /* backing.parent.fileName: the disk this one is a delta (child) of, as a linked clone's
     * or a snapshot's disk has; NULL for a base disk. */
    const char *parent;
    const char *sharing; /* backing.sharing: sharingNone, sharingMultiWriter; NULL unreported */
};

struct vim_snapshot {
    const char *vm, *name;
    int64_t created; /* unix seconds */
    int depth;       /* 1 for a root snapshot */
};

struct vim_host {
    const char *moref, *name;
    const char *parent;           /* moref of the cluster or compute resource */
    const char *connection_state; /* runtime.connectionState */
    const char *product_version;  /* config.product.version, "6.7.0"; NULL unreported */
};

struct vim_host_option { /* advanced options read from the host's OptionManager */
    const char *host, *key, *value;
};

struct vim_vnic {
    const char *host, *device; /* vmk1 */
    const char *portgroup;     /* standard portgroup name, or NULL when on a DVS */
    const char *dvs_uuid;      /* spec.distributedVirtualPort.switchUuid, or NULL */
    const char *dvs_portgroup; /* spec.distributedVirtualPort.portgroupKey, or NULL */
    int mtu;
    const char *ip;
    const char *subnet_mask; /* spec.ip.subnetMask (255.255.255.0), or NULL */
};

struct vim_vswitch {
    const char *host, *name;
    int mtu;
};

struct vim_portgroup {
    const char *host, *name, *vswitch;
};

struct vim_dvswitch {
    const char *moref, *name, *uuid;
    int max_mtu; /* VMwareDVSConfigInfo.maxMtu, VIM_UNKNOWN if absent */
};

/* Any entry of config.storageDevice.hostBusAdapter, whatever its type. */
struct vim_hba {
    const char *host, *device; /* vmhba2 */
    const char *type;          /* xsi:type: HostFibreChannelHba, HostInternetScsiHba, HostBlockHba,
                                  HostParallelScsiHba, HostSerialAttachedHba, HostPcieHba, ... */
    const char *driver, *model, *status;
};

struct vim_iscsi_hba {
    const char *host, *device; /* vmhba64 */
    const char *iscsi_name, *model;
};

struct vim_iscsi_target {
    const char *host, *hba;
    const char *kind; /* "send" or "static" */
    const char *address;
    int port;
    const char *iscsi_name;       /* static targets only */
    const char *discovery_method; /* static targets: staticMethod, sendTargetMethod, ... */
    const char *parent; /* static targets: the adapter device or the "address:port" of the send
                           target it was discovered by (inherits settings from), or NULL */
};

/* An advanced option of an iSCSI adapter (target == NULL) or of one of its targets
 * (target = "address:port", kind = "send"/"static", target_iqn = the static target's IQN:
 * arrays that present one IQN per volume put many static targets on one address:port). */
struct vim_iscsi_option {
    const char *host, *hba;
    const char *kind, *target;
    const char *key, *value;
    int inherited;          /* 0/1 */
    const char *target_iqn; /* static targets only, else NULL */
};

struct vim_iscsi_binding { /* a vmknic bound to an iSCSI adapter (QueryBoundVnics) */
    const char *host, *hba, *vnic;
};

struct vim_lun {
    const char *host;
    const char *key; /* ScsiLun.key */
    const char *canonical_name, *display_name, *vendor, *model;
    const char *lun_type; /* disk, cdrom, ... */
    int local;            /* localDisk: 0/1, VIM_UNKNOWN if not reported */
    const char *psp;      /* multipathInfo policy, e.g. VMW_PSP_RR */
    const char *satp;     /* storageArrayTypePolicy */
    /* The xsi:type of the multipathInfo policy element: HostMultipathInfoLogicalUnitPolicy,
     * ...FixedLogicalUnitPolicy, ...HppLogicalUnitPolicy; NULL when the LUN has none. */
    const char *policy_type;
    /* The plug-in that owns the device: the plugStoreTopology plugin that claims it ("NMP",
     * "HPP", "PowerPath", ...), else "HPP" for an HPP policy and "NMP" for a VMW_PSP_ one;
     * NULL when nothing says. */
    const char *multipath_plugin;
    /* ScsiLun.protocolEndpoint: 1 for a VVol protocol endpoint (the device through which a
     * host reaches an array's virtual volumes), 0, VIM_UNKNOWN when the host did not say. */
    int protocol_endpoint;
};

struct vim_lun_path {
    const char *host, *lun; /* lun = canonical name */
    const char *name;       /* vmhba64:C0:T0:L1 */
    const char *state;      /* pathState as sent: active, standby, disabled, dead, off, unknown */
    const char *adapter;    /* the adapter's device (vmhba2), or its key when not listed */
    /* The storage port it ends at (HostMultipathInfoPath.transport), NULL when not sent: a
     * Fibre Channel target's port WWN, "50:06:01:60:47:e4:1e:49"; an iSCSI target's IQN and
     * (first) address. */
    const char *target_wwpn, *target_iqn, *target_address;
};

/* Per-device NMP configuration read with esxcli through vCenter (Round Robin IOPS limit). */
struct vim_nmp_device {
    const char *host, *device; /* canonical name */
    const char *psp;
    const char *psp_config; /* PathSelectionPolicyDeviceConfig as printed */
    int iops;               /* parsed iops=N, VIM_UNKNOWN if absent */
};

/* A SATP claim rule read with esxcli through vCenter ("storage nmp satp rule list"): which
 * PSP, with which options, devices that SATP claims get by default. NULL = the rule does not
 * name one (matches any vendor/model; no PSP of its own; no options). */
struct vim_satp_rule {
    const char *host;
    const char *satp; /* Name: VMW_SATP_ALUA, VMW_SATP_SYMM, ... */
    const char *vendor, *model;
    const char *psp;         /* DefaultPSP, e.g. VMW_PSP_RR */
    const char *psp_options; /* PSPOptions, e.g. "iops=1" */
    const char *rule_group;  /* "system" or "user" */
    /* What else the rule matches on, or sets: a rule with a device, driver or transport only
     * claims devices with that canonical name, driver (lsi_mr3) or transport (fc, iscsi, sas,
     * usb, ...). claim_options: "tpgs_on"; options: SATP options; description: free text. */
    const char *device, *driver, *transport, *claim_options, *options, *description;
};

/* What a poll could not read although it tried (e.g. a host refused esxcli). */
struct vim_gap {
    const char *object; /* moref */
    const char *what;   /* "esxcli", "options", "iscsi-bindings" */
    const char *error;  /* human readable */
};

/* A container a datastore can sit in, directly or further up: a Folder that holds datastores,
 * datastore clusters or datacenters, a Datacenter, or a StoragePod. Enough of the inventory
 * tree to know which alarms cover a datastore (an alarm covers the entity it is defined on and
 * everything below it). Also the clusters (ClusterComputeResource) that hosts sit in, so that a
 * finding about a cluster can name it; their parent is a host folder, which is not stored. */
struct vim_entity {
    const char *moref;
    const char *type; /* Folder, Datacenter, StoragePod, ClusterComputeResource */
    const char *name;
    const char *parent; /* moref of the entity above it; NULL at the root folder */
};

/* The AlarmManager whose alarms the poll read in full (GetAlarm without an entity, then every
 * alarm's info, then the performance counters their metric conditions name). Its row says
 * "the alarms below are all of them"; without it the alarms are unknown. */
struct vim_alarm_manager {
    const char *moref;
};

/* An alarm definition (Alarm.info). */
struct vim_alarm {
    const char *moref, *name;
    const char *system_name;          /* e.g. alarm.DatastoreDiskUsageAlarm, or NULL */
    int enabled;                      /* 0/1 */
    const char *entity, *entity_type; /* where it is defined: it covers that entity and below */
};

/* An alarm disabled on one entity and the entities below it (vSphere 7: AlarmManager.
 * DisableAlarm; the entity's declaredAlarmState entry for the alarm has disabled = true),
 * though the alarm itself stays enabled elsewhere. */
struct vim_alarm_disabled {
    const char *entity, *alarm; /* morefs */
};

/* A MetricAlarmExpression of an alarm that raises on its own: the alarm's expression itself,
 * or a member of an OrAlarmExpression (nested Ors too). Conditions inside an
 * AndAlarmExpression are not emitted: they raise nothing alone. */
struct vim_alarm_metric {
    const char *alarm;
    int pos;                 /* 0, 1, ... in the order of the expression */
    const char *object_type; /* MetricAlarmExpression.type: Datastore, HostSystem, ... */
    int counter_id;          /* metric.counterId (resolve with vim_perf_counter rows) */
    const char *op;          /* isAbove, isBelow */
    int yellow, red;         /* thresholds (percentages in hundredths), VIM_UNKNOWN when unset */
};

/* A performance counter named by an alarm metric (PerformanceManager.perfCounter). */
struct vim_perf_counter {
    int key;          /* the counterId, which differs from one vCenter to another */
    const char *name; /* group.name.rollup, e.g. "disk.used.latest" */
    const char *unit; /* unitInfo key, e.g. "percent", "kiloBytes" */
};

/* A storage pool of an array ([array NAME], arrays/): Unity's pool instance. Rows of an
 * array's snapshot are stored under the array's name where a vCenter's are under its own. */
struct vim_array_pool {
    const char *id;   /* "pool_1" */
    const char *name; /* the pool's name in Unisphere */
    int64_t size_total, size_free, size_used, size_subscribed; /* bytes; VIM_UNKNOWN */
    int alert_threshold;  /* % of the pool used at which Unity alerts (50-84), VIM_UNKNOWN */
    int health;           /* health.value: 5 OK, 7 degraded, 10 minor, 15 major, 20 critical, ... */
    const char *health_text;       /* health.descriptions[0], or NULL */
    int64_t snap_size_used, snap_size_subscribed; /* bytes used by snapshots; VIM_UNKNOWN */
};

/* A LUN of an array. naa is the canonical name vSphere gives the device: "naa." and the WWN's
 * hex digits in lower case (est_naa_from_wwn), or NULL when the WWN is not one. */
struct vim_array_lun {
    const char *id, *name;
    const char *wwn;  /* as the array writes it: "60:06:01:60:..." */
    const char *naa;  /* "naa.60060160..." */
    const char *pool; /* the pool's id */
    int64_t size_total, size_allocated; /* bytes; VIM_UNKNOWN */
    int thin;                           /* isThinEnabled 0/1, VIM_UNKNOWN */
};

/* A front-end port of an array: a Fibre Channel port (Unity fcPort: its port WWN) or an
 * Ethernet port (Unity ethernetPort: its MTU), and the storage processor it belongs to. */
struct vim_array_port {
    const char *id;   /* "spa_fc4", "spa_eth2" */
    const char *wwpn; /* FC: the port WWN, lower case with colons: "50:06:01:60:47:e4:1e:49";
                         NULL for an Ethernet port */
    const char *sp;   /* the storage processor's id: "spa", "spb" */
    int mtu;          /* Ethernet: the port's MTU; VIM_UNKNOWN for FC */
};

/* An iSCSI network portal of an array (Unity iscsiPortal): the address hosts log in to, the
 * Ethernet port it is on (whose SP and MTU are the portal's) and its target's IQN. */
struct vim_array_portal {
    const char *id;      /* "if_4" */
    const char *address; /* ipAddress: "10.0.1.21" */
    const char *port;    /* ethernetPort.id: "spa_eth2" */
    const char *iqn;     /* iscsiNode.name: "iqn.1992-04.com.emc:cx.<serial>.a0", or NULL */
};

/* A NAS server of an array (Unity nasServer): the SP it is placed on (homeSP) and the one it
 * runs on now (currentSP, the other one after a failover). */
struct vim_array_nas_server {
    const char *id, *name;
    const char *home_sp, *current_sp; /* "spa", "spb", or NULL */
    /* isReplicationDestination 0/1, VIM_UNKNOWN: a destination keeps its source's interface
     * addresses and share names but serves no datastore until a failover makes it the source. */
    int replication_destination;
};

/* A file system of an array (Unity filesystem): the pool it takes space from and the NAS server
 * that exports it. */
struct vim_array_filesystem {
    const char *id, *name;
    const char *pool;       /* pool.id */
    const char *nas_server; /* nasServer.id */
    int thin;               /* isThinEnabled 0/1, VIM_UNKNOWN */
};

/* An NFS share of a file system (Unity nfsShare): mounted as "<interface address>:/<name>". */
struct vim_array_nfs_share {
    const char *id, *name;
    const char *filesystem; /* filesystem.id */
};

/* A pool of a VVol datastore (Unity storageResource of type VVolDatastoreFS or
 * VVolDatastoreISCSI; one row per pool of its pools list). */
struct vim_array_vvol_pool {
    const char *id, *name; /* the storage resource: "res_3" */
    const char *pool;      /* pools[].id */
    const char *vmware_uuid; /* vmwareUUID: the VVol datastore's UUID in vSphere, or NULL */
};

/* A network interface of a NAS server (Unity fileInterface): the address its exports are
 * mounted from, which is an NFS datastore's nas.remoteHost. */
struct vim_array_file_interface {
    const char *id;
    const char *nas_server; /* nasServer.id */
    const char *address;    /* ipAddress */
};

/* "naa." and the 32 (or 16) hex digits of a WWN written with or without colons, in lower
 * case, into out: the name vSphere gives the device. 0, or -1 when wwn is not one. */
int est_naa_from_wwn(const char *wwn, char *out, size_t size);

/* The row sink. Every callback returns 0 or a negative error code, which aborts the poll.
 * db/ implements one that writes a snapshot in a transaction. */
struct vim_sink {
    void *ctx;
    int (*datastore)(void *ctx, const struct vim_datastore *);
    int (*datastore_extent)(void *ctx, const struct vim_datastore_extent *);
    int (*datastore_host)(void *ctx, const struct vim_datastore_host *);
    int (*storage_pod)(void *ctx, const struct vim_storage_pod *);
    int (*vm)(void *ctx, const struct vim_vm *);
    int (*vm_datastore)(void *ctx, const struct vim_vm_datastore *);
    int (*controller)(void *ctx, const struct vim_controller *);
    int (*vdisk)(void *ctx, const struct vim_vdisk *);
    int (*snapshot)(void *ctx, const struct vim_snapshot *);
    int (*host)(void *ctx, const struct vim_host *);
    int (*host_option)(void *ctx, const struct vim_host_option *);
    int (*vnic)(void *ctx, const struct vim_vnic *);
    int (*vswitch)(void *ctx, const struct vim_vswitch *);
    int (*portgroup)(void *ctx, const struct vim_portgroup *);
    int (*dvswitch)(void *ctx, const struct vim_dvswitch *);
    int (*hba)(void *ctx, const struct vim_hba *);
    int (*iscsi_hba)(void *ctx, const struct vim_iscsi_hba *);
    int (*iscsi_target)(void *ctx, const struct vim_iscsi_target *);
    int (*iscsi_option)(void *ctx, const struct vim_iscsi_option *);
    int (*iscsi_binding)(void *ctx, const struct vim_iscsi_binding *);
    int (*lun)(void *ctx, const struct vim_lun *);
    int (*lun_path)(void *ctx, const struct vim_lun_path *);
    int (*nmp_device)(void *ctx, const struct vim_nmp_device *);
    int (*satp_rule)(void *ctx, const struct vim_satp_rule *);
    int (*gap)(void *ctx, const struct vim_gap *);
    /* Alarms and where they apply (vsphere/alarms.c). */
    int (*entity)(void *ctx, const struct vim_entity *);
    int (*alarm_manager)(void *ctx, const struct vim_alarm_manager *);
    int (*alarm)(void *ctx, const struct vim_alarm *);
    int (*alarm_metric)(void *ctx, const struct vim_alarm_metric *);
    int (*alarm_disabled)(void *ctx, const struct vim_alarm_disabled *);
    int (*perf_counter)(void *ctx, const struct vim_perf_counter *);
    /* An array's snapshot (arrays/). */
    int (*array_pool)(void *ctx, const struct vim_array_pool *);
    int (*array_lun)(void *ctx, const struct vim_array_lun *);
    int (*array_port)(void *ctx, const struct vim_array_port *);
    int (*array_portal)(void *ctx, const struct vim_array_portal *);
    int (*array_nas_server)(void *ctx, const struct vim_array_nas_server *);
    int (*array_file_interface)(void *ctx, const struct vim_array_file_interface *);
    int (*array_filesystem)(void *ctx, const struct vim_array_filesystem *);
    int (*array_nfs_share)(void *ctx, const struct vim_array_nfs_share *);
    int (*array_vvol_pool)(void *ctx, const struct vim_array_vvol_pool *);
};

#endif
