/* Following a vCenter's changes: a private PropertyCollector with a filter per type over the same
 * ContainerViews, types and property paths the poll reads, and WaitForUpdatesEx rounds whose
 * UpdateSets are decoded into the list of objects that entered, changed or left. */
#ifndef VIM_UPDATES_H
#define VIM_UPDATES_H

#include <stddef.h>

#include "vsphere/soap.h"

enum vim_change_kind { VIM_CHANGE_ENTER, VIM_CHANGE_MODIFY, VIM_CHANGE_LEAVE };

struct vim_change {
    char *type, *moref; /* owned */
    enum vim_change_kind kind;
};

/* The changes of one or more UpdateSets, one entry per object: an object that entered and then
 * changed stays "enter", one that left after anything is "leave", one that left and came back
 * is "enter". */
struct vim_changes {
    struct vim_change *v;
    size_t n, cap;
};

int vim_changes_add(struct vim_changes *cs, const char *type, const char *moref,
                    enum vim_change_kind kind);
void vim_changes_free(struct vim_changes *cs);
const char *vim_change_kind_name(enum vim_change_kind k);

/* One ObjectUpdate (an UpdateSet's filterSet/objectSet element) into cs; an element without a
 * kind or an object is a protocol error. */
int vim_decode_object_update(struct vim_changes *cs, struct vim_node *object_update);
/* A WaitForUpdatesEx answer (the response element, parsed whole) into cs: *version (malloc'd,
 * NULL when the wait ended without changes: the version stays) and *truncated. */
int vim_decode_update_set(struct vim_node *response, struct vim_changes *cs, char **version,
                          int *truncated);

#define VIM_WATCH_TYPES 5

struct vim_watch {
    char *collector;                /* our PropertyCollector, owned */
    char *views[VIM_WATCH_TYPES];   /* owned */
    char *version;                  /* the last version seen, owned */
    long initial_objects;           /* how many objects the first UpdateSet held */
    struct vim_changes hosts;       /* the HostSystems in the view now (kinds unused), owned */
};

/* Creates the collector, the views and their filters, and reads the first UpdateSet (every object
 * as "enter"), which is discarded as it streams in: the caller reads everything itself after
 * this, and the changes from this version on reach it through vim_watch_wait(). */
int vim_watch_start(struct vim_client *c, struct vim_watch *w);
/* One WaitForUpdatesEx round of at most max_wait_s seconds (the client's timeout must be
 * longer), and the rounds a truncated answer calls for, the changes appended to cs. 0 with no
 * change when nothing changed in time. -VSL_EVERSION: the version is no longer valid, read
 * everything again; -VSL_ENOAUTH: the session is gone. */
int vim_watch_wait(struct vim_client *c, struct vim_watch *w, int max_wait_s,
                   struct vim_changes *cs);
/* Appends every host in the view that cs does not name yet as "modify": the hosts then read
 * again by moref with their per-host reads, which the property collector cannot follow. Returns
 * how many it added, or -ENOMEM. */
int vim_watch_add_hosts(const struct vim_watch *w, struct vim_changes *cs);
/* Destroys the collector (and its filter) and the views, best effort; frees w's strings. */
void vim_watch_stop(struct vim_client *c, struct vim_watch *w);

#endif
