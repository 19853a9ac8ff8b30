/* Loading one vCenter's stored snapshot as an estate for the checks: one statement per table in
 * one read transaction, references resolved to array indexes with sorted keys and bsearch. */
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/estate-arena.h"
#include "model/estate.h"
#include "db/db-private.h"
#include "db/findings.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/keymap.h"
#include "util/log.h"

/* The state of one db_estate_load. */
struct load {
    struct estate *e;
    /* A top-level object's key (moref, a DVS uuid, a datastore's name) maps to its index in the
     * estate's array, sorted by key so every reference a child row makes is one bsearch:
     * O(n log n) for the whole estate instead of a query or a scan per reference. Keys are
     * arena-owned. */
    struct vsl_keymap pods, datastores, ds_by_name, dvs_by_uuid, hosts, vms;
    struct vsl_keymap alarms;
    /* The rows of the run being read: the children of one parent, which the ORDER BY of every
     * child query keeps consecutive. When the run ends they are copied into the arena as the
     * parent's array, exactly sized, so nothing is reallocated inside the arena. */
    struct vsl_buf rows;
    struct vsl_buf key, row_key; /* the run's parent key columns, and the current row's */
    void *parent;                /* what the run belongs to, NULL: its rows are dropped */
    struct est_host *host;       /* the host of the run's parent, set by the resolvers */
    struct est_iscsi_hba *hba;
};

/* One query that builds one array of the estate. ?1 is the vCenter. The first nkey columns name
 * the parent (none for a top-level array, whose parent is the estate). */
struct table {
    const char *sql;
    int nkey;
    size_t elem; /* the array's element size; 0 for a table that only sets fields on its parent */
    /* Finds the parent the key columns name, NULL if the snapshot holds none (a dangling row). */
    void *(*parent)(struct load *L, sqlite3_stmt *st);
    /* Fills item (zeroed) from the row: 0, 1 to leave the row out, or a negative error. */
    int (*row)(struct load *L, sqlite3_stmt *st, void *item);
    /* Hands a finished run, now in the arena, to its parent. */
    void (*attach)(struct load *L, void *parent, void *items, size_t n);
};

#define MAX_KEY  1024 /* parent key columns; a longer key names nothing we stored */
#define KEY_SEP  '\x1f'
#define MAX_ROWS ((size_t)1 << 30)

/* ---- references --------------------------------------------------------------------------- */

static int refs_add(struct vsl_keymap *r, const char *key, size_t i)
{
    return vsl_keymap_add(r, key, i);
}

static void refs_sort(struct vsl_keymap *r)
{
    vsl_keymap_sort(r);
}

/* The index of the object with key, EST_NONE when there is none (or key is NULL). */
static size_t refs_find(const struct vsl_keymap *r, const char *key)
{
    const struct vsl_keymap_entry *e = vsl_keymap_get(r, key);

    return e ? (size_t)e->val : EST_NONE;
}

/* The index of the one object whose key is the len bytes at key; EST_NONE when none has it, or
 * when several do (datastore names repeat across datacenters). */
static size_t refs_find_unique(const struct vsl_keymap *r, const char *key, size_t len)
{
    const struct vsl_keymap_entry *e = vsl_keymap_find(r, key, len);

    if (!e || (e + 1 < r->v + r->n && strcmp(e[1].key, e->key) == 0))
        return EST_NONE;
    return (size_t)e->val;
}

/* ---- columns ------------------------------------------------------------------------------ */

static const char *text(sqlite3_stmt *st, int i)
{
    return (const char *)sqlite3_column_text(st, i);
}

/* A text column copied into the arena; NULL stays NULL. Running out of memory is remembered by
 * the arena and reported once at the end (est_failed). */
static const char *col_str(struct load *L, sqlite3_stmt *st, int i)
{
    const char *s = text(st, i);

    return s ? est_strndup(L->e, s, (size_t)sqlite3_column_bytes(st, i)) : NULL;
}

/* An object's name, or its moref when the snapshot has none: checks always have something to
 * call an object in a message, without each of them falling back on its own. */
static const char *col_name(struct load *L, sqlite3_stmt *st, int i, const char *moref)
{
    const char *s = col_str(L, st, i);
    return s ? s : moref;
}

static int64_t col_i64(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? EST_UNKNOWN : sqlite3_column_int64(st, i);
}

/* An int-sized column; NULL, and a value no int holds, are unknown. */
static int col_int(sqlite3_stmt *st, int i)
{
    int64_t v = col_i64(st, i);

    return v < INT_MIN || v > INT_MAX ? EST_UNKNOWN : (int)v;
}

/* A whole decimal number in s (nothing else), or EST_UNKNOWN. */
static int parse_int(const char *s)
{
    char *end;
    long v;

    if (!s || !*s)
        return EST_UNKNOWN;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || *end || v < 0 || v > INT_MAX)
        return EST_UNKNOWN;
    return (int)v;
}

/* ---- parents ------------------------------------------------------------------------------ */

static void *estate_parent(struct load *L, sqlite3_stmt *st)
{
    return L->e;
}

static void *host_parent(struct load *L, sqlite3_stmt *st)
{
    size_t i = refs_find(&L->hosts, text(st, 0));

    L->host = i == EST_NONE ? NULL : &L->e->hosts[i];
    return L->host;
}

static void *datastore_parent(struct load *L, sqlite3_stmt *st)
{
    size_t i = refs_find(&L->datastores, text(st, 0));

    return i == EST_NONE ? NULL : &L->e->datastores[i];
}

static void *vm_parent(struct load *L, sqlite3_stmt *st)
{
    size_t i = refs_find(&L->vms, text(st, 0));

    return i == EST_NONE ? NULL : &L->e->vms[i];
}

/* Columns 0-1: host moref, adapter device. A host has a few adapters: a scan is enough. */
static void *hba_parent(struct load *L, sqlite3_stmt *st)
{
    const char *dev = text(st, 1);
    struct est_host *h = host_parent(L, st);
    size_t i;

    L->hba = NULL;
    for (i = 0; h && dev && i < h->n_iscsi_hbas; i++) {
        if (h->iscsi_hbas[i].device && strcmp(h->iscsi_hbas[i].device, dev) == 0)
            L->hba = &h->iscsi_hbas[i];
    }
    return L->hba;
}

