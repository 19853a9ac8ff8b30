/* Per-object replacement of stored rows inside one transaction (see db/update.h). Which tables
 * hang off which object comes from the column lists: a child table's first column names its
 * parent (vm, host, datastore). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "db/db-private.h"
#include "db/update.h"
#include "util/log.h"

static const struct {
    const char *type;
    enum db_table own;
    const char *child; /* the first column of the tables that hang off it, or NULL */
} owners[] = {
    {"VirtualMachine", T_VM, "vm"},
    {"HostSystem", T_HOST, "host"},
    {"Datastore", T_DATASTORE, "datastore"},
    {"StoragePod", T_STORAGE_POD, NULL},
    {"DistributedVirtualSwitch", T_DVSWITCH, NULL},
};

int db_update_begin(struct db *db, const char *vcenter, struct db_snapshot **out,
                    struct vim_sink *sink)
{
    return db_snapshot_open(db, vcenter, NULL, 1, out, sink);
}

/* DELETE FROM table WHERE vcenter = ? AND column = ?; column comes from our own lists. */
static int delete_where(struct db *db, const char *vcenter, const char *table,
                        const char *column, const char *value)
{
    sqlite3_stmt *st = NULL;
    char sql[160];
    int rc;

    snprintf(sql, sizeof(sql), "DELETE FROM %s WHERE vcenter = ?1 AND %s = ?2", table, column);
    rc = sqlite3_prepare_v2(db->h, sql, -1, &st, NULL);
    if (rc == SQLITE_OK)
        rc = db_bind(st, DB_TEXT(vcenter), DB_TEXT(value));
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : db_fail(db->h, rc, sql);
}

/* Removes the rows of owners[tag]'s object moref; run at commit, under the write lock. */
static int forget(struct db *db, const char *vcenter, int tag, const char *moref)
{
    int r = 0;

    for (int t = 0; t < T_NTABLES && r == 0; t++) {
        const char *col = NULL;
        if (t == (int)owners[tag].own || t == T_ENTITY)
            col = "moref";
        else if (t == T_GAP)
            col = "object";
        else if (owners[tag].child && !strcmp(db_tables[t].cols[0].name, owners[tag].child))
            col = owners[tag].child;
        if (col)
            r = delete_where(db, vcenter, db_table_name(t), col, moref);
    }
    return r;
}

int db_update_forget(struct db_snapshot *u, const char *type, const char *moref)
{
    size_t o;

    for (o = 0; o < sizeof(owners) / sizeof(owners[0]); o++)
        if (!strcmp(owners[o].type, type))
            break;
    if (o == sizeof(owners) / sizeof(owners[0]))
        return -EINVAL;
    return db_snapshot_note(u, (int)o, moref);
}

int db_update_commit(struct db_snapshot *u)
{
    return db_snapshot_apply(u, forget);
}

int db_update_confirm(struct db *db, const char *vcenter, int64_t now_ms)
{
    static const char sql[] = "UPDATE vcenters SET last_success_ms = ?2"
                              " WHERE name = ?1 AND last_success_ms < ?2";
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db->h, sql, -1, &st, NULL);

    if (rc == SQLITE_OK)
        rc = db_bind(st, DB_TEXT(vcenter), DB_INT(now_ms));
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : db_fail(db->h, rc, "confirming a vCenter's snapshot");
}
