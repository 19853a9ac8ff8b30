/* The stored inventory a page at a time for the HTTP API. SQLite builds each row's JSON
 * (json_object) and its keyset cursor, so a page costs one statement and memory in proportion
 * to the page, not to the estate. */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/pages.h"
#include "db/db-private.h"
#include "util/err.h"
#include "util/log.h"

#define MAX_CURSOR 4096 /* hex digits; a real cursor is well under a few hundred */

/* ?1 vcenter or NULL; ?2 ?3 ?4 the cursor's (vcenter, name, moref) or NULL; ?5 limit (-1 all).
 * Column 0 is the row's cursor: hex of a JSON array, opaque and URL-safe as it is. */
#define KEYSET(t)                                                                                \
    " WHERE (?1 IS NULL OR " t ".vcenter = ?1) AND (?2 IS NULL OR (" t ".vcenter, coalesce(" t  \
    ".name, ''), " t ".moref) > (?2, ?3, ?4)) ORDER BY " t ".vcenter, coalesce(" t ".name, ''), " \
    t ".moref LIMIT ?5"
#define CURSOR(t) "SELECT hex(json_array(" t ".vcenter, coalesce(" t ".name, ''), " t ".moref)), "
#define JBOOL(c)  "CASE WHEN " c " IS NULL THEN json('null') WHEN " c " THEN json('true') ELSE json('false') END"

static const char *const page_sql[] = {
    [DB_PAGE_DATASTORES] =
        CURSOR("d") "json_object('vcenter', d.vcenter, 'moref', d.moref, 'name', d.name,"
        " 'type', d.type, 'url', d.url, 'capacity', d.capacity, 'free_space', d.free_space,"
        " 'uncommitted', d.uncommitted, 'accessible', " JBOOL("d.accessible") ","
        " 'maintenance_mode', d.maintenance_mode, 'vmfs_major', d.vmfs_major,"
        " 'nas_remote_host', d.nas_remote_host, 'parent', d.parent, 'storage_pod', p.name,"
        " 'vm_count', d.vm_count) FROM datastores d LEFT JOIN storage_pods p"
        " ON p.vcenter = d.vcenter AND p.moref = d.parent" KEYSET("d"),
    [DB_PAGE_HOSTS] =
        CURSOR("h") "json_object('vcenter', h.vcenter, 'moref', h.moref, 'name', h.name,"
        " 'parent', h.parent, 'connection_state', h.connection_state,"
        " 'vnic_count', (SELECT count(*) FROM vnics n WHERE n.vcenter = h.vcenter"
        "   AND n.host = h.moref),"
        " 'iscsi_hba_count', (SELECT count(*) FROM iscsi_hbas i WHERE i.vcenter = h.vcenter"
        "   AND i.host = h.moref),"
        " 'lun_count', (SELECT count(*) FROM luns l WHERE l.vcenter = h.vcenter"
        "   AND l.host = h.moref)) FROM hosts h" KEYSET("h"),
    [DB_PAGE_VMS] =
        CURSOR("v") "json_object('vcenter', v.vcenter, 'moref', v.moref, 'name', v.name,"
        " 'template', " JBOOL("v.template") ", 'power_state', v.power_state,"
        " 'hw_version', v.hw_version, 'ft_state', v.ft_state, 'host', v.host,"
        " 'snapshot_count', (SELECT count(*) FROM snapshots s WHERE s.vcenter = v.vcenter"
        "   AND s.vm = v.moref),"
        " 'disks', (SELECT json_group_array(json_object('key', k.key, 'label', k.label,"
        "   'datastore', k.datastore, 'capacity_bytes', k.capacity_bytes, 'format', k.format))"
        "   FROM (SELECT * FROM vdisks x WHERE x.vcenter = v.vcenter AND x.vm = v.moref"
        "   ORDER BY x.key) k)) FROM vms v" KEYSET("v"),
};

