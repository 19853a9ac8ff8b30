/* The schema as a list of migrations keyed by PRAGMA user_version.
 * A schema change is a new entry at the end of migrations[]; entries already shipped never change.
 */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db-private.h"
#include "db/db.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/log.h"

/* Inventory tables: every row starts with the vCenter it came from and its key includes it, so
 * several vCenters live side by side and a snapshot replaces exactly one vCenter's rows.
 * WITHOUT ROWID because every key is a composite of short strings: the row lives in the key's
 * b-tree instead of twice. There are deliberately no foreign keys between inventory tables:
 * the collector emits rows in whatever order vCenter answers, and a dangling reference from a
 * confused server must not cost the whole poll. */
static const char migration1[] =
    "CREATE TABLE vcenters ("
    "  name TEXT PRIMARY KEY NOT NULL,"
    "  url TEXT,"
    "  last_poll_id INTEGER REFERENCES polls(id),"
    "  last_success_ms INTEGER,"
    "  last_error TEXT"
    ");"
    "CREATE TABLE polls ("
    "  id INTEGER PRIMARY KEY,"
    "  vcenter TEXT NOT NULL,"
    "  url TEXT,"
    "  started_ms INTEGER NOT NULL,"
    "  finished_ms INTEGER NOT NULL,"
    "  ok INTEGER NOT NULL,"
    "  error TEXT,"
    "  counts_json TEXT"
    ");"
    "CREATE INDEX polls_vcenter ON polls(vcenter, id);"

    "CREATE TABLE datastores ("
    "  vcenter TEXT NOT NULL, moref TEXT NOT NULL, name TEXT, type TEXT, url TEXT, parent TEXT,"
    "  capacity INTEGER, free_space INTEGER, uncommitted INTEGER, accessible INTEGER,"
    "  maintenance_mode TEXT, vmfs_major INTEGER, nas_remote_host TEXT, vm_count INTEGER,"
    "  PRIMARY KEY (vcenter, moref)) WITHOUT ROWID;"
    "CREATE TABLE storage_pods ("
    "  vcenter TEXT NOT NULL, moref TEXT NOT NULL, name TEXT, capacity INTEGER,"
    "  free_space INTEGER,"
    "  PRIMARY KEY (vcenter, moref)) WITHOUT ROWID;"
    "CREATE TABLE vms ("
    "  vcenter TEXT NOT NULL, moref TEXT NOT NULL, name TEXT, hw_version TEXT, template INTEGER,"
    "  power_state TEXT, ft_state TEXT, host TEXT,"
    "  PRIMARY KEY (vcenter, moref)) WITHOUT ROWID;"
    "CREATE TABLE vm_datastores ("
    "  vcenter TEXT NOT NULL, vm TEXT NOT NULL, datastore TEXT NOT NULL,"
    "  PRIMARY KEY (vcenter, vm, datastore)) WITHOUT ROWID;"
    /* The checks ask "which VMs sit on datastore X": index the reverse direction too. */
    "CREATE INDEX vm_datastores_ds ON vm_datastores(vcenter, datastore);"
    "CREATE TABLE controllers ("
    "  vcenter TEXT NOT NULL, vm TEXT NOT NULL, key INTEGER NOT NULL, type TEXT,"
    "  shared_bus TEXT, bus_number INTEGER,"
    "  PRIMARY KEY (vcenter, vm, key)) WITHOUT ROWID;"
    "CREATE TABLE vdisks ("
    "  vcenter TEXT NOT NULL, vm TEXT NOT NULL, key INTEGER NOT NULL, label TEXT,"
    "  file_name TEXT, datastore TEXT, capacity_bytes INTEGER, format TEXT,"
    "  controller_key INTEGER, unit_number INTEGER,"
    "  PRIMARY KEY (vcenter, vm, key)) WITHOUT ROWID;"
    "CREATE INDEX vdisks_ds ON vdisks(vcenter, datastore);"
    /* A snapshot has no identifier in what the collector reads; two snapshots with the same
     * name, time and depth on one VM are the same one. created may be unknown (NULL), which is
     * why this one table keeps its rowid: its key columns may hold NULL. */
    "CREATE TABLE snapshots ("
    "  vcenter TEXT NOT NULL, vm TEXT NOT NULL, name TEXT NOT NULL, created INTEGER,"
    "  depth INTEGER,"
    "  PRIMARY KEY (vcenter, vm, name, created, depth));"
    "CREATE TABLE hosts ("
    "  vcenter TEXT NOT NULL, moref TEXT NOT NULL, name TEXT, parent TEXT,"
    "  connection_state TEXT,"
    "  PRIMARY KEY (vcenter, moref)) WITHOUT ROWID;"
    "CREATE TABLE host_options ("
    "  vcenter TEXT NOT NULL, host TEXT NOT NULL, key TEXT NOT NULL, value TEXT,"
    "  PRIMARY KEY (vcenter, host, key)) WITHOUT ROWID;"
    "CREATE TABLE vnics ("
    "  vcenter TEXT NOT NULL, host TEXT NOT NULL, device TEXT NOT NULL, portgroup TEXT,"
    "  dvs_uuid TEXT, dvs_portgroup TEXT, mtu INTEGER, ip TEXT,"
    "  PRIMARY KEY (vcenter, host, device)) WITHOUT ROWID;"
    "CREATE TABLE vswitches ("
    "  vcenter TEXT NOT NULL, host TEXT NOT NULL, name TEXT NOT NULL, mtu INTEGER,"
    "  PRIMARY KEY (vcenter, host, name)) WITHOUT ROWID;"
    "CREATE TABLE portgroups ("
    "  vcenter TEXT NOT NULL, host TEXT NOT NULL, name TEXT NOT NULL, vswitch TEXT,"
    "  PRIMARY KEY (vcenter, host, name)) WITHOUT ROWID;"
    "CREATE TABLE dvswitches ("
    "  vcenter TEXT NOT NULL, moref TEXT NOT NULL, name TEXT, uuid TEXT, max_mtu INTEGER,"
    "  PRIMARY KEY (vcenter, moref)) WITHOUT ROWID;"
    "CREATE TABLE iscsi_hbas ("
    "  vcenter TEXT NOT NULL, host TEXT NOT NULL, device TEXT NOT NULL, iscsi_name TEXT,"
    "  model TEXT,"
    "  PRIMARY KEY (vcenter, host, device)) WITHOUT ROWID;"
    /* target is "address:port" (just "address" when the port is unknown): the same string
     * iscsi_options names a target by, and never NULL, so it can be part of the key. */
    "CREATE TABLE iscsi_targets ("
    "  vcenter TEXT NOT NULL, host TEXT NOT NULL, hba TEXT NOT NULL, kind TEXT NOT NULL,"
    "  target TEXT NOT NULL, address TEXT, port INTEGER, iscsi_name TEXT,"
    "  PRIMARY KEY (vcenter, host, hba, kind, target)) WITHOUT ROWID;"
    /* kind and target are '' for the adapter's own options, so the key has no NULLs. */
    "CREATE TABLE iscsi_options ("
    "  vcenter TEXT NOT NULL, host TEXT NOT NULL, hba TEXT NOT NULL, kind TEXT NOT NULL,"
    "  target TEXT NOT NULL, key TEXT NOT NULL, value TEXT, inherited INTEGER,"
    "  PRIMARY KEY (vcenter, host, hba, kind, target, key)) WITHOUT ROWID;"
    "CREATE TABLE iscsi_bindings ("
    "  vcenter TEXT NOT NULL, host TEXT NOT NULL, hba TEXT NOT NULL, vnic TEXT NOT NULL,"
    "  PRIMARY KEY (vcenter, host, hba, vnic)) WITHOUT ROWID;"
    "CREATE TABLE luns ("
    "  vcenter TEXT NOT NULL, host TEXT NOT NULL, canonical_name TEXT NOT NULL, key TEXT,"
    "  display_name TEXT, vendor TEXT, model TEXT, lun_type TEXT, local INTEGER, psp TEXT,"
    "  satp TEXT,"
    "  PRIMARY KEY (vcenter, host, canonical_name)) WITHOUT ROWID;"
    "CREATE TABLE lun_paths ("
    "  vcenter TEXT NOT NULL, host TEXT NOT NULL, lun TEXT NOT NULL, name TEXT NOT NULL,"
    "  state TEXT, adapter TEXT,"
    "  PRIMARY KEY (vcenter, host, lun, name)) WITHOUT ROWID;"
    "CREATE TABLE nmp_devices ("
    "  vcenter TEXT NOT NULL, host TEXT NOT NULL, device TEXT NOT NULL, psp TEXT,"
    "  psp_config TEXT, iops INTEGER,"
    "  PRIMARY KEY (vcenter, host, device)) WITHOUT ROWID;"
    /* object is '' when a gap is about the vCenter as a whole. */
    "CREATE TABLE gaps ("
    "  vcenter TEXT NOT NULL, object TEXT NOT NULL, what TEXT NOT NULL, error TEXT,"
    "  PRIMARY KEY (vcenter, object, what)) WITHOUT ROWID;"

    /* Findings outlive snapshots: their history is what "new" and "fixed" are computed from,
     * so they are keyed by a fingerprint, not by poll. */
    "CREATE TABLE findings ("
    "  fingerprint TEXT PRIMARY KEY NOT NULL,"
    "  check_id TEXT NOT NULL,"
    "  vcenter TEXT NOT NULL,"
    "  object_type TEXT,"
    "  object_moref TEXT,"
    "  object_name TEXT,"
    "  detail TEXT,"
    "  severity TEXT NOT NULL,"
    "  status TEXT NOT NULL,"
    "  message TEXT,"
    "  evidence_json TEXT,"
    "  first_seen_ms INTEGER NOT NULL,"
    "  last_seen_ms INTEGER NOT NULL,"
    "  resolved_at_ms INTEGER"
    ");"
    "CREATE INDEX findings_status ON findings(status, severity);"
    "CREATE INDEX findings_vcenter ON findings(vcenter, check_id);";

