/* Unit tests for the capacity and VM-layout checks (datastore-free-space, datastore-size,
 * vms-per-datastore, thin-overcommit, snapshots, pvscsi-controller) on hand-built estates, and
 * the LUNs every datastore check names (with vmfs-version). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks/check.h"
#include "checks/engine.h"
#include "testlib.h"

extern const struct check chk_datastore_free_space;
extern const struct check chk_datastore_size;
extern const struct check chk_vms_per_datastore;
extern const struct check chk_thin_overcommit;
extern const struct check chk_snapshots;
extern const struct check chk_snapshot_consolidation;
extern const struct check chk_pvscsi_controller;
extern const struct check chk_vmfs_version;

#define GIB ((int64_t)1 << 30)
#define TIB (1024 * GIB)
#define DAY ((int64_t)86400)
#define NOW ((int64_t)1700000000)

/* ---- datastore-free-space ---- */

#define DS(nm, cap, fr)                                                                            \
    {                                                                                              \
        .moref = "m-" nm, .name = nm, .type = "VMFS", .capacity = (cap), .free_space = (fr),       \
        .uncommitted = EST_UNKNOWN, .accessible = 1, .vmfs_major = 6, .pod = EST_NONE              \
    }

/* A virtual disk of bytes on datastore index where (EST_NONE: unknown), of format fmt. */
#define VDISK(where, bytes, fmt)                                                                   \
    {                                                                                              \
        .key = 2000, .datastore = (where), .capacity_bytes = (bytes), .format = (fmt),             \
        .controller = EST_NONE                                                                     \
    }

TEST(test_free_space)
{
    const int64_t c = 600 * GIB;
    struct est_datastore ds[] = {
        DS("warn-20", c, c / 100 * 20),
        DS("crit-8", c, c / 100 * 8),
        DS("snap-3", c, c / 100 * 3),
        DS("ok-40", c, c / 100 * 40),
        DS("at-30", c, c / 100 * 30), /* 30 % is not below 30 % */
        DS("at-10", c, c / 100 * 10), /* not below 10 %: warning */
        DS("at-5", c, c / 100 * 5),   /* not below 5 %: critical without the snapshot text */
        DS("just-under-30", c, c / 100 * 30 - 1),
        DS("zero-free", c, 0),
        DS("cap-zero", 0, 0),
        DS("cap-unknown", EST_UNKNOWN, 1),
        DS("free-unknown", c, EST_UNKNOWN),
        DS("gone", c, c / 100), /* inaccessible: sizes cannot be trusted */
        DS("nfs-20", c, c / 100 * 20),
    };
    ds[12].accessible = 0;
    ds[13].type = "NFS";
    ds[13].vmfs_major = 0;
    struct est_pod pods[] = {
        {.moref = "p1", .name = "pod-low", .capacity = 1200 * GIB, .free_space = 180 * GIB},
        {.moref = "p2", .name = "pod-ok", .capacity = 1200 * GIB, .free_space = 600 * GIB},
        {.moref = "p3", .name = "pod-unknown", .capacity = EST_UNKNOWN, .free_space = EST_UNKNOWN},
        {.moref = "p4", .name = "pod-crit", .capacity = 1200 * GIB, .free_space = 24 * GIB},
    };
    struct estate e = {
        .vcenter = "vc", .datastores = ds, .n_datastores = N(ds), .pods = pods, .n_pods = N(pods)};
    static const struct tl_want_row want[] = { /* and the evidence's "level" */
        {"warn-20", SEV_WARNING, "warning"},
        {"crit-8", SEV_CRITICAL, "critical"},
        {"snap-3", SEV_CRITICAL, "snapshots_at_risk"},
        {"ok-40", NONE, NULL},
        {"at-30", NONE, NULL},
        {"at-10", SEV_WARNING, "warning"},
        {"at-5", SEV_CRITICAL, "critical"},
        {"just-under-30", SEV_WARNING, "warning"},
        {"zero-free", SEV_CRITICAL, "snapshots_at_risk"},
        {"cap-zero", NONE, NULL},
        {"cap-unknown", NONE, NULL},
        {"free-unknown", NONE, NULL},
        {"gone", NONE, NULL},
        {"nfs-20", SEV_WARNING, "warning"},
        {"pod-low", SEV_WARNING, "warning"},
        {"pod-ok", NONE, NULL},
        {"pod-unknown", NONE, NULL},
        {"pod-crit", SEV_CRITICAL, "snapshots_at_risk"},
    };
    struct chk_results r = tl_run(&chk_datastore_free_space, NULL, &e, NOW);
    tl_want_table(&r, want, N(want), NULL, "level");

    const struct chk_finding *f = tl_find(&r, "snap-3", NULL);
    assert_string_equal(f->object_type, "datastore");
    assert_string_equal(f->object_moref, "m-snap-3");
    assert_null(f->detail);
    /* The 5 % is the seed's figure for a Unity pool: the message says whose, and does not say
     * the datastore's snapshots are at risk (nothing invalidates them). */
    assert_non_null(strstr(f->message, "below 5 % free, the level at which a Unity pool "
                                       "invalidates its snapshots and replication sessions"));
    assert_null(strstr(f->message, "at risk"));
    assert_true(fabs(tl_ev_num(f, "free_pct") - 3.0) < 1e-9);
    assert_int_equal((int64_t)tl_ev_num(f, "capacity_bytes"), c);
    assert_int_equal((int64_t)tl_ev_num(f, "free_bytes"), c / 100 * 3);
    assert_true(tl_ev_num(f, "snap_free_pct") == 5 && tl_ev_num(f, "crit_free_pct") == 10 &&
                tl_ev_num(f, "warn_free_pct") == 30);
    assert_null(strstr(tl_find(&r, "at-5", NULL)->message, "invalidates"));

    f = tl_find(&r, "pod-low", NULL);
    assert_string_equal(f->object_type, "storage_pod");
    assert_string_equal(f->object_moref, "p1");
    assert_true(fabs(tl_ev_num(f, "free_pct") - 15.0) < 1e-9);
    chk_results_free(&r);

    /* Thresholds come from the configuration. */
    r = tl_run_with(&chk_datastore_free_space, "warn_free_pct", 45, &e, NOW);
    tl_want(&r, "ok-40", SEV_WARNING);
    assert_true(tl_ev_num(tl_find(&r, "ok-40", NULL), "warn_free_pct") == 45);
    tl_want(&r, "at-30", SEV_WARNING);
    tl_want(&r, "pod-ok", NONE);
    chk_results_free(&r);

    r = tl_run_with(&chk_datastore_free_space, "snap_free_pct", 0, &e, NOW);
    tl_want(&r, "snap-3", SEV_CRITICAL);
    assert_string_equal(tl_ev_str(tl_find(&r, "snap-3", NULL), "level"), "critical");
    chk_results_free(&r);

    /* A severity override applies to every finding. */
    struct chk_settings s;
    chk_settings_default(&chk_datastore_free_space, &s);
    s.severity_override = SEV_INFO;
    r = tl_run(&chk_datastore_free_space, &s, &e, NOW);
    tl_want(&r, "snap-3", SEV_INFO);
    chk_results_free(&r);
}

/* ---- sizes as vSphere prints them ---- */

TEST(test_size_text)
{
    static const struct {
        int64_t bytes;
        const char *want;
    } rows[] = {
        {750 * GIB, "750 GB"},          {750000000000, "698.49 GB"}, {600 * GIB / 4 * 3, "450 GB"},
        {GIB * 1199 / 2, "599.5 GB"},   {70 * TIB, "70 TB"},         {TIB + TIB / 4, "1.25 TB"},
        {512 * 1048576LL, "512 MB"},    {1023, "1023 bytes"},        {0, "0 bytes"},
    };
    char buf[32];

    for (size_t i = 0; i < N(rows); i++)
        assert_string_equal(chk_size(rows[i].bytes, buf, sizeof(buf)), rows[i].want);
}

