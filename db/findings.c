/* Findings and their history: recording one evaluation (first_seen, last_seen, resolved_at by
 * fingerprint), and reading them back filtered, keyset-paginated and summarised for the API. */
#define _GNU_SOURCE /* memmem */
#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db/changes.h"
#include "db/db-private.h"
#include "db/findings.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/isotime.h"
#include "util/log.h"

/* The sort order of db_findings_query, which is also the index findings_order (migration 2):
 * the keyset of a cursor is these five columns of the last row of a page. */
#define ORDER_BY " ORDER BY severity_order, check_id, vcenter, object_name, fingerprint"
#define AFTER_CURSOR                                                                               \
    " AND (severity_order, check_id, vcenter, object_name, fingerprint) >"                         \
    " (:c_order, :c_check, :c_vcenter, :c_name, :c_fingerprint)"

/* The positions of select_findings()'s expressions after the columns; FX_sort is there only
 * in a page of another order than the default. */
enum { FX_first_mode = F_NCOLS, FX_resolved_mode, FX_evidence_valid, FX_last_seen, FX_sort };

/* The other orders (f->sort): one column, then the fingerprint, which makes the key unique.
 * Their cursor is (sort, key, fingerprint): the sort in it refuses a cursor of another order. */
static const struct sort_key {
    const char *name, *col;
    int fcol, integer;
} sort_keys[] = {
    {"severity", "severity_order", F_severity_order, 1}, /* only as "-severity": info first */
    {"first_seen", "first_seen_ms", F_first_seen_ms, 1},
    {"last_seen", DB_LAST_SEEN_SQL("findings"), FX_last_seen, 1},
    {"check", "check_id", F_check_id, 0},
    {"object", "object_name", F_object_name, 0},
};
#define SORT_CURSOR_FIELDS 3

const char *const db_findings_sorts[] = {"severity", "first_seen", "last_seen", "check",
                                         "object",   NULL};

#define MAX_SQL    2048
#define SORT_MAX   2000 /* matches up to which a page is sorted rather than walked */

/* status filter -> condition. NULL (the default) is everything not resolved. "new" is open and
 * seen for the first time in the latest evaluation: the row's own last_seen_ms equals its
 * first_seen_ms only then, because an evaluation rewrites (moving last_seen_ms) every row that
 * was new at the evaluation before, and a row it leaves as it was keeps an older
 * last_seen_ms; one that evaluation could not verify is marked unverified. */
#define NEW_SQL "first_seen_ms = last_seen_ms AND unverified_since_ms IS NULL"
static const struct {
    const char *name, *sql;
} status_filters[] = {
    {"new", "status = 'open' AND " NEW_SQL},
    {"open", "status = 'open'"},
    {"waived", "status = 'waived'"},
    {"resolved", "status = 'resolved'"},
};
/* Spelled as the statuses it keeps, not as "<> 'resolved'": an inequality cannot search an
 * index, and resolved findings are the part of the table that grows forever. */
static const char unresolved_sql[] = "status IN ('open', 'waived')";

/* Binds s to the named parameter if the statement has it (the SQL is built from fragments). */
static int bind_named(sqlite3_stmt *st, const char *name, const char *s)
{
    int i = sqlite3_bind_parameter_index(st, name);

    return i ? db_bind_text(st, i, s) : SQLITE_OK;
}

/* ---- recording ---------------------------------------------------------------------------- */

/* A finding seen again keeps its first_seen, unless it had been resolved: then it is a new
 * occurrence and starts over. Seen again, it is verified: whatever said otherwise is cleared.
 * SET expressions see the row as it was before the update. */
static const char upsert_sql[] =
    "INSERT INTO findings (fingerprint, check_id, title, vcenter, object_type, object_moref,"
    " object_name, detail, severity, status, message, evidence_json, waiver_reason,"
    " waiver_expires, first_seen_ms, last_seen_ms, resolved_at_ms, host_moref, host_name,"
    " first_poll)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?15, NULL, ?16,"
    " ?17, ?18)"
    " ON CONFLICT (fingerprint) DO UPDATE SET check_id = excluded.check_id,"
    " title = excluded.title, vcenter = excluded.vcenter, object_type = excluded.object_type,"
    " object_moref = excluded.object_moref, object_name = excluded.object_name,"
    " detail = excluded.detail, severity = excluded.severity, status = excluded.status,"
    " message = excluded.message, evidence_json = excluded.evidence_json,"
    " waiver_reason = excluded.waiver_reason, waiver_expires = excluded.waiver_expires,"
    " first_seen_ms = CASE WHEN status = 'resolved' THEN excluded.first_seen_ms"
    " ELSE first_seen_ms END,"
    " first_poll = CASE WHEN status = 'resolved' THEN excluded.first_poll ELSE first_poll END,"
    " last_seen_ms = excluded.last_seen_ms, resolved_at_ms = NULL, resolved_poll = NULL,"
    " host_moref = excluded.host_moref, host_name = excluded.host_name,"
    " unverified_since_ms = NULL, unverified_reason = NULL, resolution = NULL"
    /* Only a row that is not already all of that: rewriting an unchanged row (its evidence
     * and index entries with it) just to move last_seen_ms was most of a run's cost; its
     * last_seen is the evaluation's time in the evaluations table. A row that was new at the
     * evaluation before is rewritten all the same, so that it is no longer "new" (NEW_SQL). */
    " WHERE findings.status NOT IN ('open', 'waived') OR findings.unverified_since_ms IS NOT NULL"
    " OR findings.first_seen_ms = findings.last_seen_ms"
    " OR findings.status IS NOT excluded.status OR findings.check_id IS NOT excluded.check_id"
    " OR findings.title IS NOT excluded.title OR findings.vcenter IS NOT excluded.vcenter"
    " OR findings.object_type IS NOT excluded.object_type"
    " OR findings.object_moref IS NOT excluded.object_moref"
    " OR findings.object_name IS NOT excluded.object_name"
    " OR findings.detail IS NOT excluded.detail OR findings.severity IS NOT excluded.severity"
    " OR findings.message IS NOT excluded.message"
    " OR findings.evidence_json IS NOT excluded.evidence_json"
    " OR findings.waiver_reason IS NOT excluded.waiver_reason"
    " OR findings.waiver_expires IS NOT excluded.waiver_expires"
    " OR findings.host_moref IS NOT excluded.host_moref"
    " OR findings.host_name IS NOT excluded.host_name OR findings.resolution IS NOT NULL";

/* The unresolved findings of a vCenter; those this evaluation did not emit are each either
 * fixed, or could not be verified this time. */
static const char missing_sql[] =
    "SELECT fingerprint, check_id, host_moref, object_moref FROM findings"
    " WHERE vcenter = ?1 AND status IN ('open', 'waived')";

/* Kept as it was; the first unverified evaluation is remembered as "since". Its last_seen from
 * then on is the row's own: the time the evaluation before saw it, written into the row (the
 * SET sees the row and the evaluations table as they were before this evaluation). */
static const char unverify_sql[] =
    "UPDATE findings SET last_seen_ms = " DB_LAST_SEEN_SQL("findings") ","
    " unverified_since_ms = coalesce(unverified_since_ms, ?2),"
    " unverified_reason = ?3 WHERE fingerprint = ?1";

static const char resolve_sql[] =
    "UPDATE findings SET last_seen_ms = " DB_LAST_SEEN_SQL("findings") ","
    " status = 'resolved', resolved_at_ms = ?2, resolution = ?3,"
    " resolved_poll = ?4, unverified_since_ms = NULL, unverified_reason = NULL"
    " WHERE fingerprint = ?1";

