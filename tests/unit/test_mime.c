/* Unit tests for daemon/mime.c: quoted-printable bodies (RFC 2045), encoded-word headers
 * (RFC 2047), line lengths (RFC 5322), the Date and Message-ID values. Encoded text is decoded
 * back here and compared with what went in. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "testlib.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "daemon/mime.h"

static char *qp(const char *in)
{
    struct vsl_buf b;

    vsl_buf_init(&b, 1 << 20);
    assert_int_equal(vsl_mime_qp(&b, in), 0);
    return vsl_buf_take(&b);
}

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Decodes quoted-printable (CRLF lines) into LF lines, failing the test on anything malformed,
 * a line over 76 characters, or a line, hard or soft, that starts with "." (a lone "." line
 * ends SMTP DATA). */
static char *unqp(const char *s)
{
    char *out = malloc(strlen(s) + 1), *o = out;
    size_t col = 0;

    for (const char *p = s; *p; p++) {
        if (*p == '\r') {
            assert_int_equal(p[1], '\n');
            continue;
        }
        if (*p == '\n') {
            col = 0;
            *o++ = '\n';
            continue;
        }
        if (col == 0 && *p == '.')
            fail_msg("a line starts with \".\" at offset %zu of:\n%s", (size_t)(p - s), s);
        assert_true(++col <= 76);
        assert_true((unsigned char)*p >= 32 && (unsigned char)*p < 127);
        if (*p == '=') {
            if (p[1] == '\r') {
                p += 2; /* soft break */
                col = 0;
                continue;
            }
            assert_true(hexval(p[1]) >= 0 && hexval(p[2]) >= 0);
            *o++ = (char)(hexval(p[1]) << 4 | hexval(p[2]));
            col += 2;
            p += 2;
            continue;
        }
        if (*p == ' ' || *p == '\t')
            assert_true(p[1] != '\r' && p[1] != '\0'); /* no bare whitespace at a line end */
        *o++ = *p;
    }
    *o = '\0';
    return out;
}

TEST(test_qp_rows)
{
    static const struct {
        const char *in, *want;
    } rows[] = {
        {"plain text", "plain text"},
        {"a=b", "a=3Db"},
        {"Gr\xc3\xbc\xc3\x9f" "e", "Gr=C3=BC=C3=9Fe"},
        {"two\nlines", "two\r\nlines"},
        {"trailing space \nx", "trailing space=20\r\nx"},
        {"tab\t", "tab=09"},
        {".\n.leading dot", "=2E\r\n=2Eleading dot"},
        {"crlf\r\nin", "crlf\r\nin"},
        {"", ""},
    };
    for (size_t i = 0; i < N(rows); i++) {
        char *s = qp(rows[i].in);
        assert_string_equal(s, rows[i].want);
        free(s);
    }
}

TEST(test_qp_long_lines_round_trip)
{
    static const char *const inputs[] = {
        /* 200 letters: soft breaks every 75 */
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
        "aaaaaaaaaaaaaaaaaaaaaa",
        /* escapes that would straddle the limit */
        "==========================================================================================",
        "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3"
        "\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9 mixed text with spaces at the end of a long line     ",
        "<td style=\"padding:6px 8px;border-bottom:1px solid rgba(128,128,128,0.35);vertical-align:"
        "top;\">a very long HTML line such as the digest writes</td>\n<tr>\n",
    };
    for (size_t i = 0; i < N(inputs); i++) {
        char *s = qp(inputs[i]);
        char *back = unqp(s);
        assert_string_equal(back, inputs[i]);
        free(back);
        free(s);
    }
    char *s = qp(inputs[0]);
    assert_int_equal(strcspn(s, "\r"), 76); /* 75 letters and the soft break's "=" */
    free(s);
}

/* A dot at every position around the soft breaks: whatever comes before it, no encoded line
 * starts with "." (the old encoder left 75 characters, "=", then a line that was a lone "."),
 * and the text decodes back to what went in. */
TEST(test_qp_dots_at_every_column)
{
    static const char *const tails[] = {".", ".\n", ".x", "..", ". ", ".\n.", "=.", ".=."};
    char in[400];

    for (size_t lead = 0; lead < 230; lead++) {
        for (size_t t = 0; t < N(tails); t++) {
            for (int fill = 0; fill < 2; fill++) {
                /* fill 0: letters (one column each); 1: '=' (three columns each) */
                memset(in, fill ? '=' : 'a', lead);
                snprintf(in + lead, sizeof(in) - lead, "%s", tails[t]);
                char *s = qp(in);
                char *back = unqp(s);
                assert_string_equal(back, in);
                free(back);
                free(s);
            }
        }
    }
    /* The case found: 75 letters, then a dot ending the line. */
    memset(in, 'a', 75);
    snprintf(in + 75, sizeof(in) - 75, ".\n");
    char *s = qp(in);
    assert_null(strstr(s, "\r\n.\r\n"));
    assert_non_null(strstr(s, "=\r\n=2E\r\n"));
    free(s);
}