static const char *const count_sql[] = {
    [DB_PAGE_DATASTORES] = "SELECT count(*) FROM datastores WHERE ?1 IS NULL OR vcenter = ?1",
    [DB_PAGE_HOSTS] = "SELECT count(*) FROM hosts WHERE ?1 IS NULL OR vcenter = ?1",
    [DB_PAGE_VMS] = "SELECT count(*) FROM vms WHERE ?1 IS NULL OR vcenter = ?1",
};

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* A cursor comes from a URL, so from anyone: it must be hex (as SQLite's hex() writes it) of
 * a JSON array of three strings. *key is a new reference. */
static int cursor_decode(const char *s, json_t **key)
{
    size_t i, n = strlen(s);
    char *raw;
    json_t *k;

    *key = NULL;
    if (n == 0 || n % 2 || n > MAX_CURSOR)
        return -EINVAL;
    raw = malloc(n / 2 + 1);
    if (!raw)
        return -ENOMEM;
    for (i = 0; i < n / 2; i++) {
        int hi = hexval(s[2 * i]), lo = hexval(s[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            free(raw);
            return -EINVAL;
        }
        raw[i] = (char)(hi << 4 | lo);
    }
    k = json_loadb(raw, n / 2, 0, NULL);
    free(raw);
    if (!json_is_array(k) || json_array_size(k) != 3 || !json_is_string(json_array_get(k, 0)) ||
        !json_is_string(json_array_get(k, 1)) || !json_is_string(json_array_get(k, 2))) {
        json_decref(k);
        return -EINVAL;
    }
    *key = k;
    return 0;
}

static int bind_common(sqlite3_stmt *st, const char *vcenter)
{
    return vcenter ? sqlite3_bind_text(st, 1, vcenter, -1, SQLITE_STATIC) : SQLITE_OK;
}

int db_inventory_page(struct db *db, enum db_page_kind kind, const struct db_page *p,
                          json_t **items, int64_t *total, char **next)
{
    sqlite3_stmt *cst = NULL, *pst = NULL;
    json_t *key = NULL, *list = NULL;
    int rc = SQLITE_OK, r, n = 0, in_tx = 0;

    assert(db && p && items && total && next);
    assert(kind >= DB_PAGE_DATASTORES && kind <= DB_PAGE_VMS);
    *items = NULL;
    *total = 0;
    *next = NULL;
    if (p->limit < 0)
        return -EINVAL;
    if (p->cursor && (r = cursor_decode(p->cursor, &key)) < 0)
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
    rc = sqlite3_prepare_v2(db->h, count_sql[kind], -1, &cst, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db->h, page_sql[kind], -1, &pst, NULL);
    if (rc == SQLITE_OK)
        rc = bind_common(cst, p->vcenter);
    if (rc == SQLITE_OK)
        rc = bind_common(pst, p->vcenter);
    for (int i = 0; key && rc == SQLITE_OK && i < 3; i++)
        rc = sqlite3_bind_text(pst, 2 + i, json_string_value(json_array_get(key, (size_t)i)), -1,
                               SQLITE_STATIC);
    /* One row more than asked for says whether there is a next page. */
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(pst, 5, p->limit > 0 ? (int64_t)p->limit + 1 : -1);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(cst);
    if (rc != SQLITE_ROW)
        goto fail_db;
    *total = sqlite3_column_int64(cst, 0);
    while ((rc = sqlite3_step(pst)) == SQLITE_ROW) {
        if (p->limit > 0 && n == p->limit)
            break; /* the extra row: *next, set below from the page's last row, stands */
        const char *text = (const char *)sqlite3_column_text(pst, 1);
        json_t *row = text ? json_loads(text, 0, NULL) : NULL;
        if (!row) {
            /* A name that is not UTF-8 makes the row unreadable to jansson: leave it out
             * rather than failing the page. */
            log_debug("db: inventory row %s is not valid JSON", sqlite3_column_text(pst, 0));
        } else if (json_array_append_new(list, row) < 0) {
            r = -ENOMEM;
            goto out;
        }
        n++;
        if (p->limit > 0 && n == p->limit) {
            free(*next);
            *next = strdup((const char *)sqlite3_column_text(pst, 0));
            if (!*next) {
                r = -ENOMEM;
                goto out;
            }
        }
    }
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        goto fail_db;
    if (rc == SQLITE_DONE) {
        free(*next); /* the rows ended exactly at the limit */
        *next = NULL;
    }
    *items = list;
    list = NULL;
    r = 0;
    goto out;

fail_db:
    log_debug("db: inventory page: %s", sqlite3_errmsg(db->h));
    r = db_err(rc);
    if (r == 0)
        r = -VSL_EDB;
out:
    if (r < 0) {
        free(*next);
        *next = NULL;
        *total = 0;
    }
    sqlite3_finalize(cst);
    sqlite3_finalize(pst);
    if (in_tx)
        sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL);
    json_decref(key);
    json_decref(list);
    return r;
}

int db_vcenter_state(struct db *db, const char *vcenter, struct db_vcenter_state *out)
{
    static const char sql[] =
        "SELECT v.last_success_ms, p.started_ms, p.finished_ms, p.ok, p.error FROM vcenters v"
        " LEFT JOIN polls p ON p.id = v.last_poll_id WHERE v.name = ?1";
    sqlite3_stmt *st = NULL;
    int rc;

    assert(db && vcenter && out);
    memset(out, 0, sizeof(*out));
    rc = sqlite3_prepare_v2(db->h, sql, -1, &st, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(st, 1, vcenter, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        const unsigned char *err = sqlite3_column_text(st, 4);
        out->last_success_ms = sqlite3_column_int64(st, 0);
        out->last_started_ms = sqlite3_column_int64(st, 1);
        out->last_finished_ms = sqlite3_column_int64(st, 2);
        out->last_ok = sqlite3_column_int(st, 3);
        snprintf(out->error, sizeof(out->error), "%s", err ? (const char *)err : "");
        rc = SQLITE_DONE;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : db_err(rc) ? db_err(rc) : -VSL_EDB;
}

int db_object_counts(struct db *db, const char *vcenter, int64_t counts[3])
{
    static const char sql[] =
        "SELECT (SELECT count(*) FROM datastores WHERE ?1 IS NULL OR vcenter = ?1),"
        " (SELECT count(*) FROM hosts WHERE ?1 IS NULL OR vcenter = ?1),"
        " (SELECT count(*) FROM vms WHERE ?1 IS NULL OR vcenter = ?1)";
    sqlite3_stmt *st = NULL;
    int rc;

    assert(db && counts);
    rc = sqlite3_prepare_v2(db->h, sql, -1, &st, NULL);
    if (rc == SQLITE_OK)
        rc = bind_common(st, vcenter);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        for (int i = 0; i < 3; i++)
            counts[i] = sqlite3_column_int64(st, i);
        rc = SQLITE_DONE;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : db_err(rc) ? db_err(rc) : -VSL_EDB;
}
