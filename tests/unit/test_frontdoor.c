/* Unit tests for api/frontdoor.c's per-address key: what the connection limit counts a client
 * under (an IPv6 client's /64, an IPv4 address as itself) and how the log names it. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "api/api-private.h"

static void key_of(const char *ip, unsigned char a[16])
{
    struct sockaddr_storage ss = {0};

    if (strchr(ip, ':')) {
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
        s6->sin6_family = AF_INET6;
        assert_int_equal(inet_pton(AF_INET6, ip, &s6->sin6_addr), 1);
    } else {
        struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
        s4->sin_family = AF_INET;
        assert_int_equal(inet_pton(AF_INET, ip, &s4->sin_addr), 1);
    }
    api_addr_key(&ss, a);
}

static void test_key(void **state)
{
    static const struct {
        const char *a, *b;
        int same;         /* counted as one client */
        const char *text; /* a's key in the log */
    } rows[] = {
        /* Any address of one /64 is one client: privacy addresses change at will. */
        {"2001:db8:1:2::1", "2001:db8:1:2:ffff:ffff:ffff:ffff", 1, "2001:db8:1:2::/64"},
        {"2001:db8:1:2:a:b:c:d", "2001:db8:1:2::", 1, "2001:db8:1:2::/64"},
        {"2001:db8:1:2::1", "2001:db8:1:3::1", 0, "2001:db8:1:2::/64"},
        {"fe80::1", "fe80::2", 1, "fe80::/64"},
        {"::1", "::2", 1, "::/64"},
        /* IPv4, and IPv4 over an IPv6 socket (mapped), are whole addresses. */
        {"192.0.2.7", "192.0.2.8", 0, "192.0.2.7"},
        {"192.0.2.7", "::ffff:192.0.2.7", 1, "192.0.2.7"},
        {"::ffff:192.0.2.7", "::ffff:192.0.2.8", 0, "192.0.2.7"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        unsigned char a[16], b[16];
        char text[64];
        key_of(rows[i].a, a);
        key_of(rows[i].b, b);
        if ((memcmp(a, b, 16) == 0) != rows[i].same)
            fail_msg("row %zu: %s and %s %s one key", i, rows[i].a, rows[i].b,
                     rows[i].same ? "should share" : "should not share");
        api_addr_text(a, text, sizeof(text));
        assert_string_equal(text, rows[i].text);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
