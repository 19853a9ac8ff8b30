/* iscsi-jumbo-frames: every vmknic bound to an iSCSI adapter carries MTU 9000, and the vSwitch
 * or distributed switch behind it is at least as large (000 §3.4.1). One finding per vmknic,
 * and one per Ethernet port of a configured array behind a portal the hosts send iSCSI to. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "checks/check.h"

static const struct chk_param params[] = {
    {"mtu", 9000, 1280, 9000, "bytes",
     "MTU every iSCSI-bound vmknic should carry (jumbo frames end to end)"},
    {0},
};

/* The switch a vmknic sits on, as far as the snapshot knows it. */
struct uplink {
    const char *type; /* "vswitch", "dvs", or NULL when unknown */
    const char *name;
    int mtu;             /* EST_UNKNOWN when not known */
    const char *unknown; /* why the switch MTU is unknown, or NULL */
};

static struct uplink find_uplink(const struct estate *e, const struct est_host *h,
                                 const struct est_vnic *v)
{
    struct uplink u = {NULL, NULL, EST_UNKNOWN, NULL};

    if (v->dvs_uuid || v->dvswitch != EST_NONE) {
        u.type = "dvs";
        if (v->dvswitch == EST_NONE || v->dvswitch >= e->n_dvswitches) {
            u.name = v->dvs_uuid;
            u.unknown = "the distributed switch of this vmknic is not in the inventory";
            return u;
        }
        const struct est_dvswitch *d = &e->dvswitches[v->dvswitch];
        u.name = d->name;
        u.mtu = d->max_mtu;
        if (u.mtu == EST_UNKNOWN)
            u.unknown = "the distributed switch does not report maxMtu";
        return u;
    }
    if (v->vswitch != EST_NONE && v->vswitch < h->n_vswitches) {
        u.type = "vswitch";
        u.name = h->vswitches[v->vswitch].name;
        u.mtu = h->vswitches[v->vswitch].mtu;
        if (u.mtu == EST_UNKNOWN || u.mtu <= 0) {
            u.mtu = EST_UNKNOWN;
            u.unknown = "the vSwitch does not report its MTU";
        }
        return u;
    }
    u.unknown = v->portgroup
                    ? "the portgroup's vSwitch is not in the inventory"
                    : "the vmknic has neither a standard portgroup nor a distributed switch";
    return u;
}

/* Whether vmknic index vi is bound to iSCSI adapter b. */
static int bound_to(const struct est_iscsi_hba *b, size_t vi)
{
    for (size_t j = 0; j < b->n_bound_vnics; j++)
        if (b->bound_vnics[j] == vi)
            return 1;
    return 0;
}

/* The iSCSI adapters vmknic index vi is bound to, as a JSON array (empty when none). */
static json_t *bound_adapters(const struct est_host *h, size_t vi)
{
    json_t *a = json_array();

    for (size_t i = 0; a && i < h->n_iscsi_hbas; i++) {
        const struct est_iscsi_hba *b = &h->iscsi_hbas[i];
        if (bound_to(b, vi))
            a = chk_ev_append(a, json_string(b->device ? b->device : "?"));
    }
    return a;
}

/* Whether address addr is on vmknic v's subnet (its IPv4 address under its subnet mask): 0 when
 * any of the three is not an IPv4 dotted quad, or the mask is empty. IPv6 is not matched. */
static int on_subnet(const struct est_vnic *v, const char *addr)
{
    struct in_addr ip, mask, a;

    if (!v->ip || !v->subnet_mask || !addr || inet_pton(AF_INET, v->ip, &ip) != 1 ||
        inet_pton(AF_INET, v->subnet_mask, &mask) != 1 || inet_pton(AF_INET, addr, &a) != 1 ||
        mask.s_addr == 0)
        return 0;
    return ((ip.s_addr ^ a.s_addr) & mask.s_addr) == 0;
}

/* Why a vmknic carries iSCSI when no adapter binds it: a software iSCSI adapter without port
 * binding (routed or multi-subnet iSCSI, where VMware says not to bind) has a target on the
 * vmknic's subnet, and the host sends to a directly connected subnet through the vmknic on it.
 * The first such target, and its adapter in *by; NULL when none. A target on no vmknic's subnet
 * is reached through the host's routes, which vslint does not read: that vmknic is not chosen. */
