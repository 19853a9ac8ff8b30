/* Unit tests for arrays/: decoding the Unity REST answers (pools, LUNs, collection pages), the
 * WWN to naa. name join, the estate's pools as db_estate_load() builds them from an array's and
 * a vCenter's snapshots, and the two pool checks over it. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "arrays/unity.h"
#include "db/findings.h"
#include "model/estate.h"
#include "util/err.h"
#include "testlib.h"

extern const struct check chk_pool_free_space, chk_pool_subscription, chk_datastore_free_space;

#define GIB (1024LL * 1024 * 1024)

TEST(test_wwn_to_naa)
{
    static const struct {
        const char *wwn, *want; /* want NULL: not a WWN */
    } rows[] = {
        {"60:06:01:60:0B:00:49:00:BE:CE:6C:5C:56:C1:9D:D2", "naa.600601600b004900bece6c5c56c19dd2"},
        {"6006016015E03A006CCCAA57FE07BCD3", "naa.6006016015e03a006cccaa57fe07bcd3"},
        {"50:06:01:60:3B:20:1F:3A", "naa.500601603b201f3a"}, /* NAA 5, 8 bytes */
        {"60:06:01:60:0B:00:49:00:BE:CE:6C:5C:56:C1:9D", NULL}, /* 15 bytes */
        {"60:06:01:60:0B:00:49:00:BE:CE:6C:5C:56:C1:9D:D2:00", NULL},
        {"60:06:01:60:0G:00:49:00:BE:CE:6C:5C:56:C1:9D:D2", NULL},
        {"60::06:01:60:0B:00:49:00:BE:CE:6C:5C:56:C1:9D:D2", NULL},
        {"60:06:01:60:0B:00:49:00:BE:CE:6C:5C:56:C1:9D:D2:", NULL},
        {"", NULL},
        {NULL, NULL},
    };
    for (size_t i = 0; i < N(rows); i++) {
        char out[40] = "";
        int r = est_naa_from_wwn(rows[i].wwn, out, sizeof(out));
        if (rows[i].want) {
            assert_int_equal(r, 0);
            assert_string_equal(out, rows[i].want);
        } else {
            assert_int_equal(r, -1);
        }
    }
}

static json_t *parse(const char *s)
{
    json_error_t e;
    json_t *j = json_loads(s, 0, &e);

    if (!j)
        fail_msg("test JSON: %s", e.text);
    return j;
}

TEST(test_decode_pool)
{
    json_t *c = parse("{\"id\": \"pool_1\", \"name\": \"Pool 1\", \"sizeTotal\": 8838774259712,"
                      " \"sizeFree\": 2311766147072, \"sizeUsed\": 6527008112640,"
                      " \"sizeSubscribed\": 307567976775680, \"alertThreshold\": 70,"
                      " \"snapSizeUsed\": 0, \"health\": {\"value\": 5, \"descriptionIds\":"
                      " [\"ALRT_COMPONENT_OK\"], \"descriptions\": [\"The component is OK.\"]}}");
    struct vim_array_pool p;
    char err[256];

    assert_int_equal(arr_decode_pool(c, &p, err, sizeof(err)), 0);
    assert_string_equal(p.id, "pool_1");
    assert_string_equal(p.name, "Pool 1");
    assert_true(p.size_total == 8838774259712LL && p.size_free == 2311766147072LL);
    assert_true(p.size_subscribed == 307567976775680LL && p.size_used == 6527008112640LL);
    assert_int_equal(p.alert_threshold, 70);
    assert_int_equal(p.health, 5);
    assert_string_equal(p.health_text, "The component is OK.");
    assert_true(p.snap_size_subscribed == VIM_UNKNOWN); /* not asked for: unknown, not 0 */
    json_decref(c);

    /* A member of the wrong type is an error naming it; a missing id too. */
    static const struct {
        const char *json, *want;
    } bad[] = {
        {"{\"id\": \"pool_2\", \"sizeFree\": \"lots\"}", "pool pool_2: member \"sizeFree\""},
        {"{\"id\": \"pool_3\", \"health\": 5}", "pool pool_3: member \"health\""},
        {"{\"name\": \"x\"}", "member \"id\" is missing"},
        {"{\"id\": 7}", "member \"id\" is missing"},
    };
    for (size_t i = 0; i < N(bad); i++) {
        c = parse(bad[i].json);
        err[0] = '\0';
        assert_int_equal(arr_decode_pool(c, &p, err, sizeof(err)), -VSL_EPROTO);
        if (!strstr(err, bad[i].want))
            fail_msg("%s: %s", bad[i].json, err);
        json_decref(c);
    }
}

