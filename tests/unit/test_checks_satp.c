/* Unit tests for satp-claim-rule: each table row is one hand-built host (its LUNs, its SATP
 * claim rules, whether esxcli failed on it) and the (SATP, vendor) findings it must raise. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "checks/check.h"
#include "checks/engine.h"
#include "model/estate.h"
#include "testlib.h"

#define NOW ((int64_t)1750000000)

extern const struct check chk_satp_claim_rule;

#define MAXL 3
#define MAXR 4

struct lun_spec {
    const char *canonical;
    int local;
    const char *satp, *vendor, *model;
};

/* LUNs as ESXi reports them: inquiry vendor and model space-padded. */
#define DGC(name)                                                                                  \
    {                                                                                              \
        name, 0, "VMW_SATP_ALUA", "DGC     ", "VRAID           "                                   \
    }
#define SYMM(name)                                                                                 \
    {                                                                                              \
        name, 0, "VMW_SATP_SYMM", "EMC     ", "SYMMETRIX       "                                   \
    }

/* Rules: satp, vendor, model, psp, psp_options, rule_group (not restricted by device, driver,
 * transport or claim options). */
#define RULE(s, v, m, p, o, g)                                                                     \
    {                                                                                              \
        .satp = s, .vendor = v, .model = m, .psp = p, .psp_options = o, .rule_group = g            \
    }
#define SYS_ALUA RULE("VMW_SATP_ALUA", NULL, NULL, "VMW_PSP_MRU", NULL, "system")
#define SYS_PURE RULE("VMW_SATP_ALUA", "PURE", "FlashArray", "VMW_PSP_RR", "iops=1", "system")
#define SYS_SYMM RULE("VMW_SATP_SYMM", "EMC", "SYMMETRIX", NULL, NULL, "system")
#define USER_DGC(o) RULE("VMW_SATP_ALUA", "DGC", NULL, "VMW_PSP_RR", o, "user")

