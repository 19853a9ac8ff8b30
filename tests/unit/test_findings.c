/* Unit tests for the check side of db/: a snapshot loaded back as an estate with its references
 * resolved, and findings with their history, filters, pagination and summary, on a real file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "checks/engine.h"
#include "daemon/report.h"
#include "db/db-private.h"
#include "db/findings.h"
#include "db/update.h"
#include "util/err.h"
#include "testlib.h"

#define GIB (1024LL * 1024 * 1024)

/* Three evaluations a day apart; what the API must print for each. */
#define T1     1795970565000LL
#define T2     1796056965000LL
#define T3     1796143365000LL
#define T1_ISO "2026-11-29T16:42:45Z"
#define T2_ISO "2026-11-30T16:42:45Z"
#define T3_ISO "2026-12-01T16:42:45Z"

/* ---- the estate ----------------------------------------------------------------------------- */

/* One vCenter's snapshot with every kind of reference the loader resolves, each with a twin
 * that must stay unresolved. name_suffix tells two vCenters' otherwise identical rows apart. */
static void fill(const struct vim_sink *s, const void *arg)
{
    const char *sfx = arg;
    void *c = s->ctx;
    char ds1[32], vm1[32];

    snprintf(ds1, sizeof(ds1), "LocalDS_0%s", sfx);
    snprintf(vm1, sizeof(vm1), "web01%s", sfx);

    const struct vim_storage_pod pod = {"group-p1", "pod-gold", 500 * GIB, 100 * GIB};
    assert_int_equal(s->storage_pod(c, &pod), 0);
    const struct vim_datastore d1 = {.moref = "datastore-1",
                                     .name = ds1,
                                     .type = "VMFS",
                                     .parent = "group-p1",
                                     .capacity = 500 * GIB,
                                     .free_space = 100 * GIB,
                                     .uncommitted = VIM_UNKNOWN,
                                     .accessible = 1,
                                     .vmfs_major = 6,
                                     .vm_count = 1};
    assert_int_equal(s->datastore(c, &tl_ds_nfs01), 0);
    assert_int_equal(s->datastore(c, &d1), 0);
    const struct vim_dvswitch dvs = {"dvs-9", "DSwitch-iSCSI", "50 2b 7e", 9000};
    assert_int_equal(s->dvswitch(c, &dvs), 0);

    /* Hosts in an order unlike their moref order, so bsearch over names would go wrong. */
    const struct vim_host h10 = {"host-10", "esx01", "domain-c7", "connected", NULL};
    const struct vim_host h11 = {"host-11", "esx00", "domain-c7", "connected", NULL};
    const struct vim_host h9 = {"host-9", "esx02", "domain-c7", "connected", NULL};
    assert_int_equal(s->host(c, &h10), 0);
    assert_int_equal(s->host(c, &h11), 0);
    assert_int_equal(s->host(c, &h9), 0);
    const struct vim_host_option bd10 = {"host-10", "VMFS3.EnableBlockDelete", "1"};
    const struct vim_host_option bd11 = {"host-11", "VMFS3.EnableBlockDelete", "0"};
    const struct vim_host_option bd9 = {"host-9", "VMFS3.EnableBlockDelete", "yes please"};
    const struct vim_host_option other = {"host-10", "Disk.MaxIOSize", "32767"};
    assert_int_equal(s->host_option(c, &bd10), 0);
    assert_int_equal(s->host_option(c, &bd11), 0);
    assert_int_equal(s->host_option(c, &bd9), 0);
    assert_int_equal(s->host_option(c, &other), 0);

    const struct vim_vswitch vs0 = {"host-10", "vSwitch0", 1500};
    const struct vim_vswitch vs1 = {"host-10", "vSwitch1", 9000};
    const struct vim_vswitch vs1_other = {"host-11", "vSwitch1", 1500};
    assert_int_equal(s->vswitch(c, &vs0), 0);
    assert_int_equal(s->vswitch(c, &vs1), 0);
    assert_int_equal(s->vswitch(c, &vs1_other), 0);
    const struct vim_portgroup pg = {"host-10", "iSCSI-A", "vSwitch1"};
    assert_int_equal(s->portgroup(c, &pg), 0);
    const struct vim_vnic vmk0 = {"host-10", "vmk0", "Management", NULL, NULL, 1500, "10.0.9.1", NULL};
    const struct vim_vnic vmk1 = {"host-10", "vmk1", "iSCSI-A", NULL, NULL, 9000, "10.0.0.11", NULL};
    const struct vim_vnic vmk2 = {"host-10",       "vmk2", NULL,       "50 2b 7e",
                                  "dvportgroup-5", 1500,   "10.0.1.11", NULL};
    const struct vim_vnic vmk10 = {"host-10",       "vmk10", NULL,       "ff ff",
                                   "dvportgroup-6", 9000,    "10.0.2.11", NULL};
    assert_int_equal(s->vnic(c, &vmk10), 0);
    assert_int_equal(s->vnic(c, &vmk2), 0);
    assert_int_equal(s->vnic(c, &vmk1), 0);
    assert_int_equal(s->vnic(c, &vmk0), 0);

    const struct vim_iscsi_hba hba = {"host-10", "vmhba64", "iqn.1998-01.com.vmware:esx01",
                                      "iSCSI Software Adapter"};
    assert_int_equal(s->iscsi_hba(c, &hba), 0);
    const struct vim_iscsi_target t1 = {"host-10", "vmhba64", "send", "10.0.0.1", 3260, NULL,
                                        NULL,      NULL};
    const struct vim_iscsi_target t2 = {"host-10",  "vmhba64", "static",
                                        "10.0.0.2", 3260,      "iqn.2001-05.com.array:tgt1",
                                        NULL,       NULL};
    assert_int_equal(s->iscsi_target(c, &t1), 0);
    assert_int_equal(s->iscsi_target(c, &t2), 0);
    const struct vim_iscsi_binding b1 = {"host-10", "vmhba64", "vmk1"};
    const struct vim_iscsi_binding b_gone = {"host-10", "vmhba64", "vmk99"};
    assert_int_equal(s->iscsi_binding(c, &b1), 0);
    assert_int_equal(s->iscsi_binding(c, &b_gone), 0);

    const struct vim_lun rr = {"host-10",    "k1",           "naa.600a0001", "LUN 1",
                               "NETAPP",     "LUN C-Mode",   "disk",         0,
                               "VMW_PSP_RR", "VMW_SATP_ALUA", NULL, NULL, VIM_UNKNOWN};
    const struct vim_lun mru = {"host-10",     "k2",           "naa.600a0002", "LUN 2",
                                "NETAPP",      "LUN C-Mode",   "disk",         VIM_UNKNOWN,
                                "VMW_PSP_MRU", "VMW_SATP_ALUA", NULL, NULL, VIM_UNKNOWN};
    const struct vim_lun other_host = {"host-11",    "k1",           "naa.600a0001", "LUN 1",
                                       "NETAPP",     "LUN C-Mode",   "disk",         0,
                                       "VMW_PSP_RR", "VMW_SATP_ALUA", NULL, NULL, VIM_UNKNOWN};
    assert_int_equal(s->lun(c, &mru), 0);
    assert_int_equal(s->lun(c, &rr), 0);
    assert_int_equal(s->lun(c, &other_host), 0);
    /* host-11's LUN of the same name has no esxcli row: its limit stays unknown. */
    tl_fill_host10_san(s);
    /* host-10's claim rules, given out of order; host-11 (esxcli refused) has none. */
    const struct vim_satp_rule r1 = {"host-10",    "VMW_SATP_SYMM", "EMC", "SYMMETRIX",
                                     "VMW_PSP_RR", "iops=1",        "user", NULL,
                                     NULL,         NULL,            NULL,   NULL,
                                     NULL};
    const struct vim_satp_rule r2 = {"host-10", "VMW_SATP_ALUA", NULL, NULL, "VMW_PSP_MRU",
                                     NULL,      "system",      NULL, NULL, NULL,
                                     NULL,      NULL,          NULL};
    assert_int_equal(s->satp_rule(c, &r1), 0);
    assert_int_equal(s->satp_rule(c, &r2), 0);
    const struct vim_gap gap = {"host-11", "esxcli", "host refused esxcli"};
    const struct vim_gap vcgap = {NULL, "dvswitches", "permission denied"};
    assert_int_equal(s->gap(c, &gap), 0);
    assert_int_equal(s->gap(c, &vcgap), 0);

    const struct vim_vm m1 = {"vm-42", vm1,  "vmx-13", 0, "poweredOn", "notConfigured", "host-10",
                              NULL,    0,    NULL,     NULL,      NULL};
    const struct vim_vm m2 = {"vm-7", "app00", "vmx-", 1, "poweredOff", NULL, "host-404",
                              NULL,   0,       NULL,   NULL,   NULL};
    assert_int_equal(s->vm(c, &m1), 0);
    assert_int_equal(s->vm(c, &m2), 0);
    const struct vim_vm_datastore vd1 = {"vm-42", "datastore-1"};
    const struct vim_vm_datastore vd2 = {"vm-42", "datastore-2"};
    const struct vim_vm_datastore vd_gone = {"vm-42", "datastore-404"};
    assert_int_equal(s->vm_datastore(c, &vd2), 0);
    assert_int_equal(s->vm_datastore(c, &vd_gone), 0);
    assert_int_equal(s->vm_datastore(c, &vd1), 0);
    const struct vim_controller pv = {"vm-42", 1000, "ParaVirtualSCSIController", "noSharing", 0};
    const struct vim_controller lsi = {"vm-42", 1001, "VirtualLsiLogicSASController",
                                       "physicalSharing", 1};
    assert_int_equal(s->controller(c, &lsi), 0);
    assert_int_equal(s->controller(c, &pv), 0);
    const struct vim_vdisk k1 = {
        "vm-42", 2000, "Hard disk 1", "[x] web01/web01.vmdk", "datastore-1", 40 * GIB, "thin",
        1000,    0,           NULL,                   NULL};
    const struct vim_vdisk k2 = {"vm-42",
                                 2001,
                                 "Hard disk 2",
                                 "[nfs01] web01/web01_1.vmdk",
                                 "datastore-2",
                                 100 * GIB,
                                 "eagerzeroedthick",
                                 1001,
                                 0,
                                 NULL,
                                 NULL};
    const struct vim_vdisk k3 = {"vm-42",
                                 2002,
                                 "Hard disk 3",
                                 "[gone] web01/web01_2.vmdk",
                                 "datastore-404",
                                 1 * GIB,
                                 "lazyzeroedthick",
                                 1099,
                                 0,
                                 NULL,
                                 NULL};
    assert_int_equal(s->vdisk(c, &k3), 0);
    assert_int_equal(s->vdisk(c, &k1), 0);
    assert_int_equal(s->vdisk(c, &k2), 0);
    const struct vim_snapshot s1 = {"vm-42", "before patch", 1700000000, 1};
    const struct vim_snapshot s2 = {"vm-42", "after patch", VIM_UNKNOWN, 2};
    assert_int_equal(s->snapshot(c, &s2), 0);
    assert_int_equal(s->snapshot(c, &s1), 0);
}

static void snapshot(struct db *db, const char *vc, const char *sfx)
{
    tl_snapshot(db, vc, fill, sfx, T1 - 60000, T1, NULL);
}

static const struct est_host *host_named(const struct estate *e, const char *name)
{
    return TL_FIND(e->hosts, e->n_hosts, name, name, "host");
}

static const struct est_vnic *vnic_named(const struct est_host *h, const char *dev)
{
    return TL_FIND(h->vnics, h->n_vnics, device, dev, "vnic");
}

