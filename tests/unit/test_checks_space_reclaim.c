/* Unit tests for space-reclaim: VMFS6 datastores with automatic UNMAP off, hosts with
 * EnableBlockDelete 0 that run VMs with thin disks on VMFS5 (one finding per host, listing them),
 * and VMs with such disks below vmx-11. Each table row is one hand-built object and what it
 * must (or must not) raise. */
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

extern const struct check chk_space_reclaim;

/* ---- datastores: automatic space reclamation ------------------------------------------------ */

static const struct unmap_row {
    const char *name, *type;
    int major, local, accessible;
    const char *unmap;
    int want;
} unmap_rows[] = {
    {"vmfs6-none", "VMFS", 6, 0, 1, "none", SEV_WARNING},
    {"vmfs6-low", "VMFS", 6, 0, 1, "low", NONE},
    {"vmfs6-unreported", "VMFS", 6, 0, 1, NULL, NONE}, /* unknown is not off */
    {"vmfs6-local-none", "VMFS", 6, 1, 1, "none", NONE},  /* a boot disk: no array pool */
    {"vmfs6-locality-unknown-none", "VMFS", 6, EST_UNKNOWN, 1, "none", SEV_WARNING},
    {"vmfs7-none", "VMFS", 7, 0, 1, "none", SEV_WARNING}, /* a later VMFS has it too */
    {"vmfs5", "VMFS", 5, 0, 1, NULL, NONE},              /* no automatic UNMAP: vmfs-version's */
    {"vmfs6-none-inaccessible", "VMFS", 6, 0, 0, "none", NONE}, /* stale: not judged */
    {"nfs", "NFS", 0, EST_UNKNOWN, 1, NULL, NONE},
    {"ds \"Prod\" & 'x'", "VMFS", 6, 0, 1, "none", SEV_WARNING},
};

TEST(test_unmap_priority)
{
    struct est_extent ext = {.disk_name = "naa.600601600000000000000000000000d1", .partition = 1};
    struct est_datastore ds[N(unmap_rows)];
    char morefs[N(unmap_rows)][16];

    memset(ds, 0, sizeof(ds));
    for (size_t i = 0; i < N(unmap_rows); i++) {
        const struct unmap_row *row = &unmap_rows[i];
        snprintf(morefs[i], sizeof(morefs[i]), "ds-%zu", i);
        ds[i] = (struct est_datastore){.moref = morefs[i],
                                       .name = row->name,
                                       .type = row->type,
                                       .capacity = 600LL << 30,
                                       .free_space = 300LL << 30,
                                       .accessible = row->accessible,
                                       .vmfs_major = row->major,
                                       .vmfs_version = row->major ? "6.82" : NULL,
                                       .vmfs_local = row->local,
                                       .unmap_priority = row->unmap,
                                       .pod = EST_NONE,
                                       .extents = &ext,
                                       .n_extents = row->major ? 1 : 0};
    }
    struct estate e = {.vcenter = "vc", .datastores = ds, .n_datastores = N(ds)};
    struct chk_results r = tl_run(&chk_space_reclaim, NULL, &e, NOW);
    assert_int_equal(r.n, TL_WANT_EACH(&r, unmap_rows, N(unmap_rows), name, want));

    const struct chk_finding *f = tl_find(&r, "vmfs6-none", NULL);
    assert_string_equal(f->object_type, "datastore");
    assert_string_equal(tl_ev_str(f, "unmap_priority"), "none");
    assert_string_equal(tl_ev_str(f, "command"), "esxcli storage vmfs reclaim config set "
                                                 "--volume-label=vmfs6-none --reclaim-priority=low");
    assert_int_equal(json_array_size(json_object_get(f->evidence, "extents")), 1);
    assert_string_equal(tl_ev_item(f, "extents", 0, NULL), ext.disk_name);
    /* A name the shell would split or expand is quoted as one word. */
    f = tl_find(&r, "ds \"Prod\" & 'x'", NULL);
    assert_string_equal(tl_ev_str(f, "command"),
                        "esxcli storage vmfs reclaim config set "
                        "--volume-label='ds \"Prod\" & '\\''x'\\''' --reclaim-priority=low");
    /* The inaccessible one is kept as it was: unverified, not resolved. */
    tl_want_unverified(&r, "ds-7");
    chk_results_free(&r);
}

