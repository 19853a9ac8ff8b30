/* Reading the stored inventory back out as one JSON document (shape in docs/inventory.md). One
 * statement per table per call, whatever the estate's size; each generated from the table's
 * column list (db/columns.h) and a view of it. */
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

/* Objects that later rows attach to, looked up by their key columns joined with KEY_SEP.
 * A registry is a json object used as a hash table; it is never printed. */
enum reg { R_NONE = -1, R_POD, R_DATASTORE, R_HOST, R_HBA, R_TARGET, R_LUN, R_VM, R_ALARM, R_NREG };

/* How a row lands in its parent: as an object appended to an array, as its one field's value
 * appended to an array, or as a key (field 0) and value (field 1) set in an object. */
enum mode { M_OBJECT, M_SCALAR, M_MAP };

struct member {
    const char *name;
    int is_object; /* 0: starts as [], 1: starts as {} */
};

/* One query that reads one table (alias x) for one vCenter and hangs its rows on their parents:
 * the row's members are the view json of the table (db_view), its parent the object registered
 * in parent under the columns pkey, and the row's own object is registered in reg under rkey. */
struct loader {
    int t;
    const char *json;
    const struct db_extra *extras;
    const char *join, *where, *order;
    enum reg parent; /* R_NONE: the parent is the vCenter object */
    const char *pkey;
    const char *member; /* where in the parent the row goes */
    enum mode mode;
    enum reg reg; /* registry the row's object is entered in, R_NONE for none */
    const char *rkey;
    const struct member *members; /* what each row object starts with, NULL-terminated */
    const char *orphans; /* vCenter member for rows whose parent is unknown, or NULL: drop */
};

/* A loader's statement: the pkey columns first, then the rkey columns, then the fields. */
struct query {
    sqlite3_stmt *st;
    int npkey, nrkey, nfields;
    struct db_field fields[DB_MAX_FIELDS];
};

#define KEY_SEP "\x1f" /* ASCII unit separator: cannot occur in a moref or device name */
#define NF(a)   ((int)(sizeof(a) / sizeof((a)[0])))
#define MAX_SQL 8192

static const struct member pod_members[] = {{"datastores", 0}, {NULL, 0}};
static const struct member ds_members[] = {{"extents", 0}, {"hosts", 0}, {NULL, 0}};
static const struct member host_members[] = {{"options", 1},    {"vswitches", 0},  {"vnics", 0},
                                             {"hbas", 0},       {"iscsi_hbas", 0}, {"luns", 0},
                                             {"satp_rules", 0}, {"gaps", 0},       {NULL, 0}};
static const struct member hba_members[] = {
    {"bound_vnics", 0}, {"options", 0}, {"targets", 0}, {NULL, 0}};
static const struct member target_members[] = {{"options", 0}, {NULL, 0}};
static const struct member lun_members[] = {{"paths", 0}, {NULL, 0}};
static const struct member vm_members[] = {
    {"datastores", 0}, {"controllers", 0}, {"disks", 0}, {"snapshots", 0}, {NULL, 0}};
static const struct member alarm_members[] = {{"metrics", 0}, {NULL, 0}};

static const struct db_extra ds_extras[] = {{"storage_pod", "p.name", DB_TEXT}, {NULL, NULL, 0}};
static const struct db_extra vnic_extras[] = {{"vswitch", "pg.vswitch", DB_TEXT},
                                              {NULL, NULL, 0}};
static const struct db_extra lun_extras[] = {
    {"iops_limit", "n.iops", DB_INT}, {"psp_config", "n.psp_config", DB_TEXT}, {NULL, NULL, 0}};
static const struct db_extra alarm_extras[] = {
    {"entity_name", "coalesce(e.name, d.name, h.name, v.name)", DB_TEXT}, {NULL, NULL, 0}};
static const struct db_extra metric_extras[] = {
    {"counter", "p.name", DB_TEXT}, {"unit", "p.unit", DB_TEXT}, {NULL, NULL, 0}};

