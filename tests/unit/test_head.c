/* Unit tests for api/head.c, the request-head check of the HTTP front door: what is answered,
 * with which status, what is waited for and what is closed as not HTTP. Table-driven. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/head.h"

#define H "Host: x\r\n"

static const struct {
    const char *head;
    int verdict;
    unsigned status; /* API_HEAD_REFUSE */
} rows[] = {
    {"GET /healthz HTTP/1.1\r\n" H "\r\n", API_HEAD_OK, 0},
    {"GET /healthz HTTP/1.0\r\n\r\n", API_HEAD_OK, 0},
    {"\r\nGET /healthz HTTP/1.1\n" H "\n", API_HEAD_OK, 0},
    {"GET /api/v1/findings?check=snapshots&limit=5 HTTP/1.1\r\n" H "\r\n", API_HEAD_OK, 0},
    {"POST /api/v1/polls HTTP/1.1\r\n" H "Content-Length: 0\r\n\r\n", API_HEAD_OK, 0},
    /* Not complete yet. */
    {"", API_HEAD_MORE, 0},
    {"GET /heal", API_HEAD_MORE, 0},
    {"GET /healthz HTTP/1.1\r\n" H, API_HEAD_MORE, 0},
    /* Not HTTP. */
    {"\x16\x03\x01\x02", API_HEAD_GARBAGE, 0},
    {"get /healthz HTTP/1.1\r\n\r\n", API_HEAD_GARBAGE, 0},
    {"GET /\x01\x02\x03", API_HEAD_GARBAGE, 0},
    /* Refused. */
    {"GET /healthz HTTP/2.0\r\n" H "\r\n", API_HEAD_REFUSE, 505},
    {"GET /healthz HTTP/1.2\r\n" H "\r\n", API_HEAD_REFUSE, 505},
    {"GET /healthz HTTP/x.y\r\n" H "\r\n", API_HEAD_REFUSE, 400},
    {"GET /healthz\r\n" H "\r\n", API_HEAD_REFUSE, 400},
    {"GET healthz HTTP/1.1\r\n" H "\r\n", API_HEAD_REFUSE, 400},
    {"GET /healthz HTTP/1.1\r\n\r\n", API_HEAD_REFUSE, 400},
    {"GET /healthz HTTP/1.1\r\n" H H "\r\n", API_HEAD_REFUSE, 400},
    {"GET /a%00b HTTP/1.1\r\n" H "\r\n", API_HEAD_REFUSE, 400},
    {"GET /a?x=%00 HTTP/1.1\r\n" H "\r\n", API_HEAD_REFUSE, 400},
    {"GET /healthz HTTP/1.1\r\n" H " folded\r\n\r\n", API_HEAD_REFUSE, 400},
    {"GET /healthz HTTP/1.1\r\n" H "No colon\r\n\r\n", API_HEAD_REFUSE, 400},
    {"GET /healthz HTTP/1.1\r\n" H "X: a\x01b\r\n\r\n", API_HEAD_REFUSE, 400},
    {"POST /p HTTP/1.1\r\n" H "Content-Length: -5\r\n\r\n", API_HEAD_REFUSE, 400},
    {"POST /p HTTP/1.1\r\n" H "Content-Length: 5x\r\n\r\n", API_HEAD_REFUSE, 400},
    {"POST /p HTTP/1.1\r\n" H "Content-Length: 1\r\nContent-Length: 2\r\n\r\n", API_HEAD_REFUSE,
     400},
    {"POST /p HTTP/1.1\r\n" H "Content-Length: 99999999999999999999999\r\n\r\n", API_HEAD_REFUSE,
     413},
    {"POST /p HTTP/1.1\r\n" H "Content-Length: 16385\r\n\r\n", API_HEAD_REFUSE, 413},
    {"POST /p HTTP/1.1\r\n" H "Transfer-Encoding: chunked\r\n\r\n", API_HEAD_REFUSE, 411},
    {"POST /p HTTP/1.1\r\n" H "Transfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n",
     API_HEAD_REFUSE, 400},
};

static void test_table(void **state)
{
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct api_head h;
        int v = api_head_check(rows[i].head, strlen(rows[i].head), &h);
        if (v != rows[i].verdict || (v == API_HEAD_REFUSE && h.status != rows[i].status))
            fail_msg("row %zu (%.40s): verdict %d status %u, want %d %u", i, rows[i].head, v,
                     h.status, rows[i].verdict, rows[i].status);
        if (v == API_HEAD_OK)
            assert_int_equal(h.head_len, strlen(rows[i].head));
    }
}

/* Sizes: a long URL is 414 before its line even ends; a large head is 431; many parameters
 * are 400 (libmicrohttpd would run out of its memory pool and never answer). */
static void test_limits(void **state)
{
    size_t n = 40000;
    char *b = malloc(n + 200);
    struct api_head h;

    assert_non_null(b);
    memcpy(b, "GET /", 5);
    memset(b + 5, 'a', n);
    assert_int_equal(api_head_check(b, n, &h), API_HEAD_REFUSE);
    assert_int_equal(h.status, 414);

    int len = snprintf(b, n, "GET / HTTP/1.1\r\n" H "X: ");
    memset(b + len, 'a', API_MAX_HEAD);
    assert_int_equal(api_head_check(b, (size_t)len + API_MAX_HEAD, &h), API_HEAD_REFUSE);
    assert_int_equal(h.status, 431);

    len = snprintf(b, n, "GET /?p0=0");
    for (int i = 1; i < 65; i++)
        len += snprintf(b + len, n - (size_t)len, "&p%d=%d", i, i);
    len += snprintf(b + len, n - (size_t)len, " HTTP/1.1\r\n" H "\r\n");
    assert_int_equal(api_head_check(b, (size_t)len, &h), API_HEAD_REFUSE);
    assert_int_equal(h.status, 400);

    len = 0;
    len += snprintf(b, n, "GET / HTTP/1.1\r\n" H);
    for (int i = 0; i < API_MAX_HEADER_LINES; i++)
        len += snprintf(b + len, n - (size_t)len, "X-%d: 1\r\n", i);
    len += snprintf(b + len, n - (size_t)len, "\r\n");
    assert_int_equal(api_head_check(b, (size_t)len, &h), API_HEAD_REFUSE);
    assert_int_equal(h.status, 431);
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
