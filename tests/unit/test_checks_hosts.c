/* Unit tests for the host, network and SAN checks: iscsi-jumbo-frames, iscsi-delayed-ack,
 * vdisk-format, multipath-policy, multipath-redundancy, device-identifier, and host-coverage's
 * devices of other plug-ins. Each table row is one hand-built object and the finding it must
 * (or must not) raise. */
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

extern const struct check chk_iscsi_jumbo_frames, chk_iscsi_delayed_ack, chk_vdisk_format,
    chk_multipath_policy, chk_multipath_redundancy, chk_device_identifier, chk_host_coverage,
    chk_satp_claim_rule;

/* ---- iscsi-jumbo-frames ------------------------------------------------------------------ */

enum sw { SW_VSWITCH, SW_DVS, SW_DVS_MISSING, SW_NONE };

static const struct jumbo_row {
    const char *host;
    int vnic_mtu;
    enum sw sw;
    int switch_mtu;
    int bound;
    int want;
} jumbo_rows[] = {
    {"ok-9000-on-9000", 9000, SW_VSWITCH, 9000, 1, NONE},
    {"vnic-1500", 1500, SW_VSWITCH, 9000, 1, SEV_WARNING},
    {"vnic-8999", 8999, SW_VSWITCH, 9000, 1, SEV_WARNING}, /* one below the threshold */
    {"vswitch-1500", 9000, SW_VSWITCH, 1500, 1, SEV_CRITICAL},
    {"vswitch-8999", 9000, SW_VSWITCH, 8999, 1, SEV_CRITICAL},
    {"both-1500", 1500, SW_VSWITCH, 1500, 1, SEV_WARNING}, /* switch not below the vmknic */
    {"vnic-1500-switch-1400", 1500, SW_VSWITCH, 1400, 1, SEV_CRITICAL},
    {"dvs-1500", 9000, SW_DVS, 1500, 1, SEV_CRITICAL},
    {"dvs-9000", 9000, SW_DVS, 9000, 1, NONE},
    {"dvs-unknown-mtu", 9000, SW_DVS, EST_UNKNOWN, 1, NONE},
    {"dvs-missing", 9000, SW_DVS_MISSING, 0, 1, NONE},
    {"dvs-missing-vnic-1500", 1500, SW_DVS_MISSING, 0, 1, SEV_WARNING},
    {"no-switch-vnic-1500", 1500, SW_NONE, 0, 1, SEV_WARNING},
    {"not-bound", 1500, SW_VSWITCH, 1500, 0, NONE}, /* vmk0 management, not iSCSI */
    {"vnic-mtu-unknown", EST_UNKNOWN, SW_VSWITCH, 1500, 1, NONE},
};

/* Storage for one host per row. */
struct jumbo_world {
    struct est_host hosts[N(jumbo_rows)];
    struct est_vswitch vswitches[N(jumbo_rows)];
    struct est_vnic vnics[N(jumbo_rows)];
    struct est_iscsi_hba hbas[N(jumbo_rows)];
    size_t bound[N(jumbo_rows)][2];
    struct est_dvswitch dvs[N(jumbo_rows)];
    char names[N(jumbo_rows)][64];
    struct estate e;
};

static void jumbo_build(struct jumbo_world *w)
{
    memset(w, 0, sizeof(*w));
    w->e.vcenter = "vc";
    w->e.hosts = w->hosts;
    w->e.n_hosts = N(jumbo_rows);
    w->e.dvswitches = w->dvs;
    for (size_t i = 0; i < N(jumbo_rows); i++) {
        const struct jumbo_row *row = &jumbo_rows[i];
        struct est_host *h = &w->hosts[i];
        struct est_vnic *v = &w->vnics[i];

        snprintf(w->names[i], sizeof(w->names[i]), "host-%zu", i);
        h->moref = w->names[i];
        h->name = row->host;
        h->enable_block_delete = 1;
        w->vswitches[i] = (struct est_vswitch){"vSwitch-iscsi", row->switch_mtu};
        h->vswitches = &w->vswitches[i];
        h->n_vswitches = 1;
        *v = (struct est_vnic){
            .device = "vmk1", .mtu = row->vnic_mtu, .vswitch = EST_NONE, .dvswitch = EST_NONE};
        if (row->sw == SW_VSWITCH) {
            v->portgroup = "iSCSI-1";
            v->vswitch = 0;
        } else if (row->sw == SW_DVS) {
            w->dvs[w->e.n_dvswitches] =
                (struct est_dvswitch){"dvs-m", "dvs-iscsi", "uuid-1", row->switch_mtu};
            v->dvswitch = w->e.n_dvswitches++;
            v->dvs_uuid = "uuid-1";
        } else if (row->sw == SW_DVS_MISSING) {
            v->dvs_uuid = "uuid-gone";
        }
        h->vnics = v;
        h->n_vnics = 1;
        w->hbas[i].device = "vmhba64";
        if (row->bound) {
            w->bound[i][0] = 0;
            w->hbas[i].bound_vnics = w->bound[i];
            w->hbas[i].n_bound_vnics = 1;
        }
        h->iscsi_hbas = &w->hbas[i];
        h->n_iscsi_hbas = 1;
    }
}

TEST(test_jumbo_table)
{
    static struct jumbo_world w;
    size_t want_n = 0;
    char name[128];

    jumbo_build(&w);
    struct chk_results r = tl_run(&chk_iscsi_jumbo_frames, NULL, &w.e, NOW);
    for (size_t i = 0; i < N(jumbo_rows); i++) {
        snprintf(name, sizeof(name), "%s vmk1", jumbo_rows[i].host);
        tl_want(&r, name, jumbo_rows[i].want);
        want_n += jumbo_rows[i].want != NONE;
    }
    assert_int_equal(r.n, want_n);

    /* Evidence: the measured MTUs, the threshold, the switch, the adapter. */
    const struct chk_finding *f = tl_find(&r, "vswitch-1500 vmk1", "vmk1");
    assert_non_null(f);
    assert_string_equal(f->object_type, "vmknic");
    assert_null(f->object_moref); /* a part of a host: named by itself and its host */
    assert_string_equal(f->object_name, "vmk1");
    assert_string_equal(f->host_moref, "host-3");
    assert_string_equal(f->host_name, "vswitch-1500");
    assert_int_equal(tl_ev_int(f, "vmknic_mtu"), 9000);
    assert_int_equal(tl_ev_int(f, "switch_mtu"), 1500);
    assert_int_equal(tl_ev_int(f, "required_mtu"), 9000);
    assert_string_equal(tl_ev_str(f, "switch_name"), "vSwitch-iscsi");
    assert_string_equal(tl_ev_item(f, "bound_to", 0, NULL), "vmhba64");
    assert_true(strstr(f->message, "1500") && strstr(f->message, "9000"));
    f = tl_find(&r, "dvs-1500 vmk1", NULL);
    assert_string_equal(tl_ev_str(f, "switch_type"), "dvs");
    assert_string_equal(tl_ev_str(f, "switch_name"), "dvs-iscsi");
    f = tl_find(&r, "vnic-1500-switch-1400 vmk1", NULL);
    assert_true(json_is_true(json_object_get(f->evidence, "vmknic_below_required")));
    assert_true(json_is_true(json_object_get(f->evidence, "switch_below_vmknic")));
    f = tl_find(&r, "dvs-missing-vnic-1500 vmk1", NULL);
    assert_true(json_is_null(json_object_get(f->evidence, "switch_mtu")));
    assert_non_null(json_object_get(f->evidence, "switch_mtu_unknown"));
    chk_results_free(&r);
}

TEST(test_jumbo_param_and_override)
{
    static struct jumbo_world w;

    jumbo_build(&w);
    struct chk_results r = tl_run_with(&chk_iscsi_jumbo_frames, "mtu", 1500, &w.e, NOW);
    tl_want(&r, "vnic-1500 vmk1", NONE); /* 1500 is now enough */
    tl_want(&r, "both-1500 vmk1", NONE);
    tl_want(&r, "vswitch-1500 vmk1", SEV_CRITICAL); /* the drop rule has no threshold */
    tl_want(&r, "vnic-1500-switch-1400 vmk1", SEV_CRITICAL);
    chk_results_free(&r);

    struct chk_settings s;
    chk_settings_default(&chk_iscsi_jumbo_frames, &s);
    s.severity_override = SEV_INFO;
    r = tl_run(&chk_iscsi_jumbo_frames, &s, &w.e, NOW);
    tl_want(&r, "vswitch-1500 vmk1", SEV_INFO);
    chk_results_free(&r);
}

/* A vmknic bound to two adapters is one finding, naming both. */
TEST(test_jumbo_two_adapters)
{
    struct est_vswitch vs = {"vSwitch1", 9000};
    struct est_vnic v[2] = {
        {.device = "vmk0",
         .mtu = 1500,
         .portgroup = "Management",
         .vswitch = 0,
         .dvswitch = EST_NONE},
        {.device = "vmk1", .mtu = 1500, .portgroup = "iSCSI", .vswitch = 0, .dvswitch = EST_NONE},
    };
    size_t b[1] = {1};
    struct est_iscsi_hba hba[2] = {{.device = "vmhba64", .bound_vnics = b, .n_bound_vnics = 1},
                                   {.device = "vmhba65", .bound_vnics = b, .n_bound_vnics = 1}};
    struct est_host h = {.moref = "host-1",
                         .name = "esx",
                         .vswitches = &vs,
                         .n_vswitches = 1,
                         .vnics = v,
                         .n_vnics = 2,
                         .iscsi_hbas = hba,
                         .n_iscsi_hbas = 2};
    struct estate e = {.vcenter = "vc", .hosts = &h, .n_hosts = 1};

    struct chk_results r = tl_run(&chk_iscsi_jumbo_frames, NULL, &e, NOW);
    assert_int_equal(r.n, 1);
    tl_want(&r, "esx vmk1", SEV_WARNING);
    assert_int_equal(json_array_size(json_object_get(r.items[0].evidence, "bound_to")), 2);
    assert_true(strstr(r.items[0].message, "vmhba64, vmhba65") != NULL);
    chk_results_free(&r);
}

/* ---- iscsi-delayed-ack ------------------------------------------------------------------- */

#define OPT(v, inh)                                                                                \
    {                                                                                              \
        .key = "DelayedAck", .value = (v), .inherited = (inh)                                      \
    }

/* iSCSI targets with one option: a send target, a static target of the adapter's, one on
 * another port than 3260, and one found by the send target at index via. */
