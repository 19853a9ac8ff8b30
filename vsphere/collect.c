/* The poll: views for StoragePod, Datastore, DistributedVirtualSwitch, HostSystem and
 * VirtualMachine, each read in pages, the hosts on a second connection at the same time; then
 * per host QueryOptions, QueryBoundVnics and esxcli, on a few connections in parallel that
 * share the session. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/buf.h"
#include "util/err.h"
#include "util/log.h"
#include "vsphere/alarms.h"
#include "vsphere/collect.h"
#include "vsphere/decode.h"
#include "vsphere/session.h"
#include "vsphere/updates.h"

/* The host advanced options the checks read. */
static const char *const host_option_names[] = {"VMFS3.EnableBlockDelete"};

/* A full poll reads in two streams at once, each on its own connection and thread: the hosts
 * (then their per-host reads) on HOST_STREAM, everything else on the poll's own. On the
 * path-dense estate the hosts' answers and the VMs' are about the same size (195 and 198 MB at
 * 20,000 VMs), and parsing them is most of a poll's CPU: one stream alone kept one core
 * parsing while the other had only the database writer's inserts to run. */
enum { MAIN_STREAM, HOST_STREAM };

struct type_read {
    const char *type;
    const char *const *paths;
    vim_decode_fn *decode;
    int stream;
};

static const struct type_read reads[] = {
    {"StoragePod", vim_storage_pod_paths, vim_decode_storage_pod, MAIN_STREAM},
    {"Datastore", vim_datastore_paths, vim_decode_datastore, MAIN_STREAM},
    {"DistributedVirtualSwitch", vim_dvswitch_paths, vim_decode_dvswitch, MAIN_STREAM},
    {"HostSystem", vim_host_paths, vim_decode_host, HOST_STREAM},
    {"VirtualMachine", vim_vm_paths, vim_decode_vm, MAIN_STREAM},
    /* The containers above datastores, for the alarms that cover them (vsphere/alarms.c). */
    {"Folder", vim_folder_paths, vim_decode_folder, MAIN_STREAM},
    {"Datacenter", vim_datacenter_paths, vim_decode_datacenter, MAIN_STREAM},
    {"StoragePod", vim_pod_parent_paths, vim_decode_pod_parent, MAIN_STREAM},
    /* The alarms disabled on a datastore itself (the containers' are read above). */
    {"Datastore", vim_datastore_alarm_paths, vim_decode_datastore_alarms, MAIN_STREAM},
    /* The clusters hosts sit in (HostSystem.parent), by name. */
    {"ClusterComputeResource", vim_cluster_paths, vim_decode_cluster, MAIN_STREAM},
};

/* What the threads of one poll share: the lock that serialises every sink call (the sink
 * writes one SQLite transaction and is not thread-safe), and whether the main stream has
 * failed, so that the host stream stops at its next object or host instead of reading on.
 *
 * The poll's error is the main stream's when it has one, else the host stream's, whichever
 * failed first: which read fails first is timing, and the error must not be. A replayed capture
 * (vslint record) of a poll whose main stream failed has none of the reads the host stream
 * had not made yet: the replay refuses them, and the main stream's recorded failure must
 * still be the one reported. So a failed host stream does not stop the main one. Nor need it
 * for the errors that are final whatever the timing: the host stream's connection shares the
 * poll's cancel flag (the daemon stopping ends the main stream's transfer at once, -ECANCELED)
 * and its session (one that ended fails the main stream's next request, NotAuthenticated). */
struct poll_shared {
    pthread_mutex_t lock;
    atomic_int failed;
};

/* What the host stream returns when it stopped because the main one failed: never reported. */
#define ABANDONED (-ECANCELED)

struct read_ctx {
    struct vim_decoder *d;
    vim_decode_fn *decode;
    struct poll_shared *sh;
};

/* An object is decoded under the lock: the decoders call the sink row by row. Tokenizing and
 * building the object's tree, most of the work, ran before, on this stream's thread alone. */
