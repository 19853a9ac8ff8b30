/* multipath-redundancy: every SAN LUN has at least two usable paths, through at least two
 * adapters, and none dead, so one HBA, fabric or storage port can fail without losing the LUN
 * (000 §3.1.1). One finding per LUN. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "checks/check.h"

static const struct chk_param params[] = {
    {"min_paths", 2, 1, 64, "paths",
     "fewest usable paths a SAN LUN may have; they must also go through this many adapters, "
     "up to two"},
    {0},
};

/* What a path's state says: usable (active, or an ALUA standby path, which takes over when
 * the active ones fail), dead (failed), disabled (switched off by an administrator: "disabled"
 * or "off"), or unknown (given the benefit of the doubt: not known to be down). */
enum use { USABLE, DEAD, DISABLED, UNKNOWN };

static enum use path_use(const char *s)
{
    if (s && (!strcmp(s, "active") || !strcmp(s, "standby")))
        return USABLE;
    if (s && !strcmp(s, "dead"))
        return DEAD;
    if (s && (!strcmp(s, "disabled") || !strcmp(s, "off")))
        return DISABLED;
    return UNKNOWN;
}

/* The bindings of adapter a as the host's iSCSI adapters list them, or NULL. */
static const struct est_iscsi_hba *iscsi_of(const struct est_host *h, const struct est_hba *a)
{
    for (size_t i = 0; i < h->n_iscsi_hbas; i++)
        if (h->iscsi_hbas[i].device && !strcmp(h->iscsi_hbas[i].device, a->device))
            return &h->iscsi_hbas[i];
    return NULL;
}

/* The independent element a path's redundancy rests on, written to out (empty when it cannot
 * be told), and 1 when it was told:
 * - a hardware adapter: the adapter (vmhba2); one failed HBA cuts every path through it;
 * - a software iSCSI adapter with port binding: the bound vmknic the path's session leaves by,
 *   which ESXi gives its own path channel (vmhba64:C0, vmhba64:C1: one channel per bound
 *   vmknic). With one bound vmknic every path, to however many portals, leaves by that NIC:
 *   the element is named by it ("vmhba64 vmk1"); with several, by the channel;
 * - otherwise it cannot be told: the host does not list the adapter, or a software iSCSI
 *   adapter has no binding (routed iSCSI, where VMware says not to bind, leaves the choice of
 *   NIC to the routing table and NIC teaming, which vslint does not see; bindings that could
 *   not be read look the same). Such a path is given the benefit of the doubt. */
/* An element's name: an adapter device, "vmhba64 vmk1", or "vmhba64:C1". */
#define EL_MAX 96

static int path_element(const struct est_host *h, const struct est_path *p, char *out,
                        size_t size)
{
    const struct est_hba *a = est_path_hba(h, p);
    const struct est_iscsi_hba *b;
    size_t n;

    out[0] = '\0';
    if (!a || !a->device)
        return 0;
    if (!est_hba_software_iscsi(a)) {
        snprintf(out, size, "%s", a->device);
        return 1;
    }
    if (!(b = iscsi_of(h, a)) || b->n_bound_vnics == 0)
        return 0;
    if (b->n_bound_vnics == 1 && b->bound_vnics[0] < h->n_vnics &&
        h->vnics[b->bound_vnics[0]].device) {
        snprintf(out, size, "%s %s", a->device, h->vnics[b->bound_vnics[0]].device);
        return 1;
    }
    /* vmhba64:C1:T0:L3: the channel is what the name holds before its second colon. */
    n = strlen(a->device);
    if (!p->name || strncmp(p->name, a->device, n) || strncmp(p->name + n, ":C", 2))
        return 0;
    n += strcspn(p->name + n + 1, ":") + 1;
    snprintf(out, size, "%.*s", (int)n, p->name);
    return 1;
}

/* What a user runs to see and fix the paths: commands of the plug-in that owns the device
 * (NMP's `esxcli storage nmp` does not know HPP's devices), then the ones every plug-in shares. */