/* In order: a loader's parents are always loaded by an earlier one. The members of an object
 * come in the order docs/inventory.md gives (the order they were added in, "*" ending with the
 * newest). Device names sort by length first so vmk2 comes before vmk10. */
static const struct loader loaders[] = {
    {.t = T_STORAGE_POD,
     .json = "*",
     .order = "name, moref",
     .parent = R_NONE,
     .member = "storage_pods",
     .reg = R_POD,
     .rkey = "moref",
     .members = pod_members},
    {.t = T_DATASTORE,
     .json = "moref name type url capacity free_space uncommitted accessible maintenance_mode"
             " vmfs_major nas_remote_host parent storage_pod vm_count *",
     .extras = ds_extras,
     .join = " LEFT JOIN storage_pods p ON p.vcenter = x.vcenter AND p.moref = x.parent",
     .order = "x.name, x.moref",
     .parent = R_NONE,
     .member = "datastores",
     .reg = R_DATASTORE,
     .rkey = "moref",
     .members = ds_members},
    {.t = T_DATASTORE_EXTENT,
     .json = "*",
     .order = "datastore, position",
     .parent = R_DATASTORE,
     .pkey = "datastore",
     .member = "extents",
     .reg = R_NONE},
    {.t = T_DATASTORE_HOST,
     .json = "*",
     .order = "datastore, host",
     .parent = R_DATASTORE,
     .pkey = "datastore",
     .member = "hosts",
     .reg = R_NONE},
    {.t = T_DATASTORE,
     .json = "moref",
     .where = " AND parent IS NOT NULL",
     .order = "name, moref",
     .parent = R_POD,
     .pkey = "parent",
     .member = "datastores",
     .mode = M_SCALAR,
     .reg = R_NONE},
    {.t = T_DVSWITCH,
     .json = "*",
     .order = "name, moref",
     .parent = R_NONE,
     .member = "dvswitches",
     .reg = R_NONE},
    {.t = T_HOST,
     .json = "*",
     .order = "name, moref",
     .parent = R_NONE,
     .member = "hosts",
     .reg = R_HOST,
     .rkey = "moref",
     .members = host_members},
    {.t = T_HOST_OPTION,
     .json = "key value",
     .order = "host, key",
     .parent = R_HOST,
     .pkey = "host",
     .member = "options",
     .mode = M_MAP,
     .reg = R_NONE},
    {.t = T_VSWITCH,
     .json = "*",
     .order = "host, name",
     .parent = R_HOST,
     .pkey = "host",
     .member = "vswitches",
     .reg = R_NONE},
    {.t = T_VNIC,
     .json = "device mtu portgroup vswitch *",
     .extras = vnic_extras,
     .join = " LEFT JOIN portgroups pg"
             " ON pg.vcenter = x.vcenter AND pg.host = x.host AND pg.name = x.portgroup",
     .order = "x.host, length(x.device), x.device",
     .parent = R_HOST,
     .pkey = "host",
     .member = "vnics",
     .reg = R_NONE},
    {.t = T_HBA,
     .json = "*",
     .order = "host, length(device), device",
     .parent = R_HOST,
     .pkey = "host",
     .member = "hbas",
     .reg = R_NONE},
    {.t = T_ISCSI_HBA,
     .json = "*",
     .order = "host, length(device), device",
     .parent = R_HOST,
     .pkey = "host",
     .member = "iscsi_hbas",
     .reg = R_HBA,
     .rkey = "host device",
     .members = hba_members},
    {.t = T_ISCSI_BINDING,
     .json = "vnic",
     .order = "host, hba, length(vnic), vnic",
     .parent = R_HBA,
     .pkey = "host hba",
     .member = "bound_vnics",
     .mode = M_SCALAR,
     .reg = R_NONE},
    {.t = T_ISCSI_TARGET,
     .json = "kind address port iscsi_name *",
     .order = "host, hba, kind, address, port, x.iscsi_name",
     .parent = R_HBA,
     .pkey = "host hba",
     .member = "targets",
     .reg = R_TARGET,
     .rkey = "host hba kind target iscsi_name",
     .members = target_members},
    {.t = T_ISCSI_OPTION,
     .json = "*",
     .where = " AND target = ''",
     .order = "host, hba, key",
     .parent = R_HBA,
     .pkey = "host hba",
     .member = "options",
     .reg = R_NONE},
    {.t = T_ISCSI_OPTION,
     .json = "*",
     .where = " AND target <> ''",
     .order = "host, hba, kind, target, iscsi_name, key",
     .parent = R_TARGET,
     .pkey = "host hba kind target iscsi_name",
     .member = "options",
     .reg = R_NONE},
    {.t = T_LUN,
     .json = "canonical_name display_name vendor model lun_type local policy=psp satp iops_limit"
             " psp_config *",
     .extras = lun_extras,
     .join = " LEFT JOIN nmp_devices n"
             " ON n.vcenter = x.vcenter AND n.host = x.host AND n.device = x.canonical_name",
     .order = "x.host, x.canonical_name",
     .parent = R_HOST,
     .pkey = "host",
     .member = "luns",
     .reg = R_LUN,
     .rkey = "host canonical_name",
     .members = lun_members},
    {.t = T_LUN_PATH,
     .json = "*",
     .order = "host, lun, name",
     .parent = R_LUN,
     .pkey = "host lun",
     .member = "paths",
     .reg = R_NONE},
    {.t = T_SATP_RULE,
     .json = "*",
     .order = "host, satp, vendor, model, rule_group, psp, psp_options, device, driver,"
              " transport, claim_options, options",
     .parent = R_HOST,
     .pkey = "host",
     .member = "satp_rules",
     .reg = R_NONE},
    {.t = T_GAP,
     .json = "object *",
     .order = "object, what",
     .parent = R_HOST,
     .pkey = "object",
     .member = "gaps",
     .reg = R_NONE,
     .orphans = "gaps"},
    {.t = T_VM,
     .json = "moref name template power_state hw_version *",
     .order = "name, moref",
     .parent = R_NONE,
     .member = "vms",
     .reg = R_VM,
     .rkey = "moref",
     .members = vm_members},
    {.t = T_VM_DATASTORE,
     .json = "datastore",
     .join = " LEFT JOIN datastores d ON d.vcenter = x.vcenter AND d.moref = x.datastore",
     .order = "x.vm, d.name, x.datastore",
     .parent = R_VM,
     .pkey = "vm",
     .member = "datastores",
     .mode = M_SCALAR,
     .reg = R_NONE},
    {.t = T_CONTROLLER,
     .json = "*",
     .order = "vm, key",
     .parent = R_VM,
     .pkey = "vm",
     .member = "controllers",
     .reg = R_NONE},
    {.t = T_VDISK,
     .json = "*",
     .order = "vm, key",
     .parent = R_VM,
     .pkey = "vm",
     .member = "disks",
     .reg = R_NONE},
    {.t = T_SNAPSHOT,
     .json = "*",
     .order = "vm, depth, created, name",
     .parent = R_VM,
     .pkey = "vm",
     .member = "snapshots",
     .reg = R_NONE},
    {.t = T_ENTITY,
     .json = "*",
     .order = "name, moref",
     .parent = R_NONE,
     .member = "entities",
     .reg = R_NONE},
    {.t = T_ALARM_MANAGER,
     .json = "moref",
     .order = "moref",
     .parent = R_NONE,
     .member = "alarm_managers",
     .mode = M_SCALAR,
     .reg = R_NONE},
    /* The entity an alarm is defined on, by name, wherever the snapshot has one. */
    {.t = T_ALARM,
     .json = "* entity_name",
     .extras = alarm_extras,
     .join = " LEFT JOIN entities e ON e.vcenter = x.vcenter AND e.moref = x.entity"
             " LEFT JOIN datastores d ON d.vcenter = x.vcenter AND d.moref = x.entity"
             " LEFT JOIN hosts h ON h.vcenter = x.vcenter AND h.moref = x.entity"
             " LEFT JOIN vms v ON v.vcenter = x.vcenter AND v.moref = x.entity",
     .order = "x.name, x.moref",
     .parent = R_NONE,
     .member = "alarms",
     .reg = R_ALARM,
     .rkey = "moref",
     .members = alarm_members},
    {.t = T_ALARM_DISABLED,
     .json = "*",
     .order = "entity, alarm",
     .parent = R_NONE,
     .member = "alarms_disabled",
     .reg = R_NONE},
    {.t = T_ALARM_METRIC,
     .json = "object_type counter_id counter unit *",
     .extras = metric_extras,
     .join = " LEFT JOIN perf_counters p ON p.vcenter = x.vcenter AND p.counter_id = x.counter_id",
     .order = "x.alarm, x.pos",
     .parent = R_ALARM,
     .pkey = "alarm",
     .member = "metrics",
     .reg = R_NONE},
};

