/* Loading one vCenter's stored snapshot as an estate for the checks: one statement per table in
 * one read transaction (the VMs' tables on a second thread, in its own transaction of the same
 * snapshot), references resolved to array indexes with sorted keys and bsearch. */
#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <netinet/in.h>
#include <limits.h>
#include <pthread.h>
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
#include "util/heap.h"
#include "util/keymap.h"
#include "util/log.h"

/* The state of one db_estate_load. */
struct load {
    struct estate *e;
    /* The estate whose arena this load allocates from: e, or on the second thread (struct
     * side) an estate of its own, whose arena e adopts once the thread is done (an arena is
     * not shared between threads). */
    struct estate *mem;
    /* A top-level object's key (moref, a DVS uuid, a datastore's name) maps to its index in the
     * estate's array, sorted by key so every reference a child row makes is one bsearch:
     * O(n log n) for the whole estate instead of a query or a scan per reference. Keys are
     * arena-owned. */
    struct vsl_keymap pods, datastores, ds_by_name, dvs_by_uuid, hosts, vms;
    struct vsl_keymap alarms;
    /* The entry of hosts, datastores and vms this load's thread found last (refs_near()),
     * NULL before the first; each points into its map once that is sorted. */
    const struct vsl_keymap_entry *near_host, *near_ds, *near_vm;
    /* The LUN lun_parent() found last: lun_at of lun_host's LUNs (lun_host NULL: none). */
    const struct est_host *lun_host;
    size_t lun_at;
    /* The rows of the run being read: the children of one parent, which the ORDER BY of every
     * child query keeps consecutive. When the run ends they are copied into the arena as the
     * parent's array, exactly sized, so nothing is reallocated inside the arena. */
    struct vsl_buf rows;
    struct vsl_buf key, row_key; /* the run's parent key columns, and the current row's */
    /* A top-level array is built in place: rows then lends its data to the arena's array,
     * sized by a count first, and saved holds rows' own buffer until load_table gives it back. */
    int in_place;
    struct vsl_buf saved;
    void *parent;                /* what the run belongs to, NULL: its rows are dropped */
    struct est_host *host;       /* the host of the run's parent, set by the resolvers */
    struct est_iscsi_hba *hba;
    /* The strings copied lately, by a hash of their bytes (LOAD_STRINGS slots, the newest in
     * each): a value that many rows repeat is one copy in the arena, shared by them all. At
     * 100,000 VMs most of the estate's text is such values (513,000 paths with 513 names, two
     * states and 252 target ports; 129,000 LUNs of 8,065 devices with four vendors; 300,000
     * disks with five labels): copied row by row they were about 70 MB of a 210 MB estate.
     * The estate's strings are never written after the load, so sharing one is safe. Owned,
     * NULL when it could not be allocated (then every string is copied). */
    struct load_string {
        const char *s; /* arena-owned */
        size_t len;
        uint64_t hash; /* bytes_hash() of s: most strings that miss differ in it, and then
                          need no memcmp (a VM's disk's file name shares a long prefix with
                          the one before it in its slot) */
    } *strings;
    /* The arrays of the tables marked share copied lately, by a hash of their bytes (LOAD_RUNS
     * slots, the newest in each): a run whose bytes are an earlier run's, element for element
     * (the same strings, which strings above makes the same pointers, the same indexes), gets
     * that run's array. The hosts of a cluster see the same LUNs over the same paths: at
     * 100,000 synthetic VMs the 513,000 paths are 8,325 distinct arrays of 33,297, and the VMs
     * have 2 distinct sets of controllers. Owned, NULL when it could not be allocated (then
     * every run is copied). */
    struct load_run {
        /* Whose array it is: one table serves every table marked share (the paths and the
         * mounts on one thread), and a run of 3 paths has the length of a run of 7 mounts. */
        const struct table *t;
        const void *items; /* arena-owned */
        size_t len;
        uint64_t hash;
    } *runs;
};

#define LOAD_STRINGS 16384 /* a power of two */
#define LOAD_RUNS    4096  /* a power of two */

/* One query that builds one array of the estate: every column of table t (alias a, so
 * P_<ENUM>_<col> are their positions), then extra (the joins' columns), FROM the table and join,
 * for ?1 the vCenter and where, ORDER BY order. The first nkey columns name the parent (none for
 * a top-level array, whose parent is the estate). */
