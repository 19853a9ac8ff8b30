/* Unit tests for what db_estate_load() gives the checks of a real estate: datastore extents and
 * the LUNs behind them, mounts, where a VM's configuration lives, every host bus adapter, the
 * adapter of each path, the multipathing plug-in, static iSCSI targets found by a send target,
 * and the scope of SATP claim rules. Rows go in through the snapshot sink, as a poll writes:
 * hand-made ones, and the simulator's `edges` scenario as captured in tests/unit/data/. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/estate.h"
#include "db/db.h"
#include "db/findings.h"
#include "util/err.h"
#include "util/log.h"

#include "testlib.h"

#define GIB (1024LL * 1024 * 1024)

/* ---- the snapshot --------------------------------------------------------------------------- */

static void ds(const struct vim_sink *s, const char *moref, const char *name, const char *type,
               int local)
{
    const struct vim_datastore d = {.moref = moref,
                                    .name = name,
                                    .type = type,
                                    .capacity = 750 * GIB,
                                    .free_space = 300 * GIB,
                                    .uncommitted = VIM_UNKNOWN,
                                    .accessible = 1,
                                    .vmfs_major = strcmp(type, "VMFS") ? 0 : 6,
                                    .vmfs_version = strcmp(type, "VMFS") ? NULL : "6.82",
                                    .vmfs_local = strcmp(type, "VMFS") ? VIM_UNKNOWN : local,
                                    .vmfs_ssd = strcmp(type, "VMFS") ? VIM_UNKNOWN : local,
                                    .unmap_priority = strcmp(type, "VMFS") ? NULL : "low",
                                    .nas_remote_host = strcmp(type, "NFS") ? NULL : "filer01"};
    assert_int_equal(s->datastore(s->ctx, &d), 0);
}

static void extent(const struct vim_sink *s, const char *dsm, int pos, const char *disk, int part)
{
    const struct vim_datastore_extent x = {dsm, pos, disk, part};
    assert_int_equal(s->datastore_extent(s->ctx, &x), 0);
}

static void mount(const struct vim_sink *s, const char *dsm, const char *host, int accessible)
{
    const struct vim_datastore_host m = {dsm, host, 1, accessible, "readWrite"};
    assert_int_equal(s->datastore_host(s->ctx, &m), 0);
}

static void host(const struct vim_sink *s, const char *moref, const char *name)
{
    const struct vim_host h = {moref, name, "domain-c7", "connected", NULL};
    assert_int_equal(s->host(s->ctx, &h), 0);
}

static void hba(const struct vim_sink *s, const char *h, const char *dev, const char *type,
                const char *driver)
{
    const struct vim_hba a = {h, dev, type, driver, "a model", "online"};
    assert_int_equal(s->hba(s->ctx, &a), 0);
}

static void lun(const struct vim_sink *s, const char *h, const char *name, int local,
                const char *psp, const char *satp, const char *ptype, const char *plugin)
{
    const struct vim_lun l = {.host = h,
                              .key = name,
                              .canonical_name = name,
                              .lun_type = "disk",
                              .local = local,
                              .psp = psp,
                              .satp = satp,
                              .policy_type = ptype,
                              .multipath_plugin = plugin};
    assert_int_equal(s->lun(s->ctx, &l), 0);
}

static void path(const struct vim_sink *s, const char *h, const char *l, const char *name,
                 const char *state, const char *adapter)
{
    const struct vim_lun_path p = {h, l, name, state, adapter, NULL, NULL, NULL};
    assert_int_equal(s->lun_path(s->ctx, &p), 0);
}

static void target(const struct vim_sink *s, const char *kind, const char *addr, const char *iqn,
                   const char *method, const char *parent, const char *delayed_ack, int inherited)
{
    const struct vim_iscsi_target t = {.host = "host-1",
                                       .hba = "vmhba64",
                                       .kind = kind,
                                       .address = addr,
                                       .port = 3260,
                                       .iscsi_name = iqn,
                                       .discovery_method = method,
                                       .parent = parent};
    char name[64];
    snprintf(name, sizeof(name), "%s:3260", addr);
    const struct vim_iscsi_option o = {.host = "host-1",
                                       .hba = "vmhba64",
                                       .kind = kind,
                                       .target = name,
                                       .target_iqn = iqn,
                                       .key = "DelayedAck",
                                       .value = delayed_ack,
                                       .inherited = inherited};
    assert_int_equal(s->iscsi_target(s->ctx, &t), 0);
    assert_int_equal(s->iscsi_option(s->ctx, &o), 0);
}

static void vm(const struct vim_sink *s, const char *moref, const char *path_name,
               const char *ds1, const char *ds2)
{
    const struct vim_vm m = {.moref = moref,
                             .name = moref,
                             .hw_version = "vmx-13",
                             .power_state = "poweredOn",
                             .host = "host-1",
                             .vm_path_name = path_name};
    assert_int_equal(s->vm(s->ctx, &m), 0);
    for (const char *d = ds1; d; d = d == ds1 ? ds2 : NULL) {
        const struct vim_vm_datastore vd = {moref, d};
        assert_int_equal(s->vm_datastore(s->ctx, &vd), 0);
    }
}

/* esx-1 mounts everything; esx-2 mounts the spanned and the NFS datastore and sees only the first
 * extent's LUN; both have their own mpx.vmhba0:C0:T0:L0 boot disk. */