TEST_WITH(test_estate_roundtrip, tl_db_setup_open, tl_db_teardown)
{
    struct tl_dbfile *fx = *state;
    struct estate *e = NULL;

    snapshot(fx->db, "vc-a", "");
    snapshot(fx->db, "vc-b", "-b"); /* same morefs elsewhere: must not leak into vc-a */
    assert_int_equal(db_estate_load(fx->db, "vc-a", &e), 0);
    assert_string_equal(e->vcenter, "vc-a");
    assert_int_equal(e->polled_ms, T1);

    /* Datastores by name; pod membership through datastore.parent. */
    assert_int_equal(e->n_pods, 1);
    assert_int_equal(e->n_datastores, 2);
    assert_string_equal(e->datastores[0].name, "LocalDS_0");
    assert_int_equal(e->datastores[0].pod, 0);
    assert_string_equal(e->pods[e->datastores[0].pod].name, "pod-gold");
    assert_true(e->datastores[1].pod == EST_NONE);
    assert_int_equal(e->datastores[0].uncommitted, EST_UNKNOWN);
    assert_int_equal(e->datastores[1].uncommitted, 10 * GIB);
    assert_int_equal(e->datastores[1].accessible, 0);

    /* Hosts by name; EnableBlockDelete parsed, unparseable and absent are unknown. */
    assert_int_equal(e->n_hosts, 3);
    assert_string_equal(e->hosts[0].name, "esx00");
    const struct est_host *h = host_named(e, "esx01");
    assert_int_equal(h->enable_block_delete, 1);
    assert_int_equal(host_named(e, "esx00")->enable_block_delete, 0);
    assert_int_equal(host_named(e, "esx02")->enable_block_delete, EST_UNKNOWN);

    /* vmknics: vSwitch through the port group, DVS through its uuid, vmk2 before vmk10. */
    assert_int_equal(h->n_vswitches, 2);
    assert_int_equal(h->n_vnics, 4);
    assert_string_equal(h->vnics[2].device, "vmk2");
    assert_string_equal(h->vnics[3].device, "vmk10");
    const struct est_vnic *vmk1 = vnic_named(h, "vmk1");
    assert_true(vmk1->vswitch != EST_NONE);
    assert_int_equal(h->vswitches[vmk1->vswitch].mtu, 9000);
    assert_true(vmk1->dvswitch == EST_NONE);
    assert_true(vnic_named(h, "vmk0")->vswitch == EST_NONE); /* port group not reported */
    const struct est_vnic *vmk2 = vnic_named(h, "vmk2");
    assert_true(vmk2->dvswitch != EST_NONE);
    assert_int_equal(e->dvswitches[vmk2->dvswitch].max_mtu, 9000);
    const struct est_vnic *vmk10 = vnic_named(h, "vmk10");
    assert_true(vmk10->dvswitch == EST_NONE);
    assert_string_equal(vmk10->dvs_uuid, "ff ff");

    /* iSCSI: the bound vmknic by index (the missing one left out), options at both levels. */
    assert_int_equal(h->n_iscsi_hbas, 1);
    const struct est_iscsi_hba *a = &h->iscsi_hbas[0];
    assert_int_equal(a->n_bound_vnics, 1);
    assert_string_equal(h->vnics[a->bound_vnics[0]].device, "vmk1");
    assert_int_equal(h->vnics[a->bound_vnics[0]].mtu, 9000);
    assert_string_equal(est_option(a->options, a->n_options, "DelayedAck")->value, "false");
    assert_null(est_option(a->options, a->n_options, "LoginTimeout"));
    assert_int_equal(a->n_targets, 2);
    assert_string_equal(a->targets[0].kind, "send");
    assert_int_equal(a->targets[0].port, 3260);
    assert_int_equal(a->targets[0].options[0].inherited, 1);
    assert_string_equal(a->targets[1].kind, "static");
    assert_string_equal(a->targets[1].iscsi_name, "iqn.2001-05.com.array:tgt1");
    assert_string_equal(
        est_option(a->targets[1].options, a->targets[1].n_options, "DelayedAck")->value, "true");

    /* LUNs by canonical name; the IOPS limit from esxcli, unknown where it gave none. */
    assert_int_equal(h->n_luns, 2);
    assert_string_equal(h->luns[0].canonical_name, "naa.600a0001");
    assert_int_equal(h->luns[0].iops_limit, 1);
    assert_non_null(strstr(h->luns[0].psp_config, "iops=1"));
    assert_int_equal(h->luns[0].local, 0);
    assert_int_equal(h->luns[0].n_paths, 2);
    assert_string_equal(h->luns[0].paths[1].state, "dead");
    assert_int_equal(h->luns[1].iops_limit, EST_UNKNOWN);
    assert_int_equal(h->luns[1].local, EST_UNKNOWN);
    assert_null(h->luns[1].psp_config);
    const struct est_host *h11 = host_named(e, "esx00");
    assert_int_equal(h11->n_luns, 1);
    assert_int_equal(h11->luns[0].iops_limit, EST_UNKNOWN);
    /* A value rows repeat is one copy, shared (db/load.c col_str), and stays what it was. */
    assert_ptr_equal(h11->luns[0].vendor, h->luns[0].vendor);
    assert_ptr_equal(h->luns[1].satp, h->luns[0].satp);
    assert_string_equal(h->luns[1].vendor, "NETAPP");
    assert_string_equal(h->luns[1].psp, "VMW_PSP_MRU");
    assert_string_equal(h->luns[0].psp, "VMW_PSP_RR");
    assert_int_equal(h11->n_gaps, 1);
    assert_string_equal(h11->gaps[0].what, "esxcli");
    assert_int_equal(h->n_gaps, 0);
    assert_int_equal(h->n_satp_rules, 2);
    assert_string_equal(h->satp_rules[0].satp, "VMW_SATP_ALUA");
    assert_null(h->satp_rules[0].vendor);
    assert_null(h->satp_rules[0].psp_options);
    assert_string_equal(h->satp_rules[0].rule_group, "system");
    assert_string_equal(h->satp_rules[1].satp, "VMW_SATP_SYMM");
    assert_string_equal(h->satp_rules[1].model, "SYMMETRIX");
    assert_string_equal(h->satp_rules[1].psp, "VMW_PSP_RR");
    assert_string_equal(h->satp_rules[1].psp_options, "iops=1");
    assert_int_equal(h11->n_satp_rules, 0);
    assert_null(h11->satp_rules);

    /* VMs by name: host, datastores (the unknown one left out), controllers, disks. */
    assert_int_equal(e->n_vms, 2);
    const struct est_vm *app = &e->vms[0], *web = &e->vms[1];
    assert_string_equal(app->name, "app00");
    assert_int_equal(app->hw_version, EST_UNKNOWN);
    assert_true(app->host == EST_NONE);
    assert_int_equal(app->template, 1);
    assert_null(app->ft_state);
    assert_string_equal(web->name, "web01");
    assert_int_equal(web->hw_version, 13);
    assert_string_equal(e->hosts[web->host].name, "esx01");
    assert_int_equal(web->n_datastores, 2);
    assert_string_equal(e->datastores[web->datastores[0]].name, "LocalDS_0");
    assert_string_equal(e->datastores[web->datastores[1]].name, "nfs01");
    assert_int_equal(web->n_controllers, 2);
    assert_int_equal(web->n_disks, 3);
    assert_string_equal(e->datastores[web->disks[0].datastore].name, "LocalDS_0");
    assert_string_equal(web->controllers[web->disks[0].controller].type,
                        "ParaVirtualSCSIController");
    assert_string_equal(e->datastores[web->disks[1].datastore].name, "nfs01");
    assert_string_equal(web->controllers[web->disks[1].controller].shared_bus, "physicalSharing");
    assert_int_equal(web->disks[1].capacity_bytes, 100 * GIB);
    assert_string_equal(web->disks[1].format, "eagerzeroedthick");
    assert_true(web->disks[2].datastore == EST_NONE);
    assert_true(web->disks[2].controller == EST_NONE);
    assert_int_equal(web->n_snapshots, 2);
    assert_int_equal(web->snapshots[0].depth, 1);
    assert_int_equal(web->snapshots[0].created, 1700000000);
    assert_int_equal(web->snapshots[1].created, EST_UNKNOWN);
    est_free(e);

    assert_int_equal(db_estate_load(fx->db, "vc-b", &e), 0);
    assert_string_equal(e->datastores[0].name, "LocalDS_0-b");
    assert_string_equal(e->vms[1].name, "web01-b");
    est_free(e);
    est_free(NULL);
}