static const struct host_row {
    const char *host;
    struct lun_spec luns[MAXL];
    struct est_satp_rule rules[MAXR];
    int esxcli_gap;
    const char *want[3]; /* the details of the findings, in order; NULL-terminated */
} rows[] = {
    {"rule-ok", {DGC("naa.1")}, {SYS_ALUA, USER_DGC("iops=1")}, 0, {NULL}},
    {"system-rules-only", {DGC("naa.1")}, {SYS_ALUA, SYS_PURE, SYS_SYMM}, 0, {"VMW_SATP_ALUA/DGC"}},
    /* Round Robin, but at the default 1000 I/Os per path. */
    {"rr-no-options", {DGC("naa.1")}, {SYS_ALUA, USER_DGC(NULL)}, 0, {"VMW_SATP_ALUA/DGC"}},
    {"rr-iops-1000", {DGC("naa.1")}, {SYS_ALUA, USER_DGC("iops=1000")}, 0, {"VMW_SATP_ALUA/DGC"}},
    {"rr-iops-2", {DGC("naa.1")}, {SYS_ALUA, USER_DGC("iops=2")}, 0, {"VMW_SATP_ALUA/DGC"}},
    {"rr-iops-0", {DGC("naa.1")}, {SYS_ALUA, USER_DGC("iops=0")}, 0, {"VMW_SATP_ALUA/DGC"}},
    {"rr-iops-garbage", {DGC("naa.1")}, {SYS_ALUA, USER_DGC("iops=1x")}, 0, {"VMW_SATP_ALUA/DGC"}},
    /* Latency-based Round Robin (ESXi 6.7 U1+) uses every path: accepted. */
    {"rr-latency", {DGC("naa.1")}, {SYS_ALUA, USER_DGC("policy=latency")}, 0, {NULL}},
    /* A vendor's own PSP under NMP is the vendor's multipathing: a LUN on one (HPE Nimble's)
     * is not judged, and a rule that names one (EqualLogic MEM's) covers its LUNs; a vendor
     * rule for another vendor covers nothing of DGC's. */
    {"vendor-psp-lun",
     {{"naa.n1", 0, "VMW_SATP_ALUA", "Nimble", "Server"}},
     {SYS_ALUA},
     0,
     {NULL}},
    {"vendor-psp-rule",
     {{"naa.e1", 0, "VMW_SATP_EQL", "EQLOGIC", "100E-00"}},
     {SYS_ALUA, RULE("VMW_SATP_EQL", "EQLOGIC", NULL, "DELL_PSP_EQL_ROUTED", NULL, "user")},
     0,
     {NULL}},
    {"vendor-rule-other-vendor",
     {DGC("naa.1")},
     {SYS_ALUA, RULE("VMW_SATP_ALUA", "Nimble", NULL, "NIMBLE_PSP_DIRECTED", NULL, "user")},
     0,
     {"VMW_SATP_ALUA/DGC"}},
    {"rr-bytes-with-iops",
     {DGC("naa.1")},
     {SYS_ALUA, USER_DGC("policy=bytes,iops=1")},
     0,
     {"VMW_SATP_ALUA/DGC"}},
    {"rr-policy-iops", {DGC("naa.1")}, {SYS_ALUA, USER_DGC("policy=iops,iops=1")}, 0, {NULL}},
    /* "iops=" must be a field of its own. */
    {"rr-maxiops", {DGC("naa.1")}, {SYS_ALUA, USER_DGC("maxiops=1")}, 0, {"VMW_SATP_ALUA/DGC"}},
    {"mru-iops-1",
     {DGC("naa.1")},
     {SYS_ALUA, RULE("VMW_SATP_ALUA", "DGC", NULL, "VMW_PSP_MRU", "iops=1", "user")},
     0,
     {"VMW_SATP_ALUA/DGC"}},
    /* The right PSP for another vendor (PURE) or another SATP (Unity's ALUA_CX rule). */
    {"other-vendor", {DGC("naa.1")}, {SYS_ALUA, SYS_PURE}, 0, {"VMW_SATP_ALUA/DGC"}},
    {"other-satp",
     {DGC("naa.1")},
     {SYS_ALUA, RULE("VMW_SATP_ALUA_CX", "DGC", NULL, "VMW_PSP_RR", "iops=1", "user")},
     0,
     {"VMW_SATP_ALUA/DGC"}},
    /* A rule naming no vendor covers every vendor of its SATP. */
    {"any-vendor",
     {DGC("naa.1")},
     {SYS_ALUA, RULE("VMW_SATP_ALUA", NULL, NULL, "VMW_PSP_RR", "iops=1", "user")},
     0,
     {NULL}},
    /* 001's VMAX rule, with vendor and model. */
    {"symm-model",
     {SYMM("naa.6000097")},
     {SYS_SYMM, RULE("VMW_SATP_SYMM", "EMC", "SYMMETRIX", "VMW_PSP_RR", "iops=1", "user")},
     0,
     {NULL}},
    {"symm-other-model",
     {SYMM("naa.6000097")},
     {SYS_SYMM, RULE("VMW_SATP_SYMM", "EMC", "VMAX", "VMW_PSP_RR", "iops=1", "user")},
     0,
     {"VMW_SATP_SYMM/EMC"}},
    {"symm-model-prefix",
     {SYMM("naa.6000097")},
     {SYS_SYMM, RULE("VMW_SATP_SYMM", "EMC", "^SYMM*", "VMW_PSP_RR", "iops=1", "user")},
     0,
     {NULL}},
    /* Two arrays: one finding per (SATP, vendor) left without a rule, in SATP order. */
    {"two-arrays-one-rule",
     {DGC("naa.1"), SYMM("naa.6000097")},
     {SYS_ALUA, SYS_SYMM, USER_DGC("iops=1")},
     0,
     {"VMW_SATP_SYMM/EMC"}},
    {"two-arrays-no-rule",
     {SYMM("naa.6000097"), DGC("naa.1"), DGC("naa.2")},
     {SYS_ALUA, SYS_SYMM},
     0,
     {"VMW_SATP_ALUA/DGC", "VMW_SATP_SYMM/EMC"}},
    /* Unknown is skipped, never guessed: esxcli failed, or the rules were never read (a real
     * host always lists system rules). */
    {"esxcli-gap", {DGC("naa.1")}, {{NULL}}, 1, {NULL}},
    {"esxcli-gap-with-rules", {DGC("naa.1")}, {SYS_ALUA}, 1, {NULL}},
    {"rules-not-read", {DGC("naa.1")}, {{NULL}}, 0, {NULL}},
    /* Not SAN: local, locality unknown, VMW_SATP_LOCAL, no SATP. */
    {"local-only",
     {{"mpx.vmhba0:C0:T0:L0", 1, "VMW_SATP_LOCAL", "ATA", "disk"},
      {"naa.local-alua", 1, "VMW_SATP_ALUA", "DGC", "VRAID"}},
     {SYS_ALUA},
     0,
     {NULL}},
    {"locality-unknown",
     {{"naa.1", EST_UNKNOWN, "VMW_SATP_ALUA", "DGC", "VRAID"}},
     {SYS_ALUA},
     0,
     {NULL}},
    {"satp-local", {{"naa.sas", 0, "VMW_SATP_LOCAL", "SEAGATE", "ST900"}}, {SYS_ALUA}, 0, {NULL}},
    {"no-satp", {{"naa.1", 0, NULL, "DGC", "VRAID"}}, {SYS_ALUA}, 0, {NULL}},
    {"no-luns", {{NULL}}, {SYS_ALUA}, 0, {NULL}},
    /* A LUN without a vendor: only a rule without one covers it. */
    {"vendor-unknown",
     {{"naa.1", 0, "VMW_SATP_ALUA", NULL, "VRAID"}},
     {SYS_ALUA, USER_DGC("iops=1")},
     0,
     {"VMW_SATP_ALUA/"}},
    /* One of two models covered: the finding is about the other. */
    {"one-model-covered",
     {DGC("naa.1"), {"naa.2", 0, "VMW_SATP_ALUA", "DGC", "UNITY"}},
     {SYS_ALUA, RULE("VMW_SATP_ALUA", "DGC", "VRAID", "VMW_PSP_RR", "iops=1", "user")},
     0,
     {"VMW_SATP_ALUA/DGC"}},
};