/* After the findings: from now on every open or waived finding of the vCenter that the
 * evaluation verified was seen at its time. */
static const char evaluated_sql[] =
    "INSERT INTO evaluations (vcenter, evaluated_ms) VALUES (?1, ?2)"
    " ON CONFLICT (vcenter) DO UPDATE SET evaluated_ms = excluded.evaluated_ms";

/* The poll whose snapshot an evaluation of vcenter judges: its latest successful one (a full
 * read, or an incremental round that applied changes). 0 when it has none. */
static int judged_poll(struct db *db, const char *vcenter, int64_t *id)
{
    static const char sql[] = "SELECT id FROM polls WHERE vcenter = ?1 AND ok = 1"
                              " ORDER BY id DESC LIMIT 1";
    sqlite3_stmt *st = NULL;
    int r = db_row(db->h, sql, &st, "reading the last poll", DB_TEXT(vcenter));

    *id = r == 0 ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    return r == -VSL_ENOTFOUND ? 0 : r;
}

static int upsert(sqlite3_stmt *st, const char *vcenter, const struct finding *f,
                  int64_t now_ms, int64_t poll)
{
    char *dumped = NULL; /* owned */
    const char *evidence = f->evidence_json;
    int rc;

    assert(f->check_id && (f->evidence || f->evidence_json));
    if (!evidence && !(evidence = dumped = json_dumps(f->evidence, FINDING_EVIDENCE_FLAGS)))
        return SQLITE_NOMEM;
    /* The object's name is never NULL: it is part of the sort key, and a row-value comparison
     * with NULL would drop the row from every page after the first. */
    rc = db_bind(st, DB_TEXT(f->fingerprint), DB_TEXT(f->check_id), DB_TEXT(f->check_title),
                 DB_TEXT(vcenter), DB_TEXT(f->object_type), DB_TEXT(f->object_moref),
                 DB_TEXT(f->object_name ? f->object_name : ""), DB_TEXT(f->detail),
                 DB_TEXT(vsl_severity_name(f->severity)),
                 DB_TEXT(f->waiver_reason ? "waived" : "open"), DB_TEXT(f->message),
                 DB_TEXT(evidence), DB_TEXT(f->waiver_reason), DB_TEXT(f->waiver_expires),
                 DB_INT(now_ms), DB_TEXT(f->host_moref), DB_TEXT(f->host_name),
                 poll ? DB_INT(poll) : DB_NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    free(dumped);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

static int has_id(const char *const *list, size_t n, const char *id)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(list[i], id) == 0)
            return 1;
    return 0;
}

/* What becomes of an unresolved finding of check id on host/object (either may be NULL) that
 * this evaluation did not emit: NULL = kept, unverified, *reason saying why (into buf); else
 * resolved, and the resolution: "fixed" when its check completed and read all it needs there,
 * "disabled" when the configuration turned its check off. A check that did not complete for
 * any other reason (it failed, or it no longer exists) proves nothing. */
static const char *verdict(const struct evaluation *ev, const char *id, const char *host,
                           const char *object, char *buf, size_t size, const char **reason)
{
    for (size_t i = 0; i < ev->n_unverified; i++) {
        const struct unverified_scope *u = &ev->unverified[i];
        if (strcmp(u->check_id, id) == 0 &&
            (!u->moref || (host && strcmp(u->moref, host) == 0) ||
             (object && strcmp(u->moref, object) == 0))) {
            *reason = u->reason;
            return NULL;
        }
    }
    if (has_id(ev->completed, ev->n_completed, id))
        return "fixed";
    if (has_id(ev->disabled, ev->n_disabled, id))
        return "disabled";
    snprintf(buf, size, "check %s did not run to completion", id);
    *reason = buf;
    return NULL;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The unresolved findings of vcenter not emitted at now_ms (not among the n fingerprints of
 * emitted, sorted), resolved or marked unverified. The rows are read first and updated after:
 * SQLite does not promise what a statement still stepping sees of updates to its own table. */
static int settle_missing(struct db *db, const char *vcenter, const struct evaluation *ev,
                          const char *const *emitted, size_t n_emitted, int64_t now_ms,
                          int64_t poll)
{
    sqlite3_stmt *sel = NULL, *unv = NULL, *fix = NULL;
    struct missing {
        char fingerprint[17];
        const char *resolution, *reason;
        char buf[160];
    } *rows = NULL;
    size_t n = 0, cap = 0;
    int rc;

    rc = sqlite3_prepare_v2(db->h, missing_sql, -1, &sel, NULL);
    if (rc == SQLITE_OK)
        rc = db_bind(sel, DB_TEXT(vcenter));
    while (rc == SQLITE_OK && (rc = sqlite3_step(sel)) == SQLITE_ROW) {
        const char *fp = (const char *)sqlite3_column_text(sel, 0);
        const char *id = (const char *)sqlite3_column_text(sel, 1);
        rc = SQLITE_OK;
        if (!fp || !id || strlen(fp) >= sizeof(rows->fingerprint))
            continue; /* not a row this code wrote */
        if (bsearch(&fp, emitted, n_emitted, sizeof(*emitted), cmp_str))
            continue; /* seen in this evaluation */
        if (vsl_grow(&rows, &cap, n, sizeof(*rows), 64) < 0) {
            rc = SQLITE_NOMEM;
            break;
        }
        struct missing *m = &rows[n++];
        memcpy(m->fingerprint, fp, strlen(fp) + 1);
        m->reason = NULL;
        m->resolution = verdict(ev, id, (const char *)sqlite3_column_text(sel, 2),
                                (const char *)sqlite3_column_text(sel, 3), m->buf,
                                sizeof(m->buf), &m->reason);
    }
    if (rc == SQLITE_DONE)
        rc = SQLITE_OK;
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db->h, unverify_sql, -1, &unv, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db->h, resolve_sql, -1, &fix, NULL);
    for (size_t i = 0; i < n && rc == SQLITE_OK; i++) {
        sqlite3_stmt *st = rows[i].resolution ? fix : unv;
        if (st == fix)
            rc = db_bind(st, DB_TEXT(rows[i].fingerprint), DB_INT(now_ms),
                         DB_TEXT(rows[i].resolution), poll ? DB_INT(poll) : DB_NULL);
        else
            rc = db_bind(st, DB_TEXT(rows[i].fingerprint), DB_INT(now_ms),
                         DB_TEXT(rows[i].reason));
        if (rc == SQLITE_OK)
            rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db->h);
        sqlite3_reset(st);
    }
    sqlite3_finalize(sel);
    sqlite3_finalize(unv);
    sqlite3_finalize(fix);
    free(rows);
    return rc;
}