/* ---- datastore-size ---- */

TEST(test_size)
{
    struct est_datastore ds[] = {
        /* The band is in GB as vSphere shows them (2^30 bytes). */
        DS("ok-600gib", 600 * GIB, 300 * GIB),
        DS("at-500", 500 * GIB, 1),
        DS("under-500", 500 * GIB - 1, 1),
        DS("at-750", 750 * GIB, 1),
        DS("over-750", 750 * GIB + 1, 1),
        DS("small-200gib", 200 * GIB, 100 * GIB),
        DS("huge-70tib", 70 * TIB, 35 * TIB),
        DS("at-64tib", 64 * TIB, 1),                 /* VMware's maximum itself: only the band */
        DS("exempt", 1200 * GIB, 600 * GIB),         /* holds a 900 GiB disk */
        DS("big-other-ds", 1200 * GIB, 600 * GIB),   /* its VM's big disk lives elsewhere */
        DS("big-rdm", 1200 * GIB, 600 * GIB),        /* only an RDM mapping file */
        DS("big-unknown-ds", 1200 * GIB, 600 * GIB), /* big disk with unknown datastore */
        DS("nfs-small", 200 * GIB, 100 * GIB),
        DS("type-unknown", 200 * GIB, 100 * GIB),
        DS("gone", 200 * GIB, 100 * GIB),
        DS("cap-unknown", EST_UNKNOWN, EST_UNKNOWN),
        DS("huge-with-bigdisk", 70 * TIB, 35 * TIB), /* the exemption is for the band only */
        DS("at-750-bigdisk", 1200 * GIB, 1),         /* a disk of exactly 750 GB: no exemption */
        DS("dec-500", 500000000000, 1),              /* "500 GB" in 10^9 bytes: 465.66 GB */
        DS("dec-750", 750000000000, 1),              /* 698.49 GB: inside */
        DS("two-400s", 1000 * GIB, 1),               /* one VM, two 400 GB disks: exempt */
        DS("one-400-a", 1000 * GIB, 1),              /* that VM's twin: 400 GB here... */
        DS("one-400-b", 1000 * GIB, 1),              /* ...and 400 GB there: not exempt */
        DS("local-boot", 120 * GIB, 60 * GIB),       /* vmfs.local: a host's boot disk */
        DS("local-unknown", 120 * GIB, 60 * GIB),    /* locality not reported: judged */
        DS("local-no", 120 * GIB, 60 * GIB),         /* shared (vmfs.local false) */
    };
    ds[23].vmfs_local = 1;
    ds[24].vmfs_local = EST_UNKNOWN;
    ds[25].vmfs_local = 0;
    ds[12].type = "NFS";
    ds[13].type = NULL;
    ds[14].accessible = 0;
    enum {
        EXEMPT = 8,
        OTHER = 9,
        RDM = 10,
        UNK = 11,
        HUGE_BIG = 16,
        AT750 = 17,
        SMALL = 5,
        TWO400 = 20,
        A400 = 21,
        B400 = 22
    };

    struct est_disk d_exempt[] = {VDISK(EXEMPT, 900 * GIB, "lazyzeroedthick")},
                    d_other[] = {VDISK(OTHER, 40 * GIB, "thin"), VDISK(SMALL, 900 * GIB, "thin")},
                    d_rdm[] = {VDISK(RDM, 40 * GIB, "thin"), VDISK(RDM, 2 * TIB, "rdm-physical")},
                    d_unk[] = {VDISK(EST_NONE, 900 * GIB, "thin")},
                    d_huge[] = {VDISK(HUGE_BIG, 10 * TIB, "thin")},
                    d_750[] = {VDISK(AT750, 750 * GIB, "thin")},
                    d_two[] = {VDISK(TWO400, 400 * GIB, NULL), VDISK(TWO400, 400 * GIB, NULL)},
                    d_apart[] = {VDISK(A400, 400 * GIB, NULL), VDISK(B400, 400 * GIB, NULL)};
    size_t l_exempt[] = {EXEMPT}, l_other[] = {OTHER, SMALL}, l_rdm[] = {RDM}, l_unk[] = {UNK},
           l_huge[] = {HUGE_BIG}, l_750[] = {AT750}, l_two[] = {TWO400}, l_apart[] = {A400, B400};
#define VM(m, nm, dsk, where)                                                                      \
    {                                                                                              \
        .moref = m, .name = nm, .datastores = where, .n_datastores = N(where), .disks = dsk,       \
        .n_disks = N(dsk), .host = EST_NONE                                                        \
    }
    struct est_vm vms[] = {
        VM("vm-1", "vm-bigdisk", d_exempt, l_exempt), VM("vm-2", "vm-split", d_other, l_other),
        VM("vm-3", "vm-rdm", d_rdm, l_rdm),           VM("vm-4", "vm-unk", d_unk, l_unk),
        VM("vm-5", "vm-huge", d_huge, l_huge),        VM("vm-6", "vm-750", d_750, l_750),
        VM("vm-7", "vm-two-400", d_two, l_two),       VM("vm-8", "vm-400-apart", d_apart, l_apart),
    };
#undef VM
    struct estate e = {
        .vcenter = "vc", .datastores = ds, .n_datastores = N(ds), .vms = vms, .n_vms = N(vms)};
    static const struct tl_want_row want[] = { /* and the evidence's "level" */
        {"ok-600gib", NONE, NULL},
        {"at-500", NONE, NULL},
        {"under-500", SEV_WARNING, "below_band"},
        {"at-750", NONE, NULL},
        {"over-750", SEV_WARNING, "above_band"},
        {"small-200gib", SEV_WARNING, "below_band"},
        {"huge-70tib", SEV_CRITICAL, "above_maximum"},
        {"at-64tib", SEV_WARNING, "above_band"},
        {"exempt", NONE, NULL},
        {"big-other-ds", SEV_WARNING, "above_band"},
        {"big-rdm", SEV_WARNING, "above_band"},
        {"big-unknown-ds", NONE, NULL},
        {"nfs-small", NONE, NULL},
        {"type-unknown", NONE, NULL},
        {"gone", NONE, NULL},
        {"cap-unknown", NONE, NULL},
        {"huge-with-bigdisk", SEV_CRITICAL, "above_maximum"},
        {"at-750-bigdisk", SEV_WARNING, "above_band"},
        {"dec-500", SEV_WARNING, "below_band"},
        {"dec-750", NONE, NULL},
        {"two-400s", NONE, NULL},
        {"one-400-a", SEV_WARNING, "above_band"},
        {"one-400-b", SEV_WARNING, "above_band"},
        {"local-boot", NONE, NULL},
        {"local-unknown", SEV_WARNING, "below_band"},
        {"local-no", SEV_WARNING, "below_band"},
    };
    struct chk_results r = tl_run(&chk_datastore_size, NULL, &e, NOW);
    tl_want_table(&r, want, N(want), "datastore", "level");

    const struct chk_finding *f = tl_find(&r, "small-200gib", NULL);
    assert_int_equal((int64_t)tl_ev_num(f, "capacity_bytes"), 200 * GIB);
    assert_true(tl_ev_num(f, "min_gb") == 500 && tl_ev_num(f, "max_gb") == 750);
    assert_non_null(strstr(f->message, "is 200 GB,")); /* as vSphere prints it */
    /* The small datastore also holds vm-split's 900 GiB disk: reported, yet it stays flagged. */
    assert_int_equal((int64_t)tl_ev_num(f, "largest_vm_disks_bytes"), 900 * GIB);
    assert_string_equal(tl_ev_str(f, "largest_vm"), "vm-split");
    f = tl_find(&r, "one-400-a", NULL);
    assert_int_equal((int64_t)tl_ev_num(f, "largest_vm_disks_bytes"), 400 * GIB);
    assert_non_null(strstr(f->message, "is 1000 GB,"));
    f = tl_find(&r, "huge-70tib", NULL);
    assert_int_equal((int64_t)tl_ev_num(f, "capacity_bytes"), 70 * TIB);
    assert_true(tl_ev_num(f, "max_size_tib") == 64);
    chk_results_free(&r);

    /* Overrides: a 100-1300 GB band accepts the 200 GiB and the 1200 GiB (1288 GB) datastores. */
    struct chk_settings s = tl_with_param(&chk_datastore_size, "min_gb", 100);
    s.params[1] = 1300; /* max_gb */
    assert_string_equal(chk_datastore_size.params[1].name, "max_gb");
    r = tl_run(&chk_datastore_size, &s, &e, NOW);
    tl_want(&r, "small-200gib", NONE);
    tl_want(&r, "big-other-ds", NONE);
    tl_want(&r, "huge-70tib", SEV_CRITICAL);
    /* The configured band is the site's, never called the guide's: the message gives both. */
    f = tl_find(&r, "at-64tib", NULL);
    assert_non_null(f);
    assert_non_null(strstr(f->message, "above the 100-1300 GB band (the guide recommends "
                                       "500-750 GB; threshold 1300 GB)"));
    chk_results_free(&r);

    r = tl_run_with(&chk_datastore_size, "max_size_tib", 60, &e, NOW);
    f = tl_find(&r, "at-64tib", NULL);
    assert_int_equal(f->severity, SEV_CRITICAL);
    assert_non_null(
        strstr(f->message, "above 60 TB (VMware supports datastores of at most 64 TB)"));
    chk_results_free(&r);

    r = tl_run_with(&chk_datastore_size, "max_size_tib", 80, &e, NOW);
    tl_want(&r, "huge-70tib", SEV_WARNING);
    tl_want(&r, "huge-with-bigdisk", NONE); /* now only above the band, where the disk exempts */
    chk_results_free(&r);
}