static const struct est_iscsi_target *subnet_target(const struct est_host *h, size_t vi,
                                                    const struct est_iscsi_hba **by)
{
    for (size_t i = 0; i < h->n_iscsi_hbas; i++) {
        const struct est_iscsi_hba *b = &h->iscsi_hbas[i];
        if (b->n_bound_vnics || !est_hba_software_iscsi(est_host_hba(h, b->device)))
            continue;
        for (size_t t = 0; t < b->n_targets; t++) {
            if (!on_subnet(&h->vnics[vi], b->targets[t].address))
                continue;
            /* Of several vmknics on one subnet the host sends through the first (the one its
             * route for the subnet names): the others (vMotion beside management) carry none
             * of this iSCSI and are not judged for it. */
            size_t w = 0;
            while (w < vi && !on_subnet(&h->vnics[w], b->targets[t].address))
                w++;
            if (w < vi)
                continue;
            *by = b;
            return &b->targets[t];
        }
    }
    return NULL;
}

/* vmknic vi of h, chosen by port binding (t NULL) or, unbound, by target t of adapter by on its
 * subnet (subnet_target()). */
static int check_vnic(struct chk_ctx *ctx, const struct estate *e, const struct est_host *h,
                      size_t vi, int want, const struct est_iscsi_target *t,
                      const struct est_iscsi_hba *by)
{
    const struct est_vnic *v = &h->vnics[vi];
    struct uplink u;
    char name[256], msg[768], adapters[128] = "", carries[320];
    json_t *bound, *ev;
    int low_vnic, low_switch;
    size_t i;
    json_t *x;

    /* Without the vmknic's own MTU neither rule can be evaluated: skip it. */
    if (v->mtu == EST_UNKNOWN || v->mtu <= 0)
        return 0;
    u = find_uplink(e, h, v);
    low_vnic = v->mtu < want;
    low_switch = u.mtu != EST_UNKNOWN && u.mtu < v->mtu;
    if (!low_vnic && !low_switch)
        return 0;

    bound = bound_adapters(h, vi);
    json_array_foreach(bound, i, x)
    {
        size_t n = strlen(adapters);
        snprintf(adapters + n, sizeof(adapters) - n, "%s%s", i ? ", " : "", json_string_value(x));
    }
    if (t)
        snprintf(carries, sizeof(carries),
                 "carries %s's iSCSI to %s, on its subnet %s/%s; the adapter has no port binding",
                 by->device ? by->device : "?", t->address, v->ip, v->subnet_mask);
    else
        snprintf(carries, sizeof(carries), "iSCSI-bound to %s", adapters);
    ev = json_pack("{s:s, s:s, s:i, s:i, s:o, s:s?, s:s?, s:s?, s:o, s:s*, s:b, s:b, s:s, s:s?, "
                   "s:s?, s:s?, s:s?}",
                   "host", h->name, "vmknic", v->device, "vmknic_mtu", v->mtu, "required_mtu",
                   want, "bound_to", bound, "portgroup", v->portgroup, "switch_type", u.type,
                   "switch_name", u.name, "switch_mtu", chk_ev_known(u.mtu), "switch_mtu_unknown",
                   u.unknown, "vmknic_below_required", low_vnic, "switch_below_vmknic",
                   low_switch, "selected_by", t ? "target subnet" : "port binding", "adapter",
                   t ? by->device : NULL, "target", t ? t->address : NULL, "vmknic_ip", v->ip,
                   "subnet_mask", v->subnet_mask);

    snprintf(name, sizeof(name), "%s %s", h->name, v->device);
    if (low_switch)
        snprintf(msg, sizeof(msg),
                 "%s (%s) sends %d-byte frames but its %s %s carries only MTU %d:"
                 " larger frames are dropped%s",
                 name, carries, v->mtu, !strcmp(u.type, "dvs") ? "distributed switch" : "vSwitch",
                 u.name ? u.name : "?", u.mtu,
                 low_vnic ? "; the vmknic's own MTU is also below the threshold" : "");
    else
        snprintf(msg, sizeof(msg),
                 "%s (%s) has MTU %d, below %d; the guide wants MTU 9000 on the "
                 "array and every host, and jumbo frames on every switch in the iSCSI path",
                 name, carries, v->mtu, want);
    return chk_emit_part(ctx, h, "vmknic", v->device, v->device,
                         low_switch ? SEV_CRITICAL : SEV_WARNING, msg, ev);
}

/* Whether host h sends iSCSI to portal p: one of its paths ends there (a live session), or the
 * administrator typed it in as a static target, naming no other IQN than the portal's
 * (est_array_portal() falls back to the first portal at an address, and another array may
 * answer at the same private address on another site). Targets SendTargets discovery returned
 * do not count: an array answers discovery with all its portals, those on VLANs for other
 * hosts too, and the host keeps them as targets whether it can reach them or not. */