/* Columns 0-1 name the adapter, 2 the kind, 4 the IQN ('' for none), 5-6 the target's address
 * and port. */
static void *target_parent(struct load *L, sqlite3_stmt *st)
{
    struct est_iscsi_hba *a = hba_parent(L, st);
    const char *kind = text(st, 2), *iqn = text(st, 4), *addr = text(st, 5);
    const int port = col_int(st, 6);
    size_t i;

    for (i = 0; a && kind && addr && iqn && i < a->n_targets; i++) {
        const struct est_iscsi_target *t = &a->targets[i];
        if (t->port == port && t->kind && strcmp(t->kind, kind) == 0 && t->address &&
            strcmp(t->address, addr) == 0 && strcmp(t->iscsi_name ? t->iscsi_name : "", iqn) == 0)
            return &a->targets[i];
    }
    return NULL;
}

static int lun_cmp(const void *key, const void *lun)
{
    const struct est_lun *l = lun;

    return strcmp(key, l->canonical_name ? l->canonical_name : "");
}

/* Columns 0-1: host moref, canonical name. A SAN host may see hundreds of LUNs; they were
 * loaded in canonical name order, so this is a bsearch. */
static void *lun_parent(struct load *L, sqlite3_stmt *st)
{
    const char *name = text(st, 1);
    struct est_host *h = host_parent(L, st);

    if (!h || !name || h->n_luns == 0)
        return NULL;
    return bsearch(name, h->luns, h->n_luns, sizeof(*h->luns), lun_cmp);
}

/* ---- rows --------------------------------------------------------------------------------- */

/* The index the row being filled will have in the array it is collected into. */
static size_t row_index(const struct load *L, size_t elem)
{
    return L->rows.len / elem - 1;
}

static int pod_row(struct load *L, sqlite3_stmt *st, void *item)
{
    struct est_pod *p = item;

    p->moref = col_str(L, st, 0);
    p->name = col_name(L, st, 1, p->moref);
    p->capacity = col_i64(st, 2);
    p->free_space = col_i64(st, 3);
    return refs_add(&L->pods, p->moref, row_index(L, sizeof(*p)));
}

static int datastore_row(struct load *L, sqlite3_stmt *st, void *item)
{
    struct est_datastore *d = item;

    d->moref = col_str(L, st, 0);
    d->name = col_name(L, st, 1, d->moref);
    d->type = col_str(L, st, 2);
    d->capacity = col_i64(st, 3);
    d->free_space = col_i64(st, 4);
    d->uncommitted = col_i64(st, 5);
    d->accessible = col_int(st, 6);
    d->vmfs_major = col_int(st, 7);
    /* The parent is a folder unless the datastore sits in a datastore cluster. */
    d->pod = refs_find(&L->pods, text(st, 8));
    d->vm_count = col_int(st, 9);
    d->parent = col_str(L, st, 8);
    d->vmfs_version = col_str(L, st, 10);
    d->vmfs_local = col_int(st, 11);
    d->vmfs_ssd = col_int(st, 12);
    d->unmap_priority = col_str(L, st, 13);
    d->nas_remote_host = col_str(L, st, 14);
    /* VMs name the datastore of their configuration file by name ("[name] dir/vm.vmx"). */
    if (text(st, 1) && refs_add(&L->ds_by_name, d->name, row_index(L, sizeof(*d))) < 0)
        return -ENOMEM;
    return refs_add(&L->datastores, d->moref, row_index(L, sizeof(*d)));
}

static int dvswitch_row(struct load *L, sqlite3_stmt *st, void *item)
{
    struct est_dvswitch *d = item;

    d->moref = col_str(L, st, 0);
    d->name = col_name(L, st, 1, d->moref);
    d->uuid = col_str(L, st, 2);
    d->max_mtu = col_int(st, 3);
    return refs_add(&L->dvs_by_uuid, d->uuid, row_index(L, sizeof(*d)));
}

static int host_row(struct load *L, sqlite3_stmt *st, void *item)
{
    struct est_host *h = item;

    h->moref = col_str(L, st, 0);
    h->name = col_name(L, st, 1, h->moref);
    h->parent = col_str(L, st, 2);
    h->connection_state = col_str(L, st, 3);
    h->enable_block_delete = EST_UNKNOWN; /* until host_options says otherwise */
    return refs_add(&L->hosts, h->moref, row_index(L, sizeof(*h)));
}

/* Sets a field of the host and keeps no row. */
static int block_delete_row(struct load *L, sqlite3_stmt *st, void *item)
{
    int v = parse_int(text(st, 1));

    L->host->enable_block_delete = v == EST_UNKNOWN ? EST_UNKNOWN : v != 0;
    return 1;
}

static int vswitch_row(struct load *L, sqlite3_stmt *st, void *item)
{
    struct est_vswitch *s = item;

    s->name = col_str(L, st, 1);
    s->mtu = col_int(st, 2);
    return 0;
}

static int vnic_row(struct load *L, sqlite3_stmt *st, void *item)
{
    const struct est_host *h = L->host;
    const char *vswitch = text(st, 4);
    struct est_vnic *n = item;
    size_t i;

    n->device = col_str(L, st, 1);
    n->mtu = col_int(st, 2);
    n->portgroup = col_str(L, st, 3);
    n->vswitch = EST_NONE;
    for (i = 0; vswitch && i < h->n_vswitches; i++) {
        if (h->vswitches[i].name && strcmp(h->vswitches[i].name, vswitch) == 0)
            n->vswitch = i;
    }
    n->dvs_uuid = col_str(L, st, 5);
    n->dvswitch = refs_find(&L->dvs_by_uuid, n->dvs_uuid);
    return 0;
}

