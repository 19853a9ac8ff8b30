/* Per-object replacement of stored rows inside one transaction (see db/update.h). Which tables
 * hang off which object comes from the column lists: a child table's first column names its
 * parent (vm, host, datastore). */
#include <assert.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
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

#define NOWNERS (sizeof(owners) / sizeof(owners[0]))
_Static_assert(NOWNERS <= DB_NOTE_TAGS, "an owner's index is a note's tag");

/* The round's counts_json: {"changed": {"VirtualMachine": 2, ...}}, the types with any. NULL
 * when out of memory. */
static char *changed_json(const struct db_snapshot *u)
{
    json_t *o = json_object(), *by = json_object();
    char *s = NULL;

    if (!o || !by || json_object_set(o, "changed", by) < 0)
        goto out;
    for (size_t i = 0; i < NOWNERS; i++) {
        size_t n = db_snapshot_noted(u, (int)i);
        if (n && json_object_set_new(by, owners[i].type, json_integer((json_int_t)n)) < 0)
            goto out;
    }
    s = json_dumps(o, JSON_COMPACT);
out:
    json_decref(by);
    json_decref(o);
    return s;
}

int db_update_commit(struct db_snapshot *u, const struct db_round *round)
{
    char *counts = NULL;
    int64_t changes = 0;
    int r;

    for (size_t i = 0; i < NOWNERS; i++)
        changes += (int64_t)db_snapshot_noted(u, (int)i);
    if (round && !(counts = changed_json(u))) {
        db_snapshot_abort(u);
        return -ENOMEM;
    }
    r = db_snapshot_apply(u, forget,
                          round ? &(struct db_poll_rec){.mode = "incremental",
                                                        .version = round->version,
                                                        .started_ms = round->started_ms,
                                                        .finished_ms = round->finished_ms,
                                                        .counts = counts,
                                                        .changes = changes,
                                                        .bytes = round->bytes}
                                : NULL);
    free(counts);
    return r;
}

int db_update_failed(struct db *db, const char *vcenter, const struct db_round *round,
                     const char *error)
{
    assert(db && vcenter && round);
    return db_record_failure(db, vcenter, NULL, NULL,
                             &(struct db_poll_rec){.mode = "incremental",
                                                   .version = round->version,
                                                   .started_ms = round->started_ms,
                                                   .finished_ms = round->finished_ms,
                                                   .bytes = round->bytes, .error = error,
                                                   .row_only = 1});
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