/* What the findings API shows and sorts by without looking anything up elsewhere: the check's
 * title as it was when the finding was recorded (a check renamed or removed later still reads
 * sensibly), and the waiver that silenced it. severity_order is the sort key "critical first":
 * a virtual column costs no space, keeps one spelling of the ranking, and lets one index serve
 * both the order and the keyset pagination of db_findings_query(). */
static const char migration2[] =
    "ALTER TABLE findings ADD COLUMN title TEXT;"
    "ALTER TABLE findings ADD COLUMN waiver_reason TEXT;"
    "ALTER TABLE findings ADD COLUMN waiver_expires TEXT;"
    "ALTER TABLE findings ADD COLUMN severity_order INTEGER GENERATED ALWAYS AS"
    "  (CASE severity WHEN 'critical' THEN 0 WHEN 'warning' THEN 1 ELSE 2 END) VIRTUAL;"
    "CREATE INDEX findings_order"
    "  ON findings(severity_order, check_id, vcenter, object_name, fingerprint);";

/* The summary (/api/v1/summary, /metrics, the digest) counts unresolved findings by status,
 * check and severity on every request. This index holds every column it reads, in the order it
 * groups by, so it is one index range read without a sort or a table lookup: at 30,000 open
 * findings, 8 ms instead of 20. */