/* A host that mounts the datastore; one the snapshot does not hold is left out. */
static int mount_row(struct load *L, sqlite3_stmt *st, void *item)
{
    struct est_mount *m = item;

    m->host = refs_find(&L->hosts, text(st, 1));
    m->mounted = col_int(st, 2);
    m->accessible = col_int(st, 3);
    m->access_mode = col_str(L, st, 4);
    return m->host == EST_NONE;
}

static int lun_cmp(const void *key, const void *lun);

/* An extent, and the LUN behind it on each mounting host that lists its device. */
static int extent_row(struct load *L, sqlite3_stmt *st, void *item)
{
    const struct est_datastore *d = L->parent;
    struct est_extent *x = item;
    size_t i, n = 0;

    x->disk_name = col_str(L, st, 1);
    x->partition = col_int(st, 2);
    for (int pass = 0; pass < 2 && x->disk_name; pass++) {
        /* Pass 0 counts, pass 1 fills the array sized by pass 0. */
        if (pass == 1) {
            if (n == 0)
                break;
            x->luns = est_alloc(L->e, n * sizeof(*x->luns));
            if (!x->luns)
                return -ENOMEM;
            x->n_luns = n;
            n = 0;
        }
        for (i = 0; i < d->n_mounts; i++) {
            const struct est_host *h = &L->e->hosts[d->mounts[i].host];
            const struct est_lun *l =
                h->n_luns ? bsearch(x->disk_name, h->luns, h->n_luns, sizeof(*h->luns), lun_cmp)
                          : NULL;
            if (!l)
                continue;
            if (pass == 1)
                x->luns[n] = (struct est_lun_ref){d->mounts[i].host, (size_t)(l - h->luns)};
            n++;
        }
    }
    return 0;
}

/* Any adapter of the host. */
static int any_hba_row(struct load *L, sqlite3_stmt *st, void *item)
{
    struct est_hba *a = item;

    a->device = col_str(L, st, 1);
    a->type = col_str(L, st, 2);
    a->driver = col_str(L, st, 3);
    a->model = col_str(L, st, 4);
    return 0;
}

static int hba_row(struct load *L, sqlite3_stmt *st, void *item)
{
    struct est_iscsi_hba *a = item;

    a->device = col_str(L, st, 1);
    a->iscsi_name = col_str(L, st, 2);
    return 0;
}

/* Columns from first on: key, value, inherited. */
static void option_fill(struct load *L, sqlite3_stmt *st, int first, struct est_option *o)
{
    o->key = col_str(L, st, first);
    o->value = col_str(L, st, first + 1);
    o->inherited = col_int(st, first + 2);
}

static int hba_option_row(struct load *L, sqlite3_stmt *st, void *item)
{
    option_fill(L, st, 2, item);
    return 0;
}

static int target_option_row(struct load *L, sqlite3_stmt *st, void *item)
{
    option_fill(L, st, 7, item);
    return 0;
}

static int target_row(struct load *L, sqlite3_stmt *st, void *item)
{
    struct est_iscsi_target *t = item;

    t->kind = col_str(L, st, 2);
    t->address = col_str(L, st, 4);
    t->port = col_int(st, 5);
    t->iscsi_name = col_str(L, st, 6);
    t->discovery_method = col_str(L, st, 7);
    t->parent = col_str(L, st, 8);
    t->send_target = EST_NONE; /* attach_targets links it */
    return 0;
}

/* A binding names a vmknic of the adapter's host; one the host does not list is left out, so
 * a check can follow every index it is given. */
static int binding_row(struct load *L, sqlite3_stmt *st, void *item)
{
    const char *dev = text(st, 2);
    size_t *idx = item, i;

    for (i = 0; dev && i < L->host->n_vnics; i++) {
        if (L->host->vnics[i].device && strcmp(L->host->vnics[i].device, dev) == 0) {
            *idx = i;
            return 0;
        }
    }
    log_debug("db: %s %s: bound vmknic %s not found", L->host->name, L->hba->device,
              dev ? dev : "?");
    return 1;
}

static int lun_row(struct load *L, sqlite3_stmt *st, void *item)
{
    struct est_lun *l = item;

    l->canonical_name = col_str(L, st, 1);
    l->display_name = col_str(L, st, 2);
    l->vendor = col_str(L, st, 3);
    l->model = col_str(L, st, 4);
    l->lun_type = col_str(L, st, 5);
    l->local = col_int(st, 6);
    l->psp = col_str(L, st, 7);
    l->satp = col_str(L, st, 8);
    l->iops_limit = col_int(st, 9);
    l->psp_config = col_str(L, st, 10);
    l->policy_type = col_str(L, st, 11);
    l->multipath_plugin = col_str(L, st, 12);
    return 0;
}

static int path_row(struct load *L, sqlite3_stmt *st, void *item)
{
    const struct est_host *h = L->host;
    struct est_path *p = item;
    size_t i;

    p->name = col_str(L, st, 2);
    p->state = col_str(L, st, 3);
    p->adapter = col_str(L, st, 4);
    p->hba = EST_NONE;
    for (i = 0; p->adapter && i < h->n_hbas; i++) {
        if (h->hbas[i].device && strcmp(h->hbas[i].device, p->adapter) == 0)
            p->hba = i;
    }
    return 0;
}

static int satp_rule_row(struct load *L, sqlite3_stmt *st, void *item)
{
    struct est_satp_rule *r = item;

    r->satp = col_str(L, st, 1);
    r->vendor = col_str(L, st, 2);
    r->model = col_str(L, st, 3);
    r->psp = col_str(L, st, 4);
    r->psp_options = col_str(L, st, 5);
    r->rule_group = col_str(L, st, 6);
    r->device = col_str(L, st, 7);
    r->driver = col_str(L, st, 8);
    r->transport = col_str(L, st, 9);
    r->claim_options = col_str(L, st, 10);
    r->options = col_str(L, st, 11);
    r->description = col_str(L, st, 12);
    return 0;
}

static int gap_row(struct load *L, sqlite3_stmt *st, void *item)
{
    struct est_gap *g = item;

    g->what = col_str(L, st, 1);
    g->error = col_str(L, st, 2);
    return 0;
}

