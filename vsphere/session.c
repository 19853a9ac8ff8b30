/* Session handling and the paged property collector. Objects are decoded one at a time as their
 * XML closes; the token of a page is remembered and followed with ContinueRetrievePropertiesEx. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/err.h"
#include "util/log.h"
#include "util/worker.h"
#include "vsphere/session.h"

#define MAX_VERSIONS_XML (64u << 10)

int vim_add_moref(struct vsl_buf *b, const char *tag, const char *type, const char *moref)
{
    int r = vsl_buf_printf(b, "<%s type=\"", tag);
    if (r == 0)
        r = vsl_buf_addxml(b, type);
    if (r == 0)
        r = vsl_buf_addstr(b, "\">");
    if (r == 0)
        r = vsl_buf_addxml(b, moref);
    if (r == 0)
        r = vsl_buf_printf(b, "</%s>", tag);
    return r;
}

int vim_add_elem(struct vsl_buf *b, const char *tag, const char *text)
{
    int r = vsl_buf_printf(b, "<%s>", tag);
    if (r == 0)
        r = vsl_buf_addxml(b, text);
    if (r == 0)
        r = vsl_buf_printf(b, "</%s>", tag);
    return r;
}

/* Writes <method><_this type="TYPE">moref</_this>ARGS</method> into b. */
static int build_invoke(struct vsl_buf *b, const char *method, const char *type,
                        const char *moref, const char *args)
{
    int r = vsl_buf_printf(b, "<%s>", method);
    if (r == 0)
        r = vim_add_moref(b, "_this", type, moref);
    if (r == 0 && args)
        r = vsl_buf_addstr(b, args);
    if (r == 0)
        r = vsl_buf_printf(b, "</%s>", method);
    return r;
}

int vim_invoke(struct vim_client *c, const char *method, const char *type, const char *moref,
               const char *args, int emit_depth, vim_xml_emit_fn fn, void *ctx,
               struct vim_xml **out)
{
    struct vsl_buf b;
    int r;

    /* A secret's buffer: the Login request carries the password (see vim_login()). */
    vsl_buf_init_secret(&b, 1u << 20);
    r = build_invoke(&b, method, type, moref, args);
    if (r == 0)
        r = vim_call(c, b.data, emit_depth, fn, ctx, out);
    else
        snprintf(c->err, sizeof(c->err), "%s: %s request too large", c->url, method);
    vsl_buf_free(&b);
    return r;
}

static char *dup_text(struct vim_node *n, const char *path)
{
    const char *s = vim_path_text(n, path);
    return s ? strdup(s) : NULL;
}

/* Picks the newest urn:vim25 version from vimServiceVersions.xml; keeps the default otherwise. */
static void read_versions(struct vim_client *c)
{
    char *text = NULL;
    struct vim_xml *x = NULL;

    if (vim_get(c, "/vimServiceVersions.xml", &text, MAX_VERSIONS_XML) < 0)
        goto out;
    if (vim_xml_parse_all(text, strlen(text), 0, NULL, NULL, &x) < 0)
        goto out;
    struct vim_node *root = vim_xml_root(x);
    for (struct vim_node *ns = vim_child(root, "namespace"); ns; ns = vim_next(ns, "namespace")) {
        const char *name = vim_path_text(ns, "name");
        const char *version = vim_path_text(ns, "version");
        if (name && version && !strcmp(name, "urn:vim25")) {
            char action[128];
            snprintf(action, sizeof(action), "\"urn:vim25/%s\"", version);
            free(c->soap_action);
            c->soap_action = strdup(action);
            free(c->api_version);
            c->api_version = strdup(version);
            break;
        }
    }
out:
    vim_xml_free(x);
    free(text);
}