static void fill(const struct vim_sink *s, const void *arg)
{
    ds(s, "datastore-1", "ds-span", "VMFS", 0);
    extent(s, "datastore-1", 0, "naa.600a0001", 1);
    extent(s, "datastore-1", 1, "naa.600a0002", 1);
    mount(s, "datastore-1", "host-1", 1);
    mount(s, "datastore-1", "host-2", 0);
    mount(s, "datastore-1", "host-99", 1); /* a host this snapshot lacks */
    ds(s, "datastore-2", "datastore1 (esx-1)", "VMFS", 1);
    extent(s, "datastore-2", 0, "mpx.vmhba0:C0:T0:L0", 3);
    mount(s, "datastore-2", "host-1", 1);
    ds(s, "datastore-3", "nfs-a", "NFS", 0);
    mount(s, "datastore-3", "host-1", 1);
    mount(s, "datastore-3", "host-2", 1);
    /* Two datacenters, one name; and a name holding "]". */
    ds(s, "datastore-4", "dup", "VMFS", 0);
    ds(s, "datastore-5", "dup", "VMFS", 0);
    ds(s, "datastore-6", "ds [x] odd", "VMFS", 0);

    host(s, "host-1", "esx-1");
    host(s, "host-2", "esx-2");
    hba(s, "host-1", "vmhba0", "HostParallelScsiHba", "pvscsi");
    hba(s, "host-1", "vmhba2", "HostFibreChannelHba", "qlnativefc");
    hba(s, "host-1", "vmhba10", "HostPcieHba", "nvme_pcie");
    hba(s, "host-1", "vmhba64", "HostInternetScsiHba", "iscsi_vmk");
    lun(s, "host-1", "naa.600a0001", 0, "VMW_PSP_RR", "VMW_SATP_ALUA",
        "HostMultipathInfoLogicalUnitPolicy", "NMP");
    lun(s, "host-1", "naa.600a0002", 0, "VMW_PSP_RR", "VMW_SATP_ALUA",
        "HostMultipathInfoLogicalUnitPolicy", "NMP");
    lun(s, "host-1", "mpx.vmhba0:C0:T0:L0", VIM_UNKNOWN, "VMW_PSP_FIXED", "VMW_SATP_LOCAL",
        "HostMultipathInfoFixedLogicalUnitPolicy", "NMP");
    lun(s, "host-1", "eui.0025388b91c3a1b2", 1, "LB-RR", NULL,
        "HostMultipathInfoHppLogicalUnitPolicy", "HPP");
    lun(s, "host-1", "naa.6000097000019760", 0, NULL, NULL, NULL, "PowerPath");
    path(s, "host-1", "naa.600a0001", "vmhba2:C0:T0:L1", "active", "vmhba2");
    path(s, "host-1", "naa.600a0001", "vmhba2:C0:T1:L1", "standby", "vmhba2");
    path(s, "host-1", "naa.600a0001", "vmhba9:C0:T0:L1", "off", "vmhba9");
    path(s, "host-1", "mpx.vmhba0:C0:T0:L0", "vmhba0:C0:T0:L0", "active", "vmhba0");
    path(s, "host-1", "eui.0025388b91c3a1b2", "vmhba10:C0:T0:L0", "active", "vmhba10");
    lun(s, "host-2", "naa.600a0001", 0, "VMW_PSP_RR", "VMW_SATP_ALUA",
        "HostMultipathInfoLogicalUnitPolicy", "NMP");
    lun(s, "host-2", "mpx.vmhba0:C0:T0:L0", 1, "VMW_PSP_FIXED", "VMW_SATP_LOCAL",
        "HostMultipathInfoFixedLogicalUnitPolicy", "NMP");

    const struct vim_iscsi_hba ih = {"host-1", "vmhba64", "iqn.1998-01.com.vmware:esx-1",
                                     "iSCSI Software Adapter"};
    assert_int_equal(s->iscsi_hba(s->ctx, &ih), 0);
    /* One portal, one IQN per volume, both found by the send target on that portal; a third
     * static target configured by hand; a send target on the default port named by address. */
    target(s, "send", "10.0.5.10", NULL, NULL, NULL, "true", 0);
    target(s, "static", "10.0.5.10", "iqn.2001-05.com.equallogic:vol1", "sendTargetMethod",
           "10.0.5.10:3260", "true", 1);
    target(s, "static", "10.0.5.10", "iqn.2001-05.com.equallogic:vol2", "sendTargetMethod",
           "10.0.5.10:3260", "false", 0);
    target(s, "static", "10.0.5.11", "iqn.2001-05.com.equallogic:vol3", "staticMethod", "vmhba64",
           "false", 1);
    target(s, "send", "10.0.6.10", NULL, NULL, NULL, "false", 1);
    target(s, "static", "10.0.6.10", "iqn.2001-05.com.equallogic:vol4", "sendTargetMethod",
           "10.0.6.10", "false", 1);

    const struct vim_satp_rule rule = {.host = "host-1",
                                       .satp = "VMW_SATP_ALUA",
                                       .psp = "VMW_PSP_RR",
                                       .psp_options = "iops=1",
                                       .rule_group = "user",
                                       .device = "naa.600a0001",
                                       .transport = "fc",
                                       .claim_options = "tpgs_on",
                                       .description = "one device"};
    const struct vim_satp_rule drv = {.host = "host-1",
                                      .satp = "VMW_SATP_LOCAL",
                                      .rule_group = "user",
                                      .driver = "lsi_mr3",
                                      .options = "enable_ssd"};
    assert_int_equal(s->satp_rule(s->ctx, &rule), 0);
    assert_int_equal(s->satp_rule(s->ctx, &drv), 0);

    vm(s, "vm-1", "[ds-span] vm-1/vm-1.vmx", "datastore-1", "datastore-3"); /* ISO on nfs-a */
    vm(s, "vm-2", "[dup] vm-2/vm-2.vmx", "datastore-5", NULL);
    vm(s, "vm-3", "[dup] vm-3/vm-3.vmx", NULL, NULL);
    vm(s, "vm-4", "[ds [x] odd] vm-4/vm-4.vmx", "datastore-6", NULL);
    vm(s, "vm-5", "[gone] vm-5/vm-5.vmx", "datastore-1", NULL);
    vm(s, "vm-6", NULL, "datastore-1", NULL);
    vm(s, "vm-7", "vm-7.vmx", NULL, NULL);
    vm(s, "vm-8", "[ds-span]", NULL, NULL);
}

/* A database holding fill()'s snapshot of vCenter vc-a, and its estate. */
struct fx {
    struct tl_dbfile *file;
    struct db *db; /* file->db */
    struct estate *e;
};

static int setup(void **state)
{
    struct tl_dbfile *file;
    struct fx *fx;

    if (tl_db_setup_open(state) < 0)
        return -1;
    file = *state;
    fx = calloc(1, sizeof(*fx));
    if (!fx)
        return -1;
    fx->file = file;
    fx->db = file->db;
    tl_snapshot(file->db, "vc-a", fill, NULL, 1, 2, NULL);
    int r = db_estate_load(file->db, "vc-a", &fx->e);
    if (r < 0) {
        fprintf(stderr, "db_estate_load: %s\n", vsl_strerror(r));
        return -1;
    }
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    struct fx *fx = *state;

    est_free(fx->e);
    *state = fx->file;
    free(fx);
    return tl_db_teardown(state);
}

/* ---- lookups -------------------------------------------------------------------------------- */

static size_t ds_index(const struct estate *e, const char *moref)
{
    return (size_t)(TL_FIND(e->datastores, e->n_datastores, moref, moref, "datastore") -
                    e->datastores);
}

static size_t host_index(const struct estate *e, const char *moref)
{
    return (size_t)(TL_FIND(e->hosts, e->n_hosts, moref, moref, "host") - e->hosts);
}

static const struct est_lun *lun_of(const struct est_host *h, const char *name)
{
    return TL_FIND(h->luns, h->n_luns, canonical_name, name, "LUN");
}

static const struct est_vm *vm_of(const struct estate *e, const char *moref)
{
    return TL_FIND(e->vms, e->n_vms, moref, moref, "VM");
}

/* ---- tests ---------------------------------------------------------------------------------- */

