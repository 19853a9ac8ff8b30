/* Unit tests for util/log: the journal fields of one line (what `journalctl VSLINT_CHECK=...`
 * and `journalctl VSLINT_VCENTER=...` filter on). The daemon's lines reaching a journal socket
 * are tested in tests/integration/test_journal.py. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <syslog.h>

#include "util/log.h"

static void test_journal_fields(void **state)
{
    static const struct {
        int pri;
        const char *msg, *vcenter, *check;
        int errnum;
        const char *want; /* the fields, joined by '|' */
    } rows[] = {
        {LOG_ERR, "poll failed", "prod", NULL, 0,
         "MESSAGE=poll failed|PRIORITY=3|SYSLOG_IDENTIFIER=vslint|SYSLOG_FACILITY=3|"
         "VSLINT_VCENTER=prod"},
        {LOG_ERR, "check snapshots failed", "lab", "snapshots", 0,
         "MESSAGE=check snapshots failed|PRIORITY=3|SYSLOG_IDENTIFIER=vslint|SYSLOG_FACILITY=3|"
         "VSLINT_VCENTER=lab|VSLINT_CHECK=snapshots"},
        {LOG_INFO, "serving", NULL, NULL, 0,
         "MESSAGE=serving|PRIORITY=6|SYSLOG_IDENTIFIER=vslint|SYSLOG_FACILITY=3"},
        {LOG_ERR, "open: No such file", "", "", 2,
         "MESSAGE=open: No such file|PRIORITY=3|SYSLOG_IDENTIFIER=vslint|SYSLOG_FACILITY=3|"
         "ERRNO=2"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char buf[1024], got[1024] = "";
        const char *fields[8];
        size_t n = log_journal_fields(rows[i].pri, rows[i].msg, rows[i].vcenter, rows[i].check,
                                      rows[i].errnum, buf, sizeof(buf), fields, 8);
        size_t len = 0;
        for (size_t k = 0; k < n; k++)
            len += (size_t)snprintf(got + len, sizeof(got) - len, "%s%s", k ? "|" : "", fields[k]);
        assert_string_equal(got, rows[i].want);
    }
}

/* A message longer than the buffer is cut at a field, never sent half-written. */
static void test_journal_fields_bounded(void **state)
{
    char msg[600], buf[256];
    const char *fields[8];

    memset(msg, 'x', sizeof(msg) - 1);
    msg[sizeof(msg) - 1] = '\0';
    size_t n = log_journal_fields(LOG_ERR, msg, "prod", NULL, 0, buf, sizeof(buf), fields, 8);
    assert_int_equal(n, 0);
    n = log_journal_fields(LOG_ERR, "short", "prod", NULL, 0, buf, 40, fields, 8);
    assert_true(n >= 1 && n < 5);
    assert_string_equal(fields[0], "MESSAGE=short");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_journal_fields),
        cmocka_unit_test(test_journal_fields_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
