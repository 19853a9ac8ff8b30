/* The allocator's own figures (heap in use against heap held) and giving freed heap back to
 * the system: what tells a leak (in use grows) from fragmentation (held grows, in use flat). */
#ifndef VSL_HEAP_H
#define VSL_HEAP_H

#include <stddef.h>

struct vsl_heap {
    size_t in_use; /* bytes handed out by malloc and not freed, every arena and mmap'd chunk */
    size_t held;   /* bytes the allocator took from the system (arenas and mmap'd chunks) */
};

/* Fills h from glibc's mallinfo2(). -ENOTSUP with another libc or under AddressSanitizer,
 * whose malloc is its own (h is zeroed). Not free: it walks each arena's free chunks under
 * that arena's lock (tens of ms at 500,000 free chunks), so other threads allocating from it
 * wait meanwhile. */
int vsl_heap_stats(struct vsl_heap *h);
/* Gives the free pages of every arena back to the system (glibc's malloc_trim(0)); nothing
 * with another libc or under AddressSanitizer. It holds each arena's lock while it trims it:
 * a thread allocating from that arena waits (up to hundreds of ms seen). */
void vsl_heap_trim(void);

#endif