struct table {
    enum db_table t;
    const char *extra, *join, *where, *order;
    int nkey;
    size_t elem; /* the array's element size; 0 for a table that only sets fields on its parent */
    /* Finds the parent the key columns name, NULL if the snapshot holds none (a dangling row). */
    void *(*parent)(struct load *L, sqlite3_stmt *st);
    /* Fills what the column list does not copy into item (the EST columns are in it already):
     * 0, 1 to leave the row out, or a negative error. NULL: nothing more. */
    int (*row)(struct load *L, sqlite3_stmt *st, void *item);
    /* Where a finished run, now in the arena, goes in its parent: the array and its count. */
    size_t array, count;
    /* Then, if not NULL: what the parent makes of its new array (sorting, linking). */
    void (*attach)(struct load *L, void *parent, void *items, size_t n);
    /* 1: loaded on the second thread when there is one (struct side): the VMs and what hangs
     * from them, which refer only to the hosts and datastores loaded before it starts, and
     * which nothing loaded after them refers to. */
    int side;
    /* 1: a run equal byte for byte to an earlier one of this table shares its array (struct
     * load's runs): the same bytes its own copy would have been. Only for a child table with no
     * attach whose arrays nothing writes once their run has ended: the loader's later tables
     * only read them, and nothing writes paths, controllers or mounts after the load (their
     * fields in model/estate.h point to const; est_keep_pools() does write the estate in
     * place, but its datastores' pools and its array ports, not these), since a write through
     * one parent would show through the others. */
    int share;
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

/* refs_find() for a key that is often the one found last (*near, which it updates) or the
 * one after it: child rows come in their parent's key order (a VM's disks, a host's LUNs), and
 * consecutive rows mostly name one host or datastore (a VM's disks, a host's VMs). At 100,000
 * VMs the binary searches, each about 17 comparisons of keys with a common prefix, were 7.5 %
 * of a whole run's CPU (perf). *near is always the first entry with its key, as the search
 * returns it: the entry after a first one, when its key differs (else the first one matched
 * already), is the first with its own key too. */
static size_t refs_near(const struct vsl_keymap *r, const char *key,
                        const struct vsl_keymap_entry **near)
{
    const struct vsl_keymap_entry *e = *near;

    if (!key)
        return EST_NONE;
    for (int k = 0; e && k < 2 && e < r->v + r->n; k++, e++) {
        if (strcmp(e->key, key) == 0) {
            *near = e;
            return (size_t)e->val;
        }
    }
    e = vsl_keymap_get(r, key);
    if (e)
        *near = e;
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

/* A hash of the len bytes at s, whose low bits pick a slot of L->strings or L->runs: a slot,
 * not an identity (the bytes are compared). Eight bytes at a time: hashed a byte at a time
 * (FNV-1a), the 2.7 million strings of a 100,000-VM estate cost more than SQLite handing them
 * out. The last mixing steps make the low bits depend on every byte: "vmhba2:C0:T1:L5" and
 * "...:L6" differ in the last one. */
static uint64_t bytes_hash(const void *p, size_t len)
{
    const char *s = p;
    const uint64_t m = 0x9e3779b97f4a7c15u;
    uint64_t h = len * m, w;
    size_t k = 0;

    for (; k + sizeof(w) <= len; k += sizeof(w)) {
        memcpy(&w, s + k, sizeof(w));
        h = (h ^ w) * m;
        h ^= h >> 29;
    }
    w = 0;
    memcpy(&w, s + k, len - k);
    h = (h ^ w) * m;
    h ^= h >> 32;
    h *= m;
    h ^= h >> 29;
    return h;
}

/* A text column copied into the arena, or the copy of the same bytes made for an earlier row
 * (L->strings); NULL stays NULL. Running out of memory is remembered by the arena and reported
 * once at the end (est_failed). */
static const char *col_str(struct load *L, sqlite3_stmt *st, int i)
{
    const char *s = text(st, i);
    size_t len = s ? (size_t)sqlite3_column_bytes(st, i) : 0;
    struct load_string *slot;
    uint64_t h;

    if (!s)
        return NULL;
    if (!L->strings)
        return est_strndup(L->mem, s, len);
    h = bytes_hash(s, len);
    slot = &L->strings[h & (LOAD_STRINGS - 1)];
    if (slot->s && slot->hash == h && slot->len == len && memcmp(slot->s, s, len) == 0)
        return slot->s;
    *slot = (struct load_string){est_strndup(L->mem, s, len), len, h};
    return slot->s;
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
    size_t i = refs_near(&L->hosts, text(st, 0), &L->near_host);

    L->host = i == EST_NONE ? NULL : &L->e->hosts[i];
    return L->host;
}

static void *datastore_parent(struct load *L, sqlite3_stmt *st)
{
    size_t i = refs_near(&L->datastores, text(st, 0), &L->near_ds);

    return i == EST_NONE ? NULL : &L->e->datastores[i];
}

static void *vm_parent(struct load *L, sqlite3_stmt *st)
{
    size_t i = refs_near(&L->vms, text(st, 0), &L->near_vm);

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

/* An option's adapter, kind and IQN ('' for none), and the joined target's address and port. */
static void *target_parent(struct load *L, sqlite3_stmt *st)
{
    struct est_iscsi_hba *a = hba_parent(L, st);
    const char *kind = text(st, P_ISCSI_OPTION_kind), *iqn = text(st, P_ISCSI_OPTION_iscsi_name);
    const char *addr = text(st, P_ISCSI_OPTION_NCOLS);
    const int port = col_int(st, P_ISCSI_OPTION_NCOLS + 1);
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
 * loaded in canonical name order, so this is a bsearch, after a look at the LUN after the one
 * found last: the rows come in that order too. */
static void *lun_parent(struct load *L, sqlite3_stmt *st)
{
    const char *name = text(st, 1);
    struct est_host *h = host_parent(L, st);
    struct est_lun *l;

    if (!h || !name || h->n_luns == 0)
        return NULL;
    if (L->lun_host == h && L->lun_at + 1 < h->n_luns &&
        lun_cmp(name, &h->luns[L->lun_at + 1]) == 0)
        l = &h->luns[L->lun_at + 1];
    else
        l = bsearch(name, h->luns, h->n_luns, sizeof(*h->luns), lun_cmp);
    L->lun_host = l ? h : NULL;
    L->lun_at = l ? (size_t)(l - h->luns) : 0;
    return l;
}

/* ---- rows --------------------------------------------------------------------------------- */

/* The index the row being filled will have in the array it is collected into. */
static size_t row_index(const struct load *L, size_t elem)
{
    return L->rows.len / elem - 1;
}

/* Copies the EST columns of table t from the row into the estate struct item. */
static void copy_columns(struct load *L, sqlite3_stmt *st, enum db_table t, void *item)
{
    const struct db_table_def *d = &db_tables[t];

    for (int i = 0; i < d->ncols; i++) {
        const struct db_column *c = &d->cols[i];
        char *f = (char *)item + c->est_off;
        if (c->est_off < 0)
            continue;
        switch (c->type) {
        case DB_INT:
        case DB_BOOL:
            *(int *)f = col_int(st, i);
            break;
        case DB_I64:
            *(int64_t *)f = col_i64(st, i);
            break;
        default:
            *(const char **)f = col_str(L, st, i);
            break;
        }
    }
}

/* An object's name, or its moref when the snapshot has none: checks always have something to
 * call an object in a message, without each of them falling back on its own. */
static const char *name_or(const char *name, const char *moref)
{
    return name ? name : moref;
}

static int pod_row(struct load *L, sqlite3_stmt *st, void *item)
{
    struct est_pod *p = item;

    p->name = name_or(p->name, p->moref);
    return refs_add(&L->pods, p->moref, row_index(L, sizeof(*p)));
}

static int datastore_row(struct load *L, sqlite3_stmt *st, void *item)
{
    struct est_datastore *d = item;

    /* The parent is a folder unless the datastore sits in a datastore cluster. */
    d->pod = refs_find(&L->pods, d->parent);
    /* VMs name the datastore of their configuration file by name ("[name] dir/vm.vmx"). */
    if (d->name && refs_add(&L->ds_by_name, d->name, row_index(L, sizeof(*d))) < 0)
        return -ENOMEM;
    d->name = name_or(d->name, d->moref);
    return refs_add(&L->datastores, d->moref, row_index(L, sizeof(*d)));
}

static int dvswitch_row(struct load *L, sqlite3_stmt *st, void *item)
{
    struct est_dvswitch *d = item;

    d->name = name_or(d->name, d->moref);
    return refs_add(&L->dvs_by_uuid, d->uuid, row_index(L, sizeof(*d)));
}

static int host_row(struct load *L, sqlite3_stmt *st, void *item)
{
    struct est_host *h = item;

    h->name = name_or(h->name, h->moref);
    h->enable_block_delete = EST_UNKNOWN; /* until host_options says otherwise */
    return refs_add(&L->hosts, h->moref, row_index(L, sizeof(*h)));
}

/* Sets a field of the host and keeps no row. */
static int block_delete_row(struct load *L, sqlite3_stmt *st, void *item)
{
    int v = parse_int(text(st, P_HOST_OPTION_value));

    L->host->enable_block_delete = v == EST_UNKNOWN ? EST_UNKNOWN : v != 0;
    return 1;
}

/* The join's column: the vSwitch of the vmknic's portgroup. */
static int vnic_row(struct load *L, sqlite3_stmt *st, void *item)
{
    const struct est_host *h = L->host;
    const char *vswitch = text(st, P_VNIC_NCOLS);
    struct est_vnic *n = item;
    size_t i;

    n->vswitch = EST_NONE;
    for (i = 0; vswitch && i < h->n_vswitches; i++) {
        if (h->vswitches[i].name && strcmp(h->vswitches[i].name, vswitch) == 0)
            n->vswitch = i;
    }
    n->dvswitch = refs_find(&L->dvs_by_uuid, n->dvs_uuid);
    return 0;
}

/* A host that mounts the datastore; one the snapshot does not hold is left out. */
static int mount_row(struct load *L, sqlite3_stmt *st, void *item)
{
    struct est_mount *m = item;

    m->host = refs_near(&L->hosts, text(st, P_DATASTORE_HOST_host), &L->near_host);
    return m->host == EST_NONE;
}

static int lun_cmp(const void *key, const void *lun);

/* The LUN behind an extent on each mounting host that lists its device. */
static int extent_row(struct load *L, sqlite3_stmt *st, void *item)
{
    const struct est_datastore *d = L->parent;
    struct est_extent *x = item;
    size_t i, n = 0;

    for (int pass = 0; pass < 2 && x->disk_name; pass++) {
        /* Pass 0 counts, pass 1 fills the array sized by pass 0. */
        if (pass == 1) {
            if (n == 0)
                break;
            x->luns = est_alloc(L->mem, n * sizeof(*x->luns));
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

static int target_row(struct load *L, sqlite3_stmt *st, void *item)
{
    struct est_iscsi_target *t = item;

    t->send_target = EST_NONE; /* link_targets links it */
    return 0;
}

/* A binding names a vmknic of the adapter's host; one the host does not list is left out, so
 * a check can follow every index it is given. */
static int binding_row(struct load *L, sqlite3_stmt *st, void *item)
{
    const char *dev = text(st, P_ISCSI_BINDING_vnic);
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

/* esxcli's Round Robin IOPS limit is unknown until nmp_row says otherwise. */
static int lun_row(struct load *L, sqlite3_stmt *st, void *item)
{
    struct est_lun *l = item;

    l->iops_limit = EST_UNKNOWN;
    return 0;
}

/* Sets esxcli's Round Robin IOPS limit and device configuration on the LUN, keeps no row. */
static int nmp_row(struct load *L, sqlite3_stmt *st, void *item)
{
    struct est_lun *l = L->parent;

    l->iops_limit = col_int(st, P_NMP_DEVICE_iops);
    l->psp_config = col_str(L, st, P_NMP_DEVICE_psp_config);
    return 1;
}

static int path_row(struct load *L, sqlite3_stmt *st, void *item)
{
    const struct est_host *h = L->host;
    struct est_path *p = item;
    size_t i;

    p->hba = EST_NONE;
    for (i = 0; p->adapter && i < h->n_hbas; i++) {
        if (h->hbas[i].device && strcmp(h->hbas[i].device, p->adapter) == 0)
            p->hba = i;
    }
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

    m->name = name_or(m->name, m->moref);
    m->hw_version = hw_version(text(st, P_VM_hw_version));
    m->host = refs_near(&L->hosts, text(st, P_VM_host), &L->near_host);
    m->config_datastore = datastore_of_path(L, m->vm_path_name, NULL, 0);
    return refs_add(&L->vms, m->moref, row_index(L, sizeof(*m)));
}

/* A VM's datastore the snapshot does not hold is left out, like a dangling binding. */
static int vm_datastore_row(struct load *L, sqlite3_stmt *st, void *item)
{
    size_t *idx = item;

    *idx = refs_near(&L->datastores, text(st, P_VM_DATASTORE_datastore), &L->near_ds);
    return *idx == EST_NONE;
}

static int disk_row(struct load *L, sqlite3_stmt *st, void *item)
{
    const struct est_vm *m = L->parent;
    struct est_disk *d = item;
    size_t i;

    d->datastore = refs_near(&L->datastores, text(st, P_VDISK_datastore), &L->near_ds);
    d->controller = EST_NONE;
    if (sqlite3_column_type(st, P_VDISK_controller_key) != SQLITE_NULL) {
        const int key = col_int(st, P_VDISK_controller_key);
        for (i = 0; i < m->n_controllers; i++) {
            if (m->controllers[i].key == key)
                d->controller = i;
        }
    }
    return 0;
}

/* ---- alarms and the containers above datastores ---------------------------------------- */

static void *alarm_parent(struct load *L, sqlite3_stmt *st)
{
    size_t i = refs_find(&L->alarms, text(st, 0));

    return i == EST_NONE ? NULL : &L->e->alarms[i];
}

static int alarm_row(struct load *L, sqlite3_stmt *st, void *item)
{
    struct est_alarm *a = item;

    a->name = name_or(a->name, a->moref);
    return refs_add(&L->alarms, a->moref, row_index(L, sizeof(*a)));
}

/* The condition's operator, and the join's column: the name of its counter. */
static int alarm_metric_row(struct load *L, sqlite3_stmt *st, void *item)
{
    struct est_alarm_metric *m = item;

    m->op = col_str(L, st, P_ALARM_METRIC_operator);
    m->counter = col_str(L, st, P_ALARM_METRIC_NCOLS);
    return 0;
}

/* Sets a field of the estate and keeps no row. */
static int alarm_manager_row(struct load *L, sqlite3_stmt *st, void *item)
{
    L->e->alarms_read = 1;
    return 1;
}

/* ---- what a parent makes of its new array ------------------------------------------------- */

static void sort_alarms(struct load *L, void *parent, void *items, size_t n)
{
    refs_sort(&L->alarms);
}

static void sort_pods(struct load *L, void *parent, void *items, size_t n)
{
    refs_sort(&L->pods);
}

static void sort_datastores(struct load *L, void *parent, void *items, size_t n)
{
    refs_sort(&L->datastores);
    refs_sort(&L->ds_by_name);
}

static void sort_dvswitches(struct load *L, void *parent, void *items, size_t n)
{
    refs_sort(&L->dvs_by_uuid);
}

static void sort_hosts(struct load *L, void *parent, void *items, size_t n)
{
    refs_sort(&L->hosts);
}

static void sort_vms(struct load *L, void *parent, void *items, size_t n)
{
    refs_sort(&L->vms);
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

/* A static target found by a send target inherits from it: link the two. */
static void link_targets(struct load *L, void *parent, void *items, size_t n)
{
    struct est_iscsi_target *t = items;

    for (size_t i = 0; i < n; i++) {
        if (!t[i].kind || strcmp(t[i].kind, "static") != 0)
            continue;
        for (size_t j = 0; j < n && t[i].send_target == EST_NONE; j++) {
            if (t[j].kind && strcmp(t[j].kind, "send") == 0 && parent_is(&t[i], &t[j]))
                t[i].send_target = j;
        }
    }
}

static int index_cmp(const void *a, const void *b);

/* A VM's datastores in the estate's order; of two with the VM's configuration datastore name,
 * the VM's own is it. */
static void vm_config_datastore(struct load *L, void *parent, void *items, size_t n)
{
    struct est_vm *m = parent;

    qsort(items, n, sizeof(size_t), index_cmp);
    m->config_datastore = datastore_of_path(L, m->vm_path_name, items, n);
}

#define IN(type, a) .array = offsetof(struct type, a), .count = offsetof(struct type, n_##a)

/* In order: every table's parents, and everything its rows refer to, are loaded by an earlier
 * one. Top-level objects come in name order (what a person reading findings expects), children
 * in the order docs/inventory.md gives, with their parent's key first so each parent's rows are
 * consecutive. Device names sort by length first so vmk2 comes before vmk10. */
static const struct table tables[] = {
    {.t = T_STORAGE_POD,
     .order = "name, moref",
     .elem = sizeof(struct est_pod),
     .parent = estate_parent,
     .row = pod_row,
     IN(estate, pods),
     .attach = sort_pods},
    {.t = T_DATASTORE,
     .order = "name, moref",
     .elem = sizeof(struct est_datastore),
     .parent = estate_parent,
     .row = datastore_row,
     IN(estate, datastores),
     .attach = sort_datastores},
    {.t = T_DVSWITCH,
     .order = "name, moref",
     .elem = sizeof(struct est_dvswitch),
     .parent = estate_parent,
     .row = dvswitch_row,
     IN(estate, dvswitches),
     .attach = sort_dvswitches},
    {.t = T_HOST,
     .order = "name, moref",
     .elem = sizeof(struct est_host),
     .parent = estate_parent,
     .row = host_row,
     IN(estate, hosts),
     .attach = sort_hosts},
    {.t = T_HOST_OPTION,
     .where = " AND key = 'VMFS3.EnableBlockDelete'",
     .order = "host",
     .nkey = 1,
     .parent = host_parent,
     .row = block_delete_row},
    {.t = T_VSWITCH,
     .order = "host, name",
     .nkey = 1,
     .elem = sizeof(struct est_vswitch),
     .parent = host_parent,
     IN(est_host, vswitches)},
    {.t = T_VNIC,
     .extra = "pg.vswitch",
     .join = " LEFT JOIN portgroups pg"
             " ON pg.vcenter = x.vcenter AND pg.host = x.host AND pg.name = x.portgroup",
     .order = "x.host, length(x.device), x.device",
     .nkey = 1,
     .elem = sizeof(struct est_vnic),
     .parent = host_parent,
     .row = vnic_row,
     IN(est_host, vnics)},
    {.t = T_HBA,
     .order = "host, length(device), device",
     .nkey = 1,
     .elem = sizeof(struct est_hba),
     .parent = host_parent,
     IN(est_host, hbas)},
    {.t = T_ISCSI_HBA,
     .order = "host, length(device), device",
     .nkey = 1,
     .elem = sizeof(struct est_iscsi_hba),
     .parent = host_parent,
     IN(est_host, iscsi_hbas)},
    {.t = T_ISCSI_OPTION,
     .where = " AND target = ''",
     .order = "host, hba, key",
     .nkey = 2,
     .elem = sizeof(struct est_option),
     .parent = hba_parent,
     IN(est_iscsi_hba, options)},
    {.t = T_ISCSI_TARGET,
     .order = "host, hba, kind, address, port, target, x.iscsi_name",
     .nkey = 2,
     .elem = sizeof(struct est_iscsi_target),
     .parent = hba_parent,
     .row = target_row,
     IN(est_iscsi_hba, targets),
     .attach = link_targets},
    /* Options name their target by its "address:port" key and IQN; the join gives the address
     * and port the loaded target is matched by. */
    {.t = T_ISCSI_OPTION,
     .extra = "t.address, t.port",
     .join = " JOIN iscsi_targets t ON t.vcenter = x.vcenter AND t.host = x.host"
             " AND t.hba = x.hba AND t.kind = x.kind AND t.target = x.target"
             " AND t.iscsi_name = x.iscsi_name",
     .where = " AND x.target <> ''",
     .order = "x.host, x.hba, x.kind, x.target, x.iscsi_name, x.key",
     .nkey = 5,
     .elem = sizeof(struct est_option),
     .parent = target_parent,
     IN(est_iscsi_target, options)},
    {.t = T_ISCSI_BINDING,
     .order = "host, hba, length(vnic), vnic",
     .nkey = 2,
     .elem = sizeof(size_t),
     .parent = hba_parent,
     .row = binding_row,
     .array = offsetof(struct est_iscsi_hba, bound_vnics),
     .count = offsetof(struct est_iscsi_hba, n_bound_vnics)},
    {.t = T_LUN,
     .order = "host, canonical_name",
     .nkey = 1,
     .elem = sizeof(struct est_lun),
     .parent = host_parent,
     .row = lun_row,
     IN(est_host, luns)},
    /* The Round Robin IOPS limit is esxcli's, matched by host and canonical name: a bsearch
     * in the host's LUNs each, cheaper than SQLite joining the two tables row by row. */
    {.t = T_NMP_DEVICE,
     .order = "host, device",
     .nkey = 2,
     .parent = lun_parent,
     .row = nmp_row},
    {.t = T_LUN_PATH,
     .order = "host, lun, name",
     .nkey = 2,
     .elem = sizeof(struct est_path),
     .parent = lun_parent,
     .row = path_row,
     IN(est_lun, paths),
     .share = 1},
    {.t = T_SATP_RULE,
     .order = "host, satp, vendor, model, rule_group, psp, psp_options, device, driver,"
              " transport, claim_options, options",
     .nkey = 1,
     .elem = sizeof(struct est_satp_rule),
     .parent = host_parent,
     IN(est_host, satp_rules)},
    /* Only gaps about a host have a place in the estate; the rest find no parent. */
    {.t = T_GAP,
     .order = "object, what",
     .nkey = 1,
     .elem = sizeof(struct est_gap),
     .parent = host_parent,
     IN(est_host, gaps)},
    /* After the hosts and their LUNs: a mount names a host, an extent a LUN on the mounting
     * hosts, so mounts come before extents. */
    {.t = T_DATASTORE_HOST,
     .order = "datastore, host",
     .nkey = 1,
     .elem = sizeof(struct est_mount),
     .parent = datastore_parent,
     .row = mount_row,
     IN(est_datastore, mounts),
     .share = 1},
    {.t = T_DATASTORE_EXTENT,
     .order = "datastore, position",
     .nkey = 1,
     .elem = sizeof(struct est_extent),
     .parent = datastore_parent,
     .row = extent_row,
     IN(est_datastore, extents)},
    {.t = T_VM,
     .side = 1,
     .order = "name, moref",
     .elem = sizeof(struct est_vm),
     .parent = estate_parent,
     .row = vm_row,
     IN(estate, vms),
     .attach = sort_vms},
    /* In the order of the estate's datastores (by name, moref): vm_config_datastore sorts
     * each VM's, fewer than SQLite joining every row to its datastore to sort them. */
    {.t = T_VM_DATASTORE,
     .side = 1,
     .order = "vm, datastore",
     .nkey = 1,
     .elem = sizeof(size_t),
     .parent = vm_parent,
     .row = vm_datastore_row,
     IN(est_vm, datastores),
     .attach = vm_config_datastore},
    {.t = T_CONTROLLER,
     .side = 1,
     .order = "vm, key",
     .nkey = 1,
     .elem = sizeof(struct est_controller),
     .parent = vm_parent,
     IN(est_vm, controllers),
     .share = 1},
    {.t = T_VDISK,
     .side = 1,
     .order = "vm, key",
     .nkey = 1,
     .elem = sizeof(struct est_disk),
     .parent = vm_parent,
     .row = disk_row,
     IN(est_vm, disks)},
    {.t = T_SNAPSHOT,
     .side = 1,
     .order = "vm, depth, created, name",
     .nkey = 1,
     .elem = sizeof(struct est_snapshot),
     .parent = vm_parent,
     IN(est_vm, snapshots)},
    /* Sorted by moref: est_entity() searches them. */
    {.t = T_ENTITY,
     .order = "moref",
     .elem = sizeof(struct est_entity),
     .parent = estate_parent,
     IN(estate, entities)},
    {.t = T_ALARM_DISABLED,
     .order = "entity, alarm",
     .elem = sizeof(struct est_alarm_disabled),
     .parent = estate_parent,
     IN(estate, alarms_disabled)},
    {.t = T_ALARM,
     .order = "name, moref",
     .elem = sizeof(struct est_alarm),
     .parent = estate_parent,
     .row = alarm_row,
     IN(estate, alarms),
     .attach = sort_alarms},
    /* A condition names its counter by id; the id's name is what says what it watches. */
    {.t = T_ALARM_METRIC,
     .extra = "p.name",
     .join = " LEFT JOIN perf_counters p"
             " ON p.vcenter = x.vcenter AND p.counter_id = x.counter_id",
     .order = "x.alarm, x.pos",
     .nkey = 1,
     .elem = sizeof(struct est_alarm_metric),
     .parent = alarm_parent,
     .row = alarm_metric_row,
     IN(est_alarm, metrics)},
    {.t = T_ALARM_MANAGER, .parent = estate_parent, .row = alarm_manager_row},
    /* Gaps about the vCenter itself; those about a host went to the host above. */
    {.t = T_GAP,
     .where = " AND object = ''",
     .order = "what",
     .elem = sizeof(struct est_gap),
     .parent = estate_parent,
     .array = offsetof(struct estate, gaps),
     .count = offsetof(struct estate, n_gaps)},
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

/* The run's rows copied into the arena, or, for a table that shares (struct table's share),
 * an array of an earlier run with the same bytes. NULL when out of memory. */
static void *run_array(struct load *L, const struct table *t)
{
    const size_t len = L->rows.len;
    struct load_run *slot = NULL;
    uint64_t h = 0;
    void *items;

    if (t->share && L->runs) {
        h = bytes_hash(L->rows.data, len);
        slot = &L->runs[h & (LOAD_RUNS - 1)];
        if (slot->items && slot->t == t && slot->hash == h && slot->len == len &&
            memcmp(slot->items, L->rows.data, len) == 0)
            return (void *)slot->items;
    }
    items = est_alloc(L->mem, len);
    if (items)
        memcpy(items, L->rows.data, len);
    if (items && slot)
        *slot = (struct load_run){t, items, len, h};
    return items;
}

/* Ends the run being collected: its rows move into the arena and go to their parent. */
static int end_run(struct load *L, const struct table *t)
{
    const size_t n = t->elem ? L->rows.len / t->elem : 0;
    void *items;

    assert(!t->share || (!t->attach && t->nkey > 0));
    if (L->parent && n > 0) {
        items = L->in_place ? L->rows.data : run_array(L, t);
        if (!items)
            return -ENOMEM;
        *(void **)((char *)L->parent + t->array) = items;
        *(size_t *)((char *)L->parent + t->count) = n;
        if (t->attach)
            t->attach(L, L->parent, items, n);
        if (L->in_place)
            L->rows = (struct vsl_buf){0}; /* the array is the parent's now: nothing to reset */
    }
    vsl_buf_reset(&L->rows);
    L->parent = NULL;
    return 0;
}

/* The rows the query of t will return (its FROM, join and WHERE: the same read transaction
 * gives the same count). */
static int count_rows(struct load *L, sqlite3 *h, const struct table *t, size_t *n)
{
    struct vsl_buf sql;
    sqlite3_stmt *st = NULL;
    int r;

    *n = 0;
    vsl_buf_init(&sql, 4096);
    r = vsl_buf_printf(&sql, "SELECT count(*) FROM %s x%s WHERE x.vcenter = ?1%s",
                       db_table_name(t->t), t->join ? t->join : "", t->where ? t->where : "");
    if (r == 0)
        r = db_row(h, sql.data, &st, "counting an estate's objects", DB_TEXT(L->e->vcenter));
    if (r == 0)
        *n = (size_t)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    vsl_buf_free(&sql);
    return r;
}

/* A top-level array (100,000 VMs) is built where it stays, in the arena: grown in rows and
 * copied there it cost three times its size in fresh pages, each a page fault. rows lends its
 * data to the array (with room for the NUL vsl_buf_add writes) until end_place. */
static int begin_place(struct load *L, sqlite3 *h, const struct table *t)
{
    size_t n;
    char *items;
    int r;

    if (t->nkey != 0 || !t->elem || t->parent != estate_parent)
        return 0;
    r = count_rows(L, h, t, &n);
    if (r < 0 || n == 0)
        return r;
    if (n > (MAX_ROWS - 1) / t->elem)
        return -VSL_ETOOBIG;
    if (!(items = est_alloc(L->mem, n * t->elem + 1)))
        return -ENOMEM;
    L->saved = L->rows;
    L->rows = (struct vsl_buf){.data = items, .cap = n * t->elem + 1, .max = n * t->elem};
    L->in_place = 1;
    return 0;
}

static void end_place(struct load *L)
{
    if (L->in_place) {
        L->rows = L->saved;
        L->in_place = 0;
    }
}

static int load_table(struct load *L, sqlite3 *h, const struct table *t)
{
    /* The rows are zero-filled before row() sees them: every field not set is 0/NULL. */
    static const max_align_t zeros[16];
    sqlite3_stmt *st = NULL;
    struct vsl_buf sql;
    int rc = SQLITE_NOMEM, r, in_run = 0;

    assert(t->elem <= sizeof(zeros));
    vsl_buf_init(&sql, 4096);
    r = vsl_buf_addstr(&sql, "SELECT ");
    if (r == 0)
        r = db_select_columns(&sql, t->t, "x");
    if (r == 0)
        r = vsl_buf_printf(&sql, "%s%s FROM %s x%s WHERE x.vcenter = ?1%s%s%s", t->extra ? ", " : "",
                           t->extra ? t->extra : "", db_table_name(t->t), t->join ? t->join : "",
                           t->where ? t->where : "", t->order ? " ORDER BY " : "",
                           t->order ? t->order : "");
    if (r == 0)
        rc = sqlite3_prepare_v2(h, sql.data, -1, &st, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(st, 1, L->e->vcenter, -1, SQLITE_STATIC);
    if (rc != SQLITE_OK)
        goto fail_db;
    r = begin_place(L, h, t);
    if (r < 0)
        goto out;
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
        void *item = t->elem ? L->rows.data + L->rows.len - t->elem : NULL;
        if (item)
            copy_columns(L, st, t->t, item);
        r = t->row ? t->row(L, st, item) : 0;
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
    r = db_fail(h, rc, sql.data ? sql.data : "loading an estate");
out:
    end_place(L);
    sqlite3_finalize(st);
    vsl_buf_free(&sql);
    return r;
}

/* ---- the array pools behind the datastores ------------------------------------------------ */

/* Every (pool, datastore) pair where a configured array's pool holds one of this vCenter's
 * datastores (through a LUN, an NFS file system or a VVol datastore: DB_POOL_PAIRS), by pool,
 * with whether that storage is thin. Arrays are global, estates per vCenter: each vCenter gets
 * the pools behind its own datastores, from the arrays' last stored snapshots. */
static const char pools_sql[] =
    "SELECT p.vcenter, v.kind, p.id, p.name, p.size_total, p.size_free, p.size_used,"
    " p.size_subscribed, p.snap_size_used, p.alert_threshold, p.health, p.health_text,"
    " v.last_success_ms, v.last_error,"
    " (SELECT count(*) FROM array_luns a WHERE a.vcenter = p.vcenter AND a.pool = p.id),"
    " (SELECT count(*) FROM array_luns a WHERE a.vcenter = p.vcenter AND a.pool = p.id"
    "  AND a.thin),"
    " x.ds, max(x.thin)"
    " FROM (" DB_POOL_PAIRS("e.vcenter = ?1", "d.vcenter = ?1", "1", "d.vcenter = ?1") ") x"
    " JOIN array_pools p ON p.vcenter = x.array AND p.id = x.pool"
    " JOIN vcenters v ON v.name = p.vcenter AND v.kind IS NOT NULL"
    " GROUP BY p.vcenter, p.id, x.ds"
    " ORDER BY p.vcenter, p.id, x.ds";

static int index_cmp(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;

    return x < y ? -1 : x > y;
}

static int load_pools(struct load *L, sqlite3 *h)
{
    struct estate *e = L->e;
    sqlite3_stmt *st = NULL;
    struct vsl_buf pools, pairs; /* struct est_pool, and (pool, datastore, thin) triples */
    size_t npairs, i, *counts = NULL;
    int rc, r = 0;

    vsl_buf_init(&pools, MAX_ROWS);
    vsl_buf_init(&pairs, MAX_ROWS);
    rc = sqlite3_prepare_v2(h, pools_sql, -1, &st, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(st, 1, e->vcenter, -1, SQLITE_STATIC);
    if (rc != SQLITE_OK)
        goto fail_db;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        size_t ds = refs_find(&L->datastores, text(st, 16));
        size_t np = pools.len / sizeof(struct est_pool);
        struct est_pool *last = np ? (struct est_pool *)pools.data + np - 1 : NULL;
        if (ds == EST_NONE)
            continue;
        if (!last || strcmp(last->array, text(st, 0)) || strcmp(last->id, text(st, 2))) {
            struct est_pool p = {
                .array = col_str(L, st, 0),
                .array_type = col_str(L, st, 1),
                .id = col_str(L, st, 2),
                .name = col_str(L, st, 3),
                .size_total = col_i64(st, 4),
                .size_free = col_i64(st, 5),
                .size_used = col_i64(st, 6),
                .size_subscribed = col_i64(st, 7),
                .snap_size_used = col_i64(st, 8),
                .alert_threshold = col_int(st, 9),
                .health = col_int(st, 10),
                .health_text = col_str(L, st, 11),
                .polled_ms = col_i64(st, 12),
                .array_error = col_str(L, st, 13),
                .n_luns = col_int(st, 14),
                .n_thin_luns = col_int(st, 15),
            };
            if (!p.array || !p.id) {
                r = -ENOMEM;
                goto out;
            }
            r = vsl_buf_add(&pools, &p, sizeof(p));
            if (r < 0)
                goto out;
            np++;
        }
        size_t pair[3] = {np - 1, ds, (size_t)(sqlite3_column_int(st, 17) != 0)};
        r = vsl_buf_add(&pairs, pair, sizeof(pair));
        if (r < 0)
            goto out;
    }
    if (rc != SQLITE_DONE)
        goto fail_db;
    e->n_pools = pools.len / sizeof(struct est_pool);
    if (e->n_pools == 0)
        goto out;
    e->pools = est_alloc(e, pools.len);
    npairs = pairs.len / (3 * sizeof(size_t));
    counts = calloc(e->n_datastores, sizeof(*counts));
    if (!e->pools || !counts) {
        r = -ENOMEM;
        goto out;
    }
    memcpy(e->pools, pools.data, pools.len);
    /* Both directions: a pool's datastores (the pairs are in pool order) and a datastore's
     * pools (counted first, so each array is allocated once, exactly sized). */
    const size_t *pv = (const size_t *)pairs.data;
    for (i = 0; i < npairs; i++)
        counts[pv[3 * i + 1]]++;
    for (i = 0; i < e->n_datastores; i++) {
        if (counts[i] && (!(e->datastores[i].pools = est_alloc(e, counts[i] * sizeof(size_t))) ||
                          !(e->datastores[i].pool_thin = est_alloc(e, counts[i] * sizeof(int))))) {
            r = -ENOMEM;
            goto out;
        }
    }
    for (i = 0; i < npairs; i++) {
        struct est_pool *p = &e->pools[pv[3 * i]];
        struct est_datastore *d = &e->datastores[pv[3 * i + 1]];
        if (!p->datastores) {
            size_t k = i;
            while (k < npairs && pv[3 * k] == pv[3 * i])
                k++;
            p->datastores = est_alloc(e, (k - i) * sizeof(size_t));
            if (!p->datastores) {
                r = -ENOMEM;
                goto out;
            }
        }
        p->datastores[p->n_datastores++] = pv[3 * i + 1];
        d->pool_thin[d->n_pools] = (int)pv[3 * i + 2];
        d->pools[d->n_pools++] = pv[3 * i];
    }
    /* A pool's datastores in the estate's order (by name), as messages list them. */
    for (i = 0; i < e->n_pools; i++)
        qsort(e->pools[i].datastores, e->pools[i].n_datastores, sizeof(size_t), index_cmp);
    goto out;
fail_db:
    r = db_fail(h, rc, "reading the array pools");
out:
    sqlite3_finalize(st);
    free(counts);
    vsl_buf_free(&pools);
    vsl_buf_free(&pairs);
    return r;
}

/* ---- the array ports the paths end at ----------------------------------------------------- */

/* The FC ports of configured arrays that a path of this vCenter's hosts ends at, each once, by
 * port WWN: which storage processor a path reaches (multipath-redundancy). Then every iSCSI
 * portal of the configured arrays with its Ethernet port's SP and MTU: a Unity has a handful,
 * and which of them this vCenter's targets and paths name is the checks' to judge (a path
 * names "address:port", a target its address). */
static const char ports_sql[] =
    "SELECT * FROM (SELECT DISTINCT p.vcenter, p.wwpn, p.sp, p.id, NULL, NULL, NULL, NULL,"
    " (SELECT count(DISTINCT q.sp) FROM array_ports q WHERE q.vcenter = p.vcenter)"
    " FROM array_ports p"
    " JOIN vcenters v ON v.name = p.vcenter AND v.kind IS NOT NULL"
    " WHERE p.wwpn IS NOT NULL AND p.sp IS NOT NULL AND EXISTS (SELECT 1 FROM lun_paths x"
    "  WHERE x.vcenter = ?1 AND x.target_wwpn = p.wwpn)"
    " ORDER BY p.wwpn, p.vcenter)"
    " UNION ALL SELECT * FROM (SELECT i.vcenter, NULL, p.sp, p.id, i.id, i.address, i.iqn, p.mtu,"
    " (SELECT count(DISTINCT q.sp) FROM array_ports q WHERE q.vcenter = p.vcenter)"
    " FROM array_portals i"
    " JOIN array_ports p ON p.vcenter = i.vcenter AND p.id = i.port"
    " JOIN vcenters v ON v.name = i.vcenter AND v.kind IS NOT NULL"
    " WHERE i.address IS NOT NULL AND p.sp IS NOT NULL"
    " ORDER BY i.address, i.vcenter)";

static int port_row(sqlite3_stmt *st, void *ctx)
{
    struct load *L = ctx;
    struct est_array_port p = {col_str(L, st, 0), col_str(L, st, 1), col_str(L, st, 2),
                               col_str(L, st, 3), col_str(L, st, 4), col_str(L, st, 5),
                               col_str(L, st, 6), col_int(st, 7), col_int(st, 8)};

    if (!p.array || !p.sp || !(p.wwpn || p.address))
        return -ENOMEM;
    return vsl_buf_add(&L->rows, &p, sizeof(p));
}

static int load_ports(struct load *L, sqlite3 *h)
{
    struct estate *e = L->e;
    int r;

    vsl_buf_reset(&L->rows);
    r = db_each(h, ports_sql, "reading the array ports", port_row, L, DB_TEXT(e->vcenter));
    if (r < 0 || L->rows.len == 0)
        return r;
    if (!(e->array_ports = est_alloc(e, L->rows.len)))
        return -ENOMEM;
    memcpy(e->array_ports, L->rows.data, L->rows.len);
    e->n_array_ports = L->rows.len / sizeof(struct est_array_port);
    return 0;
}

/* ---- the NAS servers behind NFS datastores ----------------------------------------------- */

/* Each NFS datastore of the vCenter, with what the configured arrays' NAS servers say of its
 * mount "<host>:<path>" (DB_NFS_RANKED): 0 moref, 1 host, 3 whether one NAS server serves it
 * (chosen), 4-8 that server's array, name, home SP, share_len and "array/name" label, 9 whether
 * its array's file systems and shares were read; 10 how many NAS servers have its address, 11
 * how many of them are live, 12 how many the share leaves to choose from, 13-14 the first of
 * those (label, array), 15-16 the first replication destination; 17-19 how many NAS servers of
 * any address export a share holding its path, the first of them, its array (a datastore
 * mounted by a name; looked for only when no NAS server has its address, as that scan costs
 * a pass over every share per datastore); 20 the SP count of the serving server's array.
 * nas_row() joins the datastore when one serves it, and otherwise says why not. */
#define NAS_LABEL(X) X ".array || '/' || coalesce(" X ".name, " X ".nas_server)"
static const char nas_sql[] =
    "WITH k AS MATERIALIZED (" DB_NFS_RANKED("d.vcenter = ?1") ")"
    " SELECT y.*, CASE WHEN y.n_all = 0 THEN (SELECT count(DISTINCT fs.vcenter || ' ' || fs.nas_server)"
    "  FROM array_filesystems fs JOIN array_nfs_shares sh ON sh.vcenter = fs.vcenter"
    "  AND sh.filesystem = fs.id JOIN vcenters v ON v.name = fs.vcenter AND v.kind IS NOT NULL"
    "  WHERE " DB_SHARE_HOLDS("y.path", "sh.name") ") END,"
    " CASE WHEN y.n_all = 0 THEN (SELECT min(fs.vcenter || '/' || coalesce(n.name, fs.nas_server))"
    "  FROM array_filesystems fs JOIN array_nfs_shares sh ON sh.vcenter = fs.vcenter"
    "  AND sh.filesystem = fs.id JOIN vcenters v ON v.name = fs.vcenter AND v.kind IS NOT NULL"
    "  LEFT JOIN array_nas_servers n ON n.vcenter = fs.vcenter AND n.id = fs.nas_server"
    "  WHERE " DB_SHARE_HOLDS("y.path", "sh.name") ") END,"
    " CASE WHEN y.n_all = 0 THEN (SELECT min(fs.vcenter) FROM array_filesystems fs JOIN array_nfs_shares sh"
    "  ON sh.vcenter = fs.vcenter AND sh.filesystem = fs.id JOIN vcenters v ON v.name = fs.vcenter"
    "  AND v.kind IS NOT NULL WHERE " DB_SHARE_HOLDS("y.path", "sh.name") ") END,"
    " (SELECT count(DISTINCT q.sp) FROM array_ports q WHERE q.vcenter = y.ca)"
    " FROM (SELECT d.moref, d.nas_remote_host, rtrim(d.nas_remote_path, '/') AS path,"
    " count(CASE WHEN k.chosen THEN 1 END), min(CASE WHEN k.chosen THEN k.array END) AS ca,"
    " min(CASE WHEN k.chosen THEN k.name END), min(CASE WHEN k.chosen THEN k.home_sp END),"
    " min(CASE WHEN k.chosen THEN k.share_len END),"
    " min(CASE WHEN k.chosen THEN " NAS_LABEL("k") " END),"
    " min(CASE WHEN k.chosen THEN EXISTS (SELECT 1 FROM array_nfs_shares q WHERE"
    "  q.vcenter = k.array) AND EXISTS (SELECT 1 FROM array_filesystems q WHERE"
    "  q.vcenter = k.array) END),"
    " count(k.ds) AS n_all, coalesce(sum(k.live), 0), coalesce(max(k.n), 0),"
    " min(CASE WHEN k.pick THEN " NAS_LABEL("k") " END), min(CASE WHEN k.pick THEN k.array END),"
    " min(CASE WHEN NOT k.live THEN " NAS_LABEL("k") " END),"
    " min(CASE WHEN NOT k.live THEN k.array END)"
    " FROM datastores d LEFT JOIN k ON k.dsvc = d.vcenter AND k.ds = d.moref"
    " WHERE d.vcenter = ?1 AND d.type IN ('NFS', 'NFS41') AND d.nas_remote_host IS NOT NULL"
    " GROUP BY d.moref) y";

/* Whether host is written as an IPv4 or IPv6 address, not a name. */
static int is_address(const char *host)
{
    unsigned char a[sizeof(struct in6_addr)];

    return inet_pton(AF_INET, host, a) == 1 || inet_pton(AF_INET6, host, a) == 1;
}

static int nas_row(sqlite3_stmt *st, void *ctx)
{
    struct load *L = ctx;
    size_t ds = refs_find(&L->datastores, text(st, 0));
    int first = 0; /* the column of the label nas_doubt_* take from (the array follows) */

    if (ds == EST_NONE)
        return 0;
    struct est_datastore *d = &L->e->datastores[ds];
    const char *host = text(st, 1);

    if (col_int(st, 3) == 1) {
        d->nas_array = col_str(L, st, 4);
        d->nas_server = col_str(L, st, 5);
        d->nas_home_sp = col_str(L, st, 6);
        d->nas_array_sps = col_int(st, 20);
        if (!d->nas_array)
            return -ENOMEM;
        if (sqlite3_column_type(st, 7) != SQLITE_NULL)
            return 0; /* and its pool is the share's (DB_POOL_PAIRS) */
        /* Its server is known, its pool not: no share holds the path, or none was read. */
        d->nas_doubt = col_int(st, 9) ? EST_NAS_NO_SHARE : EST_NAS_SHARES_NOT_READ;
        d->nas_doubt_count = 1;
        d->nas_doubt_server = col_str(L, st, 8);
        d->nas_doubt_array = d->nas_array;
        return d->nas_doubt_server ? 0 : -ENOMEM;
    } else if (col_int(st, 11) > 0) {
        d->nas_doubt = EST_NAS_AMBIGUOUS;
        d->nas_doubt_count = col_int(st, 12);
        first = 13;
    } else if (col_int(st, 10) > 0) {
        d->nas_doubt = EST_NAS_DESTINATION;
        d->nas_doubt_count = col_int(st, 10);
        first = 15;
    } else if (col_int(st, 17) > 0 && host && !is_address(host)) {
        d->nas_doubt = EST_NAS_BY_NAME;
        d->nas_doubt_count = col_int(st, 17);
        first = 18;
    } else {
        return 0; /* no configured array has its address, nor a share at its path */
    }
    d->nas_doubt_server = col_str(L, st, first);
    d->nas_doubt_array = col_str(L, st, first + 1);
    return d->nas_doubt_server && d->nas_doubt_array ? 0 : -ENOMEM;
}

/* The capacity history of the pods and datastores loaded, over the EST_HISTORY_DAYS before
 * the snapshot, at most one point an hour (the latest of each): what datastore-runway reads. */
static int load_history(struct load *L, sqlite3 *h)
{
    static const char sql[] =
        "SELECT moref, kind, t_ms, capacity, free_space FROM capacity_history"
        " WHERE vcenter = ?1 AND t_ms >= ?2 AND t_ms <= ?3 AND capacity > 0"
        " AND free_space IS NOT NULL ORDER BY moref, t_ms";
    const int64_t hour = 3600000;
    sqlite3_stmt *st = NULL;
    struct est_capacity_point *run_items, **array = NULL;
    size_t *count = NULL;
    int rc, r = 0;

    vsl_buf_reset(&L->rows);
    vsl_buf_reset(&L->key);
    rc = sqlite3_prepare_v2(h, sql, -1, &st, NULL);
    if (rc == SQLITE_OK)
        rc = db_bind(st, DB_TEXT(L->e->vcenter),
                     DB_INT(L->e->polled_ms - (int64_t)EST_HISTORY_DAYS * 86400000),
                     DB_INT(L->e->polled_ms));
    for (;;) {
        int row = rc == SQLITE_OK || rc == SQLITE_ROW ? (rc = sqlite3_step(st)) == SQLITE_ROW : 0;
        const char *moref = row ? text(st, 0) : NULL;
        /* A run ends where the moref changes: its points go to their object. */
        if (!row || !moref || L->key.len != strlen(moref) + 1 ||
            memcmp(L->key.data, moref, L->key.len)) {
            if (array && L->rows.len > 0) {
                run_items = est_alloc(L->mem, L->rows.len);
                if (!run_items) {
                    r = -ENOMEM;
                    break;
                }
                memcpy(run_items, L->rows.data, L->rows.len);
                *array = run_items;
                *count = L->rows.len / sizeof(*run_items);
            }
            vsl_buf_reset(&L->rows);
            vsl_buf_reset(&L->key);
            array = NULL;
            if (!row)
                break;
            if (!moref || vsl_buf_add(&L->key, moref, strlen(moref) + 1) < 0)
                continue;
            const char *kind = text(st, 1);
            size_t i;
            if (kind && !strcmp(kind, "storage_pod") &&
                (i = refs_find(&L->pods, moref)) != EST_NONE) {
                array = &L->e->pods[i].history;
                count = &L->e->pods[i].n_history;
            } else if (kind && !strcmp(kind, "datastore") &&
                       (i = refs_find(&L->datastores, moref)) != EST_NONE) {
                array = &L->e->datastores[i].history;
                count = &L->e->datastores[i].n_history;
            }
        }
        if (!array)
            continue; /* an object that is gone from the snapshot */
        struct est_capacity_point p = {.t_ms = sqlite3_column_int64(st, 2),
                                       .capacity = sqlite3_column_int64(st, 3),
                                       .free_space = sqlite3_column_int64(st, 4)};
        struct est_capacity_point *prev =
            L->rows.len ? (struct est_capacity_point *)(L->rows.data + L->rows.len) - 1 : NULL;
        if (prev && prev->t_ms / hour == p.t_ms / hour)
            *prev = p; /* the latest of the hour */
        else if ((r = vsl_buf_add(&L->rows, &p, sizeof(p))) < 0)
            break;
    }
    if (r == 0 && rc != SQLITE_DONE)
        r = db_fail(h, rc, "loading the capacity history");
    sqlite3_finalize(st);
    return r;
}

/* When the vCenter's last successful poll finished; -VSL_ENOTFOUND if it never had one. */
static int last_success(sqlite3 *h, const char *vcenter, int64_t *out)
{
    sqlite3_stmt *st = NULL;
    int r = db_row(h,
                   "SELECT last_success_ms FROM vcenters"
                   " WHERE name = ?1 AND last_success_ms IS NOT NULL",
                   &st, "reading a vCenter", DB_TEXT(vcenter));

    if (r == 0)
        *out = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return r;
}

static int snapshots_stamp(sqlite3 *conn, uint64_t *out)
{
    /* Every poll and every round that wrote rows records itself (a new polls row, or its
     * window's rounds and finished_ms moving on); a round that found nothing changed only
     * confirms the snapshot (vcenters.last_success_ms, db_update_confirm()), which is not
     * counted here: the estate read before it is the one stored. */
    sqlite3_stmt *st = NULL;
    int r = db_row_args(conn,
                        "SELECT count(*), coalesce(sum(v.last_poll_id), 0),"
                        " coalesce(sum(p.rounds), 0), coalesce(sum(p.finished_ms), 0)"
                        " FROM vcenters v LEFT JOIN polls p ON p.id = v.last_poll_id",
                        &st, "reading the vCenters' last polls", NULL, 0);

    if (r == 0) {
        uint64_t h = 1469598103934665603ULL; /* FNV-1a over the four numbers */
        for (int i = 0; i < 4; i++) {
            uint64_t v = (uint64_t)sqlite3_column_int64(st, i);
            for (int b = 0; b < 8; b++) {
                h ^= (v >> (8 * b)) & 0xff;
                h *= 1099511628211ULL;
            }
        }
        *out = h;
    }
    sqlite3_finalize(st);
    return r;
}

int db_snapshots_stamp(struct db *db, uint64_t *out)
{
    return snapshots_stamp(db->h, out);
}

void db_set_load_trim(struct db *db, int on)
{
    db->load_trim = on;
}

int db_snapshot_time(struct db *db, const char *vcenter, int64_t *ms)
{
    return last_success(db->h, vcenter, ms);
}

/* ---- the second thread ------------------------------------------------------------------- */

#ifdef VSL_TEST_HOOKS
int db_test_load_one_thread;
void (*db_test_load_begun)(void *ctx, int call);
void *db_test_load_begun_ctx;
int db_test_load_threaded;
int db_test_load_private;
const char *db_test_load_side_log_vcenter;
/* private_conn()'s calls in this load: 1 the calling thread's, 2 the second thread's. */
static int test_load_calls;
#endif

/* The VMs and their children (the tables marked side) are loaded on a thread of their own with
 * a connection of its own, beside the rest: at 100,000 VMs they are two thirds of the load's
 * CPU, and the machine has a second core. The thread allocates from an arena of its own (mem),
 * reads the hosts' and datastores' keys, which are not written once it starts, and writes only
 * the estate's VMs. */
struct side {
    struct load L;
    sqlite3 *h;    /* owned: a private read-only connection, in a read transaction */
    pthread_t thread;
    int started;   /* thread runs, and must be joined */
    int r;         /* the thread's result */
    double cpu;    /* the thread's CPU time, s */
    /* The calling thread's log context (util/log.c keeps it per thread), borrowed: the
     * caller's lines and the thread's name the same vCenter and check. */
    const char *log_vcenter, *log_check;
};

/* Loads the side tables on S->h; the result goes to S->r. */
static void *side_run(void *arg)
{
    struct side *S = arg;
    struct vsl_watch w;
    double wall;

    vsl_watch_start(&w);
    log_context_vcenter(S->log_vcenter);
    log_context_check(S->log_check);
#ifdef VSL_TEST_HOOKS
    db_test_load_side_log_vcenter = log_get_context_vcenter();
#endif
    S->r = 0;
    for (size_t i = 0; i < NTABLES && S->r == 0; i++)
        if (tables[i].side)
            S->r = load_table(&S->L, S->h, &tables[i]);
    vsl_watch_read(&w, &wall, &S->cpu);
    log_context_vcenter(NULL);
    log_context_check(NULL);
    return NULL;
}

/* Ends a private connection's read transaction and closes it; NULL is a no-op. */
static void private_close(sqlite3 *p)
{
    if (p) {
        sqlite3_exec(p, "COMMIT", NULL, NULL, NULL);
        sqlite3_close(p);
    }
}

/* Frees what side_start() made (after side_join()); the side estate's arena is est_free'd
 * unless its owner adopted it (then S->L.mem is NULL). */
static void side_free(struct side *S)
{
    private_close(S->h);
    est_free(S->L.mem);
    vsl_keymap_free(&S->L.vms);
    free(S->L.strings);
    free(S->L.runs);
    vsl_buf_free(&S->L.rows);
    vsl_buf_free(&S->L.key);
    vsl_buf_free(&S->L.row_key);
    *S = (struct side){0};
}

/* A private read-only connection to the file of h (*out, owned by the caller: COMMIT and
 * close), in a read transaction that must see the snapshot h's transaction reads, whose stamp
 * is main_stamp (poll stamp and last success). Private: no other thread uses it, so it is
 * opened without SQLite's per-call mutex, which on the shared connection was about 0.2 s of
 * the load's CPU at 100,000 VMs. Any error means no connection, and the caller reads on h: an
 * in-memory database (tests) has no file to open, and a poll that committed since h's
 * transaction began would hand it another snapshot. The caller opens one only on a file in WAL
 * mode (db->wal), where a reader never waits for a writer; any SQLITE_BUSY all the same is an
 * error at once (no busy timeout), and the load goes on without this connection. */
static int private_conn(sqlite3 *h, const char *vcenter, const uint64_t main_stamp[2],
                        sqlite3 **out)
{
    const char *path = sqlite3_db_filename(h, "main");
    sqlite3 *p = NULL;
    uint64_t stamp = 0;
    int64_t polled = 0;
    int rc, r;

    *out = NULL;
    if (!path || !*path)
        return -ENOENT;
#ifdef VSL_TEST_HOOKS
    if (db_test_load_one_thread)
        return -ENOENT;
    if (db_test_load_begun)
        db_test_load_begun(db_test_load_begun_ctx, ++test_load_calls);
    db_test_load_private++;
#endif
    /* NOMUTEX: no other thread ever uses this connection, so SQLite's locks are pure cost. */
    rc = sqlite3_open_v2(path, &p, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc == SQLITE_OK)
        rc = db_add_functions(p);
    if (rc != SQLITE_OK) {
        r = db_fail(p, rc, path);
        goto fail;
    }
    sqlite3_extended_result_codes(p, 1);
    /* Not DB_BUSY_MS: in rollback-journal mode a committing writer holding PENDING waits for
     * the shared connection's SHARED lock while this one waits on the writer, both for the
     * whole timeout, and the poll's COMMIT fails. db->wal keeps that from happening; should
     * SQLite be busy anyway (a WAL being recovered), one thread on the shared connection
     * costs less than any wait. */
    sqlite3_busy_timeout(p, 0);
    /* Each table is read once, in key order: a page cache holds nothing read twice but the
     * few interior pages, and the default 2 MB of it was that much more RSS. */
    r = db_exec(p, "PRAGMA cache_size = -256");
    /* The read transaction begins at the first read: the stamp's. */
    if (r == 0)
        r = db_exec(p, "BEGIN");
    if (r == 0)
        r = snapshots_stamp(p, &stamp);
    if (r == 0)
        r = last_success(p, vcenter, &polled);
    if (r == 0 && (stamp != main_stamp[0] || (uint64_t)polled != main_stamp[1])) {
        log_debug("db: a poll committed while the estate's load began: read on one connection");
        r = -EAGAIN;
    }
    if (r < 0)
        goto fail;
    *out = p;
    return 0;

fail:
    private_close(p);
    return r;
}

/* Starts the second thread over a private connection (private_conn()) at the snapshot of h's
 * transaction. 0 when it started; any error means no thread, and the caller loads the side
 * tables itself. */
static int side_start(struct side *S, struct load *L, sqlite3 *h, const uint64_t main_stamp[2])
{
    int rc, r;

    *S = (struct side){0};
    r = private_conn(h, L->e->vcenter, main_stamp, &S->h);
    if (r < 0)
        return r;
    S->L.e = L->e;
    S->log_vcenter = log_get_context_vcenter();
    S->log_check = log_get_context_check();
    S->L.mem = est_new(L->e->vcenter);
    S->L.strings = calloc(LOAD_STRINGS, sizeof(*S->L.strings));
    S->L.runs = calloc(LOAD_RUNS, sizeof(*S->L.runs));
    /* Sorted before the thread starts and never written after: read by both threads. */
    S->L.hosts = L->hosts;
    S->L.datastores = L->datastores;
    S->L.ds_by_name = L->ds_by_name;
    vsl_buf_init(&S->L.rows, MAX_ROWS);
    vsl_buf_init(&S->L.key, MAX_KEY);
    vsl_buf_init(&S->L.row_key, MAX_KEY);
    if (!S->L.mem) {
        r = -ENOMEM;
        goto fail;
    }
    rc = pthread_create(&S->thread, NULL, side_run, S);
    if (rc != 0) {
        r = -rc;
        goto fail;
    }
    S->started = 1;
    return 0;

fail:
    /* Borrowed from L: not side_free()'s to free. */
    S->L.hosts = S->L.datastores = S->L.ds_by_name = (struct vsl_keymap){0};
    side_free(S);
    return r;
}

/* Waits for the second thread: its result and CPU time (*cpu); its arena goes to the estate
 * either way (est_free() of a failed load frees it). */
static int side_join(struct side *S, double *cpu)
{
    int r;

    if (!S->started)
        return 0;
    pthread_join(S->thread, NULL);
    S->started = 0;
    r = S->r;
    *cpu = S->cpu;
    est_adopt(S->L.e, S->L.mem);
    S->L.mem = NULL;
    S->L.hosts = S->L.datastores = S->L.ds_by_name = (struct vsl_keymap){0};
    return r;
}

int db_estate_load(struct db *db, const char *vcenter, struct estate **out)
{
    struct load L = {0};
    struct side S = {0};
    struct vsl_watch w;
    uint64_t stamp[2] = {0, 0};
    double side_cpu = 0;
    size_t i;
    int r, in_tx = 0, threaded = 0;
    /* What this thread reads through: a private connection at db->h's snapshot, or db->h. */
    sqlite3 *own = NULL, *h = db->h;

    assert(db && vcenter && out);
    assert(!db->in_snapshot);
    *out = NULL;
    vsl_watch_start(&w);
    vsl_buf_init(&L.rows, MAX_ROWS);
    vsl_buf_init(&L.key, MAX_KEY);
    vsl_buf_init(&L.row_key, MAX_KEY);
    L.e = est_new(vcenter);
    L.mem = L.e;
    L.strings = calloc(LOAD_STRINGS, sizeof(*L.strings));
    L.runs = calloc(LOAD_RUNS, sizeof(*L.runs));
    if (!L.e) {
        r = -ENOMEM; /* out: frees L.strings too */
        goto out;
    }
    /* One read transaction: with WAL it pins one committed snapshot, so a poll committing
     * while we read cannot hand the checks half of the old one and half of the new one. */
    r = db_exec(db->h, "BEGIN");
    if (r < 0)
        goto out;
    in_tx = 1;
    r = last_success(db->h, vcenter, &L.e->polled_ms);
    if (r == 0)
        r = snapshots_stamp(db->h, &stamp[0]);
    stamp[1] = (uint64_t)L.e->polled_ms;
#ifdef VSL_TEST_HOOKS
    db_test_load_private = 0;
    test_load_calls = 0;
#endif
    /* Only in WAL mode: in rollback-journal mode a reader's SHARED lock and a committing
     * writer's PENDING one wait on each other (private_conn()). */
    if (r == 0 && db->wal && private_conn(db->h, vcenter, stamp, &own) == 0)
        h = own;
    for (i = 0; i < NTABLES && r == 0; i++) {
        if (!tables[i].side || !threaded)
            r = load_table(&L, h, &tables[i]);
        /* The side tables refer only to the hosts and datastores, which are loaded (and their
         * keys sorted) by now: the second thread loads them while this one goes on. */
        if (r == 0 && own && tables[i].t == T_HOST && tables[i].nkey == 0)
            threaded = side_start(&S, &L, db->h, stamp) == 0;
    }
    if (r == 0)
        r = load_pools(&L, h);
    if (r == 0)
        r = load_ports(&L, h);
    if (r == 0)
        r = db_each(h, nas_sql, "reading the NAS servers", nas_row, &L, DB_TEXT(L.e->vcenter));
    if (r == 0)
        r = load_history(&L, h);
    /* Joined whatever happened here: the thread writes into L.e until it is done. */
    if (threaded) {
        int rs = side_join(&S, &side_cpu);
        if (r == 0)
            r = rs;
    }
    if (r == 0 && est_failed(L.e))
        r = -ENOMEM;
#ifdef VSL_TEST_HOOKS
    db_test_load_threaded = threaded;
#endif
    if (r == 0) {
        est_trim(L.e);
        *out = L.e;
        L.e = NULL;
    }
out:
    if (in_tx)
        sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL);
    if (r == 0) {
        double wall, cpu;
        vsl_watch_read(&w, &wall, &cpu);
        log_debug("db: loaded the estate of vCenter %s (%zu VMs, %zu hosts, %zu datastores) in "
                  "%.3f s, CPU %.3f s (%.3f s of it the VMs' on a second thread)", vcenter,
                  (*out)->n_vms, (*out)->n_hosts, (*out)->n_datastores, wall, cpu + side_cpu,
                  side_cpu);
    }
    side_free(&S);
    private_close(own);
    est_free(L.e);
    vsl_keymap_free(&L.pods);
    vsl_keymap_free(&L.datastores);
    vsl_keymap_free(&L.ds_by_name);
    vsl_keymap_free(&L.dvs_by_uuid);
    vsl_keymap_free(&L.hosts);
    vsl_keymap_free(&L.vms);
    vsl_keymap_free(&L.alarms);
    free(L.strings);
    free(L.runs);
    vsl_buf_free(&L.rows);
    vsl_buf_free(&L.key);
    vsl_buf_free(&L.row_key);
    /* What the second thread allocated with malloc (its connection's cache, the VMs' keys,
     * its rows) was freed to that thread's malloc arena, which this thread's mallocs do not
     * reuse: given back, or the checks' results take fresh pages beside it (2.3 MB of peak
     * RSS in `check --offline` at 100,000 VMs). Only where asked (db_set_load_trim(): the
     * one-shot `vslint check`): malloc_trim() locks and walks every arena, a stall for the
     * daemon's API threads allocating meanwhile, whose RSS is not one run's peak. */
    if (threaded && db->load_trim)
        vsl_heap_trim();
    return r;
}

/* The names db_vcenter_names() gathers; v[0..len) owned. */
struct names {
    char **v;
    size_t len, cap;
};

static int add_name(sqlite3_stmt *st, void *ctx)
{
    struct names *a = ctx;
    int r = vsl_grow(&a->v, &a->cap, a->len, sizeof(*a->v), 8);

    if (r == 0 && !(a->v[a->len] = strdup(text(st, 0) ? text(st, 0) : "")))
        r = -ENOMEM;
    if (r == 0)
        a->len++;
    return r;
}

int db_vcenter_names(struct db *db, char ***names, size_t *n)
{
    struct names a = {0};
    int r;

    assert(db && names && n);
    r = db_each_args(db->h,
                     "SELECT name FROM vcenters WHERE last_success_ms IS NOT NULL"
                     " AND kind IS NULL"
                     " ORDER BY name",
                     "listing vCenters", add_name, &a, NULL, 0);
    if (r < 0) {
        while (a.len > 0)
            free(a.v[--a.len]);
        free(a.v);
        a.v = NULL;
    }
    *names = a.v;
    *n = a.len;
    return r;
}
