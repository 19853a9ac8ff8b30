/* The estate's memory and lookups: a chunked bump allocator that owns every string and array
 * of an estate, so a 20,000-VM snapshot is a few hundred allocations and one est_free(). */
#include <assert.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>

#include "model/estate-arena.h"
#include "model/estate.h"

/* Chunks start small, so the estate of a test or a small site costs a few KiB, and double up
 * to a cap, so a large one needs few of them. */
#define CHUNK_FIRST ((size_t)4096)
#define CHUNK_MAX   ((size_t)2 * 1024 * 1024)

/* A chunk of a huge page or more is mapped on its own, aligned, with MADV_HUGEPAGE: the
 * estate of 100,000 VMs is a quarter of a GB written once, and taking it a 4 KiB page fault at
 * a time cost more than reading it from SQLite (a fault is dear in a virtual machine). */
#define HUGE_PAGE ((size_t)2 * 1024 * 1024)

struct chunk {
    struct chunk *next;
    size_t used, size;  /* bytes of data */
    size_t mapped;      /* bytes mapped (munmap), 0 when calloc'd */
    max_align_t data[]; /* the element type only gives data the strictest alignment */
};

/* A zeroed chunk of at least len bytes in all, mapped and aligned to HUGE_PAGE. */
static struct chunk *chunk_map(size_t len)
{
    const size_t mapped = (len + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    char *p, *start;
    struct chunk *c;

    if (mapped < len || mapped > SIZE_MAX - HUGE_PAGE)
        return NULL;
    /* One huge page more than needed, so an aligned start lies inside; the rest goes back. */
    p = mmap(NULL, mapped + HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
             0);
    if (p == MAP_FAILED)
        return NULL;
    start = p + ((HUGE_PAGE - (uintptr_t)p % HUGE_PAGE) % HUGE_PAGE);
    if (start > p)
        munmap(p, (size_t)(start - p));
    if (start + mapped < p + mapped + HUGE_PAGE)
        munmap(start + mapped, (size_t)(p + mapped + HUGE_PAGE - (start + mapped)));
    madvise(start, mapped, MADV_HUGEPAGE); /* a hint: without it the chunk is still good */
    c = (struct chunk *)start;
    c->size = mapped - sizeof(*c);
    c->mapped = mapped;
    return c;
}

struct arena {
    struct chunk *head; /* the chunk being filled; the others are full or dedicated */
    size_t next_size;
    int failed;
};

static struct chunk *chunk_new(size_t size)
{
    struct chunk *c;

