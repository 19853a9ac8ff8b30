/* Unit tests of the what-if gate (checks/whatif.c) on small estates built by hand: each rule
 * crossed and not, the figures before and after, the datastore cluster placed on its member
 * with the most free space, a dead path behind the datastore, waivers, stale snapshots, names,
 * placement ranked by headroom, the proposal's JSON, and the snapshot left as it was. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks/whatif.h"
#include "testlib.h"
#include "util/err.h"

#define GIB ((int64_t)1 << 30)
#define CAP (600 * GIB)
#define NOW ((int64_t)1700000000)

#define DS(nm, fr_pct)                                                                             \
    {                                                                                              \
        .moref = "m-" nm, .name = nm, .type = "VMFS", .capacity = CAP,                             \
        .free_space = CAP / 100 * (fr_pct), .uncommitted = EST_UNKNOWN, .accessible = 1,           \
        .vmfs_major = 6, .pod = EST_NONE                                                           \
    }

/* ds-free 32 %, ds-vms 60 % with 25 VMs, ds-thin 50 % at 149 % provisioned, ds-pod-a 22 % and
 * ds-pod-b 40 % in pod-x (31 % free), ds-dead 60 % on a LUN with a dead path, ds-gone
 * inaccessible. */
enum { FREE, VMS, THIN, POD_A, POD_B, DEAD, GONE, N_DS };

static struct est_datastore ds[N_DS] = {
    DS("ds-free", 32), DS("ds-vms", 60),   DS("ds-thin", 50), DS("ds-pod-a", 22),
    DS("ds-pod-b", 40), DS("ds-dead", 60), DS("ds-gone", 70),
};
static struct est_pod pods[] = {
    {.moref = "p1", .name = "pod-x", .capacity = 2 * CAP, .free_space = CAP / 100 * 62}};
static struct est_path paths[] = {TL_PATH("vmhba2", TL_FC2, 0, "active"),
                                  TL_PATH("vmhba3", TL_FC3, 0, "dead")};
static struct est_lun luns[] = {{.canonical_name = "naa.6006016000000000000000000000dead",
                                 .vendor = "DGC",
                                 .local = 0,
                                 .psp = "VMW_PSP_RR",
                                 .satp = "VMW_SATP_ALUA",
                                 .iops_limit = 1,
                                 .multipath_plugin = "NMP",
                                 .paths = paths,
                                 .n_paths = 2}};
static struct est_host hosts[] = {{.moref = "host-1",
                                   .name = "esx-1",
                                   .parent = "domain-c1",
                                   .connection_state = "connected",
                                   .enable_block_delete = 1,
                                   .hbas = tl_hbas,
                                   .n_hbas = TL_N_HBAS,
                                   .luns = luns,
                                   .n_luns = 1}};
static struct est_lun_ref dead_ref = {0, 0};
static struct est_extent dead_extent = {
    .disk_name = "naa.6006016000000000000000000000dead", .partition = 1, .luns = &dead_ref,
    .n_luns = 1};
static struct est_vm vms[25];
static struct est_disk vm_disks[25];
static struct est_entity entities[] = {
    {.moref = "domain-c1", .type = "ClusterComputeResource", .name = "cl-1"}};
static struct estate est = {.vcenter = "vc",
                            .polled_ms = (NOW - 60) * 1000,
                            .datastores = ds,
                            .n_datastores = N_DS,
                            .pods = pods,
                            .n_pods = 1,
                            .hosts = hosts,
                            .n_hosts = 1,
                            .vms = vms,
                            .n_vms = 25,
                            .entities = entities,
                            .n_entities = 1};
static struct est_mount mounts[N_DS];

static int setup(void **state)
{
    (void)state;
    ds[THIN].uncommitted = 594 * GIB; /* 300 used + 594 = 894 of 600: 149 % */
    ds[POD_A].pod = ds[POD_B].pod = 0;
    ds[DEAD].extents = &dead_extent;
    ds[DEAD].n_extents = 1;
    ds[GONE].accessible = 0;
    for (size_t i = 0; i < N_DS; i++) {
        mounts[i] = (struct est_mount){.host = 0, .mounted = 1, .accessible = 1};
        ds[i].mounts = &mounts[i];
        ds[i].n_mounts = 1;
    }
    for (size_t i = 0; i < 25; i++) {
        vm_disks[i] = (struct est_disk){.key = 2000, .datastore = VMS, .capacity_bytes = GIB,
                                        .format = "thin", .controller = EST_NONE};
        vms[i] = (struct est_vm){.moref = "vm", .name = "vm", .power_state = "poweredOn",
                                 .ft_state = "notConfigured", .host = 0,
                                 .config_datastore = VMS, .disks = &vm_disks[i], .n_disks = 1};
    }
    return 0;
}

static struct chk_proposal proposal(const char *target, int pod, const char *disks,
                                    enum chk_disk_format f)
{
    struct chk_proposal p;
    char err[256];

