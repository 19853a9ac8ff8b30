/* The remediation plan (vslint plan, GET /api/v1/plan): findings whose fix is a host setting
 * become reviewed, idempotent script steps, grouped by host; the others become tasks. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks/check.h"
#include "checks/plan.h"
#include "util/buf.h"
#include "util/err.h"

#define PLAN_MAX (64u << 20) /* a plan larger than this is refused (-VSL_ETOOBIG) */

/* What a step sets; the order is the order of the steps on a host: the path policy before its
 * IOPS limit, a vSwitch's MTU before its vmknic's. */
enum kind {
    K_PSP,             /* a = device */
    K_IOPS,            /* a = device, n = IOPS limit */
    K_SATP_RULE,       /* a = SATP, b = vendor or NULL, c = model or NULL, n = IOPS limit */
    K_ISCSI_ADAPTER,   /* a = adapter: DelayedAck false */
    K_ISCSI_SEND,      /* a = adapter, b = address:port of a send target */
    K_ISCSI_STATIC,    /* a = adapter, b = address:port, c = target IQN */
    K_VSWITCH_MTU,     /* a = standard vSwitch, n = MTU */
    K_VMK_MTU,         /* a = vmknic, n = MTU */
    K_BLOCK_DELETE,    /* /VMFS3/EnableBlockDelete = 1 */
    K_RECLAIM,         /* a = VMFS volume label: reclaim priority low */
};

struct step {
    enum kind kind;
    const char *a, *b, *c; /* borrowed from the findings */
    int n;
    size_t host;      /* index into plan.hosts */
    size_t seq;       /* the order it was planned in, which breaks ties */
    json_t *findings; /* the findings it fixes (a new array of borrowed-then-increfed objects) */
};

struct host {
    const char *vcenter, *name; /* borrowed */
    size_t n_steps;
};

struct plan {
    const struct chk_plan_opts *o;
    struct vsl_buf out;
    int err; /* the first append that failed */
    struct host *hosts;
    size_t n_hosts;
    struct step *steps;
    size_t n_steps, cap_steps;
    json_t *tasks; /* findings for a person */
    size_t waived, unverified;
};

/* ---- output ---- */