/* ---- the LUNs a datastore finding names (chk_ev_extents) ---- */

TEST(test_extents_evidence)
{
    struct est_extent two[] = {{.disk_name = "naa.a", .partition = 1},
                               {.disk_name = "naa.b", .partition = 1}};
    struct est_extent dup[] = {{.disk_name = "naa.c", .partition = 1},
                               {.disk_name = "naa.c", .partition = 2}};
    struct est_extent nameless[] = {{.disk_name = NULL, .partition = 1},
                                    {.disk_name = "naa.d", .partition = 1}};
    struct est_extent one[] = {{.disk_name = "naa.e", .partition = 1}};
    /* All 1200 GiB (above the size band), 50 % free (below a 60 % warning), 50 % provisioned
     * (above a 10 % overcommit limit), VMFS5 (below vmfs-version's 6): every check fires. */
    struct est_datastore ds[] = {
        DS("span", 1200 * GIB, 600 * GIB),     DS("dup", 1200 * GIB, 600 * GIB),
        DS("nameless", 1200 * GIB, 600 * GIB), DS("one", 1200 * GIB, 600 * GIB),
        DS("unreported", 1200 * GIB, 600 * GIB), DS("nfs", 1200 * GIB, 600 * GIB),
    };
    struct est_extent *ext[] = {two, dup, nameless, one, NULL, NULL};
    size_t n_ext[] = {N(two), N(dup), N(nameless), N(one), 0, 0};
    for (size_t i = 0; i < N(ds); i++) {
        ds[i].vmfs_major = 5;
        ds[i].extents = ext[i];
        ds[i].n_extents = n_ext[i];
    }
    ds[5].type = "NFS";
    ds[5].vmfs_major = 0;
    /* One small VM lives on each (vms-per-datastore with max_vms 0). */
    struct est_vm vms[N(ds)];
    memset(vms, 0, sizeof(vms));
    for (size_t i = 0; i < N(ds); i++)
        vms[i] = (struct est_vm){.moref = "vm", .name = "vm", .power_state = "poweredOn",
                                 .host = EST_NONE, .config_datastore = i};
    struct estate e = {
        .vcenter = "vc", .datastores = ds, .n_datastores = N(ds), .vms = vms, .n_vms = N(vms)};
    /* "": a finding without "extents"; NULL: no finding at all. */
    static const struct {
        /* datastore-free-space, -size, thin-overcommit, vmfs-version, vms-per-datastore */
        const char *ds, *want[5];
    } rows[] = {
        {"span", {"naa.a,naa.b", "naa.a,naa.b", "naa.a,naa.b", "naa.a,naa.b", "naa.a,naa.b"}},
        {"dup", {"naa.c", "naa.c", "naa.c", "naa.c", "naa.c"}},
        {"nameless", {"naa.d", "naa.d", "naa.d", "naa.d", "naa.d"}},
        {"one", {"naa.e", "naa.e", "naa.e", "naa.e", "naa.e"}},
        {"unreported", {"", "", "", "", ""}},
        {"nfs", {"", NULL, "", NULL, ""}},
    };
    const struct check *checks[] = {&chk_datastore_free_space, &chk_datastore_size,
                                    &chk_thin_overcommit, &chk_vmfs_version,
                                    &chk_vms_per_datastore};
    struct chk_settings set[] = {
        tl_with_param(&chk_datastore_free_space, "warn_free_pct", 60),
        tl_with_param(&chk_datastore_size, "max_gb", 750),
        tl_with_param(&chk_thin_overcommit, "max_overcommit_pct", 10),
        tl_with_param(&chk_vmfs_version, "min_version", 6),
        tl_with_param(&chk_vms_per_datastore, "max_vms", 0),
    };

    for (size_t c = 0; c < N(checks); c++) {
        struct chk_results r = tl_run(checks[c], &set[c], &e, NOW);
        for (size_t i = 0; i < N(rows); i++) {
            const char *want = rows[i].want[c];
            const struct chk_finding *f = tl_find(&r, rows[i].ds, NULL);
            char got[128] = "";
            if (!want) {
                assert_null(f);
                continue;
            }
            assert_non_null(f);
            json_t *x = json_object_get(f->evidence, "extents");
            if (!*want) {
                assert_null(x);
                continue;
            }
            assert_true(json_is_array(x));
            for (size_t k = 0; k < json_array_size(x); k++) {
                size_t n = strlen(got);
                snprintf(got + n, sizeof(got) - n, "%s%s", k ? "," : "",
                         json_string_value(json_array_get(x, k)));
            }
            if (strcmp(got, want))
                fail_msg("%s on %s: extents %s, want %s", checks[c]->id, rows[i].ds, got, want);
        }
        chk_results_free(&r);
    }

    /* A datastore cluster has no LUN of its own: its free-space finding names none. */
    struct est_pod pod = {.moref = "pod-1", .name = "pod", .capacity = 100, .free_space = 1};
    struct estate ep = {.vcenter = "vc", .pods = &pod, .n_pods = 1};
    struct chk_results r = tl_run(&chk_datastore_free_space, NULL, &ep, NOW);
    assert_null(json_object_get(tl_find(&r, "pod", NULL)->evidence, "extents"));
    chk_results_free(&r);

    /* The helper takes no evidence as out of memory, and keeps what it is given. */
    assert_null(chk_ev_extents(NULL, &ds[0]));
    json_t *ev = chk_ev_extents(json_pack("{s:i}", "k", 1), &ds[4]);
    assert_int_equal(json_object_size(ev), 1);
    json_decref(ev);
}

/* ---- vms-per-datastore ---- */