struct world {
    struct est_lun luns[N(rows)][MAXL];
    struct est_satp_rule rules[N(rows)][MAXR];
    struct est_gap gap;
    struct est_host hosts[N(rows)];
    char morefs[N(rows)][16];
    struct estate e;
};

/* The PSP a LUN is on: Round Robin, except where the array vendor's own multipathing module
 * installs its PSP (HPE Nimble Connection Manager). */
static const char *vendor_psp(const char *vendor)
{
    return vendor && !strcmp(vendor, "Nimble") ? "NIMBLE_PSP_DIRECTED" : "VMW_PSP_RR";
}

static void build(struct world *w)
{
    memset(w, 0, sizeof(*w));
    w->gap = (struct est_gap){"esxcli", "NoPermission fault: Permission to perform this "
                                        "operation was denied."};
    for (size_t i = 0; i < N(rows); i++) {
        const struct host_row *row = &rows[i];
        struct est_host *h = &w->hosts[i];
        snprintf(w->morefs[i], sizeof(w->morefs[i]), "host-%zu", i);
        *h = (struct est_host){.moref = w->morefs[i], .name = row->host};
        for (size_t l = 0; l < MAXL && row->luns[l].canonical; l++) {
            const struct lun_spec *ls = &row->luns[l];
            w->luns[i][l] = (struct est_lun){.canonical_name = ls->canonical,
                                             .vendor = ls->vendor,
                                             .model = ls->model,
                                             .lun_type = "disk",
                                             .local = ls->local,
                                             .psp = vendor_psp(ls->vendor),
                                             .satp = ls->satp,
                                             .iops_limit = 1};
            h->luns = w->luns[i];
            h->n_luns++;
        }
        for (size_t r = 0; r < MAXR && row->rules[r].satp; r++) {
            w->rules[i][r] = row->rules[r];
            h->satp_rules = w->rules[i];
            h->n_satp_rules++;
        }
        if (row->esxcli_gap) {
            h->gaps = &w->gap;
            h->n_gaps = 1;
        }
    }
    w->e = (struct estate){.vcenter = "vc", .hosts = w->hosts, .n_hosts = N(rows)};
}

