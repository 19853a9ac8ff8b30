/* Pruning: polls, resolved findings and digests past their retention deleted in small
 * transactions after a poll, free pages given back; the database's size for /metrics. */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "db/changes.h"
#include "db/db-private.h"
#include "db/prune.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/log.h"

/* The last run that did something, for /metrics (the API's connection is not the poller's). */
static pthread_mutex_t last_mu = PTHREAD_MUTEX_INITIALIZER;
static struct db_prune_stats last;

void db_set_retention(struct db *db, int64_t round_window_ms, int64_t poll_ms,
                      int64_t findings_ms)
{
    assert(db && round_window_ms >= 0 && poll_ms >= 0 && findings_ms >= 0);
    db->round_window_ms = round_window_ms;
    db->poll_retention_ms = poll_ms;
    db->findings_retention_ms = findings_ms;
}

/* Resolved findings only: an open or waived one stays however old. */
static const char findings_sql[] =
    "DELETE FROM findings WHERE fingerprint IN (SELECT fingerprint FROM findings"
    " WHERE status = 'resolved' AND resolved_at_ms < ?1 LIMIT ?2)";

/* The last digest stays whatever its age: the next one's window begins where it ended, and its
 * slot says which scheduled digest was sent last. */
static const char digests_sql[] =
    "DELETE FROM digests WHERE id IN (SELECT id FROM digests WHERE sent_ms < ?1"
    " AND id NOT IN (SELECT id FROM digests ORDER BY window_to_ms DESC, id DESC LIMIT 1)"
    " AND id NOT IN (SELECT id FROM digests ORDER BY slot_ms DESC, id DESC LIMIT 1) LIMIT ?2)";

/* Past retention a vCenter keeps, per UTC day, its last successful full read (what
 * /api/v1/history's objects and last_full read) or else its last poll; and every poll a finding
 * or the vCenter still names, so no reference is rewritten or left dangling (the foreign keys
 * would refuse the delete anyway). */
#define DAY0 "(p.finished_ms - p.finished_ms % 86400000)"
static const char polls_sql[] =
    "DELETE FROM polls WHERE id IN (SELECT p.id FROM polls p WHERE p.finished_ms < ?1"
    " AND p.id <> coalesce((SELECT k.id FROM polls k WHERE k.vcenter = p.vcenter"
    " AND k.mode = 'full' AND k.ok = 1 AND k.finished_ms >= " DAY0
    " AND k.finished_ms < " DAY0 " + 86400000 ORDER BY k.finished_ms DESC, k.id DESC LIMIT 1),"
    " (SELECT max(k.id) FROM polls k WHERE k.finished_ms >= " DAY0
    " AND k.finished_ms < " DAY0 " + 86400000 AND k.vcenter = p.vcenter))"
    " AND NOT EXISTS (SELECT 1 FROM findings f WHERE f.first_poll = p.id)"
    " AND NOT EXISTS (SELECT 1 FROM findings f WHERE f.resolved_poll = p.id)"
    " AND NOT EXISTS (SELECT 1 FROM vcenters v WHERE v.last_poll_id = p.id) LIMIT ?2)";
#undef DAY0

/* One transaction of sql (?1 the cutoff, ?2 the batch): the rows it deleted into *n. */
static int batch(struct db *db, const char *sql, int64_t cutoff, int64_t *n)
{
    int r = db_run(db->h, "BEGIN IMMEDIATE", "pruning");

    *n = 0;
    if (r == 0)
        r = db_run(db->h, sql, "pruning", DB_INT(cutoff), DB_INT(DB_PRUNE_BATCH));
    if (r == 0)
        *n = sqlite3_changes(db->h);
    /* Findings gone change the API's answers (db_content_stamp()). */
    if (r == 0 && *n && sql == findings_sql)
        r = db_note_change(db, "findings");
    if (r == 0)
        r = db_run(db->h, "COMMIT", "pruning");
    if (r < 0 && !sqlite3_get_autocommit(db->h))
        sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
    return r;
}

/* batch() of sql until a batch deletes fewer than DB_PRUNE_BATCH rows or *batches reaches
 * DB_PRUNE_MAX_BATCHES; rows older than retention_ms before now_ms (0: none go). Adds the rows
 * deleted to *rows and the transactions to *batches. */
static int drain(struct db *db, const char *sql, int64_t retention_ms, int64_t now_ms,
                 int64_t *rows, int64_t *batches)
{
    int64_t n = DB_PRUNE_BATCH;
    int r = 0;

    while (r == 0 && retention_ms > 0 && n == DB_PRUNE_BATCH && *batches < DB_PRUNE_MAX_BATCHES) {
        r = batch(db, sql, now_ms - retention_ms, &n);
        *rows += n;
        (*batches)++;
    }
    return r;
}