TEST_WITH(test_estate_not_found, tl_db_setup_open, tl_db_teardown)
{
    struct tl_dbfile *fx = *state;
    struct estate *e = (struct estate *)1;
    char **names = NULL;
    size_t n = 99;

    assert_int_equal(db_vcenter_names(fx->db, &names, &n), 0);
    assert_int_equal(n, 0);
    free(names);
    assert_int_equal(db_estate_load(fx->db, "vc-a", &e), -VSL_ENOTFOUND);
    assert_null(e);
    /* A vCenter that never answered has no snapshot to check. */
    assert_int_equal(db_poll_failed(fx->db, "vc-down", NULL, T1, T1, "connection refused"), 0);
    assert_int_equal(db_estate_load(fx->db, "vc-down", &e), -VSL_ENOTFOUND);
    snapshot(fx->db, "vc-z", "");
    snapshot(fx->db, "vc-a", "");
    assert_int_equal(db_vcenter_names(fx->db, &names, &n), 0);
    assert_int_equal(n, 2);
    assert_string_equal(names[0], "vc-a");
    assert_string_equal(names[1], "vc-z");
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

/* ---- findings ------------------------------------------------------------------------------- */

static const struct check free_space = {
    .id = "datastore-free-space", .title = "Datastore free space", .severity = SEV_CRITICAL};
static const struct check snapshots = {
    .id = "snapshots", .title = "Old or deep snapshots", .severity = SEV_WARNING};

static const struct chk_waiver waiver = {.check = "snapshots",
                                         .object = "web*",
                                         .reason = "backup window, CHG-1234",
                                         .expires_text = "2027-01-31"};

/* A finding as a test writes it; message doubles as its label in expected orders. */
struct spec {
    const char *label;
    const struct check *check;
    const char *vcenter, *moref, *name;
    enum vsl_severity severity;
    const struct chk_waiver *waiver;
};

static const struct spec F1 = {"F1",        &free_space,  "vc-a", "datastore-1",
                               "LocalDS_0", SEV_CRITICAL, NULL};
static const struct spec F2 = {"F2",    &free_space, "vc-a", "datastore-2",
                               "nfs01", SEV_WARNING, NULL};
static const struct spec F3 = {"F3", &snapshots, "vc-a", "vm-42", "web01", SEV_WARNING, &waiver};
static const struct spec F4 = {"F4", &snapshots, "vc-b", "vm-7", "localds_9", SEV_INFO, NULL};
static const struct spec F5 = {"F5",        &free_space, "vc-b", "datastore-1",
                               "LocalDS_0", SEV_WARNING, NULL};

/* Records one evaluation of vc holding the findings in specs (NULL-terminated). */
static void evaluate(struct db *db, const char *vc, int64_t now, const struct spec *const *specs)
{
    struct finding items[8];
    json_t *evidence[8];
    /* Both checks ran to completion and read everything: what they did not emit is fixed. */
    const char *const completed[] = {free_space.id, snapshots.id};
    struct evaluation ev = {.findings = items, .completed = completed, .n_completed = 2};

    memset(items, 0, sizeof(items));
    for (; *specs; specs++) {
        const struct spec *s = *specs;
        struct finding *f = &items[ev.n_findings];

        assert_true(ev.n_findings < 8);
        chk_fingerprint(s->check->id, s->vcenter, s->moref, NULL, f->fingerprint);
        f->check_id = s->check->id;
        f->check_title = s->check->title;
        f->severity = s->severity;
        f->object_type = "datastore";
        f->object_moref = s->moref;
        f->object_name = s->name;
        f->message = s->label;
        f->evidence = evidence[ev.n_findings] =
            json_pack("{sssi}", "label", s->label, "free_pct", 7);
        f->waiver_reason = s->waiver ? s->waiver->reason : NULL;
        f->waiver_expires = s->waiver ? s->waiver->expires_text : NULL;
        ev.n_findings++;
    }
    assert_int_equal(db_findings_record(db, vc, &ev, now), 0);
    for (size_t i = 0; i < ev.n_findings; i++)
        json_decref(evidence[i]);
}

/* The labels of a page of findings, comma-separated. */
static const char *labels(const json_t *list, char *buf, size_t size)
{
    const json_t *f;
    size_t i, len = 0;

    buf[0] = '\0';
    json_array_foreach(list, i, f)
    {
        int w = snprintf(buf + len, size - len, "%s%s", i ? "," : "",
                         json_string_value(json_object_get(f, "message")));
        assert_true(w > 0 && (size_t)w < size - len);
        len += (size_t)w;
    }
    return buf;
}

/* Runs the query and returns its labels; *total and the next cursor (freed unless asked for). */
static const char *query(struct db *db, const struct db_findings_filter *f, char *buf, size_t size,
                         int64_t *total, char **next)
{
    json_t *list = NULL;
    char *nx = NULL;
    int64_t t = -1;

    assert_int_equal(db_findings_query(db, f, &list, &t, &nx), 0);
    assert_true(json_is_array(list));
    labels(list, buf, size);
    json_decref(list);
    if (total)
        *total = t;
    if (next)
        *next = nx;
    else
        free(nx);
    return buf;
}

static json_t *get(struct db *db, const struct spec *s)
{
    char fp[17];
    json_t *j = NULL;

    chk_fingerprint(s->check->id, s->vcenter, s->moref, NULL, fp);
    assert_int_equal(db_finding_get(db, fp, &j), 0);
    return j;
}

static void assert_str(const json_t *o, const char *key, const char *want)
{
    const json_t *v = json_object_get(o, key);

    if (!want) {
        if (!json_is_null(v))
            fail_msg("%s: want null", key);
        return;
    }
    if (!json_is_string(v) || strcmp(json_string_value(v), want) != 0)
        fail_msg("%s: got %s, want %s", key, json_is_string(v) ? json_string_value(v) : "?", want);
}

/* Asserts a finding's life: its status, first and last sightings and when it was resolved. */
static void assert_life(const json_t *f, const char *status, const char *first_seen,
                        const char *last_seen, const char *resolved_at)
{
    assert_str(f, "status", status);
    assert_str(f, "first_seen", first_seen);
    assert_str(f, "last_seen", last_seen);
    assert_str(f, "resolved_at", resolved_at);
}

/* Asserts the life of s's finding as db_finding_get() reads it. */
static void assert_life_of(struct db *db, const struct spec *s, const char *status,
                           const char *first_seen, const char *last_seen, const char *resolved_at)
{
    json_t *f = get(db, s);

    assert_life(f, status, first_seen, last_seen, resolved_at);
    json_decref(f);
}

TEST_WITH(test_history, tl_db_setup_open, tl_db_teardown)
{
    const struct spec *const run_ab[] = {&F1, &F2, NULL}, *const run_a[] = {&F1, NULL};
    struct tl_dbfile *fx = *state;
    const struct db_findings_filter all = {0}, fresh = {.status = "new"},
                                    fixed = {.status = "resolved"};
    /* Each evaluation, then A's and B's lives (status, first seen, last seen, resolved) and
     * the findings listed as new, by default (those not resolved) and as resolved. */
    static const struct {
        int64_t now;
        int only_a;
        const char *life[2][4];
        const char *fresh, *all, *fixed;
    } steps[] = {
        {T1, 0, {{"new", T1_ISO, T1_ISO, NULL}, {"new", T1_ISO, T1_ISO, NULL}},
         "F1,F2", "F1,F2", ""},
        /* B is fixed by the next evaluation; A is still there and no longer new. */
        {T2, 1, {{"open", T1_ISO, T2_ISO, NULL}, {"resolved", T1_ISO, T1_ISO, T2_ISO}},
         "", "F1", "F2"},
        /* B comes back: a new occurrence, open again, first seen now. */
        {T3, 0, {{"open", T1_ISO, T3_ISO, NULL}, {"new", T3_ISO, T3_ISO, NULL}},
         "F2", "F1,F2", ""},
    };
    const struct spec *const ab[] = {&F1, &F2};
    char buf[256];

    for (size_t i = 0; i < N(steps); i++) {
        evaluate(fx->db, "vc-a", steps[i].now, steps[i].only_a ? run_a : run_ab);
        for (int k = 0; k < 2; k++)
            assert_life_of(fx->db, ab[k], steps[i].life[k][0], steps[i].life[k][1],
                           steps[i].life[k][2], steps[i].life[k][3]);
        assert_string_equal(query(fx->db, &fresh, buf, sizeof(buf), NULL, NULL), steps[i].fresh);
        assert_string_equal(query(fx->db, &all, buf, sizeof(buf), NULL, NULL), steps[i].all);
        assert_string_equal(query(fx->db, &fixed, buf, sizeof(buf), NULL, NULL), steps[i].fixed);
    }
}

static void assert_text_page_same(struct db *db, const struct db_findings_filter *f,
                                  unsigned fields);

/* {"poll": id, "mode": mode} of a finding's key (first_seen_by, resolved_by); id 0: null. */
static void assert_poll(const json_t *f, const char *key, int64_t id, const char *mode)
{
    const json_t *v = json_object_get(f, key);

    if (!id) {
        if (!json_is_null(v))
            fail_msg("%s: want null", key);
        return;
    }
    if (json_integer_value(json_object_get(v, "poll")) != id)
        fail_msg("%s: poll %lld, want %lld", key,
                 (long long)json_integer_value(json_object_get(v, "poll")), (long long)id);
    assert_str(v, "mode", mode);
}

/* A finding names the poll whose snapshot first showed it and the one that no longer did,
 * with how each read: the vCenter's latest successful poll when the evaluation ran (a full
 * read or an incremental round; a failed poll judges nothing). */
TEST_WITH(test_findings_name_their_polls, tl_db_setup_open, tl_db_teardown)
{
    const struct spec *const run_ab[] = {&F1, &F2, NULL}, *const run_a[] = {&F1, NULL};
    struct tl_dbfile *fx = *state;
    const struct db_findings_filter all = {.status = "resolved"}, open = {0};
    struct db_snapshot *u = NULL;
    struct vim_sink sink;
    json_t *a, *b;

    /* Findings recorded before any poll (e.g. `vslint check --offline` of an old file). */
    evaluate(fx->db, "vc-a", T1, run_ab);
    a = get(fx->db, &F1);
    assert_poll(a, "first_seen_by", 0, NULL);
    json_decref(a);
    evaluate(fx->db, "vc-a", T1 + 500, (const struct spec *const[]){NULL});

    snapshot(fx->db, "vc-a", "");
    int64_t full = tl_db_count(fx->path, "SELECT max(id) FROM polls");
    evaluate(fx->db, "vc-a", T1 + 1000, run_ab);
    a = get(fx->db, &F1);
    assert_poll(a, "first_seen_by", full, "full");
    assert_poll(a, "resolved_by", 0, NULL);
    json_decref(a);

    /* A round changes datastore-2; then a full read of the other vCenter and a failed one of
     * this: neither is what the next evaluation of vc-a judges. */
    assert_int_equal(db_update_begin(fx->db, "vc-a", &u, &sink), 0);
    assert_int_equal(db_update_forget(u, "Datastore", "datastore-2"), 0);
    assert_int_equal(db_update_commit(u, &(struct db_round){.started_ms = T2 - 50,
                                                             .finished_ms = T2 - 10,
                                                             .version = "3"}),
                     0);
    int64_t round = tl_db_count(fx->path, "SELECT max(id) FROM polls");
    snapshot(fx->db, "vc-b", "-b");
    assert_int_equal(db_poll_failed(fx->db, "vc-a", NULL, T2 - 5, T2 - 1, "refused"), 0);
    assert_true(tl_db_count(fx->path, "SELECT max(id) FROM polls") > round + 1);

    evaluate(fx->db, "vc-a", T2, run_a);
    a = get(fx->db, &F1);
    b = get(fx->db, &F2);
    assert_poll(a, "first_seen_by", full, "full");
    assert_poll(a, "resolved_by", 0, NULL);
    assert_poll(b, "first_seen_by", full, "full");
    assert_poll(b, "resolved_by", round, "incremental");
    json_decref(a);
    json_decref(b);
    /* The text pages the API sends say the same, with fields= too. */
    assert_text_page_same(fx->db, &all, 0);
    assert_text_page_same(fx->db, &all, 1u << DB_FF_FINGERPRINT | 1u << DB_FF_RESOLVED_BY);

    /* Back again: a new occurrence, first seen by the latest round; no longer resolved. */
    evaluate(fx->db, "vc-a", T3, run_ab);
    b = get(fx->db, &F2);
    assert_poll(b, "first_seen_by", round, "incremental");
    assert_poll(b, "resolved_by", 0, NULL);
    json_decref(b);
    assert_text_page_same(fx->db, &open, 1u << DB_FF_FIRST_SEEN_BY | 1u << DB_FF_RESOLVED_BY);
}

TEST_WITH(test_finding_shape, tl_db_setup_open, tl_db_teardown)
{
    const struct spec *const run[] = {&F1, &F3, NULL};
    struct tl_dbfile *fx = *state;
    json_t *j, *want;
    char fp[17];

    evaluate(fx->db, "vc-a", T1, run);
    j = get(fx->db, &F3);
    chk_fingerprint("snapshots", "vc-a", "vm-42", NULL, fp);
    assert_str(j, "fingerprint", fp);
    assert_str(j, "check", "snapshots");
    assert_str(j, "title", "Old or deep snapshots");
    assert_str(j, "severity", "warning");
    assert_str(j, "status", "waived");
    assert_str(j, "vcenter", "vc-a");
    assert_str(j, "detail", NULL);
    assert_str(json_object_get(j, "object"), "type", "datastore");
    assert_str(json_object_get(j, "object"), "moref", "vm-42");
    assert_str(json_object_get(j, "object"), "name", "web01");
    assert_str(json_object_get(j, "waiver"), "reason", "backup window, CHG-1234");
    assert_str(json_object_get(j, "waiver"), "expires", "2027-01-31");
    want = json_pack("{sssi}", "label", "F3", "free_pct", 7);
    assert_true(json_equal(json_object_get(j, "evidence"), want));
    json_decref(want);
    json_decref(j);

    j = get(fx->db, &F1);
    assert_str(j, "status", "new");
    assert_true(json_is_null(json_object_get(j, "waiver")));
    json_decref(j);

    assert_int_equal(db_finding_get(fx->db, "0123456789abcdef", &j), -VSL_ENOTFOUND);
    assert_null(j);
}

/* vc-a evaluated twice (F1, F2, F3 waived), vc-b once, later (F4, F5). */
static void five_findings(struct db *db)
{
    const struct spec *const a[] = {&F1, &F2, &F3, NULL}, *const b[] = {&F4, &F5, NULL};

    evaluate(db, "vc-a", T1, a);
    evaluate(db, "vc-a", T2, a);
    evaluate(db, "vc-b", T2, b);
}

/* db_findings_page_text() of f parses to exactly what db_findings_query() gives (the API's
 * pages are the first, a single finding and the CLI the second), with the same total and next;
 * with fields, to the same items keeping only those members. */
static void assert_text_page_same(struct db *db, const struct db_findings_filter *f,
                                  unsigned fields)
{
    struct vsl_buf b;
    json_t *want = NULL, *got, *item;
    char *next = NULL, *tnext = NULL;
    int64_t total = -1, ttotal = -2;
    size_t i;
    int n = -1;

    assert_int_equal(db_findings_query(db, f, &want, &total, &next), 0);
    vsl_buf_init(&b, 1 << 20);
    assert_int_equal(db_findings_page_text(db, f, fields, &b, &n, &ttotal, &tnext), 0);
    got = json_loadb(b.data, b.len, 0, NULL);
    assert_non_null(got);
    assert_int_equal(n, (int)json_array_size(want));
    assert_int_equal(ttotal, total);
    if (next || tnext)
        assert_string_equal(tnext, next);
    json_array_foreach(want, i, item) {
        const char *k;
        json_t *v;
        void *tmp;
        json_object_foreach_safe(item, tmp, k, v) {
            size_t j = 0;
            while (db_finding_fields[j] && strcmp(db_finding_fields[j], k))
                j++;
            assert_non_null(db_finding_fields[j]); /* a member the text writer knows */
            if (fields && !(fields & (1u << j)))
                json_object_del(item, k);
        }
    }
    if (!json_equal(got, want)) {
        char *a = json_dumps(got, JSON_COMPACT), *w = json_dumps(want, JSON_COMPACT);
        fail_msg("text page %s\nquery      %s", a, w);
    }
    json_decref(got);
    json_decref(want);
    free(next);
    free(tnext);
    vsl_buf_free(&b);
}

TEST_WITH(test_filters, tl_db_setup_open, tl_db_teardown)
{
    static const struct {
        struct db_findings_filter f;
        const char *want;
    } cases[] = {
        /* critical first, then check, vCenter, object name */
        {{0}, "F1,F2,F5,F3,F4"},
        {{.severity = "critical"}, "F1"},
        {{.severity = "warning"}, "F1,F2,F5,F3"},
        {{.severity = "info"}, "F1,F2,F5,F3,F4"},
        {{.check = "snapshots"}, "F3,F4"},
        {{.check = "no-such-check"}, ""},
        {{.vcenter = "vc-b"}, "F5,F4"},
        {{.object = "LOCALds"}, "F1,F5,F4"},
        {{.object = "%"}, ""}, /* not a pattern */
        {{.vcenter = "vc-a", .check = "datastore-free-space", .severity = "warning"}, "F1,F2"},
        {{.status = "new"}, "F5,F4"},
        {{.status = "open"}, "F1,F2,F5,F4"},
        {{.status = "waived"}, "F3"},
        {{.status = "resolved"}, ""},
        {{.status = "waived", .severity = "critical"}, ""},
    };
    static const struct db_findings_filter bad[] = {
        {.severity = "fatal"}, {.status = "closed"}, {.severity = "Warning"}, {.limit = -1}};
    struct tl_dbfile *fx = *state;
    char buf[256];
    int64_t total;
    json_t *list = (json_t *)1;
    char *next = (char *)1;
    size_t i;

    five_findings(fx->db);
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        query(fx->db, &cases[i].f, buf, sizeof(buf), &total, NULL);
        if (strcmp(buf, cases[i].want) != 0)
            fail_msg("case %zu: got \"%s\", want \"%s\"", i, buf, cases[i].want);
        assert_int_equal(total, cases[i].want[0] ? (int64_t)(strlen(cases[i].want) + 1) / 3 : 0);
        assert_text_page_same(fx->db, &cases[i].f, 0);
    }
    /* Pages, members kept, and evidence damaged by hand (answered {}, as when parsed). */
    const struct db_findings_filter page = {.limit = 2};
    assert_text_page_same(fx->db, &page, 0);
    assert_text_page_same(fx->db, &page, 1u << DB_FF_FINGERPRINT | 1u << DB_FF_WAIVER |
                                             1u << DB_FF_EVIDENCE | 1u << DB_FF_HOST);
    sqlite3 *h;
    assert_int_equal(sqlite3_open(fx->path, &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h, "UPDATE findings SET evidence_json = '{\"cut\": ['"
                                     " WHERE object_name = 'web01';"
                                     "UPDATE findings SET object_name = 'bad' || char(10) ||"
                                     " '\"q' || x'ff' WHERE object_moref = 'vm-7';"
                                     "UPDATE findings SET message = 'a' || char(10, 9, 1) ||"
                                     " '\"b\" \\ c\u00e9' WHERE check_id = 'snapshots'",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(h);
    assert_text_page_same(fx->db, &(struct db_findings_filter){0}, 0);
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(db_findings_query(fx->db, &bad[i], &list, &total, &next), -EINVAL);
        assert_null(list);
        assert_null(next);
    }
}

TEST_WITH(test_pagination, tl_db_setup_open, tl_db_teardown)
{
    struct tl_dbfile *fx = *state;
    struct db_findings_filter f = {.limit = 2};
    char page[64], all[256] = "", *next = NULL;
    int64_t total;
    int pages = 0;

    five_findings(fx->db);
    do {
        f.cursor = next;
        query(fx->db, &f, page, sizeof(page), &total, &next);
        free((char *)f.cursor);
        assert_int_equal(total, 5); /* without limit or cursor */
        if (pages++)
            strncat(all, ",", sizeof(all) - strlen(all) - 1);
        strncat(all, page, sizeof(all) - strlen(all) - 1);
        assert_true(pages <= 3);
    } while (next);
    assert_int_equal(pages, 3);
    assert_string_equal(all, "F1,F2,F5,F3,F4");

    /* A page that ends exactly at the last finding has no next. */
    f = (struct db_findings_filter){.limit = 5};
    assert_string_equal(query(fx->db, &f, page, sizeof(page), &total, &next), "F1,F2,F5,F3,F4");
    assert_null(next);

    /* Filters and cursor together: the cursor continues within the filter. */
    f = (struct db_findings_filter){.limit = 1, .object = "localds"};
    assert_string_equal(query(fx->db, &f, page, sizeof(page), &total, &next), "F1");
    assert_int_equal(total, 3);
    f.cursor = next;
    assert_string_equal(query(fx->db, &f, page, sizeof(page), &total, &next), "F5");
    free((char *)f.cursor);
    free(next);
}

/* The statement cache is tiny here, so every query() evicts: the count statement it still
 * holds while it asks for the page statement must not be the one finalized (issue 26: a
 * use-after-free under ASan or Valgrind before the cache knew what it had lent). Every filter's
 * first page is read, then every filter is continued with its cursor after all the others
 * have churned the cache, as a dashboard's clients would; the pages must still add up. */
TEST_WITH(test_stmt_cache_evicts_nothing_held, tl_db_setup_open, tl_db_teardown)
{
    static const struct {
        struct db_findings_filter f;
        const char *want;
    } cases[] = {
        {{0}, "F1,F2,F5,F3,F4"},
        {{.vcenter = "vc-a"}, "F1,F2,F3"},
        {{.severity = "warning"}, "F1,F2,F5,F3"},
        {{.check = "snapshots"}, "F3,F4"},
        {{.vcenter = "vc-b"}, "F5,F4"},
        {{.object = "LOCALds"}, "F1,F5,F4"},
        {{.status = "open"}, "F1,F2,F5,F4"},
        {{.status = "new", .severity = "info"}, "F5,F4"},
        {{.vcenter = "vc-a", .status = "waived"}, "F3"},
        {{.vcenter = "vc-a", .check = "datastore-free-space", .severity = "warning"}, "F1,F2"},
    };
    enum { N = sizeof(cases) / sizeof(cases[0]) };
    static const int sizes[] = {1, 2, 3};
    struct tl_dbfile *fx = *state;
    char page[64], all[N][256];
    char *next[N];
    int64_t total;

    five_findings(fx->db);
    for (size_t z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++) {
        int open = N;

        db_stmt_cache_size(fx->db, sizes[z]);
        for (size_t i = 0; i < N; i++) {
            struct db_findings_filter f = cases[i].f;
            f.limit = 1;
            query(fx->db, &f, all[i], sizeof(all[i]), &total, &next[i]);
            assert_int_equal(total, (int64_t)(strlen(cases[i].want) + 1) / 3);
        }
        while (open > 0) {
            open = 0;
            for (size_t i = 0; i < N; i++) {
                struct db_findings_filter f = cases[i].f;
                if (!next[i])
                    continue;
                f.limit = 1;
                f.cursor = next[i];
                query(fx->db, &f, page, sizeof(page), &total, &next[i]);
                free((char *)f.cursor);
                strncat(all[i], ",", sizeof(all[i]) - strlen(all[i]) - 1);
                strncat(all[i], page, sizeof(all[i]) - strlen(all[i]) - 1);
                assert_true(db_changed(fx->db) >= 0); /* one more cached statement */
                open += next[i] != NULL;
            }
        }
        for (size_t i = 0; i < N; i++)
            if (strcmp(all[i], cases[i].want) != 0)
                fail_msg("cache of %d, case %zu: got \"%s\", want \"%s\"", sizes[z], i,
                         all[i], cases[i].want);
        assert_text_page_same(fx->db, &(struct db_findings_filter){.limit = 2}, 0);
    }
}

TEST_WITH(test_bad_cursor, tl_db_setup_open, tl_db_teardown)
{
    static const char *const bad[] = {
        "",
        "zz",
        "abc",                    /* odd length */
        "ABCD",                   /* upper case is not what we hand out */
        "41",                     /* "A": one field */
        "390061006200630064",     /* "9\0a\0b\0c\0d": no such severity order */
        "3100610062006300640065", /* six fields */
        "780061006200630064",     /* order "x" */
    };
    struct tl_dbfile *fx = *state;
    struct db_findings_filter f = {.limit = 2};
    json_t *list = NULL;
    int64_t total;
    char *next = NULL;
    size_t i;

    five_findings(fx->db);
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        f.cursor = bad[i];
        if (db_findings_query(fx->db, &f, &list, &total, &next) != -EINVAL)
            fail_msg("cursor \"%s\" accepted", bad[i]);
        assert_null(list);
        assert_null(next);
    }
    /* A well-formed cursor past everything is an empty last page, not an error. */
    f.cursor = "3200ffff00ffff00ffff00ffff";
    assert_int_equal(db_findings_query(fx->db, &f, &list, &total, &next), 0);
    assert_int_equal(json_array_size(list), 0);
    assert_int_equal(total, 5);
    assert_null(next);
    json_decref(list);
}