/* "vmx-13" -> 13; anything else is unknown. */
static int hw_version(const char *s)
{
    static const char prefix[] = "vmx-";

    if (!s || strncmp(s, prefix, sizeof(prefix) - 1) != 0)
        return EST_UNKNOWN;
    return parse_int(s + sizeof(prefix) - 1);
}

/* The datastore a "[name] dir/vm.vmx" path names: one of own (the VM's datastores) with that
 * name, else the only datastore with that name; EST_NONE when none (or several) has it. A name
 * may itself hold "]", so every "]" is tried as the end of the name, the shortest first. */
static size_t datastore_of_path(const struct load *L, const char *path, const size_t *own,
                                size_t n_own)
{
    const char *name = path ? path + 1 : NULL, *end;

    if (!path || path[0] != '[')
        return EST_NONE;
    for (end = strchr(name, ']'); end; end = strchr(end + 1, ']')) {
        const size_t len = (size_t)(end - name);
        for (size_t i = 0; i < n_own; i++) {
            const char *n = L->e->datastores[own[i]].name;
            if (strncmp(n, name, len) == 0 && n[len] == '\0')
                return own[i];
        }
        const size_t i = refs_find_unique(&L->ds_by_name, name, len);
        if (i != EST_NONE)
            return i;
    }
    return EST_NONE;
}

static int vm_row(struct load *L, sqlite3_stmt *st, void *item)
{
    struct est_vm *m = item;

    m->moref = col_str(L, st, 0);
    m->name = col_name(L, st, 1, m->moref);
    m->template = col_int(st, 2);
    m->power_state = col_str(L, st, 3);
    m->ft_state = col_str(L, st, 4);
    m->hw_version = hw_version(text(st, 5));
    m->host = refs_find(&L->hosts, text(st, 6));
    m->vm_path_name = col_str(L, st, 7);
    m->config_datastore = datastore_of_path(L, m->vm_path_name, NULL, 0);
    return refs_add(&L->vms, m->moref, row_index(L, sizeof(*m)));
}

/* A VM's datastore the snapshot does not hold is left out, like a dangling binding. */
static int vm_datastore_row(struct load *L, sqlite3_stmt *st, void *item)
{
    size_t *idx = item;

    *idx = refs_find(&L->datastores, text(st, 1));
    return *idx == EST_NONE;
}

static int controller_row(struct load *L, sqlite3_stmt *st, void *item)
{
    struct est_controller *c = item;

    c->key = col_int(st, 1);
    c->type = col_str(L, st, 2);
    c->shared_bus = col_str(L, st, 3);
    return 0;
}

static int disk_row(struct load *L, sqlite3_stmt *st, void *item)
{
    const struct est_vm *m = L->parent;
    struct est_disk *d = item;
    size_t i;

    d->key = col_int(st, 1);
    d->label = col_str(L, st, 2);
    d->file_name = col_str(L, st, 3);
    d->datastore = refs_find(&L->datastores, text(st, 4));
    d->capacity_bytes = col_i64(st, 5);
    d->format = col_str(L, st, 6);
    d->controller = EST_NONE;
    if (sqlite3_column_type(st, 7) != SQLITE_NULL) {
        const int key = col_int(st, 7);
        for (i = 0; i < m->n_controllers; i++) {
            if (m->controllers[i].key == key)
                d->controller = i;
        }
    }
    return 0;
}

static int snapshot_row(struct load *L, sqlite3_stmt *st, void *item)
{
    struct est_snapshot *s = item;

    s->name = col_str(L, st, 1);
    s->created = col_i64(st, 2);
    s->depth = col_int(st, 3);
    return 0;
}

/* ---- alarms and the containers above datastores ---------------------------------------- */

static void *alarm_parent(struct load *L, sqlite3_stmt *st)
{
    size_t i = refs_find(&L->alarms, text(st, 0));

    return i == EST_NONE ? NULL : &L->e->alarms[i];
}

static int entity_row(struct load *L, sqlite3_stmt *st, void *item)
{
    struct est_entity *en = item;

    en->moref = col_str(L, st, 0);
    en->type = col_str(L, st, 1);
    en->name = col_str(L, st, 2);
    en->parent = col_str(L, st, 3);
    return 0;
}

static int alarm_row(struct load *L, sqlite3_stmt *st, void *item)
{
    struct est_alarm *a = item;

    a->moref = col_str(L, st, 0);
    a->name = col_name(L, st, 1, a->moref);
    a->system_name = col_str(L, st, 2);
    a->enabled = col_int(st, 3);
    a->entity = col_str(L, st, 4);
    a->entity_type = col_str(L, st, 5);
    return refs_add(&L->alarms, a->moref, row_index(L, sizeof(*a)));
}

static int alarm_metric_row(struct load *L, sqlite3_stmt *st, void *item)
{
    struct est_alarm_metric *m = item;

    m->object_type = col_str(L, st, 1);
    m->counter_id = col_int(st, 2);
    m->counter = col_str(L, st, 3);
    m->op = col_str(L, st, 4);
    m->yellow = col_int(st, 5);
    m->red = col_int(st, 6);
    return 0;
}

/* Sets a field of the estate and keeps no row. */
static int alarm_manager_row(struct load *L, sqlite3_stmt *st, void *item)
{
    L->e->alarms_read = 1;
    return 1;
}

static void attach_entities(struct load *L, void *parent, void *items, size_t n)
{
    L->e->entities = items;
    L->e->n_entities = n;
}

static void attach_alarms(struct load *L, void *parent, void *items, size_t n)
{
    L->e->alarms = items;
    L->e->n_alarms = n;
    refs_sort(&L->alarms);
}

static void attach_alarm_metrics(struct load *L, void *parent, void *items, size_t n)
{
    struct est_alarm *a = parent;

    a->metrics = items;
    a->n_metrics = n;
}

static void attach_vcenter_gaps(struct load *L, void *parent, void *items, size_t n)
{
    L->e->gaps = items;
    L->e->n_gaps = n;
}

/* ---- attaching runs ----------------------------------------------------------------------- */

static void attach_pods(struct load *L, void *parent, void *items, size_t n)
{
    L->e->pods = items;
    L->e->n_pods = n;
    refs_sort(&L->pods);
}

