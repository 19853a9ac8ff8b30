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
#include "checks/estate.h"
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
    {"rr-latency",
     {DGC("naa.1")},
     {SYS_ALUA, USER_DGC("policy=latency")},
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
                                             .psp = "VMW_PSP_RR",
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

static const char *ev_item(const struct chk_finding *f, const char *key, size_t i)
{
    return json_string_value(json_array_get(json_object_get(f->evidence, key), i));
}

static void test_table(void **state)
{
    static struct world w;
    struct chk_results r = {0};
    size_t want_n = 0;

    build(&w);
    r = tl_run(&chk_satp_claim_rule, NULL, &w.e, NOW);
    for (size_t i = 0; i < N(rows); i++) {
        const struct host_row *row = &rows[i];
        size_t got = 0, k = 0;
        for (size_t j = 0; j < r.n; j++) {
            const struct chk_finding *f = &r.items[j];
            if (strcmp(f->object_name, row->host))
                continue;
            if (!row->want[k] || strcmp(f->detail, row->want[k]))
                fail_msg("%s: unexpected finding %s: %s", row->host, f->detail, f->message);
            assert_int_equal(f->severity, CHK_WARNING);
            assert_string_equal(f->object_type, "host");
            assert_string_equal(f->object_moref, w.morefs[i]);
            got++;
            k++;
        }
        if (row->want[k])
            fail_msg("%s: no finding %s", row->host, row->want[k]);
        want_n += got;
    }
    assert_int_equal(r.n, want_n);
    chk_results_free(&r);
}

static void test_evidence(void **state)
{
    static struct world w;
    struct chk_results r = {0};

    build(&w);
    r = tl_run(&chk_satp_claim_rule, NULL, &w.e, NOW);

    const struct chk_finding *f = tl_find(&r, "rr-no-options", "VMW_SATP_ALUA/DGC");
    assert_non_null(f);
    assert_string_equal(f->message,
                        "host rr-no-options has no SATP claim rule giving VMW_SATP_ALUA LUNs from "
                        "DGC Round Robin with iops=1; LUNs presented later will get the default "
                        "policy");
    assert_string_equal(tl_ev_str(f, "satp"), "VMW_SATP_ALUA");
    assert_string_equal(tl_ev_str(f, "vendor"), "DGC"); /* trimmed */
    assert_string_equal(ev_item(f, "luns", 0), "naa.1");
    assert_int_equal(tl_ev_int(f, "recommended_iops"), 1);
    assert_string_equal(tl_ev_str(f, "recommended_psp"), "VMW_PSP_RR");
    /* The rules that apply but fall short, as the host has them. */
    json_t *rules = json_object_get(f->evidence, "rules");
    assert_int_equal(json_array_size(rules), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(rules, 1), "psp")),
                        "VMW_PSP_RR");
    assert_true(json_is_null(json_object_get(json_array_get(rules, 1), "psp_options")));
    assert_int_equal(json_array_size(json_object_get(f->evidence, "commands")), 1);
    assert_string_equal(ev_item(f, "commands", 0),
                        "esxcli storage nmp satp rule add -s \"VMW_SATP_ALUA\" -V \"DGC\" -M "
                        "\"VRAID\" -P \"VMW_PSP_RR\" -O \"iops=1\"");

    /* Two LUNs, one uncovered: only it, its model and its command. */
    f = tl_find(&r, "one-model-covered", "VMW_SATP_ALUA/DGC");
    assert_non_null(f);
    assert_int_equal(tl_ev_int(f, "luns_total"), 2);
    assert_int_equal(tl_ev_int(f, "luns_uncovered"), 1);
    assert_int_equal(json_array_size(json_object_get(f->evidence, "luns")), 1);
    assert_string_equal(ev_item(f, "luns", 0), "naa.2");
    assert_string_equal(ev_item(f, "models", 0), "UNITY");
    /* The VRAID rule covers naa.1, not naa.2: only the system rule falls short for naa.2. */
    rules = json_object_get(f->evidence, "rules");
    assert_int_equal(json_array_size(rules), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(rules, 0), "rule_group")),
                        "system");
    assert_string_equal(ev_item(f, "commands", 0),
                        "esxcli storage nmp satp rule add -s \"VMW_SATP_ALUA\" -V \"DGC\" -M "
                        "\"UNITY\" -P \"VMW_PSP_RR\" -O \"iops=1\"");

    /* 001's own rule for the VMAX LUN. */
    f = tl_find(&r, "two-arrays-one-rule", "VMW_SATP_SYMM/EMC");
    assert_non_null(f);
    assert_string_equal(ev_item(f, "commands", 0),
                        "esxcli storage nmp satp rule add -s \"VMW_SATP_SYMM\" -V \"EMC\" -M "
                        "\"SYMMETRIX\" -P \"VMW_PSP_RR\" -O \"iops=1\"");

    /* No vendor: no "from", no -V. */
    f = tl_find(&r, "vendor-unknown", "VMW_SATP_ALUA/");
    assert_non_null(f);
    assert_true(json_is_null(json_object_get(f->evidence, "vendor")));
    assert_null(strstr(f->message, " from "));
    assert_string_equal(ev_item(f, "commands", 0),
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
static void test_param(void **state)
{
    static struct world w;
    struct chk_results r = {0};
    struct chk_settings s;

    build(&w);
    chk_settings_default(&chk_satp_claim_rule, &s);
    s.params[0] = 10;
    r = tl_run(&chk_satp_claim_rule, &s, &w.e, NOW);
    assert_null(tl_find(&r, "rr-iops-2", "VMW_SATP_ALUA/DGC"));
    assert_non_null(tl_find(&r, "rr-iops-1000", "VMW_SATP_ALUA/DGC"));
    const struct chk_finding *f = tl_find(&r, "rr-no-options", "VMW_SATP_ALUA/DGC");
    assert_non_null(f);
    assert_non_null(strstr(f->message, "Round Robin with iops=10;"));
    assert_int_equal(tl_ev_int(f, "recommended_iops"), 10);
    assert_non_null(strstr(ev_item(f, "commands", 0), "-O \"iops=10\""));
    chk_results_free(&r);

    /* iops = 1000 accepts Round Robin's default, which a rule without options leaves. */
    s.params[0] = 1000;
    r = tl_run(&chk_satp_claim_rule, &s, &w.e, NOW);
    assert_null(tl_find(&r, "rr-no-options", "VMW_SATP_ALUA/DGC"));
    assert_null(tl_find(&r, "rr-iops-1000", "VMW_SATP_ALUA/DGC"));
    assert_non_null(tl_find(&r, "rr-latency", "VMW_SATP_ALUA/DGC"));
    assert_non_null(tl_find(&r, "system-rules-only", "VMW_SATP_ALUA/DGC"));
    chk_results_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_evidence),
        cmocka_unit_test(test_param),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