    chk_proposal_init(&p);
    if (pod)
        p.datastore_cluster = target;
    else
        p.datastore = target;
    assert_int_equal(chk_proposal_disks(&p, disks, err, sizeof(err)), 0);
    p.format = f;
    return p;
}

/* chk_gate over est alone with cfg (NULL: defaults); the answer. */
static json_t *ask(const struct chk_config *cfg, const struct chk_proposal *p)
{
    struct chk_config dflt;
    struct chk_site site = {.estate = &est, .max_age_s = 600};
    json_t *ans = NULL;
    char err[512] = "";

    assert_int_equal(chk_config_init(&dflt), 0);
    int rc = chk_gate(cfg ? cfg : &dflt, &site, 1, p, NOW, &ans, err, sizeof(err));
    if (rc < 0)
        fail_msg("chk_gate: %s", err);
    /* The same with the run over the snapshot, its LUN index and the VMs by datastore made
     * once beforehand, as the daemon shares them between requests (api/estates.c): the same
     * answer. */
    struct chk_results base = {0};
    struct chk_lun_index *index = NULL;
    struct chk_ds_vms *ds_vms = NULL;
    json_t *shared = NULL;
    assert_int_equal(chk_run_all(cfg ? cfg : &dflt, &est, NOW, &base, err, sizeof(err)), 0);
    chk_site_base_trim(&base);
    assert_int_equal(chk_lun_index_make(&est, &base, &index), 0);
    assert_int_equal(chk_ds_vms_make(&est, &ds_vms), 0);
    site.base = &base;
    site.base_luns = index;
    site.ds_vms = ds_vms;
    if (chk_gate(cfg ? cfg : &dflt, &site, 1, p, NOW, &shared, err, sizeof(err)) < 0)
        fail_msg("chk_gate with a shared base: %s", err);
    assert_true(json_equal(ans, shared));
    json_decref(shared);
    chk_lun_index_free(index);
    chk_ds_vms_free(ds_vms);
    chk_results_free(&base);
    chk_config_free(&dflt);
    return ans;
}

/* "check or code:object" of each reason, joined by spaces. */
static const char *why(const json_t *ans, char *buf, size_t size)
{
    size_t i;
    const json_t *r;

    buf[0] = '\0';
    json_array_foreach(json_object_get(ans, "reasons"), i, r) {
        const char *c = json_string_value(json_object_get(r, "check"));
        size_t used = strlen(buf);
        snprintf(buf + used, size - used, "%s%s:%s", used ? " " : "",
                 c ? c : json_string_value(json_object_get(r, "code")),
                 json_string_value(json_object_get(r, "object")));
    }
    return buf;
}

static int64_t fig(const json_t *ans, const char *when, const char *key)
{
    return json_integer_value(json_object_get(json_object_get(ans, when), key));
}

TEST(test_each_rule_crossed_and_not)
{
    static const struct {
        const char *target;
        int pod;
        const char *disks;
        enum chk_disk_format f;
        int vms;
        const char *want; /* "" allowed */
    } rows[] = {
        {"ds-free", 0, "12", CHK_DISK_LAZY, 1, ""}, /* exactly 30 % left */
        {"ds-free", 0, "12.5", CHK_DISK_EAGER, 1, "datastore-free-space:ds-free"},
        {"ds-free", 0, "200", CHK_DISK_THIN, 1, ""},
        {"ds-free", 0, "100", CHK_DISK_LAZY, 2,
         "no_space:ds-free datastore-free-space:ds-free"},
        {"ds-vms", 0, "1", CHK_DISK_THIN, 1, "vms-per-datastore:ds-vms"}, /* 26 */
        {"ds-thin", 0, "3", CHK_DISK_THIN, 1, ""},                        /* 149.5 % */
        {"ds-thin", 0, "6", CHK_DISK_THIN, 1, ""},                        /* 150 % */
        {"ds-thin", 0, "7", CHK_DISK_THIN, 1, "thin-overcommit:ds-thin"},
        {"pod-x", 1, "6", CHK_DISK_LAZY, 1, ""}, /* pod: 372 - 6 of 1200 = 30.5 % */
        {"pod-x", 1, "24", CHK_DISK_LAZY, 1, "datastore-free-space:pod-x"},
        {"ds-dead", 0, "1", CHK_DISK_LAZY, 1,
         "multipath-redundancy:naa.6006016000000000000000000000dead"},
        {"ds-gone", 0, "1", CHK_DISK_LAZY, 1, "inaccessible:ds-gone"},
    };
    char buf[512];

    for (size_t i = 0; i < N(rows); i++) {
        struct chk_proposal p = proposal(rows[i].target, rows[i].pod, rows[i].disks, rows[i].f);
        p.vms = rows[i].vms;
        json_t *ans = ask(NULL, &p);
        if (strcmp(why(ans, buf, sizeof(buf)), rows[i].want))
            fail_msg("row %zu (%s %s): reasons '%s', want '%s'", i, rows[i].target,
                     rows[i].disks, buf, rows[i].want);
        assert_int_equal(json_is_true(json_object_get(ans, "allowed")), rows[i].want[0] == '\0');
        json_decref(ans);
    }
}