static void attach_datastores(struct load *L, void *parent, void *items, size_t n)
{
    L->e->datastores = items;
    L->e->n_datastores = n;
    refs_sort(&L->datastores);
    refs_sort(&L->ds_by_name);
}

static void attach_mounts(struct load *L, void *parent, void *items, size_t n)
{
    struct est_datastore *d = parent;

    d->mounts = items;
    d->n_mounts = n;
}

static void attach_extents(struct load *L, void *parent, void *items, size_t n)
{
    struct est_datastore *d = parent;

    d->extents = items;
    d->n_extents = n;
}

static void attach_dvswitches(struct load *L, void *parent, void *items, size_t n)
{
    L->e->dvswitches = items;
    L->e->n_dvswitches = n;
    refs_sort(&L->dvs_by_uuid);
}

static void attach_hosts(struct load *L, void *parent, void *items, size_t n)
{
    L->e->hosts = items;
    L->e->n_hosts = n;
    refs_sort(&L->hosts);
}

static void attach_vms(struct load *L, void *parent, void *items, size_t n)
{
    L->e->vms = items;
    L->e->n_vms = n;
    refs_sort(&L->vms);
}

static void attach_vswitches(struct load *L, void *parent, void *items, size_t n)
{
    struct est_host *h = parent;

    h->vswitches = items;
    h->n_vswitches = n;
}

static void attach_vnics(struct load *L, void *parent, void *items, size_t n)
{
    struct est_host *h = parent;

    h->vnics = items;
    h->n_vnics = n;
}

static void attach_any_hbas(struct load *L, void *parent, void *items, size_t n)
{
    struct est_host *h = parent;

    h->hbas = items;
    h->n_hbas = n;
}

static void attach_hbas(struct load *L, void *parent, void *items, size_t n)
{
    struct est_host *h = parent;

    h->iscsi_hbas = items;
    h->n_iscsi_hbas = n;
}

static void attach_luns(struct load *L, void *parent, void *items, size_t n)
{
    struct est_host *h = parent;

    h->luns = items;
    h->n_luns = n;
}

static void attach_satp_rules(struct load *L, void *parent, void *items, size_t n)
{
    struct est_host *h = parent;

    h->satp_rules = items;
    h->n_satp_rules = n;
}

static void attach_gaps(struct load *L, void *parent, void *items, size_t n)
{
    struct est_host *h = parent;

    h->gaps = items;
    h->n_gaps = n;
}

static void attach_hba_options(struct load *L, void *parent, void *items, size_t n)
{
    struct est_iscsi_hba *a = parent;

    a->options = items;
    a->n_options = n;
}

/* Whether static target t names send target s as its parent: "address:port", or the bare
 * address of a send target on the default port. */
static int parent_is(const struct est_iscsi_target *t, const struct est_iscsi_target *s)
{
    const size_t n = s->address ? strlen(s->address) : 0;

    if (!t->parent || !n || strncmp(t->parent, s->address, n) != 0)
        return 0;
    if (t->parent[n] == '\0')
        return s->port == 3260;
    return t->parent[n] == ':' && parse_int(t->parent + n + 1) == s->port;
}

static void attach_targets(struct load *L, void *parent, void *items, size_t n)
{
    struct est_iscsi_hba *a = parent;
    struct est_iscsi_target *t = items;

    a->targets = items;
    a->n_targets = n;
    /* A static target found by a send target inherits from it: link the two. */
    for (size_t i = 0; i < n; i++) {
        if (!t[i].kind || strcmp(t[i].kind, "static") != 0)
            continue;
        for (size_t j = 0; j < n && t[i].send_target == EST_NONE; j++) {
            if (t[j].kind && strcmp(t[j].kind, "send") == 0 && parent_is(&t[i], &t[j]))
                t[i].send_target = j;
        }
    }
}

static void attach_bindings(struct load *L, void *parent, void *items, size_t n)
{
    struct est_iscsi_hba *a = parent;

    a->bound_vnics = items;
    a->n_bound_vnics = n;
}

static void attach_target_options(struct load *L, void *parent, void *items, size_t n)
{
    struct est_iscsi_target *t = parent;

    t->options = items;
    t->n_options = n;
}

static void attach_paths(struct load *L, void *parent, void *items, size_t n)
{
    struct est_lun *l = parent;

    l->paths = items;
    l->n_paths = n;
}

static void attach_vm_datastores(struct load *L, void *parent, void *items, size_t n)
{
    struct est_vm *m = parent;

    m->datastores = items;
    m->n_datastores = n;
    /* Of two datastores with the VM's configuration datastore name, the VM's own is it. */
    m->config_datastore = datastore_of_path(L, m->vm_path_name, items, n);
}

static void attach_controllers(struct load *L, void *parent, void *items, size_t n)
{
    struct est_vm *m = parent;

    m->controllers = items;
    m->n_controllers = n;
}

static void attach_disks(struct load *L, void *parent, void *items, size_t n)
{
    struct est_vm *m = parent;

    m->disks = items;
    m->n_disks = n;
}

static void attach_snapshots(struct load *L, void *parent, void *items, size_t n)
{
    struct est_vm *m = parent;

    m->snapshots = items;
    m->n_snapshots = n;
}

/* In order: every table's parents, and everything its rows refer to, are loaded by an earlier
 * one. Top-level objects come in name order (what a person reading findings expects), children
 * in the order docs/inventory.md gives, with their parent's key first so each parent's rows are
 * consecutive. Device names sort by length first so vmk2 comes before vmk10. */