/* Asserts that host (moref) raised exactly the findings whose details want (NULL-terminated)
 * names, in that order, each a warning about the host itself; returns how many. */
static size_t want_details(const struct chk_results *r, const char *host, const char *moref,
                           const char *const *want)
{
    size_t k = 0;

    for (size_t j = 0; j < r->n; j++) {
        const struct chk_finding *f = &r->items[j];
        if (strcmp(f->object_name, host))
            continue;
        if (!want[k] || strcmp(f->detail, want[k]))
            fail_msg("%s: unexpected finding %s: %s", host, f->detail, f->message);
        assert_int_equal(f->severity, SEV_WARNING);
        assert_string_equal(f->object_type, "host");
        assert_string_equal(f->object_moref, moref);
        k++;
    }
    if (want[k])
        fail_msg("%s: no finding %s", host, want[k]);
    return k;
}

TEST(test_table)
{
    static struct world w;
    size_t want_n = 0;

    build(&w);
    struct chk_results r = tl_run(&chk_satp_claim_rule, NULL, &w.e, NOW);
    for (size_t i = 0; i < N(rows); i++)
        want_n += want_details(&r, rows[i].host, w.morefs[i], rows[i].want);
    assert_int_equal(r.n, want_n);
    chk_results_free(&r);
}