int db_findings_record(struct db *db, const char *vcenter, const struct evaluation *ev,
                       int64_t now_ms)
{
    sqlite3_stmt *ins = NULL;
    const char **emitted = NULL; /* borrowed from ev, sorted: owned array only */
    int64_t poll = 0;
    struct vsl_watch w;
    size_t i, written = 0;
    int rc, r = 0;

    assert(db && vcenter && ev);
    assert(!db->in_snapshot);
    vsl_watch_start(&w);
    emitted = malloc((ev->n_findings ? ev->n_findings : 1) * sizeof(*emitted));
    if (!emitted)
        return -ENOMEM;
    for (i = 0; i < ev->n_findings; i++)
        emitted[i] = ev->findings[i].fingerprint;
    qsort(emitted, ev->n_findings, sizeof(*emitted), cmp_str);
    /* IMMEDIATE: take the write lock now (waiting out a poll's commit) rather than fail on
     * the first insert. */
    rc = sqlite3_exec(db->h, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    if (rc != SQLITE_OK) {
        free(emitted);
        return db_fail(db->h, rc, "recording findings");
    }
    r = judged_poll(db, vcenter, &poll);
    if (r < 0) {
        sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
        free(emitted);
        return r;
    }
    rc = sqlite3_prepare_v2(db->h, upsert_sql, -1, &ins, NULL);
    for (i = 0; i < ev->n_findings && rc == SQLITE_OK; i++) {
        rc = upsert(ins, vcenter, &ev->findings[i], now_ms, poll);
        written += (size_t)sqlite3_changes(db->h);
    }
    if (rc == SQLITE_OK)
        rc = settle_missing(db, vcenter, ev, emitted, ev->n_findings, now_ms, poll);
    if (rc == SQLITE_OK && db_run(db->h, evaluated_sql, "recording the evaluation",
                                  DB_TEXT(vcenter), DB_INT(now_ms)) < 0)
        rc = sqlite3_errcode(db->h) != SQLITE_OK ? sqlite3_errcode(db->h) : SQLITE_ERROR;
    /* Every evaluation moves last_seen: the API's cached answers are old from this commit on
     * (db_content_stamp()). */
    if (rc == SQLITE_OK && (r = db_note_change(db, "findings")) < 0)
        goto fail;
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL);
    if (rc != SQLITE_OK)
        r = db_fail(db->h, rc, "recording findings");
fail:
    if (r < 0 && sqlite3_get_autocommit(db->h) == 0)
        sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_finalize(ins);
    free(emitted);
    if (r == 0) {
        double wall, cpu;
        vsl_watch_read(&w, &wall, &cpu);
        log_debug("db: recorded %zu findings of vCenter %s in %.3f s, CPU %.3f s (%zu rows "
                  "written, the others unchanged)",
                  ev->n_findings, vcenter, wall, cpu, written);
    }
    return r;
}

/* ---- reading ------------------------------------------------------------------------------ */

/* f->sort as the key of another order than the default (*k NULL for the default), and whether
 * it is reversed. -EINVAL for a sort this file does not know. */
static int parse_sort(const char *sort, const struct sort_key **k, int *desc)
{
    *k = NULL;
    *desc = sort && sort[0] == '-';
    if (!sort || strcmp(sort, "severity") == 0)
        return 0;
    for (size_t i = 0; i < sizeof(sort_keys) / sizeof(sort_keys[0]); i++)
        if (strcmp(sort + *desc, sort_keys[i].name) == 0) {
            /* "severity" ascending is the default order, with its own cursor */
            *k = &sort_keys[i];
            return 0;
        }
    return -EINVAL;
}

/* The stored evidence, parsed back; {} if it is missing or was damaged. */
static json_t *jevidence(sqlite3_stmt *st, int i)
{
    const char *s = (const char *)sqlite3_column_text(st, i);
    json_t *v = s ? json_loads(s, 0, NULL) : NULL;

    return v ? v : json_object();
}

/* The reported status: an open finding first seen in the latest evaluation is "new". */
static const char *status_of(sqlite3_stmt *st)
{
    const char *s = (const char *)sqlite3_column_text(st, F_status);

    if (s && strcmp(s, "open") == 0 &&
        sqlite3_column_int64(st, F_first_seen_ms) == sqlite3_column_int64(st, F_last_seen_ms) &&
        sqlite3_column_type(st, F_unverified_since_ms) == SQLITE_NULL)
        return "new";
    return s ? s : "open";
}

/* {"moref": ..., "name": ...} of the host a finding is on or about, or null. */
static json_t *jhost(sqlite3_stmt *st)
{
    if (sqlite3_column_type(st, F_host_moref) == SQLITE_NULL)
        return json_null();
    return json_pack("{s:o,s:o}", "moref", db_json_text(st, F_host_moref), "name", db_json_text(st, F_host_name));
}

/* {"poll": id, "mode": ...} of the poll in column i, or null (none recorded: before schema
 * version 10, or no successful poll yet). mode is null if that poll's row is gone. */
static json_t *jpoll(sqlite3_stmt *st, int i, int mode)
{
    if (sqlite3_column_type(st, i) == SQLITE_NULL)
        return json_null();
    return json_pack("{s:I,s:o}", "poll", (json_int_t)sqlite3_column_int64(st, i), "mode",
                     db_json_text(st, mode));
}

/* {"since": ..., "reason": ...} when the latest evaluation could not verify it, or null. */
static json_t *junverified(sqlite3_stmt *st)
{
    if (sqlite3_column_type(st, F_unverified_since_ms) == SQLITE_NULL)
        return json_null();
    return json_pack("{s:o,s:o}", "since", db_json_time(st, F_unverified_since_ms), "reason",
                     db_json_text(st, F_unverified_reason));
}

/* The current row of a select_findings() statement in the shape of db/findings.h. NULL only when
 * out of memory. */
static json_t *finding_json(sqlite3_stmt *st)
{
    json_t *o = json_object(), *obj = json_object(), *w = json_null();

    if (!o || !obj)
        goto fail;
    if (sqlite3_column_type(st, F_waiver_reason) != SQLITE_NULL) {
        w = json_object();
        if (!w || json_object_set_new(w, "reason", db_json_text(st, F_waiver_reason)) ||
            json_object_set_new(w, "expires", db_json_text(st, F_waiver_expires)))
            goto fail;
    }
    if (json_object_set_new(obj, "type", db_json_text(st, F_object_type)) ||
        json_object_set_new(obj, "moref", db_json_text(st, F_object_moref)) ||
        json_object_set_new(obj, "name", db_json_text(st, F_object_name)))
        goto fail;
    if (json_object_set_new(o, "fingerprint", db_json_text(st, F_fingerprint)) ||
        json_object_set_new(o, "check", db_json_text(st, F_check_id)) ||
        json_object_set_new(o, "title", db_json_text(st, F_title)) ||
        json_object_set_new(o, "severity", db_json_text(st, F_severity)) ||
        json_object_set_new(o, "status", json_string(status_of(st))) ||
        json_object_set_new(o, "vcenter", db_json_text(st, F_vcenter)) ||
        json_object_set_new(o, "object", obj) ||
        json_object_set_new(o, "host", jhost(st)) ||
        json_object_set_new(o, "detail", db_json_text(st, F_detail)) ||
        json_object_set_new(o, "message", db_json_text(st, F_message)) ||
        json_object_set_new(o, "evidence", jevidence(st, F_evidence_json)) ||
        json_object_set_new(o, "first_seen", db_json_time(st, F_first_seen_ms)) ||
        json_object_set_new(o, "last_seen", db_json_time(st, FX_last_seen)) ||
        json_object_set_new(o, "unverified", junverified(st)) ||
        json_object_set_new(o, "resolved_at", db_json_time(st, F_resolved_at_ms)) ||
        json_object_set_new(o, "resolution", db_json_text(st, F_resolution)) ||
        json_object_set_new(o, "waiver", w) ||
        json_object_set_new(o, "first_seen_by", jpoll(st, F_first_poll, FX_first_mode)) ||
        json_object_set_new(o, "resolved_by", jpoll(st, F_resolved_poll, FX_resolved_mode))) {
        /* set_new has taken obj and w whether or not it succeeded */
        json_decref(o);
        return NULL;
    }
    return o;

fail:
    json_decref(w);
    json_decref(obj);
    json_decref(o);
    return NULL;
}

/* ---- the same row as JSON text --------------------------------------------------------------- */

