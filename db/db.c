/* Opening the database and writing poll snapshots: one transaction per poll, rows inserted
 * through statements prepared once per connection, and the poll history in the polls table. */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db/db-private.h"
#include "db/db.h"
#include "util/err.h"
#include "util/log.h"

struct db_snapshot {
    struct db *db; /* borrowed */
    char *vcenter; /* owned */
    char *url;     /* owned, may be NULL */
};

/* INSERT OR REPLACE: a confused server that sends the same key twice costs one row, not the
 * poll (satp_rules has no key: a rule sent twice is two rows, which changes no answer).
 * ?1 is always the vCenter; the rest follow the row struct. */
static const char *const insert_sql[T_NTABLES] = {
    [T_DATASTORE] = "INSERT OR REPLACE INTO datastores (vcenter, moref, name, type, url, parent,"
                    " capacity, free_space, uncommitted, accessible, maintenance_mode, vmfs_major,"
                    " nas_remote_host, vm_count, vmfs_version, vmfs_local, vmfs_ssd,"
                    " unmap_priority) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11,"
                    " ?12, ?13, ?14, ?15, ?16, ?17, ?18)",
    [T_DATASTORE_EXTENT] = "INSERT OR REPLACE INTO datastore_extents (vcenter, datastore,"
                           " position, disk_name, partition) VALUES (?1, ?2, ?3, ?4, ?5)",
    [T_DATASTORE_HOST] = "INSERT OR REPLACE INTO datastore_hosts (vcenter, datastore, host,"
                         " mounted, accessible, access_mode) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    [T_STORAGE_POD] = "INSERT OR REPLACE INTO storage_pods (vcenter, moref, name, capacity,"
                      " free_space) VALUES (?1, ?2, ?3, ?4, ?5)",
    [T_VM] = "INSERT OR REPLACE INTO vms (vcenter, moref, name, hw_version, template, power_state,"
             " ft_state, host, vm_path_name) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    [T_VM_DATASTORE] = "INSERT OR REPLACE INTO vm_datastores (vcenter, vm, datastore)"
                       " VALUES (?1, ?2, ?3)",
    [T_CONTROLLER] = "INSERT OR REPLACE INTO controllers (vcenter, vm, key, type, shared_bus,"
                     " bus_number) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    [T_VDISK] = "INSERT OR REPLACE INTO vdisks (vcenter, vm, key, label, file_name, datastore,"
                " capacity_bytes, format, controller_key, unit_number)"
                " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    [T_SNAPSHOT] = "INSERT OR REPLACE INTO snapshots (vcenter, vm, name, created, depth)"
                   " VALUES (?1, ?2, ?3, ?4, ?5)",
    [T_HOST] = "INSERT OR REPLACE INTO hosts (vcenter, moref, name, parent, connection_state)"
               " VALUES (?1, ?2, ?3, ?4, ?5)",
    [T_HOST_OPTION] = "INSERT OR REPLACE INTO host_options (vcenter, host, key, value)"
                      " VALUES (?1, ?2, ?3, ?4)",
    [T_VNIC] = "INSERT OR REPLACE INTO vnics (vcenter, host, device, portgroup, dvs_uuid,"
               " dvs_portgroup, mtu, ip) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    [T_VSWITCH] = "INSERT OR REPLACE INTO vswitches (vcenter, host, name, mtu)"
                  " VALUES (?1, ?2, ?3, ?4)",
    [T_PORTGROUP] = "INSERT OR REPLACE INTO portgroups (vcenter, host, name, vswitch)"
                    " VALUES (?1, ?2, ?3, ?4)",
    [T_DVSWITCH] = "INSERT OR REPLACE INTO dvswitches (vcenter, moref, name, uuid, max_mtu)"
                   " VALUES (?1, ?2, ?3, ?4, ?5)",
    [T_HBA] = "INSERT OR REPLACE INTO hbas (vcenter, host, device, type, driver, model, status)"
              " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    [T_ISCSI_HBA] = "INSERT OR REPLACE INTO iscsi_hbas (vcenter, host, device, iscsi_name, model)"
                    " VALUES (?1, ?2, ?3, ?4, ?5)",
    [T_ISCSI_TARGET] = "INSERT OR REPLACE INTO iscsi_targets (vcenter, host, hba, kind, target,"
                       " iscsi_name, address, port, discovery_method, parent)"
                       " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    [T_ISCSI_OPTION] = "INSERT OR REPLACE INTO iscsi_options (vcenter, host, hba, kind, target,"
                       " iscsi_name, key, value, inherited)"
                       " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    [T_ISCSI_BINDING] = "INSERT OR REPLACE INTO iscsi_bindings (vcenter, host, hba, vnic)"
                        " VALUES (?1, ?2, ?3, ?4)",
    [T_LUN] = "INSERT OR REPLACE INTO luns (vcenter, host, canonical_name, key, display_name,"
              " vendor, model, lun_type, local, psp, satp, policy_type, multipath_plugin)"
              " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
    [T_LUN_PATH] = "INSERT OR REPLACE INTO lun_paths (vcenter, host, lun, name, state, adapter)"
                   " VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    [T_NMP_DEVICE] = "INSERT OR REPLACE INTO nmp_devices (vcenter, host, device, psp, psp_config,"
                     " iops) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    [T_SATP_RULE] = "INSERT INTO satp_rules (vcenter, host, satp, vendor, model, psp, psp_options,"
                    " rule_group, device, driver, transport, claim_options, options, description)"
                    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
    [T_GAP] = "INSERT OR REPLACE INTO gaps (vcenter, object, what, error) VALUES (?1, ?2, ?3, ?4)",
    [T_ENTITY] = "INSERT OR REPLACE INTO entities (vcenter, moref, type, name, parent)"
                 " VALUES (?1, ?2, ?3, ?4, ?5)",
    [T_ALARM_MANAGER] = "INSERT OR REPLACE INTO alarm_managers (vcenter, moref) VALUES (?1, ?2)",
    [T_ALARM] = "INSERT OR REPLACE INTO alarms (vcenter, moref, name, system_name, enabled,"
                " entity, entity_type) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    [T_ALARM_METRIC] = "INSERT OR REPLACE INTO alarm_metrics (vcenter, alarm, pos, object_type,"
                       " counter_id, operator, yellow, red)"
                       " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    [T_PERF_COUNTER] = "INSERT OR REPLACE INTO perf_counters (vcenter, counter_id, name, unit)"
                       " VALUES (?1, ?2, ?3, ?4)",
};

/* The table each counted kind is counted in. */
static const enum db_table kind_table[DB_NKINDS] = {
    [DB_DATASTORE] = T_DATASTORE, [DB_STORAGE_POD] = T_STORAGE_POD,   [DB_VM] = T_VM,
    [DB_VDISK] = T_VDISK,         [DB_SNAPSHOT] = T_SNAPSHOT,         [DB_HOST] = T_HOST,
    [DB_VNIC] = T_VNIC,           [DB_VSWITCH] = T_VSWITCH,           [DB_DVSWITCH] = T_DVSWITCH,
    [DB_ISCSI_HBA] = T_ISCSI_HBA, [DB_ISCSI_TARGET] = T_ISCSI_TARGET, [DB_LUN] = T_LUN,
    [DB_LUN_PATH] = T_LUN_PATH,
};

const char *db_kind_name(enum db_kind k)
{
    if (k < 0 || k >= DB_NKINDS)
        return "unknown";
    return db_table_name(kind_table[k]);
}

int db_err(int rc)
{
    switch (rc & 0xff) {
    case SQLITE_OK:
    case SQLITE_ROW:
    case SQLITE_DONE:
        return 0;
    case SQLITE_NOMEM:
        return -ENOMEM;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return -EBUSY;
    case SQLITE_FULL:
        return -ENOSPC;
    case SQLITE_READONLY:
        return -EROFS;
    case SQLITE_IOERR:
        return -EIO;
    case SQLITE_PERM:
    case SQLITE_AUTH:
        return -EACCES;
    default:
        return -VSL_EDB;
    }
}

static void set_errmsg(char **errmsg, const char *what, const char *detail)
{
    char msg[512];

    if (!errmsg)
        return;
    snprintf(msg, sizeof(msg), "%s: %s", what, detail);
    free(*errmsg);
    *errmsg = strdup(msg);
}

/* Prepares *st once; later calls reuse it. */
static int prepare(struct db *db, sqlite3_stmt **st, const char *sql)
{
    int rc;

    if (*st)
        return 0;
    rc = sqlite3_prepare_v3(db->h, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL);
    if (rc != SQLITE_OK) {
        log_debug("db: prepare failed: %s: %s", sqlite3_errmsg(db->h), sql);
        *st = NULL;
        return db_err(rc);
    }
    return 0;
}

/* Runs a statement that returns no rows and makes it ready for the next use. */
static int step_done(struct db *db, sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);

    if (rc != SQLITE_DONE)
        log_debug("db: %s: %s", sqlite3_errmsg(db->h), sqlite3_sql(st));
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return rc == SQLITE_DONE ? 0 : db_err(rc);
}

static int exec(struct db *db, const char *sql)
{
    int rc = sqlite3_exec(db->h, sql, NULL, NULL, NULL);

    if (rc != SQLITE_OK) {
        log_debug("db: %s: %s", sqlite3_errmsg(db->h), sql);
        return db_err(rc);
    }
    return 0;
}

/* One column value of a row about to be inserted. */
struct val {
    int is_str;
    const char *s;
    int64_t i;
};

#define S(x)                                                                                       \
    {                                                                                              \
        .is_str = 1, .s = (x)                                                                      \
    }
#define I(x)                                                                                       \
    {                                                                                              \
        .is_str = 0, .i = (x)                                                                      \
    }
#define NVALS(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Inserts one row of table t for the snapshot's vCenter. Strings are bound without copying:
 * they only need to live until the step, which is within the sink call that borrowed them.
 * NULL strings and VIM_UNKNOWN numbers become SQL NULL. The first nkey values are the row's
 * key; a row missing one is skipped (logged) rather than failing the poll over one object. */
static int insert(struct db_snapshot *snap, enum db_table t, const struct val *v, int n, int nkey)
{
    struct db *db = snap->db;
    sqlite3_stmt *st;
    int i, rc = SQLITE_OK, r;

    for (i = 0; i < nkey; i++) {
        if (v[i].is_str && !v[i].s) {
            log_debug("db: %s: skipping a row without a key", db_table_name(t));
            return 0;
        }
    }
    r = prepare(db, &db->ins[t], insert_sql[t]);
    if (r < 0)
        return r;
    st = db->ins[t];
    rc = sqlite3_bind_text(st, 1, snap->vcenter, -1, SQLITE_STATIC);
    for (i = 0; i < n && rc == SQLITE_OK; i++) {
        if (v[i].is_str && v[i].s)
            rc = sqlite3_bind_text(st, i + 2, v[i].s, -1, SQLITE_STATIC);
        else if (!v[i].is_str && v[i].i != VIM_UNKNOWN)
            rc = sqlite3_bind_int64(st, i + 2, v[i].i);
        else
            rc = sqlite3_bind_null(st, i + 2);
    }
    if (rc != SQLITE_OK) {
        sqlite3_clear_bindings(st);
        return db_err(rc);
    }
    return step_done(db, st);
}

static int put_datastore(void *ctx, const struct vim_datastore *d)
{
    const struct val v[] = {
        S(d->moref),          S(d->name),
        S(d->type),           S(d->url),
        S(d->parent),         I(d->capacity),
        I(d->free_space),     I(d->uncommitted),
        I(d->accessible),     S(d->maintenance_mode),
        I(d->vmfs_major),     S(d->nas_remote_host),
        I(d->vm_count),       S(d->vmfs_version),
        I(d->vmfs_local),     I(d->vmfs_ssd),
        S(d->unmap_priority),
    };
    return insert(ctx, T_DATASTORE, v, NVALS(v), 1);
}

static int put_datastore_extent(void *ctx, const struct vim_datastore_extent *x)
{
    const struct val v[] = {S(x->datastore), I(x->position), S(x->disk_name), I(x->partition)};
    return insert(ctx, T_DATASTORE_EXTENT, v, NVALS(v), 1);
}

static int put_datastore_host(void *ctx, const struct vim_datastore_host *m)
{
    const struct val v[] = {S(m->datastore), S(m->host), I(m->mounted), I(m->accessible),
                            S(m->access_mode)};
    return insert(ctx, T_DATASTORE_HOST, v, NVALS(v), 2);
}

static int put_storage_pod(void *ctx, const struct vim_storage_pod *p)
{
    const struct val v[] = {S(p->moref), S(p->name), I(p->capacity), I(p->free_space)};
    return insert(ctx, T_STORAGE_POD, v, NVALS(v), 1);
}

static int put_vm(void *ctx, const struct vim_vm *m)
{
    const struct val v[] = {
        S(m->moref),       S(m->name),     S(m->hw_version), I(m->template),
        S(m->power_state), S(m->ft_state), S(m->host),       S(m->vm_path_name),
    };
    return insert(ctx, T_VM, v, NVALS(v), 1);
}

static int put_vm_datastore(void *ctx, const struct vim_vm_datastore *d)
{
    const struct val v[] = {S(d->vm), S(d->datastore)};
    return insert(ctx, T_VM_DATASTORE, v, NVALS(v), 2);
}

static int put_controller(void *ctx, const struct vim_controller *c)
{
    const struct val v[] = {S(c->vm), I(c->key), S(c->type), S(c->shared_bus), I(c->bus_number)};
    return insert(ctx, T_CONTROLLER, v, NVALS(v), 2);
}

static int put_vdisk(void *ctx, const struct vim_vdisk *d)
{
    const struct val v[] = {
        S(d->vm),          I(d->key),
        S(d->label),       S(d->file_name),
        S(d->datastore),   I(d->capacity_bytes),
        S(d->format),      I(d->controller_key),
        I(d->unit_number),
    };
    return insert(ctx, T_VDISK, v, NVALS(v), 2);
}

static int put_snapshot(void *ctx, const struct vim_snapshot *s)
{
    const struct val v[] = {S(s->vm), S(s->name), I(s->created), I(s->depth)};
    return insert(ctx, T_SNAPSHOT, v, NVALS(v), 2);
}

static int put_host(void *ctx, const struct vim_host *h)
{
    const struct val v[] = {S(h->moref), S(h->name), S(h->parent), S(h->connection_state)};
    return insert(ctx, T_HOST, v, NVALS(v), 1);
}

static int put_host_option(void *ctx, const struct vim_host_option *o)
{
    const struct val v[] = {S(o->host), S(o->key), S(o->value)};
    return insert(ctx, T_HOST_OPTION, v, NVALS(v), 2);
}

static int put_vnic(void *ctx, const struct vim_vnic *n)
{
    const struct val v[] = {
        S(n->host),          S(n->device), S(n->portgroup), S(n->dvs_uuid),
        S(n->dvs_portgroup), I(n->mtu),    S(n->ip),
    };
    return insert(ctx, T_VNIC, v, NVALS(v), 2);
}

static int put_vswitch(void *ctx, const struct vim_vswitch *s)
{
    const struct val v[] = {S(s->host), S(s->name), I(s->mtu)};
    return insert(ctx, T_VSWITCH, v, NVALS(v), 2);
}

static int put_portgroup(void *ctx, const struct vim_portgroup *p)
{
    const struct val v[] = {S(p->host), S(p->name), S(p->vswitch)};
    return insert(ctx, T_PORTGROUP, v, NVALS(v), 2);
}

static int put_dvswitch(void *ctx, const struct vim_dvswitch *d)
{
    const struct val v[] = {S(d->moref), S(d->name), S(d->uuid), I(d->max_mtu)};
    return insert(ctx, T_DVSWITCH, v, NVALS(v), 1);
}

static int put_hba(void *ctx, const struct vim_hba *h)
{
    const struct val v[] = {S(h->host),   S(h->device), S(h->type),
                            S(h->driver), S(h->model),  S(h->status)};
    return insert(ctx, T_HBA, v, NVALS(v), 2);
}

static int put_iscsi_hba(void *ctx, const struct vim_iscsi_hba *h)
{
    const struct val v[] = {S(h->host), S(h->device), S(h->iscsi_name), S(h->model)};
    return insert(ctx, T_ISCSI_HBA, v, NVALS(v), 2);
}

static int put_iscsi_target(void *ctx, const struct vim_iscsi_target *t)
{
    /* The key is the "address:port" string iscsi_options uses to name a target. An address too
     * long for it is not a real one; the row is then skipped like any row without a key. */
    char target[320];
    const char *tp = NULL;
    int n;

    if (t->address) {
        if (t->port == VIM_UNKNOWN)
            n = snprintf(target, sizeof(target), "%s", t->address);
        else
            n = snprintf(target, sizeof(target), "%s:%d", t->address, t->port);
        if (n >= 0 && (size_t)n < sizeof(target))
            tp = target;
    }
    /* A send target has no IQN: '' keeps the key free of NULLs. */
    const struct val v[] = {
        S(t->host),
        S(t->hba),
        S(t->kind),
        S(tp),
        S(t->iscsi_name ? t->iscsi_name : ""),
        S(t->address),
        I(t->port),
        S(t->discovery_method),
        S(t->parent),
    };
    return insert(ctx, T_ISCSI_TARGET, v, NVALS(v), 4);
}

static int put_iscsi_option(void *ctx, const struct vim_iscsi_option *o)
{
    /* Adapter-level options store '' for kind, target and IQN so the key holds no NULL; so do
     * send targets for the IQN. */
    const int adapter = o->target == NULL;
    const struct val v[] = {
        S(o->host),
        S(o->hba),
        S(adapter ? "" : o->kind),
        S(adapter ? "" : o->target),
        S(adapter || !o->target_iqn ? "" : o->target_iqn),
        S(o->key),
        S(o->value),
        I(o->inherited),
    };
    return insert(ctx, T_ISCSI_OPTION, v, NVALS(v), 6);
}

static int put_iscsi_binding(void *ctx, const struct vim_iscsi_binding *b)
{
    const struct val v[] = {S(b->host), S(b->hba), S(b->vnic)};
    return insert(ctx, T_ISCSI_BINDING, v, NVALS(v), 3);
}

static int put_lun(void *ctx, const struct vim_lun *l)
{
    const struct val v[] = {
        S(l->host),   S(l->canonical_name), S(l->key),         S(l->display_name),
        S(l->vendor), S(l->model),          S(l->lun_type),    I(l->local),
        S(l->psp),    S(l->satp),           S(l->policy_type), S(l->multipath_plugin),
    };
    return insert(ctx, T_LUN, v, NVALS(v), 2);
}

static int put_lun_path(void *ctx, const struct vim_lun_path *p)
{
    const struct val v[] = {S(p->host), S(p->lun), S(p->name), S(p->state), S(p->adapter)};
    return insert(ctx, T_LUN_PATH, v, NVALS(v), 3);
}

static int put_nmp_device(void *ctx, const struct vim_nmp_device *d)
{
    const struct val v[] = {S(d->host), S(d->device), S(d->psp), S(d->psp_config), I(d->iops)};
    return insert(ctx, T_NMP_DEVICE, v, NVALS(v), 2);
}

static int put_satp_rule(void *ctx, const struct vim_satp_rule *r)
{
    const struct val v[] = {S(r->host),       S(r->satp),        S(r->vendor),        S(r->model),
                            S(r->psp),        S(r->psp_options), S(r->rule_group),    S(r->device),
                            S(r->driver),     S(r->transport),   S(r->claim_options), S(r->options),
                            S(r->description)};
    return insert(ctx, T_SATP_RULE, v, NVALS(v), 2);
}

static int put_gap(void *ctx, const struct vim_gap *g)
{
    /* A gap about no particular object is about the vCenter itself: object ''. */
    const struct val v[] = {S(g->object ? g->object : ""), S(g->what), S(g->error)};
    return insert(ctx, T_GAP, v, NVALS(v), 2);
}

static int put_entity(void *ctx, const struct vim_entity *e)
{
    const struct val v[] = {S(e->moref), S(e->type), S(e->name), S(e->parent)};
    return insert(ctx, T_ENTITY, v, NVALS(v), 1);
}

static int put_alarm_manager(void *ctx, const struct vim_alarm_manager *m)
{
    const struct val v[] = {S(m->moref)};
    return insert(ctx, T_ALARM_MANAGER, v, NVALS(v), 1);
}

static int put_alarm(void *ctx, const struct vim_alarm *a)
{
    const struct val v[] = {S(a->moref),   S(a->name),   S(a->system_name),
                            I(a->enabled), S(a->entity), S(a->entity_type)};
    return insert(ctx, T_ALARM, v, NVALS(v), 1);
}

static int put_alarm_metric(void *ctx, const struct vim_alarm_metric *m)
{
    const struct val v[] = {S(m->alarm), I(m->pos),    S(m->object_type), I(m->counter_id),
                            S(m->op),    I(m->yellow), I(m->red)};
    return insert(ctx, T_ALARM_METRIC, v, NVALS(v), 1);
}

static int put_perf_counter(void *ctx, const struct vim_perf_counter *p)
{
    const struct val v[] = {I(p->key), S(p->name), S(p->unit)};
    return insert(ctx, T_PERF_COUNTER, v, NVALS(v), 0);
}

/* The database holds the estate's names and layout: it is created 0600 whatever the umask
 * (SQLite gives its -wal and -shm files the database file's mode). An existing file keeps the
 * mode its owner chose. */
static void create_private(const char *path)
{
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

    if (fd < 0)
        return; /* there already, or not creatable: sqlite3_open_v2 says which */
    if (fchmod(fd, 0600) < 0)
        log_debug("db: %s: chmod 0600: %s", path, strerror(errno));
    close(fd);
}

int db_open(const char *path, struct db **out, char **errmsg)
{
    struct db *db;
    sqlite3_stmt *st = NULL;
    int rc, r;

    assert(path && out);
    *out = NULL;
    if (errmsg)
        *errmsg = NULL;
    db = calloc(1, sizeof(*db));
    if (!db)
        return -ENOMEM;
    create_private(path);
    rc = sqlite3_open_v2(path, &db->h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
    if (rc != SQLITE_OK) {
        set_errmsg(errmsg, path, db->h ? sqlite3_errmsg(db->h) : sqlite3_errstr(rc));
        r = db_err(rc);
        goto fail;
    }
    sqlite3_extended_result_codes(db->h, 1);
    /* Readers (the API) and the poll writer are separate connections; a writer holding the
     * lock briefly must not turn into an error on the other side. */
    sqlite3_busy_timeout(db->h, 5000);

    /* WAL lets the API read the last committed snapshot while a poll is being written. The
     * default synchronous=FULL is kept: one commit per poll costs nothing, and a committed poll
     * then survives a power cut, not only a crash. */
    rc = sqlite3_prepare_v2(db->h, "PRAGMA journal_mode = WAL", -1, &st, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        set_errmsg(errmsg, path, sqlite3_errmsg(db->h));
        r = db_err(rc);
        goto fail;
    }
    if (strcmp((const char *)sqlite3_column_text(st, 0), "wal") != 0)
        log_debug("db: %s: journal mode is %s, not wal", path, sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    st = NULL;

    rc = sqlite3_exec(db->h, "PRAGMA foreign_keys = ON", NULL, NULL, NULL);
    if (rc != SQLITE_OK) {
        set_errmsg(errmsg, path, sqlite3_errmsg(db->h));
        r = db_err(rc);
        goto fail;
    }
    r = db_migrate(db->h, errmsg);
    if (r < 0)
        goto fail;
    *out = db;
    return 0;

fail:
    sqlite3_finalize(st);
    db_close(db);
    return r;
}

void db_close(struct db *db)
{
    int i;

    if (!db)
        return;
    for (i = 0; i < T_NTABLES; i++) {
        sqlite3_finalize(db->ins[i]);
        sqlite3_finalize(db->del[i]);
    }
    /* close_v2: the handle goes away once nothing uses it, even if a caller leaked a statement. */
    sqlite3_close_v2(db->h);
    free(db);
}

static void snapshot_free(struct db_snapshot *snap)
{
    if (!snap)
        return;
    snap->db->in_snapshot = 0;
    free(snap->vcenter);
    free(snap->url);
    free(snap);
}

int db_snapshot_begin(struct db *db, const char *vcenter, const char *url, struct db_snapshot **out,
                      struct vim_sink *sink)
{
    struct db_snapshot *snap;
    char sql[96];
    int i, r;

    assert(db && vcenter && out && sink);
    assert(!db->in_snapshot);
    *out = NULL;
    snap = calloc(1, sizeof(*snap));
    if (!snap)
        return -ENOMEM;
    snap->db = db;
    snap->vcenter = strdup(vcenter);
    snap->url = url ? strdup(url) : NULL;
    if (!snap->vcenter || (url && !snap->url)) {
        r = -ENOMEM;
        goto fail;
    }

    /* IMMEDIATE takes the write lock now, so a concurrent writer is waited for here (busy
     * timeout) instead of failing the poll halfway through. */
    r = exec(db, "BEGIN IMMEDIATE");
    if (r < 0)
        goto fail;
    db->in_snapshot = 1;

    /* The previous snapshot goes inside the same transaction: readers see it until commit. */
    for (i = 0; i < T_NTABLES; i++) {
        /* Table names come from our constant list, never from input. */
        snprintf(sql, sizeof(sql), "DELETE FROM %s WHERE vcenter = ?1", db_table_name(i));
        r = prepare(db, &db->del[i], sql);
        if (r < 0)
            goto fail;
        r = sqlite3_bind_text(db->del[i], 1, vcenter, -1, SQLITE_TRANSIENT);
        if (r != SQLITE_OK) {
            r = db_err(r);
            goto fail;
        }
        r = step_done(db, db->del[i]);
        if (r < 0)
            goto fail;
    }

    *sink = (struct vim_sink){
        .ctx = snap,
        .datastore = put_datastore,
        .datastore_extent = put_datastore_extent,
        .datastore_host = put_datastore_host,
        .storage_pod = put_storage_pod,
        .vm = put_vm,
        .vm_datastore = put_vm_datastore,
        .controller = put_controller,
        .vdisk = put_vdisk,
        .snapshot = put_snapshot,
        .host = put_host,
        .host_option = put_host_option,
        .vnic = put_vnic,
        .vswitch = put_vswitch,
        .portgroup = put_portgroup,
        .dvswitch = put_dvswitch,
        .hba = put_hba,
        .iscsi_hba = put_iscsi_hba,
        .iscsi_target = put_iscsi_target,
        .iscsi_option = put_iscsi_option,
        .iscsi_binding = put_iscsi_binding,
        .lun = put_lun,
        .lun_path = put_lun_path,
        .nmp_device = put_nmp_device,
        .satp_rule = put_satp_rule,
        .gap = put_gap,
        .entity = put_entity,
        .alarm_manager = put_alarm_manager,
        .alarm = put_alarm,
        .alarm_metric = put_alarm_metric,
        .perf_counter = put_perf_counter,
    };
    *out = snap;
    return 0;

fail:
    db_snapshot_abort(snap);
    return r;
}

/* Counts what the snapshot stored, per kind: rows actually in the tables, so duplicates the
 * server sent twice are counted once. */
static int count_rows(struct db_snapshot *snap, int64_t counts[DB_NKINDS])
{
    sqlite3_stmt *st = NULL;
    char sql[96];
    int k, rc = SQLITE_OK;

    for (k = 0; k < DB_NKINDS && rc == SQLITE_OK; k++) {
        snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s WHERE vcenter = ?1",
                 db_table_name(kind_table[k]));
        rc = sqlite3_prepare_v2(snap->db->h, sql, -1, &st, NULL);
        if (rc == SQLITE_OK)
            rc = sqlite3_bind_text(st, 1, snap->vcenter, -1, SQLITE_STATIC);
        if (rc == SQLITE_OK)
            rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            counts[k] = sqlite3_column_int64(st, 0);
            rc = SQLITE_OK;
        }
        sqlite3_finalize(st);
        st = NULL;
    }
    if (rc != SQLITE_OK)
        log_debug("db: counting rows: %s", sqlite3_errmsg(snap->db->h));
    return db_err(rc);
}

static char *counts_json(const int64_t counts[DB_NKINDS])
{
    json_t *o = json_object();
    char *s = NULL;
    int k;

    if (!o)
        return NULL;
    for (k = 0; k < DB_NKINDS; k++) {
        if (json_object_set_new(o, db_kind_name(k), json_integer(counts[k])) < 0)
            goto out;
    }
    s = json_dumps(o, JSON_COMPACT);
out:
    json_decref(o);
    return s;
}

/* Appends a row to polls and points the vCenter at it. Runs inside the caller's transaction.
 * error NULL = success. */
static int record_poll(struct db *db, const char *vcenter, const char *url, int64_t started_ms,
                       int64_t finished_ms, const char *error, const char *counts)
{
    static const char poll_sql[] =
        "INSERT INTO polls (vcenter, url, started_ms, finished_ms, ok, error, counts_json)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";
    /* A failed poll keeps last_success_ms and the url we last reached it by (if none given). */
    static const char vc_sql[] =
        "INSERT INTO vcenters (name, url, last_poll_id, last_success_ms, last_error)"
        " VALUES (?1, ?2, ?3, CASE WHEN ?5 IS NULL THEN ?4 END, ?5)"
        " ON CONFLICT (name) DO UPDATE SET url = coalesce(excluded.url, url),"
        " last_poll_id = excluded.last_poll_id,"
        " last_success_ms = coalesce(excluded.last_success_ms, last_success_ms),"
        " last_error = excluded.last_error";
    sqlite3_stmt *st = NULL;
    int64_t id;
    int rc, r;

    rc = sqlite3_prepare_v2(db->h, poll_sql, -1, &st, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(st, 1, vcenter, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = url ? sqlite3_bind_text(st, 2, url, -1, SQLITE_STATIC) : sqlite3_bind_null(st, 2);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(st, 3, started_ms);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(st, 4, finished_ms);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int(st, 5, error == NULL);
    if (rc == SQLITE_OK)
        rc = error ? sqlite3_bind_text(st, 6, error, -1, SQLITE_STATIC) : sqlite3_bind_null(st, 6);
    if (rc == SQLITE_OK)
        rc =
            counts ? sqlite3_bind_text(st, 7, counts, -1, SQLITE_STATIC) : sqlite3_bind_null(st, 7);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc != SQLITE_DONE)
        goto fail;
    id = sqlite3_last_insert_rowid(db->h);
    sqlite3_finalize(st);

    rc = sqlite3_prepare_v2(db->h, vc_sql, -1, &st, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(st, 1, vcenter, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = url ? sqlite3_bind_text(st, 2, url, -1, SQLITE_STATIC) : sqlite3_bind_null(st, 2);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(st, 3, id);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(st, 4, finished_ms);
    if (rc == SQLITE_OK)
        rc = error ? sqlite3_bind_text(st, 5, error, -1, SQLITE_STATIC) : sqlite3_bind_null(st, 5);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc != SQLITE_DONE)
        goto fail;
    sqlite3_finalize(st);
    return 0;

fail:
    log_debug("db: recording poll of %s: %s", vcenter, sqlite3_errmsg(db->h));
    r = db_err(rc);
    sqlite3_finalize(st);
    return r ? r : -VSL_EDB;
}

int db_snapshot_commit(struct db_snapshot *snap, int64_t started_ms, int64_t finished_ms,
                       int64_t counts[DB_NKINDS])
{
    int64_t n[DB_NKINDS] = {0};
    char *cj = NULL;
    int r;

    assert(snap);
    r = count_rows(snap, n);
    if (r < 0)
        goto fail;
    cj = counts_json(n);
    if (!cj) {
        r = -ENOMEM;
        goto fail;
    }
    r = record_poll(snap->db, snap->vcenter, snap->url, started_ms, finished_ms, NULL, cj);
    if (r < 0)
        goto fail;
    r = exec(snap->db, "COMMIT");
    if (r < 0)
        goto fail;
    if (counts)
        memcpy(counts, n, sizeof(n));
    free(cj);
    snapshot_free(snap);
    return 0;

fail:
    free(cj);
    db_snapshot_abort(snap);
    return r;
}

void db_snapshot_abort(struct db_snapshot *snap)
{
    if (!snap)
        return;
    /* A failed COMMIT may already have rolled back; ROLLBACK then fails harmlessly. */
    if (sqlite3_get_autocommit(snap->db->h) == 0)
        exec(snap->db, "ROLLBACK");
    snapshot_free(snap);
}

int db_poll_failed(struct db *db, const char *vcenter, const char *url, int64_t started_ms,
                   int64_t finished_ms, const char *error)
{
    int r;

    assert(db && vcenter);
    assert(!db->in_snapshot);
    r = exec(db, "BEGIN IMMEDIATE");
    if (r < 0)
        return r;
    r = record_poll(db, vcenter, url, started_ms, finished_ms, error ? error : "unknown error",
                    NULL);
    if (r < 0)
        goto fail;
    r = exec(db, "COMMIT");
    if (r < 0)
        goto fail;
    return 0;

fail:
    if (sqlite3_get_autocommit(db->h) == 0)
        exec(db, "ROLLBACK");
    return r;
}
