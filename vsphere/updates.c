/* WaitForUpdatesEx: a private PropertyCollector, one filter over a ContainerView per type with
 * the poll's own property paths, and the UpdateSets decoded into changed objects. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/err.h"
#include "util/log.h"
#include "vsphere/decode.h"
#include "vsphere/session.h"
#include "vsphere/updates.h"

/* The types followed, with the paths the poll reads them with (vsphere/decode.c). The
 * containers above datastores and the alarms are only read by a full read. */
static const struct {
    const char *type;
    const char *const *paths;
} watched[VIM_WATCH_TYPES] = {
    {"StoragePod", vim_storage_pod_paths},
    {"Datastore", vim_datastore_paths},
    {"DistributedVirtualSwitch", vim_dvswitch_paths},
    {"HostSystem", vim_host_paths},
    {"VirtualMachine", vim_vm_paths},
};

/* ---- the changes --------------------------------------------------------------------------- */

const char *vim_change_kind_name(enum vim_change_kind k)
{
    return k == VIM_CHANGE_ENTER ? "enter" : k == VIM_CHANGE_LEAVE ? "leave" : "modify";
}

int vim_changes_add(struct vim_changes *cs, const char *type, const char *moref,
                    enum vim_change_kind kind)
{
    for (size_t i = 0; i < cs->n; i++) {
        struct vim_change *o = &cs->v[i];
        if (strcmp(o->moref, moref) || strcmp(o->type, type))
            continue;
        if (kind == VIM_CHANGE_LEAVE || o->kind == VIM_CHANGE_LEAVE)
            o->kind = kind; /* gone, or back again */
        return 0;
    }
    if (vsl_grow(&cs->v, &cs->cap, cs->n, sizeof(*cs->v), 16) < 0)
        return -ENOMEM;
    struct vim_change *c = &cs->v[cs->n];
    c->type = strdup(type);
    c->moref = strdup(moref);
    c->kind = kind;
    if (!c->type || !c->moref) {
        free(c->type);
        free(c->moref);
        return -ENOMEM;
    }
    cs->n++;
    return 0;
}

/* Drops the entry of moref from cs (the hosts list, where each moref is there once). */
static void changes_remove(struct vim_changes *cs, const char *type, const char *moref)
{
    for (size_t i = 0; i < cs->n; i++) {
        if (strcmp(cs->v[i].moref, moref) || strcmp(cs->v[i].type, type))
            continue;
        free(cs->v[i].type);
        free(cs->v[i].moref);
        cs->v[i] = cs->v[--cs->n];
        return;
    }
}

void vim_changes_free(struct vim_changes *cs)
{
    for (size_t i = 0; i < cs->n; i++) {
        free(cs->v[i].type);
        free(cs->v[i].moref);
    }
    free(cs->v);
    memset(cs, 0, sizeof(*cs));
}

int vim_decode_object_update(struct vim_changes *cs, struct vim_node *object_update)
{
    const char *kind = vim_path_text(object_update, "kind");
    struct vim_node *obj = vim_child(object_update, "obj");
    const char *moref = vim_text(obj);
    const char *type = obj ? obj->type : NULL;
    enum vim_change_kind k;

    if (!kind || !moref || !type)
        return -VSL_EPROTO;
    if (!strcmp(kind, "enter"))
        k = VIM_CHANGE_ENTER;
    else if (!strcmp(kind, "leave"))
        k = VIM_CHANGE_LEAVE;
    else if (!strcmp(kind, "modify"))
        k = VIM_CHANGE_MODIFY;
    else
        return -VSL_EPROTO;
    return cs ? vim_changes_add(cs, type, moref, k) : 0;
}

int vim_decode_update_set(struct vim_node *response, struct vim_changes *cs, char **version,
                          int *truncated)
{
    struct vim_node *rv = vim_child(response, "returnval");
    int r = 0;

    *version = NULL;
    *truncated = 0;
    if (!rv)
        return 0; /* maxWaitSeconds ran out without a change */
    for (struct vim_node *f = vim_child(rv, "filterSet"); f && r == 0; f = vim_next(f, "filterSet"))
        for (struct vim_node *o = vim_child(f, "objectSet"); o && r == 0;
             o = vim_next(o, "objectSet"))
            r = vim_decode_object_update(cs, o);
    if (r < 0)
        return r;
    const char *v = vim_path_text(rv, "version");
    if (!v)
        return -VSL_EPROTO;
    *version = strdup(v);
    *truncated = vim_path_bool(rv, "truncated", 0) == 1;
    return *version ? 0 : -ENOMEM;
}