const char *const db_finding_fields[] = {
    [DB_FF_FINGERPRINT] = "fingerprint", [DB_FF_CHECK] = "check",
    [DB_FF_TITLE] = "title",             [DB_FF_SEVERITY] = "severity",
    [DB_FF_STATUS] = "status",           [DB_FF_VCENTER] = "vcenter",
    [DB_FF_OBJECT] = "object",           [DB_FF_HOST] = "host",
    [DB_FF_DETAIL] = "detail",           [DB_FF_MESSAGE] = "message",
    [DB_FF_EVIDENCE] = "evidence",       [DB_FF_FIRST_SEEN] = "first_seen",
    [DB_FF_LAST_SEEN] = "last_seen",     [DB_FF_UNVERIFIED] = "unverified",
    [DB_FF_RESOLVED_AT] = "resolved_at", [DB_FF_RESOLUTION] = "resolution",
    [DB_FF_WAIVER] = "waiver",           [DB_FF_FIRST_SEEN_BY] = "first_seen_by",
    [DB_FF_RESOLVED_BY] = "resolved_by", [DB_NFF] = NULL,
};

/* Column i as a JSON string, or null (NULL, or not UTF-8: as db_json_text()). */
static int text_col(struct vsl_buf *b, sqlite3_stmt *st, int i)
{
    const char *s = (const char *)sqlite3_column_text(st, i);
    int r = s ? vsl_buf_addjson(b, s, (size_t)sqlite3_column_bytes(st, i)) : -EILSEQ;

    return r == -EILSEQ ? vsl_buf_addstr(b, "null") : r;
}

/* Column i (unix ms) as an ISO-8601 string, or null (as db_json_time()). */
static int time_col(struct vsl_buf *b, sqlite3_stmt *st, int i)
{
    char buf[32];
    const char *s = sqlite3_column_type(st, i) == SQLITE_NULL
                        ? NULL
                        : vsl_iso_time(sqlite3_column_int64(st, i), buf, sizeof(buf));
    int r;

    if (!s)
        return vsl_buf_addstr(b, "null");
    r = vsl_buf_add(b, "\"", 1);
    if (r == 0)
        r = vsl_buf_addstr(b, s);
    return r == 0 ? vsl_buf_add(b, "\"", 1) : r;
}

/* {"a":column,"b":column}, both text (or time, when times), or null when column a is NULL. */
static int pair(struct vsl_buf *b, sqlite3_stmt *st, const char *a, int ca, const char *bn,
                int cb, int times)
{
    int r;

    if (sqlite3_column_type(st, ca) == SQLITE_NULL)
        return vsl_buf_addstr(b, "null");
    r = vsl_buf_printf(b, "{\"%s\":", a);
    if (r == 0)
        r = times ? time_col(b, st, ca) : text_col(b, st, ca);
    if (r == 0)
        r = vsl_buf_printf(b, ",\"%s\":", bn);
    if (r == 0)
        r = text_col(b, st, cb);
    return r == 0 ? vsl_buf_add(b, "}", 1) : r;
}

/* {"poll":id,"mode":...} of the poll in column i, or null (as jpoll()). */
static int poll_text(struct vsl_buf *b, sqlite3_stmt *st, int i, int mode)
{
    int r;

    if (sqlite3_column_type(st, i) == SQLITE_NULL)
        return vsl_buf_addstr(b, "null");
    r = vsl_buf_printf(b, "{\"poll\":%lld,\"mode\":", (long long)sqlite3_column_int64(st, i));
    if (r == 0)
        r = text_col(b, st, mode);
    return r == 0 ? vsl_buf_add(b, "}", 1) : r;
}

/* Whether the stored evidence text s[0..n) of the current row is what jevidence() parses to
 * an object (else it answers {}): an object's text that SQLite's json_valid() accepts, and,
 * where it holds an escaped NUL (which jansson refuses without JSON_ALLOW_NUL and SQLite
 * takes), one jansson parses too: a rare text, parsed only then. */
static int evidence_object(sqlite3_stmt *st, const char *s, size_t n)
{
    if (n < 2 || s[0] != '{' || s[n - 1] != '}' || memchr(s, '\0', n) ||
        sqlite3_column_int(st, FX_evidence_valid) != 1)
        return 0;
    if (memmem(s, n, "\\u0000", 6)) {
        json_t *v = json_loadb(s, n, 0, NULL);
        int ok = json_is_object(v);
        json_decref(v);
        return ok;
    }
    return 1;
}

/* The stored evidence as it is: we wrote it with json_dumps(), so it is JSON already and needs
 * no jansson parse and re-serialisation per request (most of a page's time was that). Text
 * that is not a JSON object (damaged by hand: SQLite's json_valid() in the SELECT, a C parse
 * far cheaper than a tree) is answered as {}, as finding_json() does, so that one damaged row
 * cannot make the whole report invalid JSON. */
static int evidence_text(struct vsl_buf *b, sqlite3_stmt *st)
{
    const char *s = (const char *)sqlite3_column_text(st, F_evidence_json);
    size_t n = s ? (size_t)sqlite3_column_bytes(st, F_evidence_json) : 0;

    if (!evidence_object(st, s, n))
        return vsl_buf_addstr(b, "{}");
    return vsl_buf_add(b, s, n);
}

/* The current row of a select_findings() statement as finding_json() would write it (the same
 * members in the same order), keeping only the members whose bit (1 << DB_FF_*) is in fields. */
static int finding_text(struct vsl_buf *b, sqlite3_stmt *st, unsigned fields)
{
    int r = vsl_buf_add(b, "{", 1), first = 1;

    for (int i = 0; r == 0 && i < DB_NFF; i++) {
        if (!(fields & (1u << i)))
            continue;
        /* ,"name": without printf: the printf calls of this function were a sixth of the CPU
         * time of `check --format json` writing 15,778 findings. */
        r = vsl_buf_add(b, first ? "\"" : ",\"", first ? 1 : 2);
        if (r == 0)
            r = vsl_buf_addstr(b, db_finding_fields[i]);
        if (r == 0)
            r = vsl_buf_add(b, "\":", 2);
        first = 0;
        if (r < 0)
            break;
        switch ((enum db_finding_field)i) {
        case DB_FF_FINGERPRINT: r = text_col(b, st, F_fingerprint); break;
        case DB_FF_CHECK: r = text_col(b, st, F_check_id); break;
        case DB_FF_TITLE: r = text_col(b, st, F_title); break;
        case DB_FF_SEVERITY: r = text_col(b, st, F_severity); break;
        case DB_FF_STATUS: r = vsl_buf_addjson(b, status_of(st), strlen(status_of(st))); break;
        case DB_FF_VCENTER: r = text_col(b, st, F_vcenter); break;
        case DB_FF_OBJECT:
            r = vsl_buf_addstr(b, "{\"type\":");
            if (r == 0)
                r = text_col(b, st, F_object_type);
            if (r == 0)
                r = vsl_buf_addstr(b, ",\"moref\":");
            if (r == 0)
                r = text_col(b, st, F_object_moref);
            if (r == 0)
                r = vsl_buf_addstr(b, ",\"name\":");
            if (r == 0)
                r = text_col(b, st, F_object_name);
            if (r == 0)
                r = vsl_buf_add(b, "}", 1);
            break;
        case DB_FF_HOST: r = pair(b, st, "moref", F_host_moref, "name", F_host_name, 0); break;
        case DB_FF_DETAIL: r = text_col(b, st, F_detail); break;
        case DB_FF_MESSAGE: r = text_col(b, st, F_message); break;
        case DB_FF_EVIDENCE: r = evidence_text(b, st); break;
        case DB_FF_FIRST_SEEN: r = time_col(b, st, F_first_seen_ms); break;
        case DB_FF_LAST_SEEN: r = time_col(b, st, FX_last_seen); break;
        case DB_FF_UNVERIFIED:
            r = pair(b, st, "since", F_unverified_since_ms, "reason", F_unverified_reason, 1);
            break;
        case DB_FF_RESOLVED_AT: r = time_col(b, st, F_resolved_at_ms); break;
        case DB_FF_RESOLUTION: r = text_col(b, st, F_resolution); break;
        case DB_FF_WAIVER:
            r = pair(b, st, "reason", F_waiver_reason, "expires", F_waiver_expires, 0);
            break;
        case DB_FF_FIRST_SEEN_BY: r = poll_text(b, st, F_first_poll, FX_first_mode); break;
        case DB_FF_RESOLVED_BY: r = poll_text(b, st, F_resolved_poll, FX_resolved_mode); break;
        case DB_NFF: break;
        }
    }
    return r == 0 ? vsl_buf_add(b, "}", 1) : r;
}

