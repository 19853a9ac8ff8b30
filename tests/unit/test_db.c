/* Unit tests for db/: schema and migrations, one-transaction snapshots, several vCenters side by
 * side, and the inventory read back as JSON and text, against a real SQLite file in /tmp. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon/inventory_text.h"
#include "db/db-private.h"
#include "db/db.h"
#include "db/findings.h"
#include "db/history.h"
#include "db/pages.h"
#include "util/buf.h"
#include "util/err.h"
#include "testlib.h"

#define GIB (1024LL * 1024 * 1024)

/* ---- helpers ------------------------------------------------------------------------------ */

static struct db *open_db(const struct tl_dbfile *fx)
{
    struct db *db = NULL;
    char *err = NULL;
    int r = db_open(fx->path, &db, &err);

    if (r < 0)
        fail_msg("db_open: %s (%s)", err ? err : "?", vsl_strerror(r));
    free(err);
    return db;
}

/* Runs a query returning one integer on a separate raw connection; arg (may be NULL) is ?1. */
static int64_t raw_int_arg(const char *path, const char *sql, const char *arg)
{
    sqlite3 *h = NULL;
    sqlite3_stmt *st = NULL;
    int64_t v = -12345;

    assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK);
    if (arg)
        assert_int_equal(sqlite3_bind_text(st, 1, arg, -1, SQLITE_STATIC), SQLITE_OK);
    if (sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(h);
    return v;
}

static int64_t raw_int(const char *path, const char *sql)
{
    return raw_int_arg(path, sql, NULL);
}

static void raw_exec(const char *path, const char *sql)
{
    sqlite3 *h = NULL;

    assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(h);
}

/* What fill() writes; the variations tests need. */
struct variant {
    const char *ds1_name;
    int64_t ds1_free;
    int with_nfs; /* include datastore ds-2 */
};

/* Writes a small estate of vCenter-looking rows: at least one row of every kind, plus a couple
 * of duplicates a confused server might send. */
static void fill(const struct vim_sink *s, const void *arg)
{
    const struct variant *e = arg;
    void *c = s->ctx;

    const struct vim_datastore ds1 = {.moref = "datastore-1",
                                      .name = e->ds1_name,
                                      .type = "VMFS",
                                      .url = "ds:///vmfs/1/",
                                      .parent = "group-p1",
                                      .capacity = 500 * GIB,
                                      .free_space = e->ds1_free,
                                      .uncommitted = VIM_UNKNOWN,
                                      .accessible = 1,
                                      .maintenance_mode = "normal",
                                      .vmfs_major = 6,
                                      .nas_remote_host = NULL,
                                      .vm_count = 1};
    assert_int_equal(s->datastore(c, &ds1), 0);
    assert_int_equal(s->datastore(c, &ds1), 0); /* duplicate: stored once */
    if (e->with_nfs)
        assert_int_equal(s->datastore(c, &tl_ds_nfs01), 0);
    const struct vim_datastore nokey = {.name = "no moref", .capacity = 1};
    assert_int_equal(s->datastore(c, &nokey), 0); /* skipped, poll goes on */

    const struct vim_storage_pod pod = {"group-p1", "pod-gold", 500 * GIB, 100 * GIB};
    assert_int_equal(s->storage_pod(c, &pod), 0);

    const struct vim_dvswitch dvs = {"dvs-9", "DSwitch-iSCSI", "50 2b 7e", 9000};
    assert_int_equal(s->dvswitch(c, &dvs), 0);

    const struct vim_host host = {"host-10", "esx01.lab", "domain-c7", "connected", "6.7.0"};
    assert_int_equal(s->host(c, &host), 0);
    const struct vim_host_option hopt = {"host-10", "VMFS3.EnableBlockDelete", "1"};
    assert_int_equal(s->host_option(c, &hopt), 0);
    const struct vim_vswitch vsw = {"host-10", "vSwitch1", 1500};
    assert_int_equal(s->vswitch(c, &vsw), 0);
    const struct vim_portgroup pg = {"host-10", "iSCSI-A", "vSwitch1"};
    assert_int_equal(s->portgroup(c, &pg), 0);
    const struct vim_vnic vmk1 = {"host-10", "vmk1", "iSCSI-A", NULL, NULL, 9000, "10.0.0.11", "255.255.255.0"};
    const struct vim_vnic vmk2 = {"host-10",       "vmk2", NULL,       "50 2b 7e",
                                  "dvportgroup-5", 1500,   "10.0.1.11", "255.255.254.0"};
    assert_int_equal(s->vnic(c, &vmk1), 0);
    assert_int_equal(s->vnic(c, &vmk2), 0);

    const struct vim_iscsi_hba hba = {"host-10", "vmhba64", "iqn.1998-01.com.vmware:esx01",
                                      "iSCSI Software Adapter"};
    assert_int_equal(s->iscsi_hba(c, &hba), 0);
    const struct vim_iscsi_target t1 = {"host-10", "vmhba64", "send", "10.0.0.1",
                                        3260,      NULL,      NULL,   NULL};
    const struct vim_iscsi_target t2 = {"host-10",  "vmhba64", "static",
                                        "10.0.0.2", 3260,      "iqn.2001-05.com.array:tgt1",
                                        "staticMethod", "vmhba64"};
    assert_int_equal(s->iscsi_target(c, &t1), 0);
    assert_int_equal(s->iscsi_target(c, &t2), 0);
    const struct vim_iscsi_binding bind = {"host-10", "vmhba64", "vmk1"};
    assert_int_equal(s->iscsi_binding(c, &bind), 0);

    const struct vim_lun rr = {"host-10",      "key-vim.host.ScsiDisk-1",
                               "naa.600a0001", "ARRAY LUN 1",
                               "NETAPP",       "LUN C-Mode",
                               "disk",         0,
                               "VMW_PSP_RR",   "VMW_SATP_ALUA",
                               "HostMultipathInfoLogicalUnitPolicy", "NMP",
                               VIM_UNKNOWN};
    const struct vim_lun mru = {"host-10",      "key-vim.host.ScsiDisk-2",
                                "naa.600a0002", "ARRAY LUN 2",
                                "NETAPP",       "LUN C-Mode",
                                "disk",         VIM_UNKNOWN,
                                "VMW_PSP_MRU",  "VMW_SATP_ALUA",
                                "HostMultipathInfoLogicalUnitPolicy", "NMP",
                               VIM_UNKNOWN};
    assert_int_equal(s->lun(c, &rr), 0);
    assert_int_equal(s->lun(c, &mru), 0);
    tl_fill_host10_san(s);
    const struct vim_satp_rule sr1 = {"host-10", "VMW_SATP_ALUA", "NETAPP", NULL, "VMW_PSP_RR",
                                      "iops=1",  "user",          NULL,     NULL, NULL,
                                      NULL,      NULL,            NULL};
    const struct vim_satp_rule sr2 = {"host-10", "VMW_SATP_ALUA", NULL, NULL, "VMW_PSP_MRU",
                                      NULL,      "system",        NULL, NULL, NULL,
                                      "tpgs_on", NULL,            "Any array with ALUA support"};
    const struct vim_satp_rule nosatp = {"host-10", NULL, "NETAPP", NULL, NULL, NULL, "user",
                                         NULL,      NULL, NULL,     NULL, NULL, NULL};
    assert_int_equal(s->satp_rule(c, &sr1), 0);
    assert_int_equal(s->satp_rule(c, &sr2), 0);
    assert_int_equal(s->satp_rule(c, &nosatp), 0); /* skipped, poll goes on */
    const struct vim_gap gap = {"host-10", "iscsi-bindings", "QueryBoundVnics: NotSupported"};
    assert_int_equal(s->gap(c, &gap), 0);
    const struct vim_gap vcgap = {NULL, "dvswitches", "permission denied"};
    assert_int_equal(s->gap(c, &vcgap), 0);

    const struct vim_vm vm = {"vm-42",     "web01",         "vmx-13", 0,
                              "poweredOn", "notConfigured", "host-10",
                              "[LocalDS_0] web01/web01.vmx",
                              1,           "com.vmware.vcDr", "replicaVm",
                              "rhel8_64Guest"};
    assert_int_equal(s->vm(c, &vm), 0);
    const struct vim_vm_datastore vmds = {"vm-42", "datastore-1"};
    assert_int_equal(s->vm_datastore(c, &vmds), 0);
    const struct vim_controller ctl = {"vm-42", 1000, "ParaVirtualSCSIController", "noSharing", 0};
    assert_int_equal(s->controller(c, &ctl), 0);
    const struct vim_vdisk d1 = {"vm-42",
                                 2000,
                                 "Hard disk 1",
                                 "[LocalDS_0] web01/web01.vmdk",
                                 "datastore-1",
                                 40 * GIB,
                                 "thin",
                                 1000,
                                 0,
                                 NULL,
                                 "sharingNone"};
    const struct vim_vdisk d2 = {"vm-42",
                                 2001,
                                 "Hard disk 2",
                                 "[LocalDS_0] web01/web01_1.vmdk",
                                 "datastore-1",
                                 100 * GIB,
                                 "eagerzeroedthick",
                                 1000,
                                 1,
                                 "[LocalDS_0] web01/web01_1-base.vmdk",
                                 "sharingMultiWriter"};
    assert_int_equal(s->vdisk(c, &d1), 0);
    assert_int_equal(s->vdisk(c, &d2), 0);
    assert_int_equal(s->vdisk(c, &d2), 0); /* duplicate */
    const struct vim_snapshot s1 = {"vm-42", "before patch", 1700000000, 1};
    const struct vim_snapshot s2 = {"vm-42", "after patch", 1700086400, 2};
    assert_int_equal(s->snapshot(c, &s1), 0);
    assert_int_equal(s->snapshot(c, &s2), 0);
}