TEST_WITH(test_datastores, setup, teardown)
{
    const struct estate *e = ((struct fx *)*state)->e;
    const size_t h1 = host_index(e, "host-1"), h2 = host_index(e, "host-2");
    const struct est_datastore *span = &e->datastores[ds_index(e, "datastore-1")];
    const struct est_datastore *boot = &e->datastores[ds_index(e, "datastore-2")];
    const struct est_datastore *nfs = &e->datastores[ds_index(e, "datastore-3")];

    assert_string_equal(span->vmfs_version, "6.82");
    assert_int_equal(span->vmfs_local, 0);
    assert_string_equal(span->unmap_priority, "low");
    assert_null(span->nas_remote_host);
    /* Both extents, head first; the second extent's LUN only where a mounting host lists it. */
    assert_int_equal(span->n_extents, 2);
    assert_string_equal(span->extents[0].disk_name, "naa.600a0001");
    assert_int_equal(span->extents[0].partition, 1);
    assert_int_equal(span->extents[0].n_luns, 2);
    assert_int_equal(span->extents[0].luns[0].host, h1);
    assert_ptr_equal(&e->hosts[h1].luns[span->extents[0].luns[0].lun],
                     lun_of(&e->hosts[h1], "naa.600a0001"));
    assert_int_equal(span->extents[0].luns[1].host, h2);
    assert_ptr_equal(&e->hosts[h2].luns[span->extents[0].luns[1].lun],
                     lun_of(&e->hosts[h2], "naa.600a0001"));
    assert_string_equal(span->extents[1].disk_name, "naa.600a0002");
    assert_int_equal(span->extents[1].n_luns, 1);
    assert_int_equal(span->extents[1].luns[0].host, h1);
    /* Mounts in host order; the host the snapshot lacks is left out. */
    assert_int_equal(span->n_mounts, 2);
    assert_int_equal(span->mounts[0].host, h1);
    assert_int_equal(span->mounts[0].accessible, 1);
    assert_int_equal(span->mounts[1].host, h2);
    assert_int_equal(span->mounts[1].accessible, 0);
    assert_string_equal(span->mounts[1].access_mode, "readWrite");

    /* The boot datastore's mpx. device is esx-1's: esx-2 has one of that name too, and does
     * not mount it. */
    assert_int_equal(boot->vmfs_local, 1);
    assert_int_equal(boot->vmfs_ssd, 1);
    assert_int_equal(boot->n_extents, 1);
    assert_int_equal(boot->extents[0].partition, 3);
    assert_int_equal(boot->extents[0].n_luns, 1);
    assert_int_equal(boot->extents[0].luns[0].host, h1);

    assert_int_equal(nfs->vmfs_local, EST_UNKNOWN);
    assert_null(nfs->vmfs_version);
    assert_null(nfs->unmap_priority);
    assert_string_equal(nfs->nas_remote_host, "filer01");
    assert_int_equal(nfs->n_extents, 0);
    assert_int_equal(nfs->n_mounts, 2);
}

TEST_WITH(test_vm_config_datastore, setup, teardown)
{
    const struct estate *e = ((struct fx *)*state)->e;
    static const struct {
        const char *vm, *want; /* want: datastore moref, NULL for none */
    } t[] = {
        {"vm-1", "datastore-1"}, /* lists nfs-a too (its ISO): the configuration is on ds-span */
        {"vm-2", "datastore-5"}, /* "dup" twice in the estate: its own datastore decides */
        {"vm-3", NULL},          /* "dup" twice, and no datastore of its own: unknown */
        {"vm-4", "datastore-6"}, /* a name holding "]" */
        {"vm-5", NULL},          /* a datastore the snapshot lacks */
        {"vm-6", NULL},          /* no path at all */
        {"vm-7", NULL},          /* not "[name] path" */
        {"vm-8", "datastore-1"}, /* nothing after the name still names it */
    };

    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        const struct est_vm *m = vm_of(e, t[i].vm);
        if (!t[i].want) {
            if (m->config_datastore != EST_NONE)
                fail_msg("%s: config datastore %s, want none", t[i].vm,
                         e->datastores[m->config_datastore].moref);
            continue;
        }
        if (m->config_datastore != ds_index(e, t[i].want))
            fail_msg("%s: config datastore %zu, want %s", t[i].vm, m->config_datastore, t[i].want);
    }
    assert_string_equal(vm_of(e, "vm-1")->vm_path_name, "[ds-span] vm-1/vm-1.vmx");
    assert_int_equal(vm_of(e, "vm-1")->n_datastores, 2);
    assert_null(vm_of(e, "vm-6")->vm_path_name);
}

TEST_WITH(test_adapters_paths_plugins, setup, teardown)
{
    const struct estate *e = ((struct fx *)*state)->e;
    const struct est_host *h = &e->hosts[host_index(e, "host-1")];
    const struct est_lun *l;

    /* Every adapter, in device order (vmhba10 after vmhba2). */
    assert_int_equal(h->n_hbas, 4);
    assert_string_equal(h->hbas[0].device, "vmhba0");
    assert_string_equal(h->hbas[0].type, "HostParallelScsiHba");
    assert_string_equal(h->hbas[0].driver, "pvscsi");
    assert_string_equal(h->hbas[1].device, "vmhba2");
    assert_string_equal(h->hbas[2].device, "vmhba10");
    assert_string_equal(h->hbas[2].type, "HostPcieHba");
    assert_string_equal(h->hbas[3].type, "HostInternetScsiHba");

    l = lun_of(h, "naa.600a0001");
    assert_string_equal(l->multipath_plugin, "NMP");
    assert_string_equal(l->policy_type, "HostMultipathInfoLogicalUnitPolicy");
    assert_int_equal(l->n_paths, 3);
    /* Paths keep the state vCenter sent and name their adapter; one the host does not list
     * has no index. */
    for (size_t i = 0; i < l->n_paths; i++) {
        const struct est_path *p = &l->paths[i];
        if (!strcmp(p->name, "vmhba9:C0:T0:L1")) {
            assert_string_equal(p->state, "off");
            assert_string_equal(p->adapter, "vmhba9");
            assert_int_equal(p->hba, EST_NONE);
        } else {
            assert_string_equal(p->adapter, "vmhba2");
            assert_int_equal(p->hba, 1);
        }
    }
    l = lun_of(h, "mpx.vmhba0:C0:T0:L0");
    assert_int_equal(l->local, EST_UNKNOWN);
    assert_string_equal(l->satp, "VMW_SATP_LOCAL");
    assert_string_equal(h->hbas[l->paths[0].hba].type, "HostParallelScsiHba");
    l = lun_of(h, "eui.0025388b91c3a1b2");
    assert_string_equal(l->multipath_plugin, "HPP");
    assert_string_equal(l->policy_type, "HostMultipathInfoHppLogicalUnitPolicy");
    assert_null(l->satp);
    assert_int_equal(l->paths[0].hba, 2);
    l = lun_of(h, "naa.6000097000019760");
    assert_string_equal(l->multipath_plugin, "PowerPath");
    assert_null(l->psp);
    assert_int_equal(l->n_paths, 0);
}