TEST(test_figures_and_the_snapshot_left_alone)
{
    struct chk_proposal p = proposal("ds-free", 0, "10,8", CHK_DISK_LAZY);
    int64_t free_before = ds[FREE].free_space;
    p.vms = 2;
    json_t *ans = ask(NULL, &p);

    assert_int_equal(fig(ans, "before", "free_bytes"), free_before);
    assert_int_equal(fig(ans, "after", "free_bytes"), free_before - 36 * GIB);
    assert_int_equal(fig(ans, "before", "vms"), 0);
    assert_int_equal(fig(ans, "after", "vms"), 2);
    /* The overlay changed nothing of the snapshot it was built on. */
    assert_int_equal(ds[FREE].free_space, free_before);
    assert_int_equal(est.n_vms, 25);
    assert_ptr_equal(est.datastores, ds);
    json_decref(ans);

    p = proposal("ds-thin", 0, "2", CHK_DISK_THIN);
    ans = ask(NULL, &p);
    assert_int_equal(fig(ans, "after", "uncommitted_bytes"), 596 * GIB);
    assert_int_equal(fig(ans, "after", "free_bytes"), fig(ans, "before", "free_bytes"));
    json_decref(ans);
}

/* A VM on ds-vms with a second disk on ds-free is on both: the judge of either holds the
 * other datastore too, renumbered, and counts the VM on its target alone. */
TEST(test_a_vm_on_two_datastores_counts_on_each)
{
    struct est_disk two[2] = {vm_disks[0], vm_disks[0]};
    struct est_disk *was = vms[0].disks;
    char buf[512];

    two[1].key = 2001;
    two[1].datastore = FREE;
    vms[0].disks = two;
    vms[0].n_disks = 2;
    struct chk_proposal p = proposal("ds-free", 0, "1", CHK_DISK_THIN);
    json_t *ans = ask(NULL, &p);
    assert_int_equal(fig(ans, "before", "vms"), 1);
    assert_int_equal(fig(ans, "after", "vms"), 2);
    assert_string_equal(why(ans, buf, sizeof(buf)), "");
    json_decref(ans);
    p = proposal("ds-vms", 0, "1", CHK_DISK_THIN);
    ans = ask(NULL, &p);
    assert_int_equal(fig(ans, "before", "vms"), 25);
    assert_int_equal(fig(ans, "after", "vms"), 26);
    assert_string_equal(why(ans, buf, sizeof(buf)), "vms-per-datastore:ds-vms");
    json_decref(ans);
    vms[0].disks = was;
    vms[0].n_disks = 1;
}

TEST(test_pod_goes_to_the_member_with_most_free_space)
{
    struct chk_proposal p = proposal("pod-x", 1, "6", CHK_DISK_LAZY);
    json_t *ans = ask(NULL, &p);
    const json_t *pod = json_object_get(json_object_get(ans, "after"), "datastore_cluster");

    assert_string_equal(json_string_value(json_object_get(ans, "placed_on")), "ds-pod-b");
    assert_int_equal(json_integer_value(json_object_get(pod, "free_bytes")),
                     CAP / 100 * 62 - 6 * GIB);
    json_decref(ans);
}

TEST(test_ft_and_shared_bus_need_eager_disks)
{
    for (int eager = 0; eager < 2; eager++) {
        for (int kind = 0; kind < 2; kind++) {
            struct chk_proposal p =
                proposal("ds-free", 0, "1", eager ? CHK_DISK_EAGER : CHK_DISK_THIN);
            char buf[256];
            p.ft = kind == 0;
            p.shared_bus = kind == 1;
            json_t *ans = ask(NULL, &p);
            /* A shared bus needs eager disks (critical); FT since ESXi 6.5 does not, and the
             * proposed VM has no host yet, so FT on thin disks is info: allowed at the default
             * fail_on (warning), denied where the pipeline fails on info. */
            assert_string_equal(why(ans, buf, sizeof(buf)),
                                eager || kind == 0 ? "" : "vdisk-format:proposed VM");
            json_decref(ans);
            p.fail_on = SEV_INFO;
            ans = ask(NULL, &p);
            assert_string_equal(why(ans, buf, sizeof(buf)), eager ? "" : "vdisk-format:proposed VM");
            json_decref(ans);
        }
    }
}