static const struct variant default_estate = {"LocalDS_0", 100 * GIB, 1};

static void snapshot(struct db *db, const char *vc, const struct variant *e, int64_t counts[])
{
    tl_snapshot(db, vc, fill, e, 1700000000000LL, 1700000012345LL, counts);
}

/* cmocka setup: a new database, open in fx->db, holding one snapshot of vc-a's default estate. */
static int setup_polled(void **state)
{
    int r = tl_db_setup_open(state);

    if (r == 0)
        snapshot(((struct tl_dbfile *)*state)->db, "vc-a", &default_estate, NULL);
    return r;
}

/* Looks up a value by a small path: "key", "key[3]" or "key[field=value]", joined by '/'. */
static json_t *jpath(json_t *j, const char *path)
{
    char buf[256], *save = NULL, *seg;

    snprintf(buf, sizeof(buf), "%s", path);
    for (seg = strtok_r(buf, "/", &save); seg && j; seg = strtok_r(NULL, "/", &save)) {
        char *br = strchr(seg, '[');
        if (br) {
            *br++ = '\0';
            br[strlen(br) - 1] = '\0';
        }
        if (*seg)
            j = json_object_get(j, seg);
        if (br && j) {
            char *eq = strchr(br, '=');
            if (!eq) {
                j = json_array_get(j, strtoul(br, NULL, 10));
            } else {
                json_t *el, *found = NULL;
                size_t i;
                *eq++ = '\0';
                json_array_foreach(j, i, el)
                {
                    const char *v = json_string_value(json_object_get(el, br));
                    if (v && strcmp(v, eq) == 0)
                        found = el;
                }
                j = found;
            }
        }
    }
    return j;
}