TEST_WITH(test_vcenters_apart, tl_db_setup_open, tl_db_teardown)
{
    const struct spec *const a[] = {&F1, NULL}, *const b[] = {&F5, NULL}, *const none[] = {NULL};
    struct tl_dbfile *fx = *state;
    const struct db_findings_filter unresolved = {0}, fixed = {.status = "resolved"};
    char buf[64];
    json_t *j;

    evaluate(fx->db, "vc-a", T1, a);
    evaluate(fx->db, "vc-b", T1, b);
    /* The same object on another vCenter is another finding. */
    assert_string_equal(query(fx->db, &unresolved, buf, sizeof(buf), NULL, NULL), "F1,F5");
    /* vc-b is clean now; vc-a was not evaluated and keeps its finding. */
    evaluate(fx->db, "vc-b", T2, none);
    assert_string_equal(query(fx->db, &unresolved, buf, sizeof(buf), NULL, NULL), "F1");
    assert_string_equal(query(fx->db, &fixed, buf, sizeof(buf), NULL, NULL), "F5");
    j = get(fx->db, &F1);
    assert_str(j, "status", "new");
    json_decref(j);
}

TEST_WITH(test_summary, tl_db_setup_open, tl_db_teardown)
{
    struct tl_dbfile *fx = *state;
    json_t *s = NULL, *want;
    const struct spec *const a[] = {&F1, &F3, NULL};

    assert_int_equal(db_findings_summary(fx->db, NULL, &s), 0);
    want = json_loads("{\"total\":0,\"by_severity\":{\"critical\":0,\"warning\":0,\"info\":0},"
                      "\"by_status\":{\"new\":0,\"open\":0,\"waived\":0,\"unverified\":0},\"by_check\":{}}",
                      0, NULL);
    assert_true(json_equal(s, want));
    json_decref(s);
    json_decref(want);

    five_findings(fx->db);
    /* vc-a again without F2: F2 resolved, not counted. */
    evaluate(fx->db, "vc-a", T3, a);
    assert_int_equal(db_findings_summary(fx->db, NULL, &s), 0);
    want = json_loads(
        "{\"total\":3,\"by_severity\":{\"critical\":1,\"warning\":1,\"info\":1},"
        "\"by_status\":{\"new\":2,\"open\":3,\"waived\":1,\"unverified\":0},"
        "\"by_check\":{\"datastore-free-space\":{\"critical\":1,\"warning\":1,\"info\":0},"
        "\"snapshots\":{\"critical\":0,\"warning\":0,\"info\":1}}}",
        0, NULL);
    if (!json_equal(s, want)) {
        char *got = json_dumps(s, JSON_COMPACT);
        fail_msg("summary: %s", got);
    }
    json_decref(s);
    json_decref(want);

    assert_int_equal(db_findings_summary(fx->db, "vc-a", &s), 0);
    assert_int_equal(json_integer_value(json_object_get(s, "total")), 1);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(s, "by_status"), "waived")),
                     1);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(s, "by_status"), "new")),
                     0);
    json_decref(s);
}

/* ---- honest history: the engine's verdicts recorded in the store ---------------------------- */

/* A check whose run the test steers: it emits a finding on every host named in flaky_emit
 * (its LUN naa.1, which the test names like the host, to sort by), then fails when flaky_fail
 * is set. */