int vim_connect(struct vim_client *c)
{
    struct vim_xml *x = NULL;
    int r;

    read_versions(c);
    r = vim_call(c,
                 "<RetrieveServiceContent><_this type=\"ServiceInstance\">ServiceInstance</_this>"
                 "</RetrieveServiceContent>",
                 0, NULL, NULL, &x);
    if (r < 0)
        return r;
    struct vim_node *rv = vim_child(vim_response(x), "returnval");
    c->root_folder = dup_text(rv, "rootFolder");
    c->property_collector = dup_text(rv, "propertyCollector");
    c->view_manager = dup_text(rv, "viewManager");
    c->session_manager = dup_text(rv, "sessionManager");
    c->about = dup_text(rv, "about/fullName");
    c->version = dup_text(rv, "about/version");
    c->build = dup_text(rv, "about/build");
    c->alarm_manager = dup_text(rv, "alarmManager");
    c->perf_manager = dup_text(rv, "perfManager");
    vim_xml_free(x);
    if (!c->root_folder || !c->property_collector || !c->view_manager || !c->session_manager) {
        snprintf(c->err, sizeof(c->err),
                 "%s: the service content lacks rootFolder, propertyCollector, viewManager or "
                 "sessionManager: is this a vCenter SDK URL?",
                 c->url);
        return -VSL_EPROTO;
    }
    return 0;
}

int vim_login(struct vim_client *c, const char *user, const char *password)
{
    struct vsl_buf args;
    int r;

    /* The password passes through three buffers (these arguments, vim_invoke()'s request and
     * soap.c's envelope), each a secret's: zeroed when it grows and when it is freed. */
    vsl_buf_init_secret(&args, 64 << 10);
    r = vim_add_elem(&args, "userName", user);
    if (r == 0)
        r = vim_add_elem(&args, "password", password);
    if (r == 0)
        r = vim_invoke(c, "Login", "SessionManager", c->session_manager, args.data, 0, NULL, NULL,
                       NULL);
    vsl_buf_free(&args);
    if (r == -VSL_ELOGIN) {
        snprintf(c->err, sizeof(c->err), "%s: login rejected for user '%s' (%s)", c->url, user,
                 c->fault);
    }
    return r;
}

int vim_logout(struct vim_client *c)
{
    if (!c->session_manager)
        return 0;
    int was = vim_client_closing(c, 1);
    int r = vim_invoke(c, "Logout", "SessionManager", c->session_manager, NULL, 0, NULL, NULL,
                       NULL);
    vim_client_closing(c, was);
    return r;
}

int vim_create_view(struct vim_client *c, const char *type, char **view)
{
    struct vsl_buf args;
    struct vim_xml *x = NULL;
    int r;

    *view = NULL;
    vsl_buf_init(&args, 4096);
    r = vim_add_moref(&args, "container", "Folder", c->root_folder);
    if (r == 0)
        r = vim_add_elem(&args, "type", type);
    if (r == 0)
        r = vsl_buf_addstr(&args, "<recursive>true</recursive>");
    if (r == 0)
        r = vim_invoke(c, "CreateContainerView", "ViewManager", c->view_manager, args.data, 0,
                       NULL, NULL, &x);
    vsl_buf_free(&args);
    if (r < 0)
        return r;
    *view = dup_text(vim_response(x), "returnval");
    vim_xml_free(x);
    if (!*view) {
        snprintf(c->err, sizeof(c->err), "%s: CreateContainerView returned no view", c->url);
        return -VSL_EPROTO;
    }
    return 0;
}

int vim_destroy_view(struct vim_client *c, const char *view)
{
    return vim_invoke(c, "DestroyView", "ContainerView", view, NULL, 0, NULL, NULL, NULL);
}

/* The next page, fetched on a second connection while the current one is parsed: a
 * RetrieveResult carries its token before its objects, so the server can build page N+1 while
 * this side decodes and stores page N. The fetch runs ahead by at most PREFETCH_AHEAD bytes
 * and then waits for the parser, which takes the bytes as they come: memory is bounded by
 * that, not by the page (a page of 500 hosts with 512 LUN paths each is 490 MB of XML). */
#define PREFETCH_AHEAD (4u << 20)
#define MAX_PAGE       (PREFETCH_AHEAD + (4u << 20)) /* past it: one write of curl's, at most */

