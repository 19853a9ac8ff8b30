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

/* One SAN LUN of the host being checked, with its vendor and model trimmed. */
struct lun_ref {
    const struct est_lun *l;
    char vendor[FIELD], model[FIELD];
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

/* Whether the rule's PSP is Round Robin switching paths every `want` I/Os or fewer. A rule
 * that switches by bytes or latency does not; one that sets no IOPS limit gives the default. */
static int gives_rr(const struct est_satp_rule *r, int want)
{
    char v[32];
    char *end;
    long n = RR_DEFAULT_IOPS;

    if (!r->psp || strcmp(r->psp, "VMW_PSP_RR") != 0)
        return 0;
    if (option(r->psp_options, "policy", v, sizeof(v)) == 0 && strcmp(v, "iops") != 0 &&
        strcmp(v, "rr") != 0)
        return 0;
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

/* Whether the rule applies to the LUN: same SATP, and the vendor and model it names, if any. */
static int rule_applies(const struct est_satp_rule *r, const struct lun_ref *lr)
{
    char vendor[FIELD];

    if (!r->satp || strcmp(r->satp, lr->l->satp) != 0)
        return 0;
    est_trimmed(r->vendor, vendor, sizeof(vendor));
    if (vendor[0] && strcmp(vendor, lr->vendor) != 0)
        return 0;
    return !r->model || model_matches(r->model, lr->model);
}

static int covered(const struct est_host *h, const struct lun_ref *lr, int want)
{
    for (size_t i = 0; i < h->n_satp_rules; i++)
        if (rule_applies(&h->satp_rules[i], lr) && gives_rr(&h->satp_rules[i], want))
            return 1;
    return 0;
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

static void append_unique(json_t *a, const char *s)
{
    size_t i;
    json_t *v;

    json_array_foreach(a, i, v)
    {
        if (!strcmp(json_string_value(v), s))
            return;
    }
    json_array_append_new(a, json_string(s));
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
    return json_pack("{s:s?, s:s?, s:s?, s:s?, s:s?, s:s?}", "satp", r->satp, "vendor", r->vendor,
                     "model", r->model, "psp", r->psp, "psp_options", r->psp_options, "rule_group",
                     r->rule_group);
}

/* Checks one (SATP, vendor) run refs[0..n) of host h. */
static int check_group(struct chk_ctx *ctx, const struct est_host *h, const struct lun_ref *refs,
                       size_t n, int want)
{
    const char *hname = h->name, *satp = refs[0].l->satp, *vendor = refs[0].vendor;
    json_t *luns = json_array(), *models = json_array(), *cmds = json_array();
    json_t *rules = json_array(), *ev = NULL;
    char msg[1024], detail[2 * FIELD + 8], from[FIELD + 16] = "";
    size_t uncovered = 0;

    if (!luns || !models || !cmds || !rules)
        goto nomem;
    for (size_t i = 0; i < n; i++) {
        if (covered(h, &refs[i], want))
            continue;
        if (uncovered++ < MAX_LUNS)
            json_array_append_new(luns, json_string(refs[i].l->canonical_name));
        append_unique(models, refs[i].model);
    }
    if (uncovered == 0) {
        json_decref(luns);
        json_decref(models);
        json_decref(cmds);
        json_decref(rules);
        return 0;
    }
    /* What the host has for these LUNs: the rules that apply to an uncovered one, and so fall
     * short for it. */
    for (size_t r = 0; r < h->n_satp_rules; r++) {
        for (size_t i = 0; i < n; i++) {
            if (rule_applies(&h->satp_rules[r], &refs[i]) && !covered(h, &refs[i], want)) {
                json_array_append_new(rules, rule_json(&h->satp_rules[r]));
                break;
            }
        }
    }
    size_t mi;
    json_t *mv;
    json_array_foreach(models, mi, mv)
    {
        json_array_append_new(cmds, command(satp, vendor, json_string_value(mv), want));
    }

    if (vendor[0])
        snprintf(from, sizeof(from), " from %s", vendor);
    snprintf(msg, sizeof(msg),
             "host %s has no SATP claim rule giving %s LUNs%s Round Robin with iops=%d; LUNs "
             "presented later will get the default policy",
             hname, satp, from, want);
    snprintf(detail, sizeof(detail), "%s/%s", satp, vendor);
    ev =
        json_pack("{s:s, s:s, s:s?, s:o, s:i, s:i, s:o, s:s, s:i, s:o, s:o}", "host", hname, "satp",
                  satp, "vendor", vendor[0] ? vendor : NULL, "luns", luns, "luns_uncovered",
                  (int)uncovered, "luns_total", (int)n, "models", models, "recommended_psp",
                  "VMW_PSP_RR", "recommended_iops", want, "rules", rules, "commands", cmds);
    return chk_emit(ctx, &(struct chk_emit){
                             .severity = CHK_WARNING,
                             .object_type = "host",
                             .object_moref = h->moref,
                             .object_name = hname,
                             .host = h,
                             .detail = detail,
                             .message = msg,
                             .evidence = ev,
                         });

nomem:
    json_decref(luns);
    json_decref(models);
    json_decref(cmds);
    json_decref(rules);
    return -ENOMEM;
}

static int check_host(struct chk_ctx *ctx, const struct est_host *h, int want)
{
    struct lun_ref *refs;
    size_t n = 0;
    int r = 0;

    /* Unknown rules are never guessed at: a host that refused esxcli, or whose rules were not
     * read (a real host always lists its system rules), is skipped; multipath-policy reports
     * the esxcli gap. */
    if (est_gap(h, "esxcli") || h->n_satp_rules == 0 || h->n_luns == 0)
        return 0;
    refs = calloc(h->n_luns, sizeof(*refs));
    if (!refs)
        return -ENOMEM;
    for (size_t i = 0; i < h->n_luns; i++) {
        const struct est_lun *l = &h->luns[i];
        /* SAN LUNs only (locality unknown is skipped, as in multipath-policy); VMW_SATP_LOCAL
         * claims devices Round Robin means nothing to. */
        if (l->local != 0 || !l->satp || !l->canonical_name || !strcmp(l->satp, "VMW_SATP_LOCAL"))
            continue;
        refs[n].l = l;
        est_trimmed(l->vendor, refs[n].vendor, sizeof(refs[n].vendor));
        est_trimmed(l->model, refs[n].model, sizeof(refs[n].model));
        n++;
    }
    qsort(refs, n, sizeof(*refs), ref_cmp);
    for (size_t i = 0, j; i < n && r == 0; i = j) {
        for (j = i + 1; j < n && !strcmp(refs[j].l->satp, refs[i].l->satp) &&
                        !strcmp(refs[j].vendor, refs[i].vendor);
             j++)
            ;
        r = check_group(ctx, h, refs + i, j - i, want);
    }
    free(refs);
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

const struct check chk_satp_claim_rule = {
    .id = "satp-claim-rule",
    .title = "Hosts have a SATP claim rule giving new SAN LUNs Round Robin with an IOPS limit of 1",
    .severity = CHK_WARNING,
    .rationale =
        "Setting Round Robin and the IOPS limit per device fixes the LUNs a host sees today; a "
        "LUN presented later gets whatever its SATP's claim rules say, by default not Round "
        "Robin with an IOPS limit of 1. Per host, for each SATP and vendor among its SAN LUNs "
        "(not local), a claim rule for that SATP (and that vendor and model, where the rule "
        "names them) must set VMW_PSP_RR with PSP options iops=N, N at most the threshold (a "
        "rule without iops= leaves Round Robin's default of 1000); otherwise a warning. The rules "
        "come from esxcli (storage nmp satp rule list); a host "
        "that refused esxcli, or whose rules were not read, is skipped, never guessed. Rule "
        "restrictions by device, driver, transport or claim option are not considered.",
    .reference = "000_5bd48962a767ee9e.txt §3.3; 001_7ad49caae9099bf2.txt",
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
