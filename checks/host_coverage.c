/* host-coverage: hosts vslint could not fully check. A disconnected or not-responding host is
 * not judged on the configuration vCenter last saw, and a host whose per-host reads failed
 * leaves some facts unknown; either way the admin is told, once per host, rather than left to
 * read silence as compliance. */
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
            json_array_append_new(a, json_string(chk_registry[i]->id));
    return a;
}

static int check_host(struct chk_ctx *ctx, const struct est_host *h)
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
        json_array_append_new(gaps, json_pack("{s:s, s:s?}", "what", reads[i].gap, "error",
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
    return chk_emit(ctx, &(struct chk_emit){
                             .severity = missing & CHK_NEEDS_HOST ? CHK_WARNING : CHK_INFO,
                             .object_type = "host",
                             .object_moref = h->moref,
                             .object_name = h->name,
                             .host = h,
                             .message = msg,
                             .evidence = ev,
                         });
}

static int run(struct chk_ctx *ctx, const struct estate *e)
{
    for (size_t i = 0; i < e->n_hosts; i++) {
        int r = check_host(ctx, &e->hosts[i]);
        if (r < 0)
            return r;
    }
    return 0;
}

const struct check chk_host_coverage = {
    .id = "host-coverage",
    .title = "Hosts vslint could not fully check",
    .severity = CHK_WARNING,
    .rationale =
        "Every host-level practice (multipathing, claim rules, iSCSI settings) is judged on what "
        "vCenter and the host report in the poll. A disconnected or not-responding host is not "
        "judged on the configuration vCenter last saw (a warning: nothing on it was checked), "
        "and a host that refused a per-host read (esxcli, advanced options, iSCSI bindings) "
        "leaves those facts unknown (info). vslint never guesses: findings about such a host "
        "are kept as they were, marked unverified, until it can be read again; this finding "
        "says why, and which checks are affected.",
    /* Not a practice of its own: it reports where the host practices of the guide could not
     * be verified, which no finding may paper over. */
    .reference = "000_5bd48962a767ee9e.txt §3.1-§3.4 (the host practices that could not be "
                 "verified on it)",
    .remediation =
        "Disconnected or not responding: reconnect the host (vSphere Client: the host > "
        "Connection > Connect; PowerCLI `Set-VMHost -VMHost <host> -State Connected`), check its "
        "management network and restart its agents (`/etc/init.d/hostd restart; "
        "/etc/init.d/vpxa restart`). A refused read: give the vslint account a role that can "
        "read the host's configuration and run esxcli through vCenter on it (`Get-EsxCli -V2 "
        "-VMHost <host>` as that account must work), then poll again.",
    .run = run,
};
