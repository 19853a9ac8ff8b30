/* Unit tests for nfs-server-redundancy: per cluster, the NFS datastores its hosts mount and the
 * NAS servers they come from. Each table row is one cluster with one host and the datastores it
 * mounts, and the finding it must (or must not) raise. */
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
#define MAXDS 3

extern const struct check chk_nfs_server_redundancy;

/* A datastore of a row: its server (NULL: not reported), type (NULL: NFS), and whether the
 * row's host has it mounted (0: listed in Datastore.host but unmounted). */
struct nfs_ds {
    const char *server, *type;
    int mounted;
};

static const struct row {
    const char *cluster; /* the cluster's name; its moref is "c-" + the row's index */
    struct nfs_ds ds[MAXDS];
    int want;
} rows[] = {
    {"one-server", {{"nas-a.example.com", NULL, 1}, {"nas-a.example.com", NULL, 1}}, SEV_WARNING},
    {"two-servers", {{"nas-a.example.com", NULL, 1}, {"nas-b.example.com", NULL, 1}}, NONE},
    {"single", {{"nas-a.example.com", NULL, 1}}, NONE}, /* nothing to spread */
    {"case", {{"nas-a.example.com", NULL, 1}, {"NAS-A.Example.COM", NULL, 1}}, SEV_WARNING},
    {"server-unknown", {{"nas-a.example.com", NULL, 1}, {NULL, NULL, 1}}, NONE},
    {"two-and-unknown",
     {{"nas-a.example.com", NULL, 1}, {"nas-b.example.com", NULL, 1}, {NULL, NULL, 1}},
     NONE},
    {"no-nfs", {{"naa.1", "VMFS", 1}, {"naa.2", "VMFS", 1}}, NONE},
    {"three-by-ip", {{"10.0.0.1", NULL, 1}, {"10.0.0.1", NULL, 1}, {"10.0.0.1", NULL, 1}},
     SEV_WARNING},
    {"nfs41", {{"nas-a.example.com", "NFS41", 1}, {"nas-a.example.com", "NFS41", 1}},
     SEV_WARNING},
    {"nfs3-and-41", {{"nas-a.example.com", NULL, 1}, {"nas-a.example.com", "NFS41", 1}},
     SEV_WARNING},
    {"with-vmfs", {{"nas-a.example.com", NULL, 1}, {"nas-a.example.com", NULL, 1}, {"x", "VMFS", 1}},
     SEV_WARNING},
    /* The second server's datastore is not mounted here: it serves this cluster nothing. */
    {"other-unmounted",
     {{"nas-a.example.com", NULL, 1}, {"nas-a.example.com", NULL, 1},
      {"nas-b.example.com", NULL, 0}},
     SEV_WARNING},
    {"mounted-unknown",
     {{"nas-a.example.com", NULL, EST_UNKNOWN}, {"nas-a.example.com", NULL, 1}},
     SEV_WARNING},
};

#define NROWS N(rows)
#define NDS   (NROWS * MAXDS + 3)

struct world {
    struct est_entity entities[NROWS + 2];
    struct est_host hosts[NROWS + 2];
    struct est_datastore ds[NDS];
    struct est_mount mounts[NDS][2];
    char morefs[NROWS + 2][16], ds_morefs[NDS][16], ds_names[NDS][32];
    struct estate e;
};

static size_t add_ds(struct world *w, size_t *n, const char *name, const char *type,
                     const char *server)
{
    size_t i = (*n)++;
    snprintf(w->ds_morefs[i], sizeof(w->ds_morefs[i]), "ds-%03zu", i);
    snprintf(w->ds_names[i], sizeof(w->ds_names[i]), "%s", name);
    w->ds[i] = (struct est_datastore){.moref = w->ds_morefs[i],
                                      .name = w->ds_names[i],
                                      .type = type,
                                      .capacity = 600LL << 30,
                                      .free_space = 300LL << 30,
                                      .accessible = 1,
                                      .pod = EST_NONE,
                                      .nas_remote_host = strcmp(type, "VMFS") ? server : NULL,
                                      .mounts = w->mounts[i]};
    return i;
}