TEST(test_evidence)
{
    static struct world w;

    build(&w);
    struct chk_results r = tl_run(&chk_satp_claim_rule, NULL, &w.e, NOW);

    const struct chk_finding *f = tl_find(&r, "rr-no-options", "VMW_SATP_ALUA/DGC");
    assert_non_null(f);
    assert_string_equal(f->message,
                        "host rr-no-options has no SATP claim rule giving VMW_SATP_ALUA LUNs from "
                        "DGC Round Robin with iops=1; LUNs presented later will get the default "
                        "policy");
    assert_string_equal(tl_ev_str(f, "satp"), "VMW_SATP_ALUA");
    assert_string_equal(tl_ev_str(f, "vendor"), "DGC"); /* trimmed */
    assert_string_equal(tl_ev_item(f, "luns", 0, NULL), "naa.1");
    assert_int_equal(tl_ev_int(f, "recommended_iops"), 1);
    assert_string_equal(tl_ev_str(f, "recommended_psp"), "VMW_PSP_RR");
    /* The rules that apply but fall short, as the host has them. */
    json_t *rules = json_object_get(f->evidence, "rules");
    assert_int_equal(json_array_size(rules), 2);
    assert_string_equal(tl_ev_item(f, "rules", 1, "psp"), "VMW_PSP_RR");
    assert_true(json_is_null(json_object_get(json_array_get(rules, 1), "psp_options")));
    assert_int_equal(json_array_size(json_object_get(f->evidence, "commands")), 1);
    assert_string_equal(tl_ev_item(f, "commands", 0, NULL),
                        "esxcli storage nmp satp rule add -s \"VMW_SATP_ALUA\" -V \"DGC\" -M "
                        "\"VRAID\" -P \"VMW_PSP_RR\" -O \"iops=1\"");

    /* Two LUNs, one uncovered: only it, its model and its command. */
    f = tl_find(&r, "one-model-covered", "VMW_SATP_ALUA/DGC");
    assert_non_null(f);
    assert_int_equal(tl_ev_int(f, "luns_total"), 2);
    assert_int_equal(tl_ev_int(f, "luns_uncovered"), 1);
    assert_int_equal(json_array_size(json_object_get(f->evidence, "luns")), 1);
    assert_string_equal(tl_ev_item(f, "luns", 0, NULL), "naa.2");
    assert_string_equal(tl_ev_item(f, "models", 0, NULL), "UNITY");
    /* The VRAID rule covers naa.1, not naa.2: only the system rule falls short for naa.2. */
    rules = json_object_get(f->evidence, "rules");
    assert_int_equal(json_array_size(rules), 1);
    assert_string_equal(tl_ev_item(f, "rules", 0, "rule_group"), "system");
    assert_string_equal(tl_ev_item(f, "commands", 0, NULL),
                        "esxcli storage nmp satp rule add -s \"VMW_SATP_ALUA\" -V \"DGC\" -M "
                        "\"UNITY\" -P \"VMW_PSP_RR\" -O \"iops=1\"");

    /* 001's own rule for the VMAX LUN. */
    f = tl_find(&r, "two-arrays-one-rule", "VMW_SATP_SYMM/EMC");
    assert_non_null(f);
    assert_string_equal(tl_ev_item(f, "commands", 0, NULL),
                        "esxcli storage nmp satp rule add -s \"VMW_SATP_SYMM\" -V \"EMC\" -M "
                        "\"SYMMETRIX\" -P \"VMW_PSP_RR\" -O \"iops=1\"");

    /* No vendor: no "from", no -V. */
    f = tl_find(&r, "vendor-unknown", "VMW_SATP_ALUA/");
    assert_non_null(f);
    assert_true(json_is_null(json_object_get(f->evidence, "vendor")));
    assert_null(strstr(f->message, " from "));
    assert_string_equal(tl_ev_item(f, "commands", 0, NULL),
                        "esxcli storage nmp satp rule add -s \"VMW_SATP_ALUA\" -M \"VRAID\" -P "
                        "\"VMW_PSP_RR\" -O \"iops=1\"");

    /* The fingerprint follows (host, SATP, vendor): two arrays on one host, two findings. */
    const struct chk_finding *a = tl_find(&r, "two-arrays-no-rule", "VMW_SATP_ALUA/DGC");
    const struct chk_finding *b = tl_find(&r, "two-arrays-no-rule", "VMW_SATP_SYMM/EMC");
    assert_non_null(a);
    assert_non_null(b);
    assert_string_not_equal(a->fingerprint, b->fingerprint);
    assert_int_equal(tl_ev_int(a, "luns_total"), 2);
    chk_results_free(&r);
}

/* iops = 10 accepts a rule of iops=2 and still flags one without a limit; the message and
 * command follow the threshold. */
TEST(test_param)
{
    static struct world w;

    build(&w);
    struct chk_results r = tl_run_with(&chk_satp_claim_rule, "iops", 10, &w.e, NOW);
    assert_null(tl_find(&r, "rr-iops-2", "VMW_SATP_ALUA/DGC"));
    assert_non_null(tl_find(&r, "rr-iops-1000", "VMW_SATP_ALUA/DGC"));
    const struct chk_finding *f = tl_find(&r, "rr-no-options", "VMW_SATP_ALUA/DGC");
    assert_non_null(f);
    assert_non_null(strstr(f->message, "Round Robin with iops=10;"));
    assert_int_equal(tl_ev_int(f, "recommended_iops"), 10);
    assert_non_null(strstr(tl_ev_item(f, "commands", 0, NULL), "-O \"iops=10\""));
    chk_results_free(&r);

    /* iops = 1000 accepts Round Robin's default, which a rule without options leaves. */
    r = tl_run_with(&chk_satp_claim_rule, "iops", 1000, &w.e, NOW);
    assert_null(tl_find(&r, "rr-no-options", "VMW_SATP_ALUA/DGC"));
    assert_null(tl_find(&r, "rr-iops-1000", "VMW_SATP_ALUA/DGC"));
    assert_null(tl_find(&r, "rr-latency", "VMW_SATP_ALUA/DGC"));
    assert_non_null(tl_find(&r, "system-rules-only", "VMW_SATP_ALUA/DGC"));
    chk_results_free(&r);
}

