/* Which devices the multipathing checks judge (see checks/san.h): adapter kinds, a LUN's
 * locality and plug-in, and the host -> SAN LUN loop. */
#include <string.h>
#include <strings.h>

#include "checks/san.h"

/* Adapter types as vCenter names them (HostHostBusAdapter's subtypes). A type missing here is
 * unknown, never assumed to be either. */
static const struct {
    const char *type;
    struct est_hba_kind kind;
} hba_kinds[] = {
    {"HostFibreChannelHba", {1, "fc"}},
    {"HostFibreChannelOverEthernetHba", {1, "fcoe"}},
    {"HostInternetScsiHba", {1, "iscsi"}},
    {"HostRdmaHba", {1, NULL}}, /* NVMe over RDMA */
    {"HostTcpHba", {1, NULL}},  /* NVMe over TCP */
    {"HostSerialAttachedHba", {0, "sas"}},
    {"HostParallelScsiHba", {0, "parallel"}},
    {"HostBlockHba", {0, NULL}},
    {"HostPcieHba", {0, NULL}}, /* local NVMe */
};

struct est_hba_kind est_hba_kind(const struct est_hba *a)
{
    for (size_t i = 0; a && a->type && i < sizeof(hba_kinds) / sizeof(hba_kinds[0]); i++)
        if (!strcmp(a->type, hba_kinds[i].type))
            return hba_kinds[i].kind;
    return (struct est_hba_kind){EST_UNKNOWN, NULL};
}

const struct est_hba *est_path_hba(const struct est_host *h, const struct est_path *p)
{
    return p->hba < h->n_hbas ? &h->hbas[p->hba] : NULL;
}

const char *est_sp_name(const char *sp, const char **how)
{
    if (sp && !strcmp(sp, "spa"))
        return "SP A";
    if (sp && !strcmp(sp, "spb"))
        return "SP B";
    *how = "the array names a storage processor vslint does not know";
    return NULL;
}

const char *est_path_sp(const struct estate *e, const struct est_path *p, const char **how)
{
    /* The NAA 5 WWN of EMC's OUI 00:60:16; the nibble after it is the port: 0-7 on SP A,
     * 8-f on SP B. */
    static const char emc[] = "50:06:01:6";
    /* A single-SP array (UnityVSA) cannot be asked to serve a LUN from both SPs: its paths'
     * SP is not told, so that no redundancy is judged on it. */
    static const char one_sp[] = "the array has one storage processor (every port it lists is "
                                 "on one SP): storage processor redundancy is not judged";
    const char *w = p->target_wwpn;
    const struct est_array_port *port = est_array_port(e, w);

    if (port && port->array_sps == 1) {
        *how = one_sp;
        return NULL;
    }
    if (port) {
        *how = "the array's own port list (Unity fcPort.storageProcessor)";
        return est_sp_name(port->sp, how);
    }
    if (!w && p->target_address && (port = est_array_portal(e, p->target_address, p->target_iqn))) {
        /* The address alone could be another array's behind NAT; a target that names another
         * IQN than the portal's node is not this port, whatever its address. */
        if (est_portal_other_iqn(port, p->target_iqn)) {
            *how = "the array's iSCSI portal at the path's address serves another IQN";
            return NULL;
        }
        if (port->array_sps == 1) {
            *how = one_sp;
            return NULL;
        }
        *how = "the array's iSCSI portal list (Unity iscsiPortal -> ethernetPort."
               "storageProcessor)";
        return est_sp_name(port->sp, how);
    }

    if (!w) {
        *how = p->target_iqn || p->target_address
                   ? "iSCSI target on no configured array's portal (or on two arrays' portals at "
                     "one address, with no IQN to tell them apart): its storage processor is not "
                     "in its name"
                   : "no target port reported for the path";
        return NULL;
    }
    if (strncmp(w, emc, strlen(emc)) || !w[strlen(emc)] ||
        !strchr("0123456789abcdef", w[strlen(emc)])) {
        *how = "target WWN of no known storage processor convention";
        return NULL;
    }
    *how = "WWN convention (50:06:01:60-67 SP A, 50:06:01:68-6f SP B)";
    return strchr("01234567", w[strlen(emc)]) ? "SP A" : "SP B";
}

