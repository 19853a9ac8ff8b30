/* The stored inventory a page at a time for the HTTP API. SQLite builds each row's JSON
 * (json_object, from a view of the table's column list), so a page costs one statement and
 * memory in proportion to the page, not to the estate. */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/pages.h"
#include "db/db-private.h"
#include "util/err.h"
#include "util/log.h"

/* What a page's rows hold: a view (db_view) of the table, read as x, with its extras. */
struct page_view {
    int t;
    const char *json, *join;
    const struct db_extra *extras;
    const char *key; /* the column after name in the sort key: NULL for moref */
};

/* The runway the last evaluation recorded (db/capacity.h); until one did, every figure unknown.
 * The join of datastores and array pools, both ways, as the checks see it (DB_POOL_PAIRS:
 * through a LUN, an NFS file system or a VVol datastore). */
static const struct db_extra ds_extras[] = {
    {"storage_pod", "p.name", DB_TEXT},
    {"runway",
     "json(coalesce((SELECT r.runway_json FROM runway r WHERE r.vcenter = x.vcenter"
     " AND r.moref = x.moref), '" DB_RUNWAY_NONE "'))",
     DB_RAW},
    {"pools",
     "json((SELECT json_group_array(json_object('array', q.vcenter, 'id', q.id, 'name', q.name,"
     " 'size_total', q.size_total, 'size_free', q.size_free)) FROM (SELECT DISTINCT p.vcenter,"
     " p.id, p.name, p.size_total, p.size_free FROM ("
     DB_POOL_PAIRS("e.vcenter = x.vcenter AND e.datastore = x.moref",
                   "d.vcenter = x.vcenter AND d.moref = x.moref", "1",
                   "d.vcenter = x.vcenter AND d.moref = x.moref")
     ") y JOIN array_pools p ON p.vcenter = y.array AND p.id = y.pool"
     " JOIN vcenters a ON a.name = p.vcenter AND a.kind IS NOT NULL"
     " ORDER BY p.vcenter, p.id) q))",
     DB_RAW},
    {NULL, NULL, 0}};
static const struct db_extra pool_extras[] = {
    {"datastores",
     "json((SELECT json_group_array(json_object('vcenter', q.vcenter, 'moref', q.moref, 'name',"
     " q.name)) FROM (SELECT DISTINCT d.vcenter, d.moref, d.name FROM ("
     DB_POOL_PAIRS("l.vcenter = x.vcenter AND l.pool = x.id", "1",
                   "fs.vcenter = x.vcenter AND fs.pool = x.id",
                   "s.vcenter = x.vcenter AND s.pool = x.id")
     ") y JOIN datastores d ON d.vcenter = y.dsvc AND d.moref = y.ds"
     " ORDER BY d.vcenter, d.name, d.moref) q))",
     DB_RAW},
    {"lun_count",
     "(SELECT count(*) FROM array_luns l WHERE l.vcenter = x.vcenter AND l.pool = x.id)", DB_INT},
    {"thin_lun_count",
     "(SELECT count(*) FROM array_luns l WHERE l.vcenter = x.vcenter AND l.pool = x.id AND"
     " l.thin)",
     DB_INT},
    {NULL, NULL, 0}};
static const struct db_extra host_extras[] = {
    {"vnic_count", "(SELECT count(*) FROM vnics n WHERE n.vcenter = x.vcenter AND n.host = x.moref)",
     DB_INT},
    {"iscsi_hba_count",
     "(SELECT count(*) FROM iscsi_hbas i WHERE i.vcenter = x.vcenter AND i.host = x.moref)", DB_INT},
    {"lun_count", "(SELECT count(*) FROM luns l WHERE l.vcenter = x.vcenter AND l.host = x.moref)",
     DB_INT},
    {NULL, NULL, 0}};
/* disks: the array vdisk_view makes, filled in by page_sql. */
static const struct db_extra vm_extras[] = {
    {"snapshot_count",
     "(SELECT count(*) FROM snapshots s WHERE s.vcenter = x.vcenter AND s.vm = x.moref)", DB_INT},
    {"disks", NULL, DB_RAW},
    {NULL, NULL, 0}};

