/* Unit tests for util/buf: bounded appends, XML escaping, whole-file reads. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <errno.h>
#include <jansson.h>

#include "util/buf.h"
#include "util/err.h"

static void test_limit(void **state)
{
    struct vsl_buf b;
    vsl_buf_init(&b, 8);
    assert_int_equal(vsl_buf_addstr(&b, "12345678"), 0);
    assert_int_equal(vsl_buf_addstr(&b, "9"), -VSL_ETOOBIG);
    assert_string_equal(b.data, "12345678"); /* a refused append changes nothing */
    vsl_buf_free(&b);
}

/* A table of strings and what a function makes of each. */
struct str_case {
    const char *in, *want;
};

/* fn(in) must give want for every row; fn returns a string the caller frees. */
static void check_rows(const struct str_case *rows, size_t n, char *(*fn)(const char *in))
{
    for (size_t i = 0; i < n; i++) {
        char *s = fn(rows[i].in);
        assert_string_equal(s, rows[i].want);
        free(s);
    }
}

static char *xml_escaped(const char *in)
{
    struct vsl_buf b;

    vsl_buf_init(&b, 1024);
    assert_int_equal(vsl_buf_addxml(&b, in), 0);
    return vsl_buf_take(&b);
}

static void test_xml_escape(void **state)
{
    static const struct str_case rows[] = {
        {"plain", "plain"},
        {"a&b", "a&amp;b"},
        {"<pw>\"'", "&lt;pw&gt;&quot;&#39;"},
        {"", ""},
    };
    check_rows(rows, sizeof(rows) / sizeof(rows[0]), xml_escaped);
}

static void test_printf_large(void **state)
{
    struct vsl_buf b;
    char big[2000];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    vsl_buf_init(&b, 4096);
    assert_int_equal(vsl_buf_printf(&b, "[%s]", big), 0);
    assert_int_equal(b.len, 2001);
    assert_int_equal(vsl_buf_printf(&b, "%s%s", big, big), -VSL_ETOOBIG);
    vsl_buf_free(&b);
}

/* A list of messages that runs out of room ends with one line saying so, never with half a
 * line; the lines before stay whole. */
static void test_lines(void **state)
{
    struct vsl_buf b;

    vsl_buf_init(&b, 40);
    assert_int_equal(vsl_buf_line(&b, "first %d", 1), 0);
    assert_int_equal(vsl_buf_line(&b, "second %s", "line"), 0);
    assert_string_equal(b.data, "first 1\nsecond line\n");
    assert_true(vsl_buf_line(&b, "a third line that does not fit at all") < 0);
    assert_string_equal(b.data, "first 1\nsecond line\n(further messages left out: too many)\n");
    assert_true(vsl_buf_line(&b, "fourth") < 0); /* said once */
    assert_string_equal(b.data, "first 1\nsecond line\n(further messages left out: too many)\n");
    vsl_buf_free(&b);
}

static char *utf8_fixed(const char *in)
{
    char *s = strdup(in);

    assert_non_null(s);
    vsl_utf8_fix(s);
    return s;
}

