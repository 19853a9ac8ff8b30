/* One poll of one configured vCenter into the database: connect, log in, collect into a snapshot
 * transaction, commit; on an expired session log in again and start over once. */
#ifndef VSL_POLL_H
#define VSL_POLL_H

#include <stdatomic.h>
#include <stdint.h>

#include "daemon/config.h"
#include "db/db.h"

struct vsl_poll_result {
    int ok;
    char error[1024];         /* one line, when !ok */
    int64_t started_ms;       /* wall clock, unix ms */
    int64_t duration_ms;      /* monotonic */
    int64_t counts[DB_NKINDS];
    int64_t requests, bytes_wire, bytes_xml; /* bytes_xml: of JSON, for an array */
    int db_err; /* the database could not be written (disk full, read-only): the error */
    int abandoned; /* the cancel flag stopped the poll: nothing stored, nothing recorded */
};

/* Returns 0 on success or a negative error; res describes the outcome either way and the
 * failure is recorded in the database (the previous snapshot stays). */
int vsl_poll(struct db *db, const struct vsl_vcenter_conf *vc, struct vsl_poll_result *res);
/* A vCenter followed with WaitForUpdatesEx between full reads: its session and filter. */
struct vsl_follow;

/* vsl_poll(), storing in *activity_ms (if not NULL; CLOCK_MONOTONIC ms) when vCenter last sent
 * anything, on this session and, if followed, on the rounds of vsl_poll_changes(). With follow
 * not NULL, a filter on the vCenter's changes is created before the read and, when both
 * succeed, *follow keeps the logged-in session for vsl_poll_changes(). A server that refuses
 * the filter is polled in full (logged) and *follow stays NULL. res->db_err is set when the
 * database could not be written. cancel (NULL: never) set by another thread abandons the poll
 * within about a second wherever it is before the commit (vim_opts.cancel): nothing is stored
 * and no failure recorded (res->abandoned); a follow session it leaves stops its rounds the
 * same way. */
int vsl_poll_full(struct db *db, const struct vsl_vcenter_conf *vc, _Atomic int64_t *activity_ms,
                  const _Atomic int *cancel, struct vsl_poll_result *res,
                  struct vsl_follow **follow);
/* One WaitForUpdatesEx round of at most max_wait_s seconds (and the rounds a truncated answer
 * calls for); the objects that changed (*changes of them) are re-read and replaced in one
 * transaction. A negative error (-VSL_EVERSION, -VSL_ENOAUTH, a network error, ...) means: free
 * f and read everything again; res->error says why. res->duration_ms is the time from the
 * answer to the commit; the byte counts include the wait's answer. A round that changed
 * something or failed is in the poll history, summed into its round window's row (see
 * db_update_commit()); a quiet one is not, but a round that ended well, with or without
 * changes, moves the vCenter's last_success_ms on (the snapshot is current). Every host's
 * per-host reads are added to the round every host_reads_every seconds. res->db_err is set when the changes could not be
 * written to the database (f is still usable then, but the stored snapshot misses the round's
 * changes). */
int vsl_poll_changes(struct db *db, const struct vsl_vcenter_conf *vc, struct vsl_follow *f,
                     int max_wait_s, struct vsl_poll_result *res, size_t *changes);
/* The collector version f follows from ("" before the first). */
const char *vsl_follow_version(const struct vsl_follow *f);
/* Destroys the filter, logs out. NULL is a no-op. */
void vsl_follow_free(struct vsl_follow *f);

/* The same for an [array NAME] source (vc->type set): log in to the array, read its pools and
 * LUNs into a snapshot stored under its name, log out. */
int vsl_array_poll(struct db *db, const struct vsl_vcenter_conf *ac, struct vsl_poll_result *res);
/* The same, abandoned when *cancel (borrowed, or NULL) is set, as vsl_poll_full()'s: the
 * request in flight ends within about a second, nothing is stored, res->abandoned is set. */
int vsl_array_poll_full(struct db *db, const struct vsl_vcenter_conf *ac,
                        const _Atomic int *cancel, struct vsl_poll_result *res);

/* `vslint record`: the reads of one full poll of conf (a vCenter's or an array's), each request
 * and answer into capture under label ("vcenter", "array1"), failed ones included, the rows
 * into a database in memory (no file), nothing in the configured one; then a logout. As a
 * poll, it reads once more after logging in again when the session expired, or when a page may
 * have been lost. res says how it went. */
struct vsl_capture;
int vsl_record(const struct vsl_vcenter_conf *conf, struct vsl_capture *capture,
               const char *label, struct vsl_poll_result *res);

/* Applies cfg's [database] settings (capacity_retention, round_window, poll_retention,
 * findings_retention) to db. */
void vsl_db_settings(struct db *db, const struct vsl_config *cfg);

int64_t vsl_now_ms(void);       /* wall clock */
int64_t vsl_monotonic_ms(void); /* for durations */

#endif
