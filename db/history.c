/* History by day: what was open at the end of each day, out of the findings' first_seen and
 * resolved_at, and each vCenter's polls per day, out of the polls table. Read-only. */
#include <assert.h>
#include <errno.h>
#include <string.h>

#include "db/db-private.h"
#include "db/history.h"
#include "util/err.h"

/* The first millisecond of the oldest of n days ending with today (UTC). */
static int64_t first_day_ms(int64_t now_ms, size_t n)
{
    return now_ms - now_ms % DB_DAY_MS - (int64_t)(n - 1) * DB_DAY_MS;
}

#define DB_DAY_MS_SQL "86400000" /* DB_DAY_MS in SQL text */

/* Per day (0: the oldest), the findings first seen then (not waived) and those fixed then: one
 * pass over the window rather than one per day. */
static const char changes_sql[] =
    "SELECT day, sum(opened), sum(fixed) FROM ("
    " SELECT (first_seen_ms - ?1) / " DB_DAY_MS_SQL " AS day, 1 AS opened, 0 AS fixed"
    " FROM findings WHERE first_seen_ms >= ?1 AND first_seen_ms <= ?2 AND status <> 'waived'"
    " AND (?3 IS NULL OR vcenter = ?3)"
    " UNION ALL SELECT (resolved_at_ms - ?1) / " DB_DAY_MS_SQL ", 0, 1"
    " FROM findings WHERE resolved_at_ms >= ?1 AND resolved_at_ms <= ?2 AND resolution = 'fixed'"
    " AND (?3 IS NULL OR vcenter = ?3)) GROUP BY day";

static int per_day(struct db *db, const char *sql, const char *vcenter, int64_t start,
                   int64_t now_ms, size_t n, struct db_history_day *days)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db->h, sql, -1, &st, NULL);

    if (rc == SQLITE_OK)
        rc = db_bind(st, DB_INT(start), DB_INT(now_ms), DB_TEXT(vcenter));
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t day = sqlite3_column_int64(st, 0);
        rc = SQLITE_OK;
        if (day < 0 || (size_t)day >= n)
            continue;
        days[day].opened = sqlite3_column_int64(st, 1);
        days[day].fixed = sqlite3_column_int64(st, 2);
    }
    sqlite3_finalize(st);
    return rc;
}

int db_history_days(struct db *db, const char *vcenter, int64_t now_ms, size_t n,
                    struct db_history_day *days)
{
    /* Open at t: seen by then and not resolved by then; waived ones do not count, as in the
     * summary's score. */
    static const char open_sql[] =
        "SELECT severity, count(*) FROM findings"
        " WHERE first_seen_ms <= ?1 AND (resolved_at_ms IS NULL OR resolved_at_ms > ?1)"
        " AND status <> 'waived' AND (?2 IS NULL OR vcenter = ?2) GROUP BY severity";
    /* The objects of each vCenter's last successful full read by t (its counts_json; an
     * incremental round's counts only what it changed). */
    static const char objects_sql[] =
        "SELECT count(p.id), coalesce(sum(coalesce(json_extract(p.counts_json, '$.datastores'), 0)"
        " + coalesce(json_extract(p.counts_json, '$.hosts'), 0)"
        " + coalesce(json_extract(p.counts_json, '$.vms'), 0)), 0)"
        " FROM (SELECT DISTINCT vcenter FROM polls WHERE ?2 IS NULL OR vcenter = ?2) v"
        " JOIN polls p ON p.id = (SELECT id FROM polls WHERE vcenter = v.vcenter AND ok = 1"
        " AND mode = 'full' AND finished_ms <= ?1 ORDER BY finished_ms DESC, id DESC LIMIT 1)";
    sqlite3_stmt *open_st = NULL, *obj_st = NULL;
    int64_t start = first_day_ms(now_ms, n);
    int rc;

    assert(db && days && n > 0);
    rc = sqlite3_prepare_v2(db->h, open_sql, -1, &open_st, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db->h, objects_sql, -1, &obj_st, NULL);
    /* One read transaction: a poll committing meanwhile cannot tear the days apart. */
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db->h, "BEGIN", NULL, NULL, NULL);
    for (size_t i = 0; rc == SQLITE_OK && i < n; i++) {
        struct db_history_day *d = &days[i];
        int64_t end = start + (int64_t)(i + 1) * DB_DAY_MS - 1;
        memset(d, 0, sizeof(*d));
        d->end_ms = end < now_ms ? end : now_ms;
        sqlite3_reset(open_st);
        rc = db_bind(open_st, DB_INT(d->end_ms), DB_TEXT(vcenter));
        while (rc == SQLITE_OK && (rc = sqlite3_step(open_st)) == SQLITE_ROW) {
            const char *sev = (const char *)sqlite3_column_text(open_st, 0);
            int64_t c = sqlite3_column_int64(open_st, 1);
            if (sev && !strcmp(sev, "critical"))
                d->critical = c;
            else if (sev && !strcmp(sev, "warning"))
                d->warning = c;
            else
                d->info += c;
            rc = SQLITE_OK;
        }
        if (rc != SQLITE_DONE)
            break;
        sqlite3_reset(obj_st);
        rc = db_bind(obj_st, DB_INT(d->end_ms), DB_TEXT(vcenter));
        if (rc == SQLITE_OK && (rc = sqlite3_step(obj_st)) == SQLITE_ROW) {
            d->vcenters = sqlite3_column_int64(obj_st, 0);
            d->objects = sqlite3_column_int64(obj_st, 1);
            rc = SQLITE_OK;
        }
    }
    if (rc == SQLITE_OK || rc == SQLITE_DONE)
        rc = per_day(db, changes_sql, vcenter, start, now_ms, n, days);
    if (!sqlite3_get_autocommit(db->h))
        sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL);
    sqlite3_finalize(open_st);
    sqlite3_finalize(obj_st);
    return rc == SQLITE_OK || rc == SQLITE_DONE ? 0 : db_fail(db->h, rc, "reading history");
}