/* The hosts a VMFS6 volume's reclaim priority can be set from (vslint plan takes the first):
 * connected ones that mount it and reach it, by name. */
TEST(test_unmap_mounted_by)
{
    struct est_host hosts[] = {
        {.moref = "host-1", .name = "esx-b", .connection_state = "connected"},
        {.moref = "host-2", .name = "esx-a", .connection_state = "connected"},
        {.moref = "host-3", .name = "esx-c", .connection_state = "disconnected"},
        {.moref = "host-4", .name = "esx-d", .connection_state = "connected"},
        {.moref = "host-5", .name = "esx-e", .connection_state = "connected"},
    };
    struct est_mount mounts[] = {
        {.host = 0, .mounted = 1, .accessible = 1}, {.host = 1, .mounted = 1, .accessible = 1},
        {.host = 2, .mounted = 1, .accessible = 1}, {.host = 3, .mounted = 0, .accessible = 1},
        {.host = 4, .mounted = 1, .accessible = 0},
    };
    struct est_extent ext = {.disk_name = "naa.600601600000000000000000000000d1", .partition = 1};
    struct est_datastore ds = {.moref = "ds-1", .name = "vmfs6-none", .type = "VMFS",
                               .capacity = 600LL << 30, .free_space = 300LL << 30,
                               .accessible = 1, .vmfs_major = 6, .vmfs_local = 0,
                               .unmap_priority = "none", .pod = EST_NONE, .extents = &ext,
                               .n_extents = 1, .mounts = mounts, .n_mounts = N(mounts)};
    struct estate e = {.vcenter = "vc", .hosts = hosts, .n_hosts = N(hosts), .datastores = &ds,
                       .n_datastores = 1};
    struct chk_results r = tl_run(&chk_space_reclaim, NULL, &e, NOW);
    const struct chk_finding *f = tl_find(&r, "vmfs6-none", NULL);
    assert_non_null(f);
    assert_string_equal(tl_ev_item(f, "mounted_by", 0, NULL), "esx-a");
    assert_string_equal(tl_ev_item(f, "mounted_by", 1, NULL), "esx-b");
    assert_null(tl_ev_item(f, "mounted_by", 2, NULL));
    chk_results_free(&r);
}

/* ---- hosts and VMs: in-guest reclaim on VMFS5 ------------------------------------------------ */

enum { DS_VMFS6, DS_VMFS5, DS_NFS, DS_VMFS5_LOCAL, NDS };
enum { H_EBD1, H_EBD0, H_EBDUNK, H_EBD0_VMFS6, H_EBD0_DOWN, NHOSTS };

/* One host per row, in the order of the enum, and its finding: one for the host that lists its
 * VMs, not one per VM; none for the hosts that are fine, unknown, have nothing on VMFS5, or are
 * disconnected (dropped: stale). */
static const struct host_row {
    const char *name, *state;
    int ebd;
    int want;
} host_rows[NHOSTS] = {{"esx-ebd1", "connected", 1, NONE},
                       {"esx-ebd0", "connected", 0, SEV_WARNING},
                       {"esx-ebdunk", "connected", EST_UNKNOWN, NONE},
                       {"esx-ebd0-vmfs6", "connected", 0, NONE},
                       {"esx-ebd0-down", "disconnected", 0, NONE}};

/* One VM per row, one disk (two when fmt2 is set). The moved vdisk-format rows keep their names;
 * what was one info finding on the VM is now a host finding (EnableBlockDelete) and/or a VM
 * finding (hardware). */