static void add_waiver(struct chk_config *cfg, const char *check, const char *object,
                       int64_t expires)
{
    cfg->waivers = realloc(cfg->waivers, (cfg->n_waivers + 1) * sizeof(*cfg->waivers));
    assert_non_null(cfg->waivers);
    cfg->waivers[cfg->n_waivers++] =
        (struct chk_waiver){.check = strdup(check), .object = strdup(object),
                            .reason = strdup("planned"), .expires_text = strdup("2099-12-31"),
                            .expires = expires};
}

TEST(test_waivers_and_thresholds_in_force)
{
    struct chk_config cfg, copy;
    struct chk_proposal p = proposal("ds-free", 0, "18", CHK_DISK_LAZY);
    char buf[256];

    assert_int_equal(chk_config_init(&cfg), 0);
    add_waiver(&cfg, "datastore-free-space", "ds-f*", NOW + 86400);
    add_waiver(&cfg, "multipath-redundancy", "esx-1 naa.*", NOW - 1); /* expired */
    /* What the daemon hands a request: a copy that outlives a reload. */
    assert_int_equal(chk_config_copy(&copy, &cfg), 0);
    chk_config_free(&cfg);
    json_t *ans = ask(&copy, &p);
    assert_string_equal(why(ans, buf, sizeof(buf)), "");
    assert_int_equal(json_array_size(json_object_get(ans, "waived")), 1);
    json_decref(ans);
    p = proposal("ds-dead", 0, "1", CHK_DISK_LAZY);
    ans = ask(&copy, &p);
    assert_false(json_is_true(json_object_get(ans, "allowed")));
    json_decref(ans);

    /* warn_free_pct 20: 29 % free is fine, and headroom is measured to 20. */
    const struct chk_settings *s = chk_config_settings(&copy, "datastore-free-space");
    assert_non_null(s);
    ((struct chk_settings *)s)->params[0] = 20;
    p = proposal("ds-free", 0, "18", CHK_DISK_LAZY);
    copy.n_waivers = 0; /* the waivers stay owned by copy: freed below */
    ans = ask(&copy, &p);
    assert_true(json_is_true(json_object_get(ans, "allowed")));
    assert_float_equal(json_number_value(json_object_get(ans, "headroom")), 100.0 * 9 / 80, 0.01);
    json_decref(ans);
    copy.n_waivers = 2;
    chk_config_free(&copy);
}

TEST(test_stale_snapshot)
{
    struct chk_proposal p = proposal("ds-free", 0, "1", CHK_DISK_LAZY);
    char buf[256];
    int64_t polled = est.polled_ms;

    est.polled_ms = (NOW - 601) * 1000;
    json_t *ans = ask(NULL, &p);
    assert_string_equal(why(ans, buf, sizeof(buf)), "stale_snapshot:vc");
    assert_int_equal(json_integer_value(json_object_get(ans, "snapshot_age_s")), 601);
    json_decref(ans);
    p.allow_stale = 1;
    ans = ask(NULL, &p);
    assert_string_equal(why(ans, buf, sizeof(buf)), "");
    json_decref(ans);
    p.allow_stale = 0;
    p.max_age_s = 3600;
    ans = ask(NULL, &p);
    assert_string_equal(why(ans, buf, sizeof(buf)), "");
    json_decref(ans);
    est.polled_ms = polled;
}

TEST(test_unknown_and_repeated_names)
{
    struct chk_config cfg;
    struct chk_site sites[] = {{.estate = &est, .max_age_s = 600},
                               {.estate = &est, .max_age_s = 600}};
    struct chk_proposal p = proposal("ds-nope", 0, "1", CHK_DISK_LAZY);
    json_t *ans = NULL;
    char err[512] = "";

    assert_int_equal(chk_config_init(&cfg), 0);
    assert_int_equal(chk_gate(&cfg, sites, 1, &p, NOW, &ans, err, sizeof(err)), -VSL_ENOTFOUND);
    assert_string_equal(err, "no datastore named ds-nope");
    assert_null(ans);
    p = proposal("ds-free", 0, "1", CHK_DISK_LAZY);
    assert_int_equal(chk_gate(&cfg, sites, 2, &p, NOW, &ans, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "2 datastores are named ds-free (on vCenter vc, vc)"));
    p.vcenter = "other";
    assert_int_equal(chk_gate(&cfg, sites, 1, &p, NOW, &ans, err, sizeof(err)), -VSL_ENOTFOUND);
    chk_config_free(&cfg);
}

