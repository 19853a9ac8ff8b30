/* Evidence that several checks give alike: the LUNs behind a datastore, so a finding about a
 * spanned VMFS volume names every device it lives on, not only the head extent. */
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
