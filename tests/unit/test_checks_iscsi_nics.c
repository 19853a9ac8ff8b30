/* Unit tests for the software iSCSI adapter's NICs (issue 27 item 2): multipath-redundancy
 * counts its bound vmknics (one path channel each) as the independent elements of its paths,
 * and iscsi-jumbo-frames, when the adapter has no port binding, judges the vmknic on each
 * target's subnet. Each table row is one host with software iSCSI vmhba64. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks/check.h"
#include "checks/engine.h"
#include "model/estate.h"
#include "testlib.h"

#define NOW ((int64_t)1750000000)
#define MAXP 4

extern const struct check chk_multipath_redundancy, chk_iscsi_jumbo_frames;

static struct est_hba hbas[] = {
    {"vmhba2", "HostFibreChannelHba", "qlnativefc", NULL},
    {"vmhba64", "HostInternetScsiHba", "iscsi_vmk", "iSCSI Software Adapter"},
    /* dependent hardware iSCSI (Broadcom bnx2i): a real adapter per NIC */
    {"vmhba33", "HostInternetScsiHba", "bnx2i", NULL},
};

/* vmk1 and vmk2 on 10.0.1.0/24 and 10.0.2.0/24; vmk0 management on 192.168.0.0/16. */
static struct est_vswitch vswitches[] = {{"vSwitch0", 1500}, {"vSwitch-iscsi", 9000}};

/* ---- multipath-redundancy ---------------------------------------------------------------- */

#define LUN "naa.600601600000000000000000000000a1"
/* A row's host name and its LUN's object name. */
#define R(host) host, host " " LUN

static const struct red_row {
    const char *name, *obj;   /* the host's name; its LUN's, as findings name it */
    size_t bound[2], n_bound; /* vmknic indexes bound to the row's adapter */
    const char *adapter;      /* the paths' adapter */
    const char *paths[MAXP];  /* active paths by name */
    int want;
    const char *vmknic; /* the evidence's single vmknic, or NULL */
} red_rows[] = {
    /* one bound vmknic, two portals: both paths on one NIC */
    {R("one-nic"), {1}, 1, "vmhba64", {"vmhba64:C0:T0:L1", "vmhba64:C0:T1:L1"}, SEV_CRITICAL,
     "vmk1"},
    /* ... however many portals */
    {R("one-nic-4"), {2}, 1, "vmhba64",
     {"vmhba64:C0:T0:L1", "vmhba64:C0:T1:L1", "vmhba64:C0:T2:L1", "vmhba64:C0:T3:L1"},
     SEV_CRITICAL, "vmk2"},
    /* the twin: two bound vmknics, one path channel each */
    {R("two-nics"), {1, 2}, 2, "vmhba64", {"vmhba64:C0:T0:L1", "vmhba64:C1:T0:L1"}, NONE, NULL},
    /* two bound, but every path on one channel: one of them carries everything */
    {R("two-nics-one-channel"), {1, 2}, 2, "vmhba64", {"vmhba64:C0:T0:L1", "vmhba64:C0:T1:L1"},
     SEV_CRITICAL, NULL},
    /* no port binding (routed iSCSI): the NIC is the routing table's, not judged */
    {R("unbound"), {0}, 0, "vmhba64", {"vmhba64:C0:T0:L1", "vmhba64:C0:T1:L1"}, NONE, NULL},
    /* a hardware adapter is still the element: two paths through one FC HBA */
    {R("one-fc-hba"), {0}, 0, "vmhba2", {"vmhba2:C0:T0:L1", "vmhba2:C0:T1:L1"}, SEV_CRITICAL, NULL},
    /* dependent hardware iSCSI is an adapter of its own, judged like FC */
    {R("bnx2i"), {1}, 1, "vmhba33", {"vmhba33:C0:T0:L1", "vmhba33:C0:T1:L1"}, SEV_CRITICAL, NULL},
};

