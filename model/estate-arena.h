/* The estate's arena: every string and array of a struct estate comes from here and goes away
 * with est_free(). For db/load.c, which builds estates, and the what-if gate
 * (checks/whatif.c), which builds an estate as it would be after a change; checks only read
 * them. */
#ifndef CHK_ESTATE_ARENA_H
#define CHK_ESTATE_ARENA_H

#include <stddef.h>

#include "model/estate.h"

/* A new, empty estate of vcenter (copied) with its own arena. NULL when out of memory.
 * Owned by the caller (est_free). */
struct estate *est_new(const char *vcenter);

/* An estate that shares every array and string of src (which must outlive it) but has an
 * arena of its own, for a caller that replaces some arrays with changed copies: "src as it
 * would be after ...". NULL when out of memory. Owned by the caller (est_free frees only
 * what the overlay allocated). */
struct estate *est_overlay(const struct estate *src);

/* n zeroed bytes aligned for any type, owned by e's arena. NULL when out of memory (or n is 0);
 * the arena then remembers the failure (est_failed). */
void *est_alloc(struct estate *e, size_t n);

/* A copy of s (of its first n bytes for est_strndup) owned by e's arena. NULL for NULL, and
 * when out of memory (remembered, see est_failed). */
const char *est_strdup(struct estate *e, const char *s);
const char *est_strndup(struct estate *e, const char *s, size_t n);

/* Gives the kernel back the pages e's arena has mapped but not handed out yet (a builder that
 * is done): large chunks are mapped in whole huge pages, so the unused end of the last one, and
 * of each large array's own, could be megabytes of RSS. Later allocations still work (those
 * pages come back zeroed). */
void est_trim(struct estate *e);

/* Hands every chunk of side's arena, and its failure if one of its allocations failed, to e's
 * arena: what was allocated from side (by a second thread building part of e, which may not
 * share e's arena) lives as long as e and goes with est_free(e). side was made by est_new()
 * and lives in its own arena, so it is e's memory afterwards: the caller must not use or free
 * it. */
void est_adopt(struct estate *e, struct estate *side);

/* Nonzero once an allocation of e has failed. Builders copy many strings, a NULL from each of
 * which is also a legal "unknown": they check this once at the end instead of after each. */
int est_failed(const struct estate *e);

#endif