static const char migration3[] =
    "CREATE INDEX findings_summary"
    "  ON findings(status, check_id, severity, vcenter, first_seen_ms, last_seen_ms);";

/* SATP claim rules per host (esxcli storage nmp satp rule list), for satp-claim-rule. A rule
 * may leave vendor, model, PSP and options empty (NULL: "any", "none"), so the key cannot be
 * a WITHOUT ROWID primary key (nor a unique one: NULLs are distinct); the rows are only ever
 * read per host. */
static const char migration4[] =
    "CREATE TABLE satp_rules ("
    "  vcenter TEXT NOT NULL, host TEXT NOT NULL, satp TEXT NOT NULL, vendor TEXT, model TEXT,"
    "  psp TEXT, psp_options TEXT, rule_group TEXT);"
    "CREATE INDEX satp_rules_host ON satp_rules(vcenter, host);";

/* Honest history. A finding on a part of a host (a LUN, a vmknic, an adapter) carries the host
 * apart from the part: until now object_moref was the host's and object_name "HOST PART"; the
 * rows written so were split here (at the first blank: host names are DNS names). A finding the
 * latest run could not verify (its check failed, or an input it needs was not read) keeps its
 * state and says since when and why; a resolved one says how (fixed: seen fixed; disabled: its
 * check was turned off). The summary index gains unverified_since_ms, which "new" now reads. */
