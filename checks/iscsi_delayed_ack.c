/* iscsi-delayed-ack: DelayedAck is off on every iSCSI adapter and on every target that sets it
 * itself (000 §3.4.2, VMware KB 1002598). Targets that inherit follow their adapter. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "checks/check.h"

/* 1 for an xsd:boolean true, 0 for false, EST_UNKNOWN for anything else (or no value). */
static int boolean(const char *v)
{
    if (!v)
        return EST_UNKNOWN;
    if (!strcasecmp(v, "true") || !strcmp(v, "1"))
        return 1;
    if (!strcasecmp(v, "false") || !strcmp(v, "0"))
        return 0;
    return EST_UNKNOWN;
}

static const struct est_option *find_option(const struct est_option *opts, size_t n,
                                            const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (opts[i].key && !strcmp(opts[i].key, key))
            return &opts[i];
    return NULL;
}

/* A target's own DelayedAck: 1/0 when it sets one itself, EST_UNKNOWN when it inherits (or
 * when its own value cannot be read). *inherits says which. */
static int target_own(const struct est_iscsi_target *t, int *inherits)
{
    const struct est_option *o = find_option(t->options, t->n_options, "DelayedAck");

    /* No option at all: ESXi shows every parameter per target, so this only happens when the
     * inventory lacks it; vSphere's default for a target is to inherit from the adapter. */
    *inherits = !o || o->inherited;
    if (*inherits)
        return EST_UNKNOWN;
    return boolean(o->value);
}

static int report_adapter(struct chk_ctx *ctx, const struct est_host *h,
                          const struct est_iscsi_hba *b)
{
    char name[256], msg[768], cmd[256];
    json_t *inheriting = json_array(), *ev;

    for (size_t i = 0; i < b->n_targets; i++) {
        const struct est_iscsi_target *t = &b->targets[i];
        char a[300];
        int inherits;
        (void)target_own(t, &inherits);
        if (!inherits || !t->address)
            continue;
        snprintf(a, sizeof(a), "%s:%d", t->address, t->port);
        json_array_append_new(inheriting, json_string(a));
    }
    snprintf(cmd, sizeof(cmd),
             "esxcli iscsi adapter param set --adapter=%s --key=DelayedAck "
             "--value=false",
             b->device);
    snprintf(name, sizeof(name), "%s %s", h->name, b->device);
    if (json_array_size(inheriting))
        snprintf(msg, sizeof(msg),
                 "%s has DelayedAck enabled, and %zu target(s) inherit it; VMware (KB 1002598) "
                 "and the array vendor recommend disabling it: %s",
                 name, json_array_size(inheriting), cmd);
    else
        snprintf(msg, sizeof(msg),
                 "%s has DelayedAck enabled; VMware (KB 1002598) and the array vendor recommend "
                 "disabling it: %s",
                 name, cmd);
    ev = json_pack("{s:s, s:s, s:b, s:b, s:o, s:s}", "host", h->name, "adapter", b->device,
                   "delayed_ack", 1, "recommended", 0, "targets_inheriting", inheriting, "command",
                   cmd);
    return chk_emit(ctx, &(struct chk_emit){
                             .severity = CHK_WARNING,
                             .object_type = "iscsi_hba",
                             .object_name = b->device,
                             .host = h,
                             .detail = b->device,
                             .message = msg,
                             .evidence = ev,
                         });
}

/* One finding per (adapter, address:port): a send target and a static target on the same
 * portal share it, so their kinds are listed together rather than emitted twice. */