#define SEND(addr, opts)                                                                           \
    {                                                                                              \
        .kind = "send", .address = addr, .port = 3260, .options = opts, .n_options = 1,            \
        .send_target = EST_NONE                                                                    \
    }
#define STATIC_AT(addr, port_, iqn, opts)                                                          \
    {                                                                                              \
        .kind = "static", .address = addr, .port = port_, .iscsi_name = iqn, .options = opts,      \
        .n_options = 1, .discovery_method = "staticMethod", .send_target = EST_NONE                \
    }
#define STATIC(addr, iqn, opts) STATIC_AT(addr, 3260, iqn, opts)
#define STATIC_VIA(addr, iqn, opts, via)                                                           \
    {                                                                                              \
        .kind = "static", .address = addr, .port = 3260, .iscsi_name = iqn, .options = opts,       \
        .n_options = 1, .discovery_method = "sendTargetMethod", .send_target = via                 \
    }
/* An iSCSI adapter with its own options and its targets; a host with n of them. */
#define ISCSI_HBA(dev, opts, tgts)                                                                 \
    {                                                                                              \
        .device = dev, .options = opts, .n_options = N(opts), .targets = tgts,                     \
        .n_targets = N(tgts)                                                                       \
    }
#define ISCSI_HOST(m, nm, hbas, n)                                                                 \
    {                                                                                              \
        .moref = m, .name = nm, .iscsi_hbas = hbas, .n_iscsi_hbas = n                              \
    }

TEST(test_delayed_ack)
{
    static struct est_option login[] = {{.key = "LoginTimeout", .value = "5"}};
    /* esx-a: adapter true, both targets inherit (as in the violations scenario). */
    static struct est_option a_opt[] = {{.key = "LoginTimeout", .value = "5"}, OPT("true", 0)};
    static struct est_option inh_true[] = {OPT("true", 1)};
    static struct est_iscsi_target a_t[] = {
        SEND("10.0.1.20", inh_true),
        STATIC("10.0.1.21", "iqn.a0", inh_true),
    };
    /* esx-b: adapter false; send target sets true itself; static inherits false. */
    static struct est_option f_opt[] = {OPT("false", 0)};
    static struct est_option own_true[] = {OPT("true", 0)};
    static struct est_option inh_false[] = {OPT("false", 1)};
    static struct est_iscsi_target b_t[] = {
        SEND("10.0.0.20", own_true),
        STATIC("10.0.0.21", "iqn.b0", inh_false),
    };
    /* esx-c: adapter false, a target whose stale inherited value says true: it follows the
     * adapter (false), and a target without any DelayedAck option (inherits). */
    static struct est_iscsi_target c_t[] = {
        SEND("10.0.2.20", inh_true),
        SEND("10.0.2.21", login),
    };
    /* esx-d: adapter true and a target that sets true itself (two findings), and one that
     * sets false itself (not inheriting, not covered). Value spelled "1". */
    static struct est_option one[] = {OPT("1", 0)};
    static struct est_option own_false[] = {OPT("false", 0)};
    static struct est_iscsi_target d_t[] = {
        STATIC_AT("10.0.3.20", 3261, "iqn.d0", own_true),
        SEND("10.0.3.21", own_false),
        SEND("10.0.3.22", inh_true),
    };
    /* esx-e: adapter value unknown (option missing): not reported, its inheriting target not
     * either; a target with its own true is; a send and a static target on the same portal,
     * both true, are one finding. */
    static struct est_iscsi_target e_t[] = {
        SEND("10.0.4.20", inh_true),
        SEND("10.0.4.21", own_true),
        STATIC("10.0.4.21", "iqn.e0", own_true),
    };
    static struct est_option garbage[] = {OPT("maybe", 0)};
    static struct est_iscsi_hba hba[] = {
        ISCSI_HBA("vmhba64", a_opt, a_t),
        ISCSI_HBA("vmhba64", f_opt, b_t),
        ISCSI_HBA("vmhba64", f_opt, c_t),
        ISCSI_HBA("vmhba64", one, d_t),
        ISCSI_HBA("vmhba64", login, e_t),
        {.device = "vmhba65", .options = garbage, .n_options = 1},
    };
    static struct est_host hosts[] = {
        ISCSI_HOST("host-a", "esx-a", &hba[0], 1),
        ISCSI_HOST("host-b", "esx-b", &hba[1], 1),
        ISCSI_HOST("host-c", "esx-c", &hba[2], 1),
        ISCSI_HOST("host-d", "esx-d", &hba[3], 1),
        ISCSI_HOST("host-e", "esx-e", &hba[4], 2),
    };
    struct estate e = {.vcenter = "vc", .hosts = hosts, .n_hosts = N(hosts)};
    static const struct {
        const char *name, *type, *detail;
    } want[] = {
        {"esx-a vmhba64", "iscsi_hba", "vmhba64"},
        {"esx-b vmhba64 10.0.0.20:3260", "iscsi_target", "vmhba64/10.0.0.20:3260"},
        {"esx-d vmhba64", "iscsi_hba", "vmhba64"},
        {"esx-d vmhba64 10.0.3.20:3261", "iscsi_target", "vmhba64/10.0.3.20:3261"},
        {"esx-e vmhba64 10.0.4.21:3260", "iscsi_target", "vmhba64/10.0.4.21:3260"},
    };

    struct chk_results r = tl_run(&chk_iscsi_delayed_ack, NULL, &e, NOW);
    for (size_t i = 0; i < N(want); i++) {
        const struct chk_finding *f = tl_find(&r, want[i].name, want[i].detail);
        if (!f)
            fail_msg("no finding on %s", want[i].name);
        assert_int_equal(f->severity, SEV_WARNING);
        assert_string_equal(f->object_type, want[i].type);
        assert_true(strstr(f->message, "esxcli iscsi") != NULL);
    }
    assert_int_equal(r.n, N(want));

    /* The adapter finding lists the targets it covers; not the one that sets its own false. */
    const struct chk_finding *f = tl_find(&r, "esx-a vmhba64", NULL);
    json_t *inh = json_object_get(f->evidence, "targets_inheriting");
    assert_int_equal(json_array_size(inh), 2);
    assert_string_equal(json_string_value(json_array_get(inh, 0)), "10.0.1.20:3260");
    assert_string_equal(json_string_value(json_array_get(inh, 1)), "10.0.1.21:3260");
    assert_true(json_is_true(json_object_get(f->evidence, "delayed_ack")));
    assert_string_equal(tl_ev_str(f, "command"), "esxcli iscsi adapter param set --adapter=vmhba64 "
                                                 "--key=DelayedAck --value=false");
    f = tl_find(&r, "esx-d vmhba64", "vmhba64");
    inh = json_object_get(f->evidence, "targets_inheriting");
    assert_int_equal(json_array_size(inh), 1);
    assert_string_equal(json_string_value(json_array_get(inh, 0)), "10.0.3.22:3260");

    f = tl_find(&r, "esx-b vmhba64 10.0.0.20:3260", NULL);
    assert_true(json_is_false(json_object_get(f->evidence, "adapter_delayed_ack")));
    assert_true(strstr(tl_ev_str(f, "command"), "sendtarget param set --adapter=vmhba64 "
                                                "--address=10.0.0.20:3260 --key=DelayedAck "
                                                "--value=false") != NULL);
    f = tl_find(&r, "esx-d vmhba64 10.0.3.20:3261", NULL);
    assert_true(strstr(tl_ev_str(f, "command"), "target portal param set --adapter=vmhba64 "
                                                "--address=10.0.3.20:3261 --name=iqn.d0") != NULL);
    f = tl_find(&r, "esx-e vmhba64 10.0.4.21:3260", NULL);
    assert_true(json_is_null(json_object_get(f->evidence, "adapter_delayed_ack")));
    assert_int_equal(json_array_size(json_object_get(f->evidence, "kinds")), 2);
    chk_results_free(&r);
}

/* Targets found by a send target inherit from it, not from the adapter; an array presenting
 * one IQN per volume on one portal is one finding that names every IQN, each with its own
 * command. Each host is one row: its adapter value, its targets, the findings it must raise. */
#define VOL "iqn.2001-05.com.equallogic:0-8a0906-vol"

static struct est_option st_true[] = {OPT("true", 0)}, st_false[] = {OPT("false", 0)},
                         st_inh_true[] = {OPT("true", 1)}, st_inh_false[] = {OPT("false", 1)};

