/* A lookup table from string keys to values, built by appending, sorted once, then searched by
 * bsearch: how the decoders and the estate loader resolve references by key without a scan or
 * a query per reference. Keys are borrowed, not copied; values are indexes or pointers. */
#ifndef VSL_KEYMAP_H
#define VSL_KEYMAP_H

#include <stddef.h>
#include <stdint.h>

struct vsl_keymap_entry {
    const char *key; /* borrowed: must outlive the map */
    uintptr_t val;   /* an index, or a pointer cast to uintptr_t */
};

struct vsl_keymap {
    struct vsl_keymap_entry *v; /* owned; freed by vsl_keymap_free */
    size_t n, cap;
};

/* Appends key -> val. A NULL key is ignored (an object without a key cannot be referred to by
 * it). 0 or -ENOMEM. Call vsl_keymap_sort() before searching. */
int vsl_keymap_add(struct vsl_keymap *m, const char *key, uintptr_t val);
void vsl_keymap_sort(struct vsl_keymap *m);
/* The first entry whose key is the len bytes at key (len: strlen(key) for a whole string), or
 * NULL; entries with equal keys follow it. key NULL finds nothing. */
const struct vsl_keymap_entry *vsl_keymap_find(const struct vsl_keymap *m, const char *key,
                                               size_t len);
/* The same for a whole string. */
const struct vsl_keymap_entry *vsl_keymap_get(const struct vsl_keymap *m, const char *key);
void vsl_keymap_free(struct vsl_keymap *m); /* the map is empty and reusable afterwards */

#endif