/* {"polls","failed","mean_ms","max_ms"} of the polls of one mode out of columns i.. of st. */
static json_t *mode_json(sqlite3_stmt *st, int i)
{
    return json_pack("{s:I,s:I,s:I,s:I}", "polls", (json_int_t)sqlite3_column_int64(st, i),
                     "failed", (json_int_t)sqlite3_column_int64(st, i + 1), "mean_ms",
                     (json_int_t)(sqlite3_column_double(st, i + 2) + 0.5), "max_ms",
                     (json_int_t)sqlite3_column_int64(st, i + 3));
}

/* Appends the current row of st, one vCenter's polls of one day, to the array list (a
 * db_row_fn). */
static int append_day(sqlite3_stmt *st, void *list)
{
    json_t *row = json_pack(
        "{s:s,s:I,s:I,s:I,s:I,s:I}", "vcenter", (const char *)sqlite3_column_text(st, 0), "day",
        (json_int_t)sqlite3_column_int64(st, 1), "polls", (json_int_t)sqlite3_column_int64(st, 2),
        "failed", (json_int_t)sqlite3_column_int64(st, 3), "mean_ms",
        (json_int_t)(sqlite3_column_double(st, 4) + 0.5), "max_ms",
        (json_int_t)sqlite3_column_int64(st, 5));

    if (row && (json_object_set_new(row, "full", mode_json(st, 6)) < 0 ||
                json_object_set_new(row, "incremental", mode_json(st, 10)) < 0 ||
                json_object_set_new(row, "last_full", db_json_time(st, 14)) < 0)) {
        json_decref(row);
        row = NULL;
    }
    return row && json_array_append_new(list, row) == 0 ? 0 : -ENOMEM;
}

int db_history_polls(struct db *db, const char *vcenter, int64_t now_ms, size_t n, json_t **out)
{
    /* Per vCenter and day: all polls, then the full and the incremental ones apart, then the
     * last successful full read by the day's end (or now), which may be days before it.
     * A row may sum a window's incremental rounds (rounds, errors, busy_ms, longest_ms); a row
     * from before schema 11 is one poll, its NULLs counted as that one's. */
#define ROUNDS "coalesce(rounds, 1)"
#define FAILED "coalesce(errors, ok = 0)"
#define BUSY   "coalesce(busy_ms, finished_ms - started_ms)"
#define LONG   "coalesce(longest_ms, finished_ms - started_ms)"
#define MODE_COLS(m)                                                                               \
    " coalesce(sum(CASE WHEN mode = '" m "' THEN " ROUNDS " END), 0),"                           \
    " coalesce(sum(CASE WHEN mode = '" m "' THEN " FAILED " END), 0),"                           \
    " 1.0 * sum(CASE WHEN mode = '" m "' THEN " BUSY " END)"                                     \
    " / sum(CASE WHEN mode = '" m "' THEN " ROUNDS " END),"                                      \
    " coalesce(max(CASE WHEN mode = '" m "' THEN " LONG " END), 0)"
    static const char sql[] =
        "WITH d AS (SELECT vcenter, (finished_ms - ?1) / 86400000 AS day, sum(" ROUNDS ") AS n,"
        " sum(" FAILED ") AS failed, 1.0 * sum(" BUSY ") / sum(" ROUNDS ") AS mean,"
        " max(" LONG ") AS longest," MODE_COLS("full") "," MODE_COLS("incremental")
        " FROM polls WHERE finished_ms >= ?1 AND finished_ms <= ?3"
        " AND (?2 IS NULL OR vcenter = ?2) GROUP BY vcenter, day)"
        " SELECT d.*, (SELECT max(finished_ms) FROM polls p WHERE p.vcenter = d.vcenter"
        " AND p.mode = 'full' AND p.ok = 1 AND p.finished_ms <= min(?3, ?1 + (d.day + 1) * "
        "86400000 - 1)) FROM d ORDER BY vcenter, day";
#undef MODE_COLS
#undef ROUNDS
#undef FAILED
#undef BUSY
#undef LONG
    json_t *list = json_array();
    int r;

    assert(db && out);
    *out = NULL;
    if (!list)
        return -ENOMEM;
    r = db_each(db->h, sql, "reading polls by day", append_day, list,
                DB_INT(first_day_ms(now_ms, n)), DB_TEXT(vcenter), DB_INT(now_ms));
    if (r < 0) {
        json_decref(list);
        return r;
    }
    *out = list;
    return 0;
}