static int on_object(void *ctx, const char *moref, struct vim_node *objects)
{
    struct read_ctx *rc = ctx;

    if (atomic_load(&rc->sh->failed))
        return ABANDONED;
    pthread_mutex_lock(&rc->sh->lock);
    int r = rc->decode(rc->d, moref, objects);
    pthread_mutex_unlock(&rc->sh->lock);
    return r;
}

static int read_type(struct vim_client *c, struct vim_decoder *d, const struct type_read *t,
                     struct poll_shared *sh)
{
    struct read_ctx rc = {.d = d, .decode = t->decode, .sh = sh};
    char *view = NULL;
    int r = vim_create_view(c, t->type, &view);

    if (r < 0)
        return r;
    r = vim_retrieve_view(c, view, t->type, t->paths, on_object, &rc);
    if (r == -VSL_ENOTFOUND && strstr(c->err, "ContainerView")) {
        /* The simulator reports an expired session as a missing view. */
        r = -VSL_ENOAUTH;
    }
    if (r != -VSL_ENOAUTH && r != -VSL_ENET) {
        char err[sizeof(c->err)];
        memcpy(err, c->err, sizeof(err));
        vim_destroy_view(c, view);
        memcpy(c->err, err, sizeof(err));
    }
    free(view);
    return r;
}

static int gap(struct vim_sink *sink, const char *object, const char *what, const char *error)
{
    struct vim_gap g = {.object = object, .what = what, .error = error};
    return sink->gap ? sink->gap(sink->ctx, &g) : 0;
}

/* The client's last error without the leading "URL: ": a gap belongs to one vCenter already. */
static const char *host_error(const struct vim_client *c)
{
    const char *e = vim_client_error(c);
    size_t n = strlen(c->url);
    if (!strncmp(e, c->url, n) && e[n] == ':' && e[n + 1] == ' ')
        return e + n + 2;
    return e;
}

/* Errors that end the poll; anything else (a fault about one host) becomes a gap. A page that
 * may have been lost (-VSL_ERETRY, session.c) ends it too, so that the poll is run again
 * (daemon/poll.c) rather than stored with what that page held marked unverified. */
/* -ECANCELED (the daemon stopping) is one too: "abandoned (stopping)" is no fact about a
 * host, and a gap saying it would be stored as the host's reading. */
static int fatal_error(int r)
{
    return r == -VSL_ENOAUTH || r == -VSL_ENET || r == -VSL_ETLS || r == -ENOMEM ||
           r == -VSL_ETOOBIG || r == -VSL_ERETRY || r == -ECANCELED;
}

/* The per-host reads run on HOST_READERS connections in parallel: against a remote vCenter
 * they are hundreds of round trips (several per host), which one connection would pay in turn. */
#define HOST_READERS 4

/* One reader: its own connection, the shared sink, and the lock that serialises every sink
 * call (the sink writes one SQLite transaction and is not thread-safe). */
struct host_reader {
    struct vim_client *c;
    struct vim_sink *sink;
    pthread_mutex_t *lock;
};

static int locked_gap(struct host_reader *hr, const char *object, const char *what,
                      const char *error)
{
    pthread_mutex_lock(hr->lock);
    int r = gap(hr->sink, object, what, error);
    pthread_mutex_unlock(hr->lock);
    return r;
}

/* A per-host query: method of the host's manager of type, asked once per value, each sent as
 * the element <arg>value</arg>; its answer goes to decode(). */
struct host_query {
    const char *what;       /* the gap a refused query becomes */
    const char *no_manager; /* that gap's error when the host has no such manager */
    const char *method, *type, *arg;
    int (*decode)(struct vim_sink *sink, const char *host, const char *value,
                  struct vim_node *response);
};

static int decode_options(struct vim_sink *sink, const char *host, const char *name,
                          struct vim_node *response)
{
    return vim_decode_options(sink, host, response);
}

static int decode_bindings(struct vim_sink *sink, const char *host, const char *hba,
                           struct vim_node *response)
{
    return vim_decode_bound_vnics(sink, host, hba, response);
}