struct prefetch {
    struct vim_client *c;  /* the second connection; NULL: fetch pages in turn instead */
    const char *collector; /* the PropertyCollector moref, borrowed */
    struct vsl_worker w;   /* the fetch's thread; w.stop: the parser gave up, abort it */
    char *token;           /* the token it continues; owned */
    char *next;            /* a token seen while this one streams, fetched after it; owned */
    pthread_mutex_t lock;  /* guards answer, done and w.stop */
    pthread_cond_t cond;   /* bytes arrived, were taken, or the fetch ended or must stop */
    struct vsl_buf answer; /* the bytes not yet taken by the parser */
    int done;              /* the transfer ended: status and err are set */
    long status;
    int err;
};

struct page {
    struct vim_client *c;
    vim_object_fn fn;
    void *ctx;
    char *token; /* owned */
    long objects;
    struct prefetch pf;
};

static int build_continue(struct vsl_buf *b, const char *collector, const char *token)
{
    struct vsl_buf args;
    int r;

    vsl_buf_init(&args, 64 << 10);
    r = vim_add_elem(&args, "token", token);
    if (r == 0)
        r = build_invoke(b, "ContinueRetrievePropertiesEx", "PropertyCollector", collector,
                         args.data);
    vsl_buf_free(&args);
    return r;
}

/* The fetch's sink: waits while PREFETCH_AHEAD bytes are not taken yet. */
static int prefetch_write(void *ctx, const char *data, size_t len)
{
    struct prefetch *pf = ctx;
    int r;

    pthread_mutex_lock(&pf->lock);
    while (!pf->w.stop && pf->answer.len >= PREFETCH_AHEAD)
        pthread_cond_wait(&pf->cond, &pf->lock);
    r = pf->w.stop ? -ECANCELED : vsl_buf_add(&pf->answer, data, len);
    pthread_cond_broadcast(&pf->cond);
    pthread_mutex_unlock(&pf->lock);
    return r;
}

static void *prefetch_main(void *arg)
{
    struct prefetch *pf = arg;
    struct vsl_buf body;
    long status = 0;
    int err;

    vsl_buf_init(&body, 1u << 20);
    err = build_continue(&body, pf->collector, pf->token);
    if (err == 0)
        err = vim_fetch(pf->c, body.data, prefetch_write, pf, &status);
    vsl_buf_free(&body);
    pthread_mutex_lock(&pf->lock);
    pf->err = err;
    pf->status = status;
    pf->done = 1;
    pthread_cond_broadcast(&pf->cond);
    pthread_mutex_unlock(&pf->lock);
    return NULL;
}

/* Starts fetching the page after token; on any failure the page is simply fetched later.
 * While a fetch runs, the token is kept for when it ends (a prefetched page holds the next
 * page's token at its start). */
static void prefetch_start(struct prefetch *pf, const char *token)
{
    char *t;

    if (!pf->c || !(t = strdup(token)))
        return;
    if (pf->w.running) {
        free(pf->next);
        pf->next = t;
        return;
    }
    free(pf->token);
    pf->token = t;
    vsl_buf_reset(&pf->answer);
    pf->err = 0;
    pf->status = 0;
    pf->done = 0;
    if (vsl_worker_start(&pf->w, prefetch_main, pf) == 0)
        return;
    free(pf->token);
    pf->token = NULL;
}

/* Waits for a running prefetch; stop: abort its transfer first. */
static void prefetch_join(struct prefetch *pf, int stop)
{
    if (stop)
        vsl_worker_stop(&pf->w, &pf->lock, &pf->cond);
    else
        vsl_worker_join(&pf->w);
}

static void prefetch_clear(struct prefetch *pf)
{
    prefetch_join(pf, 1);
    free(pf->token);
    pf->token = NULL;
    free(pf->next);
    pf->next = NULL;
    vsl_buf_free(&pf->answer);
}