/* ---- cursors ------------------------------------------------------------------------------ */

/* The sort key of the last row of a page: severity order, check, vCenter, object name and
 * fingerprint. Self-contained, so a page stays correct even if the row it ended on has since
 * changed or gone. */
static const int cursor_cols[DB_CURSOR_FIELDS] = {F_severity_order, F_check_id, F_vcenter,
                                                   F_object_name, F_fingerprint};

/* Parses a cursor and its severity order (field 0). -EINVAL for anything not made here. */
/* The severity order of a findings cursor c, its first field, into *order. */
static int cursor_order(const struct db_cursor *c, int *order)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(c->field[0], &end, 10);
    if (errno || end == c->field[0] || *end || v < 0 || v > SEV_CRITICAL)
        return -EINVAL;
    *order = (int)v;
    return 0;
}

/* Whether the cursor c (of SORT_CURSOR_FIELDS) was made for the order k (desc): its sort as
 * select_findings() wrote it, and an integer key where the column is one. -EINVAL if not. */
static int cursor_sort(const struct db_cursor *c, const struct sort_key *k, int desc)
{
    const char *tag = c->field[0];
    char *end;

    if ((desc && *tag++ != '-') || strcmp(tag, k->name))
        return -EINVAL;
    if (!k->integer)
        return 0;
    errno = 0;
    (void)strtoll(c->field[1], &end, 10);
    return errno || end == c->field[1] || *end ? -EINVAL : 0;
}

/* Binds the key and fingerprint of a cursor that cursor_sort() accepted for k. */
static int bind_sort_cursor(sqlite3_stmt *st, const struct db_cursor *c, const struct sort_key *k)
{
    int i = sqlite3_bind_parameter_index(st, ":c_key");
    int rc = k->integer ? sqlite3_bind_int64(st, i, strtoll(c->field[1], NULL, 10))
                        : db_bind_text(st, i, c->field[1]);

    return rc == SQLITE_OK ? bind_named(st, ":c_fingerprint", c->field[2]) : rc;
}

/* SELECT every column of findings (F_<col> are their positions), then the modes of its first
 * and resolving polls (FX_first_mode, FX_resolved_mode), whether the evidence is valid JSON
 * (FX_evidence_valid), FROM findings. A subquery by primary
 * key, run only for the rows a page returns: a join would have to qualify every condition. */
static int select_findings(struct vsl_buf *sql, const struct sort_key *k, int desc)
{
    int r = vsl_buf_addstr(sql, "SELECT ");

    if (r == 0)
        r = db_select_columns(sql, T_FINDINGS, "findings");
    if (r == 0)
        r = vsl_buf_addstr(sql, ", (SELECT mode FROM polls WHERE id = findings.first_poll),"
                                " (SELECT mode FROM polls WHERE id = findings.resolved_poll),"
                                " json_valid(findings.evidence_json), "
                                DB_LAST_SEEN_SQL("findings"));
    /* The order's name as a constant column (FX_sort), from sort_keys, for its cursors. */
    if (r == 0 && k)
        r = vsl_buf_printf(sql, ", '%s%s'", desc ? "-" : "", k->name);
    if (r == 0)
        r = vsl_buf_addstr(sql, " FROM findings");
    return r;
}

/* ---- queries ------------------------------------------------------------------------------ */

/* Appends the WHERE conditions of f to sql. Only constant fragments go in; every value is a
 * bound parameter. -EINVAL for a severity or status the API does not know.
 * walk: read in sort order along findings_order and stop after the page. The equality tests
 * are then written "+status", "+vcenter", "+check_id", which keeps SQLite from choosing their
 * indexes instead: at 30,000 open findings, fetching them all by status and sorting them takes
 * 15 ms, the walk well under one. (See db_findings_query for when the walk is not chosen.) */
static int where(struct vsl_buf *sql, const struct db_findings_filter *f, int *sev_order, int walk)
{
    const char *status = unresolved_sql;
    enum vsl_severity sev;
    size_t i;
    int r = 0;

    *sev_order = -1;
    if (f->severity) {
        if (vsl_severity_parse(f->severity, &sev) < 0)
            return -EINVAL;
        *sev_order = SEV_CRITICAL - (int)sev; /* "that severity and above" */
    }
    if (f->status) {
        for (status = NULL, i = 0; i < sizeof(status_filters) / sizeof(status_filters[0]); i++) {
            if (strcmp(f->status, status_filters[i].name) == 0)
                status = status_filters[i].sql;
        }
        if (!status)
            return -EINVAL;
    }
    r = vsl_buf_addstr(sql, walk ? " WHERE +" : " WHERE ");
    if (r == 0)
        r = vsl_buf_addstr(sql, status);
    if (r == 0 && f->vcenter)
        r = vsl_buf_addstr(sql, walk ? " AND +vcenter = :vcenter" : " AND vcenter = :vcenter");
    if (r == 0 && f->check)
        r = vsl_buf_addstr(sql, walk ? " AND +check_id = :check" : " AND check_id = :check");
    if (r == 0 && f->severity)
        r = vsl_buf_addstr(sql, f->severity_only ? " AND severity_order = :sev_order"
                                                 : " AND severity_order <= :sev_order");
    /* lower() folds ASCII only, which is what host and datastore names are in practice. */
    if (r == 0 && f->object)
        r = vsl_buf_addstr(sql, " AND instr(lower(object_name), lower(:object)) > 0");
    if (r == 0 && f->host)
        r = vsl_buf_addstr(sql, " AND instr(lower(host_name), lower(:host)) > 0");
    if (r == 0 && f->unverified > 0)
        r = vsl_buf_addstr(sql, " AND unverified_since_ms IS NOT NULL");
    if (r == 0 && f->unverified < 0)
        r = vsl_buf_addstr(sql, " AND unverified_since_ms IS NULL");
    if (r == 0 && f->resolution)
        r = vsl_buf_addstr(sql, " AND resolution = :resolution");
    if (r == 0 && f->resolved_at_ms)
        r = vsl_buf_addstr(sql, " AND resolved_at_ms = :resolved_at");
    if (r == 0 && f->since_ms)
        r = vsl_buf_addstr(sql, f->status && strcmp(f->status, "resolved") == 0
                                    ? " AND resolved_at_ms >= :since"
                                    : " AND first_seen_ms >= :since");
    if (r == 0 && f->window == DB_WINDOW_FIRST_SEEN)
        r = vsl_buf_addstr(sql, " AND first_seen_ms > :w_from AND first_seen_ms <= :w_to");
    if (r == 0 && f->window == DB_WINDOW_RESOLVED)
        r = vsl_buf_addstr(sql, " AND resolved_at_ms > :w_from AND resolved_at_ms <= :w_to");
    return r;
}