static const char migration5[] =
    "ALTER TABLE findings ADD COLUMN host_moref TEXT;"
    "ALTER TABLE findings ADD COLUMN host_name TEXT;"
    "ALTER TABLE findings ADD COLUMN unverified_since_ms INTEGER;"
    "ALTER TABLE findings ADD COLUMN unverified_reason TEXT;"
    "ALTER TABLE findings ADD COLUMN resolution TEXT;"
    "UPDATE findings SET host_moref = object_moref,"
    "  host_name = substr(object_name, 1, instr(object_name, ' ') - 1),"
    "  object_name = substr(object_name, instr(object_name, ' ') + 1), object_moref = NULL"
    "  WHERE object_type IN ('lun', 'vmknic', 'iscsi_hba', 'iscsi_target')"
    "  AND instr(object_name, ' ') > 0;"
    "UPDATE findings SET host_moref = object_moref, host_name = object_name"
    "  WHERE object_type = 'host';"
    "UPDATE findings SET resolution = 'fixed' WHERE status = 'resolved';"
    "DROP INDEX findings_summary;"
    "CREATE INDEX findings_summary ON findings(status, check_id, severity, vcenter,"
    "  first_seen_ms, last_seen_ms, unverified_since_ms);";

/* Alarms, for datastore-alarms: which alarm definitions exist, where each is defined (it covers
 * that entity and everything below it), and their metric conditions with the counters those
 * name; plus the containers above datastores (folders, datacenters, datastore clusters) that
 * link a datastore to the alarms defined further up. perf_counters holds only the counters an
 * alarm names: counterIds differ from one vCenter to another, so a condition is known by the
 * counter's name. A vCenter's alarm_managers row says its alarms were read in full in that
 * snapshot; without it (a gap, or a snapshot older than this migration) they are unknown. */
static const char migration6[] =
    "CREATE TABLE entities ("
    "  vcenter TEXT NOT NULL, moref TEXT NOT NULL, type TEXT, name TEXT, parent TEXT,"
    "  PRIMARY KEY (vcenter, moref)) WITHOUT ROWID;"
    "CREATE TABLE alarm_managers ("
    "  vcenter TEXT NOT NULL, moref TEXT NOT NULL,"
    "  PRIMARY KEY (vcenter, moref)) WITHOUT ROWID;"
    "CREATE TABLE alarms ("
    "  vcenter TEXT NOT NULL, moref TEXT NOT NULL, name TEXT, system_name TEXT,"
    "  enabled INTEGER, entity TEXT, entity_type TEXT,"
    "  PRIMARY KEY (vcenter, moref)) WITHOUT ROWID;"
    "CREATE TABLE alarm_metrics ("
    "  vcenter TEXT NOT NULL, alarm TEXT NOT NULL, pos INTEGER NOT NULL, object_type TEXT,"
    "  counter_id INTEGER, operator TEXT, yellow INTEGER, red INTEGER,"
    "  PRIMARY KEY (vcenter, alarm, pos)) WITHOUT ROWID;"
    "CREATE TABLE perf_counters ("
    "  vcenter TEXT NOT NULL, counter_id INTEGER NOT NULL, name TEXT, unit TEXT,"
    "  PRIMARY KEY (vcenter, counter_id)) WITHOUT ROWID;";

/* What real estates need besides: the extents of multi-extent VMFS volumes and whether a volume
 * is local (a host's boot disk), the hosts that mount each datastore, the file a VM's
 * configuration lives in, every host bus adapter (a local controller is not a SAN), how a LUN
 * is multipathed (the policy's type and the owning plug-in), how a static iSCSI target was
 * discovered, and the rest of a SATP claim rule (device, driver, transport, options).
 *
 * iscsi_targets and iscsi_options get the target's IQN in their keys: arrays that present one
 * IQN per volume put many static targets on one address:port, which the old keys collapsed
 * into one row. SQLite cannot change a primary key, so both tables are rebuilt and the
 * previous snapshot copied over (send targets and adapter options have IQN ''). */
