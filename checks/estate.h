/* The estate: one vCenter's stored snapshot as plain C structs, loaded from db/ in one read
 * transaction (db_estate_load) and handed to every check. Checks never see SQL or SOAP. */
#ifndef CHK_ESTATE_H
#define CHK_ESTATE_H

#include <stddef.h>
#include <stdint.h>

/* Unknown numbers are EST_UNKNOWN (-1); unknown strings are NULL, except the name of a pod,
 * datastore, DVS, host or VM, which is never NULL (its moref when vCenter gave none).
 * Indexes into the estate's arrays are size_t with EST_NONE for "no such object". All strings
 * and arrays are owned by the estate and freed by est_free(). */
#define EST_UNKNOWN (-1)
#define EST_NONE ((size_t)-1)

struct est_pod {
    const char *moref, *name;
    int64_t capacity, free_space; /* bytes, as vCenter sums them for the datastore cluster */
};

struct est_datastore {
    const char *moref, *name, *type; /* type: VMFS, NFS, NFS41, vsan, VVOL, OTHER */
    int64_t capacity, free_space;
    int64_t uncommitted; /* EST_UNKNOWN when vCenter did not report it */
    int accessible;      /* 0/1 */
    int vmfs_major;      /* 0 when not VMFS */
    size_t pod;          /* index into estate.pods, EST_NONE when not in a datastore cluster */
    int vm_count;        /* Datastore.vm entries, templates included */
    const char *parent;  /* moref of its folder or datastore cluster (see est_entity), or NULL */
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
};

struct est_option { /* an iSCSI advanced option, adapter or target level */
    const char *key, *value;
    int inherited; /* 0/1 */
};

struct est_iscsi_target {
    const char *kind; /* "send" or "static" */
    const char *address;
    int port;
    const char *iscsi_name;
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

struct est_path {
    const char *name, *state; /* state: active, standby, disabled, dead, unknown */
};

struct est_lun {
    const char *canonical_name, *display_name, *vendor, *model, *lun_type;
    int local;              /* 0/1, EST_UNKNOWN */
    const char *psp, *satp; /* VMW_PSP_RR, VMW_SATP_ALUA */
    int iops_limit;         /* Round Robin IOPS limit from esxcli, EST_UNKNOWN */
    const char *psp_config; /* esxcli PathSelectionPolicyDeviceConfig, or NULL */
    struct est_path *paths;
    size_t n_paths;
};

/* A SATP claim rule (esxcli storage nmp satp rule list): devices the SATP claims whose vendor
 * and model match get the rule's PSP with its options. NULL vendor/model: any; NULL psp: the
 * rule sets none; NULL psp_options: none. */
struct est_satp_rule {
    const char *satp, *vendor, *model;
    const char *psp, *psp_options; /* VMW_PSP_RR, "iops=1" */
    const char *rule_group;        /* "system" or "user" */
};

struct est_gap {
    const char *what, *error; /* e.g. "esxcli", "host refused ..." */
};

struct est_host {
    const char *moref, *name, *parent, *connection_state;
    int enable_block_delete; /* VMFS3.EnableBlockDelete 0/1, EST_UNKNOWN */
    struct est_vswitch *vswitches;
    size_t n_vswitches;
    struct est_vnic *vnics;
    size_t n_vnics;
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
};

struct est_snapshot {
    const char *name;
    int64_t created; /* unix seconds, EST_UNKNOWN */
    int depth;       /* 1 = root */
};

struct est_vm {
    const char *moref, *name;
    int template;
    const char *power_state, *ft_state;
    int hw_version; /* the number of "vmx-13", EST_UNKNOWN */
    size_t host;    /* index into estate.hosts, EST_NONE */
    size_t *datastores; /* indexes into estate.datastores */
    size_t n_datastores;
    struct est_controller *controllers;
    size_t n_controllers;
    struct est_disk *disks;
    size_t n_disks;
    struct est_snapshot *snapshots;
    size_t n_snapshots;
};

/* A container above datastores: a folder (one that can hold datastores, datastore clusters or
 * datacenters), a datacenter or a datastore cluster. A datastore's chain of parents, through
 * these, ends at the root folder, which is named as a parent but has no entry of its own. */
struct est_entity {
    const char *moref, *type, *name; /* type: Folder, Datacenter, StoragePod */
    const char *parent;              /* moref, NULL at the top */
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
    const char *vcenter;      /* the configuration's name */
    int64_t polled_ms;        /* when the snapshot was taken (last successful poll) */
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
    struct est_gap *gaps; /* gaps about the vCenter itself (object ""), e.g. "alarms" */
    size_t n_gaps;
};

/* Lookups (linear or hashed; NULL when absent). */
const struct est_option *est_option(const struct est_option *opts, size_t n, const char *key);
/* The host's gap about what ("esxcli", "options", ...), or NULL when that read worked. */
const struct est_gap *est_gap(const struct est_host *h, const char *what);

/* The container with moref, or NULL. */
const struct est_entity *est_entity(const struct estate *e, const char *moref);
/* The vCenter's own gap about what ("alarms"), or NULL. */
const struct est_gap *est_vcenter_gap(const struct estate *e, const char *what);

/* Copies s without leading and trailing blanks into out (SCSI inquiry strings, a LUN's vendor
 * and model, are space-padded); "" for NULL; cut to size - 1 characters. */
void est_trimmed(const char *s, char *out, size_t size);
void est_free(struct estate *e); /* NULL is a no-op */

#endif