/* Binds f's values, and the cursor's if the statement has them (c may be NULL). */
static int bind_filter(sqlite3_stmt *st, const struct db_findings_filter *f, int sev_order,
                       const struct db_cursor *c, int order)
{
    static const char *const key_params[DB_CURSOR_FIELDS] = {":c_order", ":c_check", ":c_vcenter",
                                                          ":c_name", ":c_fingerprint"};
    int rc, i;

    rc = bind_named(st, ":vcenter", f->vcenter);
    if (rc == SQLITE_OK)
        rc = bind_named(st, ":check", f->check);
    if (rc == SQLITE_OK)
        rc = bind_named(st, ":object", f->object);
    if (rc == SQLITE_OK)
        rc = bind_named(st, ":host", f->host);
    if (rc == SQLITE_OK)
        rc = bind_named(st, ":resolution", f->resolution);
    if (rc == SQLITE_OK && (i = sqlite3_bind_parameter_index(st, ":sev_order")))
        rc = sqlite3_bind_int(st, i, sev_order);
    if (rc == SQLITE_OK && (i = sqlite3_bind_parameter_index(st, ":resolved_at")))
        rc = sqlite3_bind_int64(st, i, f->resolved_at_ms);
    if (rc == SQLITE_OK && (i = sqlite3_bind_parameter_index(st, ":since")))
        rc = sqlite3_bind_int64(st, i, f->since_ms);
    if (rc == SQLITE_OK && (i = sqlite3_bind_parameter_index(st, ":w_from")))
        rc = sqlite3_bind_int64(st, i, f->window_from_ms);
    if (rc == SQLITE_OK && (i = sqlite3_bind_parameter_index(st, ":w_to")))
        rc = sqlite3_bind_int64(st, i, f->window_to_ms);
    if (c && rc == SQLITE_OK && (i = sqlite3_bind_parameter_index(st, key_params[0])))
        rc = sqlite3_bind_int(st, i, order);
    for (i = 1; c && i < DB_CURSOR_FIELDS && rc == SQLITE_OK; i++)
        rc = bind_named(st, key_params[i], c->field[i]);
    return rc;
}

static int prepare(struct db *db, const struct vsl_buf *sql, sqlite3_stmt **st)
{
    int rc = sqlite3_prepare_v2(db->h, sql->data, (int)sql->len, st, NULL);

    return rc == SQLITE_OK ? 0 : db_fail(db->h, rc, sql->data);
}

/* db_findings_query() and db_findings_page_text(): the page's rows go to row(st, ctx), whose
 * error ends the query. */
static int query(struct db *db, const struct db_findings_filter *f, db_row_fn *row, void *ctx,
                 int64_t *total, char **next)
{
    struct vsl_buf count_sql, page_sql;
    sqlite3_stmt *cst = NULL, *pst = NULL;
    struct db_cursor *cur = NULL;
    const struct sort_key *k;
    int cur_order = 0, desc;
    int sev_order, rc, r, in_tx = 0, n = 0;

    *total = 0;
    *next = NULL;
    vsl_buf_init(&count_sql, MAX_SQL);
    vsl_buf_init(&page_sql, MAX_SQL);
    if (f->limit < 0 || parse_sort(f->sort, &k, &desc) < 0)
        return -EINVAL;
    r = db_cursor_decode(f->cursor, k ? SORT_CURSOR_FIELDS : DB_CURSOR_FIELDS, &cur);
    if (r == 0 && cur)
        r = k ? cursor_sort(cur, k, desc) : cursor_order(cur, &cur_order);
    if (r < 0) {
        free(cur);
        return r;
    }
    r = vsl_buf_addstr(&count_sql, "SELECT count(*) FROM findings");
    if (r == 0)
        r = where(&count_sql, f, &sev_order, 0);
    if (r < 0)
        goto out;

    /* The count and the page come from one read transaction, so they agree: this one, or the
     * caller's (db_findings_read_begin()). */
    if (sqlite3_get_autocommit(db->h)) {
        rc = sqlite3_exec(db->h, "BEGIN", NULL, NULL, NULL);
        if (rc != SQLITE_OK) {
            r = db_fail(db->h, rc, "querying findings");
            goto out;
        }
        in_tx = 1;
    }
    r = db_stmt(db, count_sql.data, &cst);
    if (r < 0)
        goto out;
    rc = bind_filter(cst, f, sev_order, NULL, 0);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(cst);
    if (rc != SQLITE_ROW) {
        r = db_fail(db->h, rc, "counting findings");
        goto out;
    }
    *total = sqlite3_column_int64(cst, 0);

    /* Walking the sort order pays when matches are many: a page is found in the first rows.
     * When they are few the walk may cross the whole table to find them, and fetching them by
     * index and sorting them is cheaper; the count has just said which case this is. An object
     * filter is tested row by row either way, so there the walk, which stops early, wins. */
    r = select_findings(&page_sql, k, desc);
    /* Another order has no index to walk: its matches are fetched and sorted. */
    if (r == 0)
        r = where(&page_sql, f, &sev_order, !k && (*total > SORT_MAX || f->object || f->host));
    if (r == 0 && cur && !k)
        r = vsl_buf_addstr(&page_sql, AFTER_CURSOR);
    if (r == 0 && cur && k)
        r = vsl_buf_printf(&page_sql, " AND (%s, fingerprint) %c (:c_key, :c_fingerprint)", k->col,
                           desc ? '<' : '>');
    /* One row more than asked for says whether there is a next page. */
    if (r == 0 && !k)
        r = vsl_buf_addstr(&page_sql, ORDER_BY);
    if (r == 0 && k)
        r = vsl_buf_printf(&page_sql, " ORDER BY %s%s, fingerprint%s", k->col,
                           desc ? " DESC" : "", desc ? " DESC" : "");
    if (r == 0)
        r = vsl_buf_addstr(&page_sql, " LIMIT :limit");
    if (r == 0)
        r = db_stmt(db, page_sql.data, &pst);
    if (r < 0)
        goto out;
    rc = bind_filter(pst, f, sev_order, k ? NULL : cur, cur_order);
    if (rc == SQLITE_OK && cur && k)
        rc = bind_sort_cursor(pst, cur, k);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(pst, sqlite3_bind_parameter_index(pst, ":limit"),
                                f->limit > 0 ? (int64_t)f->limit + 1 : -1);
    if (rc != SQLITE_OK) {
        r = db_fail(db->h, rc, "querying findings");
        goto out;
    }
    while ((rc = sqlite3_step(pst)) == SQLITE_ROW) {
        if (f->limit > 0 && n == f->limit)
            break; /* the extra row: there is a next page */
        if ((r = row(pst, ctx)) < 0)
            goto out;
        n++;
        if (f->limit > 0 && n == f->limit) {
            free(*next);
            const int sort_cols[SORT_CURSOR_FIELDS] = {FX_sort, k ? k->fcol : 0, F_fingerprint};
            *next = k ? db_cursor_encode(pst, sort_cols, SORT_CURSOR_FIELDS)
                      : db_cursor_encode(pst, cursor_cols, DB_CURSOR_FIELDS);
            if (!*next) {
                r = -ENOMEM;
                goto out;
            }
        }
    }
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        r = db_fail(db->h, rc, "querying findings");
        goto out;
    }
    if (rc == SQLITE_DONE) {
        free(*next); /* the last page ended exactly at the limit */
        *next = NULL;
    }
    r = 0;
out:
    if (r < 0) {
        free(*next);
        *next = NULL;
        *total = 0;
    }
    db_stmt_done(db, cst);
    db_stmt_done(db, pst);
    if (in_tx)
        sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL);
    free(cur);
    vsl_buf_free(&count_sql);
    vsl_buf_free(&page_sql);
    return r;
}

static int append_json(sqlite3_stmt *st, void *list)
{
    json_t *el = finding_json(st);

    return el && json_array_append_new(list, el) == 0 ? 0 : -ENOMEM;
}