TEST(test_vms_per_datastore)
{
    struct est_datastore ds[] = {
        DS("ds-26", 600 * GIB, 300 * GIB),         /* 26 powered-on VMs: warning */
        DS("ds-25-tmpl", 600 * GIB, 300 * GIB),    /* 25 VMs + 10 templates: silent */
        DS("ds-vsan", 600 * GIB, 300 * GIB),       /* 30 VMs, vSAN: skipped */
        DS("ds-2049-on", 600 * GIB, 300 * GIB),    /* 2049 powered on: critical */
        DS("ds-2049-mixed", 600 * GIB, 300 * GIB), /* 2048 on + 1 off: warning only */
        DS("ds-nfs-30", 600 * GIB, 300 * GIB),     /* NFS counts too */
        DS("ds-empty", 600 * GIB, 300 * GIB),
        DS("ds-nfs-2049-on", 600 * GIB, 300 * GIB), /* the 2048 maximum is VMFS's: warning */
    };
    ds[2].type = "vsan";
    ds[5].type = "NFS";
    ds[7].type = "NFS";
    /* (datastore, VMs, templates, powered on of the VMs) */
    static const struct {
        size_t ds;
        int vms, templates, on;
    } plan[] = {{0, 26, 0, 26},     {1, 25, 10, 25}, {2, 30, 0, 30},    {3, 2049, 0, 2049},
                {4, 2049, 0, 2048}, {5, 30, 0, 0},   {7, 2049, 0, 2049}};
    size_t total = 0;
    for (size_t i = 0; i < N(plan); i++)
        total += (size_t)(plan[i].vms + plan[i].templates);
    struct est_vm *vms = calloc(total, sizeof(*vms));
    size_t *lists = calloc(total * 2, sizeof(*lists));
    assert_non_null(vms);
    assert_non_null(lists);
    size_t n = 0;
    for (size_t i = 0; i < N(plan); i++) {
        for (int k = 0; k < plan[i].vms + plan[i].templates; k++, n++) {
            vms[n].moref = "vm";
            vms[n].name = "vm";
            vms[n].template = k >= plan[i].vms;
            vms[n].power_state = k < plan[i].on ? "poweredOn" : "poweredOff";
            vms[n].host = EST_NONE;
            /* Every VM lives on its datastore and lists it twice: it counts once. */
            lists[2 * n] = lists[2 * n + 1] = plan[i].ds;
            vms[n].datastores = &lists[2 * n];
            vms[n].n_datastores = 2;
            vms[n].config_datastore = plan[i].ds;
        }
    }
    struct estate e = {
        .vcenter = "vc", .datastores = ds, .n_datastores = N(ds), .vms = vms, .n_vms = n};

    struct chk_results r = tl_run(&chk_vms_per_datastore, NULL, &e, NOW);
    tl_want(&r, "ds-26", SEV_WARNING);
    tl_want(&r, "ds-25-tmpl", NONE);
    tl_want(&r, "ds-vsan", NONE);
    tl_want(&r, "ds-2049-on", SEV_CRITICAL);
    tl_want(&r, "ds-2049-mixed", SEV_WARNING);
    tl_want(&r, "ds-nfs-30", SEV_WARNING);
    tl_want(&r, "ds-empty", NONE);
    tl_want(&r, "ds-nfs-2049-on", SEV_WARNING);
    assert_int_equal(r.n, 5);
    const struct chk_finding *f = tl_find(&r, "ds-26", NULL);
    assert_int_equal((int)tl_ev_num(f, "vms"), 26);
    assert_int_equal((int)tl_ev_num(f, "powered_on"), 26);
    assert_int_equal((int)tl_ev_num(f, "max_vms"), 25);
    assert_non_null(strstr(f->message, "26 VMs"));
    f = tl_find(&r, "ds-2049-on", NULL);
    assert_int_equal((int)tl_ev_num(f, "powered_on"), 2049);
    assert_int_equal((int)tl_ev_num(f, "max_powered_on"), 2048);
    f = tl_find(&r, "ds-2049-mixed", NULL);
    assert_int_equal((int)tl_ev_num(f, "powered_on"), 2048);
    chk_results_free(&r);

    /* The templates of ds-25-tmpl are counted apart, never as VMs. */
    r = tl_run_with(&chk_vms_per_datastore, "max_vms", 24, &e, NOW);
    tl_want(&r, "ds-25-tmpl", SEV_WARNING);
    f = tl_find(&r, "ds-25-tmpl", NULL);
    assert_int_equal((int)tl_ev_num(f, "vms"), 25);
    assert_int_equal((int)tl_ev_num(f, "templates_excluded"), 10);
    chk_results_free(&r);

    r = tl_run_with(&chk_vms_per_datastore, "max_vms", 30, &e, NOW);
    tl_want(&r, "ds-26", NONE);
    tl_want(&r, "ds-nfs-30", NONE);
    chk_results_free(&r);

    free(vms);
    free(lists);
}

/* Where a VM counts: on the datastores of its configuration and of its virtual disks, once
 * each; not where it only has an ISO image (VirtualMachine.datastore) or an RDM's mapping file. */
TEST(test_vms_where_they_live)
{
    enum { A, B, C, ISO, D, E, F, NDS };
    struct est_datastore ds[] = {
        DS("ds-a", 600 * GIB, 300 * GIB),   DS("ds-b", 600 * GIB, 300 * GIB),
        DS("ds-c", 600 * GIB, 300 * GIB),   DS("ds-iso", 600 * GIB, 300 * GIB),
        DS("ds-d", 600 * GIB, 300 * GIB),   DS("ds-e", 600 * GIB, 300 * GIB),
        DS("ds-f", 600 * GIB, 300 * GIB),
    };
    assert_int_equal(N(ds), NDS);
    struct est_disk d_home[] = {VDISK(A, GIB, "thin")}, d_split[] = {VDISK(B, GIB, "thin")},
                    d_iso[] = {VDISK(C, GIB, "lazyzeroedthick")},
                    d_rdm[] = {VDISK(C, GIB, "thin"), VDISK(D, GIB, "rdm-physical")},
                    d_cfg_unknown[] = {VDISK(E, GIB, "thin")},
                    d_disk_unknown[] = {VDISK(EST_NONE, GIB, "thin")},
                    d_twice[] = {VDISK(A, GIB, "thin"), VDISK(A, GIB, "eagerzeroedthick")},
                    d_tmpl[] = {VDISK(A, GIB, "thin")}, d_off[] = {VDISK(B, GIB, "thin")};
    size_t l_iso[] = {C, ISO}, l_rdm[] = {C, D}, l_off[] = {B, ISO};
    static const struct {
        const char *name;
        size_t config;
        int template;
        const char *power;
    } vm_rows[] = {
        {"vm-home", A, 0, "poweredOn"},          /* A */
        {"vm-split", A, 0, "poweredOn"},         /* A (configuration), B (disk) */
        {"vm-iso", C, 0, "poweredOn"},           /* C; an ISO image on ds-iso */
        {"vm-rdm", C, 0, "poweredOn"},           /* C; an RDM mapping file on ds-d */
        {"vm-cfg-unknown", EST_NONE, 0, "poweredOn"}, /* E, by its disk */
        {"vm-disk-unknown", F, 0, "poweredOn"},  /* F, by its configuration */
        {"vm-twice", A, 0, "poweredOn"},         /* A, once */
        {"tmpl", A, 1, "poweredOff"},            /* a template on A: apart */
        {"vm-off", B, 0, "poweredOff"},          /* B, off; an ISO image on ds-iso */
    };
    struct est_disk *disks[] = {d_home, d_split,   d_iso,  d_rdm, d_cfg_unknown,
                                d_disk_unknown, d_twice, d_tmpl, d_off};
    size_t n_disks[] = {1, 1, 1, 2, 1, 1, 2, 1, 1};
    struct est_vm vms[N(vm_rows)];
    memset(vms, 0, sizeof(vms));
    for (size_t i = 0; i < N(vm_rows); i++) {
        vms[i] = (struct est_vm){.moref = vm_rows[i].name,
                                 .name = vm_rows[i].name,
                                 .template = vm_rows[i].template,
                                 .power_state = vm_rows[i].power,
                                 .host = EST_NONE,
                                 .config_datastore = vm_rows[i].config,
                                 .disks = disks[i],
                                 .n_disks = n_disks[i]};
    }
    vms[2].datastores = l_iso;
    vms[2].n_datastores = N(l_iso);
    vms[3].datastores = l_rdm;
    vms[3].n_datastores = N(l_rdm);
    vms[8].datastores = l_off;
    vms[8].n_datastores = N(l_off);
    struct estate e = {
        .vcenter = "vc", .datastores = ds, .n_datastores = N(ds), .vms = vms, .n_vms = N(vms)};
    /* With max_vms 0 every datastore a VM lives on is flagged, with its counts. */
    static const struct {
        const char *ds;
        int vms, on, templates, other; /* vms -1: no finding */
    } want[] = {
        {"ds-a", 3, 3, 1, 0},  /* vm-home, vm-split, vm-twice */
        {"ds-b", 2, 1, 0, 0},  /* vm-split (disk), vm-off */
        {"ds-c", 2, 2, 0, 0},  /* vm-iso, vm-rdm */
        {"ds-iso", -1, 0, 0, 0}, /* two VMs mount an ISO image from it: nobody lives there */
        {"ds-d", -1, 0, 0, 0},   /* only an RDM mapping file */
        {"ds-e", 1, 1, 0, 0},
        {"ds-f", 1, 1, 0, 0},
    };
    struct chk_results r = tl_run_with(&chk_vms_per_datastore, "max_vms", 0, &e, NOW);
    size_t flagged = 0;
    for (size_t i = 0; i < N(want); i++) {
        tl_want(&r, want[i].ds, want[i].vms < 0 ? NONE : SEV_WARNING);
        if (want[i].vms < 0)
            continue;
        flagged++;
        const struct chk_finding *f = tl_find(&r, want[i].ds, NULL);
        if (tl_ev_int(f, "vms") != want[i].vms || tl_ev_int(f, "powered_on") != want[i].on ||
            tl_ev_int(f, "templates_excluded") != want[i].templates ||
            tl_ev_int(f, "vms_with_other_files_only") != want[i].other)
            fail_msg("%s: vms %lld on %lld templates %lld other %lld", want[i].ds,
                     (long long)tl_ev_int(f, "vms"), (long long)tl_ev_int(f, "powered_on"),
                     (long long)tl_ev_int(f, "templates_excluded"),
                     (long long)tl_ev_int(f, "vms_with_other_files_only"));
    }
    assert_int_equal(r.n, flagged);
    chk_results_free(&r);

    /* The ISO datastore's evidence, when it is flagged for another reason, says who mounts it. */
    vms[2].config_datastore = ISO; /* vm-iso now lives there */
    r = tl_run_with(&chk_vms_per_datastore, "max_vms", 0, &e, NOW);
    const struct chk_finding *f = tl_find(&r, "ds-iso", NULL);
    assert_non_null(f);
    assert_int_equal(tl_ev_int(f, "vms"), 1);
    assert_int_equal(tl_ev_int(f, "vms_with_other_files_only"), 1); /* vm-off's ISO image */
    chk_results_free(&r);
}