static void mount(struct world *w, size_t ds, size_t host, int mounted)
{
    struct est_datastore *d = &w->ds[ds];
    w->mounts[ds][d->n_mounts++] = (struct est_mount){.host = host, .mounted = mounted,
                                                      .accessible = 1};
}

/* Rows, then: cluster "shared-x" and "shared-y" (indexes NROWS, NROWS + 1) whose hosts both
 * mount ds "shared" (nas-a); x also mounts its own nas-a datastore, y its own nas-b one. And a
 * standalone host (parent a ComputeResource the snapshot does not hold) with two nas-a ones. */
static void build(struct world *w)
{
    size_t n = 0;

    memset(w, 0, sizeof(*w));
    for (size_t r = 0; r < NROWS + 2; r++) {
        snprintf(w->morefs[r], sizeof(w->morefs[r]), "c-%02zu", r);
        w->entities[r] = (struct est_entity){.moref = w->morefs[r],
                                             .type = "ClusterComputeResource",
                                             .name = r < NROWS ? rows[r].cluster
                                                     : r == NROWS ? "shared-x"
                                                                  : "shared-y",
                                             .parent = "group-h4"};
        w->hosts[r] = (struct est_host){.moref = w->morefs[r],
                                        .name = w->entities[r].name,
                                        .parent = w->morefs[r],
                                        .connection_state = "connected",
                                        .enable_block_delete = 1};
    }
    for (size_t r = 0; r < NROWS; r++) {
        for (size_t k = 0; k < MAXDS && (rows[r].ds[k].server || rows[r].ds[k].type ||
                                         rows[r].ds[k].mounted); k++) {
            char name[32];
            snprintf(name, sizeof(name), "%s-%zu", rows[r].cluster, k);
            size_t i = add_ds(w, &n, name, rows[r].ds[k].type ? rows[r].ds[k].type : "NFS",
                              rows[r].ds[k].server);
            mount(w, i, r, rows[r].ds[k].mounted);
        }
    }
    size_t x = NROWS, y = NROWS + 1;
    size_t shared = add_ds(w, &n, "shared", "NFS", "nas-a.example.com");
    mount(w, shared, x, 1);
    mount(w, shared, y, 1);
    mount(w, add_ds(w, &n, "x-own", "NFS", "nas-a.example.com"), x, 1);
    mount(w, add_ds(w, &n, "y-own", "NFS", "nas-b.example.com"), y, 1);
    assert_true(n <= NDS);
    w->e = (struct estate){.vcenter = "vc",
                           .entities = w->entities,
                           .n_entities = NROWS + 2,
                           .hosts = w->hosts,
                           .n_hosts = NROWS + 2,
                           .datastores = w->ds,
                           .n_datastores = n};
}

TEST(test_clusters)
{
    static struct world w;

    build(&w);
    struct chk_results r = tl_run(&chk_nfs_server_redundancy, NULL, &w.e, NOW);
    size_t want_n = 1 /* shared-x */ + TL_WANT_EACH(&r, rows, NROWS, cluster, want);
    /* A datastore counts in every cluster that mounts it. */
    tl_want(&r, "shared-x", SEV_WARNING);
    tl_want(&r, "shared-y", NONE);
    assert_int_equal(r.n, want_n);

    const struct chk_finding *f = tl_find(&r, "one-server", NULL);
    assert_string_equal(f->object_type, "cluster");
    assert_string_equal(f->object_moref, "c-00");
    assert_null(f->host_moref);
    assert_string_equal(tl_ev_str(f, "nas_server"), "nas-a.example.com");
    assert_int_equal(json_array_size(json_object_get(f->evidence, "datastores")), 2);
    assert_string_equal(tl_ev_item(f, "datastores", 1, "name"), "one-server-1");
    assert_true(strstr(f->message, "nas-a.example.com") != NULL);
    f = tl_find(&r, "other-unmounted", NULL);
    assert_int_equal(json_array_size(json_object_get(f->evidence, "datastores")), 2);
    f = tl_find(&r, "with-vmfs", NULL);
    assert_int_equal(json_array_size(json_object_get(f->evidence, "datastores")), 2);
    f = tl_find(&r, "shared-x", NULL);
    assert_int_equal(json_array_size(json_object_get(f->evidence, "datastores")), 2);
    chk_results_free(&r);
}