static const char migration7[] =
    "ALTER TABLE datastores ADD COLUMN vmfs_version TEXT;"
    "ALTER TABLE datastores ADD COLUMN vmfs_local INTEGER;"
    "ALTER TABLE datastores ADD COLUMN vmfs_ssd INTEGER;"
    "ALTER TABLE datastores ADD COLUMN unmap_priority TEXT;"
    "CREATE TABLE datastore_extents ("
    "  vcenter TEXT NOT NULL, datastore TEXT NOT NULL, position INTEGER NOT NULL,"
    "  disk_name TEXT, partition INTEGER,"
    "  PRIMARY KEY (vcenter, datastore, position)) WITHOUT ROWID;"
    "CREATE TABLE datastore_hosts ("
    "  vcenter TEXT NOT NULL, datastore TEXT NOT NULL, host TEXT NOT NULL, mounted INTEGER,"
    "  accessible INTEGER, access_mode TEXT,"
    "  PRIMARY KEY (vcenter, datastore, host)) WITHOUT ROWID;"
    "ALTER TABLE vms ADD COLUMN vm_path_name TEXT;"
    "CREATE TABLE hbas ("
    "  vcenter TEXT NOT NULL, host TEXT NOT NULL, device TEXT NOT NULL, type TEXT, driver TEXT,"
    "  model TEXT, status TEXT,"
    "  PRIMARY KEY (vcenter, host, device)) WITHOUT ROWID;"
    "ALTER TABLE luns ADD COLUMN policy_type TEXT;"
    "ALTER TABLE luns ADD COLUMN multipath_plugin TEXT;"
    "CREATE TABLE iscsi_targets_7 ("
    "  vcenter TEXT NOT NULL, host TEXT NOT NULL, hba TEXT NOT NULL, kind TEXT NOT NULL,"
    "  target TEXT NOT NULL, iscsi_name TEXT NOT NULL, address TEXT, port INTEGER,"
    "  discovery_method TEXT, parent TEXT,"
    "  PRIMARY KEY (vcenter, host, hba, kind, target, iscsi_name)) WITHOUT ROWID;"
    "INSERT INTO iscsi_targets_7 (vcenter, host, hba, kind, target, iscsi_name, address, port)"
    "  SELECT vcenter, host, hba, kind, target, coalesce(iscsi_name, ''), address, port"
    "  FROM iscsi_targets;"
    "CREATE TABLE iscsi_options_7 ("
    "  vcenter TEXT NOT NULL, host TEXT NOT NULL, hba TEXT NOT NULL, kind TEXT NOT NULL,"
    "  target TEXT NOT NULL, iscsi_name TEXT NOT NULL, key TEXT NOT NULL, value TEXT,"
    "  inherited INTEGER,"
    "  PRIMARY KEY (vcenter, host, hba, kind, target, iscsi_name, key)) WITHOUT ROWID;"
    "INSERT INTO iscsi_options_7 SELECT o.vcenter, o.host, o.hba, o.kind, o.target,"
    "  coalesce(t.iscsi_name, ''), o.key, o.value, o.inherited FROM iscsi_options o"
    "  LEFT JOIN iscsi_targets t ON t.vcenter = o.vcenter AND t.host = o.host"
    "  AND t.hba = o.hba AND t.kind = o.kind AND t.target = o.target;"
    "DROP TABLE iscsi_targets;"
    "DROP TABLE iscsi_options;"
    "ALTER TABLE iscsi_targets_7 RENAME TO iscsi_targets;"
    "ALTER TABLE iscsi_options_7 RENAME TO iscsi_options;"
    "ALTER TABLE satp_rules ADD COLUMN device TEXT;"
    "ALTER TABLE satp_rules ADD COLUMN driver TEXT;"
    "ALTER TABLE satp_rules ADD COLUMN transport TEXT;"
    "ALTER TABLE satp_rules ADD COLUMN claim_options TEXT;"
    "ALTER TABLE satp_rules ADD COLUMN options TEXT;"
    "ALTER TABLE satp_rules ADD COLUMN description TEXT;";