/* An integer PRAGMA's value (the name is ours, never input), or -1. */
static int64_t pragma(struct db *db, const char *name)
{
    sqlite3_stmt *st = NULL;
    char sql[64];
    int64_t v = -1;

    snprintf(sql, sizeof(sql), "PRAGMA %s", name);
    if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* Gives free pages beyond DB_VACUUM_SLACK_PAGES back, at most DB_VACUUM_STEP_PAGES: the slack
 * takes the next rounds' rows without growing the file again. A file made before schema 11
 * (auto_vacuum NONE) cannot: its free pages are reused by new rows, so it stays at its
 * high-water mark instead of growing (docs/operations.md). */
static int vacuum_step(struct db *db, int64_t *freed)
{
    int64_t before = pragma(db, "freelist_count"), n;
    char sql[64];
    int rc;

    *freed = 0;
    if (pragma(db, "auto_vacuum") != 2 || before <= DB_VACUUM_SLACK_PAGES)
        return 0;
    n = before - DB_VACUUM_SLACK_PAGES;
    if (n > DB_VACUUM_STEP_PAGES)
        n = DB_VACUUM_STEP_PAGES;
    snprintf(sql, sizeof(sql), "PRAGMA incremental_vacuum(%lld)", (long long)n);
    rc = sqlite3_exec(db->h, sql, NULL, NULL, NULL);
    if (rc != SQLITE_OK)
        return db_fail(db->h, rc, "giving free pages back");
    *freed = before - pragma(db, "freelist_count");
    return 0;
}

int db_prune(struct db *db, int64_t now_ms, struct db_prune_stats *out)
{
    struct db_prune_stats s = {.at_ms = now_ms};
    struct vsl_watch w;
    double wall, cpu;
    int r;

    assert(db && !db->in_snapshot && !db->readonly);
    if (out)
        memset(out, 0, sizeof(*out));
    if (now_ms < db->prune_due_ms)
        return 0;
    vsl_watch_start(&w);
    /* Findings first: the polls they named may go in the same run. */
    r = drain(db, findings_sql, db->findings_retention_ms, now_ms, &s.findings, &s.batches);
    if (r == 0)
        r = drain(db, digests_sql, db->findings_retention_ms, now_ms, &s.digests, &s.batches);
    if (r == 0)
        r = drain(db, polls_sql, db->poll_retention_ms, now_ms, &s.polls, &s.batches);
    if (r == 0)
        r = vacuum_step(db, &s.pages_freed);
    /* Cut short: the rest goes at the next call, not after a pause. */
    db->prune_due_ms = r == 0 && s.batches < DB_PRUNE_MAX_BATCHES ? now_ms + DB_PRUNE_EVERY_MS
                                                                  : now_ms;
    vsl_watch_read(&w, &wall, &cpu);
    s.duration_ms = (int64_t)(wall * 1000.0 + 0.5);
    if (s.polls || s.findings || s.digests || s.pages_freed) {
        pthread_mutex_lock(&last_mu);
        last = s;
        pthread_mutex_unlock(&last_mu);
    }
    if (out)
        *out = s;
    return r;
}

void db_prune_last(struct db_prune_stats *out)
{
    assert(out);
    pthread_mutex_lock(&last_mu);
    *out = last;
    pthread_mutex_unlock(&last_mu);
}

/* The size of path in bytes, 0 when it is not there. */
static int64_t file_size(const char *path)
{
    struct stat sb;
    return path && stat(path, &sb) == 0 ? (int64_t)sb.st_size : 0;
}

int db_size(struct db *db, struct db_size *out)
{
    static const char sql[] =
        "SELECT (SELECT count(*) FROM polls), (SELECT count(*) FROM findings),"
        " (SELECT count(*) FROM digests), (SELECT count(*) FROM capacity_history),"
        " (SELECT freelist_count * page_size FROM pragma_freelist_count, pragma_page_size)";
    const char *path = sqlite3_db_filename(db->h, "main");
    char wal[4096];
    sqlite3_stmt *st = NULL;
    int r;

    assert(db && out);
    memset(out, 0, sizeof(*out));
    out->file_bytes = file_size(path);
    if (path && snprintf(wal, sizeof(wal), "%s-wal", path) < (int)sizeof(wal))
        out->wal_bytes = file_size(wal);
    r = db_row_args(db->h, sql, &st, "measuring the database", NULL, 0);
    if (r == 0) {
        out->polls = sqlite3_column_int64(st, 0);
        out->findings = sqlite3_column_int64(st, 1);
        out->digests = sqlite3_column_int64(st, 2);
        out->capacity_history = sqlite3_column_int64(st, 3);
        out->free_bytes = sqlite3_column_int64(st, 4);
    }
    sqlite3_finalize(st);
    return r;
}