static json_t *commands(const struct est_lun *l, enum est_plugin plugin)
{
    char buf[512];
    json_t *a = json_array();

    if (plugin == EST_PLUGIN_HPP) {
        snprintf(buf, sizeof(buf), "esxcli storage hpp path list --device=%s", l->canonical_name);
        a = chk_ev_append(a, json_string(buf));
        a = chk_ev_append(a, json_string("esxcli nvme controller list"));
    } else {
        snprintf(buf, sizeof(buf), "esxcli storage nmp path list --device=%s", l->canonical_name);
        a = chk_ev_append(a, json_string(buf));
    }
    for (size_t i = 0; i < l->n_paths; i++) {
        if (path_use(l->paths[i].state) != DISABLED || !l->paths[i].name)
            continue;
        snprintf(buf, sizeof(buf), "esxcli storage core path set --state=active --path=%s",
                 l->paths[i].name);
        a = chk_ev_append(a, json_string(buf));
    }
    return chk_ev_append(a, json_string("esxcli storage core adapter rescan --all"));
}

/* The element a path adds to its LUN's redundancy (path_element()), or 0: a path counts when
 * it is usable or in an unknown state (not known to be down). */
static int usable_element(const struct est_host *h, const struct est_path *p, char *out,
                          size_t size)
{
    enum use u = path_use(p->state);

    out[0] = '\0';
    return (u == USABLE || u == UNKNOWN) && path_element(h, p, out, size);
}

/* Whether no path before paths[i] goes through element el, paths[i]'s: each distinct element is
 * counted and listed once, at its first path. */
static int first_through(const struct est_host *h, const struct est_lun *l, size_t i,
                         const char *el)
{
    char other[EL_MAX];

    for (size_t j = 0; j < i; j++)
        if (usable_element(h, &l->paths[j], other, sizeof(other)) && !strcmp(other, el))
            return 0;
    return 1;
}

/* The storage processors the paths that count reach (usable or unknown state: not known to be
 * down). *sp is the one they all reach when that is every one of them, NULL otherwise; the
 * count of distinct SPs, or 0 when a path that counts ends at a port whose SP cannot be told:
 * then the LUN is not judged on SPs, and *why says why (for the evidence). */
/* Whether l's paths are iSCSI ones (a target address, no WWPN): zoning is Fibre Channel's. */
static int iscsi_paths(const struct est_lun *l)
{
    for (size_t i = 0; i < l->n_paths; i++)
        if (l->paths[i].target_wwpn)
            return 0;
    return l->n_paths > 0 && l->paths[0].target_address != NULL;
}

static size_t reached_sps(const struct estate *e, const struct est_lun *l, const char **sp,
                          const char **why)
{
    const char *first = NULL, *how = NULL;
    size_t n = 0;

    *sp = NULL;
    *why = NULL;
    for (size_t i = 0; i < l->n_paths; i++) {
        enum use u = path_use(l->paths[i].state);
        if (u != USABLE && u != UNKNOWN)
            continue;
        const char *s = est_path_sp(e, &l->paths[i], &how);
        if (!s) {
            *why = how;
            return 0;
        }
        if (!first) {
            first = s;
            n = 1;
        } else if (strcmp(first, s)) {
            n = 2;
        }
    }
    *why = how;
    *sp = n == 1 ? first : NULL;
    return n;
}