TEST(test_decode_lun)
{
    json_t *c = parse("{\"id\": \"sv_1\", \"name\": \"lun1\", \"sizeTotal\": 5368709120,"
                      " \"sizeAllocated\": 0, \"isThinEnabled\": true,"
                      " \"wwn\": \"60:06:01:60:15:E0:3A:00:6C:CC:AA:57:FE:07:BC:D3\","
                      " \"pool\": {\"id\": \"pool_1\"}}");
    struct vim_array_lun l;
    char naa[40], err[256];

    assert_int_equal(arr_decode_lun(c, &l, naa, err, sizeof(err)), 0);
    assert_string_equal(l.naa, "naa.6006016015e03a006cccaa57fe07bcd3");
    assert_string_equal(l.pool, "pool_1");
    assert_int_equal(l.thin, 1);
    assert_true(l.size_total == 5368709120LL && l.size_allocated == 0);
    json_decref(c);
    /* A LUN without a usable WWN is stored, but joins nothing. */
    c = parse("{\"id\": \"sv_2\", \"wwn\": \"not-a-wwn\", \"isThinEnabled\": false}");
    assert_int_equal(arr_decode_lun(c, &l, naa, err, sizeof(err)), 0);
    assert_null(l.naa);
    assert_null(l.pool);
    assert_int_equal(l.thin, 0);
    json_decref(c);
    c = parse("{\"id\": \"sv_3\", \"isThinEnabled\": \"yes\"}");
    assert_int_equal(arr_decode_lun(c, &l, naa, err, sizeof(err)), -VSL_EPROTO);
    assert_non_null(strstr(err, "LUN sv_3: member \"isThinEnabled\""));
    json_decref(c);
    c = parse("{\"id\": \"sv_4\", \"pool\": \"pool_1\"}");
    assert_int_equal(arr_decode_lun(c, &l, naa, err, sizeof(err)), -VSL_EPROTO);
    json_decref(c);
}

/* The iSCSI and NAS side: references ({"id": ...}, nested fields beside the id) are read, an
 * MTU no Ethernet has is unknown, and a reference of the wrong shape is an error naming the
 * instance and the member. */
