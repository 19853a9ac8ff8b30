/* satp-claim-rule: a host with SAN LUNs has a SATP claim rule that gives the LUNs of each array
 * it sees Round Robin with an IOPS limit of 1, so LUNs presented later come up right (000 §3.3,
 * 001). One finding per (host, SATP, vendor). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks/check.h"

static const struct chk_param params[] = {
    {"iops", 1, 1, 1000, "I/Os",
     "largest acceptable IOPS limit in the claim rule's PSP options (as multipath-policy)"},
    {0},
};

#define FIELD    128 /* a trimmed vendor or model; inquiry data is 8 and 16 characters */
#define MAX_LUNS 25  /* uncovered LUNs named in the evidence; the rest are counted */

/* One SAN LUN of the host being checked, with its vendor and model trimmed and what its
 * paths' adapters say about it. */
struct lun_ref {
    const struct est_lun *l;
    char vendor[FIELD], model[FIELD];
    const char *transport; /* est_hba_kind's, the same through every path; NULL unknown */
    const struct est_host *h;
};

/* The value of "name=" in a rule's PSP options, "iops=1" or "policy=iops,iops=1" (fields
 * separated by commas, semicolons or blanks), copied into out; 0 if found, -1 if not. */
static int option(const char *opts, const char *name, char *out, size_t size)
{
    size_t len = strlen(name);

    for (const char *p = opts; p && *p;) {
        size_t n = strcspn(p, ",; {}");
        if (n > len && !strncmp(p, name, len) && p[len] == '=') {
            size_t v = n - len - 1;
            if (v >= size)
                v = size - 1;
            memcpy(out, p + len + 1, v);
            out[v] = '\0';
            return 0;
        }
        p += n;
        p += strspn(p, ",; {}");
    }
    return -1;
}

/* Round Robin's own IOPS limit, which a rule without "iops=" leaves devices at. */
#define RR_DEFAULT_IOPS 1000

/* Whether the rule's PSP is Round Robin switching paths every `want` I/Os or fewer, or by
 * latency (ESXi 6.7 U1+, "policy=latency": every path used by its measured latency, which
 * multipath-policy accepts too). A rule that switches by bytes does not; one that sets no
 * IOPS limit gives the default. */
static int gives_rr(const struct est_satp_rule *r, int want)
{
    char v[32];
    char *end;
    long n = RR_DEFAULT_IOPS;

    if (!r->psp || strcmp(r->psp, "VMW_PSP_RR") != 0)
        return 0;
    if (option(r->psp_options, "policy", v, sizeof(v)) == 0) {
        if (!strcmp(v, "latency"))
            return 1;
        if (strcmp(v, "iops") != 0 && strcmp(v, "rr") != 0)
            return 0;
    }
    if (option(r->psp_options, "iops", v, sizeof(v)) == 0) {
        errno = 0;
        n = strtol(v, &end, 10);
        if (errno || end == v || *end != '\0')
            return 0;
    }
    return n >= 1 && n <= want;
}

/* A rule's model against a LUN's: equal, or, where the rule writes it as ESXi's own rules do
 * ("^1742*"), a prefix. */
static int model_matches(const char *pattern, const char *model)
{
    char p[FIELD];
    size_t n;

    est_trimmed(pattern, p, sizeof(p));
    const char *s = p[0] == '^' ? p + 1 : p;
    n = strlen(s);
    if (n > 0 && s[n - 1] == '*')
        return !strncmp(s, model, n - 1);
    return !strcmp(s, model);
}

/* Whether a rule applies to a LUN: yes, no, or cannot be told from what vCenter reports (a
 * driver or transport of adapters it does not list, a claim option vslint does not know). */
enum fit { NO = 0, YES, MAYBE };

static enum fit both(enum fit a, enum fit b)
{
    return a == NO || b == NO ? NO : a == MAYBE || b == MAYBE ? MAYBE : YES;
}

/* A driver-scoped rule takes in devices behind adapters of that driver: every path's. */
static enum fit driver_fits(const char *driver, const struct lun_ref *lr)
{
    size_t same = 0, other = 0;

    for (size_t i = 0; i < lr->l->n_paths; i++) {
        const struct est_hba *a = est_path_hba(lr->h, &lr->l->paths[i]);
        if (a && a->driver && !strcmp(a->driver, driver))
            same++;
        else if (a && a->driver)
            other++;
    }
    if (lr->l->n_paths > 0 && same == lr->l->n_paths)
        return YES;
    return same == 0 && other == lr->l->n_paths && other > 0 ? NO : MAYBE;
}