static const struct vm_row {
    const char *vm;
    const char *format;
    int hw;
    size_t ds, host;
    int template;
    const char *fmt2; /* a second disk's format, on ds2 */
    size_t ds2;
    int want_vm;      /* the VM's own finding (hardware) */
    int listed;       /* listed in its host's finding */
} vm_rows[] = {
    {"reclaim-old-noebd", "thin", 10, DS_VMFS5, H_EBD0, 0, NULL, 0, SEV_INFO, 1},
    {"reclaim-new-noebd", "thin", 13, DS_VMFS5, H_EBD0, 0, NULL, 0, NONE, 1},
    {"reclaim-old-ebd", "thin", 10, DS_VMFS5, H_EBD1, 0, NULL, 0, SEV_INFO, 0},
    {"reclaim-11-ebd", "thin", 11, DS_VMFS5, H_EBD1, 0, NULL, 0, NONE, 0},
    {"reclaim-hw-unknown", "thin", EST_UNKNOWN, DS_VMFS5, H_EBD0, 0, NULL, 0, NONE, 1},
    {"reclaim-ebd-unknown", "thin", 13, DS_VMFS5, H_EBDUNK, 0, NULL, 0, NONE, 0},
    {"reclaim-both-unknown", "thin", EST_UNKNOWN, DS_VMFS5, H_EBDUNK, 0, NULL, 0, NONE, 0},
    {"lazy-vmfs5-old", "lazyzeroedthick", 10, DS_VMFS5, H_EBD0, 0, NULL, 0, NONE, 0},
    {"eager-vmfs5-old", "eagerzeroedthick", 10, DS_VMFS5, H_EBD0, 0, NULL, 0, NONE, 0},
    {"rdm-vmfs5-old", "rdm-virtual", 10, DS_VMFS5, H_EBD0, 0, NULL, 0, NONE, 0},
    {"template-thin-vmfs5", "thin", 10, DS_VMFS5, H_EBD0, 1, NULL, 0, NONE, 0},
    {"thin-vmfs6", "thin", 10, DS_VMFS6, H_EBD0, 0, NULL, 0, NONE, 0},
    {"thin-nfs", "thin", 10, DS_NFS, H_EBD0, 0, NULL, 0, NONE, 0},
    {"thin-local-vmfs5", "thin", 10, DS_VMFS5_LOCAL, H_EBD0, 0, NULL, 0, NONE, 0},
    {"thin-ds-unknown", "thin", 10, EST_NONE, H_EBD0, 0, NULL, 0, NONE, 0},
    {"thin-no-host", "thin", 10, DS_VMFS5, EST_NONE, 0, NULL, 0, SEV_INFO, 0},
    /* Two disks: only the VMFS5 thin one is listed (VM and host evidence). */
    {"mixed-disks", "thin", 10, DS_VMFS5, H_EBD0, 0, "thin", DS_VMFS6, SEV_INFO, 1},
    /* EnableBlockDelete 0 where every thin disk is on VMFS6: nothing to reclaim through it. */
    {"only-vmfs6", "thin", 13, DS_VMFS6, H_EBD0_VMFS6, 0, NULL, 0, NONE, 0},
    /* A disconnected host's stale configuration is not judged (its VM's hardware is). */
    {"on-down-host", "thin", 10, DS_VMFS5, H_EBD0_DOWN, 0, NULL, 0, SEV_INFO, 1},
};

struct vm_world {
    struct est_datastore ds[NDS];
    struct est_host hosts[NHOSTS];
    struct est_vm vms[N(vm_rows)];
    struct est_disk disks[N(vm_rows)][2];
    char morefs[N(vm_rows)][32];
    struct estate e;
};