TEST(test_placement_ranked_by_headroom)
{
    struct chk_config cfg;
    struct chk_site site = {.estate = &est, .max_age_s = 600};
    struct chk_proposal p = proposal(NULL, 0, "6", CHK_DISK_LAZY);
    json_t *ans = NULL, *c;
    char err[512] = "", got[512] = "";
    size_t i;

    p.datastore = NULL;
    assert_int_equal(chk_config_init(&cfg), 0);
    assert_int_equal(chk_placement(&cfg, &site, 1, &p, "cl-1", 10, SIZE_MAX, NOW, &ans, err,
                                   sizeof(err)),
                     0);
    json_array_foreach(json_object_get(ans, "candidates"), i, c) {
        size_t used = strlen(got);
        snprintf(got + used, sizeof(got) - used, "%s%s", used ? " " : "",
                 json_string_value(json_object_get(c, "datastore")));
    }
    /* ds-free: (31 - 30) / 70 = 1.43; ds-pod-b: 39 %, but its pod 30.5 %: 0.71; ds-thin: 150 %
     * provisioned: 0. Rejected: ds-vms (26 VMs), ds-pod-a (21 %), ds-dead, ds-gone. */
    assert_string_equal(got, "ds-free ds-pod-b ds-thin");
    c = json_array_get(json_object_get(ans, "candidates"), 1);
    assert_float_equal(json_number_value(json_object_get(c, "headroom")),
                       100.0 * (30.5 - 30) / 70, 0.01);
    assert_string_equal(json_string_value(json_object_get(c, "limited_by")),
                        "datastore-free-space:warn_free_pct:datastore_cluster");
    assert_int_equal(json_array_size(json_object_get(ans, "rejected")), 4);
    json_decref(ans);
    assert_int_equal(chk_placement(&cfg, &site, 1, &p, "cl-nope", 10, SIZE_MAX, NOW, &ans, err,
                                   sizeof(err)),
                     -VSL_ENOTFOUND);
    chk_config_free(&cfg);
}

/* The rejected datastores beyond max_rejected are counted, not listed: at 24 GiB lazy every
 * datastore of the estate is rejected, ds-pod-a for its own free space and its cluster's (one
 * kind, counted once), ds-free and ds-pod-b for free space too. */
TEST(test_placement_rejected_bounded_and_counted)
{
    static const struct {
        size_t max;
        const char *listed;
        int truncated;
    } rows[] = {
        {SIZE_MAX, "ds-free ds-vms ds-thin ds-pod-a ds-pod-b ds-dead ds-gone", 0},
        {7, "ds-free ds-vms ds-thin ds-pod-a ds-pod-b ds-dead ds-gone", 0},
        {2, "ds-free ds-vms", 1},
        {0, "", 1},
    };
    struct chk_config cfg;
    struct chk_site site = {.estate = &est, .max_age_s = 600};
    struct chk_proposal p = proposal(NULL, 0, "24", CHK_DISK_LAZY);
    char err[512] = "", got[512];
    const json_t *x;
    size_t i;

    p.datastore = NULL;
    assert_int_equal(chk_config_init(&cfg), 0);
    for (size_t row = 0; row < N(rows); row++) {
        json_t *ans = NULL;
        assert_int_equal(chk_placement(&cfg, &site, 1, &p, NULL, 10, rows[row].max, NOW, &ans,
                                       err, sizeof(err)),
                         0);
        got[0] = '\0';
        json_array_foreach(json_object_get(ans, "rejected"), i, x) {
            size_t used = strlen(got);
            snprintf(got + used, sizeof(got) - used, "%s%s", used ? " " : "",
                     json_string_value(json_object_get(x, "datastore")));
        }
        assert_string_equal(got, rows[row].listed);
        assert_int_equal(json_integer_value(json_object_get(ans, "total_rejected")), 7);
        assert_int_equal(json_is_true(json_object_get(ans, "rejected_truncated")),
                         rows[row].truncated);
        assert_true(json_is_boolean(json_object_get(ans, "rejected_truncated")));
        assert_int_equal(json_integer_value(json_object_get(ans, "total_candidates")), 0);
        got[0] = '\0';
        json_array_foreach(json_object_get(ans, "rejected_by_reason"), i, x) {
            const char *check = json_string_value(json_object_get(x, "check"));
            size_t used = strlen(got);
            snprintf(got + used, sizeof(got) - used, "%s%s:%lld", used ? " " : "",
                     check ? check : json_string_value(json_object_get(x, "code")),
                     (long long)json_integer_value(json_object_get(x, "datastores")));
        }
        /* The most datastores first, then by code ("finding" before "inaccessible"), check. */
        assert_string_equal(got, "datastore-free-space:3 multipath-redundancy:1 "
                                 "thin-overcommit:1 vms-per-datastore:1 inaccessible:1");
        json_decref(ans);
    }
    chk_config_free(&cfg);
}