static void test_utf8_fix(void **state)
{
    static const struct str_case rows[] = {
        {"plain ascii", "plain ascii"},
        {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"},
        {"%\xff=1", "%?=1"},                 /* a byte that starts nothing */
        {"cut \xe2\x82", "cut ??"},          /* a character cut by snprintf */
        {"\xc0\xaf", "??"},                  /* overlong '/' */
        {"\xed\xa0\x80", "???"},             /* a UTF-16 surrogate */
        {"\xf4\x90\x80\x80", "????"},        /* past U+10FFFF */
    };
    check_rows(rows, sizeof(rows) / sizeof(rows[0]), utf8_fixed);
}

/* vsl_buf_addjson() writes what jansson writes for the same string (the findings pages are
 * text written with it, the single finding jansson's): quotes, backslashes, every control
 * character, NUL inside, UTF-8 as it is; and refuses what jansson refuses, appending nothing. */
static void test_json_string(void **state)
{
    static const struct {
        const char *in;
        size_t n;
    } rows[] = {
        {"plain", 5},
        {"", 0},
        {"say \"hi\" \\ / done", 17},
        {"\b\f\n\r\t\x01\x1f\x7f end", 12},
        {"nul\0inside", 10},
        {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xe2\x80\xa8", 18},
    };
    static const char *const bad[] = {"\xff", "cut \xe2\x82", "\xc0\xaf", "\xed\xa0\x80",
                                      "\xf4\x90\x80\x80"};

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct vsl_buf b;
        json_t *v = json_stringn(rows[i].in, rows[i].n);
        char *want = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
        vsl_buf_init(&b, 1024);
        assert_int_equal(vsl_buf_addstr(&b, "x"), 0);
        assert_int_equal(vsl_buf_addjson(&b, rows[i].in, rows[i].n), 0);
        assert_non_null(want);
        assert_int_equal(b.len, strlen(want) + 1);
        assert_memory_equal(b.data + 1, want, strlen(want));
        free(want);
        json_decref(v);
        vsl_buf_free(&b);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct vsl_buf b;
        assert_null(json_string(bad[i])); /* jansson refuses it too */
        vsl_buf_init(&b, 1024);
        assert_int_equal(vsl_buf_addstr(&b, "x"), 0);
        assert_int_equal(vsl_buf_addjson(&b, bad[i], strlen(bad[i])), -EILSEQ);
        assert_int_equal(b.len, 1);
        assert_string_equal(b.data, "x");
        vsl_buf_free(&b);
    }
    /* A character cut by the length given, though the bytes after it would complete it. */
    struct vsl_buf b;
    vsl_buf_init(&b, 1024);
    assert_int_equal(vsl_buf_addjson(&b, "\xe2\x82\xac", 2), -EILSEQ);
    assert_int_equal(b.len, 0);
    vsl_buf_free(&b);
}

static void test_read_file(void **state)
{
    char path[] = "/tmp/vslint-test-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "s3cret\n", 7), 7);
    close(fd);
    char *s = NULL;
    assert_int_equal(vsl_read_file(path, 100, &s), 0);
    assert_string_equal(s, "s3cret"); /* one trailing newline stripped */
    free(s);
    assert_int_equal(vsl_read_file(path, 3, &s), -VSL_ETOOBIG);
    assert_null(s);
    unlink(path);
    assert_int_equal(vsl_read_file(path, 100, &s), -ENOENT);
}

/* vsl_read_secret_file reads as vsl_read_file does, a key bigger than a buffer's first blocks
 * and stdio's chunk too (it grows through the secret buffer's wiped blocks). */
static void test_read_secret_file(void **state)
{
    char path[] = "/tmp/vslint-test-XXXXXX", key[10001];
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    for (size_t i = 0; i < sizeof(key) - 1; i++)
        key[i] = (char)('A' + i % 26);
    key[sizeof(key) - 1] = '\n';
    assert_int_equal(write(fd, key, sizeof(key)), (ssize_t)sizeof(key));
    close(fd);
    char *s = NULL;
    assert_int_equal(vsl_read_secret_file(path, 1 << 20, &s), 0);
    assert_int_equal(strlen(s), sizeof(key) - 1);
    assert_memory_equal(s, key, sizeof(key) - 1);
    free(s);
    assert_int_equal(vsl_read_secret_file(path, 100, &s), -VSL_ETOOBIG);
    assert_null(s);
    unlink(path);
    assert_int_equal(vsl_read_secret_file(path, 100, &s), -ENOENT);
}

/* vsl_grow: room for element n, the capacity doubled from first, the elements kept; an
 * impossible size refused with the array as it was. */
static void test_grow(void **state)
{
    int *v = NULL;
    size_t cap = 0;

    assert_int_equal(vsl_grow(&v, &cap, 0, sizeof(*v), 4), 0);
    assert_int_equal(cap, 4);
    for (size_t n = 0; n < 9; n++) {
        assert_int_equal(vsl_grow(&v, &cap, n, sizeof(*v), 4), 0);
        assert_true(n < cap);
        v[n] = (int)n * 10;
    }
    assert_int_equal(cap, 16); /* 4, 8, 16 */
    for (size_t n = 0; n < 9; n++)
        assert_int_equal(v[n], (int)n * 10);
    /* Room already: nothing moves. */
    int *same = v;
    assert_int_equal(vsl_grow(&v, &cap, 9, sizeof(*v), 4), 0);
    assert_ptr_equal(v, same);
    assert_int_equal(cap, 16);
    /* Past what size_t can count: refused, the array and its capacity untouched. */
    assert_int_equal(vsl_grow(&v, &cap, 16, SIZE_MAX / 8, 4), -ENOMEM);
    assert_ptr_equal(v, same);
    assert_int_equal(cap, 16);
    free(v);
}

/* free() as the library calls it (tests/meson.build links this test with --wrap=free): a block
 * the test watches is checked for zeroes as it is freed. realloc() frees without calling free(),
 * so a buffer that grows by realloc never shows the test its old block. */
void __real_free(void *p);
void __wrap_free(void *p);

static const char *watched;   /* the block to look at when it is freed */
static size_t watched_len;    /* its capacity */
static int watched_freed;     /* it went through free() */
static int watched_zero;      /* and held only zeroes then */

void __wrap_free(void *p)
{
    if (p && p == watched) {
        watched_freed = 1;
        watched_zero = 1;
        for (size_t i = 0; i < watched_len; i++)
            if (watched[i])
                watched_zero = 0;
        watched = NULL;
    }
    __real_free(p);
}

static void watch(const struct vsl_buf *b)
{
    watched = b->data;
    watched_len = b->cap;
    watched_freed = watched_zero = 0;
}

/* A secret's buffer: every block it grows out of, and its last one when freed or reset, is
 * zeroed before it goes back to the allocator, whichever append made it grow (add, addstr,
 * addxml, printf); a plain buffer is left alone. The password of a Login request is longer
 * than the first block (256 bytes) here, as in the review's finding ("over about 116 bytes"
 * with the envelope). */
static void test_secret_wiped(void **state)
{
    char password[600];
    memset(password, 'p', sizeof(password) - 1);
    password[sizeof(password) - 1] = '\0';

    for (int how = 0; how < 4; how++) {
        struct vsl_buf b;
        vsl_buf_init_secret(&b, 1 << 20);
        assert_int_equal(vsl_buf_addstr(&b, "<password>"), 0);
        assert_int_equal(vsl_buf_add(&b, password, 100), 0);
        watch(&b);
        const char *first = b.data;
        switch (how) {
        case 0: assert_int_equal(vsl_buf_add(&b, password, 500), 0); break;
        case 1: assert_int_equal(vsl_buf_addstr(&b, password), 0); break;
        case 2: assert_int_equal(vsl_buf_addxml(&b, password), 0); break;
        case 3: assert_int_equal(vsl_buf_printf(&b, "%s</password>", password), 0); break;
        }
        assert_ptr_not_equal(b.data, first); /* it grew */
        assert_true(watched_freed);
        assert_true(watched_zero);
        assert_int_equal(strncmp(b.data, "<password>pppp", 14), 0); /* and kept its bytes */
        assert_int_equal(b.data[b.len], '\0');

        watch(&b);
        vsl_buf_reset(&b);
        for (size_t i = 0; i < watched_len; i++)
            assert_int_equal(b.data[i], 0);
        assert_int_equal(vsl_buf_add(&b, password, 10), 0);
        watch(&b);
        vsl_buf_free(&b);
        assert_true(watched_freed);
        assert_true(watched_zero);
    }

    /* A plain buffer grows by realloc, as it always did. */
    struct vsl_buf plain;
    vsl_buf_init(&plain, 1 << 20);
    assert_int_equal(vsl_buf_add(&plain, password, 100), 0);
    watch(&plain);
    assert_int_equal(vsl_buf_add(&plain, password, 500), 0);
    assert_false(watched_freed && watched_zero);
    watched = NULL;
    vsl_buf_free(&plain);
    (void)state;
}

/* The shortest form that reads back: what /metrics prints for a duration of 0.136 s. */
static void test_fmt_double(void **state)
{
    static const struct {
        double v;
        const char *want;
    } rows[] = {
        {0.136, "0.136"},
        {0.1 + 0.2, "0.30000000000000004"},
        {5, "5"},
        {0, "0"},
        {-2.5, "-2.5"},
        {1764622800.123, "1764622800.123"},
        {1e21, "1e+21"},
        {1.0 / 3, "0.3333333333333333"},
    };
    char out[32];

    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        vsl_fmt_double(out, sizeof(out), rows[i].v);
        assert_string_equal(out, rows[i].want);
        assert_true(strtod(out, NULL) == rows[i].v);
    }
    /* Every double of a sweep reads back, in no more digits than %.17g. */
    for (double v = 1e-9; v < 1e12; v *= 1.37) {
        char full[32];
        vsl_fmt_double(out, sizeof(out), v);
        snprintf(full, sizeof(full), "%.17g", v);
        assert_true(strtod(out, NULL) == v);
        assert_true(strlen(out) <= strlen(full));
    }
}

