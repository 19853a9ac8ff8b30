/* Unit tests of util/heap.c: the heap figures /metrics shows follow what is allocated and
 * freed, and trimming gives freed pages that malloc kept back to the system (the RSS falls). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"
#include "util/heap.h"

#define MIB ((size_t)1 << 20)

/* The process's resident memory (VmRSS), in bytes. */
static size_t rss(void)
{
    char line[256];
    size_t kb = 0;
    FILE *f = fopen("/proc/self/status", "r");

    assert_non_null(f);
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "VmRSS: %zu kB", &kb) == 1)
            break;
    fclose(f);
    assert_true(kb > 0);
    return kb * 1024;
}

/* 32 MiB allocated is 32 MiB more in use (and held); freed, it is in use no more. */
TEST(test_heap_in_use_follows_malloc)
{
    struct vsl_heap a, b, c;

    (void)state;
    if (vsl_heap_stats(&a) < 0)
        skip(); /* not glibc, or AddressSanitizer's malloc */
    char *p = malloc(32 * MIB);
    assert_non_null(p);
    memset(p, 1, 32 * MIB);
    assert_int_equal(vsl_heap_stats(&b), 0);
    assert_true(b.in_use >= a.in_use + 32 * MIB);
    assert_true(b.held >= b.in_use);
    free(p);
    assert_int_equal(vsl_heap_stats(&c), 0);
    assert_true(c.in_use + 32 * MIB <= b.in_use);
}

/* What a round leaves behind: 64 MiB in 1 KiB blocks, all freed but the last, which keeps the
 * arena from shrinking by itself. The heap in use falls, the heap held does not, the RSS stays
 * up; a trim gives at least half of it back. */
TEST(test_trim_gives_freed_pages_back)
{
    enum { N = 64 * 1024, SIZE = 1024 };
    struct vsl_heap before, freed;
    char **blocks = calloc(N, sizeof(*blocks));

    (void)state;
    assert_non_null(blocks);
    if (vsl_heap_stats(&before) < 0) {
        free(blocks);
        skip();
    }
    for (size_t i = 0; i < N; i++) {
        blocks[i] = malloc(SIZE);
        assert_non_null(blocks[i]);
        memset(blocks[i], 1, SIZE);
    }
    for (size_t i = 0; i + 1 < N; i++)
        free(blocks[i]);
    assert_int_equal(vsl_heap_stats(&freed), 0);
    assert_true(freed.held >= freed.in_use + 60 * MIB);
    size_t up = rss();
    vsl_heap_trim();
    size_t down = rss();
    if (down + 32 * MIB > up)
        fail_msg("RSS %zu KiB before the trim, %zu KiB after: about 64 MiB were freed", up / 1024,
                 down / 1024);
    free(blocks[N - 1]);
    free(blocks);
}

int main(void)
{
    return tl_main();
}
