/* The content stamp: whether what the API's answers say may have changed since a reader last
 * looked, told apart from the commits that only confirm a snapshot is still current. */
#include <assert.h>

#include "db/changes.h"
#include "db/db-private.h"
#include "db/findings.h"

int db_note_change(struct db *db, const char *what)
{
    assert(db && what);
    return db_run(db->h,
                  "INSERT INTO data_changes (what, n) VALUES (?1, 1)"
                  " ON CONFLICT (what) DO UPDATE SET n = n + 1",
                  "counting a change", DB_TEXT(what));
}

int db_content_stamp(struct db *db, uint64_t *out)
{
    sqlite3_stmt *st = NULL;
    uint64_t snaps = 0, h = 1469598103934665603ULL; /* FNV-1a over the numbers */
    int r;

    assert(db && out);
    /* One read transaction: the two parts are of the same commit. */
    r = db_run(db->h, "BEGIN", "reading the content stamp");
    if (r < 0)
        return r;
    r = db_snapshots_stamp(db, &snaps);
    if (r == 0)
        /* The last digest sent: the summary counts what changed since it (max of the rowid
         * key: one index step, and it moves with a row written by anyone). */
        r = db_row_args(db->h,
                        "SELECT (SELECT coalesce(sum(n), 0) FROM data_changes),"
                        " (SELECT coalesce(max(id), 0) FROM digests)",
                        &st, "reading the data changes", NULL, 0);
    if (r == 0) {
        uint64_t v[3] = {snaps, (uint64_t)sqlite3_column_int64(st, 0),
                         (uint64_t)sqlite3_column_int64(st, 1)};
        for (int i = 0; i < 3; i++)
            for (int b = 0; b < 8; b++) {
                h ^= (v[i] >> (8 * b)) & 0xff;
                h *= 1099511628211ULL;
            }
        *out = h;
    }
    sqlite3_finalize(st);
    sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL);
    return r;
}