static const char *flaky_emit[4];
static int flaky_fail;

static int flaky_run(struct chk_ctx *ctx, const struct estate *e)
{
    for (size_t i = 0; i < e->n_hosts; i++) {
        for (size_t k = 0; k < 4 && flaky_emit[k]; k++) {
            if (strcmp(flaky_emit[k], e->hosts[i].name))
                continue;
            int r = chk_emit(ctx, &(struct chk_emit){.severity = SEV_WARNING,
                                                     .object_type = "lun",
                                                     .object_name = e->hosts[i].name,
                                                     .host = &e->hosts[i],
                                                     .detail = "naa.1",
                                                     .message = e->hosts[i].name,
                                                     .evidence = json_object()});
            if (r < 0)
                return r;
        }
    }
    return flaky_fail ? -EIO : 0;
}

static const struct check flaky = {.id = "flaky",
                                   .title = "A check that can fail",
                                   .severity = SEV_WARNING,
                                   .needs = CHK_NEEDS_HOST | CHK_NEEDS_ESXCLI,
                                   .run = flaky_run};

static struct est_gap esxcli_refused = {"esxcli", "NoPermission fault: denied"};

/* Three hosts: esx1 and esx2 connected, esx3 in the state given; esx2 has an esxcli gap when
 * gap is set. */
static void three_hosts(struct estate *e, struct est_host h[3], const char *esx3_state, int gap)
{
    memset(e, 0, sizeof(*e));
    memset(h, 0, 3 * sizeof(*h));
    h[0] = (struct est_host){.moref = "host-1", .name = "esx1", .connection_state = "connected"};
    h[1] = (struct est_host){.moref = "host-2", .name = "esx2", .connection_state = "connected"};
    h[2] = (struct est_host){.moref = "host-3", .name = "esx3", .connection_state = esx3_state};
    if (gap) {
        h[1].gaps = &esxcli_refused;
        h[1].n_gaps = 1;
    }
    e->vcenter = "vc-a";
    e->hosts = h;
    e->n_hosts = 3;
}

/* One engine run of flaky over e, recorded at now. Returns the run's status. */
static int run_flaky(struct db *db, const struct estate *e, int64_t now)
{
    struct chk_results res = {0};
    struct evaluation ev;
    int r = chk_run_one(&flaky, NULL, e, now / 1000, &res);

    assert_int_equal(chk_evaluation(&res, &ev), 0);
    assert_int_equal(db_findings_record(db, "vc-a", &ev, now), 0);
    evaluation_free(&ev);
    chk_results_free(&res);
    return r;
}

/* Three connected hosts, and flaky's findings on esx1 and esx2 recorded at T1. */
static void flaky_on_esx1_esx2(struct db *db, struct estate *e, struct est_host h[3])
{
    three_hosts(e, h, "connected", 0);
    flaky_emit[0] = "esx1";
    flaky_emit[1] = "esx2";
    flaky_emit[2] = NULL;
    flaky_fail = 0;
    assert_int_equal(run_flaky(db, e, T1), 0);
}

static json_t *get_on(struct db *db, const char *host_moref)
{
    char fp[17];
    json_t *j = NULL;

    chk_fingerprint("flaky", "vc-a", host_moref, "naa.1", fp);
    assert_int_equal(db_finding_get(db, fp, &j), 0);
    return j;
}

static const char *unverified_reason(const json_t *f)
{
    return json_string_value(json_object_get(json_object_get(f, "unverified"), "reason"));
}

TEST_WITH(test_check_error_keeps_history, tl_db_setup_open, tl_db_teardown)
{
    struct tl_dbfile *fx = *state;
    const struct db_findings_filter fixed = {.status = "resolved"};
    struct estate e;
    struct est_host h[3];
    char buf[256];
    json_t *a, *b;

    flaky_on_esx1_esx2(fx->db, &e, h);

    /* The check emits esx1's finding, then fails before esx2's: esx2's is not fixed, it is
     * unverified, with its first and last sightings as they were. */
    flaky_emit[1] = NULL;
    flaky_fail = 1;
    assert_int_equal(run_flaky(fx->db, &e, T2), -EIO);
    a = get_on(fx->db, "host-1");
    b = get_on(fx->db, "host-2");
    assert_str(a, "status", "open");
    assert_str(a, "last_seen", T2_ISO);
    assert_true(json_is_null(json_object_get(a, "unverified")));
    assert_life(b, "open", T1_ISO, T1_ISO, NULL);
    assert_str(json_object_get(b, "unverified"), "since", T2_ISO);
    assert_string_equal(unverified_reason(b), "check flaky failed: Input/output error");
    assert_str(json_object_get(b, "host"), "name", "esx2");
    assert_true(json_is_null(json_object_get(json_object_get(b, "object"), "moref")));
    assert_str(json_object_get(b, "object"), "type", "lun");
    json_decref(a);
    json_decref(b);
    assert_string_equal(query(fx->db, &fixed, buf, sizeof(buf), NULL, NULL), "");
    assert_text_page_same(fx->db, &(struct db_findings_filter){0}, 0); /* unverified, host */

    /* Failing again: still unverified since the first failure. */
    assert_int_equal(run_flaky(fx->db, &e, T3), -EIO);
    b = get_on(fx->db, "host-2");
    assert_str(json_object_get(b, "unverified"), "since", T2_ISO);
    assert_str(b, "first_seen", T1_ISO);
    json_decref(b);

    /* The check completes without it: now it is seen fixed. */
    flaky_fail = 0;
    assert_int_equal(run_flaky(fx->db, &e, T3 + 1000), 0);
    b = get_on(fx->db, "host-2");
    assert_str(b, "status", "resolved");
    assert_str(b, "resolution", "fixed");
    assert_true(json_is_null(json_object_get(b, "unverified")));
    json_decref(b);
    assert_string_equal(query(fx->db, &fixed, buf, sizeof(buf), NULL, NULL), "esx2");
}

TEST_WITH(test_unread_inputs_keep_history, tl_db_setup_open, tl_db_teardown)
{
    struct tl_dbfile *fx = *state;
    const struct db_findings_filter fixed = {.status = "resolved"},
                                    unverified = {.unverified = 1}, fresh = {.status = "new"},
                                    on_esx3 = {.host = "ESX3"};
    struct estate e;
    struct est_host h[3];
    char buf[256];
    json_t *j, *s = NULL;

    three_hosts(&e, h, "connected", 0);
    flaky_emit[0] = "esx1";
    flaky_emit[1] = "esx2";
    flaky_emit[2] = "esx3";
    flaky_emit[3] = NULL;
    flaky_fail = 0;
    assert_int_equal(run_flaky(fx->db, &e, T1), 0);
    assert_string_equal(query(fx->db, &fresh, buf, sizeof(buf), NULL, NULL), "esx1,esx2,esx3");
    assert_string_equal(query(fx->db, &on_esx3, buf, sizeof(buf), NULL, NULL), "esx3");

    /* Next poll: esx2 refused esxcli, esx3 stopped responding, and the check (which needs
     * both) emits nothing anywhere. Only esx1 was really read: only its finding is fixed. */
    three_hosts(&e, h, "notResponding", 1);
    flaky_emit[0] = NULL;
    assert_int_equal(run_flaky(fx->db, &e, T2), 0);
    assert_string_equal(query(fx->db, &fixed, buf, sizeof(buf), NULL, NULL), "esx1");
    assert_string_equal(query(fx->db, &unverified, buf, sizeof(buf), NULL, NULL), "esx2,esx3");
    /* Unverified findings are not "new", though first and last seen are the same poll. */
    assert_string_equal(query(fx->db, &fresh, buf, sizeof(buf), NULL, NULL), "");
    j = get_on(fx->db, "host-2");
    assert_str(j, "first_seen", T1_ISO);
    assert_str(j, "status", "open");
    assert_string_equal(unverified_reason(j), "esxcli could not be read on host esx2: "
                                              "NoPermission fault: denied");
    json_decref(j);
    j = get_on(fx->db, "host-3");
    assert_string_equal(unverified_reason(j), "host esx3 is notResponding: vCenter holds only its "
                                              "last known configuration");
    json_decref(j);
    assert_int_equal(db_findings_summary(fx->db, NULL, &s), 0);
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(s, "by_status"), "unverified")), 2);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(s, "by_status"), "new")),
                     0);
    json_decref(s);

    /* A not-responding host is not judged on its stale configuration even when the check
     * would emit there: the finding is dropped from the run and the old one kept. */
    flaky_emit[0] = "esx3";
    assert_int_equal(run_flaky(fx->db, &e, T3), 0);
    j = get_on(fx->db, "host-3");
    assert_str(j, "last_seen", T1_ISO);
    assert_str(json_object_get(j, "unverified"), "since", T2_ISO);
    json_decref(j);
}

/* An evaluation rewrites only the rows that changed: an open finding seen again as it was
 * keeps its stored row (last_seen_ms of the evaluation that last wrote it), while every reader
 * gives its last_seen as the latest evaluation's; a finding then not verified, or fixed, keeps
 * the last_seen it had then, not the stale time in its row. */
TEST_WITH(test_unchanged_findings_not_rewritten, tl_db_setup_open, tl_db_teardown)
{
    struct tl_dbfile *fx = *state;
    const struct db_findings_filter fresh = {.status = "new"},
                                    by_last = {.sort = "last_seen"},
                                    by_last_desc = {.sort = "-last_seen"};
    const int64_t T4 = T3 + 1000, T5 = T3 + 2000;
    struct estate e;
    struct est_host h[3];
    char buf[256];
    json_t *j;

    flaky_on_esx1_esx2(fx->db, &e, h);
    /* Seen again: new at the evaluation before, so rewritten (no longer new). */
    assert_int_equal(run_flaky(fx->db, &e, T2), 0);
    assert_string_equal(query(fx->db, &fresh, buf, sizeof(buf), NULL, NULL), "");
    /* Seen again unchanged: the rows are left as T2 wrote them. */
    assert_int_equal(run_flaky(fx->db, &e, T3), 0);
    assert_int_equal(tl_db_count(fx->path, "SELECT count(*) FROM findings"
                                           " WHERE last_seen_ms = 1796056965000"),
                     2);
    j = get_on(fx->db, "host-2");
    assert_life(j, "open", T1_ISO, T3_ISO, NULL);
    json_decref(j);
    assert_string_equal(query(fx->db, &fresh, buf, sizeof(buf), NULL, NULL), "");
    assert_text_page_same(fx->db, &(struct db_findings_filter){0}, 1u << DB_FF_LAST_SEEN);

    /* The check fails before esx2's finding: esx2's stays last seen at T3, not at T2. */
    flaky_emit[1] = NULL;
    flaky_fail = 1;
    assert_int_equal(run_flaky(fx->db, &e, T4), -EIO);
    j = get_on(fx->db, "host-2");
    assert_life(j, "open", T1_ISO, T3_ISO, NULL);
    assert_str(json_object_get(j, "unverified"), "since", "2026-12-01T16:42:46Z");
    json_decref(j);
    j = get_on(fx->db, "host-1");
    assert_life(j, "open", T1_ISO, "2026-12-01T16:42:46Z", NULL);
    json_decref(j);
    /* Sorted by the last_seen the findings show, not by their rows'. */
    assert_string_equal(query(fx->db, &by_last, buf, sizeof(buf), NULL, NULL), "esx2,esx1");
    assert_string_equal(query(fx->db, &by_last_desc, buf, sizeof(buf), NULL, NULL), "esx1,esx2");

    /* Seen fixed: resolved, last seen at T3 still. */
    flaky_fail = 0;
    assert_int_equal(run_flaky(fx->db, &e, T5), 0);
    j = get_on(fx->db, "host-2");
    assert_life(j, "resolved", T1_ISO, T3_ISO, "2026-12-01T16:42:47Z");
    json_decref(j);
}

/* A check whose evidence has what JSON text can write differently: a real with many digits, an
 * escaped string, an empty array and object, a nested list, a large integer; control characters,
 * a character outside the BMP, a key that needs escaping, a negative integer, a whole real and
 * a tiny one. */