static void assert_jpath(json_t *root, const char *path, const char *want)
{
    json_error_t err;
    json_t *w = json_loads(want, JSON_DECODE_ANY, &err);
    json_t *got = jpath(root, path);

    if (!w)
        fail_msg("bad want %s", want);
    if (!got || !json_equal(got, w)) {
        char *g = got ? json_dumps(got, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
        json_decref(w);
        fail_msg("%s: got %s, want %s", path, g ? g : "(missing)", want);
    }
    json_decref(w);
}

static json_t *inventory(struct db *db, const char *vc)
{
    json_t *j = NULL;

    assert_int_equal(db_inventory_json(db, vc, &j), 0);
    assert_non_null(j);
    return j;
}

/* ---- tests -------------------------------------------------------------------------------- */

TEST_WITH(test_open_creates_schema, tl_db_setup, tl_db_teardown)
{
    static const char *const tables[] = {
        "vcenters",      "polls",         "datastores",    "storage_pods",   "vms",
        "vm_datastores", "controllers",   "vdisks",        "snapshots",      "hosts",
        "host_options",  "vnics",         "vswitches",     "portgroups",     "dvswitches",
        "iscsi_hbas",    "iscsi_targets", "iscsi_options", "iscsi_bindings", "luns",
        "lun_paths",     "nmp_devices",   "satp_rules",    "gaps",           "findings",
        "datastore_extents", "datastore_hosts", "hbas"};
    struct tl_dbfile *fx = *state;
    struct db *db = open_db(fx);
    size_t i;

    assert_true(db_schema_version() >= 1);
    assert_int_equal(raw_int(fx->path, "PRAGMA user_version"), db_schema_version());
    for (i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
        if (raw_int_arg(fx->path,
                        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
                        tables[i]) != 1)
            fail_msg("table %s missing", tables[i]);
    }
    /* WAL is a property of the file: a fresh connection sees it. */
    {
        sqlite3 *h;
        sqlite3_stmt *st;
        assert_int_equal(sqlite3_open(fx->path, &h), SQLITE_OK);
        assert_int_equal(sqlite3_prepare_v2(h, "PRAGMA journal_mode", -1, &st, NULL), SQLITE_OK);
        assert_int_equal(sqlite3_step(st), SQLITE_ROW);
        assert_string_equal((const char *)sqlite3_column_text(st, 0), "wal");
        sqlite3_finalize(st);
        sqlite3_close(h);
    }
    /* A new database has no vCenters yet, and says so as an empty list. */
    json_t *j = inventory(db, NULL);
    assert_int_equal(json_array_size(json_object_get(j, "vcenters")), 0);
    json_decref(j);
    db_close(db);
    db_close(NULL);
}

/* `vslint record` keeps its rows in a database in memory: no file, not even one named
 * ":memory:" in the working directory, which is where an un-anonymized capture's rows would
 * otherwise be left behind. */
TEST_WITH(test_open_in_memory_makes_no_file, tl_db_setup, tl_db_teardown)
{
    struct tl_dbfile *fx = *state;
    struct db *db = NULL;
    char *err = NULL, cwd[4096];
    struct dirent *e;
    int files = 0;

    assert_non_null(getcwd(cwd, sizeof(cwd)));
    assert_int_equal(chdir(fx->dir), 0);
    assert_int_equal(db_open(DB_MEMORY, &db, &err), 0);
    assert_null(err);
    /* Its staging database (ATTACH '') is SQLite's temporary one: in memory too, not a file
     * under $TMPDIR (unlinked, so the directory check below would not see it). */
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(db->h, "PRAGMA temp_store", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(st, 0), 2); /* MEMORY */
    sqlite3_finalize(st);
    db_close(db);
    DIR *d = opendir(".");
    assert_non_null(d);
    while ((e = readdir(d)))
        files += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    assert_int_equal(chdir(cwd), 0);
    assert_int_equal(files, 0);
}

TEST_WITH(test_reopen_is_idempotent, setup_polled, tl_db_teardown)
{
    struct tl_dbfile *fx = *state;
    json_t *j;

    for (int i = 0; i < 2; i++) {
        db_close(fx->db);
        fx->db = open_db(fx);
    }
    assert_int_equal(raw_int(fx->path, "PRAGMA user_version"), db_schema_version());
    j = inventory(fx->db, NULL);
    assert_jpath(j, "vcenters[name=vc-a]/datastores[moref=datastore-1]/name", "\"LocalDS_0\"");
    json_decref(j);
}

TEST_WITH(test_roundtrip_json, setup_polled, tl_db_teardown)
{
    /* What a user of `vslint inventory --json` and the checks rely on, field by field. */
    static const struct {
        const char *path, *want;
    } cases[] = {
        {"name", "\"vc-a\""},
        {"url", "\"https://vc.example/sdk\""},
        {"last_poll/duration_ms", "12345"},
        {"last_poll/ok", "true"},
        {"last_poll/error", "null"},
        {"datastores[moref=datastore-1]/capacity", "536870912000"},
        {"datastores[moref=datastore-1]/free_space", "107374182400"},
        {"datastores[moref=datastore-1]/uncommitted", "null"},
        {"datastores[moref=datastore-1]/accessible", "true"},
        {"datastores[moref=datastore-1]/vmfs_major", "6"},
        {"datastores[moref=datastore-1]/storage_pod", "\"pod-gold\""},
        {"datastores[moref=datastore-2]/accessible", "false"},
        {"datastores[moref=datastore-2]/nas_remote_host", "\"filer01\""},
        {"datastores[moref=datastore-2]/storage_pod", "null"},
        {"datastores[0]/name", "\"LocalDS_0\""}, /* sorted by name */
        {"datastores[1]/name", "\"nfs01\""},
        {"storage_pods[0]/datastores", "[\"datastore-1\"]"},
        {"dvswitches[0]/max_mtu", "9000"},
        {"hosts[name=esx01.lab]/options/VMFS3.EnableBlockDelete", "\"1\""},
        {"hosts[0]/vswitches[0]", "{\"name\":\"vSwitch1\",\"mtu\":1500}"},
        {"hosts[0]/vnics[device=vmk1]/mtu", "9000"},
        {"hosts[0]/vnics[device=vmk1]/vswitch", "\"vSwitch1\""},
        {"hosts[0]/vnics[device=vmk2]/vswitch", "null"},
        {"hosts[0]/vnics[device=vmk2]/dvs_uuid", "\"50 2b 7e\""},
        {"hosts[0]/iscsi_hbas[0]/bound_vnics", "[\"vmk1\"]"},
        {"hosts[0]/iscsi_hbas[0]/options",
         "[{\"key\":\"DelayedAck\",\"value\":\"false\",\"inherited\":false}]"},
        {"hosts[0]/iscsi_hbas[0]/targets[kind=send]/options[0]/inherited", "true"},
        {"hosts[0]/iscsi_hbas[0]/targets[kind=static]/options[0]/inherited", "false"},
        {"hosts[0]/iscsi_hbas[0]/targets[kind=static]/options[0]/value", "\"true\""},
        {"hosts[0]/iscsi_hbas[0]/targets[kind=static]/iscsi_name",
         "\"iqn.2001-05.com.array:tgt1\""},
        {"hosts[0]/iscsi_hbas[0]/targets[kind=send]/port", "3260"},
        {"hosts[0]/luns[canonical_name=naa.600a0001]/iops_limit", "1"},
        {"hosts[0]/luns[canonical_name=naa.600a0001]/local", "false"},
        {"hosts[0]/luns[canonical_name=naa.600a0001]/policy", "\"VMW_PSP_RR\""},
        {"hosts[0]/luns[canonical_name=naa.600a0001]/paths[name=vmhba64:C1:T0:L1]/state",
         "\"dead\""},
        {"hosts[0]/luns[canonical_name=naa.600a0002]/iops_limit", "null"},
        {"hosts[0]/luns[canonical_name=naa.600a0002]/psp_config", "null"},
        {"hosts[0]/luns[canonical_name=naa.600a0002]/local", "null"},
        /* Sorted by SATP, then vendor (no vendor first); unset fields are null. */
        {"hosts[0]/satp_rules[0]",
         "{\"satp\":\"VMW_SATP_ALUA\",\"vendor\":null,\"model\":null,\"psp\":\"VMW_PSP_MRU\","
         "\"psp_options\":null,\"rule_group\":\"system\",\"device\":null,\"driver\":null,"
         "\"transport\":null,\"claim_options\":\"tpgs_on\",\"options\":null,"
         "\"description\":\"Any array with ALUA support\"}"},
        {"hosts[0]/satp_rules[1]",
         "{\"satp\":\"VMW_SATP_ALUA\",\"vendor\":\"NETAPP\",\"model\":null,"
         "\"psp\":\"VMW_PSP_RR\",\"psp_options\":\"iops=1\",\"rule_group\":\"user\","
         "\"device\":null,\"driver\":null,\"transport\":null,\"claim_options\":null,"
         "\"options\":null,\"description\":null}"},
        {"hosts[0]/luns[canonical_name=naa.600a0001]/policy_type",
         "\"HostMultipathInfoLogicalUnitPolicy\""},
        {"hosts[0]/luns[canonical_name=naa.600a0001]/multipath_plugin", "\"NMP\""},
        {"hosts[0]/iscsi_hbas[0]/targets[kind=static]/discovery_method", "\"staticMethod\""},
        {"hosts[0]/iscsi_hbas[0]/targets[kind=static]/parent", "\"vmhba64\""},
        {"hosts[0]/iscsi_hbas[0]/targets[kind=send]/iscsi_name", "null"},
        {"hosts[0]/iscsi_hbas[0]/targets[kind=send]/discovery_method", "null"},
        {"vms[0]/vm_path_name", "\"[LocalDS_0] web01/web01.vmx\""},
        {"datastores[moref=datastore-2]/vmfs_local", "null"},
        {"datastores[moref=datastore-2]/extents", "[]"},
        {"hosts[0]/gaps[0]/what", "\"iscsi-bindings\""},
        {"gaps[0]/what", "\"dvswitches\""},
        {"vms[name=web01]/template", "false"},
        {"vms[0]/datastores", "[\"datastore-1\"]"},
        {"vms[0]/controllers[0]/type", "\"ParaVirtualSCSIController\""},
        {"vms[0]/disks[label=Hard disk 1]/format", "\"thin\""},
        {"vms[0]/disks[label=Hard disk 2]/format", "\"eagerzeroedthick\""},
        {"vms[0]/disks[label=Hard disk 2]/capacity_bytes", "107374182400"},
        {"vms[0]/snapshots[0]", "{\"name\":\"before patch\",\"created\":1700000000,\"depth\":1}"},
        /* Schema 11: what the real-estate exceptions of the checks read. */
        {"hosts[0]/product_version", "\"6.7.0\""},
        {"vms[0]/consolidation_needed", "true"},
        {"vms[0]/managed_by", "\"com.vmware.vcDr\""},
        {"vms[0]/managed_by_type", "\"replicaVm\""},
        /* Schema 12: config.guestId, the vsl_vms view's guest_id. */
        {"vms[0]/guest_id", "\"rhel8_64Guest\""},
        {"vms[0]/disks[label=Hard disk 1]/parent", "null"},
        {"vms[0]/disks[label=Hard disk 1]/sharing", "\"sharingNone\""},
        {"vms[0]/disks[label=Hard disk 2]/parent", "\"[LocalDS_0] web01/web01_1-base.vmdk\""},
        {"vms[0]/disks[label=Hard disk 2]/sharing", "\"sharingMultiWriter\""},
    };
    struct tl_dbfile *fx = *state;
    json_t *j, *vc;
    size_t i;

    j = inventory(fx->db, "vc-a");
    vc = jpath(j, "vcenters[0]");
    assert_non_null(vc);
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        assert_jpath(vc, cases[i].path, cases[i].want);
    /* Duplicates from the server are stored once, and the row without a moref is not stored. */
    assert_int_equal(json_array_size(json_object_get(vc, "datastores")), 2);
    assert_int_equal(json_array_size(jpath(vc, "vms[0]/disks")), 2);
    assert_int_equal(json_array_size(jpath(vc, "hosts[0]/satp_rules")), 2);
    json_decref(j);
}

TEST_WITH(test_commit_counts, tl_db_setup_open, tl_db_teardown)
{
    static const int64_t want[DB_NKINDS] = {
        [DB_DATASTORE] = 2, [DB_STORAGE_POD] = 1, [DB_VM] = 1,           [DB_VDISK] = 2,
        [DB_SNAPSHOT] = 2,  [DB_HOST] = 1,        [DB_VNIC] = 2,         [DB_VSWITCH] = 1,
        [DB_DVSWITCH] = 1,  [DB_ISCSI_HBA] = 1,   [DB_ISCSI_TARGET] = 2, [DB_LUN] = 2,
        [DB_LUN_PATH] = 3,
    };
    struct tl_dbfile *fx = *state;
    struct db *db = fx->db;
    int64_t counts[DB_NKINDS];
    char *cj;
    int k;

    memset(counts, 0xff, sizeof(counts));
    snapshot(db, "vc-a", &default_estate, counts);
    for (k = 0; k < DB_NKINDS; k++) {
        if (counts[k] != want[k])
            fail_msg("%s: got %lld, want %lld", db_kind_name(k), (long long)counts[k],
                     (long long)want[k]);
    }
    assert_string_equal(db_kind_name(DB_LUN_PATH), "lun_paths");
    assert_string_equal(db_kind_name(DB_NKINDS), "unknown");
    /* The same counts are in the poll record. */
    {
        sqlite3 *h;
        sqlite3_stmt *st;
        assert_int_equal(sqlite3_open(fx->path, &h), SQLITE_OK);
        assert_int_equal(sqlite3_prepare_v2(h, "SELECT counts_json FROM polls", -1, &st, NULL),
                         SQLITE_OK);
        assert_int_equal(sqlite3_step(st), SQLITE_ROW);
        cj = strdup((const char *)sqlite3_column_text(st, 0));
        sqlite3_finalize(st);
        sqlite3_close(h);
    }
    json_t *pc = json_loads(cj, 0, NULL);
    assert_non_null(pc);
    assert_int_equal(json_integer_value(json_object_get(pc, "datastores")), 2);
    assert_int_equal(json_integer_value(json_object_get(pc, "lun_paths")), 3);
    json_decref(pc);
    free(cj);
}

/* A full poll's rows go through the writer thread (db/stage.c) in blocks, at most a few in
 * flight: many more rows than that (the sink waiting for blocks to come back), a row larger
 * than a block, a row without its key and NULL numbers all arrive as the sink gave them. */
TEST_WITH(test_staged_through_the_writer, tl_db_setup_open, tl_db_teardown)
{
    enum { NPATHS = 40000, IQN = 200, BIG_URL = 1 << 20 };
    struct tl_dbfile *fx = *state;
    struct db_snapshot *snap = NULL;
    struct vim_sink sink;
    int64_t counts[DB_NKINDS];
    char name[32], adapter[32], iqn[IQN + 1], *url = malloc(BIG_URL + 1);

    assert_non_null(url);
    memset(url, 'u', BIG_URL);
    url[BIG_URL] = '\0';
    assert_int_equal(db_snapshot_begin(fx->db, "vc-a", NULL, &snap, &sink), 0);
    struct vim_datastore ds = {.moref = "datastore-1", .name = "big", .type = "NFS", .url = url,
                               .capacity = 5 * GIB, .free_space = 0,
                               .uncommitted = VIM_UNKNOWN, .accessible = 1};
    assert_int_equal(sink.datastore(sink.ctx, &ds), 0);
    for (int i = 0; i < NPATHS; i++) {
        snprintf(name, sizeof(name), "p-%d", i);
        snprintf(adapter, sizeof(adapter), "vmhba%d", i);
        memset(iqn, 'a' + i % 26, IQN);
        iqn[IQN] = '\0';
        struct vim_lun_path p = {.host = "host-1", .lun = "naa.1", .name = name,
                                 .state = i % 2 ? "standby" : "active", .adapter = adapter,
                                 .target_iqn = iqn};
        assert_int_equal(sink.lun_path(sink.ctx, &p), 0);
    }
    struct vim_lun_path keyless = {.host = "host-1", .lun = "naa.1", .state = "dead"};
    assert_int_equal(sink.lun_path(sink.ctx, &keyless), 0);
    assert_int_equal(db_snapshot_commit(snap, 1000, 2000, counts), 0);
    free(url);

    assert_int_equal(counts[DB_LUN_PATH], NPATHS);
    assert_int_equal(raw_int(fx->path, "SELECT count(*) FROM lun_paths WHERE state = 'dead'"), 0);
    assert_int_equal(raw_int(fx->path, "SELECT sum(length(target_iqn)) FROM lun_paths"),
                     (int64_t)NPATHS * IQN);
    assert_int_equal(raw_int(fx->path, "SELECT count(*) FROM lun_paths WHERE adapter = "
                                       "'vmhba' || substr(name, 3) AND target_wwpn IS NULL"),
                     NPATHS);
    assert_int_equal(raw_int(fx->path, "SELECT count(*) FROM lun_paths WHERE state = 'standby'"),
                     NPATHS / 2);
    assert_int_equal(raw_int(fx->path, "SELECT length(url) FROM datastores"), BIG_URL);
    assert_int_equal(raw_int(fx->path, "SELECT capacity FROM datastores"), 5 * GIB);
    assert_int_equal(raw_int(fx->path, "SELECT uncommitted IS NULL FROM datastores"), 1);
}

/* db/stage.c promises its blocks hold at most 8 x 256 KiB outside an oversized row's way
 * through: a block grown for a 1 MiB row is given back once written, not kept at 1 MiB and
 * refilled with small rows for the rest of the poll. */
TEST_WITH(test_writer_gives_back_a_block_grown_for_a_large_row, tl_db_setup_open, tl_db_teardown)
{
    enum { BIG_URL = 1 << 20, NPATHS = 20000, BOUND = 8 * 256 * 1024 };
    struct tl_dbfile *fx = *state;
    struct db_snapshot *snap = NULL;
    struct vim_sink sink;
    char name[32], iqn[201], *url = malloc(BIG_URL + 1);

    assert_non_null(url);
    memset(url, 'u', BIG_URL);
    url[BIG_URL] = '\0';
    memset(iqn, 'i', sizeof(iqn) - 1);
    iqn[sizeof(iqn) - 1] = '\0';
    assert_int_equal(db_snapshot_begin(fx->db, "vc-a", NULL, &snap, &sink), 0);
    struct vim_datastore ds = {.moref = "datastore-1", .name = "big", .type = "NFS", .url = url,
                               .capacity = 5 * GIB, .uncommitted = VIM_UNKNOWN, .accessible = 1};
    assert_int_equal(sink.datastore(sink.ctx, &ds), 0);
    free(url);
    /* Some 5 MB of small rows after it: every block goes to the writer and back several
     * times, the grown one first. */
    for (int i = 0; i < NPATHS; i++) {
        snprintf(name, sizeof(name), "p-%d", i);
        struct vim_lun_path p = {.host = "host-1", .lun = "naa.1", .name = name,
                                 .state = "active", .adapter = "vmhba1", .target_iqn = iqn};
        assert_int_equal(sink.lun_path(sink.ctx, &p), 0);
    }
    size_t held = db_snapshot_stage_memory(snap);
    assert_true(held > 0);
    if (held > BOUND)
        fail_msg("the writer's blocks hold %zu bytes, over the %d promised", held, BOUND);
    assert_int_equal(db_snapshot_commit(snap, 1000, 2000, NULL), 0);
    assert_int_equal(raw_int(fx->path, "SELECT length(url) FROM datastores"), BIG_URL);
    assert_int_equal(raw_int(fx->path, "SELECT count(*) FROM lun_paths"), NPATHS);
}

#ifdef VSL_TEST_HOOKS
/* The writer thread refuses row 1000 (VSLINT_DEBUG_STAGE_FAIL_ROW, as a full disk would): the
 * sink is told at its next row, not at the end of the poll; every later row is refused; the
 * error names the table, the row and SQLite's words; the previous snapshot stays. */
TEST_WITH(test_writer_failure_ends_the_poll_and_keeps_the_snapshot, tl_db_setup_open,
          tl_db_teardown)
{
    enum { FAIL_ROW = 1000, NPATHS = 200000 };
    struct tl_dbfile *fx = *state;
    struct db_snapshot *snap = NULL;
    struct vim_sink sink;
    char name[32];
    int i, r = 0;

    snapshot(fx->db, "vc-a", &default_estate, NULL);
    int64_t before = raw_int(fx->path, "SELECT count(*) FROM datastores");
    assert_true(before > 0);
    setenv("VSLINT_DEBUG_STAGE_FAIL_ROW", "1000", 1);
    r = db_snapshot_begin(fx->db, "vc-a", NULL, &snap, &sink);
    unsetenv("VSLINT_DEBUG_STAGE_FAIL_ROW");
    assert_int_equal(r, 0);
    assert_null(db_snapshot_error(snap));
    for (i = 0; i < NPATHS && r == 0; i++) {
        snprintf(name, sizeof(name), "p-%d", i);
        struct vim_lun_path p = {.host = "host-1", .lun = "naa.1", .name = name,
                                 .state = "active", .adapter = "vmhba1"};
        r = sink.lun_path(sink.ctx, &p);
    }
    /* Told within the blocks in flight (8 x 256 KiB of rows of some 60 bytes), long before
     * the 200,000th row. */
    assert_int_equal(r, -ENOSPC);
    assert_true(i > FAIL_ROW);
    assert_true(i < FAIL_ROW + 8 * 256 * 1024 / 40);
    const char *e = db_snapshot_error(snap);
    assert_non_null(e);
    assert_string_equal(e, "cannot stage row 1000 of the poll (lun_paths): database or disk "
                           "is full");
    struct vim_datastore ds = {.moref = "datastore-9", .name = "late", .type = "VMFS",
                               .uncommitted = VIM_UNKNOWN, .accessible = 1};
    assert_int_equal(sink.datastore(sink.ctx, &ds), -ENOSPC);
    assert_int_equal(db_snapshot_sync(snap), -ENOSPC);
    db_snapshot_abort(snap);
    assert_int_equal(raw_int(fx->path, "SELECT count(*) FROM datastores"), before);
    assert_int_equal(raw_int(fx->path, "SELECT count(*) FROM datastores WHERE name = 'late'"), 0);
    /* The connection goes on: the next poll is stored. */
    snapshot(fx->db, "vc-a", &default_estate, NULL);
    assert_int_equal(raw_int(fx->path, "SELECT count(*) FROM datastores"), before);
}
#endif

TEST_WITH(test_vcenters_side_by_side, tl_db_setup_open, tl_db_teardown)
{
    struct tl_dbfile *fx = *state;
    struct db *db = fx->db;
    const struct variant b = {"B_DS", 7 * GIB, 1};
    const struct variant a2 = {"LocalDS_0_renamed", 50 * GIB, 0};
    json_t *j;

    /* Both vCenters use the same morefs, as real ones do. */
    snapshot(db, "vc-a", &default_estate, NULL);
    snapshot(db, "vc-b", &b, NULL);
    j = inventory(db, NULL);
    assert_int_equal(json_array_size(json_object_get(j, "vcenters")), 2);
    assert_jpath(j, "vcenters[0]/name", "\"vc-a\"");
    assert_jpath(j, "vcenters[name=vc-a]/datastores[moref=datastore-1]/name", "\"LocalDS_0\"");
    assert_jpath(j, "vcenters[name=vc-b]/datastores[moref=datastore-1]/name", "\"B_DS\"");
    json_decref(j);

    /* A's second poll replaces A's rows: datastore-2 is gone from A, and B keeps its own. */
    snapshot(db, "vc-a", &a2, NULL);
    j = inventory(db, NULL);
    assert_jpath(j, "vcenters[name=vc-a]/datastores[moref=datastore-1]/free_space", "53687091200");
    assert_null(jpath(j, "vcenters[name=vc-a]/datastores[moref=datastore-2]"));
    assert_int_equal(json_array_size(jpath(j, "vcenters[name=vc-a]/datastores")), 1);
    assert_jpath(j, "vcenters[name=vc-b]/datastores[moref=datastore-2]/name", "\"nfs01\"");
    assert_jpath(j, "vcenters[name=vc-b]/datastores[moref=datastore-1]/free_space", "7516192768");
    assert_int_equal(json_array_size(jpath(j, "vcenters[name=vc-b]/vms[0]/disks")), 2);
    json_decref(j);

    /* Asking for one vCenter gives only that one; an unknown one is an error, not an empty
     * answer that looks like an empty estate. */
    j = inventory(db, "vc-b");
    assert_int_equal(json_array_size(json_object_get(j, "vcenters")), 1);
    assert_jpath(j, "vcenters[0]/name", "\"vc-b\"");
    json_decref(j);
    j = NULL;
    assert_int_equal(db_inventory_json(db, "vc-nope", &j), -VSL_ENOTFOUND);
    assert_null(j);
}

TEST_WITH(test_abort_keeps_previous, tl_db_setup, tl_db_teardown)
{
    struct tl_dbfile *fx = *state;
    struct db *db = open_db(fx), *reader = open_db(fx);
    const struct variant other = {"Other", 1 * GIB, 0};
    struct db_snapshot *snap = NULL;
    struct vim_sink sink;
    json_t *j;

    snapshot(db, "vc-a", &default_estate, NULL);
    assert_int_equal(db_snapshot_begin(db, "vc-a", NULL, &snap, &sink), 0);
    fill(&sink, &other);
    /* Meanwhile another connection (the API) still reads the whole previous snapshot. */
    j = inventory(reader, "vc-a");
    assert_jpath(j, "vcenters[0]/datastores[moref=datastore-1]/name", "\"LocalDS_0\"");
    assert_int_equal(json_array_size(jpath(j, "vcenters[0]/datastores")), 2);
    json_decref(j);
    db_snapshot_abort(snap);
    db_snapshot_abort(NULL);

    j = inventory(db, "vc-a");
    assert_jpath(j, "vcenters[0]/datastores[moref=datastore-1]/name", "\"LocalDS_0\"");
    assert_jpath(j, "vcenters[0]/datastores[moref=datastore-2]/name", "\"nfs01\"");
    assert_jpath(j, "vcenters[0]/url", "\"https://vc.example/sdk\"");
    json_decref(j);
    assert_int_equal(raw_int(fx->path, "SELECT count(*) FROM polls"), 1);
    db_close(reader);
    db_close(db);
}

TEST_WITH(test_poll_failed_keeps_inventory, setup_polled, tl_db_teardown)
{
    struct tl_dbfile *fx = *state;
    struct db *db = fx->db;
    json_t *j;

    assert_int_equal(
        db_poll_failed(db, "vc-a", NULL, 1700000100000LL, 1700000130000LL, "connection refused"),
        0);
    j = inventory(db, "vc-a");
    assert_jpath(j, "vcenters[0]/last_poll/ok", "false");
    assert_jpath(j, "vcenters[0]/last_poll/error", "\"connection refused\"");
    assert_jpath(j, "vcenters[0]/last_poll/duration_ms", "30000");
    assert_jpath(j, "vcenters[0]/url", "\"https://vc.example/sdk\"");
    assert_jpath(j, "vcenters[0]/datastores[moref=datastore-1]/name", "\"LocalDS_0\"");
    json_decref(j);
    assert_int_equal(raw_int(fx->path, "SELECT last_success_ms FROM vcenters"), 1700000012345LL);

    /* A vCenter that never answered is listed, with no inventory. */
    assert_int_equal(db_poll_failed(db, "vc-new", "https://new/sdk", 1, 2, "TLS error"), 0);
    j = inventory(db, "vc-new");
    assert_jpath(j, "vcenters[0]/datastores", "[]");
    assert_jpath(j, "vcenters[0]/last_poll/ok", "false");
    json_decref(j);
    assert_int_equal(raw_int(fx->path, "SELECT count(*) FROM vcenters WHERE name = 'vc-new'"
                                       " AND last_success_ms IS NULL"),
                     1);
}

TEST_WITH(test_interrupted_transaction, tl_db_setup, tl_db_teardown)
{
    struct tl_dbfile *fx = *state;
    struct db *db = open_db(fx);
    sqlite3 *h;
    pid_t pid;
    int status;
    json_t *j;

    snapshot(db, "vc-a", &default_estate, NULL);
    db_close(db);

    /* A connection that began a write and went away without committing. */
    assert_int_equal(sqlite3_open(fx->path, &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h,
                                  "BEGIN; DELETE FROM datastores WHERE vcenter = 'vc-a';"
                                  " INSERT INTO datastores (vcenter, moref, name)"
                                  " VALUES ('vc-a', 'datastore-99', 'half');",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(h);

    /* A poller killed mid-snapshot: the process dies with rows written and no COMMIT. */
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct db *cdb = NULL;
        struct db_snapshot *snap = NULL;
        struct vim_sink sink;
        const struct variant e = {"half-written", 1, 0};
        if (db_open(fx->path, &cdb, NULL) < 0 ||
            db_snapshot_begin(cdb, "vc-a", NULL, &snap, &sink) < 0)
            _exit(1);
        fill(&sink, &e);
        _exit(0); /* like kill -9: no rollback, no close */
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);

    db = open_db(fx);
    j = inventory(db, "vc-a");
    assert_jpath(j, "vcenters[0]/datastores[moref=datastore-1]/name", "\"LocalDS_0\"");
    assert_int_equal(json_array_size(jpath(j, "vcenters[0]/datastores")), 2);
    assert_null(jpath(j, "vcenters[0]/datastores[moref=datastore-99]"));
    json_decref(j);
    assert_int_equal(raw_int(fx->path, "SELECT count(*) FROM pragma_integrity_check"
                                       " WHERE integrity_check = 'ok'"),
                     1);
    /* And the next poll writes normally. */
    snapshot(db, "vc-a", &default_estate, NULL);
    db_close(db);
}

TEST_WITH(test_migrates_old_database, tl_db_setup, tl_db_teardown)
{
    struct tl_dbfile *fx = *state;
    struct db *db;

    /* A database file from before vslint had a schema: valid SQLite, user_version 0, no tables. */
    raw_exec(fx->path, "PRAGMA user_version = 0; CREATE TABLE t(x); DROP TABLE t;");
    assert_int_equal(raw_int(fx->path, "PRAGMA user_version"), 0);
    assert_int_equal(raw_int(fx->path, "SELECT count(*) FROM sqlite_master"), 0);
    db = open_db(fx);
    assert_int_equal(raw_int(fx->path, "PRAGMA user_version"), db_schema_version());
    assert_int_equal(
        raw_int(fx->path, "SELECT count(*) FROM sqlite_master WHERE name = 'findings'"), 1);
    snapshot(db, "vc-a", &default_estate, NULL);
    db_close(db);
}

/* Migrates the database file at path to version target (from nothing: each migration in
 * turn, as the vslint of each version left it). */
static void migrate_file(const char *path, int target)
{
    sqlite3 *h = NULL;
    char *err = NULL;

    assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
    if (db_migrate_to(h, target, &err) < 0)
        fail_msg("migrating to version %d: %s", target, err ? err : "?");
    sqlite3_close(h);
}

/* Version 10 gave polls a mode and a collector version, and findings the polls that first saw
 * and resolved them: a version-9 database keeps its polls, all of them full reads (there were
 * no others), and its findings, whose polls are not known. Built at version 9, the last before
 * that, with rows as vslint then wrote them. */
TEST_WITH(test_migration10_polls_were_full, tl_db_setup, tl_db_teardown)
{
    struct tl_dbfile *fx = *state;
    json_t *rows = NULL, *f = NULL;

    migrate_file(fx->path, 9);
    raw_exec(fx->path,
             "INSERT INTO polls (vcenter, started_ms, finished_ms, ok, error, counts_json) VALUES"
             "  ('vc-a', 1700000000000, 1700000030000, 1, NULL, '{\"vms\":5}'),"
             "  ('vc-a', 1700000100000, 1700000100500, 0, 'connection refused', NULL);"
             "INSERT INTO findings (fingerprint, check_id, vcenter, object_name, severity, status,"
             "  first_seen_ms, last_seen_ms) VALUES ('0123456789abcdef', 'snapshots', 'vc-a',"
             "  'vm-1', 'warning', 'open', 1700000030000, 1700000030000);");

    struct db *db = open_db(fx);
    assert_int_equal(raw_int(fx->path, "PRAGMA user_version"), db_schema_version());
    assert_int_equal(raw_int(fx->path, "SELECT count(*) FROM polls WHERE mode = 'full'"
                                       " AND version IS NULL"),
                     2);
    assert_int_equal(raw_int(fx->path, "SELECT count(*) FROM polls"), 2);
    /* The history counts them as full reads, and the last good one as the last full read. */
    assert_int_equal(db_history_polls(db, NULL, 1700000200000, 1, &rows), 0);
    json_t *want = json_pack(
        "[{s:s,s:i,s:i,s:i,s:i,s:i,s:{s:i,s:i,s:i,s:i},s:{s:i,s:i,s:i,s:i},s:s}]", "vcenter",
        "vc-a", "day", 0, "polls", 2, "failed", 1, "mean_ms", 15250, "max_ms", 30000, "full",
        "polls", 2, "failed", 1, "mean_ms", 15250, "max_ms", 30000, "incremental", "polls", 0,
        "failed", 0, "mean_ms", 0, "max_ms", 0, "last_full", "2023-11-14T22:13:50Z");
    if (!json_equal(rows, want)) {
        char *got = json_dumps(rows, JSON_COMPACT);
        fail_msg("history polls: %s", got);
    }
    json_decref(want);
    json_decref(rows);
    /* The finding is kept; which poll saw it is not known. */
    assert_int_equal(db_finding_get(db, "0123456789abcdef", &f), 0);
    assert_true(json_is_null(json_object_get(f, "first_seen_by")));
    assert_true(json_is_null(json_object_get(f, "resolved_by")));
    json_decref(f);
    db_close(db);
}

/* Version 13 keeps an open finding's last_seen as its vCenter's last evaluation (the
 * evaluations table) instead of rewriting its row each time. A version-12 database has no such
 * table: after the migration every finding reads the last_seen its row holds, as it did, and
 * "new" is what it was, until the next evaluation records its time. */
TEST_WITH(test_migration13_last_seen_as_stored, tl_db_setup, tl_db_teardown)
{
    struct tl_dbfile *fx = *state;
    /* fingerprint, status, first and last seen, unverified since, resolved at; what the
     * findings read then (status, last_seen). */
    static const struct {
        const char *fp, *status;
        int64_t first, last, unverified, resolved;
        const char *want_status, *want_last;
    } rows[] = {
        {"00000000000000a1", "open", 1700000000000, 1700000100000, 0, 0, "open",
         "2023-11-14T22:15:00Z"},
        {"00000000000000a2", "open", 1700000100000, 1700000100000, 0, 0, "new",
         "2023-11-14T22:15:00Z"},
        {"00000000000000a3", "waived", 1700000000000, 1700000100000, 0, 0, "waived",
         "2023-11-14T22:15:00Z"},
        {"00000000000000a4", "open", 1700000000000, 1700000000000, 1700000100000, 0, "open",
         "2023-11-14T22:13:20Z"},
        {"00000000000000a5", "resolved", 1700000000000, 1700000000000, 0, 1700000100000,
         "resolved", "2023-11-14T22:13:20Z"},
    };
    char sql[512];

    migrate_file(fx->path, 12);
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        snprintf(sql, sizeof(sql),
                 "INSERT INTO findings (fingerprint, check_id, vcenter, object_name, severity,"
                 " status, first_seen_ms, last_seen_ms, unverified_since_ms, resolved_at_ms)"
                 " VALUES ('%s', 'snapshots', 'vc-a', 'vm-%zu', 'warning', '%s', %lld, %lld,"
                 " nullif(%lld, 0), nullif(%lld, 0))",
                 rows[i].fp, i, rows[i].status, (long long)rows[i].first,
                 (long long)rows[i].last, (long long)rows[i].unverified,
                 (long long)rows[i].resolved);
        raw_exec(fx->path, sql);
    }
    struct db *db = open_db(fx);
    assert_int_equal(raw_int(fx->path, "PRAGMA user_version"), db_schema_version());
    assert_int_equal(raw_int(fx->path, "SELECT count(*) FROM evaluations"), 0);
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        json_t *f = NULL;
        assert_int_equal(db_finding_get(db, rows[i].fp, &f), 0);
        assert_string_equal(json_string_value(json_object_get(f, "status")), rows[i].want_status);
        assert_string_equal(json_string_value(json_object_get(f, "last_seen")),
                            rows[i].want_last);
        json_decref(f);
    }
    db_close(db);
}