enum est_locality est_lun_locality(const struct est_host *h, const struct est_lun *l)
{
    size_t san = 0, local = 0;

    /* VMW_SATP_LOCAL claims the devices ESXi itself takes for local, whatever localDisk says. */
    if (l->satp && !strcmp(l->satp, "VMW_SATP_LOCAL"))
        return EST_LOC_LOCAL;
    if (l->local != EST_UNKNOWN)
        return l->local ? EST_LOC_LOCAL : EST_LOC_SAN;
    /* No localDisk answer (some controllers leave it out): the adapters decide, where they can.
     * One path through a local controller is a local disk; two through local SAS controllers
     * may be a shared SAS array, so that stays unknown. */
    for (size_t i = 0; i < l->n_paths; i++) {
        int kind = est_hba_kind(est_path_hba(h, &l->paths[i])).san;
        san += kind == 1;
        local += kind == 0;
    }
    if (l->n_paths == 1 && local == 1)
        return EST_LOC_LOCAL;
    if (l->n_paths > 0 && san == l->n_paths)
        return EST_LOC_SAN;
    return EST_LOC_UNKNOWN;
}

enum est_plugin est_lun_plugin(const struct est_lun *l)
{
    if (l->multipath_plugin) {
        if (!strcmp(l->multipath_plugin, "NMP"))
            return EST_PLUGIN_NMP;
        if (!strcmp(l->multipath_plugin, "HPP"))
            return EST_PLUGIN_HPP;
        return EST_PLUGIN_OTHER;
    }
    /* A snapshot taken before vslint read the plug-in topology: multipathInfo lists only NMP
     * and HPP devices, and only NMP has SATPs and VMW_PSP_ policies. */
    if (l->policy_type && !strcmp(l->policy_type, "HostMultipathInfoHppLogicalUnitPolicy"))
        return EST_PLUGIN_HPP;
    if (l->satp || (l->psp && !strncmp(l->psp, "VMW_PSP_", strlen("VMW_PSP_"))))
        return EST_PLUGIN_NMP;
    return EST_PLUGIN_UNKNOWN;
}

int est_psp_is_vendor(const char *psp)
{
    return psp && strncmp(psp, "VMW_PSP_", strlen("VMW_PSP_")) != 0;
}

int est_lun_vendor_psp(const struct est_lun *l)
{
    return est_lun_plugin(l) == EST_PLUGIN_NMP && est_psp_is_vendor(l->psp);
}

int est_hba_software_iscsi(const struct est_hba *a)
{
    return a && a->type && !strcmp(a->type, "HostInternetScsiHba") &&
           (!a->driver || !strcmp(a->driver, "iscsi_vmk"));
}

const struct est_hba *est_host_hba(const struct est_host *h, const char *dev)
{
    for (size_t i = 0; dev && i < h->n_hbas; i++)
        if (h->hbas[i].device && !strcmp(h->hbas[i].device, dev))
            return &h->hbas[i];
    return NULL;
}

int est_lun_is_disk(const struct est_lun *l)
{
    return !l->lun_type || !strcmp(l->lun_type, "disk");
}

const struct est_lun *est_host_san_lun(const struct est_host *h, size_t *i)
{
    for (; *i < h->n_luns; (*i)++) {
        const struct est_lun *l = &h->luns[*i];
        if (l->canonical_name && est_lun_is_disk(l) && est_lun_locality(h, l) == EST_LOC_SAN)
            return l;
    }
    return NULL;
}

const struct est_lun *est_next_san_lun(const struct estate *e, struct est_san_pos *pos,
                                       const struct est_host **host)
{
    for (; pos->host < e->n_hosts; pos->host++, pos->lun = 0) {
        const struct est_lun *l = est_host_san_lun(&e->hosts[pos->host], &pos->lun);
        if (l) {
            *host = &e->hosts[pos->host];
            pos->lun++; /* the next call starts after it */
            return l;
        }
    }
    return NULL;
}
