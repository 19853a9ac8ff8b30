/* The check side of the database: load a vCenter's snapshot as an estate for the checks, record
 * a run's findings with their history (first_seen, last_seen, resolved_at), and query them. */
#ifndef DB_FINDINGS_H
#define DB_FINDINGS_H

#include <jansson.h>
#include <stdint.h>

#include "db/db.h"
#include "model/estate.h"
#include "model/finding.h"
#include "util/buf.h"

/* Loads the last successful snapshot of vcenter. -VSL_ENOTFOUND if it has none. *out is owned
 * by the caller (est_free). Reads inside one transaction: never half a poll. On a database in a
 * file the VMs and their disks, controllers and snapshots are read by a second thread with a
 * connection of its own, in a read transaction that must see the same snapshot (else they are
 * read on the calling thread); an error on either thread loads nothing. */
int db_estate_load(struct db *db, const char *vcenter, struct estate **out);
/* Nonzero: db_estate_load() on db gives the second thread's malloc arena back to the kernel
 * (malloc_trim()) before it returns; for a one-shot run whose peak RSS follows the load. */
void db_set_load_trim(struct db *db, int on);
#ifdef VSL_TEST_HOOKS
/* Tests: nonzero loads every table on the calling thread, over the caller's connection. */
extern int db_test_load_one_thread;
/* Tests: called before each private connection's read transaction begins, call 1 the calling
 * thread's, 2 the second thread's (a poll committing in between). */
extern void (*db_test_load_begun)(void *ctx, int call);
extern void *db_test_load_begun_ctx;
/* Tests: whether the last db_estate_load() read the VMs on the second thread. */
extern int db_test_load_threaded;
/* Tests: how many private connections the last db_estate_load() opened. */
extern int db_test_load_private;
/* Tests: the log context's vCenter on the second thread of the last threaded load. */
extern const char *db_test_load_side_log_vcenter;
#endif
/* A number that changes whenever a stored snapshot does (a poll of any vCenter or array, an
 * incremental round that applied changes: each records itself in the transaction that writes
 * the snapshot), and not when only findings, history pruning or digests are written, nor when
 * a round only confirmed the snapshot: what decides whether an estate loaded before is still
 * the one stored. 0 or a negative error. */
int db_snapshots_stamp(struct db *db, uint64_t *out);
/* When vcenter's stored snapshot was last taken or confirmed (unix ms: an estate's
 * polled_ms); -VSL_ENOTFOUND when it never was. */
int db_snapshot_time(struct db *db, const char *vcenter, int64_t *ms);

/* Names of every vCenter with a stored snapshot, sorted. *names (and each string) malloc'd. */
int db_vcenter_names(struct db *db, char ***names, size_t *n);

/* Records one evaluation of vcenter at now_ms, in one transaction:
 * - each finding is inserted or updated by fingerprint: first_seen kept (set to now for a new
 *   one, or for one that had been resolved and came back), last_seen = now, resolved_at NULL,
 *   severity, message, evidence, waiver, host updated, unverified cleared; status "waived" when
 *   f->waiver, else "open". A row whose stored values are already all these is not written:
 *   its last_seen is the evaluation's time recorded for the vCenter (DB_LAST_SEEN_SQL);
 * - every other unresolved finding of that vCenter is resolved (resolved_at = now, status
 *   "resolved", resolution "fixed") only when its check completed and no unverified scope of
 *   ev covers its host or object; closed as "disabled" when its check is disabled; otherwise
 *   kept exactly as it was (first_seen, last_seen, severity, message) with unverified_since
 *   (the first such evaluation) and unverified_reason set. */
int db_findings_record(struct db *db, const char *vcenter, const struct evaluation *ev,
                       int64_t now_ms);

