/* Evidence that several checks give alike: fields set and items appended so that running out of
 * memory is never a finding with a field missing; the LUNs behind a datastore, so a finding
 * about a spanned VMFS volume names every device it lives on, not only the head extent; and a
 * virtual disk as a finding about its VM or host lists it. And which datastores' sizes can be
 * judged at all. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "checks/check.h"
#include "util/isotime.h"

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

json_t *chk_ev_add_name(json_t *a, const char *s)
{
    size_t i;
    json_t *x;

    if (!a && !(a = json_array()))
        return NULL;
    json_array_foreach(a, i, x)
    {
        if (json_is_string(x) && !strcmp(json_string_value(x), s))
            return a;
    }
    return chk_ev_append(a, json_string(s));
}

json_t *chk_ev_known(int64_t n)
{
    return n == EST_UNKNOWN ? json_null() : json_integer(n);
}

json_t *chk_ev_time(int64_t unix_s)
{
    char buf[32];

    if (unix_s < 0 || unix_s > INT64_MAX / 1000 || !vsl_iso_time(unix_s * 1000, buf, sizeof(buf)))
        return json_null();
    return json_string(buf);
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

int chk_disk_rdm(const struct est_disk *d)
{
    return d->format && !strncmp(d->format, "rdm", 3);
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

const struct chk_source chk_pool_capacity_sources[] = {
    {CHK_SEED_UNITY, "§1.1.1", CHK_QUOTE_POOL_CAPACITY},
    {0},
};

const struct chk_source chk_snapshot_cost_sources[] = {
    {CHK_SEED_UNITY, "§4.2",
     "Be aware that snapshots increase the overall CPU load on the system, and increase the "
     "overall drive IOPS in the storage pool. Snapshots also use pool capacity to store the older "
     "data being tracked by the snapshot, which increases the amount of capacity used in the pool "
     "until the snapshot is deleted."},
    {0},
};

const struct chk_source chk_reclaim_sources[] = {
    {CHK_SEED_UNITY, "§3.7.2",
     "However, the ability to reclaim space from within a compatible guest OS DOES require thin "
     "provisioning be used on both the storage and the virtual disks. Additional requirements for "
     "space reclamation within the guest include: Virtual machines on VMFS 6 datastores "
     "Reclaiming space on guest operating system is only processed when the space to reclaim is "
     "equal to 1MB or a multiple of 1MB Virtual machines on VMFS 5 datastores"},
    {CHK_SEED_UNITY, "§3.7.2",
     "Virtual machine hardware must be version 11 (ESXi 6.0) or greater The advanced setting "
     "EnableBlockDelete must be set to 1 The guest operating system must be able to identify the "
     "virtual disk as thin"},
    {0},
};

const struct chk_param chk_free_params[] = {
    {"warn_free_pct", 30, 0, 100, "%", "warning when free space is below this share of capacity"},
    {"crit_free_pct", 10, 0, 100, "%", "critical when free space is below this share of capacity"},
    {"snap_free_pct", 5, 0, 100, "%",
     "critical when free space is below this share (the level at which a Unity pool "
     "invalidates its snapshots and replication sessions)"},
    {0},
};

json_t *chk_ev_free_params(json_t *ev, const struct chk_ctx *ctx)
{
    for (size_t i = 0; ev && chk_free_params[i].name; i++)
        ev = chk_ev_set(ev, chk_free_params[i].name,
                        json_real(chk_param(ctx, chk_free_params[i].name)));
    return ev;
}

const struct chk_free_level *chk_free_level(const struct chk_ctx *ctx,
                                            const struct chk_free_level *levels, size_t n,
                                            int64_t free_space, int64_t capacity, double *threshold)
{
    for (size_t i = 0; i < n; i++) {
        *threshold = chk_param(ctx, levels[i].param);
        if ((double)free_space * 100.0 < *threshold * (double)capacity)
            return &levels[i];
    }
    return NULL;
}

double chk_pool_free_pct(const struct est_pool *p)
{
    if (p->size_total <= 0 || p->size_free < 0)
        return -1;
    return (double)p->size_free * 100.0 / (double)p->size_total;
}

const char *chk_pool_datastore(const struct estate *e, const struct est_pool *p, size_t i)
{
    return p->datastore_names ? p->datastore_names[i] : e->datastores[p->datastores[i]].name;
}

json_t *chk_ev_pool(const struct estate *e, const struct est_pool *p)
{
    double pct = chk_pool_free_pct(p);
    json_t *names = json_array();

    for (size_t i = 0; names && i < p->n_datastores; i++)
        names = chk_ev_append(names, json_string(chk_pool_datastore(e, p, i)));
    json_t *ev = json_pack("{s:s, s:s?, s:s, s:s?}", "array", p->array, "array_type",
                           p->array_type, "id", p->id, "name", p->name);
    ev = chk_ev_set(ev, "size_total_bytes", chk_ev_known(p->size_total));
    ev = chk_ev_set(ev, "size_free_bytes", chk_ev_known(p->size_free));
    ev = chk_ev_set(ev, "free_pct", pct < 0 ? json_null() : json_real(pct));
    ev = chk_ev_set(ev, "alert_threshold_pct", chk_ev_known(p->alert_threshold));
    ev = chk_ev_set(ev, "health", chk_ev_known(p->health));
    ev = chk_ev_set(ev, "array_polled",
                    p->polled_ms > 0 ? chk_ev_time(p->polled_ms / 1000) : json_null());
    ev = chk_ev_set(ev, "array_error", p->array_error ? json_string(p->array_error) : json_null());
    return chk_ev_set(ev, "datastores", names);
}

const char *chk_nas_doubt(const struct est_datastore *d, char *buf, size_t size)
{
    const char *host = d->nas_remote_host ? d->nas_remote_host : "?";
    const char *path = d->nas_remote_path ? d->nas_remote_path : "?";
    const char *server = d->nas_doubt_server ? d->nas_doubt_server : "?";
    const char *others = d->nas_doubt_count > 1 ? " and others" : "";

    switch (d->nas_doubt) {
    case EST_NAS_AMBIGUOUS:
        snprintf(buf, size,
                 "%s is an interface address of %d NAS servers of the configured arrays (%s%s), "
                 "none of them known to be a replication destination, and the share %s does not "
                 "tell them apart: which one serves the datastore is not known, so neither a NAS "
                 "server's SP nor a pool is judged for it",
                 host, d->nas_doubt_count, server, others, path);
        return buf;
    case EST_NAS_DESTINATION:
        snprintf(buf, size,
                 "%s is an interface address only of replication destination NAS server %s%s, "
                 "which serves no datastore until a failover: neither its SP nor its pool is "
                 "judged for the datastore",
                 host, server, others);
        return buf;
    case EST_NAS_BY_NAME:
        snprintf(buf, size,
                 "the datastore is mounted by the name %s, which vslint does not resolve: it is "
                 "not matched to a NAS server of the configured arrays",
                 host);
        return buf;
    case EST_NAS_NO_SHARE:
        snprintf(buf, size,
                 "NAS server %s serves it at %s, but none of its NFS shares holds %s: which of "
                 "its file systems the datastore is on is not known, so no pool is judged for it",
                 server, host, path);
        return buf;
    case EST_NAS_SHARES_NOT_READ:
        snprintf(buf, size,
                 "NAS server %s serves it at %s, but the file systems and NFS shares of array %s "
                 "were not read (shares not read: see the log of its poll): which file system "
                 "holds %s is not known, so no pool is judged for it",
                 server, host, d->nas_doubt_array ? d->nas_doubt_array : "?", path);
        return buf;
    default:
        return NULL;
    }
}

int chk_emit_pool(struct chk_ctx *ctx, const struct est_pool *p, enum vsl_severity severity,
                  const char *message, json_t *evidence)
{
    char moref[512], name[512];

    snprintf(moref, sizeof(moref), "%s/%s", p->array, p->id);
    snprintf(name, sizeof(name), "%s/%s", p->array, p->name ? p->name : p->id);
    return chk_emit_object(ctx, "array_pool", moref, name, severity, message, evidence);
}
