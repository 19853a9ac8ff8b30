/* Unit tests for daemon/schedule.c and the daemon's first digest: a local time of day in a time
 * zone, across the days daylight saving time starts and ends in Europe/Berlin and
 * America/New_York, and a digest missed while the daemon was down. The wanted instants are
 * written in UTC from the zones' published rules (2026: Berlin 29 March 02:00 CET -> 03:00
 * CEST, 25 October 03:00 CEST -> 02:00 CET; New York 8 March 02:00 EST -> 03:00 EDT,
 * 1 November 02:00 EDT -> 01:00 EST). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "testlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon/config.h"
#include "daemon/digest.h"
#include "daemon/schedule.h"
#include "db/digest.h"

/* "2026-03-29T01:00Z" as unix ms. */
static int64_t utc(const char *s)
{
    struct tm tm = {0};
    int n = sscanf(s, "%d-%d-%dT%d:%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                   &tm.tm_min);
    assert_int_equal(n, 5);
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    return (int64_t)timegm(&tm) * 1000;
}

static const char *iso(int64_t ms, char *buf, size_t size)
{
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, size, "%Y-%m-%dT%H:%MZ", &tm);
    return buf;
}

/* A row: the slot at local time at in zone tz that vsl_sched_next() (NEXT: the first strictly
 * after ref) or vsl_sched_prev() (PREV: the latest at or before ref) gives, in UTC. */
enum { NEXT, PREV };
struct sched_case {
    int dir;
    const char *tz, *at, *ref, *want;
};

TEST(test_slots)
{
    static const struct sched_case rows[] = {
        /* an ordinary winter day in Berlin (CET, UTC+1) */
        {NEXT, "Europe/Berlin", "06:30", "2026-11-30T04:00Z", "2026-11-30T05:30Z"},
        /* at the slot itself: the next one is tomorrow's */
        {NEXT, "Europe/Berlin", "06:30", "2026-11-30T05:30Z", "2026-12-01T05:30Z"},
        /* summer (CEST, UTC+2) */
        {NEXT, "Europe/Berlin", "06:30", "2026-07-01T12:00Z", "2026-07-02T04:30Z"},
        /* the day DST starts: 06:30 exists, an hour nearer to UTC */
        {NEXT, "Europe/Berlin", "06:30", "2026-03-28T06:00Z", "2026-03-29T04:30Z"},
        /* 02:30 does not exist on 29 March: the first minute after the gap, 03:00 CEST */
        {NEXT, "Europe/Berlin", "02:30", "2026-03-28T23:00Z", "2026-03-29T01:00Z"},
        /* ...and the day after, 02:30 CEST again */
        {NEXT, "Europe/Berlin", "02:30", "2026-03-29T01:00Z", "2026-03-30T00:30Z"},
        /* 02:30 happens twice on 25 October: the first (CEST), then not again that day */
        {NEXT, "Europe/Berlin", "02:30", "2026-10-24T23:00Z", "2026-10-25T00:30Z"},
        {NEXT, "Europe/Berlin", "02:30", "2026-10-25T00:30Z", "2026-10-26T01:30Z"},
        /* New York: 02:15 skipped on 8 March -> 03:00 EDT */
        {NEXT, "America/New_York", "02:15", "2026-03-08T05:00Z", "2026-03-08T07:00Z"},
        /* 01:30 twice on 1 November: 01:30 EDT first, then the next day's 01:30 EST */
        {NEXT, "America/New_York", "01:30", "2026-11-01T04:00Z", "2026-11-01T05:30Z"},
        {NEXT, "America/New_York", "01:30", "2026-11-01T05:30Z", "2026-11-02T06:30Z"},
        /* the morning after the change: EST, UTC-5 */
        {NEXT, "America/New_York", "06:30", "2026-11-01T12:00Z", "2026-11-02T11:30Z"},
        /* the year turns */
        {NEXT, "UTC", "23:59", "2026-12-31T23:59Z", "2027-01-01T23:59Z"},
        {NEXT, "UTC", "00:00", "2026-12-31T23:59Z", "2027-01-01T00:00Z"},
        /* the latest slot at or before ref */
        {PREV, "Europe/Berlin", "06:30", "2026-11-30T09:00Z", "2026-11-30T05:30Z"},
        {PREV, "Europe/Berlin", "06:30", "2026-11-30T05:00Z", "2026-11-29T05:30Z"},
        {PREV, "Europe/Berlin", "06:30", "2026-11-30T05:30Z", "2026-11-30T05:30Z"},
        {PREV, "America/New_York", "01:30", "2026-11-01T06:00Z", "2026-11-01T05:30Z"},
        {PREV, "America/New_York", "02:15", "2026-03-08T08:00Z", "2026-03-08T07:00Z"},
    };

    for (size_t i = 0; i < N(rows); i++) {
        const struct sched_case *c = &rows[i];
        int64_t got = 0;
        char buf[32];
        int r = c->dir == NEXT ? vsl_sched_next(c->tz, vsl_config_hhmm(c->at), utc(c->ref), &got)
                               : vsl_sched_prev(c->tz, vsl_config_hhmm(c->at), utc(c->ref), &got);
        assert_int_equal(r, 0);
        if (strcmp(iso(got, buf, sizeof(buf)), c->want)) {
            fail_msg("%s %s %s %s: got %s, want %s", c->tz, c->at,
                     c->dir == NEXT ? "after" : "at or before", c->ref, buf, c->want);
        }
    }
}