TEST(test_decode_ports_portals_nas)
{
    struct vim_array_port port;
    struct vim_array_portal portal;
    struct vim_array_nas_server nas;
    struct vim_array_file_interface fi;
    char err[256];
    json_t *c;

    c = parse("{\"id\": \"spa_eth2\", \"storageProcessor\": {\"id\": \"spa\"}, \"mtu\": 9000}");
    assert_int_equal(arr_decode_eth_port(c, &port, err, sizeof(err)), 0);
    assert_string_equal(port.sp, "spa");
    assert_int_equal(port.mtu, 9000);
    assert_null(port.wwpn);
    json_decref(c);
    c = parse("{\"id\": \"spa_eth3\", \"mtu\": 0}");
    assert_int_equal(arr_decode_eth_port(c, &port, err, sizeof(err)), 0);
    assert_int_equal(port.mtu, VIM_UNKNOWN);
    assert_null(port.sp);
    json_decref(c);
    c = parse("{\"id\": \"spa_eth4\", \"storageProcessor\": \"spa\"}");
    assert_int_equal(arr_decode_eth_port(c, &port, err, sizeof(err)), -VSL_EPROTO);
    assert_non_null(strstr(err, "ethernetPort spa_eth4: member \"storageProcessor\""));
    json_decref(c);

    c = parse("{\"id\": \"if_4\", \"ipAddress\": \"10.0.1.21\","
              " \"ethernetPort\": {\"id\": \"spa_eth2\"},"
              " \"iscsiNode\": {\"id\": \"iscsinode_spa_eth2\","
              " \"name\": \"iqn.1992-04.com.emc:cx.fnm00150600267.a0\"}}");
    assert_int_equal(arr_decode_portal(c, &portal, err, sizeof(err)), 0);
    assert_string_equal(portal.address, "10.0.1.21");
    assert_string_equal(portal.port, "spa_eth2");
    assert_string_equal(portal.iqn, "iqn.1992-04.com.emc:cx.fnm00150600267.a0");
    json_decref(c);
    c = parse("{\"id\": \"if_5\", \"iscsiNode\": {\"id\": \"n\", \"name\": 7}}");
    assert_int_equal(arr_decode_portal(c, &portal, err, sizeof(err)), -VSL_EPROTO);
    assert_non_null(strstr(err, "iscsiPortal if_5: member \"iscsiNode\""));
    json_decref(c);

    c = parse("{\"id\": \"nas_1\", \"name\": \"nas-spa-1\", \"homeSP\": {\"id\": \"spa\"},"
              " \"currentSP\": {\"id\": \"spb\"}}");
    assert_int_equal(arr_decode_nas_server(c, &nas, err, sizeof(err)), 0);
    assert_string_equal(nas.home_sp, "spa");
    assert_string_equal(nas.current_sp, "spb");
    assert_int_equal(nas.replication_destination, VIM_UNKNOWN); /* not said: not known */
    json_decref(c);
    /* A replication destination keeps its source's addresses: the NAS join must know it. */
    c = parse("{\"id\": \"nas_1\", \"isReplicationDestination\": true}");
    assert_int_equal(arr_decode_nas_server(c, &nas, err, sizeof(err)), 0);
    assert_int_equal(nas.replication_destination, 1);
    json_decref(c);
    c = parse("{\"id\": \"nas_1\", \"isReplicationDestination\": false}");
    assert_int_equal(arr_decode_nas_server(c, &nas, err, sizeof(err)), 0);
    assert_int_equal(nas.replication_destination, 0);
    json_decref(c);
    c = parse("{\"id\": \"nas_2\", \"isReplicationDestination\": \"yes\"}");
    assert_int_equal(arr_decode_nas_server(c, &nas, err, sizeof(err)), -VSL_EPROTO);
    assert_non_null(strstr(err, "nasServer nas_2: member \"isReplicationDestination\""));
    json_decref(c);
    c = parse("{\"name\": \"no id\"}");
    assert_int_equal(arr_decode_nas_server(c, &nas, err, sizeof(err)), -VSL_EPROTO);
    assert_non_null(strstr(err, "member \"id\" is missing"));
    json_decref(c);

    c = parse("{\"id\": \"if_10\", \"nasServer\": {\"id\": \"nas_1\"}, \"ipAddress\": \"10.0.3.10\"}");
    assert_int_equal(arr_decode_file_interface(c, &fi, err, sizeof(err)), 0);
    assert_string_equal(fi.nas_server, "nas_1");
    assert_string_equal(fi.address, "10.0.3.10");
    json_decref(c);
    c = parse("{\"id\": \"if_11\", \"ipAddress\": [\"10.0.3.11\"]}");
    assert_int_equal(arr_decode_file_interface(c, &fi, err, sizeof(err)), -VSL_EPROTO);
    assert_non_null(strstr(err, "fileInterface if_11: member \"ipAddress\""));
    json_decref(c);
}

/* File systems, NFS shares and VVol datastores: a storage resource gives one row per pool when
 * it is a VVol datastore (type 9 or 10), none otherwise, and a pools member of the wrong shape
 * is an error naming it. */
