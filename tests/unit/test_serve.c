/* Unit tests for the daemon's retry schedule (vsl_backoff_s) and the summary's score
 * (api_score): the two formulas README.md and docs/openapi.yaml promise. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "api/api-private.h"
#include "daemon/serve.h"

static void test_backoff(void **state)
{
    static const struct {
        int interval, failures, want;
    } rows[] = {
        {300, 1, 300},   /* first retry after the interval */
        {300, 2, 600},   /* then doubling */
        {300, 3, 1200},
        {300, 4, 2400},
        {300, 5, 2400},  /* capped at 8 x interval, */
        {300, 50, 2400},
        {600, 3, 2400},
        {600, 4, 3600},  /* or at one hour when that is smaller */
        {10, 1, 10},
        {10, 4, 80},     /* 8 x interval is the cap below an hour */
        {10, 9, 80},
        {7200, 1, 7200}, /* never sooner than the interval itself */
        {7200, 3, 7200},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        int got = vsl_backoff_s(rows[i].interval, rows[i].failures);
        if (got != rows[i].want)
            fail_msg("interval %d, %d failures: got %d, want %d", rows[i].interval,
                     rows[i].failures, got, rows[i].want);
    }
}

static void test_score(void **state)
{
    static const struct {
        int64_t crit, warn, info, objects;
        int want;
    } rows[] = {
        {0, 0, 0, 0, 100},    /* nothing stored, nothing found */
        {0, 0, 0, 500, 100},
        {10, 0, 0, 10, 0},    /* a critical finding on every object */
        {20, 0, 0, 10, 0},    /* clamped */
        {1, 0, 0, 10, 90},
        {0, 1, 0, 10, 97},
        {0, 0, 1, 10, 99},
        {10, 14, 4, 120, 88}, /* the simulator's violations estate */
        {1, 0, 0, 0, 0},      /* findings with no objects stored: N counts as 1 */
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        int got = api_score(rows[i].crit, rows[i].warn, rows[i].info, rows[i].objects);
        if (got != rows[i].want)
            fail_msg("row %zu: got %d, want %d", i, got, rows[i].want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_backoff),
        cmocka_unit_test(test_score),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