struct red_world {
    struct est_vnic vnics[N(red_rows)][3];
    struct est_iscsi_hba iscsi[N(red_rows)];
    struct est_path paths[N(red_rows)][MAXP];
    struct est_lun luns[N(red_rows)];
    struct est_host hosts[N(red_rows)];
    char morefs[N(red_rows)][16];
    struct estate e;
};

static size_t hba_index(const char *dev)
{
    for (size_t i = 0; i < N(hbas); i++)
        if (!strcmp(hbas[i].device, dev))
            return i;
    return EST_NONE;
}

static void red_build(struct red_world *w)
{
    memset(w, 0, sizeof(*w));
    for (size_t i = 0; i < N(red_rows); i++) {
        const struct red_row *row = &red_rows[i];
        struct est_host *h = &w->hosts[i];
        size_t np = 0;

        for (size_t k = 0; k < 3; k++)
            w->vnics[i][k] = (struct est_vnic){
                .device = k == 0 ? "vmk0" : k == 1 ? "vmk1" : "vmk2", .mtu = 9000,
                .vswitch = 1, .dvswitch = EST_NONE};
        w->iscsi[i] = (struct est_iscsi_hba){
            .device = !strcmp(row->adapter, "vmhba2") ? "vmhba64" : row->adapter,
            .bound_vnics = (size_t *)row->bound, .n_bound_vnics = row->n_bound};
        for (; np < MAXP && row->paths[np]; np++)
            w->paths[i][np] = (struct est_path){.name = row->paths[np], .state = "active",
                                                .adapter = row->adapter,
                                                .hba = hba_index(row->adapter)};
        w->luns[i] = (struct est_lun){.canonical_name = LUN,
                                      .vendor = "DGC", .model = "VRAID", .lun_type = "disk",
                                      .local = 0, .psp = "VMW_PSP_RR", .satp = "VMW_SATP_ALUA",
                                      .paths = w->paths[i], .n_paths = np};
        snprintf(w->morefs[i], sizeof(w->morefs[i]), "host-%zu", i);
        *h = (struct est_host){.moref = w->morefs[i], .name = row->name, .hbas = hbas,
                               .n_hbas = N(hbas), .vswitches = vswitches, .n_vswitches = 2,
                               .vnics = w->vnics[i], .n_vnics = 3, .iscsi_hbas = &w->iscsi[i],
                               .n_iscsi_hbas = 1, .luns = &w->luns[i], .n_luns = 1};
    }
    w->e = (struct estate){.vcenter = "vc", .hosts = w->hosts, .n_hosts = N(red_rows)};
}

/* Each row's LUN is flagged (critical) or not, as the row says; a LUN whose paths all leave by
 * one bound vmknic names it, in the message and the evidence. */
TEST(test_redundancy_counts_bound_vmknics)
{
    static struct red_world w;

    red_build(&w);
    struct chk_results r = tl_run(&chk_multipath_redundancy, NULL, &w.e, NOW);
    assert_int_equal(r.n, TL_WANT_EACH(&r, red_rows, N(red_rows), obj, want));
    for (size_t i = 0; i < N(red_rows); i++) {
        const struct red_row *row = &red_rows[i];
        if (!row->vmknic)
            continue;
        const struct chk_finding *f = tl_find(&r, row->obj, NULL);
        assert_non_null(f);
        assert_string_equal(json_string_value(json_object_get(f->evidence, "vmknic")),
                            row->vmknic);
        char want_msg[128];
        snprintf(want_msg, sizeof(want_msg),
                 "%s is the only vmknic bound to software iSCSI adapter vmhba64", row->vmknic);
        assert_non_null(strstr(f->message, want_msg));
    }
    /* Two bound vmknics, one channel: the channel is the one element, named as such. */
    const struct chk_finding *f = tl_find(&r, "two-nics-one-channel " LUN, NULL);
    assert_non_null(f);
    json_t *a = json_object_get(f->evidence, "adapters");
    assert_int_equal(json_array_size(a), 1);
    assert_string_equal(json_string_value(json_array_get(a, 0)), "vmhba64:C0");
    assert_true(json_is_null(json_object_get(f->evidence, "vmknic")));
    assert_non_null(strstr(f->message, "all on one path channel (vmhba64:C0)"));
    chk_results_free(&r);
}