/* migrations[i] takes the schema from user_version i to i + 1. Shipped: never change them. */
static const char *const migrations[] = {
    migration1, migration2, migration3, migration4, migration5, migration6, migration7,
};

#define NHANDWRITTEN ((int)(sizeof(migrations) / sizeof(migrations[0])))
#define MAX_DDL      (256 * 1024)

const char *db_table_name(enum db_table t)
{
    assert(t >= 0 && t < T_NTABLES);
    return db_tables[t].name;
}

int db_schema_version(void)
{
    int v = NHANDWRITTEN;

    for (int t = 0; t < db_ntables; t++) {
        for (int c = 0; c < db_tables[t].ncols; c++)
            v = db_tables[t].cols[c].since > v ? db_tables[t].cols[c].since : v;
    }
    for (int i = 0; i < db_nindexes; i++)
        v = db_indexes[i].since > v ? db_indexes[i].since : v;
    return v;
}

/* ---- DDL from the column lists ------------------------------------------------------------ */

static int add_column_decl(struct vsl_buf *b, const struct db_column *c)
{
    if (c->type == DB_RAW)
        return vsl_buf_printf(b, "%s %s", c->name, c->decl);
    return vsl_buf_printf(b, "%s %s%s", c->name,
                          c->type == DB_TEXT || c->type == DB_FN ? "TEXT" : "INTEGER",
                          c->flags & DB_NN ? " NOT NULL" : "");
}

/* CREATE TABLE with the columns added up to version upto, named prefix + the table's name. */
static int add_create_table(struct vsl_buf *b, const struct db_table_def *t, int upto,
                            const char *prefix)
{
    int c, r, npk = 0;

    r = vsl_buf_printf(b, "CREATE TABLE %s%s (%s", prefix, t->name,
                       t->inventory ? "vcenter TEXT NOT NULL" : "");
    for (c = 0; c < t->ncols && r == 0; c++) {
        if (t->cols[c].since > upto)
            continue;
        if (t->inventory || c > 0)
            r = vsl_buf_addstr(b, ", ");
        if (r == 0)
            r = add_column_decl(b, &t->cols[c]);
    }
    for (c = 0; c < t->ncols && r == 0; c++) {
        if (t->inventory && (t->cols[c].flags & DB_PK))
            r = vsl_buf_printf(b, "%s%s", npk++ ? ", " : ", PRIMARY KEY (vcenter, ", t->cols[c].name);
    }
    if (r == 0 && npk)
        r = vsl_buf_addstr(b, ")");
    if (r == 0)
        r = vsl_buf_addstr(b, t->without_rowid ? ") WITHOUT ROWID;" : ");");
    return r;
}

/* The schema of a new database: every table and index as the lists have them now. */
static int fresh_ddl(struct vsl_buf *b)
{
    int i, r = 0;

    for (i = 0; i < db_ntables && r == 0; i++)
        r = add_create_table(b, &db_tables[i], db_schema_version(), "");
    for (i = 0; i < db_nindexes && r == 0; i++)
        r = vsl_buf_printf(b, "CREATE INDEX %s ON %s;", db_indexes[i].name, db_indexes[i].on);
    return r;
}

int db_stage_ddl(struct vsl_buf *b)
{
    int r = 0;

    for (int i = 0; i < T_NTABLES && r == 0; i++)
        r = add_create_table(b, &db_tables[i], db_schema_version(),
                             DB_STAGE_SCHEMA "." DB_STAGE_PREFIX);
    /* The inventory tables' indexes too: SQLite copies a staged table into an empty table
     * page by page (its "transfer optimization") only when the source has every index the
     * destination has. */
    for (int i = 0; i < db_nindexes && r == 0; i++) {
        const char *on = db_indexes[i].on, *paren = strchr(on, '(');
        size_t n = paren ? (size_t)(paren - on) : 0;
        for (int t = 0; t < T_NTABLES && n > 0 && r == 0; t++) {
            if (strlen(db_tables[t].name) != n || strncmp(db_tables[t].name, on, n))
                continue;
            r = vsl_buf_printf(b,
                               "CREATE INDEX " DB_STAGE_SCHEMA "." DB_STAGE_PREFIX "%s ON " DB_STAGE_PREFIX
                               "%s;",
                               db_indexes[i].name, on);
        }
    }
    return r;
}