/* ---- thin-overcommit ---- */

TEST(test_thin_overcommit)
{
    const int64_t c = 600 * GIB;
    struct est_datastore ds[] = {
        DS("over-167", c, c / 2),    DS("ok-67", c, c / 2),
        DS("at-150", c, c / 2),      DS("just-over-150", c, c / 2),
        DS("unc-unknown", c, c / 2), DS("gone", c, c / 2),
        DS("cap-zero", 0, 0),        DS("free-unknown", c, EST_UNKNOWN),
    };
    ds[0].uncommitted = 700 * GIB;
    ds[1].uncommitted = 100 * GIB;
    ds[2].uncommitted = c; /* (600 - 300 + 600) / 600 = 150 %: not above */
    ds[3].uncommitted = c + 1;
    ds[5].uncommitted = 10 * TIB;
    ds[5].accessible = 0;
    ds[7].uncommitted = 10 * TIB;
    struct estate e = {.vcenter = "vc", .datastores = ds, .n_datastores = N(ds)};

    struct chk_results r = tl_run(&chk_thin_overcommit, NULL, &e, NOW);
    tl_want(&r, "over-167", SEV_WARNING);
    tl_want(&r, "ok-67", NONE);
    tl_want(&r, "at-150", NONE);
    tl_want(&r, "just-over-150", SEV_WARNING);
    tl_want(&r, "unc-unknown", NONE);
    tl_want(&r, "gone", NONE);
    tl_want(&r, "cap-zero", NONE);
    tl_want(&r, "free-unknown", NONE);
    assert_int_equal(r.n, 2);
    const struct chk_finding *f = tl_find(&r, "over-167", NULL);
    assert_string_equal(f->object_type, "datastore");
    assert_true(fabs(tl_ev_num(f, "provisioned_pct") - 1000.0 / 6.0) < 1e-6);
    assert_int_equal((int64_t)tl_ev_num(f, "uncommitted_bytes"), 700 * GIB);
    assert_int_equal((int64_t)tl_ev_num(f, "capacity_bytes"), c);
    assert_int_equal((int64_t)tl_ev_num(f, "free_bytes"), c / 2);
    assert_true(tl_ev_num(f, "max_overcommit_pct") == 150);
    assert_true(tl_ev_bool(f, "uncommitted_reported"));
    chk_results_free(&r);

    /* Unknown uncommitted counts as 0 (vCenter omits a zero). */
    r = tl_run_with(&chk_thin_overcommit, "max_overcommit_pct", 40, &e, NOW);
    tl_want(&r, "unc-unknown", SEV_WARNING);
    f = tl_find(&r, "unc-unknown", NULL);
    assert_int_equal((int64_t)tl_ev_num(f, "uncommitted_bytes"), 0);
    assert_false(tl_ev_bool(f, "uncommitted_reported"));
    assert_true(fabs(tl_ev_num(f, "provisioned_pct") - 50.0) < 1e-9);
    tl_want(&r, "ok-67", SEV_WARNING);
    chk_results_free(&r);

    r = tl_run_with(&chk_thin_overcommit, "max_overcommit_pct", 170, &e, NOW);
    tl_want(&r, "over-167", NONE);
    chk_results_free(&r);
}

/* ---- snapshots ---- */

