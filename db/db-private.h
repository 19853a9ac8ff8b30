/* What the files of db/ share and nobody outside db/ may see: the struct db layout, the
 * migration entry point, and the SQLite kit every file reads and writes with. */
#ifndef DB_DB_PRIVATE_H
#define DB_DB_PRIVATE_H

#include <jansson.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "db/columns.h"
#include "util/buf.h"

/* The inventory tables a snapshot writes, in the order of DB_INVENTORY_TABLES. */
#define DB_TABLE_ENUM(ENUM, table, sink, est, since, rowid) T_##ENUM,
enum db_table { DB_INVENTORY_TABLES(DB_TABLE_ENUM) T_NTABLES };
/* db/'s own tables follow them in db_tables[]. */
#define DB_OWN_ENUM(ENUM, table, since) T_##ENUM,
enum { T_OWN_FIRST = T_NTABLES - 1, DB_OWN_TABLES(DB_OWN_ENUM) };

struct db {
    sqlite3 *h; /* owned */
    /* Prepared on first use and kept for the life of the connection, so a poll of 20,000 VMs
     * compiles each statement once, not once per row or once per poll. All owned. */
    sqlite3_stmt *ins[T_NTABLES];
    sqlite3_stmt *del[T_NTABLES];
    int in_snapshot; /* a db_snapshot is open on this connection */
    int64_t capacity_retention_ms; /* capacity history older than this goes; 0: kept */
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

/* db_snapshot_begin(), which keep = 1 turns into a transaction that removes nothing: the
 * caller removes the rows it replaces (db/update.c). Ended by db_snapshot_abort() or, for
 * keep = 1, by db_update_commit(). */
struct db_snapshot;
struct vim_sink;
int db_snapshot_open(struct db *db, const char *vcenter, const char *url, int keep,
                     struct db_snapshot **out, struct vim_sink *sink);
struct db *db_snapshot_db(const struct db_snapshot *snap);
const char *db_snapshot_vcenter(const struct db_snapshot *snap);

/* Brings the schema up to db_schema_version(), one transaction per migration.
 * On error *errmsg (if not NULL) receives a malloc'd message. */
int db_migrate(sqlite3 *h, char **errmsg);
/* The same, up to version target only (tests make the databases older versions left). A new
 * database (version 0) goes straight to the current schema when target is the current version,
 * else through migration 1, 2, ... like one a version-1 vslint made. */
int db_migrate_to(sqlite3 *h, int target, char **errmsg);

/* The table name of t, for the statements built from the constant table list. */
const char *db_table_name(enum db_table t);

/* ---- the SQLite kit (db/kit.c): what every file of db/ reads and writes with ---------------- */

/* Maps a SQLite result code to 0 or a project error code (-ENOMEM, -EBUSY, -VSL_EDB, ...). */
int db_err(int sqlite_rc);
/* A failed SQLite call as a project error, never 0 (even for a result code that is not an
 * error, such as SQLITE_ROW where SQLITE_DONE was due); logs what failed at debug level with
 * SQLite's message. */
int db_fail(sqlite3 *h, int sqlite_rc, const char *what);
/* *errmsg (if errmsg is not NULL) becomes the malloc'd message, replacing what it held. */
void db_set_errmsg(char **errmsg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Binds s, or NULL when s is NULL; the text must live until the statement is reset. */
int db_bind_text(sqlite3_stmt *st, int i, const char *s);
/* Runs sql, which returns no rows (BEGIN, COMMIT, ...); 0 or db_fail(). */
int db_exec(sqlite3 *h, const char *sql);

/* Column i of st: JSON text (null for NULL, and for text that is not UTF-8), unix ms as ISO-8601
 * UTC (null for NULL). NULL only when out of memory. */
json_t *db_json_text(sqlite3_stmt *st, int i);
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
    char expr[600]; /* what to SELECT: alias.column (nullif()'d for EMPTY_NULL), or the extra */
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
/* Parses a cursor of exactly n fields. -EINVAL for anything db_cursor_encode() did not make:
 * a cursor comes from a URL, so from anyone. */
int db_cursor_decode(const char *s, int n, struct db_cursor *c);

#endif