/* What version v adds to an older database besides its hand-written migration, if any: its new
 * tables, its new columns of older tables, its new indexes. Nothing up to version 7, whose
 * migrations say it all. */
static int generated_ddl(struct vsl_buf *b, int v)
{
    int i, c, r = 0;

    if (v < DB_FIRST_GENERATED)
        return 0;
    for (i = 0; i < db_ntables && r == 0; i++) {
        const struct db_table_def *t = &db_tables[i];
        if (t->since == v) {
            r = add_create_table(b, t, v, "");
            continue;
        }
        for (c = 0; c < t->ncols && r == 0; c++) {
            if (t->cols[c].since != v)
                continue;
            r = vsl_buf_printf(b, "ALTER TABLE %s ADD COLUMN ", t->name);
            if (r == 0)
                r = add_column_decl(b, &t->cols[c]);
            if (r == 0)
                r = vsl_buf_addstr(b, ";");
        }
    }
    for (i = 0; i < db_nindexes && r == 0; i++) {
        if (db_indexes[i].since == v)
            r = vsl_buf_printf(b, "CREATE INDEX %s ON %s;", db_indexes[i].name, db_indexes[i].on);
    }
    return r;
}

/* The statements that take a database from version v - 1 to v (from 0: a new database, straight
 * to the current version). Static DDL of our own lists, no input. *out is the caller's. */
static int migration_sql(int v, char **out)
{
    struct vsl_buf b;
    int r = 0;

    vsl_buf_init(&b, MAX_DDL);
    if (v == 0)
        r = fresh_ddl(&b);
    else if (v <= NHANDWRITTEN)
        r = vsl_buf_addstr(&b, migrations[v - 1]);
    if (r == 0 && v > 0)
        r = generated_ddl(&b, v);
    if (r < 0) {
        vsl_buf_free(&b);
        return r;
    }
    *out = vsl_buf_take(&b);
    return 0;
}

int db_user_version(sqlite3 *h, int *out)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(h, "PRAGMA user_version", -1, &st, NULL);

    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *out = sqlite3_column_int(st, 0);
        rc = SQLITE_OK;
    }
    sqlite3_finalize(st);
    return rc;
}

/* 0 when the file may be vslint's: its application_id is vslint's or unset (databases before
 * schema 11 have none), and a file at schema 0 holds nothing yet. A file at schema 0 with tables
 * of its own is another program's SQLite database (a mistyped [database] path): adding
 * vslint's tables to it would change a file that is not ours, so it is refused. */
int db_foreign(sqlite3 *h, int version, char **errmsg)
{
    sqlite3_stmt *st = NULL;
    int64_t app = 0, objects = 0;
    char first[128] = "";
    int rc;

    if (version < 0 || version > db_schema_version()) {
        /* A newer vslint wrote this file; running old code on it could corrupt it. */
        db_set_errmsg(errmsg,
                      "written by a newer vslint (schema version %d; this vslint knows 0-%d): "
                      "run that vslint, or restore a backup this version wrote",
                      version, db_schema_version());
        return -VSL_EDB;
    }
    rc = sqlite3_prepare_v2(h, "PRAGMA application_id", -1, &st, NULL);
    if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        app = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    if (app != 0 && app != DB_APPLICATION_ID) {
        db_set_errmsg(errmsg, "not a vslint database: its application_id is %lld, another "
                      "program's; point [database] path at a file of vslint's own",
                      (long long)app);
        return -VSL_EDB;
    }
    if (version != 0) {
        /* Other programs number their schemas with user_version too: a file of version 1 to
         * this one's that is not marked vslint's must hold the tables every vslint schema has
         * had since the first (vcenters, polls, findings), or it is not vslint's. */
        if (app == DB_APPLICATION_ID)
            return 0;
        int64_t ours = 0;
        rc = sqlite3_prepare_v2(h,
                                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND "
                                "name IN ('vcenters', 'polls', 'findings')",
                                -1, &st, NULL);
        if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
            ours = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
        if (ours == 3)
            return 0;
        db_set_errmsg(errmsg, "not a vslint database: its schema version is %d but it lacks "
                      "vslint's tables (vcenters, polls, findings); vslint changes nothing in "
                      "it: point [database] path at a new file",
                      version);
        return -VSL_EDB;
    }
    rc = sqlite3_prepare_v2(h,
                            "SELECT count(*), min(name) FROM sqlite_master WHERE name NOT LIKE "
                            "'sqlite\\_%' ESCAPE '\\'",
                            -1, &st, NULL);
    if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
        objects = sqlite3_column_int64(st, 0);
        if (sqlite3_column_text(st, 1))
            snprintf(first, sizeof(first), "%s", (const char *)sqlite3_column_text(st, 1));
    }
    sqlite3_finalize(st);
    if (objects > 0) {
        db_set_errmsg(errmsg, "not a vslint database: it holds %lld table(s) or index(es) of "
                      "another program (\"%s\") and no vslint schema; vslint changes nothing in "
                      "it: point [database] path at a new file",
                      (long long)objects, first);
        return -VSL_EDB;
    }
    return 0;
}