TEST(test_snapshots)
{
    struct est_snapshot s_old[] = {{"old-1", NOW - 10 * DAY, 1}};
    struct est_snapshot s_chain[] = {{"chain-1", NOW - DAY - 240, 1},
                                     {"chain-2", NOW - DAY - 180, 2},
                                     {"chain-3", NOW - DAY - 120, 3},
                                     {"chain-4", NOW - DAY - 60, 4}};
    struct est_snapshot s_both[] = {{"b-1", NOW - 9 * DAY, 1},
                                    {"b-2", NOW - 8 * DAY, 2},
                                    {"b-3", NOW - DAY, 3},
                                    {"b-4", NOW - DAY, 4}};
    struct est_snapshot s_ok[] = {{"ok-1", NOW - DAY, 1}};
    struct est_snapshot s_at7[] = {{"at-7", NOW - 7 * DAY, 1}};
    struct est_snapshot s_past7[] = {{"past-7", NOW - 7 * DAY - 1, 1}};
    struct est_snapshot s_depth3[] = {
        {"d-1", NOW - DAY, 1}, {"d-2", NOW - DAY, 2}, {"d-3", NOW - DAY, 3}};
    /* Two branches of depth 2 each: 4 snapshots, but no chain deeper than 3. */
    struct est_snapshot s_tree[] = {{"t-1", NOW - DAY, 1},
                                    {"t-2a", NOW - DAY, 2},
                                    {"t-2b", NOW - DAY, 2},
                                    {"t-3", NOW - DAY, 3}};
    struct est_snapshot s_unk[] = {{"u-1", EST_UNKNOWN, 1}};
    struct est_snapshot s_unk_deep[] = {{"ud-1", EST_UNKNOWN, 1},
                                        {"ud-2", EST_UNKNOWN, 2},
                                        {"ud-3", EST_UNKNOWN, 3},
                                        {"ud-4", EST_UNKNOWN, 4}};
#define VM(nm, snaps)                                                                              \
    {                                                                                              \
        .moref = "m-" nm, .name = nm, .power_state = "poweredOn", .host = EST_NONE,                \
        .snapshots = snaps, .n_snapshots = N(snaps)                                                \
    }
    struct est_vm vms[] = {
        VM("vm-snap-old", s_old),
        VM("vm-snap-chain", s_chain),
        VM("vm-both", s_both),
        VM("vm-snap-ok", s_ok),
        VM("vm-at-7", s_at7),
        VM("vm-past-7", s_past7),
        VM("vm-depth-3", s_depth3),
        VM("vm-tree", s_tree),
        VM("vm-unk", s_unk),
        VM("vm-unk-deep", s_unk_deep),
        {.moref = "m-none", .name = "vm-none", .host = EST_NONE},
    };
#undef VM
    struct estate e = {.vcenter = "vc", .vms = vms, .n_vms = N(vms)};
    static const struct {
        const char *name;
        int sev, old, deep;
    } want[] = {
        {"vm-snap-old", SEV_WARNING, 1, 0},
        {"vm-snap-chain", SEV_WARNING, 0, 1},
        {"vm-both", SEV_WARNING, 1, 1},
        {"vm-snap-ok", NONE, 0, 0},
        {"vm-at-7", NONE, 0, 0},
        {"vm-past-7", SEV_WARNING, 1, 0},
        {"vm-depth-3", NONE, 0, 0},
        {"vm-tree", NONE, 0, 0},
        {"vm-unk", NONE, 0, 0},
        {"vm-unk-deep", SEV_WARNING, 0, 1},
        {"vm-none", NONE, 0, 0},
    };
    struct chk_results r = tl_run(&chk_snapshots, NULL, &e, NOW);
    size_t flagged = 0;
    for (size_t i = 0; i < N(want); i++) {
        tl_want(&r, want[i].name, want[i].sev);
        if (want[i].sev == NONE)
            continue;
        flagged++;
        const struct chk_finding *f = tl_find(&r, want[i].name, NULL);
        assert_string_equal(f->object_type, "vm");
        assert_int_equal(tl_ev_bool(f, "too_old"), want[i].old);
        assert_int_equal(tl_ev_bool(f, "too_deep"), want[i].deep);
    }
    assert_int_equal(r.n, flagged);

    const struct chk_finding *f = tl_find(&r, "vm-snap-old", NULL);
    assert_string_equal(f->object_moref, "m-vm-snap-old");
    assert_true(json_is_integer(json_object_get(f->evidence, "oldest_age_days")));
    assert_true(tl_ev_num(f, "oldest_age_days") == 10);
    assert_string_equal(tl_ev_str(f, "oldest_name"), "old-1");
    assert_true(tl_ev_num(f, "max_age_days") == 7);
    assert_non_null(strstr(f->message, "(oldest \"old-1\", 10 days old)"));
    /* Its creation time, which does not move between runs, for whoever ages it exactly
     * (NOW - 10 days is 2023-11-04T22:13:20Z). */
    assert_string_equal(tl_ev_str(f, "oldest_created"), "2023-11-04T22:13:20Z");
    /* Flagged one second past 7 days: 7 whole days, but the message must not read as within
     * the limit ("older than 7 days ... 7 days old"), so it says more than the limit. */
    f = tl_find(&r, "vm-past-7", NULL);
    assert_true(tl_ev_num(f, "oldest_age_days") == 7);
    assert_true(tl_ev_bool(f, "too_old"));
    assert_non_null(strstr(f->message, "(oldest \"past-7\", more than 7 days old)"));

    f = tl_find(&r, "vm-snap-chain", NULL);
    assert_int_equal((int)tl_ev_num(f, "max_depth"), 4);
    assert_int_equal((int)tl_ev_num(f, "snapshots"), 4);
    assert_true(tl_ev_num(f, "max_chain_depth") == 3);

    f = tl_find(&r, "vm-both", NULL); /* one finding with both facts */
    assert_int_equal((int)tl_ev_num(f, "max_depth"), 4);
    assert_int_equal((int)tl_ev_num(f, "older_than_threshold"), 2);
    assert_int_equal(json_array_size(json_object_get(f->evidence, "old_snapshots")), 2);
    assert_true(tl_ev_num(f, "oldest_age_days") == 9);
    assert_non_null(strstr(f->message, "b-1"));
    assert_non_null(strstr(f->message, "4 deep"));

    f = tl_find(&r, "vm-unk-deep", NULL);
    assert_int_equal((int)tl_ev_num(f, "unknown_age"), 4);
    assert_true(json_is_null(json_object_get(f->evidence, "oldest_age_days")) ||
                !json_object_get(f->evidence, "oldest_age_days"));

    /* Evaluated again 23 hours later, an unchanged estate gives the same findings, message and
     * evidence alike: nothing to rewrite, nothing that differs between the two reports (vm-at-7
     * is flagged by then, its own finding). A day later the age moves on. */
    struct chk_results later = tl_run(&chk_snapshots, NULL, &e, NOW + 23 * 3600);
    assert_int_equal(later.n, r.n + 1);
    for (size_t i = 0; i < r.n; i++) {
        const struct chk_finding *a = &r.items[i], *b = tl_find(&later, a->object_name, NULL);
        assert_string_equal(b->message, a->message);
        assert_true(json_equal(b->evidence, a->evidence));
    }
    chk_results_free(&later);
    later = tl_run(&chk_snapshots, NULL, &e, NOW + DAY);
    assert_true(tl_ev_num(tl_find(&later, "vm-snap-old", NULL), "oldest_age_days") == 11);
    chk_results_free(&later);
    chk_results_free(&r);

    /* Half a day: every VM with an aged snapshot is flagged. */
    r = tl_run_with(&chk_snapshots, "max_age_days", 0.5, &e, NOW);
    tl_want(&r, "vm-snap-ok", SEV_WARNING);
    /* Ten days old against half a day: said in whole days, over the limit as they are. */
    assert_non_null(strstr(tl_find(&r, "vm-snap-old", NULL)->message,
                           "older than 0.5 days (oldest \"old-1\", 10 days old)"));
    tl_want(&r, "vm-tree", SEV_WARNING);
    tl_want(&r, "vm-unk", NONE);
    chk_results_free(&r);

    r = tl_run_with(&chk_snapshots, "max_chain_depth", 4, &e, NOW);
    tl_want(&r, "vm-snap-chain", NONE);
    tl_want(&r, "vm-unk-deep", NONE);
    tl_want(&r, "vm-both", SEV_WARNING);
    assert_false(tl_ev_bool(tl_find(&r, "vm-both", NULL), "too_deep"));
    chk_results_free(&r);
}

/* ---- pvscsi-controller ---- */