static const struct table tables[] = {
    {.sql = "SELECT moref, name, capacity, free_space FROM storage_pods WHERE vcenter = ?1"
            " ORDER BY name, moref",
     .elem = sizeof(struct est_pod),
     .parent = estate_parent,
     .row = pod_row,
     .attach = attach_pods},
    {.sql = "SELECT moref, name, type, capacity, free_space, uncommitted, accessible, vmfs_major,"
            " parent, vm_count, vmfs_version, vmfs_local, vmfs_ssd, unmap_priority,"
            " nas_remote_host FROM datastores WHERE vcenter = ?1 ORDER BY name, moref",
     .elem = sizeof(struct est_datastore),
     .parent = estate_parent,
     .row = datastore_row,
     .attach = attach_datastores},
    {.sql = "SELECT moref, name, uuid, max_mtu FROM dvswitches WHERE vcenter = ?1"
            " ORDER BY name, moref",
     .elem = sizeof(struct est_dvswitch),
     .parent = estate_parent,
     .row = dvswitch_row,
     .attach = attach_dvswitches},
    {.sql = "SELECT moref, name, parent, connection_state FROM hosts WHERE vcenter = ?1"
            " ORDER BY name, moref",
     .elem = sizeof(struct est_host),
     .parent = estate_parent,
     .row = host_row,
     .attach = attach_hosts},
    {.sql = "SELECT host, value FROM host_options WHERE vcenter = ?1"
            " AND key = 'VMFS3.EnableBlockDelete' ORDER BY host",
     .nkey = 1,
     .parent = host_parent,
     .row = block_delete_row},
    {.sql = "SELECT host, name, mtu FROM vswitches WHERE vcenter = ?1 ORDER BY host, name",
     .nkey = 1,
     .elem = sizeof(struct est_vswitch),
     .parent = host_parent,
     .row = vswitch_row,
     .attach = attach_vswitches},
    {.sql = "SELECT n.host, n.device, n.mtu, n.portgroup, pg.vswitch, n.dvs_uuid FROM vnics n"
            " LEFT JOIN portgroups pg"
            " ON pg.vcenter = n.vcenter AND pg.host = n.host AND pg.name = n.portgroup"
            " WHERE n.vcenter = ?1 ORDER BY n.host, length(n.device), n.device",
     .nkey = 1,
     .elem = sizeof(struct est_vnic),
     .parent = host_parent,
     .row = vnic_row,
     .attach = attach_vnics},
    {.sql = "SELECT host, device, type, driver, model FROM hbas WHERE vcenter = ?1"
            " ORDER BY host, length(device), device",
     .nkey = 1,
     .elem = sizeof(struct est_hba),
     .parent = host_parent,
     .row = any_hba_row,
     .attach = attach_any_hbas},
    {.sql = "SELECT host, device, iscsi_name FROM iscsi_hbas WHERE vcenter = ?1"
            " ORDER BY host, length(device), device",
     .nkey = 1,
     .elem = sizeof(struct est_iscsi_hba),
     .parent = host_parent,
     .row = hba_row,
     .attach = attach_hbas},
    {.sql = "SELECT host, hba, key, value, inherited FROM iscsi_options"
            " WHERE vcenter = ?1 AND target = '' ORDER BY host, hba, key",
     .nkey = 2,
     .elem = sizeof(struct est_option),
     .parent = hba_parent,
     .row = hba_option_row,
     .attach = attach_hba_options},
    {.sql = "SELECT host, hba, kind, target, address, port, nullif(iscsi_name, ''),"
            " discovery_method, parent FROM iscsi_targets"
            " WHERE vcenter = ?1 ORDER BY host, hba, kind, address, port, target, iscsi_name",
     .nkey = 2,
     .elem = sizeof(struct est_iscsi_target),
     .parent = hba_parent,
     .row = target_row,
     .attach = attach_targets},
    /* Options name their target by its "address:port" key and IQN; the join gives the address
     * and port the loaded target is matched by. */
    {.sql = "SELECT o.host, o.hba, o.kind, o.target, o.iscsi_name, t.address, t.port, o.key,"
            " o.value, o.inherited FROM iscsi_options o JOIN iscsi_targets t"
            " ON t.vcenter = o.vcenter AND t.host = o.host AND t.hba = o.hba AND t.kind = o.kind"
            " AND t.target = o.target AND t.iscsi_name = o.iscsi_name"
            " WHERE o.vcenter = ?1 AND o.target <> ''"
            " ORDER BY o.host, o.hba, o.kind, o.target, o.iscsi_name, o.key",
     .nkey = 5,
     .elem = sizeof(struct est_option),
     .parent = target_parent,
     .row = target_option_row,
     .attach = attach_target_options},
    {.sql = "SELECT host, hba, vnic FROM iscsi_bindings WHERE vcenter = ?1"
            " ORDER BY host, hba, length(vnic), vnic",
     .nkey = 2,
     .elem = sizeof(size_t),
     .parent = hba_parent,
     .row = binding_row,
     .attach = attach_bindings},
    /* The Round Robin IOPS limit is esxcli's, matched by host and canonical name. */
    {.sql = "SELECT l.host, l.canonical_name, l.display_name, l.vendor, l.model, l.lun_type,"
            " l.local, l.psp, l.satp, n.iops, n.psp_config, l.policy_type, l.multipath_plugin"
            " FROM luns l LEFT JOIN nmp_devices n"
            " ON n.vcenter = l.vcenter AND n.host = l.host AND n.device = l.canonical_name"
            " WHERE l.vcenter = ?1 ORDER BY l.host, l.canonical_name",
     .nkey = 1,
     .elem = sizeof(struct est_lun),
     .parent = host_parent,
     .row = lun_row,
     .attach = attach_luns},
    {.sql = "SELECT host, lun, name, state, adapter FROM lun_paths WHERE vcenter = ?1"
            " ORDER BY host, lun, name",
     .nkey = 2,
     .elem = sizeof(struct est_path),
     .parent = lun_parent,
     .row = path_row,
     .attach = attach_paths},
    {.sql = "SELECT host, satp, vendor, model, psp, psp_options, rule_group, device, driver,"
            " transport, claim_options, options, description FROM satp_rules"
            " WHERE vcenter = ?1 ORDER BY host, satp, vendor, model, rule_group, psp,"
            " psp_options, device, driver, transport, claim_options, options",
     .nkey = 1,
     .elem = sizeof(struct est_satp_rule),
     .parent = host_parent,
     .row = satp_rule_row,
     .attach = attach_satp_rules},
    /* Only gaps about a host have a place in the estate; the rest find no parent. */
    {.sql = "SELECT object, what, error FROM gaps WHERE vcenter = ?1 ORDER BY object, what",
     .nkey = 1,
     .elem = sizeof(struct est_gap),
     .parent = host_parent,
     .row = gap_row,
     .attach = attach_gaps},
    /* After the hosts and their LUNs: a mount names a host, an extent a LUN on the mounting
     * hosts, so mounts come before extents. */
    {.sql = "SELECT datastore, host, mounted, accessible, access_mode FROM datastore_hosts"
            " WHERE vcenter = ?1 ORDER BY datastore, host",
     .nkey = 1,
     .elem = sizeof(struct est_mount),
     .parent = datastore_parent,
     .row = mount_row,
     .attach = attach_mounts},
    {.sql = "SELECT datastore, disk_name, partition FROM datastore_extents WHERE vcenter = ?1"
            " ORDER BY datastore, position",
     .nkey = 1,
     .elem = sizeof(struct est_extent),
     .parent = datastore_parent,
     .row = extent_row,
     .attach = attach_extents},
    {.sql = "SELECT moref, name, template, power_state, ft_state, hw_version, host, vm_path_name"
            " FROM vms WHERE vcenter = ?1 ORDER BY name, moref",
     .elem = sizeof(struct est_vm),
     .parent = estate_parent,
     .row = vm_row,
     .attach = attach_vms},
    {.sql = "SELECT v.vm, v.datastore FROM vm_datastores v LEFT JOIN datastores d"
            " ON d.vcenter = v.vcenter AND d.moref = v.datastore"
            " WHERE v.vcenter = ?1 ORDER BY v.vm, d.name, v.datastore",
     .nkey = 1,
     .elem = sizeof(size_t),
     .parent = vm_parent,
     .row = vm_datastore_row,
     .attach = attach_vm_datastores},
    {.sql = "SELECT vm, key, type, shared_bus FROM controllers WHERE vcenter = ?1"
            " ORDER BY vm, key",
     .nkey = 1,
     .elem = sizeof(struct est_controller),
     .parent = vm_parent,
     .row = controller_row,
     .attach = attach_controllers},
    {.sql = "SELECT vm, key, label, file_name, datastore, capacity_bytes, format, controller_key"
            " FROM vdisks WHERE vcenter = ?1 ORDER BY vm, key",
     .nkey = 1,
     .elem = sizeof(struct est_disk),
     .parent = vm_parent,
     .row = disk_row,
     .attach = attach_disks},
    {.sql = "SELECT vm, name, created, depth FROM snapshots WHERE vcenter = ?1"
            " ORDER BY vm, depth, created, name",
     .nkey = 1,
     .elem = sizeof(struct est_snapshot),
     .parent = vm_parent,
     .row = snapshot_row,
     .attach = attach_snapshots},
    /* Sorted by moref: est_entity() searches them. */
    {.sql = "SELECT moref, type, name, parent FROM entities WHERE vcenter = ?1 ORDER BY moref",
     .elem = sizeof(struct est_entity),
     .parent = estate_parent,
     .row = entity_row,
     .attach = attach_entities},
    {.sql = "SELECT moref, name, system_name, enabled, entity, entity_type FROM alarms"
            " WHERE vcenter = ?1 ORDER BY name, moref",
     .elem = sizeof(struct est_alarm),
     .parent = estate_parent,
     .row = alarm_row,
     .attach = attach_alarms},
    /* A condition names its counter by id; the id's name is what says what it watches. */
    {.sql = "SELECT m.alarm, m.object_type, m.counter_id, p.name, m.operator, m.yellow, m.red"
            " FROM alarm_metrics m LEFT JOIN perf_counters p"
            " ON p.vcenter = m.vcenter AND p.counter_id = m.counter_id"
            " WHERE m.vcenter = ?1 ORDER BY m.alarm, m.pos",
     .nkey = 1,
     .elem = sizeof(struct est_alarm_metric),
     .parent = alarm_parent,
     .row = alarm_metric_row,
     .attach = attach_alarm_metrics},
    {.sql = "SELECT moref FROM alarm_managers WHERE vcenter = ?1",
     .parent = estate_parent,
     .row = alarm_manager_row},
    /* Gaps about the vCenter itself; those about a host went to the host above. */
    {.sql = "SELECT object, what, error FROM gaps WHERE vcenter = ?1 AND object = ''"
            " ORDER BY what",
     .elem = sizeof(struct est_gap),
     .parent = estate_parent,
     .row = gap_row,
     .attach = attach_vcenter_gaps},
};