/* A transport-scoped rule: the LUN's transport comes from its adapters' types (est_hba_kind).
 * ESXi may call an independent hardware iSCSI adapter's transport "iscsivendor", which the
 * adapter's type does not tell apart from "iscsi". */
static enum fit transport_fits(const char *transport, const struct lun_ref *lr)
{
    if (!lr->transport)
        return MAYBE;
    if (!strcmp(lr->transport, "iscsi") && !strcmp(transport, "iscsivendor"))
        return MAYBE;
    return !strcmp(transport, lr->transport) ? YES : NO;
}

/* Claim options: tpgs_on takes in devices that support ALUA (target port groups), which is
 * what an ALUA SATP (VMW_SATP_ALUA, VMW_SATP_ALUA_CX) claims; tpgs_off the others. */
static enum fit claim_fits(const char *options, const struct lun_ref *lr)
{
    char o[FIELD];
    int alua = !strncmp(lr->l->satp, "VMW_SATP_ALUA", strlen("VMW_SATP_ALUA"));

    est_trimmed(options, o, sizeof(o));
    if (!o[0])
        return YES;
    if (!strcmp(o, "tpgs_on"))
        return alua ? YES : NO;
    if (!strcmp(o, "tpgs_off"))
        return alua ? NO : YES;
    return MAYBE;
}

/* Whether the rule's scope (device, driver, transport, claim options) takes in the LUN. */
static enum fit scope_fits(const struct est_satp_rule *r, const struct lun_ref *lr)
{
    enum fit f = YES;

    if (r->device && strcmp(r->device, lr->l->canonical_name) != 0)
        return NO;
    if (r->driver)
        f = both(f, driver_fits(r->driver, lr));
    if (r->transport)
        f = both(f, transport_fits(r->transport, lr));
    if (r->claim_options)
        f = both(f, claim_fits(r->claim_options, lr));
    return f;
}

/* Whether the rule names the LUN's SATP, and its vendor and model, if any. */
static int rule_names(const struct est_satp_rule *r, const struct lun_ref *lr)
{
    char vendor[FIELD];

    if (!r->satp || strcmp(r->satp, lr->l->satp) != 0)
        return 0;
    est_trimmed(r->vendor, vendor, sizeof(vendor));
    if (vendor[0] && strcmp(vendor, lr->vendor) != 0)
        return 0;
    return !r->model || model_matches(r->model, lr->model);
}

static enum fit rule_applies(const struct est_satp_rule *r, const struct lun_ref *lr)
{
    return rule_names(r, lr) ? scope_fits(r, lr) : NO;
}

/* YES when a rule that applies gives Round Robin with the limit; MAYBE when only rules whose
 * scope cannot be told would: such a LUN is not reported, neither is it counted covered. */
static enum fit covered(const struct est_host *h, const struct lun_ref *lr, int want)
{
    enum fit best = NO;

    for (size_t i = 0; i < h->n_satp_rules; i++) {
        /* A rule naming a vendor's own PSP (NIMBLE_PSP_DIRECTED, DELL_PSP_EQL_ROUTED) hands the
         * devices to that vendor's multipathing, as it supports: advising a Round Robin rule
         * for them would override it. Such a rule covers the LUNs it applies to. */
        if (!gives_rr(&h->satp_rules[i], want) && !est_psp_is_vendor(h->satp_rules[i].psp))
            continue;
        enum fit f = rule_applies(&h->satp_rules[i], lr);
        if (f == YES)
            return YES;
        if (f == MAYBE)
            best = MAYBE;
    }
    return best;
}

/* The transport of a LUN: the same one through every path, else NULL. */
static const char *lun_transport(const struct est_host *h, const struct est_lun *l)
{
    const char *t = NULL;

    for (size_t i = 0; i < l->n_paths; i++) {
        const char *p = est_hba_kind(est_path_hba(h, &l->paths[i])).transport;
        if (!p || (t && strcmp(t, p) != 0))
            return NULL;
        t = p;
    }
    return t;
}

/* What a rule's scope restricts it to, in words: "device naa.6006...", "driver lpfc, transport
 * fc"; "" when it has none. */
static void scope_text(const struct est_satp_rule *r, char *out, size_t size)
{
    const char *names[] = {"device", "driver", "transport", "claim option"};
    const char *vals[] = {r->device, r->driver, r->transport, r->claim_options};
    size_t len = 0;

    out[0] = '\0';
    for (size_t i = 0; i < 4 && len < size; i++) {
        if (!vals[i] || !vals[i][0])
            continue;
        snprintf(out + len, size - len, "%s%s %s", len ? ", " : "", names[i], vals[i]);
        len += strlen(out + len);
    }
}

