/* What the files of db/ share and nobody outside db/ may see: the struct db layout, the
 * migration entry point, and the SQLite kit every file reads and writes with. */
#ifndef DB_DB_PRIVATE_H
#define DB_DB_PRIVATE_H

#include <jansson.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "db/columns.h"
#include "db/pages.h"
#include "util/buf.h"

/* The inventory tables a snapshot writes, in the order of DB_INVENTORY_TABLES. */
#define DB_TABLE_ENUM(ENUM, table, sink, est, since, rowid) T_##ENUM,
enum db_table { DB_INVENTORY_TABLES(DB_TABLE_ENUM) T_NTABLES };
/* db/'s own tables follow them in db_tables[]. */
#define DB_OWN_ENUM(ENUM, table, since) T_##ENUM,
enum { T_OWN_FIRST = T_NTABLES - 1, DB_OWN_TABLES(DB_OWN_ENUM) };

#define DB_STMT_CACHE 32
#define DB_MAX_COLS   64 /* columns of an inventory table, at most */

struct db {
    sqlite3 *h; /* owned */
    /* Prepared on first use and kept for the life of the connection, so a poll of 20,000 VMs
     * compiles each statement once, not once per row or once per poll. All owned. */
    sqlite3_stmt *ins[T_NTABLES];  /* into the staging table */
    sqlite3_stmt *del[T_NTABLES];  /* the vCenter's previous rows */
    sqlite3_stmt *copy[T_NTABLES]; /* staging table into the table */
    sqlite3_stmt *copy_keep[T_NTABLES]; /* the same, replacing rows of the same key (updates) */
    sqlite3_stmt *others[T_NTABLES]; /* whether the table holds another vCenter's rows */
    sqlite3_stmt *trunc[T_NTABLES];  /* empties the table (it holds only this vCenter's) */
    sqlite3_stmt *xfer[T_NTABLES];   /* the copy as SELECT *, when the columns line up */
    /* The inventory pages' statements (db/pages.c), prepared on first use: [kind][filtered by
     * vCenter][part], and the counts [kind]. All owned. */
    sqlite3_stmt *page[DB_NPAGE_KINDS][2][2];
    sqlite3_stmt *page_count[DB_NPAGE_KINDS];
    /* Statements built from a request's filters (db_stmt()), prepared once per distinct SQL
     * and kept, the oldest one nobody holds replaced past stmt_cap. A caller may hold two at
     * once (a count and its page), so an entry it holds (out) is never finalized under it.
     * All owned. */
    struct {
        char *sql;
        sqlite3_stmt *st;
        int out; /* handed out by db_stmt(), not yet given back by db_stmt_done() */
    } stmts[DB_STMT_CACHE];
    int stmt_next;
    int stmt_cap; /* entries in use: 1..DB_STMT_CACHE, 0 meaning DB_STMT_CACHE */
    int staged;      /* the staging database is attached to this connection */
    int readonly;    /* opened by db_open_reader(): reads only */
    int in_snapshot; /* a db_snapshot is open on this connection */
    /* The file is in WAL mode (PRAGMA journal_mode at open): readers on other connections
     * then never wait for a writer, which db_estate_load()'s private connections rely on. */
    int wal;
    int load_trim; /* db_set_load_trim() */
    int64_t data_version; /* db_changed(): PRAGMA data_version at its last call */
    int data_version_read; /* ... if there was one */
    int64_t capacity_retention_ms; /* capacity history older than this goes; 0: kept */
    /* [database] round_window, poll_retention, findings_retention (db_set_retention()); 0:
     * one row per round, kept for ever. */
    int64_t round_window_ms, poll_retention_ms, findings_retention_ms;
    int64_t prune_due_ms; /* db_prune(): the clock before which it does nothing */
};

/* The runway of a datastore no evaluation has estimated yet (JSON, no single quote: it goes
 * into SQL as a literal too). */
#define DB_RUNWAY_NONE                                                                             \
    "{\"days_to_warning\":null,\"days_to_critical\":null,\"growth_gb_per_day\":null,"              \
    "\"history_days\":0,\"reason\":\"not estimated yet\"}"

/* Records the capacity of vcenter's datastores and datastore clusters as its snapshot stores
 * them at t_ms, and thins and ages out its history (db/capacity.c); inside the snapshot's
 * transaction, before the poll is recorded (prev_ms: the previous successful poll, 0 if none). */
int db_capacity_record(struct db *db, const char *vcenter, int64_t t_ms, int64_t prev_ms);