static const struct est_iscsi_target *target_of(const struct est_iscsi_hba *a, const char *kind,
                                                const char *addr, const char *iqn)
{
    for (size_t i = 0; i < a->n_targets; i++) {
        const struct est_iscsi_target *t = &a->targets[i];
        if (!strcmp(t->kind, kind) && !strcmp(t->address, addr) &&
            (iqn ? t->iscsi_name && !strcmp(t->iscsi_name, iqn) : !t->iscsi_name))
            return t;
    }
    fail_msg("no %s target %s %s", kind, addr, iqn ? iqn : "");
    return NULL;
}

TEST_WITH(test_iscsi_targets, setup, teardown)
{
    const struct estate *e = ((struct fx *)*state)->e;
    const struct est_iscsi_hba *a = &e->hosts[host_index(e, "host-1")].iscsi_hbas[0];
    const struct est_iscsi_target *send = target_of(a, "send", "10.0.5.10", NULL);
    const struct est_iscsi_target *v1, *v2, *v3, *v4;

    /* One IQN per volume on one portal: every static target is its own, with its own options. */
    assert_int_equal(a->n_targets, 6);
    v1 = target_of(a, "static", "10.0.5.10", "iqn.2001-05.com.equallogic:vol1");
    v2 = target_of(a, "static", "10.0.5.10", "iqn.2001-05.com.equallogic:vol2");
    v3 = target_of(a, "static", "10.0.5.11", "iqn.2001-05.com.equallogic:vol3");
    v4 = target_of(a, "static", "10.0.6.10", "iqn.2001-05.com.equallogic:vol4");
    assert_int_equal(v1->n_options, 1);
    assert_string_equal(v1->options[0].value, "true");
    assert_int_equal(v1->options[0].inherited, 1);
    assert_int_equal(v2->n_options, 1);
    assert_string_equal(v2->options[0].value, "false");
    assert_int_equal(v2->options[0].inherited, 0);
    assert_int_equal(send->n_options, 1);
    assert_string_equal(send->options[0].value, "true");

    /* Found by the send target: linked to it, so inheritance can follow. */
    assert_string_equal(v1->discovery_method, "sendTargetMethod");
    assert_string_equal(v1->parent, "10.0.5.10:3260");
    assert_ptr_equal(&a->targets[v1->send_target], send);
    assert_ptr_equal(&a->targets[v2->send_target], send);
    assert_ptr_equal(&a->targets[v4->send_target], target_of(a, "send", "10.0.6.10", NULL));
    assert_string_equal(v3->parent, "vmhba64");
    assert_int_equal(v3->send_target, EST_NONE);
    assert_int_equal(send->send_target, EST_NONE);
}

TEST_WITH(test_satp_rule_scope, setup, teardown)
{
    const struct estate *e = ((struct fx *)*state)->e;
    const struct est_host *h = &e->hosts[host_index(e, "host-1")];

    assert_int_equal(h->n_satp_rules, 2);
    /* Sorted by SATP: ALUA, then LOCAL. */
    assert_string_equal(h->satp_rules[0].device, "naa.600a0001");
    assert_string_equal(h->satp_rules[0].transport, "fc");
    assert_string_equal(h->satp_rules[0].claim_options, "tpgs_on");
    assert_string_equal(h->satp_rules[0].description, "one device");
    assert_null(h->satp_rules[0].driver);
    assert_string_equal(h->satp_rules[1].driver, "lsi_mr3");
    assert_string_equal(h->satp_rules[1].options, "enable_ssd");
    assert_null(h->satp_rules[1].device);
}

/* The inventory document shows the same: the two static targets of one portal apart, each with
 * its options, and the new fields. */
TEST_WITH(test_inventory_json, setup, teardown)
{
    struct fx *fx = *state;
    json_t *j = NULL, *vc, *ds1 = NULL, *t, *h;
    size_t i, statics = 0;

    assert_int_equal(db_inventory_json(fx->db, "vc-a", &j), 0);
    vc = json_array_get(json_object_get(j, "vcenters"), 0);
    json_array_foreach(json_object_get(vc, "datastores"), i, ds1)
    {
        if (!strcmp(json_string_value(json_object_get(ds1, "moref")), "datastore-1"))
            break;
    }
    assert_int_equal(json_array_size(json_object_get(ds1, "extents")), 2);
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(json_object_get(ds1, "extents"), 1),
                                          "disk_name")),
        "naa.600a0002");
    assert_int_equal(json_array_size(json_object_get(ds1, "hosts")), 3);
    assert_true(json_is_false(json_object_get(ds1, "vmfs_local")));
    assert_string_equal(json_string_value(json_object_get(ds1, "unmap_priority")), "low");
    h = json_array_get(json_object_get(vc, "hosts"), 0);
    assert_int_equal(json_array_size(json_object_get(h, "hbas")), 4);
    json_array_foreach(
        json_object_get(json_array_get(json_object_get(h, "iscsi_hbas"), 0), "targets"), i, t)
    {
        const char *iqn = json_string_value(json_object_get(t, "iscsi_name"));
        if (!iqn || strncmp(iqn, "iqn.2001-05.com.equallogic:vol", 30) != 0 ||
            strcmp(json_string_value(json_object_get(t, "address")), "10.0.5.10") != 0)
            continue;
        statics++;
        assert_int_equal(json_array_size(json_object_get(t, "options")), 1);
        assert_string_equal(json_string_value(json_object_get(
                                json_array_get(json_object_get(t, "options"), 0), "value")),
                            iqn[30] == '1' ? "true" : "false");
        assert_string_equal(json_string_value(json_object_get(t, "parent")), "10.0.5.10:3260");
    }
    assert_int_equal(statics, 2);
    json_decref(j);
}

/* ---- the captured "edges" scenario ----------------------------------------------------------- */

static const struct est_datastore *ds_named(const struct estate *e, const char *name)
{
    return TL_FIND(e->datastores, e->n_datastores, name, name, "datastore");
}

static const struct est_host *host_named(const struct estate *e, const char *name)
{
    return TL_FIND(e->hosts, e->n_hosts, name, name, "host");
}

#define ODD "\"Prod\" & <Ops> 'Ñandú'"

/* The simulator's edges estate, from its SOAP through the decoders and SQLite into the estate:
 * every planted fact of scenario_edges.go the checks will need, resolved. */