/* Eligible LUNs sort by SATP, then vendor: each (SATP, vendor) is one run. */
static int ref_cmp(const void *a, const void *b)
{
    const struct lun_ref *x = a, *y = b;
    int c = strcmp(x->l->satp, y->l->satp);
    if (c == 0)
        c = strcmp(x->vendor, y->vendor);
    if (c == 0)
        c = strcmp(x->l->canonical_name, y->l->canonical_name);
    return c;
}

/* The rule to add for one uncovered model: the same command multipath-policy gives for a LUN
 * of that SATP, vendor and model, so following either check satisfies both. */
static json_t *command(const char *satp, const char *vendor, const char *model, int want)
{
    char buf[512], v[FIELD + 8] = "", m[FIELD + 8] = "";

    if (vendor[0])
        snprintf(v, sizeof(v), " -V \"%s\"", vendor);
    if (model[0])
        snprintf(m, sizeof(m), " -M \"%s\"", model);
    snprintf(buf, sizeof(buf),
             "esxcli storage nmp satp rule add -s \"%s\"%s%s -P \"VMW_PSP_RR\" -O \"iops=%d\"",
             satp, v, m, want);
    return json_string(buf);
}

static json_t *rule_json(const struct est_satp_rule *r)
{
    return json_pack("{s:s?, s:s?, s:s?, s:s?, s:s?, s:s?, s:s?, s:s?, s:s?, s:s?}", "satp",
                     r->satp, "vendor", r->vendor, "model", r->model, "psp", r->psp, "psp_options",
                     r->psp_options, "rule_group", r->rule_group, "device", r->device, "driver",
                     r->driver, "transport", r->transport, "claim_options", r->claim_options);
}

/* Whether a device-scoped rule is about one of refs[0..n) (a rule for a device of another
 * array says nothing about these LUNs); a rule without a device is. */
static int names_one_of(const struct est_satp_rule *r, const struct lun_ref *refs, size_t n)
{
    for (size_t i = 0; r->device && i < n; i++)
        if (!strcmp(r->device, refs[i].l->canonical_name))
            return 1;
    return !r->device;
}

/* The rules that would give these LUNs Round Robin with the limit, and name their SATP,
 * vendor and model, but whose scope leaves out an uncovered one: each with its scope and the
 * LUNs it leaves out, so that nobody wonders why their rule did not count. */
static json_t *out_of_scope(const struct est_host *h, const struct lun_ref *refs, size_t n,
                            const enum fit *cover, int want)
{
    json_t *a = json_array();
    char scope[4 * FIELD];

    for (size_t r = 0; a && r < h->n_satp_rules; r++) {
        const struct est_satp_rule *rule = &h->satp_rules[r];
        json_t *left_out, *j;
        size_t n_left = 0;
        if (!gives_rr(rule, want) || !names_one_of(rule, refs, n))
            continue;
        left_out = json_array();
        for (size_t i = 0; left_out && i < n; i++) {
            if (cover[i] != NO || !rule_names(rule, &refs[i]) || scope_fits(rule, &refs[i]) != NO)
                continue;
            if (n_left++ < MAX_LUNS)
                left_out = chk_ev_append(left_out, json_string(refs[i].l->canonical_name));
        }
        if (left_out && n_left == 0) { /* it leaves none out */
            json_decref(left_out);
            continue;
        }
        scope_text(rule, scope, sizeof(scope));
        j = chk_ev_set(rule_json(rule), "scope", json_string(scope));
        a = chk_ev_append(a, chk_ev_set(j, "leaves_out", left_out));
    }
    return a;
}