/* db_snapshot_begin(), which keep = 1 turns into an update that removes nothing by itself:
 * the rows still go to the staging tables, and db_snapshot_apply() removes the rows of the
 * objects noted with db_snapshot_note() and adds the staged ones (db/update.c). Ended by
 * db_snapshot_abort() or, for keep = 1, by db_snapshot_apply(). */
struct db_snapshot;
struct vim_sink;
int db_snapshot_open(struct db *db, const char *vcenter, const char *url, int keep,
                     struct db_snapshot **out, struct vim_sink *sink);
/* Records (tag, key) for db_snapshot_apply(); nothing is removed yet. 0 <= tag < DB_NOTE_TAGS. */
#define DB_NOTE_TAGS 8
int db_snapshot_note(struct db_snapshot *snap, int tag, const char *key);
/* How many notes of tag snap has. */
size_t db_snapshot_noted(const struct db_snapshot *snap, int tag);

/* A row of the polls table. Every pointer is borrowed. */
struct db_poll_rec {
    const char *mode;    /* "full" (NULL says the same) or "incremental" */
    const char *version; /* the collector's version after an incremental round, or NULL */
    int64_t started_ms, finished_ms;
    const char *error;   /* NULL: it succeeded */
    const char *counts;  /* counts_json, or NULL */
    int64_t changes;     /* objects an incremental round changed */
    int64_t bytes;       /* bytes it read on the wire; 0: not known */
    int row_only;        /* 1: the vcenters row (last poll, last error) is left as it is */
};
/* Under BEGIN IMMEDIATE: forget() for each note, in order, then the staged rows copied in
 * (INSERT OR REPLACE), poll (if not NULL) recorded in polls with the vCenter pointing at it,
 * COMMIT; the staging database detached. On failure rolls back. Frees snap. */
int db_snapshot_apply(struct db_snapshot *snap,
                      int (*forget)(struct db *db, const char *vcenter, int tag, const char *key),
                      const struct db_poll_rec *poll);
/* Records a poll that failed (poll->error; NULL says "unknown error") in its own transaction:
 * the inventory is untouched. kind as db_snapshot_set_kind()'s, NULL for a vCenter. */
int db_record_failure(struct db *db, const char *vcenter, const char *url, const char *kind,
                      const struct db_poll_rec *poll);

/* How long a connection waits for a lock another holds before SQLITE_BUSY. */
#define DB_BUSY_MS 5000
/* How long db_checkpoint() waits for the WAL's readers before it gives up truncating it this
 * time (see there). */
#define DB_CHECKPOINT_BUSY_MS 200

/* PRAGMA user_version into *out; a SQLite result code. */
int db_user_version(sqlite3 *h, int *out);

/* Brings the schema up to db_schema_version(), one transaction per migration.
 * On error *errmsg (if not NULL) receives a malloc'd message. */
int db_migrate(sqlite3 *h, char **errmsg);
/* The same, up to version target only (tests make the databases older versions left). A new
 * database (version 0) goes straight to the current schema when target is the current version,
 * else through migration 1, 2, ... like one a version-1 vslint made. */
int db_migrate_to(sqlite3 *h, int target, char **errmsg);

/* A poll's rows are staged in a temporary database attached to the poller's connection as
 * DB_STAGE_SCHEMA (db/db.c), one table per inventory table with the same columns and key,
 * named DB_STAGE_PREFIX + the table's name; db_stage_ddl() appends their CREATE statements
 * to b. */
#define DB_STAGE_SCHEMA "stage"
#define DB_STAGE_PREFIX "stage_"
int db_stage_ddl(struct vsl_buf *b);

/* The table name of t, for the statements built from the constant table list. */
const char *db_table_name(enum db_table t);

/* ---- the SQLite kit (db/kit.c): what every file of db/ reads and writes with ---------------- */

/* Maps a SQLite result code to 0 or a project error code (-ENOMEM, -EBUSY, -VSL_EDB, ...). */
int db_err(int sqlite_rc);
/* A failed SQLite call as a project error, never 0 (even for a result code that is not an
 * error, such as SQLITE_ROW where SQLITE_DONE was due); logs what failed at debug level with
 * SQLite's message. */
int db_fail(sqlite3 *h, int sqlite_rc, const char *what);

/* PRAGMA application_id of a vslint database ("vslt"), set when the schema is created: file(1)
 * and db_foreign() tell it from another program's SQLite file. */