TEST(test_delayed_ack_send_targets)
{
    /* esx-f: adapter false; the send target sets true; three volumes found by it inherit it
     * (planted); a static target of its own on another portal inherits false (twin). */
    static struct est_iscsi_target f_t[] = {
        SEND("10.0.5.10", st_true),
        STATIC_VIA("10.0.5.10", VOL "1", st_inh_true, 0),
        STATIC_VIA("10.0.5.10", VOL "2", st_inh_true, 0),
        STATIC_VIA("10.0.5.10", VOL "3", st_inh_true, 0),
        STATIC("10.0.5.20", "iqn.cx.a0", st_inh_false),
    };
    /* esx-g: adapter true; the send target sets false, so the volumes it found are false
     * whatever their stale inherited value says (twin); a static target of the adapter's
     * follows the adapter. */
    static struct est_iscsi_target g_t[] = {
        SEND("10.0.6.10", st_false),
        STATIC_VIA("10.0.6.10", VOL "1", st_inh_true, 0),
        STATIC_VIA("10.0.6.10", VOL "2", st_inh_false, 0),
        STATIC("10.0.6.20", "iqn.cx.g0", st_inh_true),
    };
    /* esx-h: adapter true; the send target inherits, so the volume it found follows the
     * adapter through it: both are the adapter finding's. */
    static struct est_iscsi_target h_t[] = {
        SEND("10.0.7.10", st_inh_true),
        STATIC_VIA("10.0.7.10", VOL "1", st_inh_true, 0),
    };
    /* esx-i: adapter false; the send target (true) found a volume on another portal: two
     * portals, two findings; the volume's names the send target's command first. */
    static struct est_iscsi_target i_t[] = {
        SEND("10.0.8.10", st_true),
        STATIC_VIA("10.0.8.11", VOL "1", st_inh_true, 0),
    };
    /* esx-j: adapter false; one volume sets true itself on the send target's portal, whose
     * send target is false: one finding, that volume alone. */
    static struct est_iscsi_target j_t[] = {
        SEND("10.0.9.10", st_false),
        STATIC_VIA("10.0.9.10", VOL "1", st_true, 0),
        STATIC_VIA("10.0.9.10", VOL "2", st_inh_false, 0),
    };
    static struct est_option a_true[] = {OPT("true", 0)}, a_false[] = {OPT("false", 0)};
    static struct est_iscsi_hba hba[] = {
        ISCSI_HBA("vmhba64", a_false, f_t),
        ISCSI_HBA("vmhba64", a_true, g_t),
        ISCSI_HBA("vmhba64", a_true, h_t),
        ISCSI_HBA("vmhba64", a_false, i_t),
        ISCSI_HBA("vmhba64", a_false, j_t),
    };
    static struct est_host hosts[] = {
        ISCSI_HOST("host-f", "esx-f", &hba[0], 1),
        ISCSI_HOST("host-g", "esx-g", &hba[1], 1),
        ISCSI_HOST("host-h", "esx-h", &hba[2], 1),
        ISCSI_HOST("host-i", "esx-i", &hba[3], 1),
        ISCSI_HOST("host-j", "esx-j", &hba[4], 1),
    };
    static const struct {
        const char *name;
        size_t targets; /* in the evidence */
    } want[] = {
        {"esx-f vmhba64 10.0.5.10:3260", 4},
        {"esx-g vmhba64", 1},
        {"esx-h vmhba64", 2},
        {"esx-i vmhba64 10.0.8.10:3260", 1},
        {"esx-i vmhba64 10.0.8.11:3260", 1},
        {"esx-j vmhba64 10.0.9.10:3260", 1},
    };
    struct estate e = {.vcenter = "vc", .hosts = hosts, .n_hosts = N(hosts)};
    struct chk_results r = tl_run(&chk_iscsi_delayed_ack, NULL, &e, NOW);

    for (size_t i = 0; i < N(want); i++) {
        const struct chk_finding *f = tl_find(&r, want[i].name, NULL);
        if (!f)
            fail_msg("no finding on %s", want[i].name);
        const char *key = strcmp(f->object_type, "iscsi_hba") ? "targets" : "targets_inheriting";
        assert_int_equal(json_array_size(json_object_get(f->evidence, key)), want[i].targets);
    }
    assert_int_equal(r.n, N(want));

    /* One portal, every IQN named, each with its own command; the send target's first. */
    const struct chk_finding *f = tl_find(&r, "esx-f vmhba64 10.0.5.10:3260", NULL);
    assert_string_equal(f->detail, "vmhba64/10.0.5.10:3260"); /* the portal's, as before */
    json_t *cmds = json_object_get(f->evidence, "commands");
    assert_int_equal(json_array_size(cmds), 4);
    assert_string_equal(json_string_value(json_array_get(cmds, 0)),
                        "esxcli iscsi adapter discovery sendtarget param set --adapter=vmhba64 "
                        "--address=10.0.5.10:3260 --key=DelayedAck --value=false");
    for (int v = 1; v <= 3; v++) {
        char iqn[64], cmd[256];
        snprintf(iqn, sizeof(iqn), VOL "%d", v);
        snprintf(cmd, sizeof(cmd),
                 "esxcli iscsi adapter target portal param set --adapter=vmhba64 "
                 "--address=10.0.5.10:3260 --name=%s --key=DelayedAck --value=false",
                 iqn);
        assert_non_null(strstr(f->message, iqn));
        assert_string_equal(json_string_value(json_array_get(cmds, v)), cmd);
        json_t *t = json_array_get(json_object_get(f->evidence, "targets"), (size_t)v);
        assert_string_equal(json_string_value(json_object_get(t, "iscsi_name")), iqn);
        assert_string_equal(json_string_value(json_object_get(t, "delayed_ack_from")),
                            "send target 10.0.5.10:3260");
    }
    assert_string_equal(tl_ev_str(f, "command"), json_string_value(json_array_get(cmds, 0)));
    assert_true(tl_ev_bool(f, "inherited"));

    /* The adapter finding covers only the targets that follow it. */
    f = tl_find(&r, "esx-g vmhba64", "vmhba64");
    assert_string_equal(tl_ev_item(f, "targets_inheriting", 0, NULL), "10.0.6.20:3260");
    f = tl_find(&r, "esx-h vmhba64", "vmhba64");
    assert_string_equal(tl_ev_item(f, "inheriting", 1, "iscsi_name"), VOL "1");

    /* A volume on another portal than its send target: named, the send target's fix first. */
    f = tl_find(&r, "esx-i vmhba64 10.0.8.11:3260", NULL);
    assert_non_null(strstr(f->message, VOL "1"));
    assert_non_null(strstr(f->message, "sendtarget param set --adapter=vmhba64 "
                                       "--address=10.0.8.10:3260"));
    assert_string_equal(tl_ev_str(f, "iscsi_name"), VOL "1");

    /* Its own true, on a portal whose send target is false: that volume alone. */
    f = tl_find(&r, "esx-j vmhba64 10.0.9.10:3260", NULL);
    assert_string_equal(tl_ev_str(f, "iscsi_name"), VOL "1");
    assert_false(tl_ev_bool(f, "inherited"));
    assert_non_null(strstr(f->message, "sets DelayedAck to true itself"));
    chk_results_free(&r);
}

/* ---- vdisk-format ------------------------------------------------------------------------ */

enum { DS_VMFS6, DS_VMFS5, DS_NFS };
enum { H_EBD1, H_EBD0, H_EBDUNK };

static const struct vd_row {
    const char *vm;
    const char *ft;     /* NULL = unknown */
    const char *shared; /* the controller's sharedBus */
    const char *format;
    int hw, ds, host, template;
    int want;
} vd_rows[] = {
    /* FT on ESXi 6.5 and later (esx-ebd1 runs 7.0.3) supports thin and lazy-zeroed disks: info,
     * quoting the guide; on a host older than 6.5 (esx-ebd0, 6.0.0) legacy FT can still run:
     * critical; a host of unknown version is not guessed to be old. */
    {"ft-lazy", "running", "noSharing", "lazyzeroedthick", 13, DS_VMFS6, H_EBD1, 0, SEV_INFO},
    {"ft-thin", "needSecondary", "noSharing", "thin", 13, DS_VMFS6, H_EBD1, 0, SEV_INFO},
    {"ft-lazy-legacy", "running", "noSharing", "lazyzeroedthick", 13, DS_VMFS6, H_EBD0, 0,
     SEV_CRITICAL},
    {"ft-lazy-version-unknown", "running", "noSharing", "lazyzeroedthick", 13, DS_VMFS6, H_EBDUNK,
     0, SEV_INFO},
    {"ft-eager", "running", "noSharing", "eagerzeroedthick", 13, DS_VMFS6, H_EBD1, 0, NONE},
    {"ft-notconfigured", "notConfigured", "noSharing", "lazyzeroedthick", 13, DS_VMFS6, H_EBD1, 0,
     NONE},
    {"ft-unknown", NULL, "noSharing", "lazyzeroedthick", 13, DS_VMFS6, H_EBD1, 0, NONE},
    {"ft-format-unknown", "running", "noSharing", NULL, 13, DS_VMFS6, H_EBD1, 0, NONE},
    {"mscs-phys-thin", "notConfigured", "physicalSharing", "thin", 13, DS_VMFS6, H_EBD1, 0,
     SEV_CRITICAL},
    {"mscs-virt-lazy", "notConfigured", "virtualSharing", "lazyzeroedthick", 13, DS_VMFS6, H_EBD1,
     0, SEV_CRITICAL},
    {"mscs-eager", "notConfigured", "physicalSharing", "eagerzeroedthick", 13, DS_VMFS6, H_EBD1, 0,
     NONE},
    {"mscs-rdm", "notConfigured", "physicalSharing", "rdm-physical", 13, DS_VMFS6, H_EBD1, 0, NONE},
    /* Thin disks without FT or a shared bus are the guide's choice to make (in-guest reclaim
     * on VMFS5 is space-reclaim's rule): none of these is vdisk-format's. */
    {"thin-vmfs6", "notConfigured", "noSharing", "thin", 10, DS_VMFS6, H_EBD0, 0, NONE},
    {"thin-nfs", "notConfigured", "noSharing", "thin", 10, DS_NFS, H_EBD0, 0, NONE},
    {"thin-vmfs5-old-noebd", "notConfigured", "noSharing", "thin", 10, DS_VMFS5, H_EBD0, 0, NONE},
    {"template-ft-thin", "running", "noSharing", "thin", 13, DS_VMFS6, H_EBD1, 1, NONE},
    {"ft-lazy-on-vmfs5", "running", "noSharing", "lazyzeroedthick", 10, DS_VMFS5, H_EBD0, 0,
     SEV_CRITICAL},
    /* On NFS the NAS, not the admin, decides the format: no format rule applies there. */
    {"ft-thin-on-nfs", "running", "noSharing", "thin", 13, DS_NFS, H_EBD1, 0, NONE},
    {"mscs-lazy-on-nfs", "notConfigured", "physicalSharing", "lazyzeroedthick", 13, DS_NFS, H_EBD1,
     0, NONE},
};

/* Multi-writer disks (backing.sharing sharingMultiWriter: Oracle RAC, clustered file systems) on
 * a noSharing controller, no FT: eager-zeroed thick on VMFS (KB 1034165). */
static const struct mw_row {
    const char *vm, *sharing, *format;
    int ds, want;
} mw_rows[] = {
    {"mw-lazy", "sharingMultiWriter", "lazyzeroedthick", DS_VMFS6, SEV_CRITICAL},
    {"mw-thin", "sharingMultiWriter", "thin", DS_VMFS5, SEV_CRITICAL},
    {"mw-eager", "sharingMultiWriter", "eagerzeroedthick", DS_VMFS6, NONE},
    {"mw-none-lazy", "sharingNone", "lazyzeroedthick", DS_VMFS6, NONE},
    {"mw-unreported", NULL, "thin", DS_VMFS6, NONE},
    {"mw-on-nfs", "sharingMultiWriter", "thin", DS_NFS, NONE},
};

struct vd_world {
    struct est_datastore ds[3];
    struct est_host hosts[3];
    struct est_vm vms[N(vd_rows) + 1 + N(mw_rows)];
    struct est_controller ctl[N(vd_rows) + 1 + N(mw_rows)][2];
    struct est_disk disks[N(vd_rows) + 1 + N(mw_rows)][2];
    char morefs[N(vd_rows) + 1 + N(mw_rows)][32];
    struct estate e;
};