/* Checks one (SATP, vendor) run refs[0..n) of host h; cover[i] is refs[i]'s covered(). */
static int check_group(struct chk_ctx *ctx, const struct est_host *h, const struct lun_ref *refs,
                       size_t n, int want, const enum fit *cover)
{
    const char *hname = h->name, *satp = refs[0].l->satp, *vendor = refs[0].vendor;
    json_t *luns = json_array(), *models = json_array(), *cmds = json_array();
    json_t *rules = json_array(), *unsure = json_array(), *scoped = NULL, *ev = NULL;
    char msg[1024], detail[2 * FIELD + 8], from[FIELD + 16] = "", why[6 * FIELD] = "";
    size_t uncovered = 0;
    int r = 0;

    if (!luns || !models || !cmds || !rules || !unsure) {
        r = -ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        if (cover[i] == MAYBE && json_array_size(unsure) < MAX_LUNS)
            unsure = chk_ev_append(unsure, json_string(refs[i].l->canonical_name));
        if (cover[i] != NO)
            continue;
        if (uncovered++ < MAX_LUNS)
            luns = chk_ev_append(luns, json_string(refs[i].l->canonical_name));
        if (chk_append_unique(models, refs[i].model) < 0)
            r = -ENOMEM;
    }
    if (r < 0 || !unsure || !luns) {
        r = -ENOMEM;
        goto out;
    }
    if (uncovered == 0)
        goto out;
    /* What the host has for these LUNs: the rules that apply to an uncovered one, and so fall
     * short for it. */
    for (size_t k = 0; k < h->n_satp_rules; k++) {
        for (size_t i = 0; i < n; i++) {
            if (cover[i] == NO && rule_applies(&h->satp_rules[k], &refs[i]) == YES) {
                rules = chk_ev_append(rules, rule_json(&h->satp_rules[k]));
                break;
            }
        }
    }
    scoped = out_of_scope(h, refs, n, cover, want);
    size_t mi;
    json_t *mv;
    json_array_foreach(models, mi, mv)
    {
        cmds = chk_ev_append(cmds, command(satp, vendor, json_string_value(mv), want));
    }

    if (vendor[0])
        snprintf(from, sizeof(from), " from %s", vendor);
    if (json_array_size(scoped) == 1)
        snprintf(why, sizeof(why), " (the rule that does is scoped to %s)",
                 json_string_value(json_object_get(json_array_get(scoped, 0), "scope")));
    else if (json_array_size(scoped) > 1)
        snprintf(why, sizeof(why),
                 " (the %zu rules that do are scoped to other devices, drivers, transports or "
                 "claim options)",
                 json_array_size(scoped));
    snprintf(msg, sizeof(msg),
             "host %s has no SATP claim rule giving %s LUNs%s Round Robin with iops=%d%s; LUNs "
             "presented later will get the default policy",
             hname, satp, from, want, why);
    snprintf(detail, sizeof(detail), "%s/%s", satp, vendor);
    ev = json_pack("{s:s, s:s, s:s?, s:O, s:i, s:i, s:O, s:s, s:i, s:O, s:O, s:O, s:O}", "host",
                   hname, "satp", satp, "vendor", vendor[0] ? vendor : NULL, "luns", luns,
                   "luns_uncovered", (int)uncovered, "luns_total", (int)n, "models", models,
                   "recommended_psp", "VMW_PSP_RR", "recommended_iops", want, "rules", rules,
                   "rules_out_of_scope", scoped, "luns_scope_unknown",
                   unsure, "commands", cmds);
    r = chk_emit_host(ctx, h, detail, SEV_WARNING, msg, ev);
out:
    json_decref(luns);
    json_decref(models);
    json_decref(cmds);
    json_decref(rules);
    json_decref(unsure);
    json_decref(scoped);
    return r;
}

static int check_host(struct chk_ctx *ctx, const struct est_host *h, int want)
{
    struct lun_ref *refs;
    enum fit *cover;
    const struct est_lun *l;
    size_t n = 0;
    int r = 0;

    /* Unknown rules are never guessed at: a host that refused esxcli, or whose rules were not
     * read (a real host always lists its system rules), is skipped; host-coverage reports the
     * esxcli gap. */
    if (est_gap(h, "esxcli") || h->n_satp_rules == 0 || h->n_luns == 0)
        return 0;
    refs = calloc(h->n_luns, sizeof(*refs));
    cover = calloc(h->n_luns, sizeof(*cover));
    if (!refs || !cover) {
        free(refs);
        free(cover);
        return -ENOMEM;
    }
    /* SAN LUNs (est_host_san_lun: local devices, VMW_SATP_LOCAL's among them, and devices
     * whose locality is unknown are skipped) claimed by NMP: claim rules are NMP's, and HPP
     * and third-party plug-ins' devices have no SATP. */
    for (size_t i = 0; (l = est_host_san_lun(h, &i)); i++) {
        if (est_lun_plugin(l) != EST_PLUGIN_NMP || !l->satp || est_lun_vendor_psp(l))
            continue;
        refs[n].l = l;
        refs[n].h = h;
        refs[n].transport = lun_transport(h, l);
        est_trimmed(l->vendor, refs[n].vendor, sizeof(refs[n].vendor));
        est_trimmed(l->model, refs[n].model, sizeof(refs[n].model));
        n++;
    }
    qsort(refs, n, sizeof(*refs), ref_cmp);
    for (size_t i = 0; i < n; i++)
        cover[i] = covered(h, &refs[i], want);
    for (size_t i = 0, j; i < n && r == 0; i = j) {
        for (j = i + 1; j < n && !strcmp(refs[j].l->satp, refs[i].l->satp) &&
                        !strcmp(refs[j].vendor, refs[i].vendor);
             j++)
            ;
        r = check_group(ctx, h, refs + i, j - i, want, cover + i);
    }
    free(refs);
    free(cover);
    return r;
}

