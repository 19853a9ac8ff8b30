/* Local times through the C library's zone rules. localtime_r and mktime read the zone from
 * TZ, which is process-wide: a call for another zone sets it under one lock and puts it back.
 * setenv() is not safe while other threads read the environment (curl does, for proxies;
 * SQLite reads TMPDIR), so vslint serve makes the digest's zone the process's own before its
 * threads start (vsl_sched_set_process_zone), and a reload that changes it stops every other
 * thread first (pollers, digest, HTTP server); the digest's calls then change nothing. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon/schedule.h"

static pthread_mutex_t tz_lock = PTHREAD_MUTEX_INITIALIZER;

struct tz_saved {
    char *old; /* owned: TZ as it was, or NULL when unset */
    int changed;
};

static void tz_enter(const char *tz, struct tz_saved *s)
{
    pthread_mutex_lock(&tz_lock);
    s->old = NULL;
    s->changed = 0;
    const char *cur = getenv("TZ");
    if (!tz || (cur && !strcmp(cur, tz)))
        return;
    s->old = cur ? strdup(cur) : NULL;
    setenv("TZ", tz, 1);
    tzset();
    s->changed = 1;
}

static void tz_leave(struct tz_saved *s)
{
    if (s->changed) {
        if (s->old)
            setenv("TZ", s->old, 1);
        else
            unsetenv("TZ");
        tzset();
    }
    free(s->old);
    pthread_mutex_unlock(&tz_lock);
}

/* The civil date (y, m 0-11, d) moved by days, through timegm at noon (no zone involved). */
static void add_days(int *y, int *m, int *d, int days)
{
    struct tm tm = {.tm_year = *y - 1900, .tm_mon = *m, .tm_mday = *d + days, .tm_hour = 12};
    time_t t = timegm(&tm);

    gmtime_r(&t, &tm);
    *y = tm.tm_year + 1900;
    *m = tm.tm_mon;
    *d = tm.tm_mday;
}

/* The instant local wall time reads date (y, m, d) at at_min, with the zone already set: the
 * earliest one when the time happens twice, the first minute after a gap when it does not
 * happen at all. -1 when nothing matches within four hours. */
static int64_t slot_on(int y, int m, int d, int at_min)
{
    for (int k = 0; k < 240; k++) {
        struct tm want = {.tm_year = y - 1900, .tm_mon = m, .tm_mday = d};
        time_t base = timegm(&want) + (time_t)(at_min + k) * 60;
        gmtime_r(&base, &want); /* the wall time sought, normalised past midnight */
        int64_t best = -1;
        for (int dst = 0; dst <= 1; dst++) {
            struct tm tm = want, lt;
            tm.tm_isdst = dst;
            time_t t = mktime(&tm);
            if (t == (time_t)-1 || !localtime_r(&t, &lt))
                continue;
            if (lt.tm_year == want.tm_year && lt.tm_mon == want.tm_mon &&
                lt.tm_mday == want.tm_mday && lt.tm_hour == want.tm_hour &&
                lt.tm_min == want.tm_min && (best < 0 || (int64_t)t < best))
                best = (int64_t)t;
        }
        if (best >= 0)
            return best * 1000;
    }
    return -1;
}

static int find(const char *tz, int at_min, int64_t ref_ms, int next, int64_t *out)
{
    struct tz_saved s;
    time_t t = (time_t)(ref_ms / 1000);
    struct tm lt;
    int r = -EINVAL;

    tz_enter(tz, &s);
    if (localtime_r(&t, &lt)) {
        int y = lt.tm_year + 1900, m = lt.tm_mon, d = lt.tm_mday;
        /* Today's slot, then the day before or after until one falls on the right side. */
        for (int i = 0; i < 3; i++) {
            int64_t slot = slot_on(y, m, d, at_min);
            if (slot >= 0 && (next ? slot > ref_ms : slot <= ref_ms)) {
                *out = slot;
                r = 0;
                break;
            }
            add_days(&y, &m, &d, next ? 1 : -1);
        }
    }
    tz_leave(&s);
    return r;
}

int vsl_sched_next(const char *tz, int at_min, int64_t after_ms, int64_t *out)
{
    return find(tz, at_min, after_ms, 1, out);
}

int vsl_sched_prev(const char *tz, int at_min, int64_t now_ms, int64_t *out)
{
    return find(tz, at_min, now_ms, 0, out);
}

const char *vsl_sched_format(const char *tz, int64_t ms, char *buf, size_t size)
{
    struct tz_saved s;
    time_t t = (time_t)(ms / 1000);
    struct tm lt;

    tz_enter(tz, &s);
    if (!localtime_r(&t, &lt) || !strftime(buf, size, "%Y-%m-%d %H:%M %Z", &lt))
        buf[0] = '\0';
    tz_leave(&s);
    return buf;
}

/* TZ when the process zone was first set (vslint serve, before its threads), and whether it
 * was: what a configuration without timezone = goes back to. Under tz_lock. */
static char *start_zone; /* owned; NULL: TZ was unset (the system's zone) */
static int start_zone_saved;

static void save_start_zone(void)
{
    const char *cur = getenv("TZ");

    if (start_zone_saved)
        return;
    start_zone = cur ? strdup(cur) : NULL;
    start_zone_saved = !cur || start_zone;
}

static int zone_is(const char *want)
{
    const char *cur = getenv("TZ");

    return (!cur && !want) || (cur && want && !strcmp(cur, want));
}

int vsl_sched_process_zone_is(const char *tz)
{
    pthread_mutex_lock(&tz_lock);
    save_start_zone();
    int r = zone_is(tz ? tz : start_zone);
    pthread_mutex_unlock(&tz_lock);
    return r;
}

void vsl_sched_set_process_zone(const char *tz)
{
    pthread_mutex_lock(&tz_lock);
    save_start_zone();
    if (!tz && !start_zone_saved) {
        pthread_mutex_unlock(&tz_lock);
        return; /* out of memory at the first call: the start zone is unknown */
    }
    if (!tz)
        tz = start_zone;
    if (!zone_is(tz)) {
        if (tz)
            setenv("TZ", tz, 1);
        else
            unsetenv("TZ");
        tzset();
    }
    pthread_mutex_unlock(&tz_lock);
}