static const struct host_query options_query = {
    "options", "the host has no advanced option manager", "QueryOptions", "OptionManager", "name",
    decode_options};
static const struct host_query bindings_query = {
    "iscsi-bindings", "the host has no iSCSI manager", "QueryBoundVnics", "IscsiManager",
    "iScsiHbaName", decode_bindings};

/* Asks q of the host's manager mo (NULL: the host has none, a gap) for each of the n values. A
 * query refused for a reason that does not end the poll becomes the host's q->what gap, and the
 * next value is asked. */
static int query_each(struct host_reader *hr, struct vim_host_work *w, const struct host_query *q,
                      const char *mo, const char *const *values, size_t n)
{
    struct vsl_buf args;
    int r = 0;

    if (!mo)
        return locked_gap(hr, w->moref, q->what, q->no_manager);
    vsl_buf_init(&args, 8192);
    for (size_t i = 0; i < n && r == 0; i++) {
        struct vim_xml *x = NULL;
        vsl_buf_reset(&args);
        r = vim_add_elem(&args, q->arg, values[i]);
        if (r == 0)
            r = vim_invoke(hr->c, q->method, q->type, mo, args.data, 0, NULL, NULL, &x);
        if (r == 0) {
            pthread_mutex_lock(hr->lock);
            r = q->decode(hr->sink, w->moref, values[i], vim_response(x));
            pthread_mutex_unlock(hr->lock);
        } else if (!fatal_error(r)) {
            r = locked_gap(hr, w->moref, q->what, host_error(hr->c));
        }
        vim_xml_free(x);
    }
    vsl_buf_free(&args);
    return r;
}

static int read_options(struct host_reader *hr, struct vim_host_work *w)
{
    return query_each(hr, w, &options_query, w->option_manager, host_option_names,
                      sizeof(host_option_names) / sizeof(host_option_names[0]));
}

static int read_bindings(struct host_reader *hr, struct vim_host_work *w)
{
    if (w->n_hbas == 0)
        return 0;
    return query_each(hr, w, &bindings_query, w->iscsi_manager, (const char *const *)w->hbas,
                      w->n_hbas);
}

/* The esxcli commands read per host with SAN LUNs, through vCenter's managed method executer:
 * each is one call per host, not per device. "device list" gives every device's PSP
 * configuration (the Round Robin IOPS limit), "satp rule list" the claim rules that decide
 * the PSP of LUNs presented later. */
struct esxcli_cmd {
    const char *name; /* as typed after "esxcli", for messages */
    const char *moid, *method;
    int (*decode)(struct vim_sink *sink, const char *host, const char *doc, size_t len);
};

static const struct esxcli_cmd esxcli_cmds[] = {
    {"storage nmp device list", "ha-cli-handler-storage-nmp-device",
     "vim.EsxCLI.storage.nmp.device.list", vim_decode_nmp_devices},
    {"storage nmp satp rule list", "ha-cli-handler-storage-nmp-satp-rule",
     "vim.EsxCLI.storage.nmp.satp.rule.list", vim_decode_satp_rules},
};

/* Runs one esxcli command on the executer mme and hands its answer (an escaped XML document in
 * returnval/response) to the command's decoder. */
static int execute_soap(struct host_reader *hr, struct vim_host_work *w, const char *mme,
                        const struct esxcli_cmd *cmd)
{
    struct vim_client *c = hr->c;
    struct vim_xml *x = NULL;
    char args[256];
    int r;

    /* Our own constants, not input. */
    snprintf(args, sizeof(args),
             "<moid>%s</moid><version>urn:vim25/5.0</version><method>%s</method>", cmd->moid,
             cmd->method);
    r = vim_invoke(c, "ExecuteSoap", "ReflectManagedMethodExecuter", mme, args, 0, NULL, NULL, &x);
    if (r < 0)
        goto out;
    struct vim_node *rv = vim_child(vim_response(x), "returnval");
    const char *resp = vim_path_text(rv, "response");
    if (!resp) {
        const char *msg = vim_path_text(rv, "fault/faultMsg");
        snprintf(c->err, sizeof(c->err), "esxcli %s on host %s failed: %s", cmd->name, w->name,
                 msg ? msg : "no response");
        r = -VSL_EFAULT;
        goto out;
    }
    pthread_mutex_lock(hr->lock);
    r = cmd->decode(hr->sink, w->moref, resp, strlen(resp));
    pthread_mutex_unlock(hr->lock);
    if (r == -VSL_EXML)
        snprintf(c->err, sizeof(c->err), "esxcli %s on host %s returned malformed XML", cmd->name,
                 w->name);
out:
    vim_xml_free(x);
    return r;
}