/* Flat objects: a page shows what a list needs, not every column (see docs/inventory.md). */
static const struct page_view views[] = {
    [DB_PAGE_DATASTORES] = {T_DATASTORE,
                            "vcenter moref name type url capacity free_space uncommitted"
                            " accessible maintenance_mode vmfs_major nas_remote_host parent"
                            " storage_pod vm_count runway pools",
                            " LEFT JOIN storage_pods p ON p.vcenter = x.vcenter AND p.moref = x.parent",
                            ds_extras, NULL},
    [DB_PAGE_HOSTS] = {T_HOST, "vcenter moref name parent connection_state vnic_count"
                               " iscsi_hba_count lun_count", NULL, host_extras, NULL},
    [DB_PAGE_VMS] = {T_VM, "vcenter moref name template power_state hw_version ft_state host"
                           " snapshot_count disks", NULL, vm_extras, NULL},
    [DB_PAGE_POOLS] = {T_ARRAY_POOL, "array=vcenter id name size_total size_free size_used"
                                     " size_subscribed alert_threshold health health_text"
                                     " snap_size_used lun_count thin_lun_count datastores",
                       NULL, pool_extras, "id"},
};
static const struct page_view vdisk_view = {T_VDISK, "key label datastore capacity_bytes format",
                                            NULL, NULL, NULL};

/* json_object('name', expr, ...) of view v's fields, booleans as JSON true and false. */
static int add_json_object(struct vsl_buf *sql, const struct page_view *v, const char *alias)
{
    struct db_field f[DB_MAX_FIELDS];
    const int n = db_view(v->t, alias, v->json, v->extras, NULL, f);
    int r = vsl_buf_addstr(sql, "json_object(");

    for (int i = 0; i < n && r == 0; i++) {
        const char *e = f[i].expr, *sep = i ? ", " : "";
        if (f[i].type == DB_BOOL)
            r = vsl_buf_printf(sql, "%s'%s', CASE WHEN %s IS NULL THEN json('null') WHEN %s THEN"
                                    " json('true') ELSE json('false') END",
                               sep, f[i].name, e, e);
        else
            r = vsl_buf_printf(sql, "%s'%s', %s", sep, f[i].name, e);
    }
    return r == 0 ? vsl_buf_addstr(sql, ")") : r;
}

/* A page is read in two parts, each an index range read of <table>_page (db/columns.h) that
 * stops after ?5 rows: the rest of the cursor's vCenter (part 0: ?2 ?3 ?4 the cursor's
 * vcenter, name, moref), then the vCenters after it (part 1). Compound forms of the two made
 * SQLite sort. filtered: ?1 is the one vCenter asked for. Columns 0-2 are the row's sort key,
 * what its cursor holds; column 3 the row as JSON. */
static int page_sql(struct vsl_buf *sql, enum db_page_kind kind, int filtered, int part)
{
    struct page_view v = views[kind];
    struct db_extra extras[4];
    struct vsl_buf disks;
    int i, r;

    /* A VM's disks: an array of vdisk_view's objects, in key order. */
    vsl_buf_init(&disks, 2048);
    r = vsl_buf_addstr(&disks, "(SELECT json_group_array(");
    if (r == 0)
        r = add_json_object(&disks, &vdisk_view, "k");
    if (r == 0)
        r = vsl_buf_addstr(&disks, ") FROM (SELECT * FROM vdisks y WHERE y.vcenter = x.vcenter"
                                   " AND y.vm = x.moref ORDER BY y.key) k)");
    for (i = 0; v.extras && v.extras[i].name && i < 3; i++) {
        extras[i] = v.extras[i];
        if (extras[i].type == DB_RAW && !extras[i].expr)
            extras[i].expr = disks.data;
    }
    extras[i] = (struct db_extra){NULL, NULL, 0};
    v.extras = extras;
    const char *key = v.key ? v.key : "moref";
    if (r == 0)
        r = vsl_buf_printf(sql, "SELECT x.vcenter, coalesce(x.name, ''), x.%s, ", key);
    if (r == 0)
        r = add_json_object(sql, &v, "x");
    if (r == 0)
        r = vsl_buf_printf(sql, " FROM %s x%s WHERE %s%s ORDER BY x.vcenter, coalesce(x.name, ''),"
                                " x.%s LIMIT ?5",
                           db_table_name(v.t), v.join ? v.join : "",
                           part == 0 ? (v.key ? "x.vcenter = ?2 AND coalesce(x.name, '') >= ?3 AND"
                                                " (coalesce(x.name, '') > ?3 OR x.id > ?4)"
                                              : "x.vcenter = ?2 AND coalesce(x.name, '') >= ?3 AND"
                                                " (coalesce(x.name, '') > ?3 OR x.moref > ?4)")
                                     : "x.vcenter > ?2",
                           filtered ? " AND x.vcenter = ?1" : "", key);
    vsl_buf_free(&disks);
    return r;
}