/* NULL is the system's zone, whatever TZ says; and the zone of one call does not leak. */
TEST(test_system_zone)
{
    int64_t got;
    char buf[32];

    setenv("TZ", "Asia/Tokyo", 1);
    tzset();
    assert_int_equal(vsl_sched_next(NULL, 9 * 60, utc("2026-11-30T00:30Z"), &got), 0);
    assert_string_equal(iso(got, buf, sizeof(buf)), "2026-12-01T00:00Z");
    assert_int_equal(vsl_sched_next("Europe/Berlin", 9 * 60, utc("2026-11-30T00:30Z"), &got), 0);
    assert_string_equal(iso(got, buf, sizeof(buf)), "2026-11-30T08:00Z");
    assert_string_equal(getenv("TZ"), "Asia/Tokyo");
    assert_string_equal(vsl_sched_format(NULL, utc("2026-11-30T00:30Z"), buf, sizeof(buf)),
                        "2026-11-30 09:30 JST");
    assert_string_equal(vsl_sched_format("America/New_York", utc("2026-07-01T12:00Z"), buf,
                                         sizeof(buf)),
                        "2026-07-01 08:00 EDT");
    unsetenv("TZ");
    tzset();
}

/* A missed run: the daemon sent yesterday's digest, was down at today's 06:30 and starts at
 * 09:00: today's is due at once, once. After it is recorded the next is tomorrow's. */
static void record(struct db *db, const char *slot, const char *to)
{
    struct db_digest d = {.slot_ms = slot ? utc(slot) : 0, .from_ms = 0, .to_ms = utc(to),
                          .sent_ms = utc(to), .score = 80};
    assert_int_equal(db_digest_record(db, &d), 0);
}

TEST(test_missed_run)
{
    struct tl_dbfile *f = NULL;
    struct vsl_digest_conf d = {.timezone = "Europe/Berlin"};
    int64_t due;
    char buf[32];
    void *st = NULL;

    assert_int_equal(tl_db_setup_open(&st), 0);
    f = st;
    /* Nothing ever sent: nothing missed, the next 06:30. */
    assert_int_equal(vsl_digest_first_due(f->db, &d, 390, utc("2026-11-30T08:00Z"), &due), 0);
    assert_string_equal(iso(due, buf, sizeof(buf)), "2026-12-01T05:30Z");

    record(f->db, "2026-11-29T05:30Z", "2026-11-29T05:30Z");
    assert_int_equal(vsl_digest_first_due(f->db, &d, 390, utc("2026-11-30T08:00Z"), &due), 0);
    assert_string_equal(iso(due, buf, sizeof(buf)), "2026-11-30T05:30Z"); /* missed: now */
    /* Started before today's time: nothing missed. */
    assert_int_equal(vsl_digest_first_due(f->db, &d, 390, utc("2026-11-30T05:00Z"), &due), 0);
    assert_string_equal(iso(due, buf, sizeof(buf)), "2026-11-30T05:30Z");

    record(f->db, "2026-11-30T05:30Z", "2026-11-30T08:00Z");
    assert_int_equal(vsl_digest_first_due(f->db, &d, 390, utc("2026-11-30T09:00Z"), &due), 0);
    assert_string_equal(iso(due, buf, sizeof(buf)), "2026-12-01T05:30Z"); /* sent: not twice */

    /* Several days down: one digest, for the latest time missed. */
    assert_int_equal(vsl_digest_first_due(f->db, &d, 390, utc("2026-12-04T10:00Z"), &due), 0);
    assert_string_equal(iso(due, buf, sizeof(buf)), "2026-12-04T05:30Z");

    /* A digest sent by hand after today's time covers it: not missed. */
    record(f->db, NULL, "2026-12-04T07:00Z");
    assert_int_equal(vsl_digest_first_due(f->db, &d, 390, utc("2026-12-04T10:00Z"), &due), 0);
    assert_string_equal(iso(due, buf, sizeof(buf)), "2026-12-05T05:30Z");
    tl_db_teardown(&st);
}

int main(void)
{
    return tl_main();
}