/* A missingSet entry with a NotAuthenticated fault means the session expired mid-read. */
static int check_missing(struct page *pg, struct vim_node *objects)
{
    char tbuf[128];

    for (struct vim_node *m = vim_child(objects, "missingSet"); m; m = vim_next(m, "missingSet")) {
        const char *type = vim_xsi_type(vim_path(m, "fault/fault"), tbuf, sizeof(tbuf));
        if (type && !strcmp(type, "NotAuthenticated")) {
            snprintf(pg->c->err, sizeof(pg->c->err), "%s: session expired during a read",
                     pg->c->url);
            return -VSL_ENOAUTH;
        }
    }
    return 0;
}

static int on_page_elem(void *ctx, struct vim_node *n)
{
    struct page *pg = ctx;

    if (!vim_name_is(n->parent, "returnval"))
        return 0;
    if (vim_name_is(n, "token")) {
        free(pg->token);
        pg->token = vim_text(n) ? strdup(vim_text(n)) : NULL;
        if (pg->token)
            prefetch_start(&pg->pf, pg->token);
        return 1;
    }
    if (!vim_name_is(n, "objects"))
        return 1;
    int r = check_missing(pg, n);
    if (r < 0)
        return r;
    const char *moref = vim_path_text(n, "obj");
    if (!moref)
        return 1;
    pg->objects++;
    r = pg->fn(pg->ctx, moref, n);
    return r < 0 ? r : 1;
}

/* Best effort: the error that made us cancel stays the one reported. */
static int cancel_token(struct vim_client *c, const char *token)
{
    struct vsl_buf args;
    char err[sizeof(c->err)], fault[sizeof(c->fault)];
    int r;

    memcpy(err, c->err, sizeof(err));
    memcpy(fault, c->fault, sizeof(fault));
    vsl_buf_init(&args, 4096);
    r = vim_add_elem(&args, "token", token);
    if (r == 0)
        r = vim_invoke(c, "CancelRetrievePropertiesEx", "PropertyCollector",
                       c->property_collector, args.data, 0, NULL, NULL, NULL);
    vsl_buf_free(&args);
    memcpy(c->err, err, sizeof(err));
    memcpy(c->fault, fault, sizeof(fault));
    return r;
}

/* A ContinueRetrievePropertiesEx that went over a replaced connection may have been handled
 * twice: the answer is then the page after the one that was lost with the old connection.
 * Nothing in the answer tells, so the poll is run again rather than stored with a hole.
 * reconnected is the flag of the transfer that brought the answer, read before anything else
 * can run on that connection. */
static int page_lost(struct vim_client *c, int reconnected)
{
    if (!reconnected)
        return 0;
    snprintf(c->err, sizeof(c->err),
             "%s: the connection was re-established during a paged read; a page may have been "
             "lost",
             c->url);
    return -VSL_ERETRY;
}

/* Parses the prefetched page as it arrives. When its transfer ends, the next page's fetch
 * starts at once (its token came at the start of this page), while the last bytes are parsed. */