TEST(test_decode_file_and_vvol)
{
    struct vim_array_filesystem fs;
    struct vim_array_nfs_share share;
    struct vim_array_vvol_pool v;
    char err[256];
    json_t *c;

    c = parse("{\"id\": \"fs_1\", \"name\": \"ds1\", \"pool\": {\"id\": \"pool_8\"},"
              " \"nasServer\": {\"id\": \"nas_1\"}, \"isThinEnabled\": false}");
    assert_int_equal(arr_decode_filesystem(c, &fs, err, sizeof(err)), 0);
    assert_string_equal(fs.pool, "pool_8");
    assert_string_equal(fs.nas_server, "nas_1");
    assert_int_equal(fs.thin, 0);
    json_decref(c);
    c = parse("{\"id\": \"NFSShare_1\", \"name\": \"ds1\", \"filesystem\": {\"id\": \"fs_1\"}}");
    assert_int_equal(arr_decode_nfs_share(c, &share, err, sizeof(err)), 0);
    assert_string_equal(share.filesystem, "fs_1");
    assert_string_equal(share.name, "ds1");
    json_decref(c);

    c = parse("{\"id\": \"res_20\", \"type\": 9, \"vmwareUUID\": \"5a2f-01\","
              " \"pools\": [{\"id\": \"pool_9\"}, {\"id\": \"pool_2\"}]}");
    assert_int_equal(arr_decode_vvol_pool(c, 0, &v, err, sizeof(err)), 1);
    assert_string_equal(v.pool, "pool_9");
    assert_string_equal(v.vmware_uuid, "5a2f-01");
    assert_int_equal(arr_decode_vvol_pool(c, 1, &v, err, sizeof(err)), 1);
    assert_string_equal(v.pool, "pool_2");
    assert_int_equal(arr_decode_vvol_pool(c, 2, &v, err, sizeof(err)), 0);
    json_decref(c);
    c = parse("{\"id\": \"res_1\", \"type\": 1, \"pools\": [{\"id\": \"pool_6\"}]}");
    assert_int_equal(arr_decode_vvol_pool(c, 0, &v, err, sizeof(err)), 0); /* a file system */
    json_decref(c);
    c = parse("{\"id\": \"res_21\", \"type\": 10, \"pools\": [\"pool_2\"]}");
    assert_int_equal(arr_decode_vvol_pool(c, 0, &v, err, sizeof(err)), -VSL_EPROTO);
    assert_non_null(strstr(err, "storageResource res_21: member \"pools\""));
    json_decref(c);
}

static int count_entry(void *ctx, const json_t *content)
{
    (*(int *)ctx)++;
    return json_is_object(content) ? 0 : -1;
}

TEST(test_decode_page)
{
    static const struct {
        const char *json;
        int r, entries, more;
    } rows[] = {
        {"{\"@base\": \"https://u/api/types/lun/instances?per_page=2\", \"links\": [{\"rel\":"
         " \"self\", \"href\": \"&page=1\"}, {\"rel\": \"next\", \"href\": \"&page=2\"}],"
         " \"entryCount\": 3, \"entries\": [{\"content\": {\"id\": \"a\"}}, {\"content\":"
         " {\"id\": \"b\"}}]}",
         0, 2, 1},
        {"{\"links\": [{\"rel\": \"self\", \"href\": \"&page=2\"}], \"entries\":"
         " [{\"content\": {\"id\": \"c\"}}]}",
         0, 1, 0},
        {"{\"entries\": []}", 0, 0, 0},
        {"{\"entries\": {}}", -VSL_EPROTO, 0, 0},
        {"{\"error\": {\"httpStatusCode\": 401}}", -VSL_EPROTO, 0, 0},
        {"{\"entries\": [{\"@base\": \"x\"}]}", -VSL_EPROTO, 0, 0},
        {"[]", -VSL_EPROTO, 0, 0},
    };
    for (size_t i = 0; i < N(rows); i++) {
        json_t *doc = parse(rows[i].json);
        int n = 0, more = -1;
        char err[256] = "";
        assert_int_equal(arr_decode_page(doc, count_entry, &n, &more, err, sizeof(err)),
                         rows[i].r);
        if (rows[i].r == 0) {
            assert_int_equal(n, rows[i].entries);
            assert_int_equal(more, rows[i].more);
        } else {
            assert_true(err[0]);
        }
        json_decref(doc);
    }
}