#define DB_APPLICATION_ID     0x76736c74
#define DB_APPLICATION_ID_STR "1987275892"
/* -VSL_EDB with *errmsg when h is not a database this vslint may use: one a newer vslint wrote
 * (version above this build's), or another program's (version as read). */
int db_foreign(sqlite3 *h, int version, char **errmsg);
/* Opens path read-only to look at it without creating anything beside it (immutable when it
 * has no -wal). An SQLite result code; *h to be closed in any case. */
int db_probe_open(const char *path, sqlite3 **h);
/* *errmsg (if errmsg is not NULL) becomes the malloc'd message, replacing what it held. */
void db_set_errmsg(char **errmsg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Binds s, or NULL when s is NULL; the text must live until the statement is reset. */
int db_bind_text(sqlite3_stmt *st, int i, const char *s);
/* One value of a statement's parameters, for db_bind(): DB_TEXT(s) (NULL binds NULL, and the
 * text must live until the statement is reset, as for db_bind_text()), DB_INT(n) (64 bits),
 * DB_REAL(x), DB_NULL. */
struct db_arg {
    enum { DB_ARG_NULL, DB_ARG_TEXT, DB_ARG_INT, DB_ARG_REAL } type;
    const char *s;
    int64_t i;
    double d;
};
#define DB_TEXT(x) ((struct db_arg){.type = DB_ARG_TEXT, .s = (x)})
#define DB_INT(x)  ((struct db_arg){.type = DB_ARG_INT, .i = (x)})
#define DB_REAL(x) ((struct db_arg){.type = DB_ARG_REAL, .d = (x)})
#define DB_NULL    ((struct db_arg){.type = DB_ARG_NULL})
/* Binds args[k] to parameter ?(first + k) of st, in order; the first SQLite result code that is
 * not SQLITE_OK, else SQLITE_OK. */
int db_bind_args(sqlite3_stmt *st, int first, const struct db_arg *args, size_t n);
/* Binds its values to ?1, ?2, ... of st: rc = db_bind(st, DB_TEXT(vcenter), DB_INT(now_ms)). */
#define db_bind(st, ...)                                                                           \
    db_bind_args((st), 1, (const struct db_arg[]){__VA_ARGS__},                                    \
                 sizeof((const struct db_arg[]){__VA_ARGS__}) / sizeof(struct db_arg))
/* Reads the first row of sql (args bound to ?1, ?2, ...) into *st: 0 with the row there,
 * -VSL_ENOTFOUND when there is none, else db_fail(h, .., what). The caller finalizes *st
 * whatever it returns (it may be NULL). */
int db_row_args(sqlite3 *h, const char *sql, sqlite3_stmt **st, const char *what,
                const struct db_arg *args, size_t n);
#define db_row(h, sql, st, what, ...)                                                              \
    db_row_args((h), (sql), (st), (what), (const struct db_arg[]){__VA_ARGS__},                    \
                sizeof((const struct db_arg[]){__VA_ARGS__}) / sizeof(struct db_arg))
/* What db_each() does with a row of st: 0 to go on to the next, or a negative error that ends
 * the walk. */
/* Array A (an SQL expression naming an array) holds a LUN behind one of vCenter V's datastores:
 * the array of that vCenter's storage, preferred when NAS servers of two arrays export one
 * share at one address (a private address and a share name reused at another site). */
#define DB_ARRAY_OF_VCENTER(A, V)                                                                  \
    "EXISTS (SELECT 1 FROM datastore_extents ae JOIN array_luns al ON al.naa = ae.disk_name"      \
    " WHERE ae.vcenter = " V " AND al.vcenter = " A ")"
/* Whether path P ("/share" or "/share/sub", no trailing '/') lies in Unity share N (its name):
 * the share itself, or a folder under it at a '/' boundary. */
#define DB_SHARE_HOLDS(P, N)                                                                       \
    "(" P " = '/' || " N " OR substr(" P ", 1, length(" N ") + 2) = '/' || " N " || '/')"
/* The NAS servers of the configured arrays that may serve an NFS datastore (d: datastores,
 * narrowed by COND), one row each: dsvc, ds (the datastore), path (its nas.remotePath without a
 * trailing '/'), array, nas_server, name, home_sp, live (0 only for a NAS server that says it
 * is a replication destination, which keeps its source's addresses and shares but serves
 * nothing before a failover; unknown counts as live), local (the array holds a LUN of the
 * datastore's vCenter, DB_ARRAY_OF_VCENTER), share_len (the length of the name of the longest
 * share of the server that holds the path, DB_SHARE_HOLDS; NULL when none does, or the shares
 * were not read). A server is found by address: one of its file interfaces has the datastore's
 * nas.remoteHost, both compared in vsl_addr()'s form (db.c: case and IPv6 spelling aside). */
#define DB_NFS_CANDIDATES(COND)                                                                    \
    "SELECT DISTINCT d.vcenter AS dsvc, d.moref AS ds, rtrim(d.nas_remote_path, '/') AS path,"    \
    " f.vcenter AS array, f.nas_server AS nas_server, n.name AS name, n.home_sp AS home_sp,"      \
    " n.replication_destination IS NOT 1 AS live, "                                               \
    DB_ARRAY_OF_VCENTER("f.vcenter", "d.vcenter") " AS local,"                                    \
    " (SELECT max(length(sh.name)) FROM array_filesystems fs JOIN array_nfs_shares sh"            \
    "  ON sh.vcenter = fs.vcenter AND sh.filesystem = fs.id WHERE fs.vcenter = f.vcenter"         \
    "  AND fs.nas_server = f.nas_server AND "                                                     \
    DB_SHARE_HOLDS("rtrim(d.nas_remote_path, '/')", "sh.name") ") AS share_len"                   \
    " FROM datastores d JOIN array_file_interfaces f"                                             \
    " ON vsl_addr(f.address) = vsl_addr(d.nas_remote_host)"                                       \
    " JOIN vcenters v ON v.name = f.vcenter AND v.kind IS NOT NULL"                               \
    " LEFT JOIN array_nas_servers n ON n.vcenter = f.vcenter AND n.id = f.nas_server"             \
    " WHERE d.type IN ('NFS', 'NFS41') AND " COND
/* DB_NFS_CANDIDATES(COND) with, per row: pick (a live server whose share_len is the longest of
 * the datastore's live servers, or any live server when none holds the path: the share only
 * chooses between servers at one address), n (how many picked), nl (how many picked are
 * local), n_all and n_live (how many candidates, how many live) and chosen: 1 for the NAS
 * server that serves the datastore (the only one picked, or else the only local one picked). */
#define DB_NFS_RANKED(COND)                                                                        \
    "SELECT r.*, (r.pick AND (sum(r.pick) OVER p = 1 OR (r.local AND sum(r.pick AND r.local)"     \
    " OVER p = 1))) IS 1 AS chosen, sum(r.pick) OVER p AS n, sum(r.pick AND r.local) OVER p AS nl,"\
    " count(*) OVER p AS n_all, sum(r.live) OVER p AS n_live FROM (SELECT c.*, c.live AND"        \
    " (max(CASE WHEN c.live THEN c.share_len END) OVER p IS NULL"                                 \
    " OR c.share_len IS max(CASE WHEN c.live THEN c.share_len END) OVER p) AS pick"                \
    " FROM (" DB_NFS_CANDIDATES(COND) ") c WINDOW p AS (PARTITION BY c.dsvc, c.ds)) r"            \
    " WINDOW p AS (PARTITION BY r.dsvc, r.ds)"
/* Every pool of a configured array behind a datastore, as rows (array, pool, dsvc, ds, thin):
 * the array's name and the pool's id, the datastore's vCenter and moref, and 1 when that
 * storage is thin. The one definition of the join, for the estate (db/load.c) and the
 * inventory pages (db/pages.c); each branch is narrowed by a condition on its aliases:
 * - LUN (e: datastore_extents, l: array_luns): a LUN of the pool is an extent (the LUN's naa.
 *   name, from its WWN, is the extent's disk_name);
 * - NFS (d: datastores narrowed by NFS_D before the join, fs: array_filesystems, whose vcenter
 *   is the array, narrowed by NFS after it): the file system of the share that holds the
 *   datastore's path (the longest, DB_SHARE_HOLDS) on the NAS server that serves it
 *   (DB_NFS_RANKED's chosen); none when the shares were not read or none holds the path; a
 *   file system whose provisioning is unknown counts as thin;
 * - VVOL (d: datastores, s: array_vvol_pools): the VVol datastore's URL holds the UUID the array
 *   gives its VVol datastore (vmwareUUID, compared as hex digits); thin, as VVols are. */
#define DB_POOL_PAIRS(LUN, NFS_D, NFS, VVOL)                                                              \
    "SELECT l.vcenter AS array, l.pool AS pool, e.vcenter AS dsvc, e.datastore AS ds,"            \
    " coalesce(l.thin, 0) AS thin FROM datastore_extents e"                                       \
    " JOIN array_luns l ON l.naa = e.disk_name WHERE " LUN                                        \
    " UNION ALL SELECT fs.vcenter, fs.pool, d.vcenter, d.moref, coalesce(fs.thin, 1)"             \
    " FROM (" DB_NFS_RANKED(NFS_D) ") k JOIN datastores d ON d.vcenter = k.dsvc AND d.moref = k.ds"\
    " JOIN array_filesystems fs ON fs.vcenter = k.array AND fs.nas_server = k.nas_server"         \
    " JOIN array_nfs_shares sh ON sh.vcenter = fs.vcenter AND sh.filesystem = fs.id"              \
    " AND length(sh.name) = k.share_len AND " DB_SHARE_HOLDS("k.path", "sh.name")                 \
    " WHERE k.chosen AND " NFS                                                                    \
    " UNION ALL SELECT s.vcenter, s.pool, d.vcenter, d.moref, 1 FROM datastores d"                \
    " JOIN array_vvol_pools s ON length(replace(s.vmware_uuid, '-', '')) >= 32"                   \
    " AND instr(lower(replace(d.url, '-', '')), lower(replace(s.vmware_uuid, '-', ''))) > 0"      \
    " WHERE d.type = 'VVOL' AND " VVOL

typedef int db_row_fn(sqlite3_stmt *st, void *ctx);
/* Steps st to its end, handing each row to fn(st, ctx): 0, fn's error, or db_fail(.., what).
 * st stays the caller's (bound before, reset or finalized after). */
int db_each_row(sqlite3_stmt *st, const char *what, db_row_fn *fn, void *ctx);
/* The rows of sql (args bound to ?1, ?2, ...) through db_each_row(), the statement prepared and
 * finalized here: r = db_each(h, sql, "listing vCenters", add_name, &names, DB_TEXT(vc)). */
int db_each_args(sqlite3 *h, const char *sql, const char *what, db_row_fn *fn, void *ctx,
                 const struct db_arg *args, size_t n);
#define db_each(h, sql, what, fn, ctx, ...)                                                        \
    db_each_args((h), (sql), (what), (fn), (ctx), (const struct db_arg[]){__VA_ARGS__},            \
                 sizeof((const struct db_arg[]){__VA_ARGS__}) / sizeof(struct db_arg))
/* Runs sql, which returns no rows (an INSERT, a DELETE), with args bound to ?1, ?2, ...:
 * 0 or db_fail(h, .., what). */
int db_run_args(sqlite3 *h, const char *sql, const char *what, const struct db_arg *args, size_t n);
#define db_run(h, sql, what, ...)                                                                  \
    db_run_args((h), (sql), (what), (const struct db_arg[]){__VA_ARGS__},                          \
                sizeof((const struct db_arg[]){__VA_ARGS__}) / sizeof(struct db_arg))
/* The statement of sql from the connection's cache, prepared on first use: an HTTP thread
 * asking the same kind of page again does not compile it again. *out is borrowed and checked
 * out: the cache neither hands it to another caller nor evicts it until it is given back with
 * db_stmt_done(); never finalize it. When every entry is held, *out is a statement of its own
 * that db_stmt_done() finalizes. 0 or db_fail(). */
int db_stmt(struct db *db, const char *sql, sqlite3_stmt **out);
/* Gives st back to db's cache: resets it and clears its bindings for the next use (or
 * finalizes it if it was not cached); NULL is a no-op. */
void db_stmt_done(struct db *db, sqlite3_stmt *st);
/* Finalizes the cached statements (db_close). */
void db_stmt_free(struct db *db);
/* Runs sql, which returns no rows (BEGIN, COMMIT, ...); 0 or db_fail(). */
int db_exec(sqlite3 *h, const char *sql);
/* Registers vslint's SQL functions (vsl_addr) on h, which the queries of db-private.h use:
 * every connection that runs them, the loader's private ones too. An SQLite result code. */
int db_add_functions(sqlite3 *h);

/* Column i of st: JSON text (null for NULL, and for text that is not UTF-8), unix ms as ISO-8601
 * UTC (null for NULL). NULL only when out of memory. */
json_t *db_json_text(sqlite3_stmt *st, int i);

/* s as a JSON string, its bytes that are not UTF-8 (text cut in the middle of a character)
 * each made '?' rather than the whole refused. NULL only when out of memory (or s NULL). */
json_t *db_json_utf8(const char *s);
json_t *db_json_time(sqlite3_stmt *st, int i);

/* Appends the columns of table t (an enum db_table, or T_FINDINGS, ...) to sql, each as "alias.column" and comma-separated,
 * in list order (without vcenter): what the P_<ENUM>_<col> positions count. An EMPTY_NULL
 * column is read as NULL where it holds ''. */
int db_select_columns(struct vsl_buf *sql, int t, const char *alias);

/* A reader's view of a table: the members of a row's JSON object, in order, and where each
 * comes from. spec names them, blank-separated: a column of the table (its type from the list);
 * "name=column" for a column under another name; an extra (a joined or computed value) by its
 * name; "vcenter", the implicit column; and "*", every column not yet named that is not HIDDEN
 * and not in skip (the blank-separated columns that name the row's parent), in list order: a
 * column added to the list joins every view with a "*" by itself. */
struct db_extra {
    const char *name, *expr;
    enum db_ctype type;
};
struct db_field {
    char name[40];
    /* What to SELECT: alias.column (nullif()'d for EMPTY_NULL), written in own, or the extra's
     * expr, borrowed (an extra's join may run to kilobytes: copying it cut it). Points into the
     * field itself or the extras: use the field where db_view() wrote it. */
    const char *expr;
    char own[160];
    enum db_ctype type;
};
#define DB_MAX_FIELDS 24
/* Fills out[] with spec's fields of table t read as alias; returns how many. A spec naming
 * what t does not have is a programmer error (assert), as is one past DB_MAX_FIELDS. */
int db_view(int t, const char *alias, const char *spec, const struct db_extra *extras,
            const char *skip, struct db_field out[DB_MAX_FIELDS]);

/* Keyset cursors, the one codec of every paged read: the page's last row's sort key, fields
 * joined by NUL, in lower-case hex, which is opaque and safe in a URL as it is. */
#define DB_CURSOR_MAX    4096 /* hex digits; a real cursor is a few hundred */
#define DB_CURSOR_FIELDS 5
struct db_cursor {
    char buf[DB_CURSOR_MAX / 2 + 1];
    const char *field[DB_CURSOR_FIELDS]; /* into buf */
    int n;
};
/* The cursor of columns cols[0..n) of the current row of st; malloc'd, NULL when out of memory
 * (or past DB_CURSOR_MAX). */
char *db_cursor_encode(sqlite3_stmt *st, const int *cols, int n);
/* Parses the cursor s of a request, of exactly n fields, into a new *out (the caller frees it);
 * no cursor (s NULL, the first page) is 0 with *out NULL. -EINVAL for anything
 * db_cursor_encode() did not make (a cursor comes from a URL, so from anyone), -ENOMEM; *out
 * is NULL then. */
int db_cursor_decode(const char *s, int n, struct db_cursor **out);

/* A full poll's writer thread (db/stage.c): db_stager_start() makes it, with db's connection
 * in an open transaction; from then on only the writer uses the connection, the sink handing
 * rows over with db_stager_put() (text[i] for TEXT and FN columns, NULL for SQL NULL; num[i]
 * for the others, VIM_UNKNOWN for NULL; copied, so borrowed for the call). The calls to put are
 * serialised by the caller (the sink's). db_stager_stop() waits until every row is inserted,
 * ends the thread, frees it (NULL: a no-op) and gives the connection back: the writer's first
 * error, or 0; why (len bytes, may be NULL) then gets db_stager_error()'s words if any. */
struct db_stager;
int db_stager_start(struct db *db, const char *vcenter, struct db_stager **out);
int db_stager_put(struct db_stager *s, enum db_table t, const char *const *text,
                  const int64_t *num);
int db_stager_stop(struct db_stager *s, char *why, size_t len);
/* Once the writer failed (a put or the stop returned its error): what failed, naming the
 * table and the row, in SQLite's words; NULL before, or when the error was not the writer's. */
const char *db_stager_error(struct db_stager *s);
/* The bytes the blocks hold now (the sink's side calls it): the bound the comment of
 * STAGE_BLOCK in db/stage.c promises. */
size_t db_stager_memory(struct db_stager *s);
/* db_stager_memory() of a full poll's writer (the tests'); 0 without one. */
size_t db_snapshot_stage_memory(struct db_snapshot *snap);
/* Inserts one row into table t's staging table (the writer's and the sink's one way to). */
int db_insert_values(struct db *db, enum db_table t, const char *vcenter, const char *const *text,
                     const int *len, const int64_t *num);

#endif