static const char *const count_sql[] = {
    [DB_PAGE_DATASTORES] = "SELECT count(*) FROM datastores WHERE ?1 IS NULL OR vcenter = ?1",
    [DB_PAGE_HOSTS] = "SELECT count(*) FROM hosts WHERE ?1 IS NULL OR vcenter = ?1",
    [DB_PAGE_VMS] = "SELECT count(*) FROM vms WHERE ?1 IS NULL OR vcenter = ?1",
    [DB_PAGE_POOLS] = "SELECT count(*) FROM array_pools WHERE ?1 IS NULL OR vcenter = ?1",
};

static const int cursor_cols[] = {0, 1, 2};
#define NCURSOR ((int)(sizeof(cursor_cols) / sizeof(cursor_cols[0])))

/* The statement of kind, prepared once per connection; SQLite's result code. */
static int page_stmt(struct db *db, enum db_page_kind kind, int filtered, int part,
                     sqlite3_stmt **out)
{
    sqlite3_stmt **st = &db->page[kind][filtered][part];
    struct vsl_buf sql;
    int rc;

    if (!*st) {
        vsl_buf_init(&sql, 32768); /* the datastores page with its runway and pools is ~9 KiB */
        rc = page_sql(&sql, kind, filtered, part) == 0
                 ? sqlite3_prepare_v3(db->h, sql.data, -1, SQLITE_PREPARE_PERSISTENT, st, NULL)
                 : SQLITE_NOMEM;
        vsl_buf_free(&sql);
        if (rc != SQLITE_OK)
            return rc;
    }
    *out = *st;
    return SQLITE_OK;
}

/* Appends the rows of one part to list; *n counts the rows of the page so far, *more says a
 * row past the limit was seen (a next page exists), *next is the cursor of the limit's row. */
static int page_part(struct db *db, sqlite3_stmt *pst, const struct db_page *p,
                     const struct db_cursor *key, json_t *list, int *n, int *more, char **next)
{
    int rc = db_bind_text(pst, 1, p->vcenter), r = 0;

    for (int i = 0; rc == SQLITE_OK && i < NCURSOR; i++)
        rc = db_bind_text(pst, 2 + i, key ? key->field[i] : "");
    /* One row more than asked for says whether there is a next page. */
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(pst, 5, p->limit > 0 ? (int64_t)(p->limit + 1 - *n) : -1);
    while (rc == SQLITE_OK || rc == SQLITE_ROW) {
        if ((rc = sqlite3_step(pst)) != SQLITE_ROW)
            break;
        if (p->limit > 0 && *n == p->limit) {
            *more = 1; /* the extra row: *next, set from the page's last row, stands */
            break;
        }
        const char *text = (const char *)sqlite3_column_text(pst, 3);
        json_t *row = text ? json_loads(text, 0, NULL) : NULL;
        if (!row) {
            /* A name that is not UTF-8 makes the row unreadable to jansson: leave it out
             * rather than failing the page. */
            log_debug("db: inventory row %s is not valid JSON", sqlite3_column_text(pst, 2));
        } else if (json_array_append_new(list, row) < 0) {
            r = -ENOMEM;
            break;
        }
        (*n)++;
        if (p->limit > 0 && *n == p->limit) {
            *next = db_cursor_encode(pst, cursor_cols, NCURSOR);
            if (!*next) {
                r = -ENOMEM;
                break;
            }
        }
    }
    if (r == 0 && rc != SQLITE_ROW && rc != SQLITE_DONE)
        r = db_fail(db->h, rc, "inventory page");
    sqlite3_reset(pst);
    sqlite3_clear_bindings(pst);
    return r;
}