#define NTABLES (sizeof(tables) / sizeof(tables[0]))

/* ---- the loader --------------------------------------------------------------------------- */

/* Joins the row's first n columns into L->row_key. -VSL_ETOOBIG when they do not fit. */
static int build_key(struct load *L, sqlite3_stmt *st, int n)
{
    static const char sep = KEY_SEP;
    int i, r = 0;

    vsl_buf_reset(&L->row_key);
    for (i = 0; i < n && r == 0; i++) {
        const char *s = text(st, i);
        r = vsl_buf_add(&L->row_key, s ? s : "", s ? (size_t)sqlite3_column_bytes(st, i) : 0);
        if (r == 0)
            r = vsl_buf_add(&L->row_key, &sep, 1);
    }
    return r;
}

/* Ends the run being collected: its rows move into the arena and go to their parent. */
static int end_run(struct load *L, const struct table *t)
{
    const size_t n = t->elem ? L->rows.len / t->elem : 0;
    void *items;

    if (L->parent && n > 0) {
        items = est_alloc(L->e, L->rows.len);
        if (!items)
            return -ENOMEM;
        memcpy(items, L->rows.data, L->rows.len);
        t->attach(L, L->parent, items, n);
    }
    vsl_buf_reset(&L->rows);
    L->parent = NULL;
    return 0;
}