    if (size > SIZE_MAX - sizeof(*c))
        return NULL;
    if (sizeof(*c) + size >= HUGE_PAGE)
        return chunk_map(sizeof(*c) + size);
    /* calloc: what est_alloc hands out is zeroed, and bump memory is never handed out twice. */
    c = calloc(1, sizeof(*c) + size);
    if (c)
        c->size = size;
    return c;
}

/* n zeroed bytes at an address that is a multiple of align (a power of two, at most that of
 * max_align_t). Strings take align 1: at 16 bytes each, "active" on 500,000 paths cost more
 * memory, and page faults, than their text. */
static void *bump(struct estate *e, size_t n, size_t align)
{
    struct arena *a;
    struct chunk *c;
    size_t at;

    assert(e && e->arena);
    a = e->arena;
    if (n == 0)
        return NULL;
    if (n > SIZE_MAX - alignof(max_align_t)) {
        a->failed = 1;
        return NULL;
    }
    c = a->head;
    at = c ? (c->used + align - 1) & ~(align - 1) : 0;
    if (c && at <= c->size && c->size - at >= n) {
        c->used = at + n;
        return (char *)c->data + at;
    }
    if (n > a->next_size / 4) {
        /* A large array (20,000 VMs) gets a chunk of its own, linked behind the current one so
         * the room left in that one is not wasted. */
        c = chunk_new(n);
        if (!c) {
            a->failed = 1;
            return NULL;
        }
        c->used = n;
        if (a->head) {
            c->next = a->head->next;
            a->head->next = c;
        } else {
            a->head = c;
        }
        return c->data;
    }
    c = chunk_new(a->next_size);
    if (!c) {
        a->failed = 1;
        return NULL;
    }
    if (a->next_size < CHUNK_MAX)
        a->next_size *= 2;
    c->next = a->head;
    a->head = c;
    c->used = n;
    return c->data;
}

void *est_alloc(struct estate *e, size_t n)
{
    return bump(e, n, alignof(max_align_t));
}

const char *est_strndup(struct estate *e, const char *s, size_t n)
{
    char *d;

    if (!s)
        return NULL;
    if (n == SIZE_MAX) {
        ((struct arena *)e->arena)->failed = 1;
        return NULL;
    }
    d = bump(e, n + 1, 1);
    if (!d)
        return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

const char *est_strdup(struct estate *e, const char *s)
{
    return s ? est_strndup(e, s, strlen(s)) : NULL;
}

int est_failed(const struct estate *e)
{
    return ((const struct arena *)e->arena)->failed;
}

struct estate *est_new(const char *vcenter)
{
    struct arena *a = calloc(1, sizeof(*a));
    struct estate tmp = {.arena = a};
    struct estate *e;

    assert(vcenter);
    if (!a)
        return NULL;
    a->next_size = CHUNK_FIRST;
    /* The estate itself lives in its arena: est_free() is then one walk over the chunks. */
    e = est_alloc(&tmp, sizeof(*e));
    if (!e) {
        est_free(&tmp);
        return NULL;
    }
    e->arena = a;
    e->vcenter = est_strdup(e, vcenter);
    if (!e->vcenter) {
        est_free(e);
        return NULL;
    }
    return e;
}

struct estate *est_overlay(const struct estate *src)
{
    struct estate *e = est_new(src->vcenter);
    void *arena;

    if (!e)
        return NULL;
    arena = e->arena;
    *e = *src; /* every array shared; the caller replaces the ones it changes */
    e->arena = arena;
    return e;
}

/* The pages of c's mapping past what it handed out go back to the kernel; touched again they
 * come back zeroed, as bump() hands memory out. A calloc'd chunk is the allocator's. */
static void chunk_trim(struct chunk *c)
{
    const uintptr_t page = 4096;
    uintptr_t from = ((uintptr_t)c->data + c->used + page - 1) & ~(page - 1);
    uintptr_t end = (uintptr_t)c + c->mapped;

    if (c->mapped && from < end)
        madvise((void *)from, end - from, MADV_DONTNEED);
}

void est_trim(struct estate *e)
{
    struct arena *a = e->arena;

    /* The head, and the chunks of one large array each, whose mapping is rounded up to whole
     * huge pages. */
    for (struct chunk *c = a ? a->head : NULL; c; c = c->next)
        chunk_trim(c);
}

void est_adopt(struct estate *e, struct estate *side)
{
    struct arena *a = e->arena, *b = side->arena;
    struct chunk *last;

    assert(a && b && a != b);
    if (b->head) {
        /* b's head is filled no more: what it did not hand out goes. */
        chunk_trim(b->head);
        /* Behind a's head, which stays the chunk being filled. */
        for (last = b->head; last->next; last = last->next)
            ;
        if (a->head) {
            last->next = a->head->next;
            a->head->next = b->head;
        } else {
            a->head = b->head;
        }
    }
    a->failed |= b->failed;
    free(b);
}

void est_free(struct estate *e)
{
    struct arena *a;
    struct chunk *c, *next;

    if (!e)
        return;
    a = e->arena; /* read before e, which may sit in one of the chunks, goes away */
    if (!a)
        return;
    for (c = a->head; c; c = next) {
        next = c->next;
        if (c->mapped)
            munmap(c, c->mapped);
        else
            free(c);
    }
    free(a);
}

const struct est_option *est_option(const struct est_option *opts, size_t n, const char *key)
{
    size_t i;

    assert(key);
    /* An adapter or target has a handful of options: a scan beats building anything. */
    for (i = 0; i < n; i++) {
        if (opts[i].key && strcmp(opts[i].key, key) == 0)
            return &opts[i];
    }
    return NULL;
}

static const struct est_gap *find_gap(const struct est_gap *gaps, size_t n, const char *what)
{
    assert(what);
    for (size_t i = 0; i < n; i++)
        if (gaps[i].what && !strcmp(gaps[i].what, what))
            return &gaps[i];
    return NULL;
}

const struct est_gap *est_gap(const struct est_host *h, const char *what)
{
    return find_gap(h->gaps, h->n_gaps, what);
}

void est_trimmed(const char *s, char *out, size_t size)
{
    size_t n;

    assert(out && size > 0);
    out[0] = '\0';
    if (!s)
        return;
    while (*s == ' ')
        s++;
    n = strlen(s);
    while (n && s[n - 1] == ' ')
        n--;
    if (n >= size)
        n = size - 1;
    memcpy(out, s, n);
    out[n] = '\0';
}

static int entity_cmp(const void *key, const void *item)
{
    const struct est_entity *en = item;
    return strcmp(key, en->moref ? en->moref : "");
}

const struct est_entity *est_entity(const struct estate *e, const char *moref)
{
    if (!moref || e->n_entities == 0)
        return NULL;
    return bsearch(moref, e->entities, e->n_entities, sizeof(*e->entities), entity_cmp);
}

const struct est_gap *est_vcenter_gap(const struct estate *e, const char *what)
{
    return find_gap(e->gaps, e->n_gaps, what);
}

const struct est_array_port *est_array_port(const struct estate *e, const char *wwpn)
{
    for (size_t i = 0; wwpn && i < e->n_array_ports; i++)
        if (e->array_ports[i].wwpn && !strcmp(e->array_ports[i].wwpn, wwpn))
            return &e->array_ports[i];
    return NULL;
}

const struct est_array_port *est_array_portal(const struct estate *e, const char *address,
                                              const char *iqn)
{
    const struct est_array_port *first = NULL;
    const char *a = address, *end;
    size_t n;

    if (!a)
        return NULL;
    /* "[v6]:port", "v4:port", or a bare address (one colon at most is a port; more are v6). */
    if (*a == '[') {
        a++;
        end = strchr(a, ']');
        n = end ? (size_t)(end - a) : strlen(a);
    } else {
        end = strchr(a, ':');
        n = end && !strchr(end + 1, ':') ? (size_t)(end - a) : strlen(a);
    }
    for (size_t i = 0; i < e->n_array_ports; i++) {
        const struct est_array_port *p = &e->array_ports[i];
        if (!p->address || strlen(p->address) != n || strncasecmp(p->address, a, n))
            continue;
        if (iqn && p->iqn && !strcasecmp(p->iqn, iqn))
            return p;
        if (!first)
            first = p;
        else if (!iqn && strcmp(first->array, p->array))
            return NULL; /* two arrays at one address, and nothing to tell them apart */
    }
    return first;
}

int est_portal_other_iqn(const struct est_array_port *p, const char *iqn)
{
    return iqn && p->iqn && strcasecmp(iqn, p->iqn) != 0;
}

void est_keep_pools(struct estate *e, int (*keep)(const char *array, void *ctx), void *ctx)
{
    size_t n = 0, np = 0;

    /* A removed array's ports tell no storage processor either, nor its NAS servers. */
    for (size_t i = 0; i < e->n_array_ports; i++)
        if (keep(e->array_ports[i].array, ctx))
            e->array_ports[np++] = e->array_ports[i];
    e->n_array_ports = np;
    for (size_t i = 0; i < e->n_datastores; i++) {
        struct est_datastore *d = &e->datastores[i];
        if (d->nas_array && !keep(d->nas_array, ctx))
            d->nas_array = d->nas_server = d->nas_home_sp = NULL;
        /* A doubt about a removed array's NAS server is no doubt of this configuration. */
        if (d->nas_doubt && d->nas_doubt_array && !keep(d->nas_doubt_array, ctx)) {
            d->nas_doubt = EST_NAS_NO_DOUBT;
            d->nas_doubt_server = d->nas_doubt_array = NULL;
            d->nas_doubt_count = 0;
        }
    }

    /* Compacted in place: pool i moves to n, so a datastore's old index is rewritten to the
     * new one, or dropped (EST_NONE in the map, which reuses the pools' n_datastores order). */
    for (size_t i = 0; i < e->n_pools; i++) {
        int k = keep(e->pools[i].array, ctx);
        for (size_t d = 0; d < e->n_datastores; d++) {
            struct est_datastore *ds = &e->datastores[d];
            size_t o = 0;
            for (size_t j = 0; j < ds->n_pools; j++) {
                if (ds->pools[j] == i && !k)
                    continue;
                ds->pool_thin[o] = ds->pool_thin[j]; /* moves with its pool */
                ds->pools[o++] = ds->pools[j] == i ? n : ds->pools[j];
            }
            ds->n_pools = o;
        }
        if (k)
            e->pools[n++] = e->pools[i];
    }
    e->n_pools = n;
}