static void vd_build(struct vd_world *w)
{
    memset(w, 0, sizeof(*w));
    w->ds[DS_VMFS6] = (struct est_datastore){
        .moref = "ds-6", .name = "ds-vmfs6", .type = "VMFS", .vmfs_major = 6, .pod = EST_NONE};
    w->ds[DS_VMFS5] = (struct est_datastore){
        .moref = "ds-5", .name = "ds-vmfs5", .type = "VMFS", .vmfs_major = 5, .pod = EST_NONE};
    w->ds[DS_NFS] =
        (struct est_datastore){.moref = "ds-n", .name = "ds-nfs", .type = "NFS", .pod = EST_NONE};
    w->hosts[H_EBD1] =
        (struct est_host){.moref = "h1", .name = "esx-ebd1", .product_version = "7.0.3",
                          .enable_block_delete = 1};
    w->hosts[H_EBD0] =
        (struct est_host){.moref = "h0", .name = "esx-ebd0", .product_version = "6.0.0",
                          .enable_block_delete = 0};
    w->hosts[H_EBDUNK] =
        (struct est_host){.moref = "hu", .name = "esx-ebdunk", .enable_block_delete = EST_UNKNOWN};
    for (size_t i = 0; i < N(vd_rows); i++) {
        const struct vd_row *row = &vd_rows[i];
        struct est_vm *vm = &w->vms[i];
        snprintf(w->morefs[i], sizeof(w->morefs[i]), "vm-%zu", i);
        w->ctl[i][0] = (struct est_controller){1000, "ParaVirtualSCSIController", row->shared};
        w->disks[i][0] = (struct est_disk){.key = 2000,
                                           .label = "Hard disk 1",
                                           .file_name = "[ds] vm/vm.vmdk",
                                           .datastore = (size_t)row->ds,
                                           .capacity_bytes = 40000000000,
                                           .format = row->format,
                                           .controller = 0};
        *vm = (struct est_vm){.moref = w->morefs[i],
                              .name = row->vm,
                              .template = row->template,
                              .power_state = "poweredOn",
                              .ft_state = row->ft,
                              .hw_version = row->hw,
                              .host = (size_t)row->host,
                              .controllers = w->ctl[i],
                              .n_controllers = 1,
                              .disks = w->disks[i],
                              .n_disks = 1};
    }
    /* An MSCS node: thin boot disk on its own noSharing controller on VMFS6 (fine), shared
     * data disk lazy-zeroed on the physicalSharing controller (critical, and only that one). */
    size_t m = N(vd_rows);
    snprintf(w->morefs[m], sizeof(w->morefs[m]), "vm-mscs-node");
    w->ctl[m][0] = (struct est_controller){1000, "ParaVirtualSCSIController", "noSharing"};
    w->ctl[m][1] = (struct est_controller){1001, "VirtualLsiLogicSASController", "physicalSharing"};
    w->disks[m][0] = (struct est_disk){.key = 2000,
                                       .label = "Hard disk 1",
                                       .datastore = DS_VMFS6,
                                       .capacity_bytes = 40000000000,
                                       .format = "thin",
                                       .controller = 0};
    w->disks[m][1] = (struct est_disk){.key = 2016,
                                       .label = "Hard disk 2",
                                       .datastore = DS_VMFS6,
                                       .capacity_bytes = 10000000000,
                                       .format = "lazyzeroedthick",
                                       .controller = 1};
    w->vms[m] = (struct est_vm){.moref = w->morefs[m],
                                .name = "mscs-node",
                                .ft_state = NULL,
                                .hw_version = 13,
                                .host = H_EBD1,
                                .controllers = w->ctl[m],
                                .n_controllers = 2,
                                .disks = w->disks[m],
                                .n_disks = 2};
    for (size_t i = 0; i < N(mw_rows); i++) {
        size_t k = N(vd_rows) + 1 + i;
        snprintf(w->morefs[k], sizeof(w->morefs[k]), "vm-mw-%zu", i);
        w->ctl[k][0] = (struct est_controller){1000, "ParaVirtualSCSIController", "noSharing"};
        w->disks[k][0] = (struct est_disk){.key = 2000,
                                           .label = "Hard disk 1",
                                           .datastore = (size_t)mw_rows[i].ds,
                                           .capacity_bytes = 40000000000,
                                           .format = mw_rows[i].format,
                                           .controller = 0,
                                           .sharing = mw_rows[i].sharing};
        w->vms[k] = (struct est_vm){.moref = w->morefs[k],
                                    .name = mw_rows[i].vm,
                                    .ft_state = "notConfigured",
                                    .hw_version = 13,
                                    .host = H_EBD1,
                                    .controllers = w->ctl[k],
                                    .n_controllers = 1,
                                    .disks = w->disks[k],
                                    .n_disks = 1};
    }
    w->e = (struct estate){.vcenter = "vc",
                           .datastores = w->ds,
                           .n_datastores = 3,
                           .hosts = w->hosts,
                           .n_hosts = 3,
                           .vms = w->vms,
                           .n_vms = N(vd_rows) + 1 + N(mw_rows)};
}

TEST(test_vdisk_table)
{
    static struct vd_world w;

    vd_build(&w);
    struct chk_results r = tl_run(&chk_vdisk_format, NULL, &w.e, NOW);
    size_t want_n = 1 /* mscs-node */ + TL_WANT_EACH(&r, vd_rows, N(vd_rows), vm, want) +
                    TL_WANT_EACH(&r, mw_rows, N(mw_rows), vm, want);
    tl_want(&r, "mscs-node", SEV_CRITICAL);
    assert_int_equal(r.n, want_n);

    const struct chk_finding *f = tl_find(&r, "mscs-node", NULL);
    assert_string_equal(f->object_type, "vm");
    assert_null(f->detail);
    assert_int_equal(json_array_size(json_object_get(f->evidence, "disks_not_eager_zeroed")), 1);
    assert_string_equal(tl_ev_item(f, "disks_not_eager_zeroed", 0, "label"), "Hard disk 2");
    assert_string_equal(tl_ev_item(f, "disks_not_eager_zeroed", 0, "reason"), "physicalSharing");
    assert_int_equal(json_array_size(json_object_get(f->evidence, "shared_controllers")), 1);

    f = tl_find(&r, "ft-lazy", NULL);
    assert_string_equal(tl_ev_str(f, "ft_state"), "running");
    assert_true(strstr(f->message, "Fault Tolerance") != NULL);
    /* Current FT: the guide's own words, and that FT no longer requires it. */
    assert_non_null(strstr(f->message, "\"Best practice is to use the default virtual disk format "
                                       "unless specific needs dictate"));
    assert_non_null(strstr(f->message, "since vSphere 6.5 supports thin and lazy-zeroed"));
    assert_string_equal(tl_ev_str(f, "host_version"), "7.0.3");
    assert_false(tl_ev_bool(f, "legacy_ft_possible"));
    f = tl_find(&r, "ft-lazy-legacy", NULL);
    assert_true(tl_ev_bool(f, "legacy_ft_possible"));
    assert_non_null(strstr(f->message, "older than 6.5"));
    f = tl_find(&r, "ft-lazy-version-unknown", NULL);
    assert_true(json_is_null(json_object_get(f->evidence, "legacy_ft_possible")));

    f = tl_find(&r, "mw-lazy", NULL);
    assert_string_equal(tl_ev_item(f, "disks_not_eager_zeroed", 0, "reason"), "multi-writer");
    assert_non_null(strstr(f->message, "KB 1034165"));

    /* The FT VM on VMFS5 is judged like any other: one critical finding. */
    f = tl_find(&r, "ft-lazy-on-vmfs5", NULL);
    assert_int_equal(json_array_size(json_object_get(f->evidence, "disks_not_eager_zeroed")), 1);
    assert_null(json_object_get(f->evidence, "thin_disks_without_guest_reclaim"));
    chk_results_free(&r);
}

/* ---- LUN checks -------------------------------------------------------------------------- */

/* A path through an adapter the host does not list. */
#define P(n, s)                                                                                    \
    {                                                                                              \
        .name = n, .state = s, .hba = EST_NONE                                                     \
    }

static struct est_path p_aa[] = {P("vmhba2:C0:T0:L1", "active"), P("vmhba3:C0:T0:L1", "active")};
static struct est_path p_a[] = {P("vmhba2:C0:T0:L1", "active")};
static struct est_path p_ad[] = {P("vmhba2:C0:T0:L1", "active"), P("vmhba3:C0:T0:L1", "dead")};
static struct est_path p_as[] = {P("vmhba2:C0:T0:L1", "active"), P("vmhba3:C0:T0:L1", "standby")};
static struct est_path p_adis[] = {P("vmhba2:C0:T0:L1", "active"), P("vmhba3:C0:T0:L1", "disabled")};
static struct est_path p_au[] = {P("vmhba2:C0:T0:L1", "active"), P("vmhba3:C0:T0:L1", "unknown")};
static struct est_path p_aaa[] = {
    P("vmhba2:C0:T0:L1", "active"), P("vmhba3:C0:T0:L1", "active"), P("vmhba2:C0:T1:L1", "active")};
static struct est_path p_aad[] = {
    P("vmhba2:C0:T0:L1", "active"), P("vmhba3:C0:T0:L1", "active"), P("vmhba2:C0:T1:L1", "dead")};
static struct est_path p_dd[] = {P("vmhba2:C0:T0:L1", "dead"), P("vmhba3:C0:T0:L1", "dead")};

/* Paths through esx's adapters (tl_hbas): what est_lun_locality() and the adapter rule of
 * multipath-redundancy read. */
static struct est_path pa_one_raid[] = {TL_PATH("vmhba0", TL_RAID0, 0, "active")};
static struct est_path pa_one_sas[] = {TL_PATH("vmhba4", TL_SAS4, 0, "active")};
static struct est_path pa_one_fc[] = {TL_PATH("vmhba2", TL_FC2, 0, "active")};
static struct est_path pa_rdma[] = {TL_PATH("vmhba6", TL_RDMA6, 0, "active"),
                                    TL_PATH("vmhba7", TL_RDMA7, 0, "active")};
static struct est_path pa_one_rdma[] = {TL_PATH("vmhba6", TL_RDMA6, 0, "active")};
static struct est_path pa_one_nvme[] = {TL_PATH("vmhba5", TL_NVME5, 0, "active")};
static struct est_path pa_alua[] = {
    TL_PATH("vmhba2", TL_FC2, 0, "active"), TL_PATH("vmhba3", TL_FC3, 0, "active"),
    TL_PATH("vmhba2", TL_FC2, 1, "standby"), TL_PATH("vmhba3", TL_FC3, 1, "standby")};