static int load_table(struct load *L, sqlite3 *h, const struct table *t)
{
    /* The rows are zero-filled before row() sees them: every field not set is 0/NULL. */
    static const max_align_t zeros[16];
    sqlite3_stmt *st = NULL;
    int rc, r, in_run = 0;

    assert(t->elem <= sizeof(zeros));
    rc = sqlite3_prepare_v2(h, t->sql, -1, &st, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(st, 1, L->e->vcenter, -1, SQLITE_STATIC);
    if (rc != SQLITE_OK)
        goto fail_db;
    L->parent = NULL;
    vsl_buf_reset(&L->rows);
    vsl_buf_reset(&L->key);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        r = build_key(L, st, t->nkey);
        if (r == -VSL_ETOOBIG)
            continue; /* a key that long names nothing the snapshot could hold */
        if (r < 0)
            goto out;
        if (!in_run || L->key.len != L->row_key.len ||
            (L->key.len > 0 && memcmp(L->key.data, L->row_key.data, L->key.len) != 0)) {
            r = end_run(L, t);
            if (r < 0)
                goto out;
            L->parent = t->parent(L, st);
            in_run = 1;
            vsl_buf_reset(&L->key);
            r = vsl_buf_add(&L->key, L->row_key.data ? L->row_key.data : "", L->row_key.len);
            if (r < 0)
                goto out;
        }
        if (!L->parent)
            continue;
        if (t->elem) {
            r = vsl_buf_add(&L->rows, zeros, t->elem);
            if (r < 0)
                goto out;
        }
        r = t->row(L, st, t->elem ? L->rows.data + L->rows.len - t->elem : NULL);
        if (r < 0)
            goto out;
        if (r > 0 && t->elem)
            L->rows.len -= t->elem; /* left out */
    }
    if (rc != SQLITE_DONE)
        goto fail_db;
    r = end_run(L, t);
    goto out;

fail_db:
    log_debug("db: loading estate of %s: %s: %s", L->e->vcenter, sqlite3_errmsg(h), t->sql);
    r = db_err(rc);
    if (r == 0)
        r = -VSL_EDB;
out:
    sqlite3_finalize(st);
    return r;
}

/* When the vCenter's last successful poll finished; -VSL_ENOTFOUND if it never had one. */
static int last_success(sqlite3 *h, const char *vcenter, int64_t *out)
{
    sqlite3_stmt *st = NULL;
    int rc, r;

    rc = sqlite3_prepare_v2(h,
                            "SELECT last_success_ms FROM vcenters"
                            " WHERE name = ?1 AND last_success_ms IS NOT NULL",
                            -1, &st, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(st, 1, vcenter, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *out = sqlite3_column_int64(st, 0);
        r = 0;
    } else if (rc == SQLITE_DONE) {
        r = -VSL_ENOTFOUND;
    } else {
        log_debug("db: reading vCenter %s: %s", vcenter, sqlite3_errmsg(h));
        r = db_err(rc) ? db_err(rc) : -VSL_EDB;
    }
    sqlite3_finalize(st);
    return r;
}

int db_estate_load(struct db *db, const char *vcenter, struct estate **out)
{
    struct load L = {0};
    size_t i;
    int rc, r, in_tx = 0;

    assert(db && vcenter && out);
    assert(!db->in_snapshot);
    *out = NULL;
    vsl_buf_init(&L.rows, MAX_ROWS);
    vsl_buf_init(&L.key, MAX_KEY);
    vsl_buf_init(&L.row_key, MAX_KEY);
    L.e = est_new(vcenter);
    if (!L.e)
        return -ENOMEM;
    /* One read transaction: with WAL it pins one committed snapshot, so a poll committing
     * while we read cannot hand the checks half of the old one and half of the new one. */
    rc = sqlite3_exec(db->h, "BEGIN", NULL, NULL, NULL);
    if (rc != SQLITE_OK) {
        r = db_err(rc) ? db_err(rc) : -VSL_EDB;
        goto out;
    }
    in_tx = 1;
    r = last_success(db->h, vcenter, &L.e->polled_ms);
    for (i = 0; i < NTABLES && r == 0; i++)
        r = load_table(&L, db->h, &tables[i]);
    if (r == 0 && est_failed(L.e))
        r = -ENOMEM;
    if (r == 0) {
        *out = L.e;
        L.e = NULL;
    }
out:
    if (in_tx)
        sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL);
    est_free(L.e);
    vsl_keymap_free(&L.pods);
    vsl_keymap_free(&L.datastores);
    vsl_keymap_free(&L.ds_by_name);
    vsl_keymap_free(&L.dvs_by_uuid);
    vsl_keymap_free(&L.hosts);
    vsl_keymap_free(&L.vms);
    vsl_keymap_free(&L.alarms);
    vsl_buf_free(&L.rows);
    vsl_buf_free(&L.key);
    vsl_buf_free(&L.row_key);
    return r;
}

int db_vcenter_names(struct db *db, char ***names, size_t *n)
{
    sqlite3_stmt *st = NULL;
    char **v = NULL, **nv;
    size_t len = 0, cap = 0;
    int rc, r = 0;

    assert(db && names && n);
    *names = NULL;
    *n = 0;
    rc = sqlite3_prepare_v2(db->h,
                            "SELECT name FROM vcenters WHERE last_success_ms IS NOT NULL"
                            " ORDER BY name",
                            -1, &st, NULL);
    if (rc != SQLITE_OK)
        goto fail_db;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (len == cap) {
            cap = cap ? cap * 2 : 8;
            nv = realloc(v, cap * sizeof(*v));
            if (!nv) {
                r = -ENOMEM;
                goto out;
            }
            v = nv;
        }
        v[len] = strdup(text(st, 0) ? text(st, 0) : "");
        if (!v[len]) {
            r = -ENOMEM;
            goto out;
        }
        len++;
    }
    if (rc != SQLITE_DONE)
        goto fail_db;
    *names = v;
    *n = len;
    v = NULL;
    len = 0;
    goto out;

fail_db:
    log_debug("db: listing vCenters: %s", sqlite3_errmsg(db->h));
    r = db_err(rc) ? db_err(rc) : -VSL_EDB;
out:
    sqlite3_finalize(st);
    while (len > 0)
        free(v[--len]);
    free(v);
    return r;
}