/* The bindings could not be read (QueryBoundVnics failed): the adapter looks unbound, and
 * judging it so would resolve one-nic's finding on a failed read; the host is kept
 * unverified instead, and its LUN not judged. */
TEST(test_redundancy_bindings_unread)
{
    static struct red_world w;
    struct est_gap gap = {"iscsi-bindings", "QueryBoundVnics: NotSupported"};

    red_build(&w);
    w.hosts[0].gaps = &gap;
    w.hosts[0].n_gaps = 1;
    w.iscsi[0].n_bound_vnics = 0; /* what a failed read leaves */
    struct chk_results r = tl_run(&chk_multipath_redundancy, NULL, &w.e, NOW);
    tl_want(&r, red_rows[0].obj, NONE);
    tl_want_unverified(&r, w.hosts[0].moref);
    tl_want(&r, red_rows[1].obj, SEV_CRITICAL); /* the other hosts are judged as before */
    chk_results_free(&r);
}

/* ---- iscsi-jumbo-frames without port binding ---------------------------------------------- */

/* A row's host name, and its vmk0's and vmk1's as findings name them. */
#define J(host) host, host " vmk0", host " vmk1"

static const struct jumbo_row {
    const char *name, *vmk0, *vmk1;
    const char *ip1, *mask1; /* vmk1's address and mask (vmk0 is 192.168.0.5/16) */
    int mtu1;
    const char *target; /* the adapter's one send target */
    size_t n_bound;     /* 0: no port binding; 1: vmk1 bound */
    int want_vmk0, want_vmk1;
} jumbo_rows[] = {
    /* the target is on vmk1's subnet: vmk1 carries it, and its 1500 is judged */
    {J("subnet-1500"), "10.0.3.5", "255.255.255.0", 1500, "10.0.3.20", 0, NONE, SEV_WARNING},
    /* the twin: 9000 all the way */
    {J("subnet-9000"), "10.0.3.5", "255.255.255.0", 9000, "10.0.3.20", 0, NONE, NONE},
    /* a /23 holds 10.0.3.x from 10.0.2.5 */
    {J("wide-mask"), "10.0.2.5", "255.255.254.0", 1500, "10.0.3.20", 0, NONE, SEV_WARNING},
    /* ... a /24 does not: the target is elsewhere (routed), vmk1 is not chosen */
    {J("other-subnet"), "10.0.2.5", "255.255.255.0", 1500, "10.0.3.20", 0, NONE, NONE},
    /* the mask unknown: no subnet to match */
    {J("no-mask"), "10.0.3.5", NULL, 1500, "10.0.3.20", 0, NONE, NONE},
    /* a name, not an address: not matched */
    {J("target-name"), "10.0.3.5", "255.255.255.0", 1500, "array.example.com", 0, NONE, NONE},
    /* the management subnet holds the target: vmk0 (MTU 1500) carries the iSCSI */
    {J("via-mgmt"), "10.0.3.5", "255.255.255.0", 9000, "192.168.7.20", 0, SEV_WARNING, NONE},
    /* vmk0 and vmk1 both on the target's subnet: the host sends through the first, vmk0 */
    {J("two-on-subnet"), "192.168.1.5", "255.255.0.0", 1500, "192.168.7.20", 0, SEV_WARNING,
     NONE},
    /* bound: port binding decides, the subnet does not add vmk0 */
    {J("bound"), "10.0.3.5", "255.255.255.0", 1500, "192.168.7.20", 1, NONE, SEV_WARNING},
};