#define NLOADERS NF(loaders)

/* The vCenter object's members, in output order, before the loaders fill them. */
static const struct member vcenter_members[] = {
    {"datastores", 0}, {"storage_pods", 0}, {"dvswitches", 0},     {"hosts", 0},  {"vms", 0},
    {"gaps", 0},       {"entities", 0},     {"alarm_managers", 0}, {"alarms", 0},
    {"alarms_disabled", 0}, {NULL, 0}};

/* Appends the blank-separated columns of list, each as ", x.column"; *n counts them. */
static int add_key_columns(struct vsl_buf *sql, const char *list, int *n)
{
    int r = 0;

    *n = 0;
    for (const char *p = list; p && *p && r == 0; (*n)++) {
        const size_t len = strcspn(p, " ");
        r = vsl_buf_printf(sql, "%sx.%.*s", *n ? ", " : "", (int)len, p);
        p += len + (p[len] == ' ');
    }
    return r;
}

/* Builds and prepares the statement of loader l. */
static int prepare_loader(sqlite3 *h, const struct loader *l, struct query *q)
{
    struct vsl_buf sql;
    int r, i, n;

    vsl_buf_init(&sql, MAX_SQL);
    q->nfields = db_view(l->t, "x", l->json, l->extras, l->pkey, q->fields);
    r = vsl_buf_addstr(&sql, "SELECT ");
    if (r == 0)
        r = add_key_columns(&sql, l->pkey, &q->npkey);
    if (r == 0 && q->npkey && l->rkey)
        r = vsl_buf_addstr(&sql, ", ");
    if (r == 0)
        r = add_key_columns(&sql, l->rkey, &q->nrkey);
    for (i = 0; i < q->nfields && r == 0; i++) {
        n = q->npkey + q->nrkey + i;
        r = vsl_buf_printf(&sql, "%s%s", n ? ", " : "", q->fields[i].expr);
    }
    if (r == 0)
        r = vsl_buf_printf(&sql, " FROM %s x%s WHERE x.vcenter = ?1%s ORDER BY %s",
                           db_table_name(l->t), l->join ? l->join : "", l->where ? l->where : "",
                           l->order);
    if (r == 0) {
        const int rc = sqlite3_prepare_v2(h, sql.data, -1, &q->st, NULL);
        if (rc != SQLITE_OK)
            r = db_fail(h, rc, sql.data);
    }
    vsl_buf_free(&sql);
    return r;
}

