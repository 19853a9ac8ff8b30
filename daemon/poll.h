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
};

/* Returns 0 on success or a negative error; res describes the outcome either way and the
 * failure is recorded in the database (the previous snapshot stays). */
int vsl_poll(struct db *db, const struct vsl_vcenter_conf *vc, struct vsl_poll_result *res);
/* The same, storing in *activity_ms (CLOCK_MONOTONIC ms) when vCenter last sent anything. */
int vsl_poll_watched(struct db *db, const struct vsl_vcenter_conf *vc,
                     _Atomic int64_t *activity_ms, struct vsl_poll_result *res);

/* The same for an [array NAME] source (vc->type set): log in to the array, read its pools and
 * LUNs into a snapshot stored under its name, log out. */
int vsl_array_poll(struct db *db, const struct vsl_vcenter_conf *ac, struct vsl_poll_result *res);

int64_t vsl_now_ms(void);       /* wall clock */
int64_t vsl_monotonic_ms(void); /* for durations */

#endif