TEST_WITH(test_edges_capture, setup, teardown)
{
    struct fx *fx = *state;
    struct db_snapshot *snap = NULL;
    struct estate *e = NULL;
    struct vim_sink sink;
    size_t i, on_iso = 0, on_homes = 0;

    assert_int_equal(db_snapshot_begin(fx->db, "vc-edges", NULL, &snap, &sink), 0);
    tl_data_decode(&sink, "edges-datastore.xml", vim_decode_datastore);
    tl_data_decode(&sink, "edges-host.xml", vim_decode_host);
    tl_data_decode(&sink, "edges-vm.xml", vim_decode_vm);
    assert_int_equal(db_snapshot_commit(snap, 1, 2, NULL), 0);
    assert_int_equal(db_estate_load(fx->db, "vc-edges", &e), 0);
    const struct est_host *h1 = host_named(e, "esx-edge-01");
    const size_t i1 = (size_t)(h1 - e->hosts), i2 = (size_t)(host_named(e, "esx-edge-02") - e->hosts);

    /* The spanned volume: both extents, each LUN found on both mounting hosts. */
    const struct est_datastore *span = ds_named(e, "ds-edge-span");
    assert_int_equal(span->n_extents, 2);
    for (i = 0; i < 2; i++) {
        const struct est_extent *x = &span->extents[i];
        assert_int_equal(x->n_luns, 2);
        assert_int_equal(x->luns[0].host + x->luns[1].host, i1 + i2);
        assert_string_equal(e->hosts[x->luns[0].host].luns[x->luns[0].lun].canonical_name,
                            x->disk_name);
    }
    assert_int_equal(ds_named(e, "ds-edge-single")->n_extents, 1);

    /* The boot datastore: local, on esx-edge-01's own mpx. disk, behind a local adapter. */
    const struct est_datastore *boot = ds_named(e, "datastore1 (esx-edge-01)");
    assert_int_equal(boot->vmfs_local, 1);
    assert_int_equal(boot->n_mounts, 1);
    assert_int_equal(boot->extents[0].n_luns, 1);
    assert_int_equal(boot->extents[0].luns[0].host, i1);
    const struct est_lun *mpx = &h1->luns[boot->extents[0].luns[0].lun];
    assert_string_equal(mpx->canonical_name, "mpx.vmhba0:C0:T0:L0");
    assert_string_equal(mpx->satp, "VMW_SATP_LOCAL");
    assert_int_equal(mpx->n_paths, 1);
    assert_string_equal(h1->hbas[mpx->paths[0].hba].type, "HostParallelScsiHba");
    assert_int_equal(ds_named(e, "ds-edge-single")->vmfs_local, 0);

    /* Devices: the local SAS disk that does not say it is local, NVMe under HPP, PowerPath. */
    const struct est_lun *sas = lun_of(h1, "naa.5000c500a1b2c3d4");
    assert_int_equal(sas->local, EST_UNKNOWN);
    assert_int_equal(sas->n_paths, 1);
    assert_string_equal(h1->hbas[sas->paths[0].hba].type, "HostSerialAttachedHba");
    assert_string_equal(h1->hbas[sas->paths[0].hba].driver, "lsi_msgpt3");
    const struct est_lun *nvme = lun_of(h1, "eui.0025388b91c3a1b2");
    assert_string_equal(nvme->multipath_plugin, "HPP");
    assert_string_equal(h1->hbas[nvme->paths[0].hba].type, "HostPcieHba");
    assert_string_equal(lun_of(h1, "naa.60000970000197601234533030303441")->multipath_plugin,
                        "PowerPath");
    const struct est_lun *c1 = lun_of(h1, "naa.600601600000000000000000000000c1");
    const struct est_lun *c2 = lun_of(h1, "naa.600601600000000000000000000000c2");
    assert_int_equal(c1->n_paths, 4);
    assert_int_not_equal(c1->paths[0].hba, EST_NONE);
    size_t hba_a = c1->paths[0].hba, other = 0, standby = 0;
    for (i = 0; i < c1->n_paths; i++) {
        other += c1->paths[i].hba != hba_a;
        standby += !strcmp(c1->paths[i].state, "standby");
    }
    assert_int_equal(other, 2);
    assert_int_equal(standby, 2);
    assert_int_equal(c2->n_paths, 2);
    assert_int_equal(c2->paths[0].hba, c2->paths[1].hba);

    /* Where the VMs live: 26 configurations on ds-edge-26vms, none on ds-edge-iso, although
     * 30 VMs list it (their ISO image). */
    const size_t iso = (size_t)(ds_named(e, "ds-edge-iso") - e->datastores);
    const size_t homes = (size_t)(ds_named(e, "ds-edge-26vms") - e->datastores);
    for (i = 0; i < e->n_vms; i++) {
        on_iso += e->vms[i].config_datastore == iso;
        on_homes += e->vms[i].config_datastore == homes;
        assert_int_not_equal(e->vms[i].config_datastore, EST_NONE);
    }
    assert_int_equal(on_iso, 0);
    assert_int_equal(on_homes, 26);
    assert_int_equal(e->datastores[iso].vm_count, 30);
    assert_int_equal(ds_named(e, "ds-edge-750")->capacity, 750 * GIB);

    /* The odd names, resolved like any other. */
    const struct est_datastore *odd = ds_named(e, "ds " ODD);
    const struct est_vm *oddvm = NULL;
    for (i = 0; i < e->n_vms; i++)
        if (!strcmp(e->vms[i].name, "vm " ODD))
            oddvm = &e->vms[i];
    assert_non_null(oddvm);
    assert_ptr_equal(&e->datastores[oddvm->config_datastore], odd);
    assert_string_equal(e->hosts[oddvm->host].name, "esx " ODD);

    /* The iSCSI array: three static targets on one portal, each linked to the send target
     * whose DelayedAck they inherit. */
    const struct est_iscsi_hba *a = &host_named(e, "esx-edge-iscsi")->iscsi_hbas[0];
    size_t linked = 0;
    for (i = 0; i < a->n_targets; i++) {
        const struct est_iscsi_target *t = &a->targets[i];
        if (t->send_target == EST_NONE)
            continue;
        linked++;
        assert_string_equal(t->address, "10.0.5.10");
        const struct est_iscsi_target *send = &a->targets[t->send_target];
        const struct est_option *own = est_option(send->options, send->n_options, "DelayedAck");
        const struct est_option *got = est_option(t->options, t->n_options, "DelayedAck");
        assert_string_equal(send->kind, "send");
        assert_string_equal(own->value, "true");
        assert_int_equal(own->inherited, 0);
        assert_string_equal(got->value, "true");
        assert_int_equal(got->inherited, 1);
    }
    assert_int_equal(linked, 3);

    /* What the multipathing checks judge (est_lun_locality, est_lun_plugin): the boot disk,
     * the local SAS disk that does not say it is local (VMW_SATP_LOCAL, one path through a SAS
     * controller) and the local NVMe disk are local; PowerPath's device and the ALUA LUNs are
     * SAN, and est_host_san_lun visits those alone. */
    static const struct {
        const char *name;
        enum est_locality where;
        enum est_plugin plugin;
    } kinds[] = {
        {"mpx.vmhba0:C0:T0:L0", EST_LOC_LOCAL, EST_PLUGIN_NMP},
        {"naa.5000c500a1b2c3d4", EST_LOC_LOCAL, EST_PLUGIN_NMP},
        {"eui.0025388b91c3a1b2", EST_LOC_LOCAL, EST_PLUGIN_HPP},
        {"naa.60000970000197601234533030303441", EST_LOC_SAN, EST_PLUGIN_OTHER},
        {"naa.600601600000000000000000000000c1", EST_LOC_SAN, EST_PLUGIN_NMP},
        {"naa.600601600000000000000000000000c3", EST_LOC_SAN, EST_PLUGIN_NMP},
    };
    for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        const struct est_lun *l = lun_of(h1, kinds[i].name);
        if (est_lun_locality(h1, l) != kinds[i].where || est_lun_plugin(l) != kinds[i].plugin)
            fail_msg("%s: locality %d plug-in %d", kinds[i].name, est_lun_locality(h1, l),
                     est_lun_plugin(l));
    }
    const struct est_lun *l;
    size_t visited = 0, san = 0;
    for (i = 0; i < h1->n_luns; i++)
        san += est_lun_locality(h1, &h1->luns[i]) == EST_LOC_SAN;
    for (i = 0; (l = est_host_san_lun(h1, &i)); i++) {
        assert_int_equal(est_lun_locality(h1, l), EST_LOC_SAN);
        visited++;
    }
    assert_int_equal(visited, san);
    assert_int_equal(san, h1->n_luns - 3);
    /* Over the whole estate: every host's, host by host. */
    const struct est_host *at, *prev = e->hosts;
    size_t all = 0, want_all = 0;
    for (struct est_san_pos pos = {0}; (l = est_next_san_lun(e, &pos, &at)); all++) {
        assert_true(at >= prev && l >= at->luns && l < at->luns + at->n_luns);
        prev = at;
    }
    for (size_t hi = 0; hi < e->n_hosts; hi++)
        for (i = 0; est_host_san_lun(&e->hosts[hi], &i); i++)
            want_all++;
    assert_int_equal(all, want_all);
    assert_true(all > san);
    est_free(e);
}