struct jumbo_world {
    struct est_vnic vnics[N(jumbo_rows)][2];
    struct est_iscsi_target targets[N(jumbo_rows)];
    struct est_iscsi_hba iscsi[N(jumbo_rows)];
    struct est_host hosts[N(jumbo_rows)];
    char morefs[N(jumbo_rows)][16];
    struct estate e;
};

static size_t bound1[] = {1};

static void jumbo_build(struct jumbo_world *w)
{
    memset(w, 0, sizeof(*w));
    for (size_t i = 0; i < N(jumbo_rows); i++) {
        const struct jumbo_row *row = &jumbo_rows[i];
        w->vnics[i][0] = (struct est_vnic){.device = "vmk0", .mtu = 1500, .vswitch = 0,
                                           .dvswitch = EST_NONE, .ip = "192.168.0.5",
                                           .subnet_mask = "255.255.0.0"};
        w->vnics[i][1] = (struct est_vnic){.device = "vmk1", .mtu = row->mtu1, .vswitch = 1,
                                           .dvswitch = EST_NONE, .ip = row->ip1,
                                           .subnet_mask = row->mask1};
        w->targets[i] = (struct est_iscsi_target){.kind = "send", .address = row->target,
                                                  .port = 3260, .send_target = EST_NONE};
        w->iscsi[i] = (struct est_iscsi_hba){.device = "vmhba64", .targets = &w->targets[i],
                                             .n_targets = 1, .bound_vnics = bound1,
                                             .n_bound_vnics = row->n_bound};
        snprintf(w->morefs[i], sizeof(w->morefs[i]), "host-%zu", i);
        w->hosts[i] = (struct est_host){.moref = w->morefs[i], .name = row->name, .hbas = hbas,
                                        .n_hbas = N(hbas), .vswitches = vswitches,
                                        .n_vswitches = 2, .vnics = w->vnics[i], .n_vnics = 2,
                                        .iscsi_hbas = &w->iscsi[i], .n_iscsi_hbas = 1};
    }
    w->e = (struct estate){.vcenter = "vc", .hosts = w->hosts, .n_hosts = N(jumbo_rows)};
}

/* Without port binding the vmknic on the target's subnet is judged, and the evidence says how it
 * was chosen; with binding, only the bound vmknics are. */
TEST(test_jumbo_unbound_by_subnet)
{
    static struct jumbo_world w;

    jumbo_build(&w);
    struct chk_results r = tl_run(&chk_iscsi_jumbo_frames, NULL, &w.e, NOW);
    size_t want_n = TL_WANT_EACH(&r, jumbo_rows, N(jumbo_rows), vmk0, want_vmk0);
    want_n += TL_WANT_EACH(&r, jumbo_rows, N(jumbo_rows), vmk1, want_vmk1);
    assert_int_equal(r.n, want_n);

    const struct chk_finding *f = tl_find(&r, "subnet-1500 vmk1", NULL);
    assert_non_null(f);
    assert_string_equal(json_string_value(json_object_get(f->evidence, "selected_by")),
                        "target subnet");
    assert_string_equal(json_string_value(json_object_get(f->evidence, "target")), "10.0.3.20");
    assert_string_equal(json_string_value(json_object_get(f->evidence, "subnet_mask")),
                        "255.255.255.0");
    assert_int_equal(json_array_size(json_object_get(f->evidence, "bound_to")), 0);
    assert_non_null(strstr(f->message, "carries vmhba64's iSCSI to 10.0.3.20, on its subnet "
                                       "10.0.3.5/255.255.255.0; the adapter has no port binding"));
    f = tl_find(&r, "bound vmk1", NULL);
    assert_non_null(f);
    assert_string_equal(json_string_value(json_object_get(f->evidence, "selected_by")),
                        "port binding");
    chk_results_free(&r);
}

int main(void)
{
    return tl_main();
}