/* Columns, not bytes: a name with accents or CJK characters is cut and padded by what a
 * terminal shows. */
static void test_utf8_fit(void **state)
{
    static const struct {
        const char *s;
        size_t cols, want_bytes, want_width;
    } rows[] = {
        {"ds-prod-01", 32, 10, 10},
        {"ds-prod-01", 5, 5, 5},
        {"datastöre-müller", 32, 18, 16},
        {"datastöre", 7, 8, 7},  /* "datastö": seven columns, eight bytes */
        {"datastöre", 6, 6, 6},
        {"\xe5\xad\x98\xe5\x82\xa8", 3, 3, 2}, /* two wide characters: the second does not fit */
        {"\xe5\xad\x98\xe5\x82\xa8", 4, 6, 4},
        {"e\xcc\x81t\xc3\xa9", 32, 6, 3}, /* e + combining acute: one column */
        {"bad\xff", 32, 4, 4},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        size_t w = 99, n = vsl_utf8_fit(rows[i].s, rows[i].cols, &w);
        if (n != rows[i].want_bytes || w != rows[i].want_width)
            fail_msg("row %zu: %zu bytes, %zu columns; want %zu, %zu", i, n, w,
                     rows[i].want_bytes, rows[i].want_width);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_limit),
        cmocka_unit_test(test_xml_escape),
        cmocka_unit_test(test_printf_large),
        cmocka_unit_test(test_lines),
        cmocka_unit_test(test_utf8_fix),
        cmocka_unit_test(test_json_string),
        cmocka_unit_test(test_read_file),
        cmocka_unit_test(test_grow),
        cmocka_unit_test(test_secret_wiped),
        cmocka_unit_test(test_read_secret_file),
        cmocka_unit_test(test_fmt_double),
        cmocka_unit_test(test_utf8_fit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