int db_migrate(sqlite3 *h, char **errmsg)
{
    return db_migrate_to(h, db_schema_version(), errmsg);
}

int db_migrate_to(sqlite3 *h, int target, char **errmsg)
{
    const int current = db_schema_version();
    char sql[64], *ddl = NULL;
    int version = 0;
    int rc, r;

    /* The version is read inside the write transaction, so two processes opening a new file at
     * once cannot both apply the same migration: the second waits, then sees the new version. */
    for (;;) {
        rc = sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL);
        if (rc != SQLITE_OK) {
            db_set_errmsg(errmsg, "cannot start migration: %s", sqlite3_errmsg(h));
            return db_fail(h, rc, "migrating");
        }
        rc = db_user_version(h, &version);
        if (rc != SQLITE_OK) {
            db_set_errmsg(errmsg, "cannot read schema version: %s", sqlite3_errmsg(h));
            r = db_fail(h, rc, "migrating");
            goto fail;
        }
        if ((r = db_foreign(h, version, errmsg)) < 0)
            goto fail;
        if (version >= target)
            break;
        /* A new database gets the current schema at once; an older one each version's
         * migration in turn. */
        const int fresh = version == 0 && target == current;
        r = migration_sql(fresh ? 0 : version + 1, &ddl);
        if (r < 0)
            goto fail;
        /* Static DDL, no input: sqlite3_exec is the simple way to run a script of statements. */
        rc = sqlite3_exec(h, ddl, NULL, NULL, NULL);
        free(ddl);
        ddl = NULL;
        if (rc != SQLITE_OK) {
            char what[64];
            snprintf(what, sizeof(what), "schema migration %d failed", version + 1);
            db_set_errmsg(errmsg, "%s: %s", what, sqlite3_errmsg(h));
            r = db_fail(h, rc, "migrating");
            goto fail;
        }
        version = fresh ? current : version + 1;
        /* Every database this build creates or migrates says it is vslint's. */
        sqlite3_exec(h, "PRAGMA application_id = " DB_APPLICATION_ID_STR, NULL, NULL, NULL);
        /* PRAGMA takes no bound parameters; the value is our own integer, not input. */
        snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", version);
        rc = sqlite3_exec(h, sql, NULL, NULL, NULL);
        if (rc == SQLITE_OK)
            rc = sqlite3_exec(h, "COMMIT", NULL, NULL, NULL);
        if (rc != SQLITE_OK) {
            db_set_errmsg(errmsg, "cannot record schema version: %s", sqlite3_errmsg(h));
            r = db_fail(h, rc, "migrating");
            goto fail;
        }
        log_debug("db: migrated schema to version %d", version);
    }
    rc = sqlite3_exec(h, "COMMIT", NULL, NULL, NULL);
    if (rc != SQLITE_OK) {
        db_set_errmsg(errmsg, "cannot finish migration: %s", sqlite3_errmsg(h));
        r = db_fail(h, rc, "migrating");
        goto fail;
    }
    return 0;

fail:
    sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
    return r;
}
