/* Evidence that several checks give alike: the LUNs behind a datastore, so a finding about a
 * spanned VMFS volume names every device it lives on, not only the head extent; and a virtual
 * disk as a finding about its VM or host lists it. */
#include <string.h>

#include "checks/check.h"

/* Whether extent i's device is named by an earlier extent (two partitions of one device). */
static int named_before(const struct est_datastore *d, size_t i)
{
    for (size_t k = 0; k < i; k++)
        if (d->extents[k].disk_name && !strcmp(d->extents[k].disk_name, d->extents[i].disk_name))
            return 1;
    return 0;
}

json_t *chk_ev_extents(json_t *ev, const struct est_datastore *d)
{
    json_t *names;

    if (!ev || d->n_extents == 0)
        return ev;
    names = json_array();
    if (!names)
        goto fail;
    for (size_t i = 0; i < d->n_extents; i++) {
        const char *n = d->extents[i].disk_name;
        if (!n || named_before(d, i))
            continue;
        if (json_array_append_new(names, json_string(n)) < 0)
            goto fail;
    }
    /* json_object_set_new releases names whether or not it succeeds. */
    if (json_object_set_new(ev, "extents", names) < 0) {
        names = NULL;
        goto fail;
    }
    return ev;
fail:
    json_decref(names);
    json_decref(ev);
    return NULL;
}

json_t *chk_ev_disk(const struct estate *e, const struct est_disk *d)
{
    const char *ds = d->datastore < e->n_datastores ? e->datastores[d->datastore].name : NULL;
    json_t *j = json_pack("{s:s?, s:s?, s:s?, s:s?}", "label", d->label, "file_name",
                          d->file_name, "format", d->format, "datastore", ds);

    /* "s?" packs NULL as null: a disk's unknown datastore is said, not left out. */
    if (j && d->capacity_bytes != EST_UNKNOWN &&
        json_object_set_new(j, "capacity_bytes", json_integer(d->capacity_bytes)) < 0) {
        json_decref(j);
        return NULL;
    }
    return j;
}
