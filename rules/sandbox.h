/* The sandbox: a read-only SQLite connection that lets a query read the public views (and the
 * functions a query needs) and nothing else, under a time limit, for site rules and for
 * `vslint query` / `vslint export`. A query is untrusted input. */
#ifndef RULES_SANDBOX_H
#define RULES_SANDBOX_H

#include <stddef.h>

#include <jansson.h>
#include <sqlite3.h>

struct rules_db; /* one sandboxed connection; one thread at a time */

/* Opens the database file at path for reading only (SQLITE_OPEN_READONLY, PRAGMA query_only),
 * creates the public views (rules/views.h) restricted to vcenter (NULL: every one) and installs
 * the authorizer. A file that does not exist is an error: the sandbox never creates one.
 * *out is the caller's (rules_db_close). 0, or a negative error with the cause in err. */
int rules_db_open(const char *path, const char *vcenter, struct rules_db **out, char *err,
                  size_t errlen);
void rules_db_close(struct rules_db *db); /* NULL is a no-op */

/* Prepares sql, which must be exactly one statement that only reads: a second statement,
 * ATTACH/DETACH, PRAGMA, any write or schema change, load_extension(), a read of anything but
 * the public views (a stored table, sqlite_master) and a virtual table other than json_each and
 * json_tree are refused. *out is the caller's (sqlite3_finalize). 0, or -EPERM (refused) /
 * -EINVAL (does not compile) with the cause in err and, in *line (may be NULL), the line of sql
 * where SQLite saw it (1-based; 0 unknown). */
int rules_db_prepare(struct rules_db *db, const char *sql, sqlite3_stmt **out, int *line,
                     char *err, size_t errlen);

/* Called by rules_db_run() with each row of st; a negative return stops the run with it. */
typedef int rules_row_fn(void *ctx, sqlite3_stmt *st);

/* Runs st to its end, calling fn per row. timeout_ms (0: none) bounds the time the whole run
 * may take, checked every thousand SQLite instructions; max_rows (0: none) the rows it may give:
 * the row past max_rows stops it. 0, or -ETIMEDOUT / -E2BIG (a limit, said in err), fn's error,
 * or -EINVAL (SQLite's error in err). */
int rules_db_run(struct rules_db *db, sqlite3_stmt *st, long timeout_ms, long max_rows,
                 rules_row_fn *fn, void *ctx, char *err, size_t errlen);

/* Column i of st's current row as JSON: null, an integer, a real, a string (a byte that is not
 * UTF-8 shown as '?'), or a blob as the hex digits of its bytes. A new reference; NULL when
 * memory runs out. */
json_t *rules_db_column_json(sqlite3_stmt *st, int i);
/* The n bytes at p as lower-case hex digits, a string the caller frees; NULL out of memory. */
char *rules_db_hex(const void *p, size_t n);

/* The largest value (string or blob) a query may build, in bytes: the sandbox's bound on what
 * one row can hold (SQLITE_LIMIT_LENGTH). */
#define RULES_MAX_VALUE (4 * 1024 * 1024)

#endif