TEST(test_not_in_a_cluster)
{
    static struct world w;

    build(&w);
    /* The same hosts outside clusters: a standalone host's parent is its ComputeResource, which
     * is not an entity; a parent that is another kind of entity is no cluster either. */
    for (size_t i = 0; i < w.e.n_hosts; i++)
        w.hosts[i].parent = i % 2 ? "domain-s99" : NULL;
    struct chk_results r = tl_run(&chk_nfs_server_redundancy, NULL, &w.e, NOW);
    assert_int_equal(r.n, 0);
    chk_results_free(&r);

    build(&w);
    w.entities[0].type = "Folder";
    r = tl_run(&chk_nfs_server_redundancy, NULL, &w.e, NOW);
    tl_want(&r, "one-server", NONE);
    tl_want(&r, "case", SEV_WARNING);
    chk_results_free(&r);

    /* A cluster vCenter gave no name is named by its moref. */
    build(&w);
    w.entities[0].name = NULL;
    r = tl_run(&chk_nfs_server_redundancy, NULL, &w.e, NOW);
    tl_want(&r, "c-00", SEV_WARNING);
    chk_results_free(&r);
}

TEST(test_min_datastores)
{
    static struct world w;

    build(&w);
    struct chk_results r = tl_run_with(&chk_nfs_server_redundancy, "min_datastores", 1, &w.e, NOW);
    tl_want(&r, "single", SEV_WARNING); /* stricter: even one datastore */
    tl_want(&r, "two-servers", NONE);
    chk_results_free(&r);

    r = tl_run_with(&chk_nfs_server_redundancy, "min_datastores", 3, &w.e, NOW);
    tl_want(&r, "one-server", NONE);
    tl_want(&r, "three-by-ip", SEV_WARNING);
    chk_results_free(&r);
}

int main(void)
{
    return tl_main();
}

/* The datastore of w called name. */
static struct est_datastore *ds_named(struct world *w, const char *name)
{
    for (size_t i = 0; i < w->e.n_datastores; i++)
        if (!strcmp(w->ds[i].name, name))
            return &w->ds[i];
    fail_msg("no datastore %s", name);
    return NULL;
}

/* With the array known (each datastore's NAS server and its homeSP), two addresses are judged
 * by the SPs their NAS servers are placed on: one SP is the finding, naming it; both SPs, or
 * one SP unknown, are silent. One address stays a finding whatever the SPs. */
TEST(test_home_sps)
{
    static struct world w;
    static const struct {
        const char *sp0, *sp1; /* the home SPs of two-servers-0 and -1 (NULL: not on the array) */
        int want;
        const char *array1; /* two-servers-1's array (NULL: unity1, as two-servers-0's) */
        int array_sps;      /* how many SPs the arrays' ports are on (0: not told) */
    } cases[] = {
        {"spa", "spa", SEV_WARNING, NULL, 0},
        {"spb", "spb", SEV_WARNING, NULL, 2},
        {"spa", "spb", NONE, NULL, 0},
        {"spa", NULL, NONE, NULL, 0},
        {NULL, NULL, NONE, NULL, 0},
        /* SP A of two arrays: two failure domains, not one SP. */
        {"spa", "spa", NONE, "unity2", 2},
        /* A UnityVSA has SP A only: no second SP to place a NAS server on. */
        {"spa", "spa", NONE, NULL, 1},
    };

    for (size_t c = 0; c < N(cases); c++) {
        build(&w);
        struct est_datastore *d0 = ds_named(&w, "two-servers-0"), *d1 = ds_named(&w, "two-servers-1");
        if (cases[c].sp0)
            d0->nas_array = "unity1", d0->nas_server = "nas-1",
            d0->nas_home_sp = cases[c].sp0;
        if (cases[c].sp1)
            d1->nas_array = cases[c].array1 ? cases[c].array1 : "unity1",
            d1->nas_server = "nas-2", d1->nas_home_sp = cases[c].sp1;
        d0->nas_array_sps = d1->nas_array_sps = cases[c].array_sps;
        /* one-server's single address: one NAS server even on both SPs (it cannot be). */
        ds_named(&w, "one-server-0")->nas_home_sp = "spa";
        ds_named(&w, "one-server-0")->nas_array = "unity1";
        struct chk_results r = tl_run(&chk_nfs_server_redundancy, NULL, &w.e, NOW);
        tl_want(&r, "two-servers", cases[c].want);
        tl_want(&r, "one-server", SEV_WARNING);
        if (cases[c].want != NONE) {
            const struct chk_finding *f = tl_find(&r, "two-servers", NULL);
            const char *sp = !strcmp(cases[c].sp0, "spa") ? "SP A" : "SP B";
            assert_string_equal(tl_ev_str(f, "home_sp"), sp);
            assert_true(strstr(f->message, "unity1/nas-1, unity1/nas-2") != NULL);
            assert_true(strstr(f->message, sp) != NULL);
            assert_int_equal(json_integer_value(json_object_get(f->evidence, "nas_servers")), 2);
        }
        chk_results_free(&r);
    }
}