/* Schema 6 to 7 rebuilds the iSCSI tables with the target's IQN in their keys: the snapshot
 * already stored survives, static targets keep their IQN and options name it too. The
 * version 6 database is made by migrations 1 to 6, so its tables are those version 6 left. */
TEST_WITH(test_migration7_keeps_iscsi, tl_db_setup, tl_db_teardown)
{
    struct tl_dbfile *fx = *state;

    migrate_file(fx->path, 6);
    assert_int_equal(raw_int(fx->path, "PRAGMA user_version"), 6);
    raw_exec(fx->path,
             "INSERT INTO iscsi_targets VALUES"
             "  ('vc-a', 'host-1', 'vmhba64', 'send', '10.0.0.1:3260', '10.0.0.1', 3260, NULL),"
             "  ('vc-a', 'host-1', 'vmhba64', 'static', '10.0.0.2:3260', '10.0.0.2', 3260,"
             "   'iqn.2001-05.com.array:tgt1');"
             "INSERT INTO iscsi_options VALUES"
             "  ('vc-a', 'host-1', 'vmhba64', '', '', 'DelayedAck', 'false', 0),"
             "  ('vc-a', 'host-1', 'vmhba64', 'send', '10.0.0.1:3260', 'DelayedAck', 'true', 0),"
             "  ('vc-a', 'host-1', 'vmhba64', 'static', '10.0.0.2:3260', 'DelayedAck', 'true', 1);");
    migrate_file(fx->path, 7);
    assert_int_equal(raw_int(fx->path, "PRAGMA user_version"), 7);
    assert_int_equal(raw_int(fx->path, "SELECT count(*) FROM iscsi_targets WHERE kind = 'send'"
                                       " AND iscsi_name = '' AND port = 3260"),
                     1);
    assert_int_equal(raw_int(fx->path, "SELECT count(*) FROM iscsi_targets WHERE kind = 'static'"
                                       " AND iscsi_name = 'iqn.2001-05.com.array:tgt1'"
                                       " AND address = '10.0.0.2' AND parent IS NULL"),
                     1);
    assert_int_equal(raw_int(fx->path, "SELECT count(*) FROM iscsi_options WHERE kind = 'static'"
                                       " AND iscsi_name = 'iqn.2001-05.com.array:tgt1'"
                                       " AND value = 'true' AND inherited = 1"),
                     1);
    assert_int_equal(raw_int(fx->path, "SELECT count(*) FROM iscsi_options WHERE iscsi_name = ''"),
                     2);
    assert_int_equal(
        raw_int(fx->path, "SELECT count(*) FROM pragma_table_info('satp_rules')"
                          " WHERE name IN ('device', 'driver', 'transport', 'claim_options')"),
        4);
}