/* ---- the join, through the database ------------------------------------------------------- */

/* A vCenter with three VMFS datastores: on the array's thin LUN (ds-thin), on its thick LUN in
 * the same pool (ds-thick, two extents, the second on no array), and on no array (ds-other). */
static void fill_vcenter(const struct vim_sink *s, const void *arg)
{
    static const struct {
        const char *moref, *name, *naa[2];
    } ds[] = {
        {"datastore-1", "ds-thin", {"naa.60060160aa0000000000000000000001", NULL}},
        {"datastore-2", "ds-thick",
         {"naa.60060160aa0000000000000000000002", "naa.60060160bb0000000000000000000009"}},
        {"datastore-3", "ds-other", {"naa.60060160cc0000000000000000000003", NULL}},
    };
    for (size_t i = 0; i < N(ds); i++) {
        struct vim_datastore d = {.moref = ds[i].moref, .name = ds[i].name, .type = "VMFS",
                                  .capacity = 1000 * GIB, .free_space = 600 * GIB,
                                  .uncommitted = 0, .accessible = 1, .vmfs_major = 6};
        assert_int_equal(s->datastore(s->ctx, &d), 0);
        for (int k = 0; k < 2 && ds[i].naa[k]; k++) {
            struct vim_datastore_extent x = {.datastore = ds[i].moref, .position = k,
                                             .disk_name = ds[i].naa[k], .partition = 1};
            assert_int_equal(s->datastore_extent(s->ctx, &x), 0);
        }
    }
}

/* The array: pool_1 (8 % free, subscribed 200 %) holds the LUNs of ds-thin and ds-thick and
 * one on no datastore; pool_2 (1 % free) backs nothing of the vCenter. */
static void fill_array(const struct vim_sink *s, const void *arg)
{
    struct vim_array_pool p1 = {.id = "pool_1", .name = "Pool A", .size_total = 10000 * GIB,
                                .size_free = 800 * GIB, .size_used = 9200 * GIB,
                                .size_subscribed = 20000 * GIB, .alert_threshold = 70,
                                .health = 5, .snap_size_used = 0, .snap_size_subscribed = 0};
    struct vim_array_pool p2 = p1;
    p2.id = "pool_2", p2.name = "Pool B", p2.size_free = 100 * GIB;
    assert_int_equal(s->array_pool(s->ctx, &p1), 0);
    assert_int_equal(s->array_pool(s->ctx, &p2), 0);
    static const struct {
        const char *id, *wwn, *pool;
        int thin;
    } luns[] = {
        {"sv_1", "60:06:01:60:AA:00:00:00:00:00:00:00:00:00:00:01", "pool_1", 1},
        {"sv_2", "60:06:01:60:AA:00:00:00:00:00:00:00:00:00:00:02", "pool_1", 0},
        {"sv_3", "60:06:01:60:AA:00:00:00:00:00:00:00:00:00:00:77", "pool_1", 1},
        {"sv_4", "60:06:01:60:DD:00:00:00:00:00:00:00:00:00:00:04", "pool_2", 1},
    };
    for (size_t i = 0; i < N(luns); i++) {
        char naa[40];
        struct vim_array_lun l = {.id = luns[i].id, .name = luns[i].id, .wwn = luns[i].wwn,
                                  .pool = luns[i].pool, .size_total = 1000 * GIB,
                                  .size_allocated = 10 * GIB, .thin = luns[i].thin};
        assert_int_equal(est_naa_from_wwn(l.wwn, naa, sizeof(naa)), 0);
        l.naa = naa;
        assert_int_equal(s->array_lun(s->ctx, &l), 0);
    }
}

static void snapshot_array(struct db *db, const char *name)
{
    struct db_snapshot *snap = NULL;
    struct vim_sink sink;

    assert_int_equal(db_snapshot_begin(db, name, "https://unity.example", &snap, &sink), 0);
    db_snapshot_set_kind(snap, "unity");
    fill_array(&sink, NULL);
    assert_int_equal(db_snapshot_commit(snap, 1700000000000LL, 1700000001000LL, NULL), 0);
}