static int evident_run(struct chk_ctx *ctx, const struct estate *e)
{
    for (size_t i = 0; i < e->n_hosts; i++) {
        json_t *ev = json_pack("{s:f, s:s, s:[], s:{}, s:[{s:s, s:n, s:b}], s:I, s:s, s:s,"
                               " s:i, s:f, s:[b, [], {}, f]}",
                               "pct", 9.0295486111111103, "note", "line one\n\"two\" \u00e9",
                               "none", "empty", "disks", "file", "[ds] a/b.vmdk", "parent",
                               "thin", 1, "bytes", (json_int_t)17179869184LL, "ctl",
                               "tab\there\x01\x1f\x7f\\", "key \"q\"/\\",
                               "\xf0\x9f\x98\x80 /", "neg", -42, "whole", 3.0, "mixed", 0,
                               -1e-300);
        int r = chk_emit(ctx, &(struct chk_emit){.severity = SEV_WARNING,
                                                 .object_type = "host",
                                                 .object_moref = e->hosts[i].moref,
                                                 .object_name = e->hosts[i].name,
                                                 .message = e->hosts[i].name,
                                                 .evidence = ev});
        if (r < 0)
            return r;
    }
    return 0;
}

static const struct check evident = {
    .id = "evident", .title = "Evidence of every kind", .severity = SEV_WARNING,
    .run = evident_run};

/* evident over e at now; compact: as an evaluation runs it (evidence kept as text). */
static void run_evident(struct db *db, const struct estate *e, int64_t now, int compact)
{
    struct chk_results res = {.compact = compact}, trees = {0};
    struct evaluation ev;

    assert_int_equal(chk_run_one(&evident, NULL, e, now / 1000, &res), 0);
    assert_int_equal(chk_run_one(&evident, NULL, e, now / 1000, &trees), 0);
    assert_int_equal(res.n, 3);
    for (size_t i = 0; i < res.n; i++) {
        char *want = json_dumps(trees.items[i].evidence, JSON_COMPACT);
        if (compact) {
            assert_null(res.items[i].evidence);
            assert_string_equal(res.items[i].evidence_json, want);
        } else {
            assert_null(res.items[i].evidence_json);
        }
        free(want);
    }
    assert_int_equal(chk_evaluation(&res, &ev), 0);
    assert_int_equal(db_findings_record(db, "vc-a", &ev, now), 0);
    evaluation_free(&ev);
    chk_results_free(&trees);
    chk_results_free(&res);
}

/* An evaluation keeps each check's evidence as text, not trees, once the check is done; the
 * store takes the text as it is: the same stored evidence as from the trees, so a finding
 * recorded one way and seen again the other is not rewritten. */
TEST_WITH(test_compact_evidence_recorded_as_trees, tl_db_setup_open, tl_db_teardown)
{
    struct tl_dbfile *fx = *state;
    struct estate e;
    struct est_host h[3];
    char fp[17];
    json_t *j = NULL, *want = NULL;
    struct chk_results trees = {0};

    three_hosts(&e, h, "connected", 0);
    run_evident(fx->db, &e, T1, 0);
    run_evident(fx->db, &e, T2, 0); /* no longer new: rewritten once */
    run_evident(fx->db, &e, T3, 1);
    assert_int_equal(tl_db_count(fx->path, "SELECT count(*) FROM findings"
                                           " WHERE last_seen_ms = 1796056965000"),
                     3);
    assert_int_equal(chk_run_one(&evident, NULL, &e, T3 / 1000, &trees), 0);
    want = trees.items[0].evidence;
    chk_fingerprint("evident", "vc-a", "host-1", NULL, fp);
    assert_int_equal(db_finding_get(fx->db, fp, &j), 0);
    assert_true(json_equal(json_object_get(j, "evidence"), want));
    json_decref(j);

    /* Recorded first from text, then seen again as trees: not rewritten either. */
    assert_int_equal(sqlite3_exec(fx->db->h, "DELETE FROM findings", NULL, NULL, NULL),
                     SQLITE_OK);
    run_evident(fx->db, &e, T1, 1);
    run_evident(fx->db, &e, T2, 1);
    run_evident(fx->db, &e, T3, 0);
    assert_int_equal(tl_db_count(fx->path, "SELECT count(*) FROM findings"
                                           " WHERE last_seen_ms = 1796056965000"),
                     3);
    assert_int_equal(db_finding_get(fx->db, fp, &j), 0);
    assert_true(json_equal(json_object_get(j, "evidence"), want));
    json_decref(j);
    chk_results_free(&trees);
}

/* A finding seen again with anything changed (here: waived) is written. */
TEST_WITH(test_changed_finding_rewritten, tl_db_setup_open, tl_db_teardown)
{
    struct tl_dbfile *fx = *state;
    static const struct spec F1_waived = {"F1",        &free_space,  "vc-a", "datastore-1",
                                          "LocalDS_0", SEV_CRITICAL, &waiver};
    const struct spec *const run_a[] = {&F1, NULL}, *const run_waived[] = {&F1_waived, NULL};
    const int64_t T4 = T3 + 1000;
    json_t *j;

    evaluate(fx->db, "vc-a", T1, run_a);
    evaluate(fx->db, "vc-a", T2, run_a);
    evaluate(fx->db, "vc-a", T3, run_waived);
    j = get(fx->db, &F1);
    assert_life(j, "waived", T1_ISO, T3_ISO, NULL);
    assert_str(json_object_get(j, "waiver"), "reason", waiver.reason);
    json_decref(j);
    evaluate(fx->db, "vc-a", T4, run_waived);
    assert_int_equal(tl_db_count(fx->path, "SELECT count(*) FROM findings"
                                           " WHERE last_seen_ms = 1796143365000"
                                           " AND status = 'waived'"),
                     1);
    assert_life_of(fx->db, &F1, "waived", T1_ISO, "2026-12-01T16:42:46Z", NULL);
}

TEST_WITH(test_disabled_check_is_not_fixed, tl_db_setup_open, tl_db_teardown)
{
    struct tl_dbfile *fx = *state;
    const struct db_findings_filter fixed = {.status = "resolved", .resolution = "fixed"},
                                    disabled = {.status = "resolved", .resolution = "disabled"};
    const struct spec *const run[] = {&F1, NULL};
    const char *const off[] = {free_space.id};
    struct evaluation res = {.disabled = off, .n_disabled = 1};
    char buf[256];

    evaluate(fx->db, "vc-a", T1, run);
    /* The configuration turns datastore-free-space off: its finding is closed, as disabled. */
    assert_int_equal(db_findings_record(fx->db, "vc-a", &res, T2), 0);
    assert_string_equal(query(fx->db, &fixed, buf, sizeof(buf), NULL, NULL), "");
    assert_string_equal(query(fx->db, &disabled, buf, sizeof(buf), NULL, NULL), "F1");
}

/* The JSON report written row by row from the stored text (`vslint check --format json`) is
 * byte for byte the one json_dumpf wrote from the findings read back as trees: evidence with
 * 17-digit reals, escapes, non-ASCII, empty and nested containers, two vCenters in turn. */
static char *report_of(const struct vsl_report *r, enum vsl_format fmt)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);

    assert_non_null(f);
    assert_int_equal(vsl_report_write(f, fmt, r), 0);
    assert_int_equal(fclose(f), 0);
    return text;
}

/* tree, with its findings read back from db (vcenters, n of them) as the report streams them. */
static struct vsl_report streamed(const struct vsl_report *tree, struct db *db,
                                  const char *const *vcenters, size_t n)
{
    struct vsl_report stream = *tree;

    stream.findings = NULL;
    stream.db = db;
    stream.vcenters = vcenters;
    stream.n_vcenters = n;
    return stream;
}

/* Asserts that stream's JSON report is byte for byte tree's (json_dumpf's); its length. */
static size_t assert_streamed_as_dumped(const struct vsl_report *tree,
                                        const struct vsl_report *stream)
{
    char *want = report_of(tree, VSL_FMT_JSON), *got = report_of(stream, VSL_FMT_JSON);
    size_t len = strlen(want);

    assert_string_equal(got, want);
    free(want);
    free(got);
    return len;
}

TEST_WITH(test_json_report_streamed_as_dumped, tl_db_setup_open, tl_db_teardown)
{
    struct tl_dbfile *fx = *state;
    const char *const vcenters[] = {"vc-b", "vc-a"};
    const char *const completed[] = {free_space.id, snapshots.id};
    struct finding items[3];
    json_t *ev[3], *all = json_array(), *summary, *rule_errors;

    ev[0] = json_pack("{s:f, s:[], s:{}, s:[{s:s, s:n, s:b}], s:I}", "age_days",
                      9.0295486111111103, "none", "empty", "disks", "file",
                      "[ds \"a\"] x\\y/é.vmdk", "parent", "thin", 1, "bytes",
                      (json_int_t)17179869184LL);
    ev[1] = json_pack("{s:s, s:f}", "note", "line one\nline\ttwo ✓", "pct", 30.0);
    ev[2] = json_object();
    for (int i = 0; i < 3; i++) {
        const char *vc = i == 2 ? "vc-b" : "vc-a";
        char moref[16];
        snprintf(moref, sizeof(moref), "vm-%d", i);
        items[i] = (struct finding){.check_id = snapshots.id,
                                    .check_title = snapshots.title,
                                    .severity = i == 1 ? SEV_CRITICAL : SEV_WARNING,
                                    .object_type = "vm",
                                    .object_moref = i == 1 ? NULL : "vm-x",
                                    .object_name = i == 1 ? "web \"01\"" : "app-é",
                                    .message = "a message: with, [brackets] and {braces}",
                                    .evidence = ev[i]};
        chk_fingerprint(snapshots.id, vc, moref, NULL, items[i].fingerprint);
        struct evaluation e = {.findings = &items[i], .n_findings = 1, .completed = completed,
                               .n_completed = i == 2 ? 2 : 0};
        assert_int_equal(db_findings_record(fx->db, vc, &e, T1), 0);
    }
    for (size_t v = 0; v < 2; v++) {
        struct db_findings_filter flt = {.vcenter = vcenters[v]};
        json_t *page = NULL;
        int64_t total = 0;
        char *next = NULL;
        assert_int_equal(db_findings_query(fx->db, &flt, &page, &total, &next), 0);
        json_array_extend(all, page);
        json_decref(page);
        free(next);
    }
    assert_int_equal(json_array_size(all), 3);
    assert_int_equal(db_findings_summary(fx->db, NULL, &summary), 0);
    rule_errors = json_pack("[{s:s, s:s, s:i, s:s}]", "id", "site-x", "file", "/r/x.sql", "line",
                            3, "error", "no such column: \"q\"");
    struct vsl_report tree = {.findings = all, .summary = summary, .fail_on = 3,
                              .rule_errors = rule_errors};
    struct vsl_report stream = streamed(&tree, fx->db, vcenters, 2);
    assert_streamed_as_dumped(&tree, &stream);
    /* No vCenter, no finding: "findings": [] as json_dumpf writes an empty array. */
    json_array_clear(all);
    stream.n_vcenters = 0;
    assert_streamed_as_dumped(&tree, &stream);
    for (int i = 0; i < 3; i++)
        json_decref(ev[i]);
    json_decref(all);
    json_decref(summary);
    json_decref(rule_errors);
}

/* A report of 300 findings (about 240 KiB) goes out in several of the streamed report's 64 KiB
 * blocks, the findings of one vCenter spanning them: still byte for byte what json_dumpf wrote
 * from the trees, nothing lost or doubled where a block ends. */