static struct est_path pa_one_hba[] = {TL_PATH("vmhba2", TL_FC2, 0, "active"),
                                       TL_PATH("vmhba2", TL_FC2, 1, "active")};
static struct est_path pa_off[] = {TL_PATH("vmhba2", TL_FC2, 0, "active"),
                                   TL_PATH("vmhba3", TL_FC3, 0, "off")};
static struct est_path pa_standby_one_hba[] = {TL_PATH("vmhba2", TL_FC2, 0, "active"),
                                               TL_PATH("vmhba2", TL_FC2, 1, "standby")};
static struct est_path pa_standby_only[] = {TL_PATH("vmhba2", TL_FC2, 0, "standby"),
                                            TL_PATH("vmhba3", TL_FC3, 0, "standby")};
static struct est_path pa_sw_iscsi[] = {TL_PATH("vmhba64", TL_SWISCSI, 0, "active"),
                                        TL_PATH("vmhba64", TL_SWISCSI, 1, "active")};
static struct est_path pa_hw_iscsi[] = {TL_PATH("vmhba65", TL_HWISCSI, 0, "active"),
                                        TL_PATH("vmhba65", TL_HWISCSI, 1, "active")};
static struct est_path pa_unlisted[] = {
    TL_PATH("vmhba2", TL_FC2, 0, "active"),
    {.name = "vmhba9:C0:T0:L1", .state = "active", .adapter = "vmhba9", .hba = EST_NONE}};

#define PATHS(p) p, N(p)
#define HPP_TYPE "HostMultipathInfoHppLogicalUnitPolicy"
#define RRCFG(n) "{policy=rr,iops=" #n ",bytes=10485760,useANO=0; lastPathIndex=0}"
#define RR_LATENCY                                                                                 \
    "{policy=latency,latencyEvalTime=180000,samplingCycles=16,curSamplingCycle=1,useANO=0; "      \
    "CurrentPath=vmhba2:C0:T0:L1: NumIOsPending=0,latency=0}"

/* One LUN per row, on host "esx" (host 0) or on "esx-noesxcli" (host 1, an esxcli gap). */
static const struct lun_row {
    const char *canonical;
    int local;
    const char *psp;
    int iops;
    const char *cfg;
    struct est_path *paths;
    size_t n_paths;
    int host;
    int want_policy, want_redundancy, want_ident;
} lun_rows[] = {
    {"naa.a3-rr1", 0, "VMW_PSP_RR", 1, RRCFG(1), PATHS(p_aa), 0, NONE, NONE, NONE},
    {"naa.a1-mru", 0, "VMW_PSP_MRU", EST_UNKNOWN, NULL, PATHS(p_aa), 0, SEV_WARNING, NONE, NONE},
    {"naa.fixed", 0, "VMW_PSP_FIXED", EST_UNKNOWN, NULL, PATHS(p_aa), 0, SEV_WARNING, NONE, NONE},
    {"naa.a2-rr1000", 0, "VMW_PSP_RR", 1000, RRCFG(1000), PATHS(p_aa), 0, SEV_WARNING, NONE, NONE},
    {"naa.rr2", 0, "VMW_PSP_RR", 2, RRCFG(2), PATHS(p_aa), 0, SEV_WARNING, NONE, NONE},
    {"naa.rr-unknown", 0, "VMW_PSP_RR", EST_UNKNOWN, NULL, PATHS(p_aa), 0, SEV_INFO, NONE, NONE},
    /* Round Robin with the limit unread (esxcli refused): no claim either way, the host is
     * left unverified for the check (test_multipath_policy_evidence). */
    {"naa.b1-noesxcli", 0, "VMW_PSP_RR", EST_UNKNOWN, NULL, PATHS(p_aa), 1, NONE, NONE, NONE},
    {"naa.rr-bytes", 0, "VMW_PSP_RR", 1, "{policy=bytes,iops=1,bytes=10485760,useANO=0}",
     PATHS(p_aa), 0, SEV_WARNING, NONE, NONE},
    {"naa.rr-iops-type", 0, "VMW_PSP_RR", 1, "{policy=iops,iops=1,bytes=10485760,useANO=0}",
     PATHS(p_aa), 0, NONE, NONE, NONE},
    /* Latency-based Round Robin (6.7 U1+) uses every path: accepted, info where the site asks
     * for iops=1 (the default). */
    {"naa.rr-latency", 0, "VMW_PSP_RR", EST_UNKNOWN, RR_LATENCY, PATHS(p_aa), 0, SEV_INFO, NONE,
     NONE},
    /* A vendor's own PSP under NMP (HPE Nimble, EqualLogic MEM, Hitachi HDLM) is the vendor's
     * supported multipathing: not told to use Round Robin. Its paths are still judged. */
    {"naa.nimble-directed", 0, "NIMBLE_PSP_DIRECTED", EST_UNKNOWN, NULL, PATHS(p_aa), 0, NONE,
     NONE, NONE},
    {"naa.hdlm", 0, "HTI_PSP_HDLM_EXLBK", EST_UNKNOWN, NULL, PATHS(p_aa), 0, NONE, NONE, NONE},
    {"naa.eql-one-path", 0, "DELL_PSP_EQL_ROUTED", EST_UNKNOWN, NULL, PATHS(p_a), 0, NONE,
     SEV_CRITICAL, NONE},
    {"naa.a4-onepath", 0, "VMW_PSP_RR", 1, RRCFG(1), PATHS(p_a), 0, NONE, SEV_CRITICAL, NONE},
    {"naa.mru-onepath", 0, "VMW_PSP_MRU", EST_UNKNOWN, NULL, PATHS(p_a), 0, NONE, SEV_CRITICAL,
     NONE},
    {"naa.a5-dead", 0, "VMW_PSP_RR", 1, RRCFG(1), PATHS(p_ad), 0, NONE, SEV_CRITICAL, NONE},
    /* Still two live paths, but a dead one means a failed component: critical. */
    {"naa.two-live-one-dead", 0, "VMW_PSP_RR", 1, RRCFG(1), PATHS(p_aad), 0, NONE, SEV_CRITICAL,
     NONE},
    {"naa.all-dead", 0, "VMW_PSP_RR", 1, RRCFG(1), PATHS(p_dd), 0, NONE, SEV_CRITICAL, NONE},
    {"naa.standby", 0, "VMW_PSP_MRU", EST_UNKNOWN, NULL, PATHS(p_as), 0, SEV_WARNING, NONE, NONE},
    {"naa.disabled", 0, "VMW_PSP_RR", 1, RRCFG(1), PATHS(p_adis), 0, NONE, SEV_CRITICAL, NONE},
    {"naa.unknown-state", 0, "VMW_PSP_RR", 1, RRCFG(1), PATHS(p_au), 0, NONE, NONE, NONE},
    {"naa.three", 0, "VMW_PSP_RR", 1, RRCFG(1), PATHS(p_aaa), 0, NONE, NONE, NONE},
    {"naa.nopaths", 0, "VMW_PSP_RR", 1, RRCFG(1), NULL, 0, 0, NONE, SEV_CRITICAL, NONE},
    {"naa.no-multipath-info", 0, NULL, EST_UNKNOWN, NULL, NULL, 0, 0, NONE, NONE, NONE},
    {"sym.000192601234533031323334", 0, "VMW_PSP_RR", 1, RRCFG(1), PATHS(p_aa), 0, NONE, NONE,
     SEV_WARNING},
    {"vml.0200000000", 0, "VMW_PSP_RR", 1, RRCFG(1), PATHS(p_aa), 0, NONE, NONE, SEV_WARNING},
    {"eui.0011223344556677", 0, "VMW_PSP_RR", 1, RRCFG(1), PATHS(p_aa), 0, NONE, NONE, NONE},
    {"t10.NVMe____Dell_Express_Flash", 0, "VMW_PSP_RR", 1, RRCFG(1), PATHS(p_aa), 0, NONE, NONE,
     NONE},
    /* Local boot disk on FIXED with one path: not SAN, no check may flag it. */
    {"mpx.vmhba0:C0:T0:L0", 1, "VMW_PSP_FIXED", EST_UNKNOWN, NULL, PATHS(p_a), 0, NONE, NONE, NONE},
    /* Locality unknown: skipped by all three rather than guessed. */
    {"sym.unknown-locality", EST_UNKNOWN, "VMW_PSP_MRU", EST_UNKNOWN, NULL, PATHS(p_ad), 0, NONE,
     NONE, NONE},
    /* No answer, two paths through local SAS controllers: maybe a shared SAS array; not
     * guessed (on MRU, so multipath-policy would say so if it were judged). */
    {"naa.sas-two-paths-unanswered", EST_UNKNOWN, "VMW_PSP_MRU", EST_UNKNOWN, NULL,
     PATHS(tl_paths_sas), 0, NONE, NONE, NONE},
    /* No answer, every path through a Fibre Channel adapter: SAN. */
    {"sym.fc-unanswered", EST_UNKNOWN, "VMW_PSP_MRU", EST_UNKNOWN, NULL, PATHS(tl_paths_fc), 0,
     SEV_WARNING, NONE, SEV_WARNING},
    {"naa.fc-one-path-unanswered", EST_UNKNOWN, "VMW_PSP_RR", 1, RRCFG(1), PATHS(pa_one_fc), 0,
     NONE, SEV_CRITICAL, NONE},

    /* Standby is usable, off is not; two paths through one adapter are not redundant. */
    {"naa.alua-standby", 0, "VMW_PSP_RR", 1, RRCFG(1), PATHS(pa_alua), 0, NONE, NONE, NONE},
    {"naa.standby-only", 0, "VMW_PSP_RR", 1, RRCFG(1), PATHS(pa_standby_only), 0, NONE, NONE,
     NONE},
    {"naa.one-hba", 0, "VMW_PSP_RR", 1, RRCFG(1), PATHS(pa_one_hba), 0, NONE, SEV_CRITICAL, NONE},
    {"naa.active-off", 0, "VMW_PSP_RR", 1, RRCFG(1), PATHS(pa_off), 0, NONE, SEV_CRITICAL, NONE},
    {"naa.standby-one-hba", 0, "VMW_PSP_RR", 1, RRCFG(1), PATHS(pa_standby_one_hba), 0, NONE,
     SEV_CRITICAL, NONE},
    {"naa.hw-iscsi-one-hba", 0, "VMW_PSP_RR", 1, RRCFG(1), PATHS(pa_hw_iscsi), 0, NONE,
     SEV_CRITICAL, NONE},
    /* The software iSCSI adapter carries every bound NIC: its paths' adapter says nothing of
     * their redundancy. A path through an adapter the host does not list may be another. */
    {"naa.sw-iscsi", 0, "VMW_PSP_RR", 1, RRCFG(1), PATHS(pa_sw_iscsi), 0, NONE, NONE, NONE},
    {"naa.adapter-unlisted", 0, "VMW_PSP_RR", 1, RRCFG(1), PATHS(pa_unlisted), 0, NONE, NONE,
     NONE},
};