TEST(test_proposal_json)
{
    static const struct {
        const char *body, *err; /* err NULL: accepted */
    } rows[] = {
        {"{\"datastore\":\"a\",\"disks_gb\":[1,2.5],\"vms\":3,\"disk_format\":\"thin\"}", NULL},
        {"{\"datastore_cluster\":\"p\",\"disks_gb\":[1],\"ft\":true,\"fail_on\":\"critical\"}",
         NULL},
        {"[]", "the body must be a JSON object"},
        {"{\"disks_gb\":[1]}", "give exactly one"},
        {"{\"datastore\":\"a\"}", "disks_gb: required"},
        {"{\"datastore\":\"a\",\"disks_gb\":[]}", "disks_gb: required"},
        {"{\"datastore\":\"a\",\"disks_gb\":[\"1\"]}", "disks_gb: item 1 is not a number"},
        {"{\"datastore\":\"a\",\"disks_gb\":[-1]}", "disks_gb: '-1' is not a size"},
        {"{\"datastore\":\"a\",\"disks_gb\":[65537]}", "not a size in GiB"},
        {"{\"datastore\":\"a\",\"disks_gb\":[1],\"vms\":0}", "vms: must be"},
        {"{\"datastore\":\"a\",\"disks_gb\":[1],\"vms\":10001}", "vms: must be"},
        {"{\"datastore\":\"a\",\"disks_gb\":[1],\"disk_format\":\"x\"}", "disk_format: 'x'"},
        {"{\"datastore\":\"a\",\"disks_gb\":[1],\"fail_on\":\"never\"}", "fail_on: 'never'"},
        {"{\"datastore\":\"\",\"disks_gb\":[1]}", "datastore: must be a non-empty string"},
        {"{\"datastore\":\"a\",\"disks_gb\":[1],\"ft\":1}", "ft: must be true or false"},
        {"{\"datastore\":\"a\",\"disks_gb\":[1],\"ft\":true,\"shared_bus\":true}", "not both"},
        {"{\"datastore\":\"a\",\"disks_gb\":[1],\"max_age_s\":0}", "max_age_s"},
        {"{\"datastore\":\"a\",\"disks_gb\":[1],\"x\":0}", "x: unknown field"},
    };
    for (size_t i = 0; i < N(rows); i++) {
        struct chk_proposal p;
        char err[256] = "";
        json_t *body = json_loads(rows[i].body, 0, NULL);
        assert_non_null(body);
        int rc = chk_proposal_from_json(body, &p, err, sizeof(err));
        if (rows[i].err ? rc != -EINVAL || !strstr(err, rows[i].err) : rc != 0)
            fail_msg("row %zu: rc %d, '%s'", i, rc, err);
        if (rc == 0) {
            /* What --server sends is what the daemon reads back. */
            struct chk_proposal q;
            json_t *again = chk_proposal_json(&p);
            assert_int_equal(chk_proposal_from_json(again, &q, err, sizeof(err)), 0);
            assert_int_equal(q.vms, p.vms);
            assert_int_equal(q.n_disks, p.n_disks);
            assert_memory_equal(q.disk_bytes, p.disk_bytes, p.n_disks * sizeof(int64_t));
            assert_int_equal(q.format, p.format);
            assert_int_equal(q.fail_on, p.fail_on);
            assert_int_equal(q.ft, p.ft);
            json_decref(again);
        }
        json_decref(body);
    }
}

TEST(test_disk_lists)
{
    static const struct {
        const char *list;
        size_t n;
        int64_t first;
    } rows[] = {{"100", 1, 100 * GIB}, {"100,20", 2, 100 * GIB}, {"0.5", 1, GIB / 2},
                {"", 0, 0},            {"1,,2", 0, 0},           {"abc", 0, 0},
                {"1e400", 0, 0},       {"nan", 0, 0},            {"-3", 0, 0}};
    for (size_t i = 0; i < N(rows); i++) {
        struct chk_proposal p;
        char err[256];
        chk_proposal_init(&p);
        int rc = chk_proposal_disks(&p, rows[i].list, err, sizeof(err));
        if (rows[i].n == 0) {
            if (rc != -EINVAL)
                fail_msg("'%s' accepted", rows[i].list);
            continue;
        }
        assert_int_equal(rc, 0);
        assert_int_equal(p.n_disks, rows[i].n);
        assert_int_equal(p.disk_bytes[0], rows[i].first);
    }
}

/* Issue 14: a thick disk on a datastore whose LUN is thin in an array pool takes pool space
 * too. ds-free (32 % free) is behind pool-a, 1000 GiB with 303 free (30.3 %): 6 GiB lazy keeps
 * the datastore at 31 % but takes the pool under its 30 % line; thin takes nothing now; on a
 * thick LUN the pool is not touched. */