/* Appends the rows of sql (?1 = arg) to b, one line each, columns separated by '|'. */
static void dump_rows(sqlite3 *h, struct vsl_buf *b, const char *sql, const char *arg)
{
    sqlite3_stmt *st = NULL;

    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK)
        fail_msg("%s: %s", sql, sqlite3_errmsg(h));
    if (arg)
        assert_int_equal(sqlite3_bind_text(st, 1, arg, -1, SQLITE_TRANSIENT), SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
        for (int i = 0; i < sqlite3_column_count(st); i++) {
            const char *v = (const char *)sqlite3_column_text(st, i);
            assert_int_equal(vsl_buf_printf(b, "%s%s", i ? "|" : "", v ? v : "NULL"), 0);
        }
        assert_int_equal(vsl_buf_addstr(b, "\n"), 0);
    }
    sqlite3_finalize(st);
}

/* What a database's schema is, as text: every table's columns (name, type, NOT NULL, default,
 * place in the key, generated or not) and rowid-ness, every index's columns. The caller frees
 * it. */
static char *schema_of(sqlite3 *h)
{
    struct vsl_buf b, names;
    char *save = NULL, *name;

    vsl_buf_init(&b, 1 << 20);
    vsl_buf_init(&names, 1 << 16);
    dump_rows(h, &names,
              "SELECT type || ' ' || name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"
              " ORDER BY type, name",
              NULL);
    for (name = strtok_r(names.data, "\n", &save); name; name = strtok_r(NULL, "\n", &save)) {
        assert_int_equal(vsl_buf_printf(&b, "%s\n", name), 0);
        if (strncmp(name, "table ", 6) == 0) {
            dump_rows(h, &b,
                      "SELECT name, type, \"notnull\", dflt_value, pk, hidden"
                      " FROM pragma_table_xinfo(?1) ORDER BY cid",
                      name + 6);
            dump_rows(h, &b, "SELECT wr, strict FROM pragma_table_list(?1)", name + 6);
        } else {
            dump_rows(h, &b,
                      "SELECT i.seqno, i.name, i.desc, i.key, m.tbl_name FROM pragma_index_xinfo(?1) i,"
                      " sqlite_master m WHERE m.name = ?1 ORDER BY i.seqno",
                      name + 6);
        }
    }
    vsl_buf_free(&names);
    return vsl_buf_take(&b);
}

