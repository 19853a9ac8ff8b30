/* The capacity history: written in each poll's transaction, thinned as it ages, read back for
 * the dashboard's chart; and the runway estimates the daemon stores after each evaluation. */
#include <assert.h>
#include <errno.h>
#include <string.h>

#include "db/capacity.h"
#include "db/changes.h"
#include "db/db-private.h"
#include "util/err.h"

/* What a failed write of the capacity history says (at debug level). */
#define WRITING "writing the capacity history"

/* Keeps, among vcenter's points in [from, to), the latest of each bucket of bucket_ms. */
static int thin(struct db *db, const char *vcenter, int64_t from, int64_t to, int64_t bucket_ms)
{
    static const char sql[] =
        "DELETE FROM capacity_history WHERE rowid IN (SELECT id FROM (SELECT rowid AS id,"
        " row_number() OVER (PARTITION BY moref, t_ms / ?4 ORDER BY t_ms DESC) AS n"
        " FROM capacity_history WHERE vcenter = ?1 AND t_ms >= ?2 AND t_ms < ?3) WHERE n > 1)";
    return from < to ? db_run(db->h, sql, WRITING, DB_TEXT(vcenter), DB_INT(from), DB_INT(to),
                              DB_INT(bucket_ms))
                     : 0;
}

int db_capacity_record(struct db *db, const char *vcenter, int64_t t_ms, int64_t prev_ms)
{
    /* Inaccessible datastores report stale sizes, unknown ones none: neither is a point. */
    static const char ins[] =
        "INSERT INTO capacity_history (vcenter, kind, moref, t_ms, capacity, free_space,"
        " uncommitted)"
        " SELECT vcenter, 'datastore', moref, ?2, capacity, free_space, uncommitted"
        " FROM datastores WHERE vcenter = ?1 AND capacity > 0 AND free_space >= 0"
        " AND coalesce(accessible, 1)"
        " UNION ALL SELECT vcenter, 'storage_pod', moref, ?2, capacity, free_space, NULL"
        " FROM storage_pods WHERE vcenter = ?1 AND capacity > 0 AND free_space >= 0";
    static const char old[] = "DELETE FROM capacity_history WHERE vcenter = ?1 AND t_ms < ?2";
    int r = db_run(db->h, ins, WRITING, DB_TEXT(vcenter), DB_INT(t_ms));

    /* Only what crossed an age since the previous poll needs thinning (with the rest of its
     * bucket); what is older was thinned then. Without one, everything is looked at. */
    if (r == 0) {
        int64_t from = prev_ms > 0 ? prev_ms - DB_THIN_HOUR_AFTER : 0;
        r = thin(db, vcenter, from - from % DB_HOUR_MS, t_ms - DB_THIN_HOUR_AFTER, DB_HOUR_MS);
    }
    if (r == 0) {
        const int64_t day = 86400000;
        int64_t from = prev_ms > 0 ? prev_ms - DB_THIN_DAY_AFTER : 0;
        r = thin(db, vcenter, from - from % day, t_ms - DB_THIN_DAY_AFTER, day);
    }
    if (r == 0 && db->capacity_retention_ms > 0) {
        int64_t before = t_ms - db->capacity_retention_ms;
        r = db_run(db->h, old, WRITING, DB_TEXT(vcenter), DB_INT(before));
    }
    return r;
}

int db_runway_record(struct db *db, const char *vcenter, int64_t now_ms,
                     const struct db_runway_row *rows, size_t n)
{
    static const char ins_sql[] =
        "INSERT INTO runway (vcenter, moref, kind, computed_ms, runway_json, warn_free_pct,"
        " crit_free_pct) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";
    sqlite3_stmt *st = NULL;
    int rc, r;

    assert(db && vcenter && (rows || n == 0));
    r = db_exec(db->h, "BEGIN IMMEDIATE");
    if (r < 0)
        return r;
    r = db_run(db->h, "DELETE FROM runway WHERE vcenter = ?1", WRITING, DB_TEXT(vcenter));
    if (r < 0)
        goto fail;
    rc = sqlite3_prepare_v2(db->h, ins_sql, -1, &st, NULL);
    for (size_t i = 0; i < n && rc == SQLITE_OK; i++) {
        rc = db_bind(st, DB_TEXT(vcenter), DB_TEXT(rows[i].moref), DB_TEXT(rows[i].kind),
                     DB_INT(now_ms), DB_TEXT(rows[i].json), DB_REAL(rows[i].warn_free_pct),
                     DB_REAL(rows[i].crit_free_pct));
        if (rc == SQLITE_OK)
            rc = sqlite3_step(st);
        if (rc == SQLITE_DONE)
            rc = sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_OK) {
        r = db_fail(db->h, rc, "recording runway estimates");
        goto fail;
    }
    /* The datastores page and /metrics show runway: their cached answers are old from this
     * commit on (db_content_stamp()), which the findings' own change, a commit before, does
     * not cover. */
    r = db_note_change(db, "runway");
    if (r == 0)
        r = db_exec(db->h, "COMMIT");
    if (r == 0)
        return 0;
fail:
    if (!sqlite3_get_autocommit(db->h))
        sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
    return r;
}