/* A datastore whose NAS server is in doubt (its address is nas-1's and nas-4's, and the share
 * does not tell them apart) has no home SP: the two-servers cluster is not "all on SP A"
 * although nas-1 is homed there, and where a cluster is reported by address, the datastore's
 * evidence says why it has no NAS server. One whose server is known but pool is not (no share
 * holds its path) says nothing here: its SP is judged. */
TEST(test_nas_doubt)
{
    static struct world w;
    char why[1024];

    build(&w);
    struct est_datastore *d0 = ds_named(&w, "two-servers-0"), *d1 = ds_named(&w, "two-servers-1");
    d0->nas_array = "unity1", d0->nas_server = "nas-2", d0->nas_home_sp = "spa";
    d1->nas_doubt = EST_NAS_AMBIGUOUS, d1->nas_doubt_server = "unity1/nas-1";
    d1->nas_doubt_array = "unity1", d1->nas_doubt_count = 2, d1->nas_remote_path = "/vol/x";
    struct est_datastore *o = ds_named(&w, "one-server-1");
    o->nas_doubt = EST_NAS_BY_NAME, o->nas_doubt_server = "unity1/nas-3";
    o->nas_doubt_array = "unity1", o->nas_doubt_count = 1, o->nas_remote_path = "/share";
    struct est_datastore *o0 = ds_named(&w, "one-server-0");
    o0->nas_array = "unity1", o0->nas_server = "nas-3", o0->nas_home_sp = "spa";
    o0->nas_doubt = EST_NAS_NO_SHARE, o0->nas_doubt_server = "unity1/nas-3";
    o0->nas_doubt_array = "unity1", o0->nas_doubt_count = 1, o0->nas_remote_path = "/other";
    struct chk_results r = tl_run(&chk_nfs_server_redundancy, NULL, &w.e, NOW);
    tl_want(&r, "two-servers", NONE);
    const struct chk_finding *f = tl_find(&r, "one-server", NULL);
    assert_non_null(f);
    json_t *dss = json_object_get(f->evidence, "datastores");
    const char *said = json_string_value(json_object_get(json_array_get(dss, 1), "nas_server_unknown"));
    assert_non_null(said);
    assert_string_equal(said, chk_nas_doubt(o, why, sizeof(why)));
    assert_string_equal(said, "the datastore is mounted by the name nas-a.example.com, which "
                              "vslint does not resolve: it is not matched to a NAS server of the "
                              "configured arrays");
    assert_true(json_is_null(json_object_get(json_array_get(dss, 0), "nas_server_unknown")));
    assert_non_null(strstr(chk_nas_doubt(d1, why, sizeof(why)),
                           "nas-b.example.com is an interface address of 2 NAS servers of the "
                           "configured arrays (unity1/nas-1 and others), none of them known to "
                           "be a replication destination, and the share /vol/x does not tell "
                           "them apart"));
    chk_results_free(&r);
}