int db_inventory_page(struct db *db, enum db_page_kind kind, const struct db_page *p,
                          json_t **items, int64_t *total, char **next)
{
    sqlite3_stmt *cst = NULL, *pst = NULL;
    struct db_cursor *key = NULL;
    json_t *list = NULL;
    int rc = SQLITE_OK, r, n = 0, more = 0, in_tx = 0;

    assert(db && p && items && total && next);
    assert(kind >= DB_PAGE_DATASTORES && kind <= DB_PAGE_POOLS);
    *items = NULL;
    *total = 0;
    *next = NULL;
    if (p->limit < 0)
        return -EINVAL;
    r = db_cursor_decode(p->cursor, NCURSOR, &key);
    if (r < 0)
        return r;
    list = json_array();
    if (!list) {
        r = -ENOMEM;
        goto out;
    }
    /* The count and the page read one committed state, even while a poll writes. */
    rc = sqlite3_exec(db->h, "BEGIN", NULL, NULL, NULL);
    if (rc != SQLITE_OK)
        goto fail_db;
    in_tx = 1;
    if (!db->page_count[kind])
        rc = sqlite3_prepare_v3(db->h, count_sql[kind], -1, SQLITE_PREPARE_PERSISTENT,
                                &db->page_count[kind], NULL);
    cst = db->page_count[kind];
    if (rc == SQLITE_OK)
        rc = db_bind_text(cst, 1, p->vcenter);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(cst);
    if (rc != SQLITE_ROW)
        goto fail_db;
    *total = sqlite3_column_int64(cst, 0);
    /* Without a cursor, part 0 (the vCenter "") is empty and part 1 starts at the first. */
    for (int part = 0; part < 2 && !more; part++) {
        rc = page_stmt(db, kind, p->vcenter != NULL, part, &pst);
        if (rc != SQLITE_OK)
            goto fail_db;
        r = page_part(db, pst, p, key, list, &n, &more, next);
        if (r < 0)
            goto out;
    }
    if (!more) {
        free(*next); /* the rows ended exactly at the limit */
        *next = NULL;
    }
    *items = list;
    list = NULL;
    r = 0;
    goto out;

fail_db:
    r = db_fail(db->h, rc, "inventory page");
out:
    if (r < 0) {
        free(*next);
        *next = NULL;
        *total = 0;
    }
    if (cst) {
        sqlite3_reset(cst);
        sqlite3_clear_bindings(cst);
    }
    if (in_tx)
        sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL);
    free(key);
    json_decref(list);
    return r;
}

int db_vcenter_state(struct db *db, const char *vcenter, struct db_vcenter_state *out)
{
    static const char sql[] =
        "SELECT v.last_success_ms, p.started_ms, p.finished_ms, p.ok, p.error FROM vcenters v"
        " LEFT JOIN polls p ON p.id = v.last_poll_id WHERE v.name = ?1";
    sqlite3_stmt *st = NULL;
    int r;

    assert(db && vcenter && out);
    memset(out, 0, sizeof(*out));
    r = db_row(db->h, sql, &st, "reading a vCenter's polls", DB_TEXT(vcenter));
    if (r == 0) {
        const unsigned char *err = sqlite3_column_text(st, 4);
        out->last_success_ms = sqlite3_column_int64(st, 0);
        out->last_started_ms = sqlite3_column_int64(st, 1);
        out->last_finished_ms = sqlite3_column_int64(st, 2);
        out->last_ok = sqlite3_column_int(st, 3);
        snprintf(out->error, sizeof(out->error), "%s", err ? (const char *)err : "");
    }
    sqlite3_finalize(st);
    /* A vCenter never polled has no state yet: all zero. */
    return r == -VSL_ENOTFOUND ? 0 : r;
}

int db_object_counts(struct db *db, const char *vcenter, int64_t counts[3])
{
    static const char sql[] =
        "SELECT (SELECT count(*) FROM datastores WHERE ?1 IS NULL OR vcenter = ?1),"
        " (SELECT count(*) FROM hosts WHERE ?1 IS NULL OR vcenter = ?1),"
        " (SELECT count(*) FROM vms WHERE ?1 IS NULL OR vcenter = ?1)";
    sqlite3_stmt *st = NULL;
    int r;

    assert(db && counts);
    r = db_row(db->h, sql, &st, "counting objects", DB_TEXT(vcenter));
    for (int i = 0; r == 0 && i < 3; i++)
        counts[i] = sqlite3_column_int64(st, i);
    sqlite3_finalize(st);
    return r == -VSL_ENOTFOUND ? 0 : r;
}