TEST_WITH(test_json_report_streamed_over_blocks, tl_db_setup_open, tl_db_teardown)
{
    struct tl_dbfile *fx = *state;
    enum { N = 300 };
    const char *const vcenters[] = {"vc-a"};
    struct finding *items = calloc(N, sizeof(*items));
    char (*moref)[16] = calloc(N, sizeof(*moref));
    json_t **ev = calloc(N, sizeof(*ev)), *all = NULL, *summary = NULL;
    int64_t total = 0;
    char *next = NULL;

    assert_non_null(items);
    assert_non_null(moref);
    assert_non_null(ev);
    for (int i = 0; i < N; i++) {
        snprintf(moref[i], sizeof(moref[i]), "vm-%d", i);
        ev[i] = json_pack("{s:i, s:f, s:[{s:s, s:I}, {s:s, s:I}], s:{}}", "index", i, "age_days",
                          9.0295486111111103 + i, "snapshots", "name", "before patching",
                          "bytes", (json_int_t)i << 30, "name", "nightly \"é\"", "bytes",
                          (json_int_t)17179869184LL, "none");
        items[i] = (struct finding){
            .check_id = snapshots.id,
            .check_title = snapshots.title,
            .severity = i % 3 == 0 ? SEV_CRITICAL : SEV_WARNING,
            .object_type = "vm",
            .object_moref = moref[i],
            .object_name = moref[i],
            .message = "a snapshot older than the limit: [ds \"a\"] with {braces}, commas",
            .evidence = ev[i]};
        chk_fingerprint(snapshots.id, "vc-a", moref[i], NULL, items[i].fingerprint);
    }
    struct evaluation e = {.findings = items, .n_findings = N};
    assert_int_equal(db_findings_record(fx->db, "vc-a", &e, T1), 0);
    struct db_findings_filter flt = {.vcenter = "vc-a"};
    assert_int_equal(db_findings_query(fx->db, &flt, &all, &total, &next), 0);
    assert_null(next);
    assert_int_equal(json_array_size(all), N);
    assert_int_equal(db_findings_summary(fx->db, NULL, &summary), 0);
    struct vsl_report tree = {.findings = all, .summary = summary, .fail_on = 3};
    struct vsl_report stream = streamed(&tree, fx->db, vcenters, 1);
    assert_true(assert_streamed_as_dumped(&tree, &stream) > 3 * 64 * 1024);

    /* A buffer that cannot take the next finding fails the report as a write does (the
     * command says "cannot write the report"): not as an unread vCenter, with a document
     * closed after half a finding. Nothing was written yet: 8 KiB is less than a block. */
    struct vsl_report_seen seen = {0};
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    stream.seen = &seen;
    vsl_test_report_max = 8 * 1024;
    int rc = vsl_report_write(f, VSL_FMT_JSON, &stream);
    vsl_test_report_max = 0;
    assert_int_equal(rc, -VSL_ETOOBIG);
    assert_int_equal(seen.unread, 0);
    assert_int_equal(fclose(f), 0);
    assert_string_equal(text, "");
    free(text);
    for (int i = 0; i < N; i++)
        json_decref(ev[i]);
    free(ev);
    free(items);
    free(moref);
    json_decref(all);
    json_decref(summary);
}

/* The text report writes what would break a line or move a terminal's cursor as an escape,
 * wherever it is in a line: ESC, DEL, a tab, a C1 control, U+2028 and U+2029; a no-break
 * space (C2 A0, a lead byte like C1's) and other text stay as they are. */
TEST_WITH(test_text_report_escapes_controls, tl_db_setup_open, tl_db_teardown)
{
    struct tl_dbfile *fx = *state;
    const char *const vcenters[] = {"vc-a"};
    json_t *ev = json_object();
    struct finding f = {.check_id = snapshots.id, .check_title = snapshots.title,
                        .severity = SEV_WARNING, .object_type = "vm", .object_moref = "vm-1",
                        .object_name = "x",
                        .message = "a\x1b[2Jb\x7f" "c\td\xc2\x9b" "e\xc2\xa0" "f\xe2\x80\xa8"
                                   "g\xe2\x80\xa9h\xe2\x80\xa7i",
                        .evidence = ev};
    struct evaluation e = {.findings = &f, .n_findings = 1};

    snprintf(f.fingerprint, sizeof(f.fingerprint), "b000000000000001");
    assert_int_equal(db_findings_record(fx->db, "vc-a", &e, T1), 0);
    struct vsl_report_seen seen = {0};
    struct vsl_report r = {.fail_on = 3, .db = fx->db, .vcenters = vcenters, .n_vcenters = 1,
                           .seen = &seen};
    char *text = report_of(&r, VSL_FMT_TEXT);
    assert_string_equal(text, "WARNING   snapshots              vc-a: a\\x1B[2Jb\\x7Fc\\td\\u009Be"
                              "\xc2\xa0" "f\\u2028g\\u2029h\xe2\x80\xa7i  [new]\n"
                              "\n"
                              "0 critical, 1 warning, 0 info; 1 new since the previous run.\n");
    free(text);
    json_decref(ev);
}

/* ---- the reports' row by row reads ------------------------------------------------------ */

/* A member of a finding's tree as db_findings_each_row() must give it: NULL for null. */
static void assert_member(const json_t *o, const char *key, const char *got)
{
    const json_t *v = json_object_get(o, key);

    if (!json_is_string(v)) {
        if (got)
            fail_msg("%s: got \"%s\", want null", key, got);
        return;
    }
    if (!got)
        fail_msg("%s: got NULL, want \"%s\"", key, json_string_value(v));
    assert_string_equal(got, json_string_value(v));
}

struct rows_seen {
    json_t *want; /* db_findings_query()'s page */
    size_t n;
};

static int row_as_tree(void *ctx, const struct db_finding_row *w)
{
    struct rows_seen *x = ctx;
    const json_t *o = json_array_get(x->want, x->n++);
    const json_t *obj = json_object_get(o, "object"), *host = json_object_get(o, "host");
    const json_t *u = json_object_get(o, "unverified"), *wv = json_object_get(o, "waiver");

    assert_non_null(o);
    assert_member(o, "fingerprint", w->fingerprint);
    assert_member(o, "check", w->check);
    assert_member(o, "severity", w->severity);
    assert_member(o, "status", w->status);
    assert_member(o, "vcenter", w->vcenter);
    assert_member(o, "message", w->message);
    assert_int_equal(w->sev, vsl_finding_severity(o));
    assert_member(obj, "type", w->object_type);
    assert_member(obj, "moref", w->object_moref);
    assert_member(obj, "name", w->object_name);
    assert_int_equal(w->on_host, json_is_object(host));
    assert_member(host, "moref", w->host_moref);
    assert_member(host, "name", w->host_name);
    json_t *ev = json_loadb(w->evidence, w->evidence_len, 0, NULL);
    assert_true(json_equal(ev, json_object_get(o, "evidence")));
    json_decref(ev);
    assert_int_equal(w->unverified, json_is_object(u));
    assert_member(u, "since", w->unverified_since);
    assert_member(u, "reason", w->unverified_reason);
    assert_int_equal(w->waived_until, json_is_object(wv));
    assert_member(wv, "reason", w->waiver_reason);
    assert_member(wv, "expires", w->waiver_expires);
    return 0;
}

/* db_findings_each_row() of f gives, row for row, what db_findings_query() does. */
static void assert_rows_as_query(struct db *db, const struct db_findings_filter *f)
{
    struct rows_seen x = {NULL, 0};
    int64_t total = -1, wtotal = -2;
    char *next = NULL;

    assert_int_equal(db_findings_query(db, f, &x.want, &total, &next), 0);
    assert_null(next);
    assert_int_equal(db_findings_each_row(db, f, row_as_tree, &x, &wtotal), 0);
    assert_int_equal(x.n, json_array_size(x.want));
    assert_int_equal(wtotal, total);
    json_decref(x.want);
}

/* What a report reads row by row is what the API's trees say: every member, a part of a host
 * (no moref), an unverified finding, a waived one, evidence damaged by hand ({}), columns
 * that are not UTF-8 (null), each status and severity filter; severity_only keeps one. */