static const struct est_datastore *ds_named(const struct estate *e, const char *name)
{
    return TL_FIND(e->datastores, e->n_datastores, name, name, "datastore");
}

static int keep_named(const char *array, void *ctx)
{
    return !strcmp(array, (const char *)ctx);
}

static void test_estate_joins_pools(void **state)
{
    struct tl_dbfile *fx = *state;
    struct estate *e = NULL;

    tl_snapshot(fx->db, "vc-a", fill_vcenter, NULL, 1700000000000LL, 1700000001000LL, NULL);
    /* Before any array is polled: nothing joined. */
    assert_int_equal(db_estate_load(fx->db, "vc-a", &e), 0);
    assert_int_equal(e->n_pools, 0);
    est_free(e);

    snapshot_array(fx->db, "unity1");
    assert_int_equal(db_estate_load(fx->db, "vc-a", &e), 0);
    assert_int_equal(e->n_pools, 1); /* pool_2 backs nothing of vc-a */
    const struct est_pool *p = &e->pools[0];
    assert_string_equal(p->array, "unity1");
    assert_string_equal(p->array_type, "unity");
    assert_string_equal(p->id, "pool_1");
    assert_int_equal(p->n_luns, 3);
    assert_int_equal(p->n_thin_luns, 2);
    assert_int_equal(p->alert_threshold, 70);
    assert_null(p->array_error);
    assert_int_equal(p->n_datastores, 2);
    assert_string_equal(e->datastores[p->datastores[0]].name, "ds-thick");
    assert_string_equal(e->datastores[p->datastores[1]].name, "ds-thin");
    const struct est_datastore *thin = ds_named(e, "ds-thin"), *other = ds_named(e, "ds-other");
    assert_int_equal(thin->n_pools, 1);
    assert_ptr_equal(&e->pools[thin->pools[0]], p);
    assert_int_equal(ds_named(e, "ds-thick")->n_pools, 1); /* two extents, one pool */
    assert_int_equal(other->n_pools, 0);

    /* The checks over that estate: the pool (8 % free) is critical and names both datastores;
     * subscribed 200 % with thin LUNs is over 150 %. */
    struct chk_results r = tl_run(&chk_pool_free_space, NULL, e, 1700000100);
    const struct chk_finding *f = tl_find(&r, "unity1/Pool A", NULL);
    assert_non_null(f);
    assert_int_equal(f->severity, SEV_CRITICAL);
    assert_non_null(strstr(f->message, "it backs ds-thick, ds-thin"));
    assert_string_equal(tl_ev_item(f, "datastores", 1, NULL), "ds-thin");
    assert_int_equal(tl_ev_int(f, "alert_threshold_pct"), 70);
    chk_results_free(&r);
    r = tl_run(&chk_pool_subscription, NULL, e, 1700000100);
    tl_want(&r, "unity1/Pool A", SEV_WARNING);
    chk_results_free(&r);
    r = tl_run_with(&chk_pool_subscription, "max_subscribed_pct", 200, e, 1700000100);
    tl_want(&r, "unity1/Pool A", NONE); /* exactly 200 % is not over 200 % */
    chk_results_free(&r);
    /* datastore-free-space (60 % free, judged here with a 70 % warning) names the pool. */
    r = tl_run_with(&chk_datastore_free_space, "warn_free_pct", 70, e, 1700000100);
    f = tl_find(&r, "ds-thin", NULL);
    assert_non_null(f);
    assert_string_equal(tl_ev_item(f, "pools", 0, "name"), "Pool A");
    assert_string_equal(tl_ev_item(f, "pools", 0, "array"), "unity1");
    assert_null(tl_ev_item(tl_find(&r, "ds-other", NULL), "pools", 0, "name"));
    chk_results_free(&r);
    est_free(e);

    /* A second array backs ds-other: two pools, by array. An array no longer configured joins
     * nothing; the configured one stays joined, its index moved. */
    struct db_snapshot *snap = NULL;
    struct vim_sink sink;
    assert_int_equal(db_snapshot_begin(fx->db, "unity2", "https://u2", &snap, &sink), 0);
    db_snapshot_set_kind(snap, "unity");
    struct vim_array_pool px = {.id = "pool_9", .name = "Pool X", .size_total = 100 * GIB,
                                .size_free = 50 * GIB, .size_used = 50 * GIB,
                                .size_subscribed = 100 * GIB, .alert_threshold = 70,
                                .health = 5, .snap_size_used = 0, .snap_size_subscribed = 0};
    struct vim_array_lun lx = {.id = "sv_9", .name = "x", .wwn = "n/a",
                               .naa = "naa.60060160cc0000000000000000000003", .pool = "pool_9",
                               .size_total = GIB, .size_allocated = GIB, .thin = 0};
    assert_int_equal(sink.array_pool(sink.ctx, &px), 0);
    assert_int_equal(sink.array_lun(sink.ctx, &lx), 0);
    assert_int_equal(db_snapshot_commit(snap, 1700000000000LL, 1700000001000LL, NULL), 0);
    assert_int_equal(db_estate_load(fx->db, "vc-a", &e), 0);
    assert_int_equal(e->n_pools, 2);
    assert_string_equal(e->pools[ds_named(e, "ds-other")->pools[0]].array, "unity2");
    est_keep_pools(e, keep_named, "unity2");
    assert_int_equal(e->n_pools, 1);
    assert_string_equal(e->pools[0].id, "pool_9");
    assert_int_equal(ds_named(e, "ds-other")->n_pools, 1);
    assert_int_equal(ds_named(e, "ds-other")->pools[0], 0);
    assert_int_equal(ds_named(e, "ds-thin")->n_pools, 0);
    assert_int_equal(ds_named(e, "ds-thick")->n_pools, 0);
    est_keep_pools(e, keep_named, "none");
    assert_int_equal(e->n_pools, 0);
    assert_int_equal(ds_named(e, "ds-other")->n_pools, 0);
    est_free(e);

    /* The array's next poll fails: its last snapshot stays, and says so. */
    assert_int_equal(db_array_poll_failed(fx->db, "unity1", "https://unity.example", "unity",
                                          1700000200000LL, 1700000201000LL, "cannot connect"),
                     0);
    assert_int_equal(db_estate_load(fx->db, "vc-a", &e), 0);
    assert_int_equal(e->n_pools, 2);
    assert_string_equal(e->pools[0].array, "unity1");
    assert_string_equal(e->pools[0].array_error, "cannot connect");
    assert_true(e->pools[0].polled_ms == 1700000001000LL);
    est_free(e);
}