/* Rows that need more than a lun_row says: a SATP of their own, the plug-in, an HPP policy type
 * (NULL: VMW_SATP_ALUA, and NMP by that SATP, as in a snapshot taken before vslint read the
 * plug-ins). They are on host "esx", whose adapters are tl_hbas. */
static const struct san_row {
    struct lun_row r;
    const char *satp, *plugin, *policy_type;
} san_rows[] = {
#define SATP(name) name, NULL, NULL         /* claimed by that SATP (NMP's) */
#define HPP        NULL, "HPP", HPP_TYPE    /* HPP's, as a poll reads it */
#define HPP_POLICY NULL, NULL, HPP_TYPE     /* HPP's by its policy type alone (an older poll) */
#define PLUGIN(p)  NULL, p, NULL            /* a plug-in that reports no policy type */
    /* Local, whatever else the device looks like: VMW_SATP_LOCAL (even where localDisk says
     * false), or no localDisk answer and one path through a local controller (as SAN, the
     * mpx. name and the single path would have been flagged). */
    {{"naa.sas-local-unanswered", EST_UNKNOWN, "VMW_PSP_FIXED", EST_UNKNOWN, NULL,
      PATHS(pa_one_sas), 0, NONE, NONE, NONE},
     SATP("VMW_SATP_LOCAL")},
    {{"naa.satp-local-says-remote", 0, "VMW_PSP_FIXED", EST_UNKNOWN, NULL, PATHS(pa_one_sas), 0,
      NONE, NONE, NONE},
     SATP("VMW_SATP_LOCAL")},
    {{"mpx.vmhba0:C2:T0:L0", EST_UNKNOWN, "VMW_PSP_FIXED", EST_UNKNOWN, NULL, PATHS(pa_one_raid), 0,
      NONE, NONE, NONE},
     SATP("VMW_SATP_DEFAULT_AA")},

    /* Plug-ins: HPP's paths are judged, its policy is not NMP's to judge; PowerPath reports
     * neither (its SPC-2 name is still the array's). A local NVMe disk is local. */
    {{"eui.hpp-san-two", 0, "LB-RR", EST_UNKNOWN, NULL, PATHS(pa_rdma), 0, NONE, NONE, NONE}, HPP},
    {{"eui.hpp-san-one", 0, "LB-RR", EST_UNKNOWN, NULL, PATHS(pa_one_rdma), 0, NONE, SEV_CRITICAL,
      NONE},
     HPP},
    {{"naa.hpp-inferred", 0, "FIXED", EST_UNKNOWN, NULL, PATHS(tl_paths_fc), 0, NONE, NONE, NONE},
     HPP_POLICY},
    {{"naa.powerpath", 0, NULL, EST_UNKNOWN, NULL, NULL, 0, 0, NONE, NONE, NONE},
     PLUGIN("PowerPath")},
    {{"sym.powerpath", 0, NULL, EST_UNKNOWN, NULL, NULL, 0, 0, NONE, NONE, SEV_WARNING},
     PLUGIN("PowerPath")},
    {{"eui.hpp-local", 1, "LB-RR", EST_UNKNOWN, NULL, PATHS(pa_one_nvme), 0, NONE, NONE, NONE},
     HPP},
    {{"naa.nmp-read", 0, "VMW_PSP_MRU", EST_UNKNOWN, NULL, PATHS(tl_paths_fc), 0, SEV_WARNING, NONE,
      NONE},
     PLUGIN("NMP")},
#undef SATP
#undef HPP
#undef HPP_POLICY
#undef PLUGIN
};

#define N_ROWS (N(lun_rows) + N(san_rows))

/* Row i of both tables, as a san_row (a lun_rows one with no more to say). */
static struct san_row row_at(size_t i)
{
    if (i < N(lun_rows))
        return (struct san_row){.r = lun_rows[i]};
    return san_rows[i - N(lun_rows)];
}

/* A row's SATP: its own, none for a device of another plug-in than NMP, else ALUA. */
static const char *row_satp(const struct san_row *row)
{
    if (row->satp)
        return row->satp;
    if ((row->plugin && strcmp(row->plugin, "NMP")) || row->policy_type)
        return NULL;
    return "VMW_SATP_ALUA";
}

struct lun_world {
    struct est_lun luns[2][N_ROWS];
    struct est_gap gap;
    struct est_host hosts[2];
    struct estate e;
};

static void lun_build(struct lun_world *w)
{
    memset(w, 0, sizeof(*w));
    w->hosts[0] = (struct est_host){
        .moref = "host-1", .name = "esx", .hbas = tl_hbas, .n_hbas = N(tl_hbas)};
    w->hosts[1] = (struct est_host){.moref = "host-2", .name = "esx-noesxcli"};
    w->gap = (struct est_gap){"esxcli", "esxcli on host esx-noesxcli failed: NoPermission"};
    w->hosts[1].gaps = &w->gap;
    w->hosts[1].n_gaps = 1;
    for (size_t i = 0; i < N_ROWS; i++) {
        const struct san_row x = row_at(i);
        const struct lun_row *row = &x.r;
        struct est_host *h = &w->hosts[row->host];
        struct est_lun *l = &w->luns[row->host][h->n_luns++];
        *l = (struct est_lun){.canonical_name = row->canonical,
                              .vendor = "DGC     ",
                              .model = "VRAID",
                              .lun_type = "disk",
                              .local = row->local,
                              .psp = row->psp,
                              .satp = row_satp(&x),
                              .multipath_plugin = x.plugin,
                              .policy_type = x.policy_type,
                              .iops_limit = row->iops,
                              .psp_config = row->cfg,
                              .paths = row->paths,
                              .n_paths = row->n_paths};
        h->luns = w->luns[row->host];
    }
    w->e = (struct estate){.vcenter = "vc", .hosts = w->hosts, .n_hosts = 2};
}

static void lun_expect(const struct check *c, const struct chk_settings *s, size_t want_col)
{
    static struct lun_world w;
    size_t want_n = 0;
    char name[256];

    lun_build(&w);
    struct chk_results r = tl_run(c, s, &w.e, NOW);
    for (size_t i = 0; i < N_ROWS; i++) {
        const struct san_row x = row_at(i);
        const struct lun_row *row = &x.r;
        int want = want_col == 0   ? row->want_policy
                   : want_col == 1 ? row->want_redundancy
                                   : row->want_ident;
        snprintf(name, sizeof(name), "%s %s", row->host ? "esx-noesxcli" : "esx", row->canonical);
        tl_want(&r, name, want);
        want_n += want != NONE;
        const struct chk_finding *f = tl_find(&r, name, row->canonical);
        if (f) {
            assert_string_equal(f->object_type, "lun");
            assert_string_equal(f->host_moref, row->host ? "host-2" : "host-1");
        }
    }
    assert_int_equal(r.n, want_n);
    chk_results_free(&r);
}

TEST(test_multipath_policy_table)
{
    lun_expect(&chk_multipath_policy, NULL, 0);
}

TEST(test_multipath_redundancy_table)
{
    lun_expect(&chk_multipath_redundancy, NULL, 1);
}

TEST(test_device_identifier_table)
{
    lun_expect(&chk_device_identifier, NULL, 2);
}

TEST(test_multipath_policy_evidence)
{
    static struct lun_world w;

    lun_build(&w);
    struct chk_results r = tl_run(&chk_multipath_policy, NULL, &w.e, NOW);
    const struct chk_finding *f = tl_find(&r, "esx naa.a1-mru", NULL);
    assert_string_equal(tl_ev_str(f, "psp"), "VMW_PSP_MRU");
    assert_int_equal(tl_ev_int(f, "paths"), 2);
    json_t *cmds = json_object_get(f->evidence, "commands");
    assert_string_equal(json_string_value(json_array_get(cmds, 0)),
                        "esxcli storage nmp device set --device=naa.a1-mru --psp=VMW_PSP_RR");
    assert_string_equal(json_string_value(json_array_get(cmds, 1)),
                        "esxcli storage nmp psp roundrobin deviceconfig set --type=iops --iops=1 "
                        "--device=naa.a1-mru");
    assert_string_equal(json_string_value(json_array_get(cmds, 2)),
                        "esxcli storage nmp satp rule add -s \"VMW_SATP_ALUA\" -V \"DGC\" -M "
                        "\"VRAID\" -P \"VMW_PSP_RR\" -O \"iops=1\"");

    f = tl_find(&r, "esx naa.a2-rr1000", NULL);
    assert_int_equal(tl_ev_int(f, "iops_limit"), 1000);
    assert_int_equal(tl_ev_int(f, "recommended_iops"), 1);
    assert_true(strstr(f->message, "1000") != NULL);
    /* Already on RR: no "device set --psp" command. */
    assert_true(strstr(tl_ev_item(f, "commands", 0, NULL), "roundrobin deviceconfig set") != NULL);

    /* The host that refused esxcli is not judged on the limit: no finding, and the engine
     * records that the check could not verify that host, with the host's error. */
    assert_null(tl_find(&r, "esx-noesxcli naa.b1-noesxcli", NULL));
    assert_int_equal(r.n_unverified, 1);
    assert_ptr_equal(r.unverified[0].check, &chk_multipath_policy);
    assert_string_equal(r.unverified[0].moref, "host-2");
    assert_string_equal(r.unverified[0].reason, "esxcli could not be read on host esx-noesxcli: "
                                                "esxcli on host esx-noesxcli failed: NoPermission");
    f = tl_find(&r, "esx naa.rr-unknown", NULL);
    assert_string_equal(tl_ev_str(f, "iops_limit_unknown"), "no PathSelectionPolicyDeviceConfig");
    f = tl_find(&r, "esx naa.rr-bytes", NULL);
    assert_string_equal(tl_ev_str(f, "limit_type"), "bytes");
    chk_results_free(&r);

    /* iops = 10 accepts 1..10 (004's 5-10 range) and still flags 1000. */
    r = tl_run_with(&chk_multipath_policy, "iops", 10, &w.e, NOW);
    tl_want(&r, "esx naa.rr2", NONE);
    tl_want(&r, "esx naa.a2-rr1000", SEV_WARNING);
    f = tl_find(&r, "esx naa.a2-rr1000", NULL);
    assert_int_equal(tl_ev_int(f, "recommended_iops"), 10);
    /* The threshold is the site's; the guide's figure stays 1 in the message. */
    assert_non_null(strstr(f->message, "an IOPS limit of 1000, above 10; the guide recommends 1 "));
    f = tl_find(&r, "esx naa.a1-mru", NULL);
    assert_non_null(strstr(f->message, "with an IOPS limit of 1 (threshold 10)"));
    chk_results_free(&r);
}