TEST(test_thick_disk_on_a_thin_lun_takes_pool_space)
{
    static struct est_pool pools[] = {{.array = "unity1", .array_type = "unity", .id = "pool_1",
                                       .name = "pool-a", .size_total = 1000 * GIB,
                                       .size_free = 303 * GIB, .size_used = 697 * GIB,
                                       .size_subscribed = EST_UNKNOWN,
                                       .snap_size_used = EST_UNKNOWN,
                                       .alert_threshold = 70, .health = 5, .n_luns = 1,
                                       .n_thin_luns = 1}};
    /* The pool backs ds-thin too: a judge of ds-free renumbers the datastores it holds, and
     * the message still names both. */
    static size_t pool_ix[] = {0}, pool_ds[] = {FREE, THIN};
    static int thin[] = {1};
    static const struct {
        enum chk_disk_format f;
        int thin_lun;
        const char *want;
    } rows[] = {
        {CHK_DISK_LAZY, 1, "pool-free-space:unity1/pool-a"},
        {CHK_DISK_EAGER, 1, "pool-free-space:unity1/pool-a"},
        {CHK_DISK_THIN, 1, ""},
        {CHK_DISK_LAZY, 0, ""},
    };
    char buf[512];

    (void)state;
    pools[0].datastores = pool_ds;
    pools[0].n_datastores = 2;
    est.pools = pools;
    est.n_pools = 1;
    ds[FREE].pools = pool_ix;
    ds[FREE].pool_thin = thin;
    ds[FREE].n_pools = 1;
    for (size_t i = 0; i < N(rows); i++) {
        struct chk_proposal p = proposal("ds-free", 0, "6", rows[i].f);
        thin[0] = rows[i].thin_lun;
        json_t *ans = ask(NULL, &p);
        if (strcmp(why(ans, buf, sizeof(buf)), rows[i].want))
            fail_msg("row %zu: reasons '%s', want '%s'", i, buf, rows[i].want);
        assert_int_equal(json_is_true(json_object_get(ans, "allowed")), rows[i].want[0] == '\0');
        const char *msg = json_string_value(
            json_object_get(json_array_get(json_object_get(ans, "reasons"), 0), "message"));
        if (rows[i].want[0] && !strstr(msg, "; it backs ds-free, ds-thin"))
            fail_msg("row %zu: message '%s' does not name both datastores", i, msg);
        json_decref(ans);
    }
    /* The snapshot's pool is left as it was. */
    assert_int_equal(pools[0].size_free, 303 * GIB);
    est.pools = NULL;
    est.n_pools = 0;
    ds[FREE].pools = NULL;
    ds[FREE].pool_thin = NULL;
    ds[FREE].n_pools = 0;
}

/* n datastores "ds-0".. (morefs "m-ds-0"..), each half full and behind the one pool at index 0
 * (thin), which backs them all: names and morefs are the callers' static storage. */
static void behind_one_pool(struct est_datastore *out, char (*names)[16], char (*morefs)[16],
                            size_t *backs, size_t n)
{
    static size_t zero = 0;
    static int thin = 1;

    for (size_t i = 0; i < n; i++) {
        snprintf(names[i], sizeof(names[i]), "ds-%zu", i);
        snprintf(morefs[i], sizeof(morefs[i]), "m-ds-%zu", i);
        out[i] = (struct est_datastore)DS("", 50);
        out[i].name = names[i];
        out[i].moref = morefs[i];
        out[i].pools = &zero;
        out[i].pool_thin = &thin;
        out[i].n_pools = 1;
        backs[i] = i;
    }
}

/* Issue 23: a pool behind every one of 2,000 datastores (a Unity pool under many LUNs) adds
 * none of them to the estate a datastore is judged over: the judge of ds-0 holds ds-0 and ds-5,
 * which a VM on it spans, and that of ds-7 holds ds-7 alone (each judge had copied all 2,000,
 * which made a placement O(n^2)). The pool's message still names the datastores it backs. */
TEST(test_pool_view_stays_small)
{
    enum { N_BIG = 2000 };
    static struct est_datastore big[N_BIG];
    static char names[N_BIG][16], morefs[N_BIG][16];
    static size_t backs[N_BIG], where[] = {0, 5};
    static struct est_disk disks[] = {
        {.key = 2000, .label = "a", .datastore = 0, .capacity_bytes = GIB, .format = "thin",
         .controller = EST_NONE},
        {.key = 2001, .label = "b", .datastore = 5, .capacity_bytes = GIB, .format = "thin",
         .controller = EST_NONE}};
    static struct est_vm vm = {.moref = "vm-1", .name = "vm-1", .power_state = "poweredOn",
                               .ft_state = "notConfigured", .hw_version = 13, .host = EST_NONE,
                               .config_datastore = 0, .datastores = where, .n_datastores = 2,
                               .disks = disks, .n_disks = 2};
    static struct est_pool pool = {.array = "unity1", .array_type = "unity", .id = "pool_1",
                                   .name = "pool-a", .size_total = 1000 * GIB,
                                   .size_free = 200 * GIB, .size_used = 800 * GIB,
                                   .size_subscribed = EST_UNKNOWN,
                                   .snap_size_used = EST_UNKNOWN, .alert_threshold = 70,
                                   .health = 5, .datastores = backs, .n_datastores = N_BIG};
    struct estate e = {.vcenter = "vc", .polled_ms = (NOW - 60) * 1000, .datastores = big,
                       .n_datastores = N_BIG, .pools = &pool, .n_pools = 1, .vms = &vm,
                       .n_vms = 1};
    struct chk_site site = {.estate = &e, .max_age_s = 600};
    struct chk_config cfg;
    struct chk_proposal p = proposal("ds-0", 0, "1", CHK_DISK_THIN);
    json_t *ans = NULL;
    char err[256];

    (void)state;
    behind_one_pool(big, names, morefs, backs, N_BIG);
    assert_int_equal(chk_judge_datastores(&site, 0), 2);
    assert_int_equal(chk_judge_datastores(&site, 7), 1);
    assert_int_equal(chk_config_init(&cfg), 0);
    if (chk_gate(&cfg, &site, 1, &p, NOW, &ans, err, sizeof(err)) < 0)
        fail_msg("chk_gate: %s", err);
    const char *msg = json_string_value(
        json_object_get(json_array_get(json_object_get(ans, "reasons"), 0), "message"));
    if (!msg || !strstr(msg, "pool pool-a of array unity1 has 20.0 % free") ||
        !strstr(msg, "; it backs ds-0, ds-1, ds-2, ds-3, "))
        fail_msg("the pool's message does not name its datastores: '%s'", msg ? msg : "");
    json_decref(ans);
    chk_config_free(&cfg);
}