static int parse_prefetched(struct page *pg)
{
    struct vim_client *c = pg->c;
    struct prefetch *pf = &pg->pf;
    struct vim_xml *x = NULL;
    struct vsl_buf work;
    long status = 0;
    int r, err = 0, reconnected = 0, done = 0;

    vsl_buf_init(&work, MAX_PAGE);
    r = vim_answer_new(c, 5, on_page_elem, pg, &x);
    while (r == 0 && !done) {
        pthread_mutex_lock(&pf->lock);
        while (!pf->done && pf->answer.len == 0)
            pthread_cond_wait(&pf->cond, &pf->lock);
        struct vsl_buf taken = pf->answer;
        pf->answer = work;
        work = taken;
        done = pf->done;
        pthread_cond_broadcast(&pf->cond);
        pthread_mutex_unlock(&pf->lock);
        if (done) {
            /* How the transfer came out, read before the connection serves the next one
             * (a page lost to a replaced connection went unnoticed otherwise). */
            prefetch_join(pf, 0);
            err = pf->err;
            status = pf->status;
            reconnected = pf->c->reconnected;
            if (err < 0) {
                memcpy(c->err, pf->c->err, sizeof(c->err));
                memcpy(c->fault, pf->c->fault, sizeof(c->fault));
                /* The same vCenter: it will not answer the cancel either. */
                c->timed_out |= pf->c->timed_out;
                break;
            }
            free(pf->token);
            pf->token = NULL;
            if (pf->next) {
                char *next = pf->next;
                pf->next = NULL;
                prefetch_start(pf, next);
                free(next);
            }
        }
        if (work.len > 0)
            r = vim_xml_feed(x, work.data, work.len);
        vsl_buf_reset(&work);
    }
    vsl_buf_free(&work);
    if (err < 0) {
        vim_xml_free(x);
        return err;
    }
    if (!done) {
        /* The parser failed first: the transfer is no longer wanted. */
        prefetch_join(pf, 1);
        free(pf->token);
        pf->token = NULL;
    }
    if (!x)
        return r;
    r = vim_answer_end(c, x, status, r, NULL);
    return r == 0 ? page_lost(c, reconnected) : r;
}

/* The page after token: the prefetched answer when there is one, else fetched now. */
static int next_page(struct page *pg, const char *token)
{
    struct vim_client *c = pg->c;
    struct prefetch *pf = &pg->pf;
    int r;

    if (pf->token && !strcmp(pf->token, token) && pf->w.running)
        return parse_prefetched(pg);
    /* No prefetch of this page (none could be started): whatever runs is not wanted. */
    prefetch_join(pf, 1);
    free(pf->token);
    pf->token = NULL;
    struct vsl_buf args;
    vsl_buf_init(&args, 64 << 10);
    r = vim_add_elem(&args, "token", token);
    if (r == 0)
        r = vim_invoke(c, "ContinueRetrievePropertiesEx", "PropertyCollector",
                       c->property_collector, args.data, 5, on_page_elem, pg, NULL);
    vsl_buf_free(&args);
    return r == 0 ? page_lost(c, c->reconnected) : r;
}

/* A paged read ends when the server stops sending a token; these bounds end it when the server
 * never does (bytes keep arriving, so it is never reported stalled either), as updates.c bounds
 * its truncated rounds. A vCenter has no reason to send page after page with no object
 * (tests/integration/test_faults.py, the simulator's -endless-token), nor a million pages of
 * one type (its maxima are tens of thousands of VMs; that bound is a wish no test shows: it
 * would take a million round trips). */
#define MAX_READ_PAGES  1000000
#define MAX_EMPTY_PAGES 16