/* The schema of a database made at version from and migrated to the current one. */
static char *migrated_schema(const char *path, int from)
{
    sqlite3 *h = NULL;
    char *err = NULL, *s;

    unlink(path);
    assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
    if (db_migrate_to(h, from, &err) < 0 || db_migrate(h, &err) < 0)
        fail_msg("migrating from version %d: %s", from, err ? err : "?");
    assert_int_equal(raw_int(path, "PRAGMA user_version"), db_schema_version());
    s = schema_of(h);
    sqlite3_close(h);
    return s;
}

/* The column lists are the schema: a new database has each table's columns in list order, with
 * the declared types, NOT NULL and key, and every index. */
TEST_WITH(test_schema_is_the_column_lists, tl_db_setup_open, tl_db_teardown)
{
    struct tl_dbfile *fx = *state;
    struct vsl_buf want;
    char sql[160];

    vsl_buf_init(&want, 1 << 20);
    for (int t = 0; t < db_ntables; t++) {
        const struct db_table_def *d = &db_tables[t];
        struct vsl_buf got;
        int pk = 0, keyed = 0;
        for (int c = 0; c < d->ncols; c++)
            keyed |= d->cols[c].flags & DB_PK;
        vsl_buf_reset(&want);
        if (d->inventory)
            assert_int_equal(vsl_buf_printf(&want, "vcenter|TEXT|1|%d\n", keyed ? 1 : 0), 0);
        for (int c = 0; c < d->ncols; c++) {
            const struct db_column *col = &d->cols[c];
            const char *type = col->type == DB_TEXT || col->type == DB_FN ? "TEXT" : "INTEGER";
            int nn = (col->flags & DB_NN) != 0;
            char decl_type[16];
            if (col->type == DB_RAW) {
                /* the declared type is the declaration's first word */
                snprintf(decl_type, sizeof(decl_type), "%.*s", (int)strcspn(col->decl, " "),
                         col->decl);
                type = decl_type;
                nn = strstr(col->decl, "NOT NULL") != NULL;
            }
            assert_int_equal(vsl_buf_printf(&want, "%s|%s|%d|%d\n", col->name, type, nn,
                                            col->flags & DB_PK ? ++pk + d->inventory : 0),
                             0);
        }
        vsl_buf_init(&got, 1 << 16);
        sqlite3 *h;
        assert_int_equal(sqlite3_open(fx->path, &h), SQLITE_OK);
        snprintf(sql, sizeof(sql),
                 "SELECT name, type, \"notnull\", pk FROM pragma_table_xinfo('%s') ORDER BY cid",
                 d->name);
        dump_rows(h, &got, sql, NULL);
        sqlite3_close(h);
        if (!got.data || strcmp(got.data, want.data) != 0)
            fail_msg("table %s:\n%s\nwant\n%s", d->name, got.data ? got.data : "(none)",
                     want.data);
        vsl_buf_free(&got);
    }
    for (int i = 0; i < db_nindexes; i++) {
        if (raw_int_arg(fx->path, "SELECT count(*) FROM sqlite_master WHERE type = 'index'"
                                  " AND name = ?1", db_indexes[i].name) != 1)
            fail_msg("index %s missing", db_indexes[i].name);
    }
    vsl_buf_free(&want);
}

/* A database made by any earlier version migrates to exactly the schema a new one gets. */
TEST_WITH(test_migrations_reach_the_new_schema, tl_db_setup, tl_db_teardown)
{
    struct tl_dbfile *fx = *state;
    sqlite3 *h = NULL;
    char *fresh;

    db_close(open_db(fx));
    assert_int_equal(sqlite3_open(fx->path, &h), SQLITE_OK);
    fresh = schema_of(h);
    sqlite3_close(h);
    assert_non_null(strstr(fresh, "table datastores\n"));
    for (int v = 1; v < db_schema_version(); v++) {
        char *old = migrated_schema(fx->path, v);
        if (strcmp(old, fresh) != 0)
            fail_msg("migrated from version %d:\n%s\nnew database:\n%s", v, old, fresh);
        free(old);
    }
    free(fresh);
}

TEST_WITH(test_open_refuses_bad_files, tl_db_setup, tl_db_teardown)
{
    struct tl_dbfile *fx = *state;
    struct db *db = (struct db *)1;
    char *err = NULL;
    FILE *f;

    /* A schema from a newer vslint: refuse rather than write into it. */
    raw_exec(fx->path, "PRAGMA user_version = 999");
    assert_true(db_open(fx->path, &db, &err) < 0);
    assert_null(db);
    assert_non_null(err);
    assert_non_null(strstr(err, "999"));
    free(err);
    err = NULL;
    tl_db_teardown(state);
    tl_db_setup(state);
    fx = *state;

    /* Not a database at all. */
    f = fopen(fx->path, "w");
    assert_non_null(f);
    fputs("this is not an SQLite database, it is a configuration file by mistake\n", f);
    for (int i = 0; i < 100; i++)
        fputs("padding padding padding padding padding padding padding padding\n", f);
    fclose(f);
    assert_int_equal(db_open(fx->path, &db, &err), -VSL_EDB);
    assert_non_null(err);
    assert_non_null(strstr(err, "not a database"));
    free(err);

    /* A directory that does not exist. */
    err = NULL;
    assert_true(db_open("/nonexistent-vslint-dir/x.db", &db, &err) < 0);
    assert_non_null(err);
    free(err);
}