static int check_lun(struct chk_ctx *ctx, const struct estate *e, const struct est_host *h,
                     const struct est_lun *l, enum est_plugin plugin, int min_paths)
{
    const char *hname = h->name;
    size_t count[UNKNOWN + 1] = {0}, standby = 0, with_adapter = 0, n_adapters = 0;
    /* Two paths through one adapter are one failure away from none: the adapters must differ
     * too, as many as min_paths asks for, up to two (one per fabric). */
    size_t min_adapters = min_paths < 2 ? (size_t)min_paths : 2;
    char name[512], msg[1024], el[EL_MAX], one_nic[EL_MAX] = "";
    json_t *paths, *dead_names, *adapters, *ev;

    /* Counted first: most LUNs are healthy, and their evidence would be built for nothing. */
    for (size_t i = 0; i < l->n_paths; i++) {
        const struct est_path *p = &l->paths[i];
        int a = usable_element(h, p, el, sizeof(el));

        count[path_use(p->state)]++;
        standby += p->state && !strcmp(p->state, "standby");
        with_adapter += a;
        n_adapters += a && first_through(h, l, i, el);
    }
    size_t usable = count[USABLE], dead = count[DEAD], unknown = count[UNKNOWN];
    /* The paths that count whose adapter cannot be told. */
    size_t no_adapter = usable + unknown - with_adapter;
    /* A path in an unknown state, or whose adapter cannot be told, is given the benefit of the
     * doubt (it is not known to be down, or to share an adapter); it is listed in the
     * evidence. */
    int few_paths = usable + unknown < (size_t)min_paths;
    int one_adapter = n_adapters + no_adapter < min_adapters;
    /* Both storage processors (000 §3.1.1: half of each SP's ports in each fabric): paths that
     * all end at one SP lose the LUN with that SP, whatever the adapters. Judged only where
     * every path that counts tells its SP, and where redundancy is asked for at all. */
    const char *one_sp_name, *sp_how;
    size_t n_sps = reached_sps(e, l, &one_sp_name, &sp_how);
    int one_sp = min_adapters >= 2 && n_sps == 1;
    if (dead == 0 && !few_paths && !one_adapter && !one_sp)
        return 0;

    paths = json_array();
    dead_names = json_array();
    adapters = json_array();
    for (size_t i = 0; i < l->n_paths; i++) {
        const struct est_path *p = &l->paths[i];
        int a = usable_element(h, p, el, sizeof(el));

        const char *how;
        paths = chk_ev_append(paths, json_pack("{s:s?, s:s?, s:s?, s:s?, s:s?, s:s?, s:s?}",
                                               "name", p->name, "state", p->state, "adapter",
                                               p->adapter, "target_wwpn", p->target_wwpn,
                                               "target_iqn", p->target_iqn, "target_address",
                                               p->target_address, "storage_processor",
                                               est_path_sp(e, p, &how)));
        if (path_use(p->state) == DEAD && p->name)
            dead_names = chk_ev_append(dead_names, json_string(p->name));
        if (a && first_through(h, l, i, el))
            adapters = chk_ev_append(adapters, json_string(el));
        /* "vmhba64 vmk1": the one vmknic bound to a software iSCSI adapter. */
        if (a && strchr(el, ' '))
            snprintf(one_nic, sizeof(one_nic), "%s", el);
    }
    if (!paths || !dead_names || !adapters) {
        json_decref(paths);
        json_decref(dead_names);
        json_decref(adapters);
        return -ENOMEM;
    }

    snprintf(name, sizeof(name), "%s %s", hname, l->canonical_name);
    if (dead)
        snprintf(msg, sizeof(msg),
                 "%s has %zu dead path(s) (%s%s) of %zu; %zu usable: check cabling, zoning and "
                 "the storage ports, then rescan",
                 name, dead, json_string_value(json_array_get(dead_names, 0)),
                 dead > 1 ? ", ..." : "", l->n_paths, usable);
    else if (few_paths)
        snprintf(msg, sizeof(msg),
                 "%s has %zu usable path(s) of %zu%s; a SAN LUN needs at least %d (two fabrics, "
                 "both storage processors) so one failure does not cut it off",
                 name, usable + unknown, l->n_paths,
                 count[DISABLED] ? " (the others disabled or off)" : "", min_paths);
    else if (one_adapter && n_adapters == 1 && one_nic[0])
        snprintf(msg, sizeof(msg),
                 "%s has %zu usable path(s), all through one NIC: %s is the only vmknic bound "
                 "to software iSCSI adapter %.*s, so one failed NIC, cable or switch port cuts it "
                 "off; bind a second vmknic, on its own uplink, to the adapter",
                 name, usable + unknown, strchr(one_nic, ' ') + 1,
                 (int)(strchr(one_nic, ' ') - one_nic), one_nic);
    else if (one_adapter && n_adapters == 1 &&
             strstr(json_string_value(json_array_get(adapters, 0)), ":C"))
        snprintf(msg, sizeof(msg),
                 "%s has %zu usable path(s), all on one path channel (%s), that is through one of "
                 "the adapter's bound vmknics: one failed NIC, cable or switch port cuts it off; "
                 "each bound vmknic, on its own uplink, should carry a path",
                 name, usable + unknown, json_string_value(json_array_get(adapters, 0)));
    else if (one_adapter)
        snprintf(msg, sizeof(msg),
                 "%s has %zu usable path(s), all through one adapter (%s): one failed HBA, cable "
                 "or switch port cuts it off; a SAN LUN needs paths through at least %zu "
                 "adapters (one per fabric)",
                 name, usable + unknown, json_string_value(json_array_get(adapters, 0)),
                 min_adapters);
    else
        snprintf(msg, sizeof(msg),
                 "%s has %zu usable path(s) through %zu adapter(s), all to one storage processor "
                 "(%s): a failed or rebooting %s cuts it off; %s",
                 name, usable + unknown, n_adapters + no_adapter, one_sp_name, one_sp_name,
                 iscsi_paths(l) ? "add the array's iSCSI portals on both storage processors as "
                                  "targets of the host's adapter"
                                : "zone each HBA to ports of both storage processors");
    ev = json_pack("{s:s, s:s, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:o, s:o, s:s?, s:o, s:i, s:i, "
                   "s:s?, s:s?, s:o, s:b, s:s?, s:s?}",
                   "host", hname, "device", l->canonical_name, "paths_total", (int)l->n_paths,
                   "paths_usable", (int)usable, "paths_standby", (int)standby, "paths_dead",
                   (int)dead, "paths_disabled", (int)count[DISABLED], "paths_unknown", (int)unknown,
                   "min_paths", min_paths, "paths", paths, "dead_paths", dead_names, "psp", l->psp,
                   "adapters", adapters, "adapters_unknown", (int)no_adapter, "min_adapters",
                   (int)min_adapters, "multipath_plugin", l->multipath_plugin, "vmknic",
                   one_nic[0] ? strchr(one_nic, ' ') + 1 : NULL, "commands",
                   commands(l, plugin), "storage_processors_judged", n_sps > 0,
                   "storage_processor_only", one_sp ? one_sp_name : NULL,
                   n_sps > 0 ? "storage_processors_how" : "storage_processors_unknown", sp_how);
    return chk_emit_lun(ctx, h, l, SEV_CRITICAL, msg, ev);
}