TEST_WITH(test_rows_read_as_the_trees, tl_db_setup_open, tl_db_teardown)
{
    struct tl_dbfile *fx = *state;
    const struct db_findings_filter filters[] = {
        {0},
        {.status = "open"},
        {.status = "waived"},
        {.status = "new"},
        {.severity = "warning", .severity_only = 1},
        {.severity = "warning"},
        {.check = "snapshots", .vcenter = "vc-a"},
    };
    char buf[256];

    five_findings(fx->db);
    for (size_t i = 0; i < sizeof(filters) / sizeof(filters[0]); i++)
        assert_rows_as_query(fx->db, &filters[i]);
    const struct db_findings_filter warning = {.severity = "warning", .severity_only = 1};
    assert_string_equal(query(fx->db, &warning, buf, sizeof(buf), NULL, NULL), "F2,F5,F3");
    sqlite3 *h;
    assert_int_equal(sqlite3_open(fx->path, &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h, "UPDATE findings SET object_type = 'lun', object_moref = NULL,"
                                     " host_moref = 'host-1', host_name = 'esx1'"
                                     " WHERE object_name = 'nfs01';"
                                     "UPDATE findings SET unverified_since_ms = 1796056965000,"
                                     " unverified_reason = 'esxcli could not be read'"
                                     " WHERE object_moref = 'datastore-1';"
                                     "UPDATE findings SET evidence_json = '{\"cut\": ['"
                                     " WHERE object_name = 'web01';"
                                     "UPDATE findings SET object_name = 'bad' || x'ff',"
                                     " message = x'c3' WHERE object_moref = 'vm-7';"
                                     /* valid to SQLite, refused by jansson: {} */
                                     "UPDATE findings SET evidence_json = '{\"a\":\"x\\u0000y\"}'"
                                     " WHERE object_name = 'LocalDS_0' AND vcenter = 'vc-b'",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(h);
    for (size_t i = 0; i < sizeof(filters) / sizeof(filters[0]); i++)
        assert_rows_as_query(fx->db, &filters[i]);
}

/* "CHECK SEVERITY waived=N count;" for each group db_findings_tally() gives, into a sorted
 * object's dump. */
static int tally_into(void *ctx, const char *check, const char *severity, int waived, int64_t n)
{
    char key[128];

    snprintf(key, sizeof(key), "%s %s%s", check ? check : "-", severity ? severity : "-",
             waived ? " waived" : "");
    return json_object_set_new(ctx, key, json_integer(n));
}

static char *tally_text(struct db *db, const char *vcenter)
{
    json_t *o = json_object();
    char *s;

    assert_int_equal(db_findings_tally(db, vcenter, tally_into, o), 0);
    s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(o);
    return s;
}

/* Inside db_findings_read_begin(), every read sees the state of the first: another connection
 * resolving a finding and waiving another changes neither a walk, a count by check nor the
 * summary until db_findings_read_end(). */
TEST_WITH(test_one_read_for_a_report, tl_db_setup_open, tl_db_teardown)
{
    struct tl_dbfile *fx = *state;
    const struct db_findings_filter all = {0};
    struct rows_seen x = {NULL, 0};
    int64_t total = 0;
    char *t;
    json_t *sum = NULL;

    five_findings(fx->db);
    t = tally_text(fx->db, NULL);
    assert_string_equal(t, "{\"datastore-free-space critical\":1,\"datastore-free-space "
                           "warning\":2,\"snapshots info\":1,\"snapshots warning waived\":1}");
    free(t);
    t = tally_text(fx->db, "vc-b");
    assert_string_equal(t, "{\"datastore-free-space warning\":1,\"snapshots info\":1}");
    free(t);

    assert_int_equal(db_findings_read_begin(fx->db), 1);
    assert_int_equal(db_findings_query(fx->db, &all, &x.want, &total, &(char *){NULL}), 0);
    assert_int_equal(total, 5);
    sqlite3 *h;
    assert_int_equal(sqlite3_open(fx->path, &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h, "UPDATE findings SET status = 'resolved', resolved_at_ms = 1"
                                     " WHERE object_name = 'nfs01';"
                                     "UPDATE findings SET status = 'waived', waiver_reason = 'r',"
                                     " waiver_expires = '2027-01-01' WHERE object_moref = 'vm-7'",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    assert_int_equal(db_findings_each_row(fx->db, &all, row_as_tree, &x, &total), 0);
    assert_int_equal(x.n, 5);
    t = tally_text(fx->db, NULL);
    assert_string_equal(t, "{\"datastore-free-space critical\":1,\"datastore-free-space "
                           "warning\":2,\"snapshots info\":1,\"snapshots warning waived\":1}");
    free(t);
    assert_int_equal(db_findings_summary(fx->db, NULL, &sum), 0);
    assert_int_equal(json_integer_value(json_object_get(sum, "total")), 4);
    json_decref(sum);
    db_findings_read_end(fx->db, 1);
    json_decref(x.want);

    t = tally_text(fx->db, NULL);
    assert_string_equal(t, "{\"datastore-free-space critical\":1,\"datastore-free-space "
                           "warning\":1,\"snapshots info waived\":1,\"snapshots warning waived\""
                           ":1}");
    free(t);
    sqlite3_close(h);
}

/* The text report (`vslint check`'s default), read row by row: critical first; one check's
 * findings about one LUN from several hosts under one line naming it, a LUN seen from one host
 * on its own line; the marks of a new and of an unverified finding; the waived ones last. */
static const struct check paths = {
    .id = "multipath-policy", .title = "Multipathing policy", .severity = SEV_WARNING};

TEST_WITH(test_text_report_read_row_by_row, tl_db_setup_open, tl_db_teardown)
{
    struct tl_dbfile *fx = *state;
    const char *const vcenters[] = {"vc-a"};
    const char *const completed[] = {free_space.id, snapshots.id, paths.id};
    const struct unverified_scope gap = {free_space.id, "datastore-1", "ds1 could not be read"};
    struct finding f[6];
    json_t *ev = json_object();

    memset(f, 0, sizeof(f));
    f[0] = (struct finding){.check_id = free_space.id, .check_title = free_space.title,
                            .severity = SEV_CRITICAL, .object_type = "datastore",
                            .object_moref = "datastore-1", .object_name = "ds1",
                            .message = "ds1 is 97% full", .evidence = ev};
    for (int i = 1; i <= 3; i++) {
        static const char *const hosts[] = {"esx1", "esx2", "esx3"}, *const msg[] = {
            "esx1 uses MRU", "esx2 uses MRU", "esx3 uses MRU"};
        static const char *const morefs[] = {"host-1", "host-2", "host-3"};
        f[i] = (struct finding){.check_id = paths.id, .check_title = paths.title,
                                .severity = SEV_WARNING, .object_type = "lun",
                                .object_name = "naa.600a", .host_moref = morefs[i - 1],
                                .host_name = hosts[i - 1], .message = msg[i - 1],
                                .evidence = ev};
    }
    f[4] = (struct finding){.check_id = paths.id, .check_title = paths.title,
                            .severity = SEV_WARNING, .object_type = "lun",
                            .object_name = "naa.600b", .host_moref = "host-1",
                            .host_name = "esx1", .message = "esx1 uses Fixed", .evidence = ev};
    f[5] = (struct finding){.check_id = snapshots.id, .check_title = snapshots.title,
                            .severity = SEV_WARNING, .object_type = "vm", .object_moref = "vm-42",
                            .object_name = "web01", .message = "web01 has a 9-day snapshot",
                            .evidence = ev, .waiver_reason = waiver.reason,
                            .waiver_expires = waiver.expires_text};
    /* Fingerprints in the order the lines are to be read. */
    for (int i = 0; i < 6; i++)
        snprintf(f[i].fingerprint, sizeof(f[i].fingerprint), "a00000000000000%d", i);
    /* T1: all but naa.600b. T2: ds1 unread (kept, unverified), naa.600b new. */
    struct finding t1[5] = {f[0], f[1], f[2], f[3], f[5]}, t2[5] = {f[1], f[2], f[3], f[4], f[5]};
    struct evaluation e1 = {.findings = t1, .n_findings = 5, .completed = completed,
                            .n_completed = 3},
                      e2 = {.findings = t2, .n_findings = 5, .completed = completed,
                            .n_completed = 3, .unverified = &gap, .n_unverified = 1};
    assert_int_equal(db_findings_record(fx->db, "vc-a", &e1, T1), 0);
    assert_int_equal(db_findings_record(fx->db, "vc-a", &e2, T2), 0);

    struct vsl_report_seen seen = {0};
    struct vsl_report r = {.fail_on = SEV_CRITICAL, .db = fx->db, .vcenters = vcenters,
                           .n_vcenters = 1, .seen = &seen};
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    assert_int_equal(vsl_report_write(out, VSL_FMT_TEXT, &r), 0);
    assert_int_equal(fclose(out), 0);
    const char *pad = "                                   "; /* 10 + 22 + 3 */
    char want[2048];
    snprintf(want, sizeof(want),
             "CRITICAL  datastore-free-space   vc-a: ds1 is 97%% full  [unverified since %s: ds1 "
             "could not be read]\n"
             "WARNING   multipath-policy       vc-a: LUN naa.600a, on 3 hosts:\n"
             "%sesx1 uses MRU\n%sesx2 uses MRU\n%sesx3 uses MRU\n"
             "WARNING   multipath-policy       vc-a: esx1 uses Fixed  [new]\n"
             "WAIVED    snapshots              vc-a: web01 has a 9-day snapshot  (waived until "
             "2027-01-31: backup window, CHG-1234)\n"
             "\n"
             "1 critical, 4 warning, 0 info, 1 waived; 1 new since the previous run; 1 could not "
             "be verified this run (kept as last seen).\n",
             T2_ISO, pad, pad, pad);
    assert_string_equal(text, want);
    /* The unverified critical finding is unwaived and at --fail-on: the run fails on it. */
    assert_int_equal(seen.failing, 1);
    assert_int_equal(seen.unread, 0);
    free(text);
    json_decref(ev);
}

/* A report whose findings cannot be read (the table they join is gone) says so: text that
 * the run was incomplete, GitHub an error annotation naming the vCenter, SARIF an unsuccessful
 * run; each still a whole document (JSON too), every vCenter tried, and the command fails on
 * it (seen.unread). */
TEST_WITH(test_reports_say_what_was_unread, tl_db_setup_open, tl_db_teardown)
{
    struct tl_dbfile *fx = *state;
    const char *const vcenters[] = {"vc-a", "vc-b"};
    const struct vsl_report_source sources[] = {{"vc-a", 3, 0}, {"vc-b", 9, 0}};

    five_findings(fx->db);
    sqlite3 *h;
    assert_int_equal(sqlite3_open(fx->path, &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h, "ALTER TABLE polls RENAME TO polls_gone", NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(h);
    for (int fmt = VSL_FMT_TEXT; fmt <= VSL_FMT_GITHUB; fmt++) {
        if (fmt == VSL_FMT_JUNIT || fmt == VSL_FMT_GITLAB)
            continue;
        struct vsl_report_seen seen = {0};
        json_t *summary = json_object();
        struct vsl_report r = {.fail_on = SEV_WARNING, .db = fx->db, .vcenters = vcenters,
                               .n_vcenters = 2, .sources = sources, .n_sources = 2,
                               .summary = summary, .seen = &seen};
        char *text = report_of(&r, (enum vsl_format)fmt);
        assert_int_equal(seen.unread, 1);
        assert_int_equal(seen.failing, 0);
        assert_non_null(seen.unread_of);
        assert_true(seen.unread_of[0] && seen.unread_of[1]);
        if (fmt == VSL_FMT_TEXT)
            assert_string_equal(text, "0 critical, 0 warning, 0 info.\nThe run was incomplete: "
                                      "see the errors on standard error.\n");
        if (fmt == VSL_FMT_GITHUB)
            assert_non_null(strstr(text, "::error title=vslint run incomplete::vcenter vc-a: "
                                         "cannot read findings: "));
        if (fmt == VSL_FMT_JSON) {
            /* Both vCenters tried (the second after the first failed), the document whole. */
            json_t *doc = json_loads(text, 0, NULL);
            assert_non_null(doc);
            assert_int_equal(json_array_size(json_object_get(doc, "findings")), 0);
            json_decref(doc);
        }
        if (fmt == VSL_FMT_SARIF) {
            json_t *doc = json_loads(text, 0, NULL), *run;
            size_t i;
            assert_non_null(doc);
            assert_int_equal(json_array_size(json_object_get(doc, "runs")), 2);
            json_array_foreach(json_object_get(doc, "runs"), i, run) {
                json_t *inv = json_array_get(json_object_get(run, "invocations"), 0);
                assert_true(json_is_false(json_object_get(inv, "executionSuccessful")));
                assert_int_equal(json_array_size(json_object_get(run, "results")), 0);
            }
            json_decref(doc);
        }
        free(text);
        free(seen.unread_of);
        json_decref(summary);
    }
}

/* The checks run on two threads give what they give on one: the same findings in the same
 * order (each check's after the one before it in the registry), the same evidence text and
 * fingerprints, the same completed, disabled and unverified lists. */
TEST_WITH(test_checks_on_two_threads_as_on_one, tl_db_setup_open, tl_db_teardown)
{
    struct tl_dbfile *fx = *state;
    struct estate *e = NULL;
    struct chk_config cfg;
    struct chk_results one = {.compact = 1}, two = {.compact = 1, .threads = 2};
    char err1[256] = "", err2[256] = "";
    size_t checks = 0;

    snapshot(fx->db, "vc-a", "");
    assert_int_equal(db_estate_load(fx->db, "vc-a", &e), 0);
    assert_int_equal(chk_config_init(&cfg), 0);
    cfg.settings[1].enabled = 0;
    /* A first run says which checks find something: a live waiver for the first's findings,
     * an expired one for the last's. */
    assert_int_equal(chk_run_all(&cfg, e, T1 / 1000, &one, err1, sizeof(err1)), 0);
    assert_true(one.n >= 2);
    const char *ids[2] = {one.items[0].check->id, one.items[one.n - 1].check->id};
    assert_string_not_equal(ids[0], ids[1]);
    cfg.waivers = calloc(2, sizeof(*cfg.waivers));
    assert_non_null(cfg.waivers);
    for (int i = 0; i < 2; i++) {
        cfg.waivers[i] = (struct chk_waiver){.check = strdup(ids[i]), .object = strdup("*"),
                                             .reason = strdup("change window"),
                                             .expires_text = strdup(i ? "2020-01-01" : "2099-01-01"),
                                             .expires = i ? 1577923199 : 4070995199LL};
    }
    cfg.n_waivers = 2;
    chk_results_free(&one);
    one = (struct chk_results){.compact = 1};
    chk_test_cpus = 2; /* two threads even on a runner with one CPU */
    int r1 = chk_run_all(&cfg, e, T1 / 1000, &one, err1, sizeof(err1));
    assert_int_equal(chk_test_threads_used, 1);
    int r2 = chk_run_all(&cfg, e, T1 / 1000, &two, err2, sizeof(err2));
    assert_int_equal(chk_test_threads_used, 2);
    chk_test_cpus = 0;
    assert_int_equal(r2, r1);
    assert_string_equal(err2, err1);
    assert_int_equal(two.n, one.n);
    for (size_t i = 0; i < one.n; i++) {
        const struct chk_finding *a = &one.items[i], *b = &two.items[i];
        checks += i == 0 || a->check != one.items[i - 1].check;
        assert_ptr_equal(b->check, a->check);
        assert_string_equal(b->fingerprint, a->fingerprint);
        assert_int_equal(b->severity, a->severity);
        assert_string_equal(b->message, a->message);
        assert_string_equal(b->object_name, a->object_name);
        assert_ptr_equal(b->waiver, a->waiver);
        assert_null(a->evidence);
        assert_string_equal(b->evidence_json, a->evidence_json);
    }
    /* Findings of several checks, so that their order across the threads was tested; the
     * live waiver covers the first check's, the expired one is noted once. */
    assert_true(checks >= 3);
    assert_ptr_equal(one.items[0].waiver, &cfg.waivers[0]);
    assert_int_equal(one.n_expired, 1);
    assert_int_equal(two.n_expired, 1);
    assert_ptr_equal(two.expired[0], &cfg.waivers[1]);
    assert_int_equal(two.n_completed, one.n_completed);
    for (size_t i = 0; i < one.n_completed; i++)
        assert_ptr_equal(two.completed[i], one.completed[i]);
    assert_int_equal(one.n_disabled, 1);
    assert_int_equal(two.n_disabled, 1);
    assert_ptr_equal(two.disabled[0], one.disabled[0]);
    assert_int_equal(two.n_unverified, one.n_unverified);
    for (size_t i = 0; i < one.n_unverified; i++) {
        assert_ptr_equal(two.unverified[i].check, one.unverified[i].check);
        assert_string_equal(two.unverified[i].reason, one.unverified[i].reason);
    }
    chk_results_free(&one);
    chk_results_free(&two);
    chk_config_free(&cfg);
    est_free(e);
}

int main(void)
{
    return tl_main();
}