TEST(test_pvscsi)
{
    struct est_controller lsi[] = {{1000, "VirtualLsiLogicController", "noSharing"}};
    struct est_controller sas[] = {{1000, "VirtualLsiLogicSASController", "noSharing"}};
    struct est_controller pv[] = {{1000, "ParaVirtualSCSIController", "noSharing"}};
    struct est_controller mixed[] = {{1000, "ParaVirtualSCSIController", "noSharing"},
                                     {1001, "VirtualLsiLogicController", "noSharing"}};
    struct est_controller unk[] = {{1000, NULL, NULL}};
    struct est_controller nvme[] = {{1000, "VirtualNVMEController", NULL}};
    struct est_controller bus[] = {{1000, "VirtualBusLogicController", "noSharing"}};
#define DISK(cap, ctl)                                                                             \
    {                                                                                              \
        .key = 2000, .datastore = EST_NONE, .capacity_bytes = (cap), .format = "lazyzeroedthick",  \
        .controller = (ctl)                                                                        \
    }
    struct est_disk four0[] = {DISK(40 * GIB, 0), DISK(40 * GIB, 0), DISK(40 * GIB, 0),
                               DISK(40 * GIB, 0)};
    struct est_disk three0[] = {DISK(100 * GIB, 0), DISK(100 * GIB, 0), DISK(100 * GIB, 0)};
    struct est_disk big800[] = {DISK(800 * GIB, 0)};
    /* 750 GiB exactly is not more than 750 GiB; a byte more is. (750 GB, 10^9 bytes, would
     * have flagged both: sizes are GiB, as vSphere shows them.) */
    struct est_disk at750[] = {DISK(375 * GIB, 0), DISK(375 * GIB, 0)};
    struct est_disk over750[] = {DISK(375 * GIB, 0), DISK(375 * GIB + 1, 0)};
    /* Data disks on PVSCSI, the OS disk on LSI Logic: one light emulated disk. */
    struct est_disk four_mixed[] = {DISK(40 * GIB, 0), DISK(40 * GIB, 0), DISK(40 * GIB, 0),
                                    DISK(40 * GIB, 1)};
    /* Four disks on LSI Logic beside one on PVSCSI: heavy on the emulated ones alone. */
    struct est_disk five_mixed[] = {DISK(40 * GIB, 1), DISK(40 * GIB, 1), DISK(40 * GIB, 1),
                                    DISK(40 * GIB, 1), DISK(40 * GIB, 0)};
    struct est_disk four_none[] = {DISK(40 * GIB, EST_NONE), DISK(40 * GIB, EST_NONE),
                                   DISK(40 * GIB, EST_NONE), DISK(40 * GIB, EST_NONE)};
    struct est_disk big_unknown_cap[] = {DISK(EST_UNKNOWN, 0), DISK(800 * GIB, 0)};
    struct est_disk small_unknown_cap[] = {DISK(EST_UNKNOWN, 0), DISK(40 * GIB, 0)};
#undef DISK
#define VM(nm, ctl, dsk)                                                                           \
    {                                                                                              \
        .moref = "m-" nm, .name = nm, .power_state = "poweredOn", .host = EST_NONE,                \
        .controllers = ctl, .n_controllers = N(ctl), .disks = dsk, .n_disks = N(dsk)               \
    }
    struct est_vm vms[] = {
        VM("vm-many-disks-lsi", lsi, four0),
        VM("vm-many-disks-pvscsi", pv, four0),
        VM("vm-big-lsi", sas, big800),
        VM("vm-bigdisk", pv, big800),
        VM("vm-three-lsi", lsi, three0),
        VM("vm-at-750", lsi, at750),
        VM("vm-over-750", lsi, over750),
        VM("vm-mixed", mixed, four_mixed),
        VM("vm-ctl-unknown", pv, four_none),
        VM("vm-type-unknown", unk, four0),
        VM("tmpl-many-lsi", lsi, four0),
        VM("vm-cap-unknown", lsi, big_unknown_cap),
        VM("vm-small-cap-unknown", lsi, small_unknown_cap),
        VM("vm-nvme", nvme, four0),
        VM("vm-buslogic", bus, four0),
        VM("vm-mixed-heavy", mixed, five_mixed),
    };
#undef VM
    vms[10].template = 1;
    struct estate e = {.vcenter = "vc", .vms = vms, .n_vms = N(vms)};
    static const struct tl_want_row want[] = {
        {"vm-many-disks-lsi", SEV_INFO, NULL}, {"vm-many-disks-pvscsi", NONE, NULL},
        {"vm-big-lsi", SEV_INFO, NULL},        {"vm-bigdisk", NONE, NULL},
        {"vm-three-lsi", NONE, NULL},          {"vm-at-750", NONE, NULL},
        {"vm-over-750", SEV_INFO, NULL},       {"vm-mixed", NONE, NULL},
        {"vm-ctl-unknown", NONE, NULL},        {"vm-type-unknown", NONE, NULL},
        {"tmpl-many-lsi", NONE, NULL},         {"vm-cap-unknown", SEV_INFO, NULL},
        {"vm-small-cap-unknown", NONE, NULL},  {"vm-nvme", NONE, NULL},
        {"vm-buslogic", SEV_INFO, NULL},       {"vm-mixed-heavy", SEV_INFO, NULL},
    };
    struct chk_results r = tl_run(&chk_pvscsi_controller, NULL, &e, NOW);
    tl_want_table(&r, want, N(want), NULL, NULL);

    const struct chk_finding *f = tl_find(&r, "vm-many-disks-lsi", NULL);
    assert_string_equal(f->object_type, "vm");
    assert_int_equal((int)tl_ev_num(f, "disks"), 4);
    assert_int_equal((int)tl_ev_num(f, "emulated_controller_disks"), 4);
    assert_int_equal((int64_t)tl_ev_num(f, "emulated_disk_bytes"), 160 * GIB);
    assert_true(tl_ev_num(f, "emulated_disk_gib") == 160);
    json_t *types = json_object_get(f->evidence, "controller_types");
    assert_int_equal(json_array_size(types), 1);
    assert_string_equal(json_string_value(json_array_get(types, 0)), "VirtualLsiLogicController");
    assert_non_null(strstr(f->message, "VirtualLsiLogicController"));

    f = tl_find(&r, "vm-big-lsi", NULL);
    assert_int_equal((int64_t)tl_ev_num(f, "emulated_disk_bytes"), 800 * GIB);
    assert_non_null(strstr(f->message, "800.0 GiB"));
    assert_true(tl_ev_num(f, "max_disk_gb") == 750 && tl_ev_num(f, "max_disks") == 3);
    f = tl_find(&r, "vm-mixed-heavy", NULL);
    assert_int_equal((int)tl_ev_num(f, "disks"), 5);
    assert_int_equal((int)tl_ev_num(f, "emulated_controller_disks"), 4);
    assert_int_equal((int64_t)tl_ev_num(f, "emulated_disk_bytes"), 160 * GIB);
    f = tl_find(&r, "vm-cap-unknown", NULL);
    assert_int_equal((int)tl_ev_num(f, "unknown_capacity_disks"), 1);
    chk_results_free(&r);

    r = tl_run_with(&chk_pvscsi_controller, "max_disks", 4, &e, NOW);
    tl_want(&r, "vm-many-disks-lsi", NONE);
    tl_want(&r, "vm-mixed", NONE);
    tl_want(&r, "vm-big-lsi", SEV_INFO);
    chk_results_free(&r);

    r = tl_run_with(&chk_pvscsi_controller, "max_disk_gb", 200, &e, NOW);
    tl_want(&r, "vm-three-lsi", SEV_INFO); /* 300 GiB */
    tl_want(&r, "vm-mixed", NONE);         /* 40 GiB on LSI Logic */
    chk_results_free(&r);
}

/* ---- snapshots by design, and snapshot-consolidation ---- */

/* A small estate of delta disks: ds-low is under 30 % free, ds-ok above. */
struct delta_world {
    struct est_datastore ds[2];
    struct est_disk disks[11][1];
    struct est_snapshot snap[1];
    struct est_vm vms[11];
    struct estate e;
};

enum { DW_OK, DW_LOW };

