/* The SQLite store: schema migrations, one-transaction poll snapshots, and read queries.
 * Every inventory row is keyed by (vcenter, moref); several vCenters live side by side. */
#ifndef DB_DB_H
#define DB_DB_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "model/inventory.h"

struct db;          /* an open database; one per thread */
struct db_snapshot; /* a poll being written */

/* Object types counted per poll, in the order vslint prints them. */
enum db_kind {
    DB_DATASTORE,
    DB_STORAGE_POD,
    DB_VM,
    DB_VDISK,
    DB_SNAPSHOT,
    DB_HOST,
    DB_VNIC,
    DB_VSWITCH,
    DB_DVSWITCH,
    DB_ISCSI_HBA,
    DB_ISCSI_TARGET,
    DB_LUN,
    DB_LUN_PATH,
    DB_ARRAY_POOL, /* an array's; the kinds before it are a vCenter's */
    DB_ARRAY_LUN,
    DB_NKINDS
};

/* Returns the plural name used in output ("datastores", "vms", ...). */
const char *db_kind_name(enum db_kind k);

/* Opens (creating if needed) the database at path: WAL mode, foreign keys on, busy timeout,
 * migrations applied up to the current schema version. *out is owned by the caller
 * (db_close). On error, *errmsg (may be NULL) receives a malloc'd message the caller frees. */
int db_open(const char *path, struct db **out, char **errmsg);
/* The path that opens a database in memory alone, which no file ever holds and which is gone
 * with its connection. */
#define DB_MEMORY ":memory:"
/* Opens the database for reading only (SQLITE_OPEN_READONLY, query_only): it reads the last
 * committed state through the WAL while another connection or process holds the write lock,
 * and never migrates. A file that does not exist yet, or whose schema is older than this
 * build, is opened with db_open() instead (created or migrated first). */
int db_open_reader(const char *path, struct db **out, char **errmsg);
/* Keeps at most n (1..32) statements built from requests' filters in db's cache from now on,
 * finalizing the surplus nobody holds: tests make it tiny so that every caller meets an
 * eviction (a statement a caller holds is never evicted). */
void db_stmt_cache_size(struct db *db, int n);
/* How many statements db_stmt() gave out in this process that db_stmt_done() has not taken
 * back: 0 whenever no request or poll is running (the fuzz driver asserts it). */
long db_stmt_outstanding(void);
void db_close(struct db *db); /* NULL is a no-op */
/* 1 when another connection or process has committed a change to the database since the last
 * call on db (and at the first call), 0 when none has, or a negative error (PRAGMA
 * data_version). The API keys its cache of rendered answers on it. */
int db_changed(struct db *db);

/* Copies the WAL into the database and truncates it to nothing, so it does not grow with each
 * poll. Best effort: a reader still on an older state makes it wait (up to the busy timeout)
 * and leave the rest for next time. */
void db_checkpoint(struct db *db);

/* SQLite's memory in this process, every connection's (page caches, schemas, statements),
 * and a lower bound of the part that is page cache (each connection's first bulk allocation
 * of about 20 pages is not counted in it; *used counts it): each connection's cache grows to
 * its cache_size as it reads pages, so it rises in steps over the first days of a daemon
 * while it fills. */
void db_memory(int64_t *used, int64_t *page_cache);

/* The schema version this build writes (PRAGMA user_version). */
int db_schema_version(void);

/* What `vslint db check` and `vslint db backup` say of a database file. */
struct db_file_info {
    int schema;            /* PRAGMA user_version */
    char integrity[256];   /* PRAGMA integrity_check's first line: "ok", or the first problem */
    long long bytes;       /* the file's size */
    long long polls, open_findings;
    long long last_poll_ms; /* the last successful poll's end, 0 when none */
};
/* Reads path read-only without changing it: 0 with *info filled (integrity may still say a
 * problem), or a negative error with *errmsg (caller frees) when it cannot be read, is not a
 * vslint database, or is from a newer vslint. */
int db_check_file(const char *path, struct db_file_info *info, char **errmsg);
/* Copies the database at path to out (replaced atomically, mode 0600) while other processes
 * may write it: the last committed state, checked with integrity_check before out is
 * written. 0 with *info describing the copy, or a negative error with *errmsg. */
int db_backup(const char *path, const char *out, struct db_file_info *info, char **errmsg);

/* Starts writing a new snapshot of vcenter: opens a transaction and removes that vCenter's
 * previous inventory inside it. Fills *sink with callbacks that insert rows. Nothing is
 * visible to readers until db_snapshot_commit(). *out is freed by commit or abort. */
int db_snapshot_begin(struct db *db, const char *vcenter, const char *url,
                      struct db_snapshot **out, struct vim_sink *sink);
/* Marks the snapshot as an array's, of type kind ("unity"): the vcenters row of the source
 * says so, and readers tell arrays from vCenters by it. Before commit. */
void db_snapshot_set_kind(struct db_snapshot *snap, const char *kind);
/* Records the poll as successful (started/finished in unix milliseconds), commits, frees snap.
 * In the same transaction: the capacity of every datastore and datastore cluster at
 * finished_ms into the capacity history, thinned and aged out (see db/capacity.h).
 * counts (may be NULL) receives the number of rows stored per kind. */
int db_snapshot_commit(struct db_snapshot *snap, int64_t started_ms, int64_t finished_ms,
                       int64_t counts[DB_NKINDS]);
/* Rolls back: the previous snapshot of that vCenter stays as it was. Frees snap. */
void db_snapshot_abort(struct db_snapshot *snap);
/* Waits until every row the sink was given is in the staging tables (a full poll's writer
 * thread, db/stage.c, is done): 0, or the database's error. Before commit, so that a failed
 * write is told from a failed read. */
int db_snapshot_sync(struct db_snapshot *snap);
/* Once a sink call or db_snapshot_sync() failed because the database would not take a row (a
 * full disk, an I/O error): one line naming the table, the row and SQLite's words. NULL when
 * the database failed nothing: an error the poll saw was then the source's. */
const char *db_snapshot_error(const struct db_snapshot *snap);

/* How many days of capacity history a commit keeps ([database] capacity_retention); 0, the
 * default of a connection, keeps it all. */
void db_set_capacity_retention(struct db *db, int days);

/* Records a failed poll (the inventory is untouched). */
int db_poll_failed(struct db *db, const char *vcenter, const char *url, int64_t started_ms,
                   int64_t finished_ms, const char *error);
/* The same for an array of type kind ("unity"). */
int db_array_poll_failed(struct db *db, const char *array, const char *url, const char *kind,
                         int64_t started_ms, int64_t finished_ms, const char *error);

/* Builds the stored inventory as JSON (shape in docs/inventory.md). vcenter NULL = all.
 * *out is a new reference the caller owns. */
int db_inventory_json(struct db *db, const char *vcenter, json_t **out);

#endif
