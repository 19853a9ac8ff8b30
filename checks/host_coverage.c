/* host-coverage: hosts vslint could not fully check. A disconnected or not-responding host is
 * not judged on the configuration vCenter last saw, a host whose per-host reads failed leaves
 * some facts unknown, and SAN devices of another multipathing plug-in than NMP are outside
 * NMP's practices (a third party's paths are not even reported); either way the admin is told,
 * once per host, rather than left to read silence as compliance. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "checks/check.h"
#include "checks/engine.h"

/* The per-host reads the collector records as gaps, the enum chk_needs flag of the checks that
 * depend on each, and what a human calls it. */
static const struct {
    const char *gap;
    unsigned need;
    const char *what;
} reads[] = {
    {"esxcli", CHK_NEEDS_ESXCLI, "esxcli (Round Robin IOPS limits, SATP claim rules)"},
    {"options", CHK_NEEDS_OPTIONS, "the advanced options (VMFS3.EnableBlockDelete)"},
    {"iscsi-bindings", CHK_NEEDS_ISCSI_BINDINGS, "the iSCSI port bindings"},
};

#define N_READS (sizeof(reads) / sizeof(reads[0]))

/* The ids of the catalogue's checks that need any of the inputs in mask. */
static json_t *checks_needing(unsigned mask)
{
    json_t *a = json_array();

    for (size_t i = 0; a && i < chk_registry_len; i++)
        if (chk_registry[i]->needs & mask)
            a = chk_ev_append(a, json_string(chk_registry[i]->id));
    return a;
}

static int report_gaps(struct chk_ctx *ctx, const struct est_host *h)
{
    char msg[1024], list[512] = "";
    unsigned missing = 0;
    json_t *gaps = json_array(), *ev;
    size_t n = 0;

    if (!gaps)
        return -ENOMEM;
    for (size_t i = 0; i < N_READS; i++) {
        const struct est_gap *g = est_gap(h, reads[i].gap);
        if (!g)
            continue;
        missing |= reads[i].need;
        gaps = chk_ev_append(gaps, json_pack("{s:s, s:s?}", "what", reads[i].gap, "error",
                                             g->error));
        size_t len = strlen(list);
        snprintf(list + len, sizeof(list) - len, "%s%s (%s)", n++ ? "; " : "", reads[i].what,
                 g->error ? g->error : "unknown error");
    }
    if (chk_host_current(h)) {
        if (n == 0) {
            json_decref(gaps);
            return 0;
        }
        snprintf(msg, sizeof(msg),
                 "host %s: vslint could not read %s; what depends on it is not verified there",
                 h->name, list);
    } else {
        missing |= CHK_NEEDS_HOST;
        snprintf(msg, sizeof(msg),
                 "host %s is %s: vCenter holds only its last known configuration, so its "
                 "storage and iSCSI settings were not checked",
                 h->name, h->connection_state);
    }
    ev = json_pack("{s:s, s:s?, s:o, s:o}", "host", h->name, "connection_state",
                   h->connection_state, "gaps", gaps, "checks_not_verified",
                   checks_needing(missing));
    return chk_emit_host(ctx, h, NULL, missing & CHK_NEEDS_HOST ? SEV_WARNING : SEV_INFO, msg,
                         ev);
}

/* Devices named in one message; the evidence names them all. */
#define MSG_DEVICES 4

/* SAN devices another multipathing plug-in than NMP owns: NMP's practices (Round Robin with its
 * IOPS limit, SATP claim rules) do not apply to them, and a third party's plug-in (PowerPath)
 * does not report its paths to vCenter, so their redundancy cannot be judged either. Said once
 * per host, so that silence about them is not read as compliance. */