struct db_findings_filter {
    const char *vcenter;  /* exact, or NULL */
    const char *check;    /* exact check id, or NULL */
    const char *severity; /* "info", "warning", "critical": that severity and above; or NULL */
    int severity_only;    /* with severity: that severity alone */
    const char *status;   /* "new", "open" (includes new), "waived", "resolved", or NULL =
                             everything not resolved */
    const char *object;   /* substring of the object name (case-insensitive), or NULL */
    const char *host;     /* substring of the host name (case-insensitive), or NULL */
    int unverified;       /* 1: only findings the latest evaluation could not verify; -1: only
                             verified ones; 0: both */
    const char *resolution; /* "fixed", "disabled", or NULL: any */
    int64_t resolved_at_ms; /* 0, or only findings resolved at exactly this time (one run) */
    /* DB_WINDOW_FIRST_SEEN: only findings first seen in (window_from_ms, window_to_ms];
     * DB_WINDOW_RESOLVED: only those resolved then (the digest's "new" and "resolved"). */
    enum db_window { DB_WINDOW_NONE, DB_WINDOW_FIRST_SEEN, DB_WINDOW_RESOLVED } window;
    int64_t window_from_ms, window_to_ms;
    /* 0, or only findings first seen at or after since_ms; with status "resolved", those
     * resolved at or after it ("what is new / what was fixed since"). */
    int64_t since_ms;
    /* NULL or "severity": the order below. Else one of db_findings_sorts, optionally after a
     * '-' that reverses it: "first_seen", "last_seen" (oldest first), "check", "object" (A-Z),
     * each then by fingerprint. -EINVAL for anything else. */
    const char *sort;
    int limit;            /* 0 = no limit */
    const char *cursor;   /* opaque, from a previous page's *next, or NULL */
};

/* The sort keys db_findings_query() knows (NULL-ended), for the API's error message. */
extern const char *const db_findings_sorts[];

/* Findings matching f as a JSON array, ordered (unless f->sort says otherwise) by severity (critical first), check, vCenter,
 * object name, fingerprint. Each element:
 *   {"fingerprint","check","title","severity","status" (new|open|waived|resolved),"vcenter",
 *    "object":{"type","moref" (null for a part of a host),"name"},
 *    "host":{"moref","name"} or null,"detail","message","evidence":{...},
 *    "first_seen","last_seen" (ISO-8601 UTC strings),
 *    "unverified": {"since","reason"} or null (the latest evaluation could not verify it),
 *    "resolved_at" (null if open),"resolution" ("fixed", "disabled" or null),
 *    "waiver": {"reason","expires"} or null,
 *    "first_seen_by", "resolved_by": {"poll" (polls.id),"mode" ("full", "incremental")} or
 *    null: the poll whose snapshot first showed this occurrence, and the one whose snapshot
 *    no longer did (null while unresolved, and for what was recorded before schema 10)}
 * *total = the number of findings matching f without limit/cursor. *next (malloc'd, may be NULL
 * when no more) = the cursor of the following page; a cursor holds its sort, and one made for
 * another sort is refused. Bad cursor: -EINVAL. */
int db_findings_query(struct db *db, const struct db_findings_filter *f, json_t **out,
                      int64_t *total, char **next);

/* The members of a finding, in the order db_findings_query() writes them (NULL-ended). */
enum db_finding_field {
    DB_FF_FINGERPRINT, DB_FF_CHECK, DB_FF_TITLE, DB_FF_SEVERITY, DB_FF_STATUS, DB_FF_VCENTER,
    DB_FF_OBJECT, DB_FF_HOST, DB_FF_DETAIL, DB_FF_MESSAGE, DB_FF_EVIDENCE, DB_FF_FIRST_SEEN,
    DB_FF_LAST_SEEN, DB_FF_UNVERIFIED, DB_FF_RESOLVED_AT, DB_FF_RESOLUTION, DB_FF_WAIVER,
    DB_FF_FIRST_SEEN_BY, DB_FF_RESOLVED_BY, DB_NFF
};
extern const char *const db_finding_fields[];

/* The same page as db_findings_query(), appended to out as the text of its JSON array (what
 * json_dumps(JSON_COMPACT) of that array would write), keeping only the members whose bit
 * (1 << DB_FF_*) is set in fields (0: all). The stored evidence goes in as it is stored, with
 * no parse and re-serialisation. *n = the items written. On error out may hold part of a page. */
int db_findings_page_text(struct db *db, const struct db_findings_filter *f, unsigned fields,
                          struct vsl_buf *out, int *n, int64_t *total, char **next);

/* Every finding matching f (no limit, no cursor), in its order, each handed to fn as the text
 * db_findings_page_text() writes for it (len bytes, not NUL-ended, valid during the call), in
 * one read transaction: a report written row by row holds one finding's text at a time. With
 * it, the same row's reported status ("new", "open", "waived", ...) and stored severity (NULL
 * if none), so that whatever is decided from the findings (an exit status) is decided from the
 * very rows written, not from another read. A negative return of fn ends the walk with it.
 * *total = the number of matches. */
