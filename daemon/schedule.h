/* When the daily digest is due: a local time of day in a time zone, through daylight saving
 * changes. On a day that skips the time, the first minute after the gap; on a day that has it
 * twice, the first one. */
#ifndef VSL_SCHEDULE_H
#define VSL_SCHEDULE_H

#include <stddef.h>
#include <stdint.h>

/* tz: a zone name as TZ takes it ("Europe/Berlin"), or NULL for the system's. at_min: minutes
 * after local midnight. Times are unix milliseconds. 0, or -EINVAL when no such time exists
 * within a day (a zone this system cannot read). */

/* The first slot strictly after after_ms. */
int vsl_sched_next(const char *tz, int at_min, int64_t after_ms, int64_t *out);
/* The latest slot at or before now_ms. */
int vsl_sched_prev(const char *tz, int at_min, int64_t now_ms, int64_t *out);

/* ms as "YYYY-MM-DD HH:MM ZONE" in tz (NULL: the system's); "" if it does not fit. */
const char *vsl_sched_format(const char *tz, int64_t ms, char *buf, size_t size);

/* Makes tz the zone of the whole process, so that calls for it set nothing; NULL: the zone
 * the process had at the first call (TZ as it was then, or unset). Only while no other thread
 * reads the environment: before vslint serve starts its threads, or while a reload has them
 * all stopped. */
void vsl_sched_set_process_zone(const char *tz);
/* Whether the process zone already is what vsl_sched_set_process_zone(tz) would make it. */
int vsl_sched_process_zone_is(const char *tz);

#endif