/* The state of db_gaps_grouped()'s walk over the rows, one vCenter at a time. */
struct gap_walk {
    json_t *out;   /* vCenter name -> array of groups; owned */
    json_t *list;  /* the current vCenter's groups; borrowed from out */
    json_t *index; /* the current vCenter's groups by gap_key(); owned */
    char *vc;      /* the current vCenter's name; owned */
};


/* The privilege a group names, or NULL. */
static const char *group_privilege(const json_t *g)
{
    return json_string_value(json_object_get(g, "privilege"));
}

/* Groups in (what, privilege or error) order. */
static int group_cmp(const void *a, const void *b)
{
    const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
    int c = strcmp(json_string_value(json_object_get(x, "what")),
                   json_string_value(json_object_get(y, "what")));
    const char *kx = group_privilege(x), *ky = group_privilege(y);
    if (c)
        return c;
    kx = kx ? kx : json_string_value(json_object_get(x, "error"));
    ky = ky ? ky : json_string_value(json_object_get(y, "error"));
    return strcmp(kx, ky);
}

/* Refusals first, then the errors with the most hosts (the ones kept when there are too many). */
static int group_weight_cmp(const void *a, const void *b)
{
    const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
    int rx = group_privilege(x) != NULL, ry = group_privilege(y) != NULL;
    json_int_t hx = json_integer_value(json_object_get(x, "hosts"));
    json_int_t hy = json_integer_value(json_object_get(y, "hosts"));
    if (rx != ry)
        return ry - rx;
    if (hx != hy)
        return hx > hy ? -1 : 1;
    return group_cmp(a, b);
}

/* Adds group g's hosts (count and names up to DB_GAP_NAMES) to group to. */
static int group_merge(json_t *to, const json_t *g)
{
    json_t *n = json_object_get(to, "hosts"), *names = json_object_get(to, "host_names");
    const json_t *more = json_object_get(g, "host_names");

    json_integer_set(n, json_integer_value(n) + json_integer_value(json_object_get(g, "hosts")));
    for (size_t i = 0; i < json_array_size(more) && json_array_size(names) < DB_GAP_NAMES; i++)
        if (json_array_append(names, json_array_get(more, i)))
            return -ENOMEM;
    return 0;
}

/* Ends the current vCenter's walk: its groups in (what, privilege or error) order, at most
 * DB_GAP_GROUPS of those without a privilege (the ones with the most hosts) and the rest as
 * one "other" group, so that a message naming each host does not make one group per host. */
static int gap_finish(struct gap_walk *w)
{
    size_t n = json_array_size(w->list), kept = 0, errors = 0;
    json_t **g = NULL, *other = NULL;
    int r = 0;

    json_decref(w->index);
    w->index = NULL;
    free(w->vc);
    w->vc = NULL;
    if (n == 0)
        return 0;
    if (!(g = calloc(n, sizeof(*g))))
        return -ENOMEM;
    for (size_t i = 0; i < n; i++)
        g[i] = json_incref(json_array_get(w->list, i));
    qsort(g, n, sizeof(*g), group_weight_cmp);
    for (kept = 0; kept < n; kept++)
        if (!group_privilege(g[kept]) && ++errors > DB_GAP_GROUPS)
            break;
    if (kept < n) {
        char text[96];
        snprintf(text, sizeof(text), "%zu other errors, each on no more hosts than those listed",
                 n - kept);
        other = json_pack("{s:s,s:s,s:n,s:i,s:[]}", "what", "other", "error", text, "privilege",
                          "hosts", 0, "host_names");
        for (size_t i = kept; r == 0 && i < n; i++)
            r = other ? group_merge(other, g[i]) : -ENOMEM;
    }
    qsort(g, kept, sizeof(*g), group_cmp);
    json_array_clear(w->list);
    for (size_t i = 0; r == 0 && i < kept; i++)
        r = json_array_append(w->list, g[i]) ? -ENOMEM : 0;
    if (r == 0 && other)
        r = json_array_append(w->list, other) ? -ENOMEM : 0;
    json_decref(other);
    for (size_t i = 0; i < n; i++)
        json_decref(g[i]);
    free(g);
    return r;
}