/* ---- the second thread ---------------------------------------------------------------------- */

static void same_str(const char *a, const char *b, const char *what)
{
    if (a != b && (!a || !b || strcmp(a, b) != 0))
        fail_msg("%s: %s / %s", what, a ? a : "NULL", b ? b : "NULL");
}

/* Every field of every VM, as the second thread and the calling thread loaded them. */
static void same_vms(const struct estate *a, const struct estate *b)
{
    assert_int_equal(a->n_vms, b->n_vms);
    for (size_t i = 0; i < a->n_vms; i++) {
        const struct est_vm *x = &a->vms[i], *y = &b->vms[i];
        same_str(x->moref, y->moref, "moref");
        same_str(x->name, y->name, x->moref);
        same_str(x->power_state, y->power_state, x->moref);
        same_str(x->ft_state, y->ft_state, x->moref);
        same_str(x->vm_path_name, y->vm_path_name, x->moref);
        same_str(x->managed_by, y->managed_by, x->moref);
        same_str(x->managed_by_type, y->managed_by_type, x->moref);
        assert_int_equal(x->template, y->template);
        assert_int_equal(x->hw_version, y->hw_version);
        assert_int_equal(x->consolidation_needed, y->consolidation_needed);
        assert_int_equal(x->host, y->host);
        assert_int_equal(x->config_datastore, y->config_datastore);
        assert_int_equal(x->n_datastores, y->n_datastores);
        for (size_t k = 0; k < x->n_datastores; k++)
            assert_int_equal(x->datastores[k], y->datastores[k]);
        assert_int_equal(x->n_controllers, y->n_controllers);
        for (size_t k = 0; k < x->n_controllers; k++) {
            assert_int_equal(x->controllers[k].key, y->controllers[k].key);
            same_str(x->controllers[k].type, y->controllers[k].type, x->moref);
            same_str(x->controllers[k].shared_bus, y->controllers[k].shared_bus, x->moref);
        }
        assert_int_equal(x->n_disks, y->n_disks);
        for (size_t k = 0; k < x->n_disks; k++) {
            const struct est_disk *d = &x->disks[k], *f = &y->disks[k];
            assert_int_equal(d->key, f->key);
            same_str(d->label, f->label, x->moref);
            same_str(d->file_name, f->file_name, x->moref);
            same_str(d->format, f->format, x->moref);
            same_str(d->parent, f->parent, x->moref);
            same_str(d->sharing, f->sharing, x->moref);
            assert_int_equal(d->datastore, f->datastore);
            assert_int_equal(d->controller, f->controller);
            assert_int_equal(d->capacity_bytes, f->capacity_bytes);
        }
        assert_int_equal(x->n_snapshots, y->n_snapshots);
        for (size_t k = 0; k < x->n_snapshots; k++) {
            same_str(x->snapshots[k].name, y->snapshots[k].name, x->moref);
            assert_int_equal(x->snapshots[k].created, y->snapshots[k].created);
            assert_int_equal(x->snapshots[k].depth, y->snapshots[k].depth);
        }
    }
}

/* The VMs read on the second thread are the ones the calling thread reads alone: the edges
 * estate's disks, controllers, snapshots and configuration datastores, index for index. */
TEST_WITH(test_second_thread_same_vms, setup, teardown)
{
    struct fx *fx = *state;
    struct db_snapshot *snap = NULL;
    struct estate *two = NULL, *one = NULL;
    struct vim_sink sink;
    size_t disks = 0, snaps = 0;

    assert_int_equal(db_snapshot_begin(fx->db, "vc-edges", NULL, &snap, &sink), 0);
    tl_data_decode(&sink, "edges-datastore.xml", vim_decode_datastore);
    tl_data_decode(&sink, "edges-host.xml", vim_decode_host);
    tl_data_decode(&sink, "edges-vm.xml", vim_decode_vm);
    assert_int_equal(db_snapshot_commit(snap, 1, 2, NULL), 0);
    assert_int_equal(db_estate_load(fx->db, "vc-edges", &two), 0);
    assert_int_equal(db_test_load_threaded, 1);
    db_test_load_one_thread = 1;
    int r = db_estate_load(fx->db, "vc-edges", &one);
    db_test_load_one_thread = 0;
    assert_int_equal(r, 0);
    assert_int_equal(db_test_load_threaded, 0);
    for (size_t i = 0; i < two->n_vms; i++) {
        disks += two->vms[i].n_disks;
        snaps += two->vms[i].n_snapshots;
    }
    assert_true(two->n_vms > 30 && disks > two->n_vms && snaps > 0);
    same_vms(two, one);
    /* fill()'s odd configuration paths, resolved alike. */
    est_free(two);
    est_free(one);
    /* The second thread's lines name the caller's vCenter (util/log.c's context is per
     * thread). */
    db_test_load_side_log_vcenter = NULL;
    log_context_vcenter("vc-a");
    r = db_estate_load(fx->db, "vc-a", &two);
    log_context_vcenter(NULL);
    assert_int_equal(r, 0);
    assert_int_equal(db_test_load_threaded, 1);
    assert_non_null(db_test_load_side_log_vcenter);
    assert_string_equal(db_test_load_side_log_vcenter, "vc-a");
    db_test_load_one_thread = 1;
    r = db_estate_load(fx->db, "vc-a", &one);
    db_test_load_one_thread = 0;
    assert_int_equal(r, 0);
    same_vms(two, one);
    est_free(two);
    est_free(one);
}