static int report_plugins(struct chk_ctx *ctx, const struct est_host *h)
{
    char msg[1024], list[512] = "";
    size_t n = 0, blind = 0, len = 0;
    const struct est_lun *l;
    json_t *devices = json_array(), *not_verified = json_array(), *ev;

    if (!devices || !not_verified) {
        json_decref(devices);
        json_decref(not_verified);
        return -ENOMEM;
    }
    for (size_t i = 0; (l = est_host_san_lun(h, &i)); i++) {
        enum est_plugin p = est_lun_plugin(l);
        int vendor_psp = est_lun_vendor_psp(l);
        const char *plugin = l->multipath_plugin ? l->multipath_plugin : vendor_psp ? "NMP" : "HPP";
        if (p != EST_PLUGIN_HPP && p != EST_PLUGIN_OTHER && !vendor_psp)
            continue;
        devices = chk_ev_append(
            devices, json_pack("{s:s, s:s, s:s?, s:i, s:b, s:b}", "device", l->canonical_name,
                               "plugin", plugin, "policy", l->psp, "paths", (int)l->n_paths,
                               "paths_reported", p != EST_PLUGIN_OTHER, "vendor_psp", vendor_psp));
        blind += p == EST_PLUGIN_OTHER;
        if (n++ < MSG_DEVICES && len < sizeof(list)) {
            snprintf(list + len, sizeof(list) - len, "%s%s by %s", len ? ", " : "",
                     l->canonical_name, vendor_psp ? l->psp : plugin);
            len += strlen(list + len);
        }
    }
    if (n == 0) {
        json_decref(devices);
        json_decref(not_verified);
        return 0;
    }
    if (n > MSG_DEVICES && len < sizeof(list))
        snprintf(list + len, sizeof(list) - len, " and %zu more", n - MSG_DEVICES);
    if (blind)
        not_verified = chk_ev_append(not_verified, json_string("multipath-redundancy"));
    snprintf(msg, sizeof(msg),
             "host %s: %zu SAN device(s) are claimed by another multipathing plug-in than NMP, "
             "or by NMP with a vendor's own path selection policy (%s): VMware's practices (Round "
             "Robin with an IOPS limit, SATP claim rules) do not "
             "apply to them and were not judged%s",
             h->name, n, list,
             blind ? "; vCenter does not report a third-party plug-in's paths, so their "
                     "redundancy was not judged either"
                   : "");
    ev = json_pack("{s:s, s:o, s:[ss], s:o}", "host", h->name, "devices", devices,
                   "checks_not_applicable", "multipath-policy", "satp-claim-rule",
                   "checks_not_verified", not_verified);
    return chk_emit_host(ctx, h, "plug-ins", SEV_INFO, msg, ev);
}

static int run(struct chk_ctx *ctx, const struct estate *e)
{
    for (size_t i = 0; i < e->n_hosts; i++) {
        const struct est_host *h = &e->hosts[i];
        int r = report_gaps(ctx, h);
        /* A disconnected host's devices are as stale as the rest of it: its warning says so. */
        if (r == 0 && chk_host_current(h))
            r = report_plugins(ctx, h);
        if (r < 0)
            return r;
    }
    return 0;
}

const struct check chk_host_coverage = {
    .id = "host-coverage",
    .title = "Hosts vslint could not fully check",
    .severity = SEV_WARNING,
    .rationale =
        "Every host-level practice (multipathing, claim rules, iSCSI settings) is judged on what "
        "vCenter and the host report in the poll. A disconnected or not-responding host is not "
        "judged on the configuration vCenter last saw (a warning: nothing on it was checked), "
        "and a host that refused a per-host read (esxcli, advanced options, iSCSI bindings) "
        "leaves those facts unknown (info). vslint never guesses: findings about such a host "
        "are kept as they were, marked unverified, until it can be read again; this finding "
        "says why, and which checks are affected. A host with SAN devices claimed by another "
        "multipathing plug-in than NMP (HPP for NVMe, or a third party's such as PowerPath), or "
        "on a vendor's own PSP under NMP (any policy not named VMW_PSP_*: HPE Nimble's "
        "NIMBLE_PSP_DIRECTED, EqualLogic MEM's DELL_PSP_EQL_ROUTED, Hitachi HDLM's "
        "HTI_PSP_HDLM_*), gets one info finding naming them: NMP's practices (multipath-policy, "
        "satp-claim-rule) do not apply there, and a third-party plug-in's paths are not "
        "reported to vCenter, so multipath-redundancy cannot judge them either.",
    /* Not a practice of its own: it reports where the host practices of the guide could not
     * be verified, which no finding may paper over. */
    .reference = "000_5bd48962a767ee9e.txt §3.1-§3.4 (the host practices that could not be "
                 "verified on it)",
    .sources = NULL,
    .own =
        "Not a practice of the seeds: vslint reports where it could not verify the host practices "
        "(multipathing, claim rules, iSCSI settings), so that the absence of a finding is never "
        "taken for compliance. A host not judged at all is a warning, a fact it could not read "
        "info: vslint's severities.",
    .remediation =
        "Disconnected or not responding: reconnect the host (vSphere Client: the host > "
        "Connection > Connect; PowerCLI `Set-VMHost -VMHost <host> -State Connected`), check its "
        "management network and restart its agents (`/etc/init.d/hostd restart; "
        "/etc/init.d/vpxa restart`). A refused read: give the vslint account a role that can "
        "read the host's configuration and run esxcli through vCenter on it (`Get-EsxCli -V2 "
        "-VMHost <host>` as that account must work), then poll again. Devices of another "
        "plug-in: nothing to change in vSphere; check them with the plug-in's own tools "
        "(`esxcli storage hpp device list`, `esxcli storage hpp path list`; PowerPath's "
        "`rpowermt display dev=all host=<host>`).",
    .run = run,
};