TEST_WITH(test_text_rendering, tl_db_setup_open, tl_db_teardown)
{
    static const char *const want[] = {
        "vCenter vc-a",
        "last poll: 2023-11-14T22:13:20Z, took 12.3 s, ok",
        "LocalDS_0",
        "pod-gold",
        "INACCESSIBLE",
        "vmknic vmk1     MTU 9000  iSCSI-A / vSwitch1",
        "DVS DSwitch-iSCSI / dvportgroup-5",
        "DelayedAck false (inherited)",
        "DelayedAck true",
        "naa.600a0001",
        "1/2 active, dead: vmhba64:C1:T0:L1",
        "unknown",
        "claim rule (user): VMW_SATP_ALUA vendor NETAPP model - -> VMW_PSP_RR iops=1",
        "1 system claim rules",
        "not read: iscsi-bindings",
        "eagerzeroedthick",
        "ParaVirtualSCSIController",
    };
    struct tl_dbfile *fx = *state;
    struct db *db = fx->db;
    const struct variant longname = {
        "a-datastore-name-that-goes-on-and-on-and-on-well-past-any-reasonable-column-width-"
        "and-then-some-more-just-to-be-sure-it-overflows",
        100 * GIB, 1};
    char *text = NULL, *line, *save = NULL;
    size_t len = 0, i;
    json_t *j;
    FILE *f;

    snapshot(db, "vc-a", &default_estate, NULL);
    snapshot(db, "vc-b", &longname, NULL);
    j = inventory(db, NULL);
    f = open_memstream(&text, &len);
    assert_non_null(f);
    assert_int_equal(vsl_inventory_text(j, f), 0);
    fclose(f);
    for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        if (!strstr(text, want[i]))
            fail_msg("text lacks \"%s\":\n%s", want[i], text);
    }
    /* A disk shows its datastore by name, not moref. */
    assert_non_null(strstr(text, "thin             LocalDS_0"));
    for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (strlen(line) >= 120)
            fail_msg("line too long (%zu): %s", strlen(line), line);
    }
    free(text);
    json_decref(j);

    j = json_object();
    assert_int_equal(vsl_inventory_text(j, stdout), -EINVAL);
    json_decref(j);
}

/* ---- the kit: db_run(), db_each() ------------------------------------------------------- */

/* A db_row_fn that appends "n:s" of each row to a string and fails on the row whose n is
 * stop_at (0: none). */
struct seen {
    char rows[64];
    int calls, stop_at;
};

static int see_row(sqlite3_stmt *st, void *ctx)
{
    struct seen *s = ctx;
    const char *t = (const char *)sqlite3_column_text(st, 1);
    size_t len = strlen(s->rows);

    s->calls++;
    snprintf(s->rows + len, sizeof(s->rows) - len, "%s%lld:%s", len ? " " : "",
             (long long)sqlite3_column_int64(st, 0), t ? t : "NULL");
    return sqlite3_column_int(st, 0) == s->stop_at ? -E2BIG : 0;
}

TEST_WITH(test_kit_run_and_each, tl_db_setup, tl_db_teardown)
{
    static const char sel[] = "SELECT n, s FROM t WHERE n >= ?1 ORDER BY n";
    struct tl_dbfile *fx = *state;
    struct seen all = {0}, stopped = {.stop_at = 2}, none = {0}, bad = {0};
    sqlite3 *h = NULL;

    assert_int_equal(sqlite3_open(fx->path, &h), SQLITE_OK);
    assert_int_equal(db_exec(h, "CREATE TABLE t (n INTEGER NOT NULL, s TEXT)"), 0);
    /* db_run binds its values in order (DB_TEXT(NULL) as NULL) and runs the statement. */
    assert_int_equal(db_run(h, "INSERT INTO t VALUES (?1, ?2)", "w", DB_INT(3), DB_TEXT("c")), 0);
    assert_int_equal(db_run(h, "INSERT INTO t VALUES (?1, ?2)", "w", DB_INT(1), DB_TEXT("a")), 0);
    assert_int_equal(db_run(h, "INSERT INTO t VALUES (?1, ?2)", "w", DB_INT(2), DB_TEXT(NULL)), 0);
    /* A statement that fails, or that returns a row where none was due, is an error, never 0. */
    assert_int_equal(db_run(h, "INSERT INTO t VALUES (?1, ?2)", "w", DB_NULL, DB_TEXT("x")),
                     -VSL_EDB);
    assert_true(db_run(h, "SELECT n FROM t WHERE n = ?1", "w", DB_INT(1)) < 0);
    assert_true(db_run(h, "INSERT INTO nowhere VALUES (?1)", "w", DB_INT(1)) < 0);

    /* db_each hands every row to the function, in the statement's order. */
    assert_int_equal(db_each(h, sel, "r", see_row, &all, DB_INT(1)), 0);
    assert_string_equal(all.rows, "1:a 2:NULL 3:c");
    /* The function's error ends the walk and is what db_each returns. */
    assert_int_equal(db_each(h, sel, "r", see_row, &stopped, DB_INT(1)), -E2BIG);
    assert_string_equal(stopped.rows, "1:a 2:NULL");
    assert_int_equal(stopped.calls, 2);
    /* No rows: 0 without a call; a statement that does not prepare: an error without one. */
    assert_int_equal(db_each(h, sel, "r", see_row, &none, DB_INT(4)), 0);
    assert_int_equal(none.calls, 0);
    assert_int_equal(
        db_each(h, "SELECT n FROM nowhere WHERE n = ?1", "r", see_row, &bad, DB_INT(1)), -VSL_EDB);
    assert_int_equal(bad.calls, 0);
    assert_int_equal(raw_int(fx->path, "SELECT count(*) FROM t"), 3);
    sqlite3_close(h);
}

/* ---- what the last poll could not read, grouped (the summary's gaps) ---- */

#define GAP_HOSTS 105 /* more than DB_GAP_NAMES */

/* GAP_HOSTS hosts esx-000... refusing esxcli with one privilege, two with another reason for
 * their options, one vCenter gap, one refusal whose error names no privilege in full. */
static void fill_gaps(const struct vim_sink *s, const void *arg)
{
    (void)arg;
    char moref[32], name[32];
    for (int i = GAP_HOSTS - 1; i >= 0; i--) { /* stored out of order: the reader sorts */
        snprintf(moref, sizeof(moref), "host-%d", 100 + i);
        snprintf(name, sizeof(name), "esx-%03d", i);
        const struct vim_host h = {moref, name, "domain-c7", "connected", "8.0.3"};
        assert_int_equal(s->host(s->ctx, &h), 0);
        const struct vim_gap g = {moref, "esxcli",
                                  "NoPermission fault (needs Host.Config.Settings): denied"};
        assert_int_equal(s->gap(s->ctx, &g), 0);
        if (i < 2) {
            const struct vim_gap o = {moref, "options", "timed out"};
            assert_int_equal(s->gap(s->ctx, &o), 0);
        }
    }
    const struct vim_gap vc = {NULL, "alarms", "NoPermission fault (needs System.View): denied"};
    assert_int_equal(s->gap(s->ctx, &vc), 0);
    const struct vim_gap cut = {"host-100", "iscsi-bindings", "NoPermission fault (needs Host.Co"};
    assert_int_equal(s->gap(s->ctx, &cut), 0);
}

static void fill_nothing(const struct vim_sink *s, const void *arg)
{
    (void)s;
    (void)arg;
}

TEST_WITH(test_gaps_grouped_by_kind_and_error_with_the_privilege_and_the_hosts, tl_db_setup_open,
          tl_db_teardown)
{
    struct tl_dbfile *fx = *state;
    json_t *out = NULL, *g;
    char *text;

    tl_snapshot(fx->db, "vc1", fill_gaps, NULL, 1000, 2000, NULL);
    tl_snapshot(fx->db, "vc2", fill_nothing, NULL, 1000, 2000, NULL);
    assert_int_equal(db_gaps_grouped(fx->db, NULL, &out), 0);
    /* A vCenter that read everything has no member. */
    assert_null(json_object_get(out, "vc2"));
    json_t *list = json_object_get(out, "vc1");
    assert_int_equal(json_array_size(list), 4);
    /* In (what, error) order; the vCenter's own gap counts no host. */
    g = json_array_get(list, 0);
    text = json_dumps(g, JSON_COMPACT | JSON_PRESERVE_ORDER);
    assert_string_equal(text, "{\"what\":\"alarms\",\"error\":\"NoPermission fault (needs "
                              "System.View): denied\",\"privilege\":\"System.View\",\"hosts\":0,"
                              "\"host_names\":[]}");
    free(text);
    g = json_array_get(list, 1);
    assert_string_equal(json_string_value(json_object_get(g, "what")), "esxcli");
    assert_string_equal(json_string_value(json_object_get(g, "privilege")), "Host.Config.Settings");
    /* Every host counted, the first DB_GAP_NAMES named, by name. */
    assert_int_equal(json_integer_value(json_object_get(g, "hosts")), GAP_HOSTS);
    json_t *names = json_object_get(g, "host_names");
    assert_int_equal(json_array_size(names), DB_GAP_NAMES);
    assert_string_equal(json_string_value(json_array_get(names, 0)), "esx-000");
    assert_string_equal(json_string_value(json_array_get(names, DB_GAP_NAMES - 1)), "esx-099");
    /* An error cut before the privilege's end names none rather than half of one. */
    g = json_array_get(list, 2);
    assert_string_equal(json_string_value(json_object_get(g, "what")), "iscsi-bindings");
    assert_true(json_is_null(json_object_get(g, "privilege")));
    assert_int_equal(json_integer_value(json_object_get(g, "hosts")), 1);
    /* Another reason: no privilege, its own hosts. */
    g = json_array_get(list, 3);
    text = json_dumps(g, JSON_COMPACT | JSON_PRESERVE_ORDER);
    assert_string_equal(text, "{\"what\":\"options\",\"error\":\"timed out\",\"privilege\":"
                              "null,\"hosts\":2,\"host_names\":[\"esx-000\",\"esx-001\"]}");
    free(text);
    json_decref(out);
    /* One vCenter asked: only its member. */
    assert_int_equal(db_gaps_grouped(fx->db, "vc2", &out), 0);
    assert_int_equal(json_object_size(out), 0);
    json_decref(out);
}