/* Adds the current row (vcenter, what, error, host name or NULL for the vCenter's own) to
 * its group (a db_row_fn): a refusal's by what and privilege (the first error of its hosts the
 * group's sample), any other's by what and error. Text that is not UTF-8 (an error cut in the
 * middle of a character at 1024 bytes) is mended, not refused. */
static int gap_row(sqlite3_stmt *st, void *ctx)
{
    struct gap_walk *w = ctx;
    const char *vc = (const char *)sqlite3_column_text(st, 0);
    const char *what = (const char *)sqlite3_column_text(st, 1);
    const char *error = (const char *)sqlite3_column_text(st, 2);
    const char *host = (const char *)sqlite3_column_text(st, 3);
    char priv[256], *key = NULL; /* key owned */
    json_t *group;
    int r;

    vc = vc ? vc : "";
    what = what ? what : "";
    error = error ? error : "";
    if (!w->vc || strcmp(w->vc, vc)) {
        if ((r = gap_finish(w)) < 0)
            return r;
        w->list = json_array();
        w->index = json_object();
        w->vc = strdup(vc);
        /* The vCenter's name is a key of the answer: mended like the rest. */
        json_t *name = db_json_utf8(vc);
        r = w->list && w->index && w->vc && name
                ? json_object_set_nocheck(w->out, json_string_value(name), w->list)
                : -1;
        json_decref(name);
        json_decref(w->list); /* out holds it */
        if (r)
            return -ENOMEM;
    }
    if (!vsl_error_privileges(error, priv, sizeof(priv)))
        priv[0] = '\0';
    /* what, a separator no read's name holds, then 'p' and the privilege or 'e' and the error. */
    const char *k = priv[0] ? priv : error;
    size_t klen = strlen(what) + strlen(k) + 3;
    if (!(key = malloc(klen)))
        return -ENOMEM;
    snprintf(key, klen, "%s\x1f%c%s", what, priv[0] ? 'p' : 'e', k);
    group = json_object_get(w->index, key);
    if (!group) {
        group = json_pack("{s:o,s:o,s:o,s:i,s:[]}", "what", db_json_utf8(what), "error",
                          db_json_utf8(error), "privilege",
                          priv[0] ? json_string(priv) : json_null(), "hosts", 0, "host_names");
        r = !group || json_object_set_nocheck(w->index, key, group) ||
            json_array_append_new(w->list, group);
        if (r) {
            free(key);
            return -ENOMEM;
        }
    }
    free(key);
    if (!host)
        return 0;
    json_t *n = json_object_get(group, "hosts");
    json_t *names = json_object_get(group, "host_names");
    json_integer_set(n, json_integer_value(n) + 1);
    if (json_array_size(names) < DB_GAP_NAMES && json_array_append_new(names, db_json_utf8(host)))
        return -ENOMEM;
    return 0;
}

int db_gaps_grouped(struct db *db, const char *vcenter, json_t **out)
{
    /* A host's gap names the host (its moref when the host row is missing); a vCenter's own
     * gap (object '') names none. In host order within a kind, so that each group's first
     * DB_GAP_NAMES names are the first by name. */
    static const char sql[] =
        "SELECT g.vcenter, g.what, g.error,"
        " CASE WHEN g.object = '' THEN NULL ELSE coalesce(h.name, g.object) END AS host"
        " FROM gaps g LEFT JOIN hosts h ON h.vcenter = g.vcenter AND h.moref = g.object"
        " WHERE ?1 IS NULL OR g.vcenter = ?1"
        " ORDER BY g.vcenter, g.what, host IS NOT NULL, host, g.error";
    struct gap_walk w = {.out = json_object()};
    sqlite3_stmt *st = NULL;
    int r;

    assert(db && out);
    *out = NULL;
    if (!w.out)
        return -ENOMEM;
    r = db_stmt(db, sql, &st);
    if (r == 0) {
        int rc = db_bind(st, DB_TEXT(vcenter));
        r = rc == SQLITE_OK ? db_each_row(st, "reading the gaps", gap_row, &w)
                            : db_fail(db->h, rc, "reading the gaps");
    }
    db_stmt_done(db, st);
    if (r == 0)
        r = gap_finish(&w);
    json_decref(w.index);
    free(w.vc);
    if (r == 0)
        *out = w.out;
    else
        json_decref(w.out);
    return r;
}