static int run(struct chk_ctx *ctx, const struct estate *e)
{
    int want = (int)chk_param(ctx, "iops");

    for (size_t hi = 0; hi < e->n_hosts; hi++) {
        int r = check_host(ctx, &e->hosts[hi], want);
        if (r < 0)
            return r;
    }
    return 0;
}

/* The seeds' words this check rests on, verbatim (tests/unit/test_registry.c). */
static const struct chk_source sources[] = {
    {"000_5bd48962a767ee9e.txt", "§3.3",
     "Additionally, a claim rule can be created to automatically set this value on future LUNs "
     "mapped to the host by executing the following command in the CLI: esxcli storage nmp satp "
     "rule add -s \"VMW_SATP_ALUA_CX\" -V \"DGC\" -P \"VMW_PSP_RR\" -O \"iops=1\""},
    {"001_7ad49caae9099bf2.txt", "EMC Symmetrix VMAX 40K testing on vSphere 5.0",
     "For my next test, I changed the IO operations limit from the default 1000 to 1, as "
     "recommended in the EMC document (see pages 82-83);"},
    {0},
};

const struct check chk_satp_claim_rule = {
    .id = "satp-claim-rule",
    .title = "Hosts have a SATP claim rule giving new SAN LUNs Round Robin with an IOPS limit of 1",
    .severity = SEV_WARNING,
    .rationale =
        "Setting Round Robin and the IOPS limit per device fixes the LUNs a host sees today; a "
        "LUN presented later gets whatever its SATP's claim rules say, by default not Round "
        "Robin with an IOPS limit of 1. Per host, for each SATP and vendor among its SAN LUNs "
        "claimed by NMP (local devices, VMW_SATP_LOCAL's among them, HPP and third-party "
        "plug-ins' devices have no NMP claim rule to get right), a claim rule for that SATP (and "
        "that vendor and model, where the rule names them) must set VMW_PSP_RR with PSP options "
        "iops=N, N at most the threshold (a rule without iops= leaves Round Robin's default of "
        "1000), or Round Robin by latency (policy=latency); otherwise a warning. A LUN on a "
        "vendor's "
        "own PSP (not VMW_PSP_*: Nimble, EqualLogic MEM, HDLM), or covered by a rule that names "
        "such a PSP, is the vendor's multipathing and not judged. A rule scoped to a device covers "
        "only that device, to a "
        "driver only LUNs behind adapters of that driver, to a transport (fc, fcoe, iscsi, sas, "
        "parallel: told by the paths' adapter types) only LUNs of that transport, and with "
        "claim option tpgs_on only ALUA devices (claimed by a VMW_SATP_ALUA SATP), tpgs_off only "
        "the others; a LUN whose adapters do not tell is neither reported nor counted covered. "
        "The rules come from esxcli (storage nmp satp rule list); a host that refused esxcli, "
        "or whose rules were not read, is skipped, never guessed.",
    .reference = "000_5bd48962a767ee9e.txt §3.3; 001_7ad49caae9099bf2.txt",
    .sources = sources,
    .own =
        "The guide offers the claim rule as a way (\"can be created\"); vslint expects one for "
        "each SATP and vendor of a host's NMP SAN LUNs, so that LUNs presented later get Round "
        "Robin with the IOPS limit multipath-policy wants without anyone setting it per device. "
        "The scoping rules (device, driver, transport, tpgs_on/off) are how ESXi applies claim "
        "rules. The warning severity is vslint's.",
    .remediation =
        "On each host, add a claim rule for the array's SATP and vendor (the evidence gives the "
        "command for the host's LUNs), e.g. Unity `esxcli storage nmp satp rule add -s "
        "\"VMW_SATP_ALUA_CX\" -V \"DGC\" -P \"VMW_PSP_RR\" -O \"iops=1\"`, VMAX `esxcli storage "
        "nmp satp rule add -s \"VMW_SATP_SYMM\" -V \"EMC\" -M \"SYMMETRIX\" -P \"VMW_PSP_RR\" -O "
        "\"iops=1\"`. The rule applies to devices claimed after it is added: LUNs already "
        "presented keep their policy until reclaimed or the host reboots (multipath-policy "
        "reports those).",
    .params = params,
    .needs = CHK_NEEDS_HOST | CHK_NEEDS_ESXCLI,
    .run = run,
};