/* ---- scoped rules: device, driver, transport, claim options ------------------------------- */

/* The paths of a LUN, by the adapters they go through. */
static struct est_path via_lpfc[] = {TL_PATH("vmhba10", TL_LPFC10, 0, "active"),
                                     TL_PATH("vmhba11", TL_LPFC11, 0, "active")};
static struct est_path via_mixed[] = {TL_PATH("vmhba2", TL_FC2, 0, "active"),
                                      TL_PATH("vmhba10", TL_LPFC10, 0, "active")};
static struct est_path via_iscsi[] = {TL_PATH("vmhba64", TL_SWISCSI, 0, "active")};
static struct est_path via_unlisted[] = {
    {.name = "vmhba9:C0:T0:L1", .state = "active", .adapter = "vmhba9", .hba = EST_NONE}};
enum via { FC, LPFC, MIXED, ISCSI, SAS, UNLISTED };
static const struct {
    struct est_path *paths;
    size_t n;
} vias[] = {{tl_paths_fc, 2}, {via_lpfc, 2},     {via_mixed, 2},
            {via_iscsi, 1},   {tl_paths_sas, 2}, {via_unlisted, 1}};

struct scope_lun {
    const char *canonical, *satp, *vendor, *model;
    enum via via;
};
/* A Unity (DGC VRAID) LUN claimed by VMW_SATP_ALUA, a VMAX one by VMW_SATP_SYMM. */
#define ALUA_DGC(name, via) {name, "VMW_SATP_ALUA", "DGC", "VRAID", via}
#define SYMM_EMC(name, via) {name, "VMW_SATP_SYMM", "EMC", "SYMMETRIX", via}
#define SCOPED(s, v, dev, drv, tr, co)                                                             \
    {                                                                                              \
        .satp = s, .vendor = v, .psp = "VMW_PSP_RR", .psp_options = "iops=1",                      \
        .rule_group = "user", .device = dev, .driver = drv, .transport = tr, .claim_options = co   \
    }

/* The one finding a host of the table must raise: {0} for none. */
struct scope_want {
    const char *detail;
    const char *luns[3];  /* its uncovered LUNs */
    const char *unknown;  /* a LUN whose coverage cannot be told, or NULL */
};