/* Hosts esx-000... each with a gap of what: its error names the host's number. */
struct gap_fill {
    int hosts;
    const char *what, *before, *after; /* the error: before, the number (3 digits), after */
};

static void fill_host_gaps(const struct vim_sink *s, const void *arg)
{
    const struct gap_fill *f = arg;
    char moref[32], name[32], error[1100];
    for (int i = 0; i < f->hosts; i++) {
        snprintf(moref, sizeof(moref), "host-%d", 100 + i);
        snprintf(name, sizeof(name), "esx-%03d", i);
        const struct vim_host h = {moref, name, "domain-c7", "connected", "8.0.3"};
        assert_int_equal(s->host(s->ctx, &h), 0);
        snprintf(error, sizeof(error), "%s%03d%s", f->before, i, f->after);
        const struct vim_gap g = {moref, f->what, error};
        assert_int_equal(s->gap(s->ctx, &g), 0);
    }
}

/* An error cut at 1024 bytes in the middle of a character (a localised faultstring), and a
 * host name that is not UTF-8: the group is there, its text mended, and it dumps. */
static void fill_bad_utf8(const struct vim_sink *s, const void *arg)
{
    (void)arg;
    char error[1024];
    memset(error, 'a', sizeof(error));
    memcpy(error, "NoPermission fault (needs Host.Config.Storage): Zugriff f", 57);
    error[sizeof(error) - 2] = '\xc3'; /* the first byte of "ü", its second cut off */
    error[sizeof(error) - 1] = '\0';
    const struct vim_host h = {"host-1", "esx-\xff", "domain-c7", "connected", "8.0.3"};
    assert_int_equal(s->host(s->ctx, &h), 0);
    const struct vim_gap g = {"host-1", "esxcli", error};
    assert_int_equal(s->gap(s->ctx, &g), 0);
    const struct vim_gap o = {"host-1", "options", "Zeit\xc3"};
    assert_int_equal(s->gap(s->ctx, &o), 0);
}

TEST_WITH(test_gaps_with_text_cut_in_a_character_are_mended_not_lost, tl_db_setup_open,
          tl_db_teardown)
{
    struct tl_dbfile *fx = *state;
    json_t *out = NULL, *g;
    char *text;

    tl_snapshot(fx->db, "vc1", fill_bad_utf8, NULL, 1000, 2000, NULL);
    assert_int_equal(db_gaps_grouped(fx->db, NULL, &out), 0);
    assert_non_null(out);
    json_t *list = json_object_get(out, "vc1");
    assert_int_equal(json_array_size(list), 2);
    g = json_array_get(list, 0);
    assert_string_equal(json_string_value(json_object_get(g, "privilege")), "Host.Config.Storage");
    const char *e = json_string_value(json_object_get(g, "error"));
    assert_non_null(e);
    assert_int_equal(strlen(e), 1023);
    assert_int_equal(e[1022], '?');
    assert_string_equal(json_string_value(json_array_get(json_object_get(g, "host_names"), 0)),
                        "esx-?");
    g = json_array_get(list, 1);
    assert_string_equal(json_string_value(json_object_get(g, "error")), "Zeit?");
    text = json_dumps(out, JSON_COMPACT);
    assert_non_null(text);
    free(text);
    json_decref(out);
}

TEST_WITH(test_gaps_refused_are_grouped_by_privilege_whatever_each_host_says, tl_db_setup_open,
          tl_db_teardown)
{
    struct tl_dbfile *fx = *state;
    const struct gap_fill f = {30, "esxcli",
                               "NoPermission fault (needs Host.Config.Settings): host ", " denied"};
    json_t *out = NULL, *g;

    tl_snapshot(fx->db, "vc1", fill_host_gaps, &f, 1000, 2000, NULL);
    assert_int_equal(db_gaps_grouped(fx->db, NULL, &out), 0);
    json_t *list = json_object_get(out, "vc1");
    assert_int_equal(json_array_size(list), 1);
    g = json_array_get(list, 0);
    assert_int_equal(json_integer_value(json_object_get(g, "hosts")), 30);
    assert_int_equal(json_array_size(json_object_get(g, "host_names")), 30);
    assert_string_equal(json_string_value(json_object_get(g, "privilege")), "Host.Config.Settings");
    /* One sample error: the first host's. */
    assert_string_equal(json_string_value(json_object_get(g, "error")),
                        "NoPermission fault (needs Host.Config.Settings): host 000 denied");
    json_decref(out);
}

TEST_WITH(test_gaps_with_an_error_per_host_are_capped_with_one_other_group, tl_db_setup_open,
          tl_db_teardown)
{
    struct tl_dbfile *fx = *state;
    const struct gap_fill f = {DB_GAP_GROUPS + 130, "options", "esx-", ": timed out"};
    json_t *out = NULL, *g;

    tl_snapshot(fx->db, "vc1", fill_host_gaps, &f, 1000, 2000, NULL);
    assert_int_equal(db_gaps_grouped(fx->db, NULL, &out), 0);
    json_t *list = json_object_get(out, "vc1");
    assert_int_equal(json_array_size(list), DB_GAP_GROUPS + 1);
    g = json_array_get(list, 0);
    assert_string_equal(json_string_value(json_object_get(g, "error")), "esx-000: timed out");
    g = json_array_get(list, DB_GAP_GROUPS);
    assert_string_equal(json_string_value(json_object_get(g, "what")), "other");
    assert_string_equal(json_string_value(json_object_get(g, "error")),
                        "130 other errors, each on no more hosts than those listed");
    assert_true(json_is_null(json_object_get(g, "privilege")));
    assert_int_equal(json_integer_value(json_object_get(g, "hosts")), 130);
    json_t *names = json_object_get(g, "host_names");
    assert_int_equal(json_array_size(names), DB_GAP_NAMES);
    assert_string_equal(json_string_value(json_array_get(names, 0)), "esx-020");
    json_decref(out);
}

/* The privilege is read only where vslint writes it: at the start, ids of id characters. */
static void fill_spoofs(const struct vim_sink *s, const void *arg)
{
    (void)arg;
    static const char *const errors[] = {
        "SystemError fault: host said NoPermission fault (needs Fake.Priv): x",
        "NoPermission fault (needs Host.Config.Storage, System.Read): denied",
        "NoPermission fault (needs Host Config): denied",
        "fault (needs Fake.Priv): x",
    };
    char moref[32];
    for (size_t i = 0; i < sizeof(errors) / sizeof(*errors); i++) {
        snprintf(moref, sizeof(moref), "host-%zu", i);
        const struct vim_gap g = {moref, "esxcli", errors[i]};
        assert_int_equal(s->gap(s->ctx, &g), 0);
    }
}

TEST_WITH(test_gaps_privilege_is_read_only_at_the_start_of_the_error, tl_db_setup_open,
          tl_db_teardown)
{
    struct tl_dbfile *fx = *state;
    json_t *out = NULL;

    tl_snapshot(fx->db, "vc1", fill_spoofs, NULL, 1000, 2000, NULL);
    assert_int_equal(db_gaps_grouped(fx->db, NULL, &out), 0);
    json_t *list = json_object_get(out, "vc1");
    assert_int_equal(json_array_size(list), 4);
    int named = 0;
    for (size_t i = 0; i < json_array_size(list); i++) {
        json_t *g = json_array_get(list, i);
        const char *p = json_string_value(json_object_get(g, "privilege"));
        if (!p)
            continue;
        named++;
        assert_string_equal(p, "Host.Config.Storage, System.Read");
    }
    assert_int_equal(named, 1);
    json_decref(out);
}

int main(void)
{
    return tl_main();
}

/* vsl_addr(): the NFS join compares a datastore's nas.remoteHost with an array's interface
 * address in this form, so that two spellings of one address are one address. */
TEST(test_vsl_addr_writes_one_form_of_an_address)
{
    static const char *const cases[][2] = {
        {"FD00::A", "fd00::a"},          {"fd00:0:0:0:0:0:0:a", "fd00::a"},
        {"FD00:0000::000A", "fd00::a"},  {"10.0.3.10", "10.0.3.10"},
        {"Filer01.Lab.Example", "filer01.lab.example"}, {"", ""},
    };
    struct db *db = NULL;
    char *err = NULL;

    assert_int_equal(db_open(DB_MEMORY, &db, &err), 0);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        sqlite3_stmt *st = NULL;
        assert_int_equal(sqlite3_prepare_v2(db->h, "SELECT vsl_addr(?1), vsl_addr(NULL)", -1,
                                            &st, NULL),
                         SQLITE_OK);
        sqlite3_bind_text(st, 1, cases[i][0], -1, SQLITE_STATIC);
        assert_int_equal(sqlite3_step(st), SQLITE_ROW);
        assert_string_equal((const char *)sqlite3_column_text(st, 0), cases[i][1]);
        assert_int_equal(sqlite3_column_type(st, 1), SQLITE_NULL);
        sqlite3_finalize(st);
    }
    db_close(db);
}
