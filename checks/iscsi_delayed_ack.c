/* iscsi-delayed-ack: DelayedAck is off on every iSCSI adapter and on every target, as each
 * target's effective value has it (000 §3.4.2, VMware KB 1002598): its own, else its send
 * target's (a static target found by a send target inherits from it), else its adapter's. */
#include <stdio.h>
#include <string.h>

#include "checks/check.h"
#include "util/parse.h"

/* Static targets named in one message; the evidence names them all. */
#define MSG_TARGETS 8

/* A target's own DelayedAck: 1/0 when it sets one itself, EST_UNKNOWN when it inherits (or
 * when its own value cannot be read). *inherits says which. */
static int target_own(const struct est_iscsi_target *t, int *inherits)
{
    const struct est_option *o = est_option(t->options, t->n_options, "DelayedAck");

    /* No option at all: ESXi shows every parameter per target, so this only happens when the
     * inventory lacks it; vSphere's default for a target is to inherit. */
    *inherits = !o || o->inherited;
    if (*inherits)
        return EST_UNKNOWN;
    return vsl_parse_bool(o->value, EST_UNKNOWN);
}

/* Where a target's effective value comes from. */
enum source { OWN, SEND_TARGET, ADAPTER };

static int is_static(const struct est_iscsi_target *t)
{
    return t->kind && !strcmp(t->kind, "static");
}

/* The send target a static target was found by, or NULL. */
static const struct est_iscsi_target *send_target_of(const struct est_iscsi_hba *b,
                                                     const struct est_iscsi_target *t)
{
    const struct est_iscsi_target *s;

    if (!is_static(t) || t->send_target >= b->n_targets)
        return NULL;
    s = &b->targets[t->send_target];
    return s != t && s->kind && !strcmp(s->kind, "send") ? s : NULL;
}

/* A target's effective DelayedAck (1, 0, EST_UNKNOWN) and where it comes from: its own value,
 * else (a static target found by a send target) that send target's own value, else the
 * adapter's. A send target's values are what the targets it finds inherit, not the adapter's:
 * changing the adapter does not change them. */
static int effective(const struct est_iscsi_hba *b, const struct est_iscsi_target *t, int adapter,
                     enum source *src)
{
    const struct est_iscsi_target *s = send_target_of(b, t);
    int inherits, v = target_own(t, &inherits);

    *src = OWN;
    if (!inherits)
        return v;
    if (s) {
        v = target_own(s, &inherits);
        *src = SEND_TARGET;
        if (!inherits)
            return v;
    }
    *src = ADAPTER;
    return adapter;
}

/* The command that turns DelayedAck off on one target itself. */
static void target_command(const struct est_iscsi_hba *b, const struct est_iscsi_target *t,
                           char *out, size_t size)
{
    if (is_static(t))
        snprintf(out, size,
                 "esxcli iscsi adapter target portal param set --adapter=%s --address=%s:%d "
                 "--name=%s --key=DelayedAck --value=false",
                 b->device, t->address, t->port, t->iscsi_name ? t->iscsi_name : "<target iqn>");
    else
        snprintf(out, size,
                 "esxcli iscsi adapter discovery sendtarget param set --adapter=%s "
                 "--address=%s:%d --key=DelayedAck --value=false",
                 b->device, t->address, t->port);
}