TEST(test_estate_join)
{
    void *st = NULL;
    assert_int_equal(tl_db_setup_open(&st), 0);
    test_estate_joins_pools(&st);
    tl_db_teardown(&st);
}

int main(void)
{
    return tl_main();
}

/* An NFS datastore's NAS server in doubt because of a removed array's NAS server is no doubt of
 * the configuration that runs the checks: est_keep_pools() forgets it, and keeps a configured
 * array's. */
TEST(test_keep_pools_forgets_a_removed_arrays_nas_doubt)
{
    struct est_datastore ds[2] = {
        {.name = "ds-dr", .type = "NFS", .nas_doubt = EST_NAS_AMBIGUOUS,
         .nas_doubt_server = "unity-dr/nas-1", .nas_doubt_array = "unity-dr", .nas_doubt_count = 2},
        {.name = "ds-kept", .type = "NFS", .nas_doubt = EST_NAS_BY_NAME,
         .nas_doubt_server = "unity2/nas-2", .nas_doubt_array = "unity2", .nas_doubt_count = 1},
    };
    struct estate e = {.datastores = ds, .n_datastores = 2};

    est_keep_pools(&e, keep_named, "unity2");
    assert_int_equal(ds[0].nas_doubt, EST_NAS_NO_DOUBT);
    assert_null(ds[0].nas_doubt_server);
    assert_int_equal(ds[1].nas_doubt, EST_NAS_BY_NAME);
    assert_string_equal(ds[1].nas_doubt_server, "unity2/nas-2");
}