/* A row VM's first disk (40 GB) or second (10 GB), on datastore index ds, of format fmt. */
static struct est_disk row_disk(int second, size_t ds, const char *fmt)
{
    return (struct est_disk){.key = second ? 2001 : 2000,
                             .label = second ? "Hard disk 2" : "Hard disk 1",
                             .file_name = second ? "[ds] vm/vm_1.vmdk" : "[ds] vm/vm.vmdk",
                             .datastore = ds,
                             .capacity_bytes = second ? 10000000000 : 40000000000,
                             .format = fmt,
                             .controller = EST_NONE};
}

static void vm_build(struct vm_world *w)
{
    memset(w, 0, sizeof(*w));
    w->ds[DS_VMFS6] = (struct est_datastore){
        .moref = "ds-6", .name = "ds-vmfs6", .type = "VMFS", .vmfs_major = 6, .pod = EST_NONE,
        .accessible = 1};
    w->ds[DS_VMFS5] = (struct est_datastore){
        .moref = "ds-5", .name = "ds-vmfs5", .type = "VMFS", .vmfs_major = 5, .pod = EST_NONE,
        .accessible = 1};
    w->ds[DS_NFS] = (struct est_datastore){
        .moref = "ds-n", .name = "ds-nfs", .type = "NFS", .pod = EST_NONE, .accessible = 1};
    w->ds[DS_VMFS5_LOCAL] =
        (struct est_datastore){.moref = "ds-l", .name = "datastore1", .type = "VMFS",
                               .vmfs_major = 5, .vmfs_local = 1, .pod = EST_NONE, .accessible = 1};
    for (size_t i = 0; i < NHOSTS; i++)
        w->hosts[i] = (struct est_host){.moref = host_rows[i].name,
                                        .name = host_rows[i].name,
                                        .connection_state = host_rows[i].state,
                                        .enable_block_delete = host_rows[i].ebd};
    for (size_t i = 0; i < N(vm_rows); i++) {
        const struct vm_row *row = &vm_rows[i];
        snprintf(w->morefs[i], sizeof(w->morefs[i]), "vm-%zu", i);
        w->disks[i][0] = row_disk(0, row->ds, row->format);
        w->disks[i][1] = row_disk(1, row->ds2, row->fmt2);
        w->vms[i] = (struct est_vm){.moref = w->morefs[i],
                                    .name = row->vm,
                                    .template = row->template,
                                    .power_state = "poweredOn",
                                    .ft_state = "notConfigured",
                                    .hw_version = row->hw,
                                    .host = row->host,
                                    .config_datastore = row->ds,
                                    .disks = w->disks[i],
                                    .n_disks = row->fmt2 ? 2 : 1};
    }
    w->e = (struct estate){.vcenter = "vc",
                           .datastores = w->ds,
                           .n_datastores = NDS,
                           .hosts = w->hosts,
                           .n_hosts = NHOSTS,
                           .vms = w->vms,
                           .n_vms = N(vm_rows)};
}

/* The names of the VMs a host finding lists, in order, joined by ",". */
static void listed_vms(const struct chk_finding *f, char *out, size_t size)
{
    json_t *vms = json_object_get(f->evidence, "vms");
    out[0] = '\0';
    for (size_t k = 0; k < json_array_size(vms); k++) {
        size_t n = strlen(out);
        snprintf(out + n, size - n, "%s%s", k ? "," : "",
                 json_string_value(json_object_get(json_array_get(vms, k), "vm")));
    }
}