/* ---- the watch ----------------------------------------------------------------------------- */

/* Streams the ObjectUpdates of an answer (Envelope/Body/response/returnval/filterSet/objectSet
 * is depth 6) into the changes, or counts them when there is no list (the first UpdateSet). */
struct wait_ctx {
    struct vim_changes *cs;
    struct vim_changes *hosts; /* the first UpdateSet: its hosts go here, the rest is counted */
    long objects;
};

static int on_update(void *ctx, struct vim_node *n)
{
    struct wait_ctx *wc = ctx;
    struct vim_changes *into = wc->cs;

    if (!vim_name_is(n, "objectSet") || !vim_name_is(n->parent, "filterSet"))
        return 0;
    if (!into && wc->hosts) {
        struct vim_node *obj = vim_child(n, "obj");
        const char *type = obj ? obj->type : NULL;
        if (type && !strcmp(type, "HostSystem"))
            into = wc->hosts;
    }
    int r = vim_decode_object_update(into, n);
    if (r < 0)
        return r;
    wc->objects++;
    return 1;
}

/* One filter per type, each with its own view: the same objects and paths as one filter with
 * five specs, but govmomi's simulator (0.24) crashes matching a change to a deleted object
 * against a filter whose specs name other types. */
static int create_filter(struct vim_client *c, struct vim_watch *w, size_t t)
{
    struct vsl_buf b;
    int r;

    vsl_buf_init(&b, 1u << 20);
    r = vsl_buf_printf(&b, "<spec><propSet><type>%s</type>", watched[t].type);
    for (size_t i = 0; watched[t].paths[i] && r == 0; i++)
        r = vsl_buf_printf(&b, "<pathSet>%s</pathSet>", watched[t].paths[i]);
    if (r == 0)
        r = vsl_buf_addstr(&b, "</propSet><objectSet>");
    if (r == 0)
        r = vim_add_moref(&b, "obj", "ContainerView", w->views[t]);
    if (r == 0)
        r = vsl_buf_addstr(&b, "<skip>true</skip><selectSet xsi:type=\"TraversalSpec\">"
                               "<name>view</name><type>ContainerView</type>"
                               "<path>view</path><skip>false</skip></selectSet></objectSet>"
                               "</spec><partialUpdates>false</partialUpdates>");
    if (r == 0)
        r = vim_invoke(c, "CreateFilter", "PropertyCollector", w->collector, b.data, 0, NULL,
                       NULL, NULL);
    vsl_buf_free(&b);
    return r;
}

/* One WaitForUpdatesEx call from w->version; *truncated says another is due at once. */
static int wait_once(struct vim_client *c, struct vim_watch *w, int max_wait_s,
                     struct wait_ctx *wc, int *truncated)
{
    struct vsl_buf args;
    struct vim_xml *x = NULL;
    int r;

    *truncated = 0;
    vsl_buf_init(&args, 8192);
    r = vim_add_elem(&args, "version", w->version ? w->version : "");
    if (r == 0)
        r = vsl_buf_printf(&args, "<options><maxWaitSeconds>%d</maxWaitSeconds>"
                                  "<maxObjectUpdates>%d</maxObjectUpdates></options>",
                           max_wait_s, c->opts.max_objects > 0 ? c->opts.max_objects : 500);
    if (r == 0)
        r = vim_invoke(c, "WaitForUpdatesEx", "PropertyCollector", w->collector, args.data, 6,
                       on_update, wc, &x);
    vsl_buf_free(&args);
    if (r == -VSL_EFAULT && !strcmp(c->fault, "InvalidCollectorVersion"))
        r = -VSL_EVERSION;
    if (r == -VSL_ENOTFOUND && strstr(c->err, "PropertyCollector"))
        r = -VSL_ENOAUTH; /* the simulator forgets a lost session's objects */
    if (r == 0) {
        char *version = NULL;
        /* The objectSets went to on_update; what is left holds version and truncated. */
        r = vim_decode_update_set(vim_response(x), NULL, &version, truncated);
        if (r == 0 && version) {
            free(w->version);
            w->version = version;
        } else if (r < 0) {
            free(version);
            snprintf(c->err, sizeof(c->err), "%s: WaitForUpdatesEx: an UpdateSet without a version",
                     c->url);
        }
    }
    vim_xml_free(x);
    return r;
}

/* Truncated answers bring the rest of a change set in further calls; a bound keeps a server
 * that says "truncated" forever from holding the poller. */
#define MAX_TRUNCATED_ROUNDS 100000

