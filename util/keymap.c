/* The sorted key table of keymap.h: an array grown by doubling, qsort, and a lower-bound binary
 * search that also works for a key given as a length (a datastore name inside a VM's path). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/keymap.h"

int vsl_keymap_add(struct vsl_keymap *m, const char *key, uintptr_t val)
{
    if (!key)
        return 0;
    if (vsl_grow(&m->v, &m->cap, m->n, sizeof(*m->v), 64) < 0)
        return -ENOMEM;
    m->v[m->n++] = (struct vsl_keymap_entry){key, val};
    return 0;
}

static int entry_cmp(const void *a, const void *b)
{
    return strcmp(((const struct vsl_keymap_entry *)a)->key,
                  ((const struct vsl_keymap_entry *)b)->key);
}

void vsl_keymap_sort(struct vsl_keymap *m)
{
    if (m->n > 1)
        qsort(m->v, m->n, sizeof(*m->v), entry_cmp);
}

/* strcmp(k, the len bytes at key), for a k that is NUL-terminated and a key that may hold a NUL
 * (remote input: `vslint record --anonymize` looks up every stretch of an answer), where
 * strncmp would stop at the NUL and k[len] lie past k's end. */
static int cmp_n(const char *k, const char *key, size_t len)
{
    size_t kl = strnlen(k, len + 1);
    int c = memcmp(k, key, kl < len ? kl : len);
    return c ? c : kl < len ? -1 : kl > len;
}

const struct vsl_keymap_entry *vsl_keymap_find(const struct vsl_keymap *m, const char *key,
                                               size_t len)
{
    size_t lo = 0, hi = m->n;

    if (!key)
        return NULL;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_n(m->v[mid].key, key, len) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < m->n && cmp_n(m->v[lo].key, key, len) == 0 ? &m->v[lo] : NULL;
}

const struct vsl_keymap_entry *vsl_keymap_get(const struct vsl_keymap *m, const char *key)
{
    return key ? vsl_keymap_find(m, key, strlen(key)) : NULL;
}

void vsl_keymap_free(struct vsl_keymap *m)
{
    free(m->v);
    m->v = NULL;
    m->n = m->cap = 0;
}
