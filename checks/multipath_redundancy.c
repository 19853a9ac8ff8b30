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

/* The adapter a path's redundancy rests on, or NULL when that cannot be told: the host does
 * not list the adapter, or it is a software iSCSI adapter (or an iSCSI adapter whose driver is
 * unknown), one adapter for every NIC of its bound vmkernel ports, so that its redundancy lies
 * in the bindings and NIC teaming, which this check does not see. */
static const struct est_hba *path_adapter(const struct est_host *h, const struct est_path *p)
{
    const struct est_hba *a = est_path_hba(h, p);

    if (!a || !a->device)
        return NULL;
    if (a->type && !strcmp(a->type, "HostInternetScsiHba") &&
        (!a->driver || !strcmp(a->driver, "iscsi_vmk")))
        return NULL;
    return a;
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

/* The adapter a path adds to its LUN's redundancy, or NULL: a path counts when it is usable or
 * in an unknown state (not known to be down), through an adapter that can be told
 * (path_adapter()). */
static const struct est_hba *usable_adapter(const struct est_host *h, const struct est_path *p)
{
    enum use u = path_use(p->state);

    return u == USABLE || u == UNKNOWN ? path_adapter(h, p) : NULL;
}

/* Whether no path before paths[i] goes through a, paths[i]'s usable adapter: each distinct
 * adapter is counted and listed once, at its first path. */
static int first_through(const struct est_host *h, const struct est_lun *l, size_t i,
                         const struct est_hba *a)
{
    for (size_t j = 0; j < i; j++) {
        const struct est_hba *b = usable_adapter(h, &l->paths[j]);
        if (b && !strcmp(b->device, a->device))
            return 0;
    }
    return 1;
}

/* The storage processors the paths that count reach (usable or unknown state: not known to be
 * down). *sp is the one they all reach when that is every one of them, NULL otherwise; the
 * count of distinct SPs, or 0 when a path that counts ends at a port whose SP cannot be told:
 * then the LUN is not judged on SPs, and *why says why (for the evidence). */
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
    char name[512], msg[1024];
    json_t *paths, *dead_names, *adapters, *ev;

    /* Counted first: most LUNs are healthy, and their evidence would be built for nothing. */
    for (size_t i = 0; i < l->n_paths; i++) {
        const struct est_path *p = &l->paths[i];
        const struct est_hba *a = usable_adapter(h, p);

        count[path_use(p->state)]++;
        standby += p->state && !strcmp(p->state, "standby");
        with_adapter += a != NULL;
        n_adapters += a && first_through(h, l, i, a);
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
        const struct est_hba *a = usable_adapter(h, p);

        const char *how;
        paths = chk_ev_append(paths, json_pack("{s:s?, s:s?, s:s?, s:s?, s:s?, s:s?, s:s?}",
                                               "name", p->name, "state", p->state, "adapter",
                                               p->adapter, "target_wwpn", p->target_wwpn,
                                               "target_iqn", p->target_iqn, "target_address",
                                               p->target_address, "storage_processor",
                                               est_path_sp(e, p, &how)));
        if (path_use(p->state) == DEAD && p->name)
            dead_names = chk_ev_append(dead_names, json_string(p->name));
        if (a && first_through(h, l, i, a))
            adapters = chk_ev_append(adapters, json_string(a->device));
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
                 "(%s): a failed or rebooting %s cuts it off; zone each HBA to ports of both "
                 "storage processors",
                 name, usable + unknown, n_adapters + no_adapter, one_sp_name, one_sp_name);
    ev = json_pack("{s:s, s:s, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:o, s:o, s:s?, s:o, s:i, s:i, "
                   "s:s?, s:o, s:b, s:s?, s:s?}",
                   "host", hname, "device", l->canonical_name, "paths_total", (int)l->n_paths,
                   "paths_usable", (int)usable, "paths_standby", (int)standby, "paths_dead",
                   (int)dead, "paths_disabled", (int)count[DISABLED], "paths_unknown", (int)unknown,
                   "min_paths", min_paths, "paths", paths, "dead_paths", dead_names, "psp", l->psp,
                   "adapters", adapters, "adapters_unknown", (int)no_adapter, "min_adapters",
                   (int)min_adapters, "multipath_plugin", l->multipath_plugin, "commands",
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
        "the guide's zoning table, §3.1.2); where a path's target does not tell (another array, iSCSI), "
        "the LUN is not judged on storage processors and the evidence says why. Paths are judged for NMP and HPP (NVMe) devices alike; PowerPath and other "
        "third-party plug-ins do not report their paths to vCenter, so their devices are not "
        "judged. Local devices and LUNs whose locality is unknown are skipped. The software "
        "iSCSI adapter is one adapter for all its NICs: its redundancy lies in its port "
        "bindings, so its paths are not judged on adapters.",
    .reference = "000_5bd48962a767ee9e.txt §3.1.1",
    .sources = sources,
    .own =
        "The seed speaks of zoning, which vCenter does not show; vslint judges what that zoning "
        "gives a host: at least two usable paths to every SAN LUN (min_paths), through at least "
        "two adapters, none of them dead, and reaching both storage processors. Critical is "
        "vslint's severity: such a LUN is one failure away from an outage. A path's storage "
        "processor comes from the array's own port list (Unity fcPort) where an [array] is "
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
    .needs = CHK_NEEDS_HOST,
    .run = run,
};