typedef int db_findings_text_fn(void *ctx, const char *json, size_t len, const char *status,
                                const char *severity);
int db_findings_each_text(struct db *db, const struct db_findings_filter *f, unsigned fields,
                          db_findings_text_fn *fn, void *ctx, int64_t *total);

/* One stored finding as a report written row by row reads it (db_findings_each_row()): the
 * members of db_findings_query()'s finding that the reports print, without building a tree.
 * Strings are the row's, valid during the call; NULL where db_findings_query() has null (the
 * column is NULL or not UTF-8). */
struct db_finding_row {
    const char *fingerprint, *check, *severity, *vcenter, *message;
    const char *status; /* as reported: "new", "open", "waived", "resolved"; never NULL */
    int sev;            /* severity index (as vsl_finding_severity(): 0 when unknown) */
    const char *object_type, *object_moref, *object_name;
    int on_host; /* "host" is an object (the host's columns are not NULL) */
    const char *host_moref, *host_name;
    const char *evidence; /* the stored evidence's JSON object text ("{}" when damaged) */
    size_t evidence_len;
    int unverified; /* "unverified" is an object: since (ISO-8601) and reason */
    const char *unverified_since, *unverified_reason;
    int waived_until; /* "waiver" is an object: reason and expires */
    const char *waiver_reason, *waiver_expires;
};
/* Every finding matching f (no limit, no cursor), in its order, handed to fn one row at a time.
 * A negative return of fn ends the walk with it. *total = the number of matches (may be NULL).
 * Inside db_findings_read_begin() the walk reads that transaction's state. */
typedef int db_findings_row_fn(void *ctx, const struct db_finding_row *row);
int db_findings_each_row(struct db *db, const struct db_findings_filter *f,
                         db_findings_row_fn *fn, void *ctx, int64_t *total);

/* The unresolved findings of vcenter (NULL: all) counted by check, severity and whether they are
 * waived: fn(ctx, check, severity, waived, n) for each group (check and severity may be NULL
 * for a column that is; severity as stored). A negative return of fn ends it with it. */
typedef int db_findings_tally_fn(void *ctx, const char *check, const char *severity, int waived,
                                 int64_t n);
int db_findings_tally(struct db *db, const char *vcenter, db_findings_tally_fn *fn, void *ctx);

/* Between these, every read of findings on db (queries, walks, counts, the summary) sees one
 * state of the database, whatever other connections or processes commit meanwhile: a report
 * made of several reads agrees with itself. For a one-shot command: the read is held as long
 * as the report takes to write (a pager), which a daemon's writes do not wait for in WAL mode
 * (its checkpoints only stop short of it); so on a database that is not in WAL mode (where
 * the read would block the daemon's commits) begin takes none and returns 0, and the reads
 * are each their own. 1: taken; 0: not; or an error (none taken).
 * end(db, began): ends what begin returned 1 for, nothing else. */
int db_findings_read_begin(struct db *db);
void db_findings_read_end(struct db *db, int began);

/* One finding by fingerprint (any status), same shape; -VSL_ENOTFOUND if absent. */
int db_finding_get(struct db *db, const char *fingerprint, json_t **out);

/* Counts of unresolved findings: {"total","by_severity":{"critical","warning","info"},
 * "by_status":{"new","open","waived","unverified"},"by_check":{"<id>":{"critical","warning",
 * "info"}}}; "unverified" counts the open ones the latest evaluation could not verify;
 * waived findings are counted in by_status only. vcenter NULL = all. */
int db_findings_summary(struct db *db, const char *vcenter, json_t **out);

/* How many findings were new in (from_ms, to_ms] (open, unwaived, first seen then) and how
 * many were fixed then (resolved as "fixed"): the digest's "new" and "resolved" counts.
 * vcenter NULL = all. */
int db_findings_changes(struct db *db, const char *vcenter, int64_t from_ms, int64_t to_ms,
                        int64_t *new_n, int64_t *resolved_n);

/* The objects with an open, unwaived finding, per object type: {"datastore": 12, "vm": 3,
 * ...}; a part of a host (a LUN, an adapter) counts once per host and name. vcenter NULL =
 * all. *out owned by the caller. */
int db_findings_affected(struct db *db, const char *vcenter, json_t **out);

#endif
