/* Which virtual disks are deltas, and which disks other VMs' disks are deltas of (the sources
 * of linked clones): what the snapshot checks need to tell a fault from a layout by design. */
#ifndef CHK_CLONES_H
#define CHK_CLONES_H

#include <jansson.h>
#include <stddef.h>

#include "model/estate.h"

/* Whether d is a delta (child) disk: backing.parent is set, or, where the parent was not
 * reported, its file is named like a snapshot's delta, "name-000001.vmdk" (six digits). */
int chk_disk_is_delta(const struct est_disk *d);

/* The "[datastore] dir/" of a datastore path, as its length (up to and including the last
 * '/', or the "] " when there is no folder); 0 for NULL. */
size_t chk_path_dir_len(const char *path);

/* Every disk's parent file in e, sorted, with the VM whose disk names it. Owned by the caller:
 * chk_parents_free(). Built once a run, so that looking a file up is O(log n). */
struct chk_parent_ref {
    const char *file; /* borrowed from the estate */
    size_t vm;        /* index into e->vms */
};
struct chk_parents {
    struct chk_parent_ref *refs;
    size_t n;
};
int chk_parents_build(const struct estate *e, struct chk_parents *p); /* 0 or -ENOMEM */
void chk_parents_free(struct chk_parents *p);

/* How many disks of VMs other than vm have file as their parent (linked clones of it); their
 * VMs' names are appended to names (once each) when names is not NULL. -ENOMEM when appending
 * fails. */
int chk_parents_children(const struct chk_parents *p, const struct estate *e, const char *file,
                         size_t vm, json_t *names);

/* Whether d's parent is in d's own folder: a snapshot's delta of the VM's own base disk, not a
 * linked clone's delta of another VM's disk. */
int chk_disk_own_delta(const struct est_disk *d);

/* The linked clones of VM v: the other VMs whose disks have one of v's disk files, or one of
 * their parents, as their parent (a clone made from v's snapshot points at the disk v's current
 * delta is a child of). Their names are appended to names (once each); returns how many disks
 * depend on v's, or -ENOMEM. */
int chk_vm_clone_children(const struct chk_parents *p, const struct estate *e, size_t v,
                          json_t *names);

/* Builds e's disk parents once and calls fn(ctx, e, parents, v) for every VM v of e, stopping
 * at the first error; returns it, or 0 (-ENOMEM when the parents cannot be built). */
struct chk_ctx;
typedef int chk_vm_parents_fn(struct chk_ctx *ctx, const struct estate *e,
                              const struct chk_parents *p, size_t v);
int chk_each_vm_parents(struct chk_ctx *ctx, const struct estate *e, chk_vm_parents_fn *fn);

#endif