static int host_uses(const struct estate *e, const struct est_host *h,
                     const struct est_array_port *p)
{
    for (size_t i = 0; i < h->n_iscsi_hbas; i++)
        for (size_t t = 0; t < h->iscsi_hbas[i].n_targets; t++) {
            const struct est_iscsi_target *tg = &h->iscsi_hbas[i].targets[t];
            if (tg->kind && !strcmp(tg->kind, "static") && tg->discovery_method &&
                !strcmp(tg->discovery_method, "staticMethod") &&
                est_array_portal(e, tg->address, tg->iscsi_name) == p &&
                !est_portal_other_iqn(p, tg->iscsi_name))
                return 1;
        }
    for (size_t l = 0; l < h->n_luns; l++)
        for (size_t k = 0; k < h->luns[l].n_paths; k++) {
            const struct est_path *lp = &h->luns[l].paths[k];
            if (!lp->target_wwpn && est_array_portal(e, lp->target_address, lp->target_iqn) == p &&
                !est_portal_other_iqn(p, lp->target_iqn))
                return 1;
        }
    return 0;
}

/* The array's side (000 §3.4.1 asks MTU 9000 of the array too): each Ethernet port of a
 * configured array behind a portal that a host's target or path names, judged once however
 * many portals it carries. Ports behind portals no host uses are not this vCenter's. */
static int check_array_ports(struct chk_ctx *ctx, const struct estate *e, int want)
{
    for (size_t i = 0; i < e->n_array_ports; i++) {
        const struct est_array_port *p = &e->array_ports[i];
        size_t j;
        if (!p->address || p->mtu == EST_UNKNOWN || p->mtu >= want)
            continue;
        for (j = 0; j < i; j++)
            if (e->array_ports[j].address && !strcmp(e->array_ports[j].array, p->array) &&
                !strcmp(e->array_ports[j].id, p->id))
                break;
        if (j < i)
            continue; /* this port was judged with its first portal */
        json_t *portals = json_array(), *hosts = json_array();
        char first_host[256] = "", addrs[256] = "";
        for (j = i; j < e->n_array_ports; j++) {
            const struct est_array_port *q = &e->array_ports[j];
            if (!q->address || strcmp(q->array, p->array) || strcmp(q->id, p->id))
                continue;
            int used = 0;
            for (size_t hi = 0; hi < e->n_hosts; hi++) {
                const struct est_host *h = &e->hosts[hi];
                if (!host_uses(e, h, q))
                    continue;
                used = 1;
                if (!first_host[0])
                    snprintf(first_host, sizeof(first_host), "%s", h->name);
                if (hosts)
                    hosts = chk_ev_add_name(hosts, h->name);
            }
            if (used) {
                size_t n = strlen(addrs);
                snprintf(addrs + n, sizeof(addrs) - n, "%s%s", n ? ", " : "", q->address);
                portals = chk_ev_append(portals, json_pack("{s:s?, s:s, s:s?}", "id", q->portal,
                                                           "address", q->address, "iqn", q->iqn));
            }
        }
        if (!portals || !hosts || json_array_size(hosts) == 0) {
            int oom = !portals || !hosts;
            json_decref(portals);
            json_decref(hosts);
            if (oom)
                return -ENOMEM;
            continue;
        }
        const char *how = NULL, *sp = est_sp_name(p->sp, &how);
        size_t nh = json_array_size(hosts);
        char moref[512], msg[1024];
        snprintf(moref, sizeof(moref), "%s/%s", p->array, p->id);
        snprintf(msg, sizeof(msg),
                 "Ethernet port %s (%s) of array %s, behind iSCSI portal %s that %s%s sends "
                 "to, has MTU %d, below %d; the guide wants MTU 9000 on the array as on every "
                 "host",
                 p->id, sp ? sp : p->sp, p->array, addrs, first_host,
                 nh > 1 ? " and other hosts" : "", p->mtu, want);
        json_t *ev = json_pack("{s:s, s:s, s:s, s:s?, s:i, s:i, s:o, s:o, s:s}", "array",
                               p->array, "ethernet_port", p->id, "storage_processor_id", p->sp,
                               "storage_processor", sp, "port_mtu", p->mtu, "required_mtu", want,
                               "portals", portals, "hosts", hosts, "source",
                               "the array's iSCSI portals (Unity iscsiPortal -> ethernetPort.mtu)");
        int r = chk_emit_object(ctx, "array_port", moref, moref, SEV_WARNING, msg, ev);
        if (r < 0)
            return r;
    }
    return 0;
}