static int report_adapter(struct chk_ctx *ctx, const struct est_host *h,
                          const struct est_iscsi_hba *b)
{
    char name[256], msg[768], cmd[256];
    json_t *inheriting = json_array(), *detail = json_array(), *ev;

    /* The targets that follow the adapter, whose fix this is: not the ones that set their own
     * value, nor those found by a send target that does. */
    for (size_t i = 0; i < b->n_targets; i++) {
        const struct est_iscsi_target *t = &b->targets[i];
        char a[300];
        enum source src;
        (void)effective(b, t, 1, &src);
        if (src != ADAPTER || !t->address)
            continue;
        snprintf(a, sizeof(a), "%s:%d", t->address, t->port);
        inheriting = chk_ev_append(inheriting, json_string(a));
        detail = chk_ev_append(detail, json_pack("{s:s?, s:s, s:s?}", "kind", t->kind, "target",
                                                 a, "iscsi_name", t->iscsi_name));
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
    ev = json_pack("{s:s, s:s, s:b, s:b, s:o, s:o, s:s}", "host", h->name, "adapter", b->device,
                   "delayed_ack", 1, "recommended", 0, "targets_inheriting", inheriting,
                   "inheriting", detail, "command", cmd);
    return chk_emit_part(ctx, h, "iscsi_hba", b->device, b->device, SEV_WARNING, msg, ev);
}

/* Whether target t is true by its own doing or its send target's (the adapter's value is the
 * adapter finding's), *src saying which. */
static int true_here(const struct est_iscsi_hba *b, const struct est_iscsi_target *t, int adapter,
                     enum source *src)
{
    return t->address && effective(b, t, adapter, src) == 1 && *src != ADAPTER;
}

static int same_portal(const struct est_iscsi_target *a, const struct est_iscsi_target *b)
{
    return a->address && b->address && !strcmp(a->address, b->address) && a->port == b->port;
}

/* One finding per (adapter, address:port): an array that presents one IQN per volume has many
 * static targets on one portal, often with the send target that found them, so they are
 * reported together, each named with its own command, under the portal's stable detail. */
static int report_portal(struct chk_ctx *ctx, const struct est_host *h,
                         const struct est_iscsi_hba *b, size_t ti, int adapter_value)
{
    const struct est_iscsi_target *t = &b->targets[ti];
    char portal[300], name[600], target[400], detail[400], msg[2048], cmd[700], iqns[1024] = "";
    json_t *kinds = json_array(), *targets = json_array(), *cmds = json_array(), *ev;
    const struct est_iscsi_target *send = NULL;
    size_t n = 0, n_static = 0, n_named = 0, len = 0;
    int inherited = 0;
    enum source src;

    for (size_t i = 0; i < ti; i++)
        if (same_portal(&b->targets[i], t) && true_here(b, &b->targets[i], adapter_value, &src)) {
            json_decref(kinds);
            json_decref(targets);
            json_decref(cmds);
            return 0; /* reported with the earlier target */
        }
    for (size_t i = ti; i < b->n_targets; i++) {
        const struct est_iscsi_target *p = &b->targets[i];
        char from[320] = "own";
        if (!same_portal(p, t) || !true_here(b, p, adapter_value, &src))
            continue;
        if (src == SEND_TARGET) {
            const struct est_iscsi_target *s = send_target_of(b, p);
            inherited = 1;
            snprintf(from, sizeof(from), "send target %s:%d", s->address ? s->address : "?",
                     s->port);
        }
        target_command(b, p, cmd, sizeof(cmd));
        kinds = chk_ev_append(kinds, json_string(p->kind ? p->kind : "?"));
        cmds = chk_ev_append(cmds, json_string(cmd));
        targets = chk_ev_append(targets, json_pack("{s:s?, s:s?, s:s, s:s}", "kind", p->kind,
                                                   "iscsi_name", p->iscsi_name, "delayed_ack_from",
                                                   from, "command", cmd));
        if (!is_static(p) && !send)
            send = p;
        if (is_static(p) && n_named++ < MSG_TARGETS && len < sizeof(iqns)) {
            snprintf(iqns + len, sizeof(iqns) - len, "%s%s", n_static ? ", " : "",
                     p->iscsi_name ? p->iscsi_name : "<no iqn>");
            len += strlen(iqns + len);
        }
        n_static += is_static(p);
        n++;
    }
    if (n_static > MSG_TARGETS && len < sizeof(iqns))
        snprintf(iqns + len, sizeof(iqns) - len, " and %zu more", n_static - MSG_TARGETS);

    snprintf(portal, sizeof(portal), "%s:%d", t->address, t->port);
    snprintf(name, sizeof(name), "%s %s %s", h->name, b->device, portal);
    snprintf(target, sizeof(target), "%s %s", b->device, portal);
    snprintf(detail, sizeof(detail), "%s/%s", b->device, portal);
    /* The first command fixes the most: the send target's, which the targets it found follow. */
    target_command(b, send ? send : t, cmd, sizeof(cmd));
    if (n == 1 && !inherited)
        snprintf(msg, sizeof(msg),
                 "%s (%s target) sets DelayedAck to true itself, not inherited from the adapter; "
                 "VMware (KB 1002598) and the array vendor recommend disabling it: %s",
                 name, is_static(t) ? "static" : "send", cmd);
    else if (n == 1) {
        /* True through a send target on another portal: the send target is the fix. */
        const struct est_iscsi_target *s = send_target_of(b, t);
        char scmd[700];
        target_command(b, s, scmd, sizeof(scmd));
        snprintf(msg, sizeof(msg),
                 "%s (static target %s) inherits DelayedAck true from the send target %s:%d that "
                 "found it, not from the adapter; VMware (KB 1002598) and the array vendor "
                 "recommend disabling it: %s (or on this target alone: %s)",
                 name, t->iscsi_name ? t->iscsi_name : "<no iqn>", s->address ? s->address : "?",
                 s->port, scmd, cmd);
    } else
        snprintf(msg, sizeof(msg),
                 "%s has DelayedAck true on %zu targets%s, static target(s) %s (set on them or "
                 "inherited from the send target that found them); VMware (KB 1002598) and the "
                 "array vendor recommend disabling it: %s (each target's own command is in the "
                 "evidence)",
                 name, n, send ? ": the send target sets it itself" : "", iqns, cmd);
    ev = json_pack("{s:s, s:s, s:s, s:o, s:b, s:b, s:b, s:s, s:o, s:o, s:o, s:s*}", "host",
                   h->name, "adapter", b->device, "target", portal, "kinds", kinds, "delayed_ack",
                   1, "inherited", inherited, "recommended", 0, "command", cmd, "targets", targets,
                   "commands", cmds, "adapter_delayed_ack",
                   adapter_value == EST_UNKNOWN ? json_null() : json_boolean(adapter_value),
                   "iscsi_name", n == 1 ? t->iscsi_name : NULL);
    return chk_emit_part(ctx, h, "iscsi_target", target, detail, SEV_WARNING, msg, ev);
}

static int run(struct chk_ctx *ctx, const struct estate *e)
{
    for (size_t hi = 0; hi < e->n_hosts; hi++) {
        const struct est_host *h = &e->hosts[hi];
        for (size_t bi = 0; bi < h->n_iscsi_hbas; bi++) {
            const struct est_iscsi_hba *b = &h->iscsi_hbas[bi];
            const struct est_option *o;
            int adapter, r = 0;
            enum source src;

            if (!b->device)
                continue;
            o = est_option(b->options, b->n_options, "DelayedAck");
            adapter = o ? vsl_parse_bool(o->value, EST_UNKNOWN) : EST_UNKNOWN;
            /* An unknown adapter value is not reported (never guessed); the targets that
             * follow it are then unknown too, but targets true by their own value or their
             * send target's still are. */
            if (adapter == 1)
                r = report_adapter(ctx, h, b);
            for (size_t ti = 0; r == 0 && ti < b->n_targets; ti++)
                if (true_here(b, &b->targets[ti], adapter, &src))
                    r = report_portal(ctx, h, b, ti, adapter);
            if (r < 0)
                return r;
        }
    }
    return 0;
}

/* The seeds' words this check rests on, verbatim (tests/unit/test_registry.c). */
static const struct chk_source sources[] = {
    {"000_5bd48962a767ee9e.txt", "§3.4.2",
     "In some environments, periods of high network congestion can cause iSCSI transfer latency to "
     "exceed acceptable levels. To avoid this, VMware recommends disabling delayed ACK following "
     "the steps provided in the VMware Knowledge Base article: ESX/ESXi hosts might experience "
     "read or write performance issues with certain storage arrays."},
    {0},
};

const struct check chk_iscsi_delayed_ack = {
    .id = "iscsi-delayed-ack",
    .title = "iSCSI delayed ACK is disabled",
    .severity = SEV_WARNING,
    .rationale =
        "Under network congestion, delayed ACK can push iSCSI read and write latency beyond "
        "acceptable levels; VMware and the array vendor recommend disabling it. Each target's "
        "effective value is checked: its own (isInherited false), else, for a static target "
        "found by a send target, that send target's, else the adapter's. An adapter with "
        "DelayedAck true is reported once (the targets that follow it are listed in the "
        "evidence, since fixing the adapter fixes them). Targets true by their own value or "
        "their send target's are reported once per adapter and portal (address:port), because "
        "changing the adapter does not change them; an array that presents one IQN per volume "
        "on one portal has every IQN named, each with its own command. An adapter whose value "
        "is missing or unreadable is not reported, nor are the targets that follow it.",
    .reference = "000_5bd48962a767ee9e.txt §3.4.2; VMware KB 1002598",
    .sources = sources,
    .own =
        "The warning severity is vslint's. The seed speaks of the host; vslint judges each "
        "target's effective value (its own, its send target's, else the adapter's), because a "
        "target that overrides the adapter keeps delayed ACK on whatever the adapter says.",
    .remediation =
        "Adapter: `esxcli iscsi adapter param set --adapter=vmhba64 --key=DelayedAck "
        "--value=false`. A send target that overrides it (the static targets it found follow "
        "it): `esxcli iscsi adapter discovery sendtarget param set --adapter=vmhba64 "
        "--address=10.0.0.20:3260 --key=DelayedAck --value=false`; a static target: `esxcli "
        "iscsi adapter target portal param set --adapter=vmhba64 --address=10.0.0.21:3260 "
        "--name=<target iqn> --key=DelayedAck --value=false` (or in the vSphere Client: Storage "
        "Adapters > the iSCSI adapter > Advanced Options / Targets > Advanced, clear "
        "DelayedAck). The change takes effect after the iSCSI sessions are re-established; KB "
        "1002598 asks for a host reboot.",
    .params = NULL,
    .needs = CHK_NEEDS_HOST,
    .run = run,
};