static int report_target(struct chk_ctx *ctx, const struct est_host *h,
                         const struct est_iscsi_hba *b, size_t ti, int adapter_value)
{
    const struct est_iscsi_target *t = &b->targets[ti];
    char portal[300], name[600], target[400], detail[400], msg[1400], cmd[700];
    json_t *kinds = json_array(), *ev;
    int inherits;

    snprintf(portal, sizeof(portal), "%s:%d", t->address, t->port);
    for (size_t i = 0; i < ti; i++) {
        const struct est_iscsi_target *p = &b->targets[i];
        if (p->address && !strcmp(p->address, t->address) && p->port == t->port &&
            target_own(p, &inherits) == 1) {
            json_decref(kinds);
            return 0; /* reported with the earlier target */
        }
    }
    for (size_t i = ti; i < b->n_targets; i++) {
        const struct est_iscsi_target *p = &b->targets[i];
        if (p->address && !strcmp(p->address, t->address) && p->port == t->port &&
            target_own(p, &inherits) == 1)
            json_array_append_new(kinds, json_string(p->kind ? p->kind : "?"));
    }
    if (t->kind && !strcmp(t->kind, "static"))
        snprintf(cmd, sizeof(cmd),
                 "esxcli iscsi adapter target portal param set --adapter=%s --address=%s "
                 "--name=%s --key=DelayedAck --value=false",
                 b->device, portal, t->iscsi_name ? t->iscsi_name : "<target iqn>");
    else
        snprintf(cmd, sizeof(cmd),
                 "esxcli iscsi adapter discovery sendtarget param set --adapter=%s "
                 "--address=%s --key=DelayedAck --value=false",
                 b->device, portal);
    snprintf(name, sizeof(name), "%s %s %s", h->name, b->device, portal);
    snprintf(target, sizeof(target), "%s %s", b->device, portal);
    snprintf(detail, sizeof(detail), "%s/%s", b->device, portal);
    snprintf(msg, sizeof(msg),
             "%s (%s target) sets DelayedAck to true itself, not inherited from the adapter; "
             "VMware (KB 1002598) and the array vendor recommend disabling it: %s",
             name, t->kind && !strcmp(t->kind, "static") ? "static" : "send", cmd);
    ev = json_pack("{s:s, s:s, s:s, s:o, s:b, s:b, s:b, s:s}", "host", h->name, "adapter",
                   b->device, "target", portal, "kinds", kinds, "delayed_ack", 1, "inherited", 0,
                   "recommended", 0, "command", cmd);
    if (ev) {
        json_object_set_new(ev, "adapter_delayed_ack",
                            adapter_value == EST_UNKNOWN ? json_null()
                                                         : json_boolean(adapter_value));
        if (t->iscsi_name)
            json_object_set_new(ev, "iscsi_name", json_string(t->iscsi_name));
    }
    return chk_emit(ctx, &(struct chk_emit){
                             .severity = CHK_WARNING,
                             .object_type = "iscsi_target",
                             .object_name = target,
                             .host = h,
                             .detail = detail,
                             .message = msg,
                             .evidence = ev,
                         });
}

static int run(struct chk_ctx *ctx, const struct estate *e)
{
    for (size_t hi = 0; hi < e->n_hosts; hi++) {
        const struct est_host *h = &e->hosts[hi];
        for (size_t bi = 0; bi < h->n_iscsi_hbas; bi++) {
            const struct est_iscsi_hba *b = &h->iscsi_hbas[bi];
            const struct est_option *o;
            int adapter, r = 0;

            if (!b->device)
                continue;
            o = find_option(b->options, b->n_options, "DelayedAck");
            adapter = o ? boolean(o->value) : EST_UNKNOWN;
            /* An unknown adapter value is not reported (never guessed); its inheriting
             * targets are then unknown too, but targets that set true themselves still are. */
            if (adapter == 1)
                r = report_adapter(ctx, h, b);
            for (size_t ti = 0; r == 0 && ti < b->n_targets; ti++) {
                int inherits;
                if (b->targets[ti].address && target_own(&b->targets[ti], &inherits) == 1)
                    r = report_target(ctx, h, b, ti, adapter);
            }
            if (r < 0)
                return r;
        }
    }
    return 0;
}

const struct check chk_iscsi_delayed_ack = {
    .id = "iscsi-delayed-ack",
    .title = "iSCSI delayed ACK is disabled",
    .severity = CHK_WARNING,
    .rationale =
        "Under network congestion, delayed ACK can push iSCSI read and write latency beyond "
        "acceptable levels; VMware and the array vendor recommend disabling it. The effective "
        "value is checked: an adapter with DelayedAck true is reported once (its inheriting "
        "targets are listed in the evidence as targets_inheriting, since fixing the adapter "
        "fixes them), and each target that sets DelayedAck true itself (isInherited false) is "
        "reported on its own, because changing the adapter does not change it. An adapter whose "
        "value is missing or unreadable is not reported.",
    .reference = "000_5bd48962a767ee9e.txt §3.4.2; VMware KB 1002598",
    .remediation =
        "Adapter: `esxcli iscsi adapter param set --adapter=vmhba64 --key=DelayedAck "
        "--value=false`. A send target that overrides it: `esxcli iscsi adapter discovery "
        "sendtarget param set --adapter=vmhba64 --address=10.0.0.20:3260 --key=DelayedAck "
        "--value=false`; a static target: `esxcli iscsi adapter target portal param set "
        "--adapter=vmhba64 --address=10.0.0.21:3260 --name=<target iqn> --key=DelayedAck "
        "--value=false` (or in the vSphere Client: Storage Adapters > the iSCSI adapter > "
        "Advanced Options / Targets > Advanced, clear DelayedAck). The change takes effect "
        "after the iSCSI sessions are re-established; KB 1002598 asks for a host reboot.",
    .params = NULL,
    .needs = CHK_NEEDS_HOST,
    .run = run,
};