/* A judge reads only its findings' messages, so they carry no evidence: a pool at 20 % free
 * behind every one of 300 datastores gives each judge a pool-free-space finding whose evidence
 * would list all 300 names (4,000 under one Unity pool made a placement take 3 s). The
 * message still names the datastores, and `vslint check` (chk_run_one here, the engine as
 * evaluations run it) still lists every one of them in the evidence. */
TEST(test_judge_builds_no_evidence)
{
    enum { N_POOLED = 300 };
    static struct est_datastore pooled[N_POOLED];
    static char names[N_POOLED][16], morefs[N_POOLED][16];
    static size_t backs[N_POOLED];
    static struct est_pool pool = {.array = "unity1", .array_type = "unity", .id = "pool_1",
                                   .name = "pool-a", .size_total = 1000 * GIB,
                                   .size_free = 200 * GIB, .size_used = 800 * GIB,
                                   .size_subscribed = EST_UNKNOWN,
                                   .snap_size_used = EST_UNKNOWN, .alert_threshold = 70,
                                   .health = 5, .datastores = backs, .n_datastores = N_POOLED};
    struct estate e = {.vcenter = "vc", .polled_ms = (NOW - 60) * 1000, .datastores = pooled,
                       .n_datastores = N_POOLED, .pools = &pool, .n_pools = 1};
    struct chk_site site = {.estate = &e, .max_age_s = 600};
    struct chk_proposal p = proposal("ds-7", 0, "1", CHK_DISK_THIN);
    struct chk_results judged = {0}, checked = {0};
    struct chk_config cfg;
    const struct chk_finding *f = NULL;
    char err[256];

    (void)state;
    behind_one_pool(pooled, names, morefs, backs, N_POOLED);
    assert_int_equal(chk_config_init(&cfg), 0);
    if (chk_judge_findings(&cfg, &site, 7, &p, NOW, &judged, err, sizeof(err)) < 0)
        fail_msg("chk_judge_findings: %s", err);
    for (size_t i = 0; i < judged.n; i++) {
        if (!strcmp(judged.items[i].check->id, "pool-free-space"))
            f = &judged.items[i];
        /* Every check's, not only the pool's: nobody reads them. */
        if (!judged.items[i].evidence || json_object_size(judged.items[i].evidence) != 0)
            fail_msg("the judge's %s finding carries evidence", judged.items[i].check->id);
    }
    if (!f)
        fail_msg("the judge of ds-7 did not see the pool at 20 %% free");
    if (!strstr(f->message, "pool pool-a of array unity1 has 20.0 % free") ||
        !strstr(f->message, "; it backs ds-0, ds-1, ds-2, "))
        fail_msg("the judge's pool message does not name its datastores: '%s'", f->message);

    assert_int_equal(chk_run_one(chk_find("pool-free-space"), NULL, &e, NOW, &checked), 0);
    assert_int_equal(checked.n, 1);
    json_t *dss = json_object_get(checked.items[0].evidence, "datastores");
    assert_int_equal(json_array_size(dss), N_POOLED);
    assert_string_equal(json_string_value(json_array_get(dss, N_POOLED - 1)), "ds-299");

    /* The judge left the caller's results as they were: a check run into them afterwards
     * still builds its evidence. */
    size_t before = judged.n;
    assert_int_equal(chk_run_one(chk_find("pool-free-space"), NULL, &e, NOW, &judged), 0);
    assert_int_equal(judged.n, before + 1);
    dss = json_object_get(judged.items[before].evidence, "datastores");
    assert_int_equal(json_array_size(dss), N_POOLED);
    chk_results_free(&judged);
    chk_results_free(&checked);
    chk_config_free(&cfg);
}

int main(void)
{
    setup(NULL);
    return tl_main();
}
