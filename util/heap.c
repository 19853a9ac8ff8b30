/* The allocator's figures and trimming, on glibc; elsewhere the figures are unknown and
 * trimming does nothing (musl and the BSDs return freed pages by themselves). */
#include <errno.h>
#include <string.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "util/heap.h"

/* mallinfo2() is glibc 2.33's; mallinfo()'s int fields wrap at 2 GiB. Under AddressSanitizer
 * malloc is the sanitizer's, and glibc's figures would say nothing of it. */
#if defined(__SANITIZE_ADDRESS__)
#define VSL_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define VSL_SANITIZED 1
#endif
#endif
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33)) &&     \
    !defined(VSL_SANITIZED)
#define VSL_HAVE_MALLINFO2 1
#endif

int vsl_heap_stats(struct vsl_heap *h)
{
    memset(h, 0, sizeof(*h));
#ifdef VSL_HAVE_MALLINFO2
    struct mallinfo2 mi = mallinfo2();
    /* uordblks: chunks in use in the arenas; hblkhd: chunks mmap'd on their own (large
     * blocks), in use until freed. arena: bytes of the arenas' heaps, free chunks included. */
    h->in_use = mi.uordblks + mi.hblkhd;
    h->held = mi.arena + mi.hblkhd;
    return 0;
#else
    return -ENOTSUP;
#endif
}

void vsl_heap_trim(void)
{
#if defined(__GLIBC__) && !defined(VSL_SANITIZED)
    malloc_trim(0);
#endif
}