int db_findings_query(struct db *db, const struct db_findings_filter *f, json_t **out,
                      int64_t *total, char **next)
{
    json_t *list = json_array();
    int r;

    assert(db && f && out && total && next);
    *out = NULL;
    *next = NULL;
    *total = 0;
    if (!list)
        return -ENOMEM;
    r = query(db, f, append_json, list, total, next);
    if (r < 0)
        json_decref(list);
    else
        *out = list;
    return r;
}

struct text_page {
    struct vsl_buf *b;
    unsigned fields;
    int n;
};

static int append_text(sqlite3_stmt *st, void *ctx)
{
    struct text_page *t = ctx;
    int r = t->n ? vsl_buf_add(t->b, ",", 1) : 0;

    if (r == 0)
        r = finding_text(t->b, st, t->fields);
    t->n++;
    return r;
}

int db_findings_page_text(struct db *db, const struct db_findings_filter *f, unsigned fields,
                          struct vsl_buf *out, int *n, int64_t *total, char **next)
{
    struct text_page t = {out, fields ? fields : ~0u, 0};
    int r;

    assert(db && f && out && n && total && next);
    *next = NULL;
    r = vsl_buf_add(out, "[", 1);
    if (r == 0)
        r = query(db, f, append_text, &t, total, next);
    if (r == 0)
        r = vsl_buf_add(out, "]", 1);
    *n = t.n;
    if (r < 0) {
        free(*next);
        *next = NULL;
    }
    return r;
}

struct text_each {
    struct vsl_buf b; /* one finding's text, reused */
    unsigned fields;
    db_findings_text_fn *fn;
    void *ctx;
};

static int each_text(sqlite3_stmt *st, void *ctx)
{
    struct text_each *t = ctx;
    int r;

    vsl_buf_reset(&t->b);
    r = finding_text(&t->b, st, t->fields);
    return r < 0 ? r
                 : t->fn(t->ctx, t->b.data, t->b.len, status_of(st),
                         (const char *)sqlite3_column_text(st, F_severity));
}

int db_findings_each_text(struct db *db, const struct db_findings_filter *f, unsigned fields,
                          db_findings_text_fn *fn, void *ctx, int64_t *total)
{
    struct text_each t = {.fields = fields ? fields : ~0u, .fn = fn, .ctx = ctx};
    char *next = NULL;
    int r;

    assert(db && f && fn && total && f->limit == 0 && !f->cursor);
    /* A finding's text is its columns and its stored evidence, each bounded when stored. */
    vsl_buf_init(&t.b, 64u << 20);
    r = query(db, f, each_text, &t, total, &next);
    free(next);
    vsl_buf_free(&t.b);
    return r;
}

/* ---- the same row as the reports read it ----------------------------------------------------- */

/* Column i's text, or NULL where db_json_text() would be null (NULL, or not UTF-8). */
static const char *row_text(sqlite3_stmt *st, int i)
{
    const char *s = (const char *)sqlite3_column_text(st, i);

    return s && vsl_utf8_valid(s, (size_t)sqlite3_column_bytes(st, i)) ? s : NULL;
}

struct row_each {
    db_findings_row_fn *fn;
    void *ctx;
    char since[32]; /* the row's unverified_since as ISO-8601 */
};

static int each_row(sqlite3_stmt *st, void *ctx)
{
    struct row_each *t = ctx;
    struct db_finding_row w = {0};
    enum vsl_severity sev;

    w.fingerprint = row_text(st, F_fingerprint);
    w.check = row_text(st, F_check_id);
    w.severity = row_text(st, F_severity);
    w.sev = w.severity && vsl_severity_parse(w.severity, &sev) == 0 ? (int)sev : 0;
    w.status = status_of(st);
    w.vcenter = row_text(st, F_vcenter);
    w.message = row_text(st, F_message);
    w.object_type = row_text(st, F_object_type);
    w.object_moref = row_text(st, F_object_moref);
    w.object_name = row_text(st, F_object_name);
    if (sqlite3_column_type(st, F_host_moref) != SQLITE_NULL) {
        w.on_host = 1;
        w.host_moref = row_text(st, F_host_moref);
        w.host_name = row_text(st, F_host_name);
    }
    /* As evidence_text() and jevidence() read it: an object, or {} when damaged. */
    w.evidence = (const char *)sqlite3_column_text(st, F_evidence_json);
    w.evidence_len = w.evidence ? (size_t)sqlite3_column_bytes(st, F_evidence_json) : 0;
    if (!evidence_object(st, w.evidence, w.evidence_len)) {
        w.evidence = "{}";
        w.evidence_len = 2;
    }
    if (sqlite3_column_type(st, F_unverified_since_ms) != SQLITE_NULL) {
        w.unverified = 1;
        w.unverified_since = vsl_iso_time(sqlite3_column_int64(st, F_unverified_since_ms),
                                          t->since, sizeof(t->since));
        w.unverified_reason = row_text(st, F_unverified_reason);
    }
    if (sqlite3_column_type(st, F_waiver_reason) != SQLITE_NULL) {
        w.waived_until = 1;
        w.waiver_reason = row_text(st, F_waiver_reason);
        w.waiver_expires = row_text(st, F_waiver_expires);
    }
    return t->fn(t->ctx, &w);
}

int db_findings_each_row(struct db *db, const struct db_findings_filter *f,
                         db_findings_row_fn *fn, void *ctx, int64_t *total)
{
    struct row_each t = {.fn = fn, .ctx = ctx};
    char *next = NULL;
    int64_t n = 0;
    int r;

    assert(db && f && fn && f->limit == 0 && !f->cursor);
    r = query(db, f, each_row, &t, &n, &next);
    free(next);
    if (total)
        *total = n;
    return r;
}

/* The unresolved findings of vcenter (NULL: all) in groups of one status, check and severity,
 * each handed to fn as a row of: check_id, severity, status, how many are new, how many in
 * all, how many unverified (db_findings_summary(), db_findings_tally()). what: for errors. */
static int each_group(struct db *db, const char *vcenter, const char *what, db_row_fn *fn,
                      void *ctx)
{
    const struct db_findings_filter f = {.vcenter = vcenter};
    struct vsl_buf sql;
    sqlite3_stmt *st = NULL;
    int sev_order, rc, r;

    vsl_buf_init(&sql, MAX_SQL);
    r = vsl_buf_addstr(&sql, "SELECT check_id, severity, status, sum(" NEW_SQL "), count(*),"
                             " count(unverified_since_ms) FROM findings");
    if (r == 0)
        r = where(&sql, &f, &sev_order, 0);
    if (r == 0)
        r = vsl_buf_addstr(&sql, " GROUP BY status, check_id, severity");
    if (r == 0)
        r = prepare(db, &sql, &st);
    if (r == 0) {
        rc = bind_filter(st, &f, sev_order, NULL, 0);
        r = rc == SQLITE_OK ? db_each_row(st, what, fn, ctx) : db_fail(db->h, rc, what);
    }
    sqlite3_finalize(st);
    vsl_buf_free(&sql);
    return r;
}

struct tally {
    db_findings_tally_fn *fn;
    void *ctx;
};

static int tally_group(sqlite3_stmt *st, void *ctx)
{
    struct tally *t = ctx;
    const char *status = (const char *)sqlite3_column_text(st, 2);

    return t->fn(t->ctx, (const char *)sqlite3_column_text(st, 0),
                 (const char *)sqlite3_column_text(st, 1), status && !strcmp(status, "waived"),
                 sqlite3_column_int64(st, 4));
}