/* FNV-1a of a row's columns into *ctx (a db_row_fn), each column's bytes and a separator. */
static int gap_hash_row(sqlite3_stmt *st, void *ctx)
{
    uint64_t *h = ctx;
    for (int i = 0; i < sqlite3_column_count(st); i++) {
        const unsigned char *p = sqlite3_column_text(st, i);
        int n = sqlite3_column_bytes(st, i);
        for (int k = 0; k < n; k++)
            *h = (*h ^ p[k]) * 0x100000001b3ull;
        *h = (*h ^ (p ? 0x1f : 0x1e)) * 0x100000001b3ull;
    }
    return 0;
}

int db_gaps_signature(struct db *db, const char *vcenter, uint64_t *sig)
{
    /* In the primary key's order: no sort, the same rows give the same hash. The host's name
     * is in it as db_gaps_grouped() shows it. */
    static const char sql[] =
        "SELECT g.vcenter, g.object, g.what, g.error, h.name"
        " FROM gaps g LEFT JOIN hosts h ON h.vcenter = g.vcenter AND h.moref = g.object"
        " WHERE ?1 IS NULL OR g.vcenter = ?1 ORDER BY g.vcenter, g.object, g.what";
    sqlite3_stmt *st = NULL;
    uint64_t h = 0xcbf29ce484222325ull;
    int r;

    assert(db && sig);
    r = db_stmt(db, sql, &st);
    if (r == 0) {
        int rc = db_bind(st, DB_TEXT(vcenter));
        r = rc == SQLITE_OK ? db_each_row(st, "reading the gaps", gap_hash_row, &h)
                            : db_fail(db->h, rc, "reading the gaps");
    }
    db_stmt_done(db, st);
    *sig = h;
    return r;
}

/* The runway's days to a threshold when the last estimate has a whole number of them (null
 * and a reason otherwise: left out, as the metrics did when they read the page's JSON). */
#define RUNWAY_DAYS(key)                                                                           \
    "(SELECT CASE WHEN json_type(r.runway_json, '$." key "') = 'integer'"                          \
    " THEN json_extract(r.runway_json, '$." key "') END FROM runway r"                             \
    " WHERE r.vcenter = d.vcenter AND r.moref = d.moref)"

int db_datastore_gauges(struct db *db, int (*fn)(const struct db_ds_gauges *g, void *ctx),
                        void *ctx)
{
    static const char sql[] =
        "SELECT d.vcenter, coalesce(d.name, ''), d.moref, d.capacity, d.free_space, "
        RUNWAY_DAYS("days_to_warning") ", " RUNWAY_DAYS("days_to_critical")
        " FROM datastores d ORDER BY d.vcenter, coalesce(d.name, ''), d.moref";
    sqlite3_stmt *st = NULL;
    int r = db_stmt(db, sql, &st), rc = SQLITE_OK;

    if (r < 0)
        return r;
    while (r == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct db_ds_gauges g = {
            .vcenter = (const char *)sqlite3_column_text(st, 0),
            .name = (const char *)sqlite3_column_text(st, 1),
            .moref = (const char *)sqlite3_column_text(st, 2),
            .has_capacity = sqlite3_column_type(st, 3) == SQLITE_INTEGER,
            .has_free = sqlite3_column_type(st, 4) == SQLITE_INTEGER,
            .has_warning = sqlite3_column_type(st, 5) == SQLITE_INTEGER,
            .has_critical = sqlite3_column_type(st, 6) == SQLITE_INTEGER,
            .capacity = sqlite3_column_int64(st, 3),
            .free_space = sqlite3_column_int64(st, 4),
            .days_to_warning = sqlite3_column_int64(st, 5),
            .days_to_critical = sqlite3_column_int64(st, 6),
        };
        r = fn(&g, ctx);
    }
    if (r == 0 && rc != SQLITE_DONE)
        r = db_fail(db->h, rc, "reading datastores' figures");
    db_stmt_done(db, st);
    return r;
}
