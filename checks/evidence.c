/* Evidence that several checks give alike: fields set and items appended so that running out of
 * memory is never a finding with a field missing; the LUNs behind a datastore, so a finding
 * about a spanned VMFS volume names every device it lives on, not only the head extent; and a
 * virtual disk as a finding about its VM or host lists it. And which datastores' sizes can be
 * judged at all. */
#include <string.h>

#include "checks/check.h"

json_t *chk_ev_set(json_t *ev, const char *key, json_t *value)
{
    /* json_object_set_new releases value whether or not it succeeds, and refuses a NULL. */
    if (!ev || json_object_set_new(ev, key, value) < 0) {
        if (!ev)
            json_decref(value);
        json_decref(ev);
        return NULL;
    }
    return ev;
}

json_t *chk_ev_append(json_t *a, json_t *value)
{
    /* json_array_append_new releases value whether or not it succeeds, and refuses a NULL. */
    if (!a || json_array_append_new(a, value) < 0) {
        if (!a)
            json_decref(value);
        json_decref(a);
        return NULL;
    }
    return a;
}

json_t *chk_ev_known(int64_t n)
{
    return n == EST_UNKNOWN ? json_null() : json_integer(n);
}

const struct est_datastore *chk_measured_datastore(const struct estate *e, size_t *i)
{
    for (; *i < e->n_datastores; (*i)++) {
        const struct est_datastore *d = &e->datastores[*i];
        if (d->accessible == 1 && d->capacity > 0 && d->free_space >= 0)
            return d;
    }
    return NULL;
}

int chk_each_measured(struct chk_ctx *ctx, const struct estate *e, chk_measured_fn *judge)
{
    const struct est_datastore *d;
    int rc;

    for (size_t i = 0; (d = chk_measured_datastore(e, &i)); i++)
        if ((rc = judge(ctx, d, NULL)) < 0)
            return rc;
    for (size_t i = 0; i < e->n_pods; i++) {
        const struct est_pod *p = &e->pods[i];
        if (p->capacity <= 0 || p->free_space < 0)
            continue;
        if ((rc = judge(ctx, NULL, p)) < 0)
            return rc;
    }
    return 0;
}

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
    for (size_t i = 0; names && i < d->n_extents; i++) {
        const char *n = d->extents[i].disk_name;
        if (n && !named_before(d, i))
            names = chk_ev_append(names, json_string(n));
    }
    return chk_ev_set(ev, "extents", names);
}

json_t *chk_ev_disk(const struct estate *e, const struct est_disk *d)
{
    const char *ds = d->datastore < e->n_datastores ? e->datastores[d->datastore].name : NULL;
    json_t *j = json_pack("{s:s?, s:s?, s:s?, s:s?}", "label", d->label, "file_name",
                          d->file_name, "format", d->format, "datastore", ds);

    /* "s?" packs NULL as null: a disk's unknown datastore is said, not left out. */
    if (d->capacity_bytes != EST_UNKNOWN)
        j = chk_ev_set(j, "capacity_bytes", json_integer(d->capacity_bytes));
    return j;
}
