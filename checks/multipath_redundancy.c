/* multipath-redundancy: every SAN LUN has at least two usable paths and none dead, so one HBA,
 * fabric or storage port can fail without losing the LUN (000 §3.1.1). One finding per LUN. */
#include <stdio.h>
#include <string.h>

#include "checks/check.h"

static const struct chk_param params[] = {
    {"min_paths", 2, 1, 64, "paths", "fewest usable paths a SAN LUN may have"},
    {0},
};

static int check_lun(struct chk_ctx *ctx, const struct est_host *h, const struct est_lun *l,
                     int min_paths)
{
    const char *hname = h->name;
    size_t live = 0, dead = 0, disabled = 0, unknown = 0;
    char name[512], msg[1024];
    json_t *paths, *dead_names, *ev;

    for (size_t i = 0; i < l->n_paths; i++) {
        const char *s = l->paths[i].state;
        if (s && (!strcmp(s, "active") || !strcmp(s, "standby")))
            live++;
        else if (s && !strcmp(s, "dead"))
            dead++;
        else if (s && !strcmp(s, "disabled"))
            disabled++;
        else
            unknown++;
    }
    /* A path in an unknown state is given the benefit of the doubt for the count (it is not
     * known to be down); it is listed in the evidence. */
    if (dead == 0 && live + unknown >= (size_t)min_paths)
        return 0;

    paths = json_array();
    dead_names = json_array();
    for (size_t i = 0; i < l->n_paths; i++) {
        const struct est_path *p = &l->paths[i];
        json_array_append_new(paths, json_pack("{s:s?, s:s?}", "name", p->name, "state", p->state));
        if (p->state && !strcmp(p->state, "dead") && p->name)
            json_array_append_new(dead_names, json_string(p->name));
    }
    snprintf(name, sizeof(name), "%s %s", hname, l->canonical_name);
    if (dead)
        snprintf(msg, sizeof(msg),
                 "%s has %zu dead path(s) (%s%s) of %zu; %zu usable: check cabling, zoning and "
                 "the storage ports, then rescan",
                 name, dead, json_string_value(json_array_get(dead_names, 0)),
                 dead > 1 ? ", ..." : "", l->n_paths, live);
    else
        snprintf(msg, sizeof(msg),
                 "%s has %zu usable path(s) of %zu; a SAN LUN needs at least %d (two fabrics, "
                 "both storage processors) so one failure does not cut it off",
                 name, live + unknown, l->n_paths, min_paths);
    ev = json_pack("{s:s, s:s, s:i, s:i, s:i, s:i, s:i, s:i, s:o, s:o, s:s?}", "host", hname,
                   "device", l->canonical_name, "paths_total", (int)l->n_paths, "paths_usable",
                   (int)live, "paths_dead", (int)dead, "paths_disabled", (int)disabled,
                   "paths_unknown", (int)unknown, "min_paths", min_paths, "paths", paths,
                   "dead_paths", dead_names, "psp", l->psp);
    return chk_emit(ctx, &(struct chk_emit){
                             .severity = CHK_CRITICAL,
                             .object_type = "lun",
                             .object_name = l->canonical_name,
                             .host = h,
                             .detail = l->canonical_name,
                             .message = msg,
                             .evidence = ev,
                         });
}

static int run(struct chk_ctx *ctx, const struct estate *e)
{
    int min_paths = (int)chk_param(ctx, "min_paths");

    for (size_t hi = 0; hi < e->n_hosts; hi++) {
        const struct est_host *h = &e->hosts[hi];
        for (size_t li = 0; li < h->n_luns; li++) {
            const struct est_lun *l = &h->luns[li];
            /* SAN only (local == 0; unknown locality is skipped). A LUN with neither paths
             * nor a PSP has no multipath information at all: nothing to judge. */
            if (l->local != 0 || !l->canonical_name || (l->n_paths == 0 && !l->psp))
                continue;
            int r = check_lun(ctx, h, l, min_paths);
            if (r < 0)
                return r;
        }
    }
    return 0;
}

const struct check chk_multipath_redundancy = {
    .id = "multipath-redundancy",
    .title = "SAN LUNs have redundant, live paths",
    .severity = CHK_CRITICAL,
    .rationale =
        "For resiliency the guide zones every host into two fabrics, each with half of the "
        "host's ports and half of each storage processor's ports, so every SAN LUN has several "
        "paths. A SAN LUN (not local) with fewer than two usable paths (active or standby; a "
        "disabled path does not count, one in an unknown state is given the benefit of the "
        "doubt), or with any dead path, is one failure away from an outage: critical. LUNs "
        "whose locality or multipath information is unknown are skipped.",
    .reference = "000_5bd48962a767ee9e.txt §3.1.1",
    .remediation =
        "List the paths with `esxcli storage core path list --device=<naa>` (or `esxcli storage "
        "nmp device list --device=<naa>`), fix the failed HBA, cable, zone or storage port (one "
        "zone per initiator with ports of both storage processors, in two fabrics), re-enable "
        "a disabled path with `esxcli storage core path set --state=active --path=<path>`, then "
        "`esxcli storage core adapter rescan --all`.",
    .params = params,
    .needs = CHK_NEEDS_HOST,
    .run = run,
};