static void put(struct plan *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct plan *p, const char *fmt, ...)
{
    char small[512], *s = small;
    va_list ap;
    int n;

    if (p->err)
        return;
    va_start(ap, fmt);
    n = vsnprintf(small, sizeof(small), fmt, ap);
    va_end(ap);
    if (n < 0) {
        p->err = -EINVAL;
        return;
    }
    if ((size_t)n >= sizeof(small)) {
        if (!(s = malloc((size_t)n + 1))) {
            p->err = -ENOMEM;
            return;
        }
        va_start(ap, fmt);
        vsnprintf(s, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    int r = vsl_buf_add(&p->out, s, (size_t)n);
    if (r < 0)
        p->err = r;
    if (s != small)
        free(s);
}

/* n bytes of s as they are. */
static void put_mem(struct plan *p, const char *s, size_t n)
{
    int r;

    if (p->err || n == 0)
        return;
    if ((r = vsl_buf_add(&p->out, s, n)) < 0)
        p->err = r;
}

/* Text from vCenter inside a comment: a control character (a newline would end the comment
 * and make the rest of a name a command) becomes a blank. */
static void put_comment_text(struct plan *p, const char *s)
{
    while (s && *s) {
        size_t n = 0;
        while (s[n] && (unsigned char)s[n] >= 0x20 && s[n] != 0x7f)
            n++;
        put_mem(p, s, n);
        s += n;
        if (*s) {
            put_mem(p, " ", 1);
            s++;
        }
    }
}

static int sh_safe(const char *s)
{
    return *s && s[strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                             "._:/=@%+,-")] == '\0';
}

/* A word for sh: as it is when it holds nothing the shell reads, else in single quotes (a
 * quote inside as '\''). */
static void put_sh(struct plan *p, const char *s)
{
    if (sh_safe(s)) {
        put_mem(p, s, strlen(s));
        return;
    }
    put_mem(p, "'", 1);
    for (const char *q; (q = strchr(s, '\'')); s = q + 1) {
        put_mem(p, s, (size_t)(q - s));
        put_mem(p, "'\\''", 4);
    }
    put_mem(p, s, strlen(s));
    put_mem(p, "'", 1);
}

/* Whether s starts with a character PowerShell takes for a single quote: ' and the
 * typographic ones, U+2018-U+201B (UTF-8 E2 80 98-9B); its length, else 0. */
static size_t ps_quote_at(const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    if (u[0] == '\'')
        return 1;
    return u[0] == 0xe2 && u[1] == 0x80 && u[2] >= 0x98 && u[2] <= 0x9b ? 3 : 0;
}

/* A PowerShell single-quoted string: every quote character doubled. */
static void put_ps(struct plan *p, const char *s)
{
    put_mem(p, "'", 1);
    while (*s) {
        size_t n = 0, q;
        while (s[n] && !ps_quote_at(s + n))
            n++;
        put_mem(p, s, n);
        s += n;
        if ((q = ps_quote_at(s))) {
            put_mem(p, s, q);
            put_mem(p, s, q);
            s += q;
        }
    }
    put_mem(p, "'", 1);
}

/* ---- reading the findings ---- */

static const char *str(json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

static int num(json_t *o, const char *key, int dflt)
{
    json_t *v = json_object_get(o, key);
    return json_is_integer(v) ? (int)json_integer_value(v) : dflt;
}

static const char *host_name(json_t *f)
{
    return str(json_object_get(f, "host"), "name");
}

static int same(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

static int host_index(struct plan *p, const char *vcenter, const char *name, size_t *out)
{
    for (size_t i = 0; i < p->n_hosts; i++)
        if (same(p->hosts[i].vcenter, vcenter) && !strcmp(p->hosts[i].name, name)) {
            *out = i;
            return 0;
        }
    struct host *h = realloc(p->hosts, (p->n_hosts + 1) * sizeof(*h));
    if (!h)
        return -ENOMEM;
    p->hosts = h;
    h[p->n_hosts] = (struct host){vcenter, name, 0};
    *out = p->n_hosts++;
    return 0;
}

/* Adds a step for finding f on host hname. The same setting planned twice on a host (two
 * vmknics on one vSwitch) becomes one step once the steps are sorted (merge_steps). */
static int add_step(struct plan *p, json_t *f, const char *hname, enum kind k, const char *a,
                    const char *b, const char *c, int n)
{
    size_t h;
    int r = host_index(p, str(f, "vcenter"), hname, &h);

    if (r < 0)
        return r;
    if (vsl_grow(&p->steps, &p->cap_steps, p->n_steps, sizeof(*p->steps), 64) < 0)
        return -ENOMEM;
    struct step *s = &p->steps[p->n_steps];
    *s = (struct step){k, a, b, c, n, h, p->n_steps, json_array()};
    if (!s->findings || json_array_append(s->findings, f) < 0) {
        json_decref(s->findings);
        return -ENOMEM;
    }
    p->n_steps++;
    return 0;
}

/* 1 when the finding was planned, 0 when it is a task, < 0 on error. */
static int plan_multipath(struct plan *p, json_t *f, json_t *ev, const char *h)
{
    const char *dev = str(ev, "device"), *psp = str(ev, "psp");
    int iops = num(ev, "recommended_iops", 1), r = 0;

    /* Latency-based Round Robin is accepted (the finding is info at most): switching it to an
     * IOPS limit would undo a supported choice, so it is a task for a person to read. */
    if (!dev || !strcmp(str(ev, "limit_type") ? str(ev, "limit_type") : "", "latency"))
        return 0;
    if (!psp || strcmp(psp, "VMW_PSP_RR") != 0)
        r = add_step(p, f, h, K_PSP, dev, NULL, NULL, 0);
    if (r == 0)
        r = add_step(p, f, h, K_IOPS, dev, NULL, NULL, iops);
    return r < 0 ? r : 1;
}

static int plan_satp(struct plan *p, json_t *f, json_t *ev, const char *h)
{
    const char *satp = str(ev, "satp"), *vendor = str(ev, "vendor");
    json_t *models = json_object_get(ev, "models"), *m;
    int iops = num(ev, "recommended_iops", 1);
    size_t i;

    if (!satp || !json_array_size(models))
        return 0;
    json_array_foreach(models, i, m)
    {
        const char *model = json_string_value(m);
        int r = add_step(p, f, h, K_SATP_RULE, satp, vendor && *vendor ? vendor : NULL,
                         model && *model ? model : NULL, iops);
        if (r < 0)
            return r;
    }
    return 1;
}

/* An adapter: its own value. A portal: each target's own value, the send target first, since
 * the static targets it found follow it (a step for one of them then finds it already false).
 * A static target without an IQN cannot be named to esxcli: the finding is a task. */
static int plan_delayed_ack(struct plan *p, json_t *f, json_t *ev, const char *h)
{
    const char *type = str(json_object_get(f, "object"), "type");
    const char *adapter = str(ev, "adapter"), *portal = str(ev, "target");
    json_t *targets = json_object_get(ev, "targets"), *t;
    size_t i;
    int r = 0;

    if (!adapter)
        return 0;
    if (type && !strcmp(type, "iscsi_hba"))
        return (r = add_step(p, f, h, K_ISCSI_ADAPTER, adapter, NULL, NULL, 0)) < 0 ? r : 1;
    if (!portal || !json_array_size(targets))
        return 0;
    json_array_foreach(targets, i, t)
    {
        const char *kind = str(t, "kind");
        if (!kind || (strcmp(kind, "send") && strcmp(kind, "static")))
            return 0;
        if (!strcmp(kind, "static") && !str(t, "iscsi_name"))
            return 0;
    }
    for (int pass = 0; pass < 2 && r == 0; pass++) {
        json_array_foreach(targets, i, t)
        {
            int send = !strcmp(str(t, "kind"), "send");
            if (send != (pass == 0))
                continue;
            r = send ? add_step(p, f, h, K_ISCSI_SEND, adapter, portal, NULL, 0)
                     : add_step(p, f, h, K_ISCSI_STATIC, adapter, portal, str(t, "iscsi_name"), 0);
            if (r < 0)
                break;
        }
    }
    return r < 0 ? r : 1;
}

/* The vSwitch first (it must carry the vmknic's frames), then the vmknic. A distributed
 * switch below the MTU is set in vCenter, not on a host: then the whole finding is a task,
 * because raising the vmknic first would drop its frames. */
static int plan_jumbo(struct plan *p, json_t *f, json_t *ev, const char *h)
{
    const char *vmk = str(ev, "vmknic"), *sw = str(ev, "switch_type"), *swname = str(ev, "switch_name");
    int want = num(ev, "required_mtu", 9000), mtu = num(ev, "vmknic_mtu", 0);
    int sw_mtu = num(ev, "switch_mtu", -1), r = 0;
    int target = mtu > want ? mtu : want;

    if (!vmk || !sw || !swname)
        return 0;
    if (!strcmp(sw, "dvs") && (sw_mtu < 0 || sw_mtu < target))
        return 0;
    if (strcmp(sw, "vswitch") != 0 && strcmp(sw, "dvs") != 0)
        return 0;
    if (!strcmp(sw, "vswitch"))
        r = add_step(p, f, h, K_VSWITCH_MTU, swname, NULL, NULL, target);
    if (r == 0 && json_is_true(json_object_get(ev, "vmknic_below_required")))
        r = add_step(p, f, h, K_VMK_MTU, vmk, NULL, NULL, want);
    return r < 0 ? r : 1;
}

/* A VMFS6 volume's reclaim priority is set from any one host that mounts it (the first named
 * in the evidence); a host's EnableBlockDelete on that host; a VM's hardware is a task. */
static int plan_reclaim(struct plan *p, json_t *f, json_t *ev, const char *h)
{
    const char *type = str(json_object_get(f, "object"), "type");
    int r;

    if (type && !strcmp(type, "host") && h)
        return (r = add_step(p, f, h, K_BLOCK_DELETE, NULL, NULL, NULL, 1)) < 0 ? r : 1;
    if (type && !strcmp(type, "datastore")) {
        const char *mounter = json_string_value(json_array_get(json_object_get(ev, "mounted_by"), 0));
        const char *label = str(json_object_get(f, "object"), "name");
        if (!mounter || !label)
            return 0;
        return (r = add_step(p, f, mounter, K_RECLAIM, label, NULL, NULL, 0)) < 0 ? r : 1;
    }
    return 0;
}

static const struct {
    const char *check;
    int (*plan)(struct plan *p, json_t *f, json_t *ev, const char *host);
} planners[] = {
    {"multipath-policy", plan_multipath},   {"satp-claim-rule", plan_satp},
    {"iscsi-delayed-ack", plan_delayed_ack}, {"iscsi-jumbo-frames", plan_jumbo},
    {"space-reclaim", plan_reclaim},
};

static int cmp_str(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "");
}

/* The same setting: host, kind and names; the number too, except for an MTU, where the larger
 * one is planned. */
static int same_setting(const struct step *a, const struct step *b)
{
    if (a->host != b->host || a->kind != b->kind || cmp_str(a->a, b->a) || cmp_str(a->b, b->b) ||
        cmp_str(a->c, b->c))
        return 0;
    return a->kind == K_VSWITCH_MTU || a->kind == K_VMK_MTU || a->n == b->n;
}

static int sort_steps(const void *x, const void *y)
{
    const struct step *a = x, *b = y;
    int c;

    if (a->host != b->host)
        return a->host < b->host ? -1 : 1;
    if (a->kind != b->kind)
        return a->kind < b->kind ? -1 : 1;
    if ((c = cmp_str(a->a, b->a)) || (c = cmp_str(a->b, b->b)) || (c = cmp_str(a->c, b->c)))
        return c;
    if (a->kind != K_VSWITCH_MTU && a->kind != K_VMK_MTU && a->n != b->n)
        return a->n < b->n ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Sorted steps that set the same thing become one, which fixes all their findings; then each
 * host's count of steps. */
static int merge_steps(struct plan *p)
{
    size_t kept = 0;

    for (size_t i = 0; i < p->n_steps; i++) {
        struct step *s = &p->steps[i], *last = kept ? &p->steps[kept - 1] : NULL;
        if (last && same_setting(last, s)) {
            if (s->n > last->n)
                last->n = s->n;
            int r = json_array_extend(last->findings, s->findings);
            json_decref(s->findings);
            if (r < 0) {
                /* Steps kept..i are merged or moved: only those after i own theirs. */
                for (size_t j = i + 1; j < p->n_steps; j++)
                    p->steps[kept++] = p->steps[j];
                p->n_steps = kept;
                return -ENOMEM;
            }
            continue;
        }
        p->steps[kept++] = *s;
    }
    p->n_steps = kept;
    for (size_t i = 0; i < p->n_steps; i++)
        p->hosts[p->steps[i].host].n_steps++;
    return 0;
}

static int host_cmp(const void *x, const void *y)
{
    const struct host *a = x, *b = y;
    int c = strcmp(a->vcenter ? a->vcenter : "", b->vcenter ? b->vcenter : "");
    return c ? c : strcmp(a->name, b->name);
}

/* Hosts by vCenter and name, the steps' indexes following them. */
static int sort_hosts(struct plan *p)
{
    struct host *sorted = malloc(p->n_hosts * sizeof(*sorted));

    if (!sorted)
        return -ENOMEM;
    memcpy(sorted, p->hosts, p->n_hosts * sizeof(*sorted));
    qsort(sorted, p->n_hosts, sizeof(*sorted), host_cmp);
    /* Where each host went (hosts are few: a host per step would be many comparisons). */
    size_t *to = malloc(p->n_hosts * sizeof(*to));
    if (!to) {
        free(sorted);
        return -ENOMEM;
    }
    for (size_t i = 0; i < p->n_hosts; i++)
        for (size_t j = 0; j < p->n_hosts; j++)
            if (!host_cmp(&p->hosts[i], &sorted[j]))
                to[i] = j;
    for (size_t i = 0; i < p->n_steps; i++)
        p->steps[i].host = to[p->steps[i].host];
    free(to);
    free(p->hosts);
    p->hosts = sorted;
    return 0;
}

static int read_findings(struct plan *p, json_t *findings)
{
    json_t *f;
    size_t i;

    json_array_foreach(findings, i, f)
    {
        const char *check = str(f, "check"), *status = str(f, "status"), *h = host_name(f);
        json_t *ev = json_object_get(f, "evidence");
        int r = 0;

        if (status && !strcmp(status, "resolved"))
            continue;
        if (status && !strcmp(status, "waived")) {
            p->waived++;
            continue;
        }
        if (json_is_object(json_object_get(f, "unverified"))) {
            p->unverified++;
            continue;
        }
        for (size_t k = 0; check && k < sizeof(planners) / sizeof(planners[0]); k++)
            if (!strcmp(check, planners[k].check) && json_is_object(ev) &&
                (h || !strcmp(check, "space-reclaim")))
                r = planners[k].plan(p, f, ev, h);
        if (r < 0)
            return r;
        if (r == 0 && json_array_append(p->tasks, f) < 0)
            return -ENOMEM;
    }
    if (p->n_hosts && sort_hosts(p) < 0)
        return -ENOMEM;
    if (p->n_steps)
        qsort(p->steps, p->n_steps, sizeof(*p->steps), sort_steps);
    return merge_steps(p);
}

/* ---- writing ---- */

static const char *reference(const char *check)
{
    const struct check *c = check ? chk_find(check) : NULL;
    return c ? c->reference : "(check no longer in the catalogue)";
}

/* The comment lines that say which findings a step fixes and where the practice comes from. */
static void put_why(struct plan *p, const struct step *s)
{
    json_t *f;
    size_t i;

    json_array_foreach(s->findings, i, f)
    {
        json_t *obj = json_object_get(f, "object");
        const char *fp = str(f, "fingerprint");
        put(p, "# Fixes %s finding %s on ", str(f, "check"), fp ? fp : "?");
        put_comment_text(p, str(obj, "type"));
        put(p, " ");
        put_comment_text(p, str(obj, "name"));
        put(p, " (%s)\n#   ", str(f, "severity") ? str(f, "severity") : "?");
        put_comment_text(p, str(f, "message"));
        put(p, "\n");
    }
    f = json_array_get(s->findings, 0);
    put(p, "#   Source: ");
    put_comment_text(p, reference(str(f, "check")));
    put(p, "\n");
}

/* One esxcli command as the scripts spell it: its namespace and verb, and its options (long
 * name, the short one where the seeds spell the command with it, and the value; a NULL value
 * is left out, a numeric one is a number to PowerShell). */
struct opt {
    const char *name, *short_name, *value;
    int numeric;
};

struct cmd {
    const char *ns; /* "storage nmp device" */
    const char *verb;
    struct opt opts[6];
    int short_names; /* spelt with the short names (the seeds' claim rule) */
};

/* How the current value is judged. */
enum test {
    T_EQ,       /* the fields read, joined by a blank, are want */
    T_AT_LEAST, /* the field read is a number at least want */
    T_NOT_NONE, /* the field read is set, and not "none" */
    T_RULE,     /* a record matches every selector (a claim rule) */
};

/* A step spelt out: what it does in words, the read of the current value (the record whose
 * fields are the selectors' values, its fields), the test, and the change. */
struct spelt {
    char what[512];
    struct cmd read, change;
    struct {
        const char *field, *value;
    } sel[5];
    const char *fields; /* blank-separated */
    enum test test;
    const char *want;
    char num[16]; /* s->n in decimal, for values and want */
    char iops_want[32], psp_option[32];
};

static void spell(const struct step *s, struct spelt *t)
{
    memset(t, 0, sizeof(*t));
    snprintf(t->num, sizeof(t->num), "%d", s->n);
    t->want = t->num;
    t->test = T_EQ;
    switch (s->kind) {
    case K_PSP:
        snprintf(t->what, sizeof(t->what), "%s: path selection policy VMW_PSP_RR", s->a);
        t->read = (struct cmd){"storage nmp device", "list", {{"device", 0, s->a, 0}}, 0};
        t->sel[0].field = "Device";
        t->sel[0].value = s->a;
        t->fields = "PathSelectionPolicy";
        t->want = "VMW_PSP_RR";
        t->change = (struct cmd){"storage nmp device", "set",
                                 {{"device", 0, s->a, 0}, {"psp", 0, "VMW_PSP_RR", 0}}, 0};
        break;
    case K_IOPS:
        snprintf(t->what, sizeof(t->what), "%s: Round Robin IOPS limit %d", s->a, s->n);
        snprintf(t->iops_want, sizeof(t->iops_want), "Iops %d", s->n);
        t->read = (struct cmd){"storage nmp psp roundrobin deviceconfig", "get",
                               {{"device", 0, s->a, 0}}, 0};
        t->fields = "LimitType IOOperationLimit";
        t->want = t->iops_want;
        t->change = (struct cmd){
            "storage nmp psp roundrobin deviceconfig",
            "set",
            {{"device", 0, s->a, 0}, {"type", 0, "iops", 0}, {"iops", 0, t->num, 1}},
            0};
        break;
    case K_SATP_RULE:
        snprintf(t->what, sizeof(t->what), "claim rule %s vendor %s model %s: VMW_PSP_RR iops=%d",
                 s->a, s->b ? s->b : "(any)", s->c ? s->c : "(any)", s->n);
        snprintf(t->psp_option, sizeof(t->psp_option), "iops=%d", s->n);
        t->read = (struct cmd){"storage nmp satp rule", "list", {{"satp", 0, s->a, 0}}, 0};
        t->test = T_RULE;
        t->sel[0].field = "RuleGroup";
        t->sel[0].value = "user";
        t->sel[1].field = "Vendor";
        t->sel[1].value = s->b ? s->b : "";
        t->sel[2].field = "Model";
        t->sel[2].value = s->c ? s->c : "";
        t->sel[3].field = "DefaultPSP";
        t->sel[3].value = "VMW_PSP_RR";
        t->sel[4].field = "PSPOptions";
        t->sel[4].value = t->psp_option;
        /* The seeds' own spelling (000 §3.3, 001): -s SATP -V vendor -M model -P -O. */
        t->change = (struct cmd){"storage nmp satp rule",
                                 "add",
                                 {{"satp", "-s", s->a, 0},
                                  {"vendor", "-V", s->b, 0},
                                  {"model", "-M", s->c, 0},
                                  {"psp", "-P", "VMW_PSP_RR", 0},
                                  {"psp-option", "-O", t->psp_option, 0}},
                                 1};
        break;
    case K_ISCSI_ADAPTER:
    case K_ISCSI_SEND:
    case K_ISCSI_STATIC: {
        const char *ns = s->kind == K_ISCSI_ADAPTER ? "iscsi adapter param"
                         : s->kind == K_ISCSI_SEND  ? "iscsi adapter discovery sendtarget param"
                                                    : "iscsi adapter target portal param";
        if (s->kind == K_ISCSI_ADAPTER)
            snprintf(t->what, sizeof(t->what), "%s: DelayedAck false", s->a);
        else if (s->kind == K_ISCSI_SEND)
            snprintf(t->what, sizeof(t->what), "%s send target %s: DelayedAck false", s->a, s->b);
        else
            snprintf(t->what, sizeof(t->what), "%s target %s %s: DelayedAck false", s->a, s->b,
                     s->c);
        t->read = (struct cmd){
            ns, "get", {{"adapter", 0, s->a, 0}, {"address", 0, s->b, 0}, {"name", 0, s->c, 0}}, 0};
        t->sel[0].field = "Name";
        t->sel[0].value = "DelayedAck";
        t->fields = "Current";
        t->want = "false";
        t->change = (struct cmd){ns,
                                 "set",
                                 {{"adapter", 0, s->a, 0},
                                  {"address", 0, s->b, 0},
                                  {"name", 0, s->c, 0},
                                  {"key", 0, "DelayedAck", 0},
                                  {"value", 0, "false", 0}},
                                 0};
        break;
    }
    case K_VSWITCH_MTU:
        snprintf(t->what, sizeof(t->what), "vSwitch %s: MTU at least %d", s->a, s->n);
        t->read = (struct cmd){"network vswitch standard", "list",
                               {{"vswitch-name", 0, s->a, 0}}, 0};
        t->sel[0].field = "Name";
        t->sel[0].value = s->a;
        t->fields = "MTU";
        t->test = T_AT_LEAST;
        t->change = (struct cmd){"network vswitch standard", "set",
                                 {{"vswitch-name", 0, s->a, 0}, {"mtu", 0, t->num, 1}}, 0};
        break;
    case K_VMK_MTU:
        snprintf(t->what, sizeof(t->what), "%s: MTU %d", s->a, s->n);
        t->read = (struct cmd){"network ip interface", "list", {{0}}, 0};
        t->sel[0].field = "Name";
        t->sel[0].value = s->a;
        t->fields = "MTU";
        t->change = (struct cmd){"network ip interface", "set",
                                 {{"interface-name", 0, s->a, 0}, {"mtu", 0, t->num, 1}}, 0};
        break;
    case K_BLOCK_DELETE:
        snprintf(t->what, sizeof(t->what), "/VMFS3/EnableBlockDelete = 1");
        t->read = (struct cmd){"system settings advanced", "list",
                               {{"option", 0, "/VMFS3/EnableBlockDelete", 0}}, 0};
        t->fields = "IntValue";
        t->change = (struct cmd){
            "system settings advanced",
            "set",
            {{"option", 0, "/VMFS3/EnableBlockDelete", 0}, {"int-value", 0, "1", 1}},
            0};
        break;
    case K_RECLAIM:
        snprintf(t->what, sizeof(t->what), "VMFS volume %s: space reclamation priority low",
                 s->a);
        t->read = (struct cmd){"storage vmfs reclaim config", "get",
                               {{"volume-label", 0, s->a, 0}}, 0};
        t->fields = "ReclaimPriority";
        t->test = T_NOT_NONE;
        t->change = (struct cmd){
            "storage vmfs reclaim config",
            "set",
            {{"volume-label", 0, s->a, 0}, {"reclaim-priority", 0, "low", 0}},
            0};
        break;
    }
}

/* A record selector for vsl_kv: FIELD=VALUE as one sh word. */
static void put_sel(struct plan *p, const char *field, const char *value)
{
    char sel[600];
    snprintf(sel, sizeof(sel), "%s=%s", field, value);
    put_sh(p, sel);
}

/* esxcli NS VERB --opt=value ... (or -s value ... in the seeds' spelling). */
static void esx_cmd(struct plan *p, const struct cmd *c, const char *global)
{
    put(p, "esxcli %s%s %s", global, c->ns, c->verb);
    for (size_t i = 0; i < sizeof(c->opts) / sizeof(c->opts[0]) && c->opts[i].name; i++) {
        const struct opt *o = &c->opts[i];
        if (!o->value)
            continue;
        if (c->short_names)
            put(p, " %s ", o->short_name);
        else
            put(p, " --%s=", o->name);
        put_sh(p, o->value);
    }
}

/* esxcli: `current=$(READ | FILTER)`, then `if TEST; then vsl_ok ...; else vsl_do ... CHANGE;
 * fi`. Every esxcli command stands on its own line. */
static void esx_step(struct plan *p, const struct step *s)
{
    struct spelt t;

    spell(s, &t);
    put(p, "current=$(");
    esx_cmd(p, &t.read, "--formatter=keyvalue ");
    if (t.test == T_RULE) {
        put(p, " | vsl_rule ");
        put_sh(p, t.sel[1].value);
        put(p, " ");
        put_sh(p, t.sel[2].value);
        put(p, " ");
        put_sh(p, t.sel[4].value);
    } else {
        put(p, " | vsl_kv ");
        if (t.sel[0].field)
            put_sel(p, t.sel[0].field, t.sel[0].value);
        else
            put(p, "''");
        put(p, " ");
        put_sh(p, t.fields);
    }
    put(p, ")\nif ");
    switch (t.test) {
    case T_EQ:
        put(p, "[ \"$current\" = ");
        put_sh(p, t.want);
        put(p, " ]");
        break;
    case T_AT_LEAST:
        put(p, "vsl_at_least \"$current\" %s", t.want);
        break;
    case T_NOT_NONE:
        put(p, "[ -n \"$current\" ] && [ \"$current\" != none ]");
        break;
    case T_RULE:
        put(p, "[ \"$current\" = found ]");
        break;
    }
    put(p, "; then\n    vsl_ok ");
    put_sh(p, t.what);
    put(p, " \"$current\"\nelse\n    vsl_do ");
    put_sh(p, t.what);
    put(p, " \"$current\" \\\n        ");
    esx_cmd(p, &t.change, "");
    put(p, "\nfi\n");
}

/* $esxcli.NS.VERB.Invoke(@{opt = value; ...}): Get-EsxCli -V2 names each argument by the
 * option's long name without dashes. */
static void ps_cmd(struct plan *p, const struct cmd *c)
{
    const char *sep = "";

    put(p, "$esxcli.");
    for (const char *n = c->ns; *n; n++)
        put(p, "%c", *n == ' ' ? '.' : *n);
    put(p, ".%s.Invoke(", c->verb);
    for (size_t i = 0; i < sizeof(c->opts) / sizeof(c->opts[0]) && c->opts[i].name; i++) {
        const struct opt *o = &c->opts[i];
        if (!o->value)
            continue;
        put(p, "%s", *sep ? sep : "@{");
        sep = "; ";
        for (const char *n = o->name; *n; n++)
            if (*n != '-')
                put(p, "%c", *n);
        put(p, " = ");
        if (o->numeric)
            put(p, "%s", o->value);
        else
            put_ps(p, o->value);
    }
    put(p, "%s)", *sep ? "}" : "");
}

/* PowerCLI: the same step through vCenter, in a try block that counts a failure. */
static void ps_step(struct plan *p, const struct step *s)
{
    struct spelt t;

    spell(s, &t);
    put(p, "    try {\n        $rec = @(");
    ps_cmd(p, &t.read);
    for (size_t i = 0; i < sizeof(t.sel) / sizeof(t.sel[0]) && t.sel[i].field; i++) {
        put(p, "%s$_.%s -eq ", i ? " -and " : " | Where-Object { ", t.sel[i].field);
        put_ps(p, t.sel[i].value);
    }
    put(p, "%s)\n", t.sel[0].field ? " }" : "");
    if (t.test == T_RULE) {
        put(p, "        $cur = '' + $rec.Count + ' matching rule(s)'\n"
               "        $right = $rec.Count -gt 0\n");
    } else {
        char fields[128];
        snprintf(fields, sizeof(fields), "%s", t.fields);
        put(p, "        $cur = ''");
        char *save = NULL;
        for (char *f = strtok_r(fields, " ", &save), *sep = ""; f;
             f = strtok_r(NULL, " ", &save), sep = " ") {
            if (*sep)
                put(p, " + ' '");
            put(p, " + $rec[0].%s", f);
        }
        put(p, "\n        $right = ");
        if (t.test == T_EQ) {
            put(p, "$cur -eq ");
            put_ps(p, t.want);
        } else if (t.test == T_AT_LEAST) {
            put(p, "$cur -match '^[0-9]+$' -and [int]$cur -ge %s", t.want);
        } else {
            put(p, "$cur -ne '' -and $cur -ne 'none'");
        }
        put(p, "\n");
    }
    put(p, "        if ($right) {\n            Write-Host ('  already right: ' + ");
    put_ps(p, t.what);
    put(p, " + ' (' + $cur + ')')\n            $ok++\n        } else {\n"
           "            Write-Host ('  changing: ' + ");
    put_ps(p, t.what);
    put(p, " + ' (was ' + $cur + ')')\n            $null = ");
    ps_cmd(p, &t.change);
    put(p, "\n            $changed++\n        }\n    } catch {\n"
           "        Write-Warning ('  FAILED: ' + ");
    put_ps(p, t.what);
    put(p, " + ': ' + $_)\n        $failed++\n    }\n");
}

/* "# ==== Host NAME (vCenter V): N step(s) ====", which the tests find sections by. */
static void put_host_title(struct plan *p, const struct host *ho)
{
    put(p, "\n# ==== Host ");
    put_comment_text(p, ho->name);
    put(p, " (vCenter ");
    put_comment_text(p, ho->vcenter);
    put(p, "): %zu step(s) ====\n", ho->n_steps);
}

/* A step's comment: its number, the findings it fixes and their source, and what a person
 * should know besides. */
static void put_step_title(struct plan *p, const struct step *s, size_t k, size_t n)
{
    put(p, "\n# Step %zu/%zu.\n", k, n);
    put_why(p, s);
    if (s->kind == K_VMK_MTU || s->kind == K_VSWITCH_MTU)
        put(p, "#   Jumbo frames must also be on every physical switch port and array port\n"
               "#   in the path; then check with: vmkping -I <vmk> -d -s 8972 <portal>\n");
    if (s->kind == K_SATP_RULE)
        put(p, "#   A claim rule applies to devices claimed after it is added.\n");
}

static void put_header(struct plan *p, const char *c)
{
    put(p, "%s vslint remediation plan (%s), generated %s%s", c,
        p->o->format == CHK_PLAN_ESXCLI ? "esxcli" : "PowerCLI",
        p->o->generated_at ? p->o->generated_at : "", p->o->scope ? " for " : "");
    put_comment_text(p, p->o->scope);
    put(p, ".\n%s\n%s vslint applies nothing itself: review every step before running it. Each step\n"
           "%s reads the current value first and changes only what is not yet right, so running\n"
           "%s the plan twice is safe. Steps: %zu on %zu host(s); tasks for a person: %zu.\n",
        c, c, c, c, p->n_steps, p->n_hosts, json_array_size(p->tasks));
    if (p->waived || p->unverified)
        put(p, "%s Not planned: %zu waived finding(s) and %zu unverified one(s) (the last poll\n"
               "%s could not read what they need; see docs/findings.md).\n",
            c, p->waived, p->unverified, c);
}

/* The tasks, as comments: the findings no host setting fixes. */
static void put_tasks(struct plan *p, const char *c)
{
    json_t *f;
    size_t i;

    put(p, "\n%s ==== Tasks for a person (%zu): no host setting fixes these ====\n", c,
        json_array_size(p->tasks));
    json_array_foreach(p->tasks, i, f)
    {
        json_t *obj = json_object_get(f, "object");
        const char *h = host_name(f);
        put(p, "%s %zu. [%s] %s: ", c, i + 1, str(f, "severity") ? str(f, "severity") : "?",
            str(f, "check") ? str(f, "check") : "?");
        put_comment_text(p, str(obj, "type"));
        put(p, " ");
        put_comment_text(p, str(obj, "name"));
        if (h && !same(str(obj, "type"), "host")) {
            put(p, " on host ");
            put_comment_text(p, h);
        }
        put(p, " (vCenter ");
        put_comment_text(p, str(f, "vcenter"));
        put(p, ", finding %s)\n%s    ", str(f, "fingerprint") ? str(f, "fingerprint") : "?", c);
        put_comment_text(p, str(f, "message"));
        put(p, "\n%s    Source: ", c);
        put_comment_text(p, reference(str(f, "check")));
        put(p, "\n");
    }
}

static const char esx_prelude[] =
    "#\n"
    "# Run it in each host's ESXi shell, naming the host as vCenter does, e.g.\n"
    "#   ssh root@esx01.example.com sh -s -- esx01.example.com < plan.sh\n"
    "# Without an argument it lists the hosts it has steps for. It refuses to run on a host\n"
    "# whose hostname is not the one named (VSLINT_PLAN_ANY_HOST=1 overrides that, for hosts\n"
    "# vCenter knows by address). Exit status: 0 every step right or done, 1 a step failed,\n"
    "# 2 a wrong host.\n"
    "\n"
    "vsl_changed=0 vsl_right=0 vsl_failed=0\n"
    "# esxcli's keyvalue output (STRUCT.FIELD.TYPE=VALUE, record after record): the fields\n"
    "# named by $2 of the first record whose FIELD=VALUE is $1 ('' for the first record).\n"
    "vsl_kv() { awk -v sel=\"$1\" -v want=\"$2\" '\n"
    "    function flush() {\n"
    "        if (have && !done && (sel == \"\" || r[sk] == sv)) {\n"
    "            out = \"\"; for (i = 1; i <= n; i++) out = out (i > 1 ? \" \" : \"\") r[w[i]]\n"
    "            print out; done = 1 }\n"
    "        split(\"\", r); have = 0 }\n"
    "    BEGIN { e = index(sel, \"=\"); sk = substr(sel, 1, e - 1); sv = substr(sel, e + 1)\n"
    "            n = split(want, w, \" \") }\n"
    "    { e = index($0, \"=\"); if (!e) next\n"
    "      k = substr($0, 1, e - 1); sub(/^[^.]*\\./, \"\", k); sub(/\\.[^.]*$/, \"\", k)\n"
    "      if (k in r) flush(); r[k] = substr($0, e + 1); have = 1 }\n"
    "    END { flush() }'; }\n"
    "# 'found' when a user claim rule of that keyvalue output has vendor $1 and model $2 ('' for\n"
    "# none), Round Robin, and the PSP options $3.\n"
    "vsl_rule() { awk -v v=\"$1\" -v m=\"$2\" -v o=\"$3\" '\n"
    "    function flush() {\n"
    "        if (r[\"RuleGroup\"] == \"user\" && r[\"Vendor\"] == v && r[\"Model\"] == m &&\n"
    "            r[\"DefaultPSP\"] == \"VMW_PSP_RR\" && r[\"PSPOptions\"] == o) f = 1\n"
    "        split(\"\", r) }\n"
    "    { e = index($0, \"=\"); if (!e) next\n"
    "      k = substr($0, 1, e - 1); sub(/^[^.]*\\./, \"\", k); sub(/\\.[^.]*$/, \"\", k)\n"
    "      if (k in r) flush(); r[k] = substr($0, e + 1) }\n"
    "    END { flush(); print (f ? \"found\" : \"missing\") }'; }\n"
    "vsl_at_least() { case $1 in ''|*[!0-9]*) return 1 ;; esac; [ \"$1\" -ge \"$2\" ]; }\n"
    "vsl_ok() { echo \"  already right: $1 ($2)\"; vsl_right=$((vsl_right + 1)); }\n"
    "vsl_do() {\n"
    "    what=$1 was=$2\n"
    "    shift 2\n"
    "    echo \"  changing: $what (was ${was:-unknown})\"\n"
    "    if \"$@\"; then\n"
    "        vsl_changed=$((vsl_changed + 1))\n"
    "    else\n"
    "        echo \"  FAILED: $what\" >&2\n"
    "        vsl_failed=$((vsl_failed + 1))\n"
    "    fi\n"
    "}\n"
    "vsl_is_host() {\n"
    "    [ \"${VSLINT_PLAN_ANY_HOST:-0}\" = 1 ] && return 0\n"
    "    me=$(hostname 2>/dev/null)\n"
    "    fqdn=$(hostname -f 2>/dev/null)\n"
    "    [ \"$1\" = \"$me\" ] || [ \"$1\" = \"$fqdn\" ] || [ \"${1%%.*}\" = \"$me\" ] && return 0\n"
    "    echo \"vslint plan: this is $me, not $1 (VSLINT_PLAN_ANY_HOST=1 runs it anyway)\" >&2\n"
    "    return 1\n"
    "}\n";

static void write_esxcli(struct plan *p)
{
    size_t si = 0;

    put(p, "#!/bin/sh\n");
    put_header(p, "#");
    put(p, "%s", esx_prelude);
    for (size_t h = 0; h < p->n_hosts; h++) {
        const struct host *ho = &p->hosts[h];
        put_host_title(p, ho);
        put(p, "vsl_host_%zu() {\n", h + 1);
        char title[600];
        snprintf(title, sizeof(title), "%s: %zu step(s)", ho->name, ho->n_steps);
        put(p, "echo ");
        put_sh(p, title);
        put(p, "\n");
        for (size_t k = 1; si < p->n_steps && p->steps[si].host == h; si++, k++) {
            put_step_title(p, &p->steps[si], k, ho->n_steps);
            esx_step(p, &p->steps[si]);
        }
        put(p, "}\n");
    }
    put(p, "\ncase \"${1:-}\" in\n");
    for (size_t h = 0; h < p->n_hosts; h++) {
        char both[1024];
        snprintf(both, sizeof(both), "%s/%s", p->hosts[h].vcenter ? p->hosts[h].vcenter : "",
                 p->hosts[h].name);
        put(p, "    ");
        put_sh(p, both);
        put(p, " | ");
        put_sh(p, p->hosts[h].name);
        put(p, ")\n        vsl_is_host ");
        put_sh(p, p->hosts[h].name);
        put(p, " || exit 2\n        vsl_host_%zu ;;\n", h + 1);
    }
    put(p, "    '')\n        echo 'vslint plan: name the host to run on; hosts with steps:'\n");
    for (size_t h = 0; h < p->n_hosts; h++) {
        put(p, "        echo ");
        put_sh(p, p->hosts[h].name);
        put(p, "\n");
    }
    put(p, "        exit 0 ;;\n    *)\n        echo \"vslint plan: no steps for host $1\"\n"
           "        exit 0 ;;\nesac\n"
           "echo \"vslint plan: $vsl_changed changed, $vsl_right already right, $vsl_failed failed\"\n"
           "[ \"$vsl_failed\" -eq 0 ] || exit 1\n");
    put_tasks(p, "#");
}

static void write_powercli(struct plan *p)
{
    size_t si = 0;

    put_header(p, "#");
    put(p, "#\n# Run it in PowerShell with VMware PowerCLI, connected to the vCenter:\n"
           "#   Connect-VIServer vcenter.example.com; ./plan.ps1\n"
           "# Exit status: 0 every step right or done, 1 a step or a host failed.\n\n"
           "$ErrorActionPreference = 'Stop'\n$changed = 0\n$ok = 0\n$failed = 0\n");
    for (size_t h = 0; h < p->n_hosts; h++) {
        const struct host *ho = &p->hosts[h];
        put_host_title(p, ho);
        put(p, "$vmhost = Get-VMHost -Name ");
        put_ps(p, ho->name);
        put(p, " -ErrorAction SilentlyContinue\nif (-not $vmhost) {\n    Write-Warning ('no host ' + ");
        put_ps(p, ho->name);
        put(p, " + ' in this vCenter: %zu step(s) skipped')\n    $failed++\n} else {\n"
               "    Write-Host (",
            ho->n_steps);
        put_ps(p, ho->name);
        put(p, " + ': %zu step(s)')\n    $esxcli = Get-EsxCli -VMHost $vmhost -V2\n", ho->n_steps);
        for (size_t k = 1; si < p->n_steps && p->steps[si].host == h; si++, k++) {
            put_step_title(p, &p->steps[si], k, ho->n_steps);
            ps_step(p, &p->steps[si]);
        }
        put(p, "}\n");
    }
    put(p, "\nWrite-Host ('vslint plan: ' + $changed + ' changed, ' + $ok + ' already right, ' + "
           "$failed + ' failed')\nif ($failed -gt 0) { exit 1 }\n");
    put_tasks(p, "#");
}

int chk_plan_format_parse(const char *s, enum chk_plan_format *out)
{
    if (s && !strcmp(s, "esxcli"))
        *out = CHK_PLAN_ESXCLI;
    else if (s && !strcmp(s, "powercli"))
        *out = CHK_PLAN_POWERCLI;
    else
        return -EINVAL;
    return 0;
}

int chk_plan(json_t *findings, const struct chk_plan_opts *o, char **out, size_t *len)
{
    struct plan p = {.o = o, .tasks = json_array()};
    int r;

    *out = NULL;
    *len = 0;
    vsl_buf_init(&p.out, PLAN_MAX);
    r = p.tasks ? read_findings(&p, findings) : -ENOMEM;
    if (r == 0) {
        if (o->format == CHK_PLAN_ESXCLI)
            write_esxcli(&p);
        else
            write_powercli(&p);
        r = p.err;
    }
    if (r == 0) {
        *len = p.out.len;
        if (!(*out = vsl_buf_take(&p.out)))
            r = -ENOMEM;
    }
    for (size_t i = 0; i < p.n_steps; i++)
        json_decref(p.steps[i].findings);
    free(p.steps);
    free(p.hosts);
    json_decref(p.tasks);
    vsl_buf_free(&p.out);
    return r;
}