static int run(struct chk_ctx *ctx, const struct estate *e)
{
    int min_paths = (int)chk_param(ctx, "min_paths");
    const struct est_host *h;
    const struct est_lun *l;

    /* SAN LUNs only (est_host_san_lun: local devices and devices whose locality is unknown
     * are skipped). Paths are judged wherever vCenter reports them: NMP's and HPP's. A third
     * party's plug-in (PowerPath) keeps its paths to itself, so its devices are not judged
     * (host-coverage names them), and neither is a LUN with neither paths nor a PSP, which has
     * no multipath information at all. */
    for (struct est_san_pos pos = {0}; (l = est_next_san_lun(e, &pos, &h));) {
        enum est_plugin plugin = est_lun_plugin(l);
        if (plugin == EST_PLUGIN_OTHER || (l->n_paths == 0 && !l->psp))
            continue;
        int r = check_lun(ctx, e, h, l, plugin, min_paths);
        if (r < 0)
            return r;
    }
    return 0;
}

/* The seeds' words this check rests on, verbatim (tests/unit/test_registry.c). */
static const struct chk_source sources[] = {
    {"000_5bd48962a767ee9e.txt", "§3.1.1",
     "For resiliency and availability, two fabrics should be used, each containing half of the "
     "ports on each host and half of the ports on each storage processor on the Dell EMC Unity "
     "array."},
    {0},
};