/* Replaces table with one that has none of its columns (broken), or puts it back, through a
 * connection of its own. */
static void break_table(const char *path, const char *table, int broken)
{
    char sql[256];
    sqlite3 *h = NULL;

    if (broken)
        snprintf(sql, sizeof(sql), "ALTER TABLE %s RENAME TO %s_gone; CREATE TABLE %s (x TEXT)",
                 table, table, table);
    else
        snprintf(sql, sizeof(sql), "DROP TABLE %s; ALTER TABLE %s_gone RENAME TO %s", table,
                 table, table);
    assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
    if (sqlite3_exec(h, sql, NULL, NULL, NULL) != SQLITE_OK)
        fail_msg("%s: %s", sql, sqlite3_errmsg(h));
    sqlite3_close(h);
}

/* A table that cannot be read, on either thread, loads no estate at all (not one without
 * its VMs or without its paths), and says the database failed. */
TEST(test_second_thread_failure_loads_nothing)
{
    static const char *const broken[] = {"vdisks", "snapshots", "lun_paths", "datastore_hosts"};

    for (size_t i = 0; i < sizeof(broken) / sizeof(broken[0]); i++) {
        void *st = NULL;
        struct estate *e = NULL;
        assert_int_equal(setup(&st), 0);
        struct fx *fx = st;
        break_table(fx->file->path, broken[i], 1);
        int r = db_estate_load(fx->db, "vc-a", &e);
        if (r != -VSL_EDB || e || !db_test_load_threaded)
            fail_msg("%s broken: %s, estate %p, threaded %d", broken[i], vsl_strerror(r),
                     (void *)e, db_test_load_threaded);
        /* Nothing is left behind (the connection's transaction, the thread's): once the
         * table is back, the same connection loads the whole estate. */
        break_table(fx->file->path, broken[i], 0);
        assert_int_equal(db_estate_load(fx->db, "vc-a", &e), 0);
        size_t paths = 0;
        for (size_t h = 0; h < e->n_hosts; h++)
            for (size_t l = 0; l < e->hosts[h].n_luns; l++)
                paths += e->hosts[h].luns[l].n_paths;
        assert_int_equal(e->n_vms, 8);
        assert_int_equal(paths, 5);
        assert_int_equal(e->datastores[ds_index(e, "datastore-1")].n_mounts, 2);
        est_free(e);
        assert_int_equal(teardown(&st), 0);
    }
}

/* A poll committed while the load began: its new VMs. */
static void fill_later(const struct vim_sink *s, const void *arg)
{
    fill(s, arg);
    vm(s, "vm-late", "[ds-span] vm-late/vm-late.vmx", "datastore-1", NULL);
}

/* The private connection whose check the poll commits before: 1 the calling thread's, 2 the
 * second thread's. */
static int commit_on_call;

static void commit_a_poll(void *ctx, int call)
{
    const char *path = ctx;
    struct db *db = NULL;

    if (call != commit_on_call)
        return;
    assert_int_equal(db_open(path, &db, NULL), 0);
    tl_snapshot(db, "vc-a", fill_later, NULL, 3, 4, NULL);
    db_close(db);
}

/* The estate of fill()'s first poll, whole: not one VM of the later one. */
static void old_snapshot(const struct estate *e)
{
    assert_int_equal(e->polled_ms, 2);
    assert_int_equal(e->n_vms, 8);
    for (size_t i = 0; i < e->n_vms; i++)
        assert_string_not_equal(e->vms[i].moref, "vm-late");
}

/* Loads with a poll committed at the call-th private connection's start (1: the calling
 * thread's, 2: the second thread's): one thread, after `opened` private connections, and the
 * old snapshot whole; then the next load reads the new poll on two threads again. The first
 * estate is returned, the caller frees it. */
static struct estate *load_across_a_poll(struct fx *fx, int call, int opened)
{
    struct estate *e = NULL, *later = NULL;

    commit_on_call = call;
    db_test_load_begun = commit_a_poll;
    db_test_load_begun_ctx = fx->file->path;
    int r = db_estate_load(fx->db, "vc-a", &e);
    db_test_load_begun = NULL;
    assert_int_equal(r, 0);
    assert_int_equal(db_test_load_private, opened);
    assert_int_equal(db_test_load_threaded, 0);
    old_snapshot(e);
    assert_int_equal(db_estate_load(fx->db, "vc-a", &later), 0);
    assert_int_equal(db_test_load_threaded, 1);
    assert_int_equal(later->polled_ms, 4);
    assert_int_equal(later->n_vms, 9);
    est_free(later);
    return e;
}

/* A poll that commits after the load's read transaction began, before the second thread's
 * did, would give the thread the new VMs and the rest the old snapshot: the VMs are then read
 * on the calling thread, and the estate is the old snapshot, whole. */
TEST_WITH(test_second_thread_same_snapshot, setup, teardown)
{
    /* The calling thread's connection saw the new poll: the second was never opened. */
    est_free(load_across_a_poll(*state, 1, 1));
}

/* A poll that commits after the calling thread's private connection began its read
 * transaction, before the second thread's did: the second thread is not started, and the
 * calling thread reads everything over its own connection, the old snapshot whole. */
TEST_WITH(test_second_thread_same_snapshot_side, setup, teardown)
{
    struct fx *fx = *state;
    /* Both were opened: the hook ran before the second one's check, which failed. */
    struct estate *e = load_across_a_poll(fx, 2, 2);

    same_vms(e, fx->e);
    est_free(e);
}

/* A database in rollback-journal mode is read on one thread over the caller's connection: a
 * private connection there could wait on a committing writer that waits on the caller's. */
