/* Which of a host's devices the multipathing checks judge: the one decision of locality
 * (local, SAN, unknown) and owning plug-in (NMP, HPP, a third party's), and the host -> SAN LUN
 * loop the LUN checks share. Check logic over the estate, so it lives with the checks. */
#ifndef CHK_SAN_H
#define CHK_SAN_H

#include "model/estate.h"

/* What an adapter's xsi:type says about the storage behind it. */
struct est_hba_kind {
    /* 1: it reaches shared storage (Fibre Channel, FCoE, iSCSI, NVMe over RDMA or TCP); 0: a
     * local controller (IDE/SATA/USB, SCSI/RAID, SAS, local NVMe); EST_UNKNOWN: no type, or one
     * vslint does not know. */
    int san;
    /* The transport SATP claim rules name it by (esxcli storage nmp satp rule add
     * --transport): "fc", "fcoe", "iscsi", "sas", "parallel"; NULL when the type does not tell
     * (HostBlockHba is IDE, SATA or USB alike) or the adapter is NVMe, which NMP never claims. */
    const char *transport;
};
struct est_hba_kind est_hba_kind(const struct est_hba *a); /* a NULL: unknown */

/* The adapter a path goes through, or NULL when the host does not list it. */
const struct est_hba *est_path_hba(const struct est_host *h, const struct est_path *p);

/* The storage processor (controller) a path ends at, as "SP A" or "SP B", or NULL when it
 * cannot be told. *how says how it was told, or why not. Told from the target's port WWN: by
 * the array itself where a configured array lists that port (Unity fcPort.storageProcessor,
 * est_array_port()), else by the convention Dell EMC publishes for CLARiiON, VNX and Unity
 * (000 §3.1.2's zoning table): 50:06:01:60-67:... are SP A's ports, 50:06:01:68-6f:... SP B's.
 * An iSCSI path's target is told by its address: the configured array's iSCSI portal there
 * (Unity iscsiPortal, on an ethernetPort of a storageProcessor, est_array_portal()), unless
 * the path names another IQN than the portal's. Any other target (another vendor's WWN, an
 * iSCSI target on no configured array's portal, none reported) is not guessed, nor is the SP
 * of a port of a configured array whose ports are all on one SP (UnityVSA): none of its LUNs
 * can reach two, and *how says so. */
const char *est_path_sp(const struct estate *e, const struct est_path *p, const char **how);
/* "SP A" for Unity's storage processor id "spa", "SP B" for "spb"; NULL (and *how says why)
 * for another. */
const char *est_sp_name(const char *sp, const char **how);

/* Whether adapter a is a software iSCSI adapter (iscsi_vmk, or an iSCSI adapter whose driver is
 * not reported): one adapter for every NIC of its bound vmkernel ports, so its redundancy and
 * its frames are those of the vmknics it sends through. a NULL: 0. */
int est_hba_software_iscsi(const struct est_hba *a);

/* The adapter named dev on host h, or NULL. */
const struct est_hba *est_host_hba(const struct est_host *h, const char *dev);

/* Where a host's device is, as the checks judge it. */
enum est_locality {
    EST_LOC_UNKNOWN = 0, /* the host did not say and its paths do not tell: never guessed */
    EST_LOC_LOCAL,       /* localDisk true, claimed by VMW_SATP_LOCAL, or (no localDisk answer)
                            one path, through a local controller */
    EST_LOC_SAN,         /* localDisk false (and not VMW_SATP_LOCAL), or (no answer) every path
                            through a SAN adapter */
};
enum est_locality est_lun_locality(const struct est_host *h, const struct est_lun *l);

/* The multipathing plug-in that owns a device. */
enum est_plugin {
    EST_PLUGIN_UNKNOWN = 0,
    EST_PLUGIN_NMP,   /* NMP: PSPs and SATPs, Round Robin, claim rules */
    EST_PLUGIN_HPP,   /* the high-performance plug-in (NVMe): its own path selection schemes;
                         vCenter reports its paths */
    EST_PLUGIN_OTHER, /* a third party's (PowerPath): vCenter reports neither its policy nor
                         its paths */
};
/* multipath_plugin when the snapshot has it; otherwise what multipathInfo implies (an HPP
 * policy type; a SATP or a VMW_PSP_ policy is NMP's), else unknown. */
enum est_plugin est_lun_plugin(const struct est_lun *l);

/* Whether a path selection policy is a vendor's own under NMP (HPE Nimble's NIMBLE_PSP_DIRECTED,
 * EqualLogic MEM's DELL_PSP_EQL_ROUTED, Hitachi HDLM's HTI_PSP_HDLM_*): any PSP not named
 * VMW_PSP_*. The vendor's plug-in manages those devices' paths; VMware's Round Robin advice
 * would override a supported setup. NULL (not reported) is not one. */
int est_psp_is_vendor(const char *psp);
/* An NMP device on such a policy. */
int est_lun_vendor_psp(const struct est_lun *l);

/* Whether a device is a disk: lunType "disk", or not reported (a snapshot of an older vslint,
 * a host that left it out). Enclosures (LUN 254), tape drives, media changers and other
 * non-disk devices carry no datastore: the multipathing practices are about disks. */
int est_lun_is_disk(const struct est_lun *l);

/* The host -> SAN LUN loop of the multipathing checks: the first LUN of h at index *i or after
 * that is a SAN disk (est_lun_locality() EST_LOC_SAN, est_lun_is_disk()) with a canonical
 * name, *i set to its index; NULL when there is none. Local devices, devices of unknown
 * locality and non-disk devices are skipped.
 *     for (size_t i = 0; (l = est_host_san_lun(h, &i)); i++) ... */
const struct est_lun *est_host_san_lun(const struct est_host *h, size_t *i);

/* The same over every host of e: a position starting at {0}, the next SAN LUN and its host
 * (*host), or NULL at the end.
 *     for (struct est_san_pos p = {0}; (l = est_next_san_lun(e, &p, &h));) ... */
struct est_san_pos {
    size_t host, lun;
};
const struct est_lun *est_next_san_lun(const struct estate *e, struct est_san_pos *pos,
                                       const struct est_host **host);

#endif