static const struct scope_row {
    const char *host;
    struct scope_lun luns[MAXL];
    struct est_satp_rule rules[MAXR];
    struct scope_want want;
} scope_rows[] = {
    /* A rule for one device covers that device. */
    {"device",
     {ALUA_DGC("naa.d1", FC), ALUA_DGC("naa.d2", FC)},
     {SYS_ALUA, SCOPED("VMW_SATP_ALUA", NULL, "naa.d1", NULL, NULL, NULL)},
     {"VMW_SATP_ALUA/DGC", {"naa.d2"}, NULL}},
    {"device-all",
     {ALUA_DGC("naa.d1", FC)},
     {SYS_ALUA, SCOPED("VMW_SATP_ALUA", NULL, "naa.d1", NULL, NULL, NULL)},
     {0}},
    /* A driver's rule covers LUNs behind adapters of that driver; one path through another
     * driver's adapter cannot be told. */
    {"driver",
     {SYMM_EMC("naa.s1", LPFC), SYMM_EMC("naa.s2", FC), SYMM_EMC("naa.s3", MIXED)},
     {SYS_SYMM, SCOPED("VMW_SATP_SYMM", "EMC", NULL, "lpfc", NULL, NULL)},
     {"VMW_SATP_SYMM/EMC", {"naa.s2"}, "naa.s3"}},
    /* A transport's rule: iSCSI adapters are iscsi, FC ones fc, SAS ones sas. */
    {"transport",
     {ALUA_DGC("naa.t1", ISCSI), ALUA_DGC("naa.t2", FC)},
     {SYS_ALUA, SCOPED("VMW_SATP_ALUA", "DGC", NULL, NULL, "iscsi", NULL)},
     {"VMW_SATP_ALUA/DGC", {"naa.t2"}, NULL}},
    {"transport-sas",
     {ALUA_DGC("naa.t3", SAS)},
     {SYS_ALUA, SCOPED("VMW_SATP_ALUA", "DGC", NULL, NULL, "sas", NULL)},
     {0}},
    /* Adapters the host does not list, and independent hardware iSCSI's "iscsivendor", which
     * an adapter's type does not tell apart: not reported, not counted covered. */
    {"transport-unlisted",
     {ALUA_DGC("naa.t4", UNLISTED)},
     {SYS_ALUA, SCOPED("VMW_SATP_ALUA", "DGC", NULL, NULL, "fc", NULL)},
     {0}},
    {"transport-iscsivendor",
     {ALUA_DGC("naa.t5", ISCSI)},
     {SYS_ALUA, SCOPED("VMW_SATP_ALUA", "DGC", NULL, NULL, "iscsivendor", NULL)},
     {0}},
    /* Claim options: tpgs_on is ALUA devices (an ALUA SATP), tpgs_off the others. */
    {"tpgs-on-alua",
     {ALUA_DGC("naa.c1", FC)},
     {SYS_ALUA, SCOPED("VMW_SATP_ALUA", "DGC", NULL, NULL, NULL, "tpgs_on")},
     {0}},
    {"tpgs-on-not-alua",
     {{"naa.h1", "VMW_SATP_DEFAULT_AA", "HITACHI", "OPEN-V", FC}},
     {SYS_ALUA, SCOPED("VMW_SATP_DEFAULT_AA", "HITACHI", NULL, NULL, NULL, "tpgs_on")},
     {"VMW_SATP_DEFAULT_AA/HITACHI", {"naa.h1"}, NULL}},
    {"tpgs-off-not-alua",
     {{"naa.h1", "VMW_SATP_DEFAULT_AA", "HITACHI", "OPEN-V", FC}},
     {SYS_ALUA, SCOPED("VMW_SATP_DEFAULT_AA", "HITACHI", NULL, NULL, NULL, "tpgs_off")},
     {0}},
    {"tpgs-off-alua",
     {{"naa.c2", "VMW_SATP_ALUA_CX", "DGC", "VRAID", FC}},
     {SYS_ALUA, SCOPED("VMW_SATP_ALUA_CX", "DGC", NULL, NULL, NULL, "tpgs_off")},
     {"VMW_SATP_ALUA_CX/DGC", {"naa.c2"}, NULL}},
    {"claim-option-unknown",
     {ALUA_DGC("naa.c3", FC)},
     {SYS_ALUA, SCOPED("VMW_SATP_ALUA", "DGC", NULL, NULL, NULL, "tpgs_maybe")},
     {0}},
};

struct scope_world {
    struct est_lun luns[N(scope_rows)][MAXL];
    struct est_satp_rule rules[N(scope_rows)][MAXR];
    struct est_host hosts[N(scope_rows)];
    char morefs[N(scope_rows)][16];
    struct estate e;
};