TEST(test_multipath_redundancy_evidence_and_param)
{
    static struct lun_world w;

    lun_build(&w);
    struct chk_results r = tl_run(&chk_multipath_redundancy, NULL, &w.e, NOW);
    const struct chk_finding *f = tl_find(&r, "esx naa.a5-dead", NULL);
    assert_int_equal(tl_ev_int(f, "paths_total"), 2);
    assert_int_equal(tl_ev_int(f, "paths_dead"), 1);
    assert_int_equal(tl_ev_int(f, "paths_usable"), 1);
    assert_string_equal(tl_ev_item(f, "dead_paths", 0, NULL), "vmhba3:C0:T0:L1");
    assert_true(strstr(f->message, "dead") != NULL);
    f = tl_find(&r, "esx naa.a4-onepath", NULL);
    assert_int_equal(tl_ev_int(f, "paths_usable"), 1);
    assert_int_equal(tl_ev_int(f, "min_paths"), 2);
    f = tl_find(&r, "esx naa.disabled", NULL);
    assert_int_equal(tl_ev_int(f, "paths_disabled"), 1);
    assert_string_equal(tl_ev_item(f, "commands", 0, NULL),
                        "esxcli storage nmp path list --device=naa.disabled");

    /* Two paths, one adapter: named in the message, counted in the evidence. */
    f = tl_find(&r, "esx naa.one-hba", NULL);
    assert_non_null(strstr(f->message, "all through one adapter (vmhba2)"));
    assert_int_equal(tl_ev_int(f, "paths_usable"), 2);
    assert_int_equal(json_array_size(json_object_get(f->evidence, "adapters")), 1);
    assert_int_equal(tl_ev_int(f, "min_adapters"), 2);
    assert_int_equal(tl_ev_int(f, "adapters_unknown"), 0);
    f = tl_find(&r, "esx naa.standby-one-hba", NULL);
    assert_int_equal(tl_ev_int(f, "paths_standby"), 1);
    assert_int_equal(tl_ev_int(f, "paths_usable"), 2);
    /* Off is not usable; the command turns it back on. */
    f = tl_find(&r, "esx naa.active-off", NULL);
    assert_int_equal(tl_ev_int(f, "paths_usable"), 1);
    assert_int_equal(tl_ev_int(f, "paths_disabled"), 1);
    assert_string_equal(tl_ev_item(f, "commands", 1, NULL),
                        "esxcli storage core path set --state=active --path=vmhba3:C0:T0:L1");
    /* HPP's paths get HPP's commands, never `esxcli storage nmp`. */
    f = tl_find(&r, "esx eui.hpp-san-one", NULL);
    assert_string_equal(tl_ev_str(f, "multipath_plugin"), "HPP");
    assert_string_equal(tl_ev_item(f, "commands", 0, NULL),
                        "esxcli storage hpp path list --device=eui.hpp-san-one");
    for (size_t i = 0; i < json_array_size(json_object_get(f->evidence, "commands")); i++)
        assert_null(strstr(tl_ev_item(f, "commands", i, NULL), "nmp"));
    chk_results_free(&r);

    /* A LUN allowed one path is allowed one adapter. */
    r = tl_run_with(&chk_multipath_redundancy, "min_paths", 1, &w.e, NOW);
    tl_want(&r, "esx naa.one-hba", NONE);
    tl_want(&r, "esx naa.hw-iscsi-one-hba", NONE);
    tl_want(&r, "esx naa.active-off", NONE);
    tl_want(&r, "esx naa.a5-dead", SEV_CRITICAL); /* dead is dead */
    chk_results_free(&r);

    r = tl_run_with(&chk_multipath_redundancy, "min_paths", 3, &w.e, NOW);
    tl_want(&r, "esx naa.three", NONE);           /* exactly 3 */
    tl_want(&r, "esx naa.a3-rr1", SEV_CRITICAL);  /* 2 < 3 */
    tl_want(&r, "esx mpx.vmhba0:C0:T0:L0", NONE); /* still not SAN */
    tl_want(&r, "esx naa.alua-standby", NONE);    /* four usable over two adapters */
    tl_want(&r, "esx naa.one-hba", SEV_CRITICAL);
    chk_results_free(&r);
}

TEST(test_device_identifier_evidence)
{
    static struct lun_world w;

    lun_build(&w);
    struct chk_results r = tl_run(&chk_device_identifier, NULL, &w.e, NOW);
    const struct chk_finding *f =
        tl_find(&r, "esx sym.000192601234533031323334", "sym.000192601234533031323334");
    assert_non_null(f);
    assert_string_equal(tl_ev_str(f, "prefix"), "sym");
    assert_true(strstr(f->message, "SPC-2") != NULL);
    chk_results_free(&r);
}

/* ---- host-coverage: devices of another plug-in than NMP ---------------------------------- */

TEST(test_host_coverage_plugins)
{
    static struct est_lun pp_luns[] = {
        {.canonical_name = "naa.pp1", .local = 0, .multipath_plugin = "PowerPath"},
        {.canonical_name = "eui.hpp1",
         .local = 0,
         .multipath_plugin = "HPP",
         .psp = "LB-RR",
         .paths = pa_rdma,
         .n_paths = 2},
        /* Local NVMe under HPP, and NMP's own: not named. */
        {.canonical_name = "eui.local", .local = 1, .multipath_plugin = "HPP"},
        {.canonical_name = "naa.nmp", .local = 0, .multipath_plugin = "NMP", .satp = "X"},
    };
    static struct est_lun hpp_luns[] = {
        {.canonical_name = "eui.hpp2", .local = 0, .multipath_plugin = "HPP", .psp = "LB-RR"},
    };
#define HOST(m, nm, state, l, n)                                                                   \
    {                                                                                              \
        .moref = m, .name = nm, .connection_state = state, .luns = l, .n_luns = n                  \
    }
    static struct est_host hosts[] = {
        HOST("h-pp", "esx-pp", "connected", pp_luns, 4),
        HOST("h-hpp", "esx-hpp", "connected", hpp_luns, 1),
        /* Disconnected: its warning says everything; its devices are stale. */
        HOST("h-off", "esx-off", "disconnected", pp_luns, 1),
        HOST("h-nmp", "esx-nmp", "connected", &pp_luns[3], 1),
    };
#undef HOST
    struct estate e = {.vcenter = "vc", .hosts = hosts, .n_hosts = N(hosts)};
    struct chk_results r = tl_run(&chk_host_coverage, NULL, &e, NOW);

    assert_int_equal(r.n, 3);
    const struct chk_finding *f = tl_find(&r, "esx-pp", "plug-ins");
    assert_non_null(f);
    assert_int_equal(f->severity, SEV_INFO);
    assert_non_null(strstr(f->message, "naa.pp1 by PowerPath, eui.hpp1 by HPP"));
    assert_non_null(strstr(f->message, "redundancy was not judged"));
    json_t *dev = json_object_get(f->evidence, "devices");
    assert_int_equal(json_array_size(dev), 2);
    assert_false(json_is_true(json_object_get(json_array_get(dev, 0), "paths_reported")));
    assert_true(json_is_true(json_object_get(json_array_get(dev, 1), "paths_reported")));
    assert_string_equal(tl_ev_item(f, "checks_not_verified", 0, NULL), "multipath-redundancy");
    assert_int_equal(json_array_size(json_object_get(f->evidence, "checks_not_applicable")), 2);

    /* HPP alone: its paths were judged; only NMP's practices do not apply. */
    f = tl_find(&r, "esx-hpp", "plug-ins");
    assert_non_null(f);
    assert_null(strstr(f->message, "redundancy"));
    assert_int_equal(json_array_size(json_object_get(f->evidence, "checks_not_verified")), 0);

    f = tl_find(&r, "esx-off", NULL);
    assert_non_null(f);
    assert_null(f->detail);
    assert_int_equal(f->severity, SEV_WARNING);
    assert_null(tl_find(&r, "esx-nmp", NULL));
    chk_results_free(&r);
}

/* Latency-based Round Robin: info with the default iops=1, nothing where the site accepts a
 * limit above 1 (it is not a limit), and the message says it is accepted. */
TEST(test_multipath_policy_latency)
{
    static struct lun_world w;

    lun_build(&w);
    struct chk_results r = tl_run(&chk_multipath_policy, NULL, &w.e, NOW);
    const struct chk_finding *f = tl_find(&r, "esx naa.rr-latency", NULL);
    assert_non_null(f);
    assert_string_equal(tl_ev_str(f, "limit_type"), "latency");
    assert_non_null(strstr(f->message, "accepted"));
    f = tl_find(&r, "esx naa.rr-bytes", NULL);
    assert_int_equal(f->severity, SEV_WARNING); /* bytes stays a warning */
    chk_results_free(&r);
    r = tl_run_with(&chk_multipath_policy, "iops", 10, &w.e, NOW);
    tl_want(&r, "esx naa.rr-latency", NONE);
    tl_want(&r, "esx naa.rr-bytes", SEV_WARNING);
    chk_results_free(&r);
}

/* host-coverage names NMP devices on a vendor's PSP, so that multipath-policy's silence about
 * them is not read as compliance. */