static int run(struct chk_ctx *ctx, const struct estate *e)
{
    int want = (int)chk_param(ctx, "mtu");
    int r = check_array_ports(ctx, e, want);

    if (r < 0)
        return r;

    for (size_t hi = 0; hi < e->n_hosts; hi++) {
        const struct est_host *h = &e->hosts[hi];
        for (size_t vi = 0; vi < h->n_vnics; vi++) {
            const struct est_iscsi_target *t = NULL;
            const struct est_iscsi_hba *by = NULL;
            int bound = 0;
            for (size_t i = 0; i < h->n_iscsi_hbas && !bound; i++)
                bound = bound_to(&h->iscsi_hbas[i], vi);
            if (!bound)
                t = subnet_target(h, vi, &by);
            if ((!bound && !t) || !h->vnics[vi].device)
                continue;
            r = check_vnic(ctx, e, h, vi, want, t, by);
            if (r < 0)
                return r;
        }
    }
    return 0;
}

/* The seeds' words this check rests on, verbatim (tests/unit/test_registry.c). */
static const struct chk_source sources[] = {
    {"000_5bd48962a767ee9e.txt", "§3.4.1",
     "On the Dell EMC Unity array (Settings > Access > Ethernet from Unisphere), as well as on all "
     "vSphere hosts accessing its iSCSI storage, the MTU size should be set to 9000 to enable the "
     "transmission of large blocks of data, which is more efficient than the default MTU size "
     "with block-based storage. Additionally, all Ethernet switches in the iSCSI data path must "
     "support jumbo frames."},
    {0},
};

const struct check chk_iscsi_jumbo_frames = {
    .id = "iscsi-jumbo-frames",
    .title = "iSCSI vmknics use jumbo frames end to end",
    .severity = SEV_CRITICAL,
    .rationale =
        "Large blocks move more efficiently over iSCSI with MTU 9000 on the array, every host "
        "and every switch in the path. An iSCSI-bound vmknic below MTU 9000 is a warning; a "
        "vmknic whose vSwitch or distributed switch has a smaller MTU than the vmknic itself is "
        "critical, because the larger frames are dropped. Only vmknics bound to an iSCSI "
        "adapter (port binding, QueryBoundVnics) are checked: a host whose bindings could not "
        "be read is not judged (its earlier findings are kept, unverified), a vmknic whose MTU "
        "is unknown is skipped, and when "
        "the switch MTU is unknown only the vmknic's own MTU is judged (the evidence says why). "
        "A software iSCSI adapter without port binding (routed or multi-subnet iSCSI, where "
        "VMware says not to bind) sends through the vmknic on each target's subnet (its address "
        "and subnet mask): that vmknic is judged, and the evidence says it was chosen by the "
        "target's subnet; a target on no vmknic's subnet is reached through the host's routes, "
        "which vslint does not read, and chooses none. "
        "With a Unity configured ([array NAME]), the array's side is judged too: each Ethernet "
        "port behind an iSCSI portal (Unity iscsiPortal -> ethernetPort.mtu) whose address a "
        "host's send or static target or a path names is a warning below MTU 9000; portals no "
        "host of the vCenter uses are not judged. Physical switches are outside vCenter's "
        "and the array's view.",
    .reference = "000_5bd48962a767ee9e.txt §3.4.1",
    .sources = sources,
    .own =
        "vslint judges what vCenter shows: vmknics bound to an iSCSI adapter, or, for a software "
        "adapter without port binding, the vmknic on a target's subnet, and their virtual "
        "switches, and with a Unity configured the array's Ethernet ports behind the portals "
        "those hosts send to; the physical switches are outside its view. The "
        "severities are vslint's: a vmknic or array port below MTU 9000 is a warning; a virtual "
        "switch whose "
        "MTU is below its vmknic's is critical, because the vmknic's larger frames are dropped "
        "there (vSphere's behaviour, not a statement of the seed).",
    .remediation =
        "Set MTU 9000 on the vSwitch and the vmknic: `esxcli network vswitch standard set "
        "--vswitch-name=<vSwitch> --mtu=9000` then `esxcli network ip interface set "
        "--interface-name=<vmk> --mtu=9000`; for a distributed switch raise its MTU (Edit "
        "Settings > Advanced > MTU, or PowerCLI `Get-VDSwitch <name> | Set-VDSwitch -Mtu 9000`) "
        "before the vmknic's. On the Unity set the port's MTU (Unisphere: Settings > Access > "
        "Ethernet > the port > MTU 9000; uemcli /net/port -id <port> set -mtu 9000). Enable "
        "jumbo frames on every physical switch port in the iSCSI path, then verify with "
        "`vmkping -I <vmk> -d -s 8972 <array portal>`.",
    .params = params,
    .needs = CHK_NEEDS_HOST | CHK_NEEDS_ISCSI_BINDINGS,
    .run = run,
};