static char *header(const char *name, const char *value)
{
    struct vsl_buf b;

    vsl_buf_init(&b, 1 << 16);
    assert_int_equal(vsl_mime_header(&b, name, value), 0);
    return vsl_buf_take(&b);
}

/* Decodes a header's encoded words (RFC 2047 B encoding, folded), checking each word's length
 * and that it holds whole UTF-8 characters. */
static char *unword(const char *h)
{
    const char *p = strchr(h, ':') + 2;
    char *out = calloc(1, strlen(h) + 1);
    size_t n = 0;

    while (*p) {
        if (!strncmp(p, "\r\n ", 3)) {
            p += 3;
            continue;
        }
        if (!strcmp(p, "\r\n"))
            break;
        assert_int_equal(strncmp(p, "=?UTF-8?B?", 10), 0);
        const char *end = strstr(p + 10, "?=");
        assert_non_null(end);
        assert_true(end + 2 - p <= 75);
        unsigned char dec[128];
        int len = EVP_DecodeBlock(dec, (const unsigned char *)p + 10, (int)(end - p - 10));
        assert_true(len >= 0);
        for (const char *q = end; q > p + 10 && q[-1] == '='; q--)
            len--; /* EVP_DecodeBlock counts the padding's bytes */
        /* a word starts with a character, not the middle of one */
        assert_true((dec[0] & 0xC0) != 0x80);
        memcpy(out + n, dec, (size_t)len);
        n += (size_t)len;
        p = end + 2;
    }
    return out;
}

static void assert_lines_within(const char *s, size_t max)
{
    for (const char *p = s; *p;) {
        size_t n = strcspn(p, "\r");
        assert_true(n <= max);
        p += n;
        if (*p)
            p += 2;
    }
}

TEST(test_encoded_words)
{
    /* ASCII stays as it is */
    char *h = header("Subject", "vslint: 3 new, 1 resolved, 40 open (2 critical)");
    assert_string_equal(h, "Subject: vslint: 3 new, 1 resolved, 40 open (2 critical)\r\n");
    free(h);

    static const char *const utf8[] = {
        "Pr\xc3\xbc" "fung: 3 new, 1 resolved, 40 open (2 critical)",
        "\xe5\xad\x98\xe5\x82\xa8\xe5\x9b\xa2\xe9\x98\x9f \xe2\x9c\x93 vslint: 12 new, 0 resolved, "
        "1234 open (56 critical) \xf0\x9f\x93\xa6\xf0\x9f\x93\xa6\xf0\x9f\x93\xa6\xf0\x9f\x93\xa6",
        /* Long enough for several continuation words, each of which must stay within 75. */
        "\xc3\xa9t\xc3\xa9 vslint: 12 new, 0 resolved, 1234 open (56 critical) on datastores "
        "that have very long names indeed, repeated until the subject needs three or four words, "
        "and then some more text so a fourth continuation word is needed as well",
    };
    for (size_t i = 0; i < N(utf8); i++) {
        h = header("Subject", utf8[i]);
        assert_lines_within(h, 78);
        char *back = unword(h);
        assert_string_equal(back, utf8[i]);
        free(back);
        free(h);
    }
}

TEST(test_long_ascii_header_folds)
{
    char *h = header("To", "storage-team@example.com, oncall-storage@example.com, "
                           "another-list@example.com, backup@example.com");
    assert_lines_within(h, 78);
    assert_non_null(strstr(h, "\r\n "));
    free(h);
}

TEST(test_date_and_message_id)
{
    char buf[64], a[256], b[256];

    assert_string_equal(vsl_mime_date(0, buf, sizeof(buf)), "Thu, 01 Jan 1970 00:00:00 +0000");
    assert_string_equal(vsl_mime_date(1796020200000LL, buf, sizeof(buf)),
                        "Mon, 30 Nov 2026 06:30:00 +0000");
    assert_int_equal(vsl_mime_message_id("vslint@example.com", 1, a, sizeof(a)), 0);
    assert_int_equal(vsl_mime_message_id("vslint@example.com", 1, b, sizeof(b)), 0);
    assert_int_equal(a[0], '<');
    assert_non_null(strstr(a, "@example.com>"));
    assert_string_not_equal(a, b);
}

int main(void)
{
    return tl_main();
}