static int wait_all(struct vim_client *c, struct vim_watch *w, int max_wait_s, struct wait_ctx *wc)
{
    int truncated = 0, r, rounds = 0;

    do {
        r = wait_once(c, w, truncated ? 0 : max_wait_s, wc, &truncated);
    } while (r == 0 && truncated && ++rounds < MAX_TRUNCATED_ROUNDS);
    /* Stopping at the bound leaves part of a change set: applying it would store a state
     * vCenter never had, so the round fails and the last good data stays. */
    if (r == 0 && truncated) {
        snprintf(c->err, sizeof(c->err),
                 "%s: WaitForUpdatesEx still said truncated after %d answers; the round is "
                 "dropped and the next poll reads everything",
                 c->url, MAX_TRUNCATED_ROUNDS);
        r = -VSL_EPROTO;
    }
    return r;
}

int vim_watch_start(struct vim_client *c, struct vim_watch *w)
{
    struct vim_xml *x = NULL;
    struct wait_ctx wc = {.hosts = &w->hosts};
    int r;

    memset(w, 0, sizeof(*w));
    r = vim_invoke(c, "CreatePropertyCollector", "PropertyCollector", c->property_collector, NULL,
                   0, NULL, NULL, &x);
    if (r == 0) {
        const char *pc = vim_path_text(vim_response(x), "returnval");
        w->collector = pc ? strdup(pc) : NULL;
        if (!w->collector) {
            snprintf(c->err, sizeof(c->err), "%s: CreatePropertyCollector returned no collector",
                     c->url);
            r = -VSL_EPROTO;
        }
    }
    vim_xml_free(x);
    for (size_t t = 0; t < VIM_WATCH_TYPES && r == 0; t++) {
        r = vim_create_view(c, watched[t].type, &w->views[t]);
        if (r == 0)
            r = create_filter(c, w, t);
    }
    /* The first UpdateSet is everything, version "" to the first version: counted, dropped. */
    if (r == 0)
        r = wait_all(c, w, 0, &wc);
    w->initial_objects = wc.objects;
    if (r < 0) {
        char err[sizeof(c->err)];
        memcpy(err, c->err, sizeof(err));
        vim_watch_stop(c, w);
        memcpy(c->err, err, sizeof(err));
        return r;
    }
    log_debug("%s: following changes from version %s (%ld objects)", c->url,
              w->version ? w->version : "-", wc.objects);
    return 0;
}

int vim_watch_wait(struct vim_client *c, struct vim_watch *w, int max_wait_s,
                   struct vim_changes *cs)
{
    struct wait_ctx wc = {.cs = cs};
    int r = wait_all(c, w, max_wait_s, &wc);

    /* The hosts in the view follow what entered and left. */
    for (size_t i = 0; i < cs->n && r == 0; i++) {
        const struct vim_change *ch = &cs->v[i];
        if (strcmp(ch->type, "HostSystem"))
            continue;
        if (ch->kind == VIM_CHANGE_LEAVE)
            changes_remove(&w->hosts, ch->type, ch->moref);
        else
            r = vim_changes_add(&w->hosts, ch->type, ch->moref, VIM_CHANGE_ENTER);
    }
    return r;
}

int vim_watch_add_hosts(const struct vim_watch *w, struct vim_changes *cs)
{
    int added = 0;

    for (size_t i = 0; i < w->hosts.n; i++) {
        const char *moref = w->hosts.v[i].moref;
        size_t j;
        for (j = 0; j < cs->n; j++)
            if (!strcmp(cs->v[j].moref, moref) && !strcmp(cs->v[j].type, "HostSystem"))
                break;
        if (j < cs->n)
            continue; /* already changed, or gone */
        int r = vim_changes_add(cs, "HostSystem", moref, VIM_CHANGE_MODIFY);
        if (r < 0)
            return r;
        added++;
    }
    return added;
}

void vim_watch_stop(struct vim_client *c, struct vim_watch *w)
{
    /* The collector and views live as long as the session otherwise: they are destroyed
     * also when the daemon stops. */
    int was = vim_client_closing(c, 1);

    if (w->collector)
        vim_invoke(c, "DestroyPropertyCollector", "PropertyCollector", w->collector, NULL, 0,
                   NULL, NULL, NULL);
    for (size_t t = 0; t < VIM_WATCH_TYPES; t++) {
        if (w->views[t])
            vim_destroy_view(c, w->views[t]);
        free(w->views[t]);
    }
    free(w->collector);
    free(w->version);
    vim_changes_free(&w->hosts);
    memset(w, 0, sizeof(*w));
    vim_client_closing(c, was);
}