/* Runs RetrievePropertiesEx with the given objectSet XML, then follows tokens. */
static int retrieve(struct vim_client *c, const char *type, const char *object_set,
                    const char *const *paths, vim_object_fn fn, void *ctx)
{
    struct page pg = {.c = c, .fn = fn, .ctx = ctx};
    struct vsl_buf b;
    int r;

    /* The second connection shares the session; without it pages are fetched in turn. */
    if (vim_client_clone(c, &pg.pf.c) < 0)
        pg.pf.c = NULL;
    pg.pf.collector = c->property_collector;
    pthread_mutex_init(&pg.pf.lock, NULL);
    pthread_cond_init(&pg.pf.cond, NULL);
    vsl_buf_init(&pg.pf.answer, MAX_PAGE);
    vsl_buf_init(&b, 1u << 20);
    r = vsl_buf_printf(&b, "<specSet><propSet><type>%s</type>", type);
    for (size_t i = 0; paths[i] && r == 0; i++)
        r = vsl_buf_printf(&b, "<pathSet>%s</pathSet>", paths[i]);
    if (r == 0)
        r = vsl_buf_addstr(&b, "</propSet>");
    if (r == 0)
        r = vsl_buf_addstr(&b, object_set);
    if (r == 0)
        r = vsl_buf_printf(&b, "</specSet><options><maxObjects>%d</maxObjects></options>",
                           c->opts.max_objects > 0 ? c->opts.max_objects : 500);
    if (r == 0)
        r = vim_invoke(c, "RetrievePropertiesEx", "PropertyCollector", c->property_collector,
                       b.data, 5, on_page_elem, &pg, NULL);
    long pages = 1, empty = 0;
    while (r == 0 && pg.token) {
        char *token = pg.token;
        long before = pg.objects;
        pg.token = NULL;
        r = next_page(&pg, token);
        if (r < 0 && r != -VSL_ENOAUTH && pg.token == NULL) {
            /* A vanished token or an aborted page: tell the server we are done with it. */
            cancel_token(c, token);
        }
        free(token);
        empty = pg.objects == before ? empty + 1 : 0;
        if (r == 0 && pg.token && (empty >= MAX_EMPTY_PAGES || ++pages >= MAX_READ_PAGES)) {
            snprintf(c->err, sizeof(c->err),
                     "%s: the paged read of %s objects does not end: %ld pages%s, each with a "
                     "token for another",
                     c->url, type, empty >= MAX_EMPTY_PAGES ? empty : pages,
                     empty >= MAX_EMPTY_PAGES ? " in a row with no object" : "");
            r = -VSL_EPROTO;
        }
    }
    prefetch_clear(&pg.pf);
    pthread_cond_destroy(&pg.pf.cond);
    pthread_mutex_destroy(&pg.pf.lock);
    if (r < 0 && pg.token)
        cancel_token(c, pg.token);
    if (r < 0) /* cut short: not "read 0 objects", as if there were none */
        log_debug("%s: the read of %s objects stopped after %ld: %s", c->url, type, pg.objects,
                  c->err[0] ? c->err : vsl_strerror(r));
    else
        log_debug("%s: read %ld %s objects", c->url, pg.objects, type);
    if (pg.pf.c) {
        c->stats.requests += pg.pf.c->stats.requests;
        c->stats.bytes_wire += pg.pf.c->stats.bytes_wire;
        c->stats.bytes_xml += pg.pf.c->stats.bytes_xml;
        vim_client_free(pg.pf.c);
    }
    free(pg.token);
    vsl_buf_free(&b);
    return r;
}

int vim_retrieve_view(struct vim_client *c, const char *view, const char *type,
                      const char *const *paths, vim_object_fn fn, void *ctx)
{
    struct vsl_buf os;
    int r;

    vsl_buf_init(&os, 8192);
    r = vsl_buf_addstr(&os, "<objectSet>");
    if (r == 0)
        r = vim_add_moref(&os, "obj", "ContainerView", view);
    if (r == 0)
        r = vsl_buf_addstr(&os, "<skip>true</skip><selectSet xsi:type=\"TraversalSpec\">"
                                "<name>view</name><type>ContainerView</type><path>view</path>"
                                "<skip>false</skip></selectSet></objectSet>");
    if (r == 0)
        r = retrieve(c, type, os.data, paths, fn, ctx);
    vsl_buf_free(&os);
    return r;
}

int vim_retrieve_objects(struct vim_client *c, const char *type, const char *const *morefs,
                         size_t n, const char *const *paths, vim_object_fn fn, void *ctx)
{
    struct vsl_buf os;
    int r = 0;

    vsl_buf_init(&os, 1u << 20);
    for (size_t i = 0; i < n && r == 0; i++) {
        r = vsl_buf_addstr(&os, "<objectSet>");
        if (r == 0)
            r = vim_add_moref(&os, "obj", type, morefs[i]);
        if (r == 0)
            r = vsl_buf_addstr(&os, "<skip>false</skip></objectSet>");
    }
    if (r < 0)
        snprintf(c->err, sizeof(c->err), "%s: too many %s objects to read at once", c->url, type);
    else if (n > 0)
        r = retrieve(c, type, os.data, paths, fn, ctx);
    vsl_buf_free(&os);
    return r;
}