/* Every esxcli command of esxcli_cmds on one host, on one executer. The first failure ends
 * the host's esxcli reads and becomes its "esxcli" gap: a host that refuses one command refuses
 * them all, and the checks treat whatever esxcli would have told as unknown. */
static int read_esxcli(struct host_reader *hr, struct vim_host_work *w)
{
    struct vim_client *c = hr->c;
    struct vim_xml *x = NULL;
    char *mme = NULL;
    int r;

    if (w->san_luns == 0)
        return 0;
    r = vim_invoke(c, "RetrieveManagedMethodExecuter", "HostSystem", w->moref, NULL, 0, NULL,
                   NULL, &x);
    if (r < 0)
        goto out;
    const char *m = vim_path_text(vim_response(x), "returnval");
    if (!m) {
        snprintf(c->err, sizeof(c->err), "no managed method executer for host %s", w->name);
        r = -VSL_EPROTO;
        goto out;
    }
    mme = strdup(m);
    if (!mme) {
        r = -ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < sizeof(esxcli_cmds) / sizeof(esxcli_cmds[0]) && r == 0; i++)
        r = execute_soap(hr, w, mme, &esxcli_cmds[i]);
out:
    if (r < 0 && !fatal_error(r))
        r = locked_gap(hr, w->moref, "esxcli", host_error(c));
    vim_xml_free(x);
    free(mme);
    return r;
}

static int read_host(struct host_reader *hr, struct vim_host_work *w)
{
    int r = read_options(hr, w);
    if (r == 0)
        r = read_bindings(hr, w);
    if (r == 0)
        r = read_esxcli(hr, w);
    return r;
}

/* The work list shared by the readers. */
struct host_pool {
    pthread_mutex_t *lock; /* the poll's (poll_shared): guards next, err, errmsg, sink calls */
    atomic_int *failed;    /* the poll's: the main stream failed, take no further host */
    struct vim_decoder *d;
    struct vim_sink *sink;
    size_t next;
    int err; /* the first error that ends the poll */
    char errmsg[sizeof(((struct vim_client *)0)->err)];
};

static void pool_fail(struct host_pool *p, int r, const char *msg)
{
    pthread_mutex_lock(p->lock);
    if (!p->err) {
        p->err = r;
        snprintf(p->errmsg, sizeof(p->errmsg), "%s", msg);
    }
    pthread_mutex_unlock(p->lock);
}

struct worker {
    struct host_pool *pool;
    struct vim_client *c; /* this worker's connection, cloned by the main thread */
};

static void *host_worker(void *arg)
{
    struct worker *wk = arg;
    struct host_pool *p = wk->pool;
    struct vim_client *c = wk->c;
    int r;

    struct host_reader hr = {.c = c, .sink = p->sink, .lock = p->lock};
    for (;;) {
        pthread_mutex_lock(p->lock);
        struct vim_host_work *w = p->err || atomic_load(p->failed) || p->next >= p->d->n_hosts
                                      ? NULL
                                      : &p->d->hosts[p->next++];
        pthread_mutex_unlock(p->lock);
        if (!w)
            break;
        r = read_host(&hr, w);
        if (r < 0) {
            pool_fail(p, r, vim_client_error(c));
            break;
        }
    }
    return NULL;
}

/* Runs the per-host reads of every decoded host, in parallel where there are several; every
 * sink call under sh's lock, and no further host once sh says the main stream failed (its
 * error is the poll's: this returns 0 then). */