int db_findings_tally(struct db *db, const char *vcenter, db_findings_tally_fn *fn, void *ctx)
{
    struct tally t = {fn, ctx};

    assert(db && fn);
    return each_group(db, vcenter, "counting findings", tally_group, &t);
}

int db_findings_read_begin(struct db *db)
{
    int rc;

    if (!db->wal || !sqlite3_get_autocommit(db->h))
        return 0;
    rc = sqlite3_exec(db->h, "BEGIN", NULL, NULL, NULL);
    return rc == SQLITE_OK ? 1 : db_fail(db->h, rc, "reading findings");
}

void db_findings_read_end(struct db *db, int began)
{
    if (began == 1 && !sqlite3_get_autocommit(db->h))
        sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL);
}

int db_finding_get(struct db *db, const char *fingerprint, json_t **out)
{
    sqlite3_stmt *st = NULL;
    struct vsl_buf sql;
    int r;

    assert(db && fingerprint && out);
    *out = NULL;
    vsl_buf_init(&sql, MAX_SQL);
    r = select_findings(&sql, NULL, 0);
    if (r == 0)
        r = vsl_buf_addstr(&sql, " WHERE fingerprint = ?1");
    if (r == 0)
        r = db_row(db->h, sql.data, &st, "reading a finding", DB_TEXT(fingerprint));
    else
        r = -ENOMEM;
    vsl_buf_free(&sql);
    if (r == 0 && !(*out = finding_json(st)))
        r = -ENOMEM;
    sqlite3_finalize(st);
    return r;
}

/* {"critical":0,"warning":0,"info":0}, in that order. */
static json_t *severity_counts(void)
{
    return json_pack("{sIsIsI}", "critical", (json_int_t)0, "warning", (json_int_t)0, "info",
                     (json_int_t)0);
}

/* Adds n to the integer o[key]; a key o does not have (a severity this build does not know)
 * is left alone. */
static void add(json_t *o, const char *key, json_int_t n)
{
    json_t *v = key ? json_object_get(o, key) : NULL;

    if (v)
        json_integer_set(v, json_integer_value(v) + n);
}

/* Counts the current row of st (a group of findings of one status, check and severity) into
 * the summary o (a db_row_fn). */
static int count_group(sqlite3_stmt *st, void *o)
{
    json_t *by_sev = json_object_get(o, "by_severity");
    json_t *by_status = json_object_get(o, "by_status");
    json_t *by_check = json_object_get(o, "by_check");
    const char *check = (const char *)sqlite3_column_text(st, 0);
    const char *sev = (const char *)sqlite3_column_text(st, 1);
    const char *status = (const char *)sqlite3_column_text(st, 2);
    const json_int_t n = sqlite3_column_int64(st, 4);

    /* Waived findings are not failures: they count in by_status only. "open" includes
     * "new", as the status filter of db_findings_query does. */
    if (status && strcmp(status, "waived") == 0) {
        add(by_status, "waived", n);
        return 0;
    }
    add(o, "total", n);
    add(by_status, "open", n);
    add(by_status, "new", sqlite3_column_int64(st, 3));
    add(by_status, "unverified", sqlite3_column_int64(st, 5));
    add(by_sev, sev, n);
    if (!json_object_get(by_check, check ? check : "") &&
        json_object_set_new(by_check, check ? check : "", severity_counts()) < 0)
        return -ENOMEM;
    add(json_object_get(by_check, check ? check : ""), sev, n);
    return 0;
}

int db_findings_summary(struct db *db, const char *vcenter, json_t **out)
{
    json_t *o;
    int r;

    assert(db && out);
    *out = NULL;
    o = json_pack("{sIsoso}", "total", (json_int_t)0, "by_severity", severity_counts(), "by_status",
                  json_pack("{sIsIsIsI}", "new", (json_int_t)0, "open", (json_int_t)0, "waived",
                            (json_int_t)0, "unverified", (json_int_t)0));
    if (!o || json_object_set_new(o, "by_check", json_object()) < 0)
        r = -ENOMEM;
    else
        r = each_group(db, vcenter, "summarising findings", count_group, o);
    if (r == 0) {
        *out = o;
        o = NULL;
    }
    json_decref(o);
    return r;
}

/* The number of findings matching f (no cursor, no limit) into *n. */
static int count_matching(struct db *db, const struct db_findings_filter *f, int64_t *n)
{
    struct vsl_buf sql;
    sqlite3_stmt *st = NULL;
    int sev_order, rc, r;

    vsl_buf_init(&sql, MAX_SQL);
    r = vsl_buf_addstr(&sql, "SELECT count(*) FROM findings");
    if (r == 0)
        r = where(&sql, f, &sev_order, 0);
    if (r == 0)
        r = db_stmt(db, sql.data, &st);
    if (r == 0) {
        rc = bind_filter(st, f, sev_order, NULL, 0);
        if (rc == SQLITE_OK)
            rc = sqlite3_step(st);
        if (rc == SQLITE_ROW)
            *n = sqlite3_column_int64(st, 0);
        else
            r = db_fail(db->h, rc, "counting findings");
    }
    db_stmt_done(db, st);
    vsl_buf_free(&sql);
    return r;
}

int db_findings_changes(struct db *db, const char *vcenter, int64_t from_ms, int64_t to_ms,
                        int64_t *new_n, int64_t *resolved_n)
{
    /* As the digest counts them (daemon/digest.c): new is open and unwaived, first seen in the
     * window; resolved is fixed in it (a disabled check's findings are not fixes). */
    const struct db_findings_filter fn = {.vcenter = vcenter, .status = "open",
                                          .window = DB_WINDOW_FIRST_SEEN,
                                          .window_from_ms = from_ms, .window_to_ms = to_ms};
    const struct db_findings_filter fr = {.vcenter = vcenter, .status = "resolved",
                                          .resolution = "fixed", .window = DB_WINDOW_RESOLVED,
                                          .window_from_ms = from_ms, .window_to_ms = to_ms};
    int r;

    assert(db && new_n && resolved_n);
    *new_n = *resolved_n = 0;
    r = count_matching(db, &fn, new_n);
    return r == 0 ? count_matching(db, &fr, resolved_n) : r;
}

/* Adds the current row of st (object type, distinct objects) to the object out (a db_row_fn). */
static int count_kind(sqlite3_stmt *st, void *out)
{
    const char *type = (const char *)sqlite3_column_text(st, 0);

    return json_object_set_new(out, type ? type : "", json_integer(sqlite3_column_int64(st, 1)))
               ? -ENOMEM
               : 0;
}

int db_findings_affected(struct db *db, const char *vcenter, json_t **out)
{
    /* An object is its moref; a part of a host (a LUN, an adapter) has none and is its name
     * on its host. Waived findings are not failures, as in db_findings_summary(). */
    static const char sql[] =
        "SELECT object_type, count(DISTINCT vcenter || char(0) || coalesce(object_moref,"
        " coalesce(host_moref, '') || char(0) || object_name)) FROM findings"
        " WHERE status = 'open' AND (?1 IS NULL OR vcenter = ?1)"
        " GROUP BY object_type ORDER BY object_type";
    sqlite3_stmt *st = NULL;
    json_t *o = json_object();
    int r;

    assert(db && out);
    *out = NULL;
    if (!o)
        return -ENOMEM;
    r = db_stmt(db, sql, &st);
    if (r == 0) {
        int rc = db_bind(st, DB_TEXT(vcenter));
        r = rc == SQLITE_OK ? db_each_row(st, "counting affected objects", count_kind, o)
                            : db_fail(db->h, rc, "counting affected objects");
    }
    db_stmt_done(db, st);
    if (r == 0)
        *out = o;
    else
        json_decref(o);
    return r;
}