/* A column as JSON of the field's type. Text that is not valid UTF-8 (jansson refuses it)
 * becomes null rather than failing the whole dump. Returns NULL only when out of memory. */
static json_t *column(sqlite3_stmt *st, int i, enum db_ctype t)
{
    if (sqlite3_column_type(st, i) == SQLITE_NULL)
        return json_null();
    switch (t) {
    case DB_INT:
    case DB_I64:
        return json_integer(sqlite3_column_int64(st, i));
    case DB_BOOL:
        return json_boolean(sqlite3_column_int64(st, i) != 0);
    default:
        return db_json_text(st, i);
    }
}

/* Joins key columns first..first+n-1 into buf. Returns NULL if the key does not fit (then
 * nothing in a registry can match it anyway). */
static const char *row_key(sqlite3_stmt *st, int first, int n, char *buf, size_t size)
{
    size_t len = 0;
    int i;

    buf[0] = '\0';
    for (i = 0; i < n; i++) {
        const char *s = (const char *)sqlite3_column_text(st, first + i);
        int w = snprintf(buf + len, size - len, "%s%s", i ? KEY_SEP : "", s ? s : "");
        if (w < 0 || (size_t)w >= size - len)
            return NULL;
        len += (size_t)w;
    }
    return buf;
}

static int add_members(json_t *o, const struct member *m)
{
    for (; m && m->name; m++) {
        if (json_object_set_new(o, m->name, m->is_object ? json_object() : json_array()) < 0)
            return -ENOMEM;
    }
    return 0;
}