TEST(test_vms_and_hosts)
{
    static struct vm_world w;
    char want_listed[512] = "", got[512];

    vm_build(&w);
    struct chk_results r = tl_run(&chk_space_reclaim, NULL, &w.e, NOW);
    size_t want_n = TL_WANT_EACH(&r, host_rows, NHOSTS, name, want) +
                    TL_WANT_EACH(&r, vm_rows, N(vm_rows), vm, want_vm);
    for (size_t i = 0; i < N(vm_rows); i++) {
        if (vm_rows[i].listed && vm_rows[i].host == H_EBD0) {
            size_t n = strlen(want_listed);
            snprintf(want_listed + n, sizeof(want_listed) - n, "%s%s", n ? "," : "",
                     vm_rows[i].vm);
        }
    }
    assert_int_equal(r.n, want_n);

    const struct chk_finding *f = tl_find(&r, "esx-ebd0", NULL);
    assert_string_equal(f->object_type, "host");
    assert_string_equal(f->host_name, "esx-ebd0");
    assert_int_equal(tl_ev_int(f, "enable_block_delete"), 0);
    assert_true(strstr(tl_ev_str(f, "command"), "--option=/VMFS3/EnableBlockDelete --int-value=1"));
    listed_vms(f, got, sizeof(got));
    assert_string_equal(got, want_listed);
    assert_true(strstr(f->message, "reclaim-old-noebd on ds-vmfs5") != NULL);
    /* mixed-disks: its VMFS6 disk is not listed. */
    json_t *vms = json_object_get(f->evidence, "vms");
    for (size_t k = 0; k < json_array_size(vms); k++) {
        json_t *v = json_array_get(vms, k);
        json_t *disks = json_object_get(v, "disks");
        assert_int_equal(json_array_size(disks), 1);
        assert_string_equal(json_string_value(json_object_get(json_array_get(disks, 0),
                                                              "datastore")),
                            "ds-vmfs5");
    }

    /* The VM findings: hardware and the disks it concerns. */
    f = tl_find(&r, "reclaim-old-noebd", NULL);
    assert_string_equal(f->object_type, "vm");
    assert_null(f->host_moref);
    assert_int_equal(tl_ev_int(f, "hw_version"), 10);
    assert_int_equal(tl_ev_int(f, "min_hw_version"), 11);
    assert_int_equal(tl_ev_int(f, "enable_block_delete"), 0);
    assert_string_equal(tl_ev_str(f, "host"), "esx-ebd0");
    assert_true(strstr(f->message, "ds-vmfs5") != NULL);
    assert_int_equal(json_array_size(json_object_get(f->evidence, "thin_disks_on_vmfs5")), 1);
    assert_string_equal(tl_ev_item(f, "thin_disks_on_vmfs5", 0, "datastore"), "ds-vmfs5");
    f = tl_find(&r, "mixed-disks", NULL);
    assert_int_equal(json_array_size(json_object_get(f->evidence, "thin_disks_on_vmfs5")), 1);
    f = tl_find(&r, "thin-no-host", NULL);
    assert_true(json_is_null(json_object_get(f->evidence, "host")));
    assert_true(json_is_null(json_object_get(f->evidence, "enable_block_delete")));

    /* The disconnected host's earlier findings are kept, unverified. */
    tl_want_unverified(&r, "esx-ebd0-down");
    chk_results_free(&r);
}

TEST(test_min_hw_version)
{
    static struct vm_world w;

    vm_build(&w);
    struct chk_results r = tl_run_with(&chk_space_reclaim, "min_hw_version", 14, &w.e, NOW);
    tl_want(&r, "reclaim-11-ebd", SEV_INFO);      /* vmx-11 is now too old */
    tl_want(&r, "reclaim-ebd-unknown", SEV_INFO); /* vmx-13 < 14 decides without EBD */
    tl_want(&r, "thin-vmfs6", NONE);              /* VMFS6 has no hardware requirement */
    tl_want(&r, "reclaim-hw-unknown", NONE);      /* unknown is not old */
    chk_results_free(&r);

    r = tl_run_with(&chk_space_reclaim, "min_hw_version", 10, &w.e, NOW);
    tl_want(&r, "reclaim-old-ebd", NONE); /* vmx-10 is enough now */
    tl_want(&r, "reclaim-old-noebd", NONE);
    tl_want(&r, "esx-ebd0", SEV_WARNING); /* the host's setting does not depend on it */
    chk_results_free(&r);
}

int main(void)
{
    return tl_main();
}