/* Finds the object: its moref, kind and name into the out parameters (sqlite3_mprintf'd). */
static int find_object(struct db *db, const char *vcenter, const char *moref, const char *name,
                       char **out_moref, char **out_kind, char **out_name)
{
    static const char sql[] =
        "SELECT moref, 'datastore', name FROM datastores WHERE vcenter = ?1"
        " AND (moref = ?2 OR (?2 IS NULL AND name = ?3))"
        " UNION ALL SELECT moref, 'storage_pod', name FROM storage_pods WHERE vcenter = ?1"
        " AND (moref = ?2 OR (?2 IS NULL AND name = ?3)) LIMIT 2";
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db->h, sql, -1, &st, NULL), found = 0, r = 0;

    if (rc == SQLITE_OK)
        rc = db_bind(st, DB_TEXT(vcenter), DB_TEXT(moref), DB_TEXT(name));
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (++found > 1)
            break;
        *out_moref = sqlite3_mprintf("%s", sqlite3_column_text(st, 0));
        *out_kind = sqlite3_mprintf("%s", sqlite3_column_text(st, 1));
        *out_name = sqlite3_mprintf("%s", sqlite3_column_text(st, 2) ? (const char *)
                                                   sqlite3_column_text(st, 2) : "");
        rc = *out_moref && *out_kind && *out_name ? SQLITE_OK : SQLITE_NOMEM;
    }
    if (found > 1)
        r = -EEXIST;
    else if (rc != SQLITE_DONE)
        r = db_fail(db->h, rc, "finding a datastore");
    else if (!found)
        r = -VSL_ENOTFOUND;
    sqlite3_finalize(st);
    return r;
}

static json_t *int_or_null(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? json_null()
                                                     : json_integer(sqlite3_column_int64(st, i));
}

/* Appends the point of the current row of st to the array points (a db_row_fn). */
static int append_point(sqlite3_stmt *st, void *points)
{
    json_t *p =
        json_pack("{s:o,s:o,s:o,s:o}", "t", db_json_time(st, 0), "capacity", int_or_null(st, 1),
                  "free_space", int_or_null(st, 2), "uncommitted", int_or_null(st, 3));

    return p && json_array_append_new(points, p) == 0 ? 0 : -ENOMEM;
}

int db_capacity_series(struct db *db, const char *vcenter, const char *moref, const char *name,
                       json_t **out)
{
    static const char pts_sql[] =
        "SELECT t_ms, capacity, free_space, uncommitted FROM capacity_history"
        " WHERE vcenter = ?1 AND moref = ?2 ORDER BY t_ms";
    static const char rw_sql[] =
        "SELECT runway_json, computed_ms, warn_free_pct, crit_free_pct FROM runway"
        " WHERE vcenter = ?1 AND moref = ?2";
    char *m = NULL, *kind = NULL, *nm = NULL;
    sqlite3_stmt *st = NULL;
    json_t *o = NULL, *points = json_array();
    int r;

    assert(db && vcenter && out && (moref || name));
    *out = NULL;
    if (!points)
        return -ENOMEM;
    /* One read transaction: the points and the estimate of one committed state. */
    r = db_exec(db->h, "BEGIN");
    if (r == 0)
        r = find_object(db, vcenter, moref, name, &m, &kind, &nm);
    if (r == 0)
        r = db_each(db->h, pts_sql, "reading the capacity history", append_point, points,
                    DB_TEXT(vcenter), DB_TEXT(m));
    if (r < 0)
        goto out;
    /* Before an evaluation estimated it, as the inventory pages show it. */
    o = json_pack("{s:s,s:s,s:s,s:s,s:O,s:o,s:n,s:n,s:n}", "vcenter", vcenter, "moref", m, "name",
                  nm, "kind", kind, "points", points, "runway",
                  json_loads(DB_RUNWAY_NONE, 0, NULL), "computed", "warn_free_pct",
                  "crit_free_pct");
    if (!o) {
        r = -ENOMEM;
        goto out;
    }
    r = db_row(db->h, rw_sql, &st, "reading the runway", DB_TEXT(vcenter), DB_TEXT(m));
    if (r == 0) {
        const char *j = (const char *)sqlite3_column_text(st, 0);
        json_t *rw = j ? json_loads(j, 0, NULL) : NULL;
        if (rw)
            json_object_set_new(o, "runway", rw);
        json_object_set_new(o, "computed", db_json_time(st, 1));
        json_object_set_new(o, "warn_free_pct", json_real(sqlite3_column_double(st, 2)));
        json_object_set_new(o, "crit_free_pct", json_real(sqlite3_column_double(st, 3)));
    }
    if (r == 0 || r == -VSL_ENOTFOUND) {
        *out = o;
        o = NULL;
        r = 0;
    }
out:
    sqlite3_finalize(st);
    if (!sqlite3_get_autocommit(db->h))
        sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL);
    sqlite3_free(m);
    sqlite3_free(kind);
    sqlite3_free(nm);
    json_decref(points);
    json_decref(o);
    return r;
}