/* Builds the row's JSON value per the loader's mode. Returns NULL when out of memory. */
static json_t *row_value(const struct loader *l, const struct query *q)
{
    const int first = q->npkey + q->nrkey;
    json_t *o;
    int i;

    if (l->mode == M_SCALAR)
        return column(q->st, first, q->fields[0].type);
    o = json_object();
    if (!o)
        return NULL;
    for (i = 0; i < q->nfields; i++) {
        if (json_object_set_new(o, q->fields[i].name, column(q->st, first + i, q->fields[i].type)))
            goto fail;
    }
    if (add_members(o, l->members) < 0)
        goto fail;
    return o;

fail:
    json_decref(o);
    return NULL;
}

/* Runs one loader for one vCenter. Its statement is bound; it is reset on return. */
static int run_loader(const struct loader *l, const struct query *q, json_t *vc, json_t **regs)
{
    sqlite3_stmt *st = q->st;
    char key[1024];
    json_t *v = NULL;
    int rc, r = 0;

    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        json_t *parent = vc, *container;
        const char *member = l->member;

        if (l->parent != R_NONE) {
            const char *k = row_key(st, 0, q->npkey, key, sizeof(key));
            parent = k ? json_object_get(regs[l->parent], k) : NULL;
            if (!parent && l->orphans) {
                parent = vc;
                member = l->orphans;
            }
            if (!parent)
                continue; /* a child of an object this snapshot does not hold */
        }
        container = json_object_get(parent, member);
        assert(container);
        v = row_value(l, q);
        if (!v) {
            r = -ENOMEM;
            goto out;
        }
        if (l->mode == M_MAP) {
            /* Option names come from the server: one that is not UTF-8 is left out. */
            json_t *name = column(st, q->npkey + q->nrkey, DB_TEXT);
            if (json_is_string(name) && json_object_set(container, json_string_value(name),
                                                        json_object_get(v, "value")) < 0)
                r = -ENOMEM;
            json_decref(name);
            if (r < 0)
                goto out;
        } else if (json_array_append(container, v) < 0) {
            r = -ENOMEM;
            goto out;
        }
        if (l->reg != R_NONE) {
            const char *k = row_key(st, q->npkey, q->nrkey, key, sizeof(key));
            if (k && json_object_set_nocheck(regs[l->reg], k, v) < 0) {
                r = -ENOMEM;
                goto out;
            }
        }
        json_decref(v);
        v = NULL;
    }
    if (rc != SQLITE_DONE)
        r = db_fail(sqlite3_db_handle(st), rc, l->member);
out:
    json_decref(v);
    sqlite3_reset(st);
    return r;
}

static json_t *last_poll(sqlite3_stmt *st)
{
    int64_t started, finished;
    json_t *p;

    if (sqlite3_column_type(st, 2) == SQLITE_NULL)
        return json_null();
    started = sqlite3_column_int64(st, 2);
    finished = sqlite3_column_int64(st, 3);
    p = json_object();
    if (!p)
        return NULL;
    if (json_object_set_new(p, "started_ms", json_integer(started)) ||
        json_object_set_new(p, "finished_ms", json_integer(finished)) ||
        json_object_set_new(p, "duration_ms", json_integer(finished - started)) ||
        json_object_set_new(p, "ok", json_boolean(sqlite3_column_int(st, 4) != 0)) ||
        json_object_set_new(p, "error", column(st, 5, DB_TEXT)) ||
        json_object_set_new(p, "mode", column(st, 6, DB_TEXT))) {
        json_decref(p);
        return NULL;
    }
    return p;
}