static void delta_build(struct delta_world *w)
{
    static const struct {
        const char *vm, *file, *parent, *managed_by;
        int ds, consolidate, snapshots, template;
    } rows[] = {
        /* 0: the backup product's leftover: a delta and no snapshot. */
        {"vm-orphan", "[ds-ok] vm-orphan/vm-orphan-000001.vmdk", "[ds-ok] vm-orphan/vm-orphan.vmdk",
         NULL, DW_OK, 0, 0, 0},
        /* 1: the same on a datastore under the free-space thresholds. */
        {"vm-orphan-low", "[ds-low] vm-orphan-low/vm-orphan-low-000003.vmdk", NULL, NULL, DW_LOW,
         0, 0, 0},
        /* 2: vCenter says consolidation is needed. */
        {"vm-consolidate", "[ds-ok] vm-consolidate/vm-consolidate-000002.vmdk",
         "[ds-ok] vm-consolidate/vm-consolidate-000001.vmdk", NULL, DW_OK, 1, 1, 0},
        /* 3: the source of linked clones (4, 5): a snapshot on purpose, 10 days old. */
        {"vm-golden", "[ds-ok] vm-golden/vm-golden-000001.vmdk", "[ds-ok] vm-golden/vm-golden.vmdk",
         NULL, DW_OK, 0, 1, 0},
        /* 4, 5: linked clones: deltas of another VM's disk, no snapshot, by design. */
        {"vm-clone-1", "[ds-ok] vm-clone-1/vm-clone-1-000001.vmdk",
         "[ds-ok] vm-golden/vm-golden.vmdk", NULL, DW_OK, 0, 0, 0},
        {"vm-clone-2", "[ds-ok] vm-clone-2/vm-clone-2-000001.vmdk",
         "[ds-ok] vm-golden/vm-golden.vmdk", NULL, DW_OK, 0, 0, 0},
        /* 6: a replica of a replication product: restore points as snapshots and deltas. */
        {"vm-replica", "[ds-ok] vm-replica/vm-replica-000001.vmdk",
         "[ds-ok] vm-replica/vm-replica.vmdk", "com.vmware.vcDr", DW_OK, 0, 1, 0},
        /* 7: an ordinary base disk, and 8: a template on a delta (runs nothing). */
        {"vm-plain", "[ds-ok] vm-plain/vm-plain.vmdk", NULL, NULL, DW_OK, 0, 0, 0},
        {"tmpl-delta", "[ds-ok] tmpl-delta/tmpl-delta-000001.vmdk", NULL, NULL, DW_OK, 0, 0, 1},
        /* 9: a VM whose own name ends in six digits: its first disk is a base disk; 10: the
         * same name's orphaned delta is still one. */
        {"web-000001", "[ds-ok] web-000001/web-000001.vmdk", NULL, NULL, DW_OK, 0, 0, 0},
        {"app-000002", "[ds-ok] app-000002/app-000002-000001.vmdk", NULL, NULL, DW_OK, 0, 0, 0},
    };

    memset(w, 0, sizeof(*w));
    w->ds[DW_OK] = (struct est_datastore){.moref = "d1", .name = "ds-ok", .type = "VMFS",
                                          .capacity = 100 * GIB, .free_space = 50 * GIB,
                                          .accessible = 1, .pod = EST_NONE};
    w->ds[DW_LOW] = (struct est_datastore){.moref = "d2", .name = "ds-low", .type = "VMFS",
                                           .capacity = 100 * GIB, .free_space = 20 * GIB,
                                           .accessible = 1, .pod = EST_NONE};
    w->snap[0] = (struct est_snapshot){"base", NOW - 10 * DAY, 1};
    for (size_t i = 0; i < N(rows); i++) {
        w->disks[i][0] = (struct est_disk){.key = 2000,
                                           .label = "Hard disk 1",
                                           .file_name = rows[i].file,
                                           .parent = rows[i].parent,
                                           .datastore = (size_t)rows[i].ds,
                                           .capacity_bytes = 40 * GIB,
                                           .format = "thin",
                                           .controller = EST_NONE};
        w->vms[i] = (struct est_vm){.moref = rows[i].vm,
                                    .name = rows[i].vm,
                                    .template = rows[i].template,
                                    .power_state = "poweredOn",
                                    .host = EST_NONE,
                                    .disks = w->disks[i],
                                    .n_disks = 1,
                                    .snapshots = rows[i].snapshots ? w->snap : NULL,
                                    .n_snapshots = (size_t)rows[i].snapshots,
                                    .consolidation_needed = rows[i].consolidate,
                                    .managed_by = rows[i].managed_by};
    }
    w->e = (struct estate){.vcenter = "vc", .datastores = w->ds, .n_datastores = 2,
                           .vms = w->vms, .n_vms = N(rows)};
}

TEST(test_snapshot_consolidation)
{
    static struct delta_world w;
    static const struct tl_want_row want[] = {
        {"vm-orphan", SEV_WARNING, NULL},    {"vm-orphan-low", SEV_CRITICAL, NULL},
        {"vm-consolidate", SEV_WARNING, NULL}, {"vm-golden", NONE, NULL},
        {"vm-clone-1", NONE, NULL},          {"vm-clone-2", NONE, NULL},
        {"vm-replica", NONE, NULL},          {"vm-plain", NONE, NULL},
        {"tmpl-delta", NONE, NULL},          {"web-000001", NONE, NULL},
        {"app-000002", SEV_WARNING, NULL},
    };

    delta_build(&w);
    struct chk_results r = tl_run(&chk_snapshot_consolidation, NULL, &w.e, NOW);
    tl_want_table(&r, want, N(want), NULL, NULL);
    const struct chk_finding *f = tl_find(&r, "vm-orphan", NULL);
    assert_int_equal((int)tl_ev_num(f, "orphaned_deltas"), 1);
    assert_false(tl_ev_bool(f, "consolidation_needed"));
    assert_non_null(strstr(f->message, "no snapshot"));
    f = tl_find(&r, "vm-orphan-low", NULL);
    assert_string_equal(tl_ev_str(f, "low_datastore"), "ds-low");
    assert_non_null(strstr(f->message, "ds-low"));
    f = tl_find(&r, "vm-consolidate", NULL);
    assert_true(tl_ev_bool(f, "consolidation_needed"));
    assert_non_null(strstr(f->message, "Consolidate"));
    chk_results_free(&r);

    /* The source of linked clones needing consolidation is reported, but never told to
     * consolidate: the clones are named. */
    w.vms[3].consolidation_needed = 1;
    r = tl_run(&chk_snapshot_consolidation, NULL, &w.e, NOW);
    f = tl_find(&r, "vm-golden", NULL);
    assert_non_null(f);
    assert_non_null(strstr(f->message, "do not consolidate"));
    assert_int_equal(json_array_size(json_object_get(f->evidence, "linked_clones")), 2);
    chk_results_free(&r);

    /* A lower warn_free_pct: ds-low (20 %) is no longer under it. */
    w.vms[3].consolidation_needed = 0;
    r = tl_run_with(&chk_snapshot_consolidation, "warn_free_pct", 15, &w.e, NOW);
    tl_want(&r, "vm-orphan-low", SEV_WARNING);
    chk_results_free(&r);
}

TEST(test_snapshots_by_design)
{
    static struct delta_world w;

    delta_build(&w);
    struct chk_results r = tl_run(&chk_snapshots, NULL, &w.e, NOW);
    /* Aged 10 days all three; the replica is the product's, the golden image's clones depend on
     * its snapshot: info, and told to keep it. */
    tl_want(&r, "vm-consolidate", SEV_WARNING);
    tl_want(&r, "vm-replica", NONE);
    const struct chk_finding *f = tl_find(&r, "vm-golden", NULL);
    assert_non_null(f);
    assert_int_equal(f->severity, SEV_INFO);
    assert_non_null(strstr(f->message, "do not delete or consolidate"));
    assert_null(strstr(f->message, "delete or consolidate snapshots"));
    json_t *clones = json_object_get(f->evidence, "linked_clones");
    assert_int_equal(json_array_size(clones), 2);
    assert_string_equal(json_string_value(json_array_get(clones, 0)), "vm-clone-1");
    f = tl_find(&r, "vm-consolidate", NULL);
    assert_int_equal(json_array_size(json_object_get(f->evidence, "linked_clones")), 0);
    chk_results_free(&r);
}

int main(void)
{
    return tl_main();
}