TEST_WITH(test_rollback_journal_one_connection, setup, teardown)
{
    struct fx *fx = *state;
    struct estate *e = NULL;
    sqlite3 *h = NULL;
    sqlite3_stmt *st = NULL;

    db_close(fx->db);
    fx->db = fx->file->db = NULL;
    assert_int_equal(sqlite3_open(fx->file->path, &h), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(h, "PRAGMA journal_mode = DELETE", -1, &st, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(st, 0), "delete");
    sqlite3_finalize(st);
    sqlite3_close(h);
    /* A reader keeps the file's mode (a writer would switch it to WAL again). */
    assert_int_equal(db_open_reader(fx->file->path, &fx->db, NULL), 0);
    fx->file->db = fx->db;
    assert_int_equal(db_estate_load(fx->db, "vc-a", &e), 0);
    assert_int_equal(db_test_load_private, 0);
    assert_int_equal(db_test_load_threaded, 0);
    same_vms(e, fx->e);
    est_free(e);
    /* The same file back in WAL mode: two threads, each over a private connection. */
    db_close(fx->db);
    fx->db = fx->file->db = NULL;
    assert_int_equal(db_open(fx->file->path, &fx->db, NULL), 0);
    fx->file->db = fx->db;
    assert_int_equal(db_estate_load(fx->db, "vc-a", &e), 0);
    assert_int_equal(db_test_load_private, 2);
    assert_int_equal(db_test_load_threaded, 1);
    same_vms(e, fx->e);
    est_free(e);
}

/* Three hosts of a cluster: esx-a and esx-b see naa.1 over the same two paths through vmhba2
 * (listed second on both), esx-c sees one of them dead, esx-d lists vmhba2 third. VMs vm-a and
 * vm-b have the same two controllers, vm-c a SAS one in place of the PVSCSI. Every host mounts
 * datastore-1 and datastore-2 alike; datastore-3 is not mounted on host-c (still listed). */
static void fill_cluster(const struct vim_sink *s, const void *arg)
{
    static const char *const hosts[] = {"host-a", "host-b", "host-c", "host-d"};

    (void)arg;
    ds(s, "datastore-1", "ds-1", "VMFS", 0);
    ds(s, "datastore-2", "ds-2", "VMFS", 0);
    ds(s, "datastore-3", "ds-3", "VMFS", 0);
    for (size_t i = 0; i < 4; i++) {
        const char *h = hosts[i];
        host(s, h, h);
        mount(s, "datastore-1", h, 1);
        mount(s, "datastore-2", h, 1);
        const struct vim_datastore_host m3 = {"datastore-3", h, i != 2, 1, "readWrite"};
        assert_int_equal(s->datastore_host(s->ctx, &m3), 0);
        hba(s, h, "vmhba0", "HostParallelScsiHba", "pvscsi");
        if (i == 3)
            hba(s, h, "vmhba1", "HostFibreChannelHba", "qlnativefc");
        hba(s, h, "vmhba2", "HostFibreChannelHba", "qlnativefc");
        lun(s, h, "naa.1", 0, "VMW_PSP_RR", "VMW_SATP_ALUA",
            "HostMultipathInfoLogicalUnitPolicy", "NMP");
        path(s, h, "naa.1", "vmhba2:C0:T0:L1", "active", "vmhba2");
        path(s, h, "naa.1", "vmhba2:C0:T1:L1", i == 2 ? "dead" : "active", "vmhba2");
    }
    static const char *const vms[] = {"vm-a", "vm-b", "vm-c"};
    for (size_t i = 0; i < 3; i++) {
        vm(s, vms[i], NULL, "datastore-1", NULL);
        const struct vim_controller ide = {vms[i], 200, "VirtualIDEController", NULL, 0};
        const struct vim_controller scsi = {
            vms[i], 1000, i == 2 ? "VirtualLsiLogicSASController" : "ParaVirtualSCSIController",
            "noSharing", 0};
        assert_int_equal(s->controller(s->ctx, &ide), 0);
        assert_int_equal(s->controller(s->ctx, &scsi), 0);
    }
}

/* Equal arrays of paths, controllers and mounts are one array in the estate (what keeps
 * 513,000 paths of 1,000 hosts from costing 29 MB), and only equal ones: a path in another
 * state, an adapter at another index of its host, or a host that does not mount the datastore,
 * keeps its own array, read right. On both threads of the load and on one. */
TEST_WITH(test_equal_arrays_shared, setup, teardown)
{
    struct fx *fx = *state;

    tl_snapshot(fx->db, "vc-cluster", fill_cluster, NULL, 1, 2, NULL);
    for (int one = 0; one < 2; one++) {
        struct estate *e = NULL;
        db_test_load_one_thread = one;
        int r = db_estate_load(fx->db, "vc-cluster", &e);
        db_test_load_one_thread = 0;
        assert_int_equal(r, 0);
        assert_int_equal(db_test_load_threaded, !one);
        const struct est_lun *a = lun_of(&e->hosts[host_index(e, "host-a")], "naa.1");
        const struct est_lun *b = lun_of(&e->hosts[host_index(e, "host-b")], "naa.1");
        const struct est_lun *c = lun_of(&e->hosts[host_index(e, "host-c")], "naa.1");
        const struct est_host *hd = &e->hosts[host_index(e, "host-d")];
        const struct est_lun *d = lun_of(hd, "naa.1");
        assert_int_equal(a->n_paths, 2);
        assert_ptr_equal(a->paths, b->paths);
        assert_ptr_not_equal(c->paths, a->paths);
        assert_string_equal(c->paths[1].state, "dead");
        assert_string_equal(a->paths[1].state, "active");
        assert_ptr_not_equal(d->paths, a->paths);
        assert_int_equal(a->paths[0].hba, 1);
        assert_int_equal(d->paths[0].hba, 2);
        assert_string_equal(hd->hbas[d->paths[0].hba].device, "vmhba2");
        const struct est_vm *va = vm_of(e, "vm-a"), *vb = vm_of(e, "vm-b"), *vc = vm_of(e, "vm-c");
        assert_int_equal(va->n_controllers, 2);
        assert_ptr_equal(va->controllers, vb->controllers);
        assert_ptr_not_equal(vc->controllers, va->controllers);
        assert_string_equal(vc->controllers[1].type, "VirtualLsiLogicSASController");
        assert_string_equal(va->controllers[1].type, "ParaVirtualSCSIController");
        const struct est_datastore *d1 = &e->datastores[ds_index(e, "datastore-1")],
                                   *d2 = &e->datastores[ds_index(e, "datastore-2")],
                                   *d3 = &e->datastores[ds_index(e, "datastore-3")];
        assert_int_equal(d1->n_mounts, 4);
        assert_int_equal(d3->n_mounts, 4);
        assert_ptr_equal(d1->mounts, d2->mounts);
        assert_ptr_not_equal(d3->mounts, d1->mounts);
        assert_int_equal(d3->mounts[2].host, host_index(e, "host-c"));
        assert_int_equal(d3->mounts[2].mounted, 0);
        assert_int_equal(d1->mounts[2].mounted, 1);
        assert_int_equal(d3->mounts[3].mounted, 1);
        est_free(e);
    }
}

int main(void)
{
    return tl_main();
}