/* What vcenter_json() reads with and adds to: the loaders' statements, the vCenters' array. */
struct vcenters {
    const struct query *q;
    json_t *list;
};

/* Builds one vCenter's object from the current row of vst and every loader, and appends it to
 * the list (a db_row_fn of db_inventory_json()). */
static int vcenter_json(sqlite3_stmt *vst, void *ctx)
{
    const struct vcenters *v = ctx;
    const struct query *q = v->q;
    json_t *vc = json_object();
    json_t *regs[R_NREG] = {NULL};
    const char *name = (const char *)sqlite3_column_text(vst, 0);
    int i, r = -ENOMEM;

    if (!vc || !name)
        goto out;
    if (json_object_set_new(vc, "name", column(vst, 0, DB_TEXT)) ||
        json_object_set_new(vc, "url", column(vst, 1, DB_TEXT)) ||
        json_object_set_new(vc, "last_poll", last_poll(vst)) ||
        add_members(vc, vcenter_members) < 0)
        goto out;
    for (i = 0; i < R_NREG; i++) {
        regs[i] = json_object();
        if (!regs[i])
            goto out;
    }
    for (i = 0; i < NLOADERS; i++) {
        int rc = sqlite3_bind_text(q[i].st, 1, name, -1, SQLITE_TRANSIENT);
        if (rc != SQLITE_OK) {
            r = db_fail(sqlite3_db_handle(q[i].st), rc, "reading inventory");
            goto out;
        }
        r = run_loader(&loaders[i], &q[i], vc, regs);
        if (r < 0)
            goto out;
    }
    r = json_array_append(v->list, vc) < 0 ? -ENOMEM : 0;
out:
    for (i = 0; i < R_NREG; i++)
        json_decref(regs[i]);
    json_decref(vc);
    return r;
}

int db_inventory_json(struct db *db, const char *vcenter, json_t **out)
{
    static const char vc_sql[] =
        "SELECT v.name, v.url, p.started_ms, p.finished_ms, p.ok, p.error, p.mode FROM vcenters v"
        " LEFT JOIN polls p ON p.id = v.last_poll_id"
        " WHERE v.kind IS NULL AND (?1 IS NULL OR v.name = ?1) ORDER BY v.name";
    sqlite3_stmt *vst = NULL;
    struct query *q = NULL;
    struct vcenters v;
    json_t *root = NULL;
    int i, rc, r, in_tx;

    assert(db && out);
    assert(!db->in_snapshot);
    *out = NULL;
    /* One read transaction: with WAL it pins one committed state, so a poll committing while we
     * read cannot give us half of the old snapshot and half of the new one. */
    rc = sqlite3_exec(db->h, "BEGIN", NULL, NULL, NULL);
    in_tx = rc == SQLITE_OK;
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db->h, vc_sql, -1, &vst, NULL);
    if (rc == SQLITE_OK)
        rc = db_bind_text(vst, 1, vcenter);
    if (rc != SQLITE_OK) {
        r = db_fail(db->h, rc, "reading inventory");
        goto out;
    }
    q = calloc(NLOADERS, sizeof(*q));
    if (!q) {
        r = -ENOMEM;
        goto out;
    }
    for (i = 0; i < NLOADERS; i++) {
        r = prepare_loader(db->h, &loaders[i], &q[i]);
        if (r < 0)
            goto out;
    }
    root = json_pack("{s:[]}", "vcenters");
    v = (struct vcenters){q, json_object_get(root, "vcenters")};
    r = root ? db_each_row(vst, "reading inventory", vcenter_json, &v) : -ENOMEM;
    if (r == 0 && vcenter && json_array_size(v.list) == 0)
        r = -VSL_ENOTFOUND;
    if (r == 0) {
        *out = root;
        root = NULL;
    }
out:
    sqlite3_finalize(vst);
    for (i = 0; q && i < NLOADERS; i++)
        sqlite3_finalize(q[i].st);
    free(q);
    if (in_tx)
        sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL);
    json_decref(root);
    return r;
}