static void scope_build(struct scope_world *w)
{
    memset(w, 0, sizeof(*w));
    for (size_t i = 0; i < N(scope_rows); i++) {
        const struct scope_row *row = &scope_rows[i];
        struct est_host *h = &w->hosts[i];
        snprintf(w->morefs[i], sizeof(w->morefs[i]), "host-%zu", i);
        *h = (struct est_host){.moref = w->morefs[i],
                               .name = row->host,
                               .hbas = tl_hbas,
                               .n_hbas = N(tl_hbas),
                               .luns = w->luns[i],
                               .satp_rules = w->rules[i]};
        for (size_t l = 0; l < MAXL && row->luns[l].canonical; l++) {
            const struct scope_lun *sl = &row->luns[l];
            w->luns[i][h->n_luns++] = (struct est_lun){.canonical_name = sl->canonical,
                                                       .vendor = sl->vendor,
                                                       .model = sl->model,
                                                       .lun_type = "disk",
                                                       .local = 0,
                                                       .psp = "VMW_PSP_RR",
                                                       .satp = sl->satp,
                                                       .iops_limit = 1,
                                                       .multipath_plugin = "NMP",
                                                       .paths = vias[sl->via].paths,
                                                       .n_paths = vias[sl->via].n};
        }
        for (size_t r = 0; r < MAXR && row->rules[r].satp; r++)
            w->rules[i][h->n_satp_rules++] = row->rules[r];
    }
    w->e = (struct estate){.vcenter = "vc", .hosts = w->hosts, .n_hosts = N(scope_rows)};
}

TEST(test_scoped_rules)
{
    static struct scope_world w;
    size_t want_n = 0;

    scope_build(&w);
    struct chk_results r = tl_run(&chk_satp_claim_rule, NULL, &w.e, NOW);
    for (size_t i = 0; i < N(scope_rows); i++) {
        const struct scope_row *row = &scope_rows[i];
        const char *want[] = {row->want.detail, NULL};
        want_n += want_details(&r, row->host, w.morefs[i], want);
        if (!row->want.detail)
            continue;
        const struct chk_finding *f = tl_find(&r, row->host, row->want.detail);
        json_t *luns = json_object_get(f->evidence, "luns");
        size_t k = 0;
        for (; k < 3 && row->want.luns[k]; k++)
            assert_string_equal(tl_ev_item(f, "luns", k, NULL), row->want.luns[k]);
        assert_int_equal(json_array_size(luns), k);
        json_t *unsure = json_object_get(f->evidence, "luns_scope_unknown");
        assert_int_equal(json_array_size(unsure), row->want.unknown ? 1 : 0);
        if (row->want.unknown)
            assert_string_equal(tl_ev_item(f, "luns_scope_unknown", 0, NULL), row->want.unknown);
    }
    assert_int_equal(r.n, want_n);

    /* The rule that would have covered the LUN is named with its scope and what it leaves out;
     * the fix is a rule without one. */
    const struct chk_finding *f = tl_find(&r, "device", "VMW_SATP_ALUA/DGC");
    assert_string_equal(f->message,
                        "host device has no SATP claim rule giving VMW_SATP_ALUA LUNs from DGC "
                        "Round Robin with iops=1 (the rule that does is scoped to device naa.d1); "
                        "LUNs presented later will get the default policy");
    assert_string_equal(tl_ev_item(f, "rules_out_of_scope", 0, "scope"), "device naa.d1");
    assert_string_equal(tl_ev_item(f, "rules_out_of_scope", 0, "device"), "naa.d1");
    json_t *scoped = json_array_get(json_object_get(f->evidence, "rules_out_of_scope"), 0);
    assert_string_equal(json_string_value(json_array_get(json_object_get(scoped, "leaves_out"), 0)),
                        "naa.d2");
    assert_string_equal(tl_ev_item(f, "commands", 0, NULL),
                        "esxcli storage nmp satp rule add -s \"VMW_SATP_ALUA\" -V \"DGC\" -M "
                        "\"VRAID\" -P \"VMW_PSP_RR\" -O \"iops=1\"");
    f = tl_find(&r, "driver", "VMW_SATP_SYMM/EMC");
    assert_string_equal(tl_ev_item(f, "rules_out_of_scope", 0, "scope"), "driver lpfc");
    f = tl_find(&r, "tpgs-on-not-alua", NULL);
    assert_string_equal(tl_ev_item(f, "rules_out_of_scope", 0, "scope"), "claim option tpgs_on");
    chk_results_free(&r);
}

int main(void)
{
    return tl_main();
}