TEST(test_host_coverage_vendor_psp)
{
    static struct lun_world w;

    lun_build(&w);
    struct chk_results r = tl_run(&chk_host_coverage, NULL, &w.e, NOW);
    const struct chk_finding *f = tl_find(&r, "esx", "plug-ins");
    assert_non_null(f);
    assert_non_null(strstr(f->message, "vendor's own path selection policy"));
    json_t *dev = json_object_get(f->evidence, "devices");
    int seen = 0;
    for (size_t i = 0; i < json_array_size(dev); i++) {
        json_t *d = json_array_get(dev, i);
        const char *name = json_string_value(json_object_get(d, "device"));
        if (!strcmp(name, "naa.nimble-directed")) {
            seen++;
            assert_string_equal(json_string_value(json_object_get(d, "policy")),
                                "NIMBLE_PSP_DIRECTED");
            assert_string_equal(json_string_value(json_object_get(d, "plugin")), "NMP");
            assert_true(json_is_true(json_object_get(d, "vendor_psp")));
            assert_true(json_is_true(json_object_get(d, "paths_reported")));
        }
        seen += !strcmp(name, "naa.hdlm") || !strcmp(name, "naa.eql-one-path");
        /* VMware's own PSPs are not named. */
        assert_null(strstr(name, "naa.a1-mru"));
    }
    assert_int_equal(seen, 3);
    chk_results_free(&r);
}

/* Non-disk SAN devices (lunType enclosure, tape, mediaChanger) carry no datastore: none of the
 * multipathing checks judges them, though each would flag the same device as a disk (one path,
 * MRU, a sym. name, no claim rule). A device whose lunType is unreported is judged as a disk. */
TEST(test_non_disk_devices_not_judged)
{
    static const char *const types[] = {"enclosure", "tape", "mediaChanger", "disk", NULL};
    static const char *const names[] = {"sym.enclosure", "sym.tape", "sym.changer", "sym.disk",
                                        "sym.type-unreported"};
    static struct est_lun luns[5];
    static struct est_satp_rule rules[] = {
        {.satp = "VMW_SATP_ALUA", .psp = "VMW_PSP_MRU", .rule_group = "system"}};
    static const struct check *const checks[] = {&chk_multipath_policy, &chk_multipath_redundancy,
                                                  &chk_device_identifier, &chk_satp_claim_rule};

    for (size_t i = 0; i < N(luns); i++)
        luns[i] = (struct est_lun){.canonical_name = names[i],
                                   .vendor = "DGC",
                                   .model = "VRAID",
                                   .lun_type = types[i],
                                   .local = 0,
                                   .psp = "VMW_PSP_MRU",
                                   .satp = "VMW_SATP_ALUA",
                                   .iops_limit = EST_UNKNOWN,
                                   .paths = i == 3 || i == 4 ? p_aa : p_a,
                                   .n_paths = i == 3 || i == 4 ? 2 : 1};
    /* The disks have two paths (multipath-policy judges them), the others one. */
    struct est_host h = {.moref = "host-1",
                         .name = "esx",
                         .luns = luns,
                         .n_luns = N(luns),
                         .satp_rules = rules,
                         .n_satp_rules = N(rules)};
    struct estate e = {.vcenter = "vc", .hosts = &h, .n_hosts = 1};
    for (size_t c = 0; c < N(checks); c++) {
        struct chk_results r = tl_run(checks[c], NULL, &e, NOW);
        for (size_t j = 0; j < r.n; j++) {
            const char *obj = r.items[j].object_name;
            if (strstr(obj, "enclosure") || strstr(obj, "tape") || strstr(obj, "changer") ||
                (r.items[j].detail && strstr(r.items[j].detail, "enclosure")))
                fail_msg("%s judged a non-disk device: %s", checks[c]->id, r.items[j].message);
        }
        if (checks[c] == &chk_satp_claim_rule) {
            const struct chk_finding *f = tl_find(&r, "esx", "VMW_SATP_ALUA/DGC");
            assert_non_null(f);
            /* Only the two disks are counted as uncovered. */
            assert_int_equal(json_array_size(json_object_get(f->evidence, "luns")), 2);
        } else if (checks[c] != &chk_multipath_redundancy) {
            tl_want(&r, "esx sym.disk", SEV_WARNING);
            tl_want(&r, "esx sym.type-unreported", SEV_WARNING);
        }
        chk_results_free(&r);
    }
}

int main(void)
{
    return tl_main();
}

/* The storage processor a path ends at, by the WWN convention of CLARiiON, VNX and Unity (000
 * §3.1.2's zoning table: 50:06:01:60-67 SP A, 68-6f SP B), and nothing guessed otherwise. */
TEST(test_path_storage_processor)
{
    static const struct {
        const char *wwpn, *iqn, *want, *how;
    } rows[] = {
        {"50:06:01:60:47:e4:1e:49", NULL, "SP A", "WWN convention"},
        {"50:06:01:67:47:e4:1e:49", NULL, "SP A", "WWN convention"},
        {"50:06:01:68:47:e4:1e:49", NULL, "SP B", "WWN convention"},
        {"50:06:01:6f:47:e4:1e:49", NULL, "SP B", "WWN convention"},
        {"50:06:01:6", NULL, NULL, "no known storage processor convention"},
        {"50:06:01:6g:47:e4:1e:49", NULL, NULL, "no known storage processor convention"},
        {"50:00:09:72:08:1a:2b:3c", NULL, NULL, "no known storage processor convention"},
        {NULL, "iqn.1992-04.com.emc:cx.lab.a0", NULL, "iSCSI target"},
        {NULL, NULL, NULL, "no target port reported"},
    };

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct est_path p = {.name = "vmhba2:C0:T0:L1", .target_wwpn = rows[i].wwpn,
                             .target_iqn = rows[i].iqn};
        struct estate e = {.vcenter = "vc"};
        const char *how = NULL, *sp = est_path_sp(&e, &p, &how);
        if (rows[i].want)
            assert_string_equal(sp, rows[i].want);
        else
            assert_null(sp);
        assert_non_null(how);
        assert_non_null(strstr(how, rows[i].how));
    }
}

/* Where a configured array lists the target port, its word wins over the WWN convention, and a
 * port no convention knows is told too. */
TEST(test_path_storage_processor_from_the_array)
{
    struct est_array_port ports[] = {
        /* the array's word, not the convention's */
        {.array = "unity1", .wwpn = "50:06:01:60:47:e4:1e:49", .sp = "spb"},
        {.array = "unity1", .wwpn = "58:cc:f0:98:49:20:0b:2a", .sp = "spa"},
        {.array = "unity1", .wwpn = "58:cc:f0:98:49:21:0b:2a", .sp = "spc"},
        /* a single-SP array: its ports' SP is no redundancy to judge */
        {.array = "vsa1", .wwpn = "58:cc:f0:98:49:30:0b:2a", .sp = "spa", .array_sps = 1},
    };
    struct estate e = {.vcenter = "vc", .array_ports = ports, .n_array_ports = 4};
    struct est_path p = {.name = "vmhba2:C0:T0:L1"};
    const char *how = NULL;

    p.target_wwpn = "50:06:01:60:47:e4:1e:49";
    assert_string_equal(est_path_sp(&e, &p, &how), "SP B");
    assert_non_null(strstr(how, "fcPort"));
    p.target_wwpn = "58:cc:f0:98:49:20:0b:2a";
    assert_string_equal(est_path_sp(&e, &p, &how), "SP A");
    p.target_wwpn = "58:cc:f0:98:49:21:0b:2a";
    assert_null(est_path_sp(&e, &p, &how));
    assert_non_null(strstr(how, "does not know"));
    p.target_wwpn = "58:cc:f0:98:49:22:0b:2a"; /* not the array's: no convention either */
    assert_null(est_path_sp(&e, &p, &how));
    p.target_wwpn = "58:cc:f0:98:49:30:0b:2a";
    assert_null(est_path_sp(&e, &p, &how));
    assert_non_null(strstr(how, "the array has one storage processor"));
}

/* An iSCSI path's SP is its portal's (iscsiPortal -> ethernetPort -> storageProcessor), found
 * by the path's "address:port" in every spelling vCenter gives it; a path naming another IQN
 * than the portal's node, or an address no portal has, is not judged. */
TEST(test_iscsi_path_storage_processor_from_the_portal)
{
    static const char a0[] = "iqn.1992-04.com.emc:cx.lab.a0", b0[] = "iqn.1992-04.com.emc:cx.lab.b0";
    struct est_array_port ports[] = {
        {.array = "unity1", .sp = "spa", .id = "spa_eth2", .portal = "if_4",
         .address = "10.0.1.21", .iqn = a0, .mtu = 9000},
        {.array = "unity1", .sp = "spb", .id = "spb_eth2", .portal = "if_6",
         .address = "fe80::21", .iqn = b0, .mtu = 9000},
        /* Another site's array at the same private address: told apart by the IQN alone. */
        {.array = "unity2", .sp = "spb", .id = "spb_eth2", .portal = "if_9",
         .address = "10.0.1.21", .iqn = "iqn.1992-04.com.emc:cx.site2.b0", .mtu = 9000},
        /* A UnityVSA: SP A only, so no path of it can reach both SPs. */
        {.array = "vsa1", .sp = "spa", .id = "spa_eth0", .portal = "if_3",
         .address = "10.0.9.5", .iqn = "iqn.1992-04.com.emc:vsa.a0", .mtu = 9000, .array_sps = 1},
    };
    struct estate e = {.vcenter = "vc", .array_ports = ports, .n_array_ports = 4};
    static const struct {
        const char *address, *iqn, *want, *how;
    } rows[] = {
        {"10.0.1.21:3260", a0, "SP A", "iscsiPortal"},
        {"10.0.1.21:3260", "iqn.1992-04.com.emc:cx.site2.b0", "SP B", "iscsiPortal"},
        {"10.0.1.21", NULL, NULL, "no configured array's portal"}, /* unity1's or unity2's? */
        {"[fe80::21]:3260", b0, "SP B", "iscsiPortal"},
        {"fe80::21", NULL, "SP B", "iscsiPortal"},
        {"10.0.1.21:3260", b0, NULL, "another IQN"},
        {"10.0.1.210:3260", a0, NULL, "no configured array's portal"},
        {"10.0.1.2:3260", a0, NULL, "no configured array's portal"},
        {"10.0.9.5:3260", "iqn.1992-04.com.emc:vsa.a0", NULL, "one storage processor"},
    };

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct est_path p = {.name = "vmhba64:C0:T0:L1", .target_address = rows[i].address,
                             .target_iqn = rows[i].iqn};
        const char *how = NULL, *sp = est_path_sp(&e, &p, &how);
        if (rows[i].want)
            assert_string_equal(sp, rows[i].want);
        else
            assert_null(sp);
        assert_non_null(strstr(how, rows[i].how));
    }
}