static int read_hosts(struct vim_client *c, struct vim_decoder *d, struct vim_sink *sink,
                      struct poll_shared *sh)
{
    struct host_pool p = {.lock = &sh->lock, .failed = &sh->failed, .d = d, .sink = sink};
    pthread_t tid[HOST_READERS];
    struct worker wk[HOST_READERS];
    size_t n = d->n_hosts < HOST_READERS ? d->n_hosts : HOST_READERS, started = 0;

    if (n == 0)
        return 0;
    /* Connections are cloned here, not in the threads: a curl handle (c's cookie jar) must
     * not be used from two threads at once. */
    for (; started < n; started++) {
        wk[started] = (struct worker){.pool = &p};
        if (vim_client_clone(c, &wk[started].c) < 0)
            break;
        if (pthread_create(&tid[started], NULL, host_worker, &wk[started]) != 0) {
            vim_client_free(wk[started].c);
            break;
        }
    }
    if (started == 0) {
        /* No thread to be had: read on the main connection, one host after another. */
        struct host_reader hr = {.c = c, .sink = sink, .lock = &sh->lock};
        for (size_t i = 0; i < d->n_hosts && p.err == 0 && !atomic_load(&sh->failed); i++)
            p.err = read_host(&hr, &d->hosts[i]);
    }
    for (size_t i = 0; i < started; i++) {
        pthread_join(tid[i], NULL);
        c->stats.requests += wk[i].c->stats.requests;
        c->stats.bytes_wire += wk[i].c->stats.bytes_wire;
        c->stats.bytes_xml += wk[i].c->stats.bytes_xml;
        c->timed_out |= wk[i].c->timed_out; /* the same vCenter: one timeout is enough */
        vim_client_free(wk[i].c);
    }
    if (p.err && started > 0)
        snprintf(c->err, sizeof(c->err), "%s", p.errmsg);
    return p.err;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

#define NREADS (sizeof(reads) / sizeof(reads[0]))

/* One stream of a full poll (see reads[]): its reads on its own connection, into its own
 * decoder (the host stream's holds the hosts' work list), then, for the host stream, the
 * per-host reads. */
struct stream {
    int which;               /* MAIN_STREAM or HOST_STREAM */
    struct vim_client *c;    /* the poll's own for MAIN_STREAM; else owned by vim_collect() */
    struct vim_decoder d;
    struct poll_shared *sh;  /* borrowed from vim_collect() */
    int r;                   /* how it ended: 0, its error, or ABANDONED */
    double s;                /* how long it took */
};

static void stream_run(struct stream *st)
{
    double t0 = now_s();
    int r = 0;

    for (size_t i = 0; i < NREADS && r == 0; i++)
        if (reads[i].stream == st->which)
            r = read_type(st->c, &st->d, &reads[i], st->sh);
    if (r == 0 && st->which == HOST_STREAM)
        r = read_hosts(st->c, &st->d, st->d.sink, st->sh);
    if (r < 0 && st->which == MAIN_STREAM)
        atomic_store(&st->sh->failed, 1);
    st->r = r;
    st->s = now_s() - t0;
}

static void *stream_main(void *arg)
{
    stream_run(arg);
    return NULL;
}

/* A connection of c's session for a stream: unlike vim_client_clone()'s, it reads views, so
 * it needs the service content's root folder, view manager and property collector. */
static int clone_stream(const struct vim_client *c, struct vim_client **out)
{
    struct vim_client *n;
    int r = vim_client_clone(c, &n);

    *out = NULL;
    if (r < 0)
        return r;
    n->root_folder = c->root_folder ? strdup(c->root_folder) : NULL;
    n->view_manager = c->view_manager ? strdup(c->view_manager) : NULL;
    n->property_collector = c->property_collector ? strdup(c->property_collector) : NULL;
    if (!!n->root_folder != !!c->root_folder || !!n->view_manager != !!c->view_manager ||
        !!n->property_collector != !!c->property_collector) {
        vim_client_free(n);
        return -ENOMEM;
    }
    *out = n;
    return 0;
}

int vim_collect(struct vim_client *c, struct vim_sink *sink)
{
    struct poll_shared sh = {.failed = 0};
    struct stream st[2] = {
        {.which = MAIN_STREAM, .c = c, .d = {.sink = sink}, .sh = &sh},
        {.which = HOST_STREAM, .d = {.sink = sink}, .sh = &sh},
    };
    struct stream *hs = &st[HOST_STREAM];
    pthread_t tid;
    int threaded = 0, r = 0;

    pthread_mutex_init(&sh.lock, NULL);
    if (clone_stream(c, &hs->c) == 0) {
        threaded = pthread_create(&tid, NULL, stream_main, hs) == 0;
        if (!threaded) {
            vim_client_free(hs->c);
            hs->c = NULL;
        }
    }
    stream_run(&st[MAIN_STREAM]);
    if (threaded) {
        pthread_join(tid, NULL);
    } else if (!atomic_load(&sh.failed)) {
        /* No second connection or thread to be had: the hosts after the rest, on c. */
        hs->c = c;
        stream_run(hs);
    }
    if (st[MAIN_STREAM].r < 0) {
        r = st[MAIN_STREAM].r;
    } else if (hs->r < 0) {
        r = hs->r;
        if (hs->c != c) {
            memcpy(c->err, hs->c->err, sizeof(c->err));
            memcpy(c->fault, hs->c->fault, sizeof(c->fault));
        }
    }
    if (threaded) {
        c->stats.requests += hs->c->stats.requests;
        c->stats.bytes_wire += hs->c->stats.bytes_wire;
        c->stats.bytes_xml += hs->c->stats.bytes_xml;
        c->timed_out |= hs->c->timed_out; /* the same vCenter: one timeout is enough */
        vim_client_free(hs->c);
    }
    log_debug("%s: objects read in %.3f s; hosts and their per-host reads (%zu hosts) in %.3f s"
              "%s",
              c->url, st[MAIN_STREAM].s, hs->d.n_hosts, hs->s,
              threaded ? ", at the same time" : ", after");
    if (r == 0)
        r = vim_collect_alarms(c, sink);
    vim_decoder_free(&st[MAIN_STREAM].d);
    vim_decoder_free(&hs->d);
    pthread_mutex_destroy(&sh.lock);
    return r;
}

int vim_collect_changes(struct vim_client *c, const struct vim_changes *cs, struct vim_sink *sink)
{
    struct vim_decoder d = {.sink = sink};
    struct poll_shared sh = {.failed = 0};
    const char **morefs = calloc(cs->n ? cs->n : 1, sizeof(*morefs));
    int r = morefs ? 0 : -ENOMEM;

    /* One stream: a round's changes are few. The lock is taken by nobody else. */
    pthread_mutex_init(&sh.lock, NULL);
    /* Every read of a changed type, the containers' included (a datastore cluster's entity). */
    for (size_t i = 0; i < NREADS && r == 0; i++) {
        size_t n = 0;
        for (size_t j = 0; j < cs->n; j++)
            if (cs->v[j].kind != VIM_CHANGE_LEAVE && !strcmp(cs->v[j].type, reads[i].type))
                morefs[n++] = cs->v[j].moref;
        struct read_ctx rc = {.d = &d, .decode = reads[i].decode, .sh = &sh};
        if (n > 0)
            r = vim_retrieve_objects(c, reads[i].type, morefs, n, reads[i].paths, on_object, &rc);
    }
    /* The hosts re-read are the ones whose configuration changed: their per-host reads too. */
    if (r == 0)
        r = read_hosts(c, &d, sink, &sh);
    pthread_mutex_destroy(&sh.lock);
    vim_decoder_free(&d);
    free(morefs);
    return r;
}

int vim_poll_fatal(int r)
{
    return fatal_error(r);
}

const char *vim_gap_error(const struct vim_client *c)
{
    return host_error(c);
}