const struct check chk_multipath_redundancy = {
    .id = "multipath-redundancy",
    .title = "SAN LUNs have redundant, live paths",
    .severity = SEV_CRITICAL,
    .rationale =
        "For resiliency the guide zones every host into two fabrics, each with half of the "
        "host's ports and half of each storage processor's ports, so every SAN LUN has several "
        "paths through more than one HBA. A SAN LUN with any dead path, with fewer than two "
        "usable paths (active, or ALUA standby, which takes over on a failure; a disabled or "
        "off path does not count, one in an unknown state is given the benefit of the doubt), "
        "or whose usable paths all go through one adapter or all end at one storage processor, "
        "is one failure away from an outage: "
        "critical. The storage processor of a path is told from its target port's WWN by the "
        "convention of Dell EMC CLARiiON, VNX and Unity (50:06:01:60-67 SP A, 68-6f SP B, as in "
        "the guide's zoning table, §3.1.2), or, where a Unity is configured ([array NAME]), by "
        "the array itself: an FC target port from its fcPort list, an iSCSI target from the "
        "iSCSI portal at the path's address (iscsiPortal -> ethernetPort -> storageProcessor; "
        "a path naming another IQN than the portal's is not matched); where a path's target "
        "does not tell (another array, iSCSI without a configured array), "
        "the LUN is not judged on storage processors and the evidence says why. Paths are judged for NMP and HPP (NVMe) devices alike; PowerPath and other "
        "third-party plug-ins do not report their paths to vCenter, so their devices are not "
        "judged. Local devices and LUNs whose locality is unknown are skipped. The software "
        "iSCSI adapter is one adapter for all its NICs: with port binding its independent "
        "elements are its bound vmknics (one path channel each), so an adapter with one bound "
        "vmknic has all its paths, to however many portals, on one NIC; without port binding "
        "(routed iSCSI) the NIC is chosen by the host's routing and teaming, which vCenter's "
        "inventory does not show, and its paths are not judged on elements.",
    .reference = "000_5bd48962a767ee9e.txt §3.1.1",
    .sources = sources,
    .own =
        "The seed speaks of zoning, which vCenter does not show; vslint judges what that zoning "
        "gives a host: at least two usable paths to every SAN LUN (min_paths), through at least "
        "two adapters (for the software iSCSI adapter, two bound vmknics), none of them dead, "
        "and reaching both storage processors. The seed's section is about Fibre Channel "
        "zoning; judging iSCSI paths on storage processors too is vslint's, for the same "
        "reason (an SP's failure or reboot must not cut a LUN off). Critical is "
        "vslint's severity: such a LUN is one failure away from an outage. A path's storage "
        "processor comes from the array's own port list (Unity fcPort, or for iSCSI the "
        "iscsiPortal at the path's target address and its ethernetPort) where an [array] is "
        "configured, else from the published VNX/Unity WWN convention: vslint reads "
        "50:06:01:60-67 as SP A and 68-6f as SP B, widening the four ports per SP of the "
        "guide's zoning table (§3.1.2); a LUN whose ports match neither is not judged on its "
        "storage processors, and its evidence says so.",
    .remediation =
        "List the paths with `esxcli storage core path list --device=<device>` (NMP: `esxcli "
        "storage nmp path list --device=<naa>`; HPP: `esxcli storage hpp path list "
        "--device=<eui>` and the NVMe controllers with `esxcli nvme controller list`), fix the "
        "failed HBA, cable, zone or storage port (one zone per initiator with ports of both "
        "storage processors, in two fabrics, each host HBA in its own fabric; for NVMe over "
        "fabrics reconnect the controller with `esxcli nvme fabrics connect`), re-enable a "
        "disabled path with `esxcli storage core path set --state=active --path=<path>`, then "
        "`esxcli storage core adapter rescan --all`. The evidence gives the commands for the "
        "LUN's plug-in.",
    .params = params,
    /* A software iSCSI adapter's paths are judged by its bindings: where they could not be
     * read, the host's earlier findings are kept, unverified, rather than resolved by a read
     * that failed (test_redundancy_bindings_unread). */
    .needs = CHK_NEEDS_HOST | CHK_NEEDS_ISCSI_BINDINGS,
    .run = run,
};
