/* The poll: views for StoragePod, Datastore, DistributedVirtualSwitch, HostSystem and
 * VirtualMachine, each read in pages; then per host QueryOptions, QueryBoundVnics and esxcli. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/err.h"
#include "util/log.h"
#include "vsphere/collect.h"
#include "vsphere/decode.h"
#include "vsphere/session.h"

/* The host advanced options the checks read. */
static const char *const host_option_names[] = {"VMFS3.EnableBlockDelete", NULL};

typedef int (*decode_fn)(struct vim_decoder *d, const char *moref, xmlNode *objects);

struct type_read {
    const char *type;
    const char *const *paths;
    decode_fn decode;
};

static const struct type_read reads[] = {
    {"StoragePod", vim_storage_pod_paths, vim_decode_storage_pod},
    {"Datastore", vim_datastore_paths, vim_decode_datastore},
    {"DistributedVirtualSwitch", vim_dvswitch_paths, vim_decode_dvswitch},
    {"HostSystem", vim_host_paths, vim_decode_host},
    {"VirtualMachine", vim_vm_paths, vim_decode_vm},
};

struct read_ctx {
    struct vim_decoder *d;
    decode_fn decode;
};

static int on_object(void *ctx, const char *moref, xmlNode *objects)
{
    struct read_ctx *rc = ctx;
    return rc->decode(rc->d, moref, objects);
}

static int read_type(struct vim_client *c, struct vim_decoder *d, const struct type_read *t)
{
    struct read_ctx rc = {.d = d, .decode = t->decode};
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

/* Errors that end the poll; anything else (a fault about one host) becomes a gap. */
static int fatal_error(int r)
{
    return r == -VSL_ENOAUTH || r == -VSL_ENET || r == -VSL_ETLS || r == -ENOMEM ||
           r == -VSL_ETOOBIG;
}

static int read_options(struct vim_client *c, struct vim_sink *sink, struct vim_host_work *w)
{
    struct vsl_buf args;
    int r = 0;

    if (!w->option_manager)
        return gap(sink, w->moref, "options", "the host has no advanced option manager");
    vsl_buf_init(&args, 8192);
    for (size_t i = 0; host_option_names[i] && r == 0; i++) {
        struct vim_xml *x = NULL;
        vsl_buf_reset(&args);
        r = vim_add_elem(&args, "name", host_option_names[i]);
        if (r == 0)
            r = vim_invoke(c, "QueryOptions", "OptionManager", w->option_manager, args.data, 0,
                           NULL, NULL, &x);
        if (r == 0)
            r = vim_decode_options(sink, w->moref, vim_response(x));
        else if (!fatal_error(r))
            r = gap(sink, w->moref, "options", host_error(c));
        vim_xml_free(x);
    }
    vsl_buf_free(&args);
    return r;
}

static int read_bindings(struct vim_client *c, struct vim_sink *sink, struct vim_host_work *w)
{
    struct vsl_buf args;
    int r = 0;

    if (w->n_hbas == 0)
        return 0;
    if (!w->iscsi_manager)
        return gap(sink, w->moref, "iscsi-bindings", "the host has no iSCSI manager");
    vsl_buf_init(&args, 8192);
    for (size_t i = 0; i < w->n_hbas && r == 0; i++) {
        struct vim_xml *x = NULL;
        vsl_buf_reset(&args);
        r = vim_add_elem(&args, "iScsiHbaName", w->hbas[i]);
        if (r == 0)
            r = vim_invoke(c, "QueryBoundVnics", "IscsiManager", w->iscsi_manager, args.data, 0,
                           NULL, NULL, &x);
        if (r == 0)
            r = vim_decode_bound_vnics(sink, w->moref, w->hbas[i], vim_response(x));
        else if (!fatal_error(r))
            r = gap(sink, w->moref, "iscsi-bindings", host_error(c));
        vim_xml_free(x);
    }
    vsl_buf_free(&args);
    return r;
}

/* esxcli storage nmp device list, through vCenter's managed method executer: one call per
 * host gives every device's PSP configuration, including the Round Robin IOPS limit. */
static int read_esxcli(struct vim_client *c, struct vim_sink *sink, struct vim_host_work *w)
{
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
    vim_xml_free(x);
    x = NULL;
    if (!mme) {
        r = -ENOMEM;
        goto out;
    }
    r = vim_invoke(c, "ExecuteSoap", "ReflectManagedMethodExecuter", mme,
                   "<moid>ha-cli-handler-storage-nmp-device</moid>"
                   "<version>urn:vim25/5.0</version>"
                   "<method>vim.EsxCLI.storage.nmp.device.list</method>",
                   0, NULL, NULL, &x);
    if (r < 0)
        goto out;
    xmlNode *rv = vim_child(vim_response(x), "returnval");
    const char *resp = vim_path_text(rv, "response");
    if (!resp) {
        const char *msg = vim_path_text(rv, "fault/faultMsg");
        snprintf(c->err, sizeof(c->err), "esxcli on host %s failed: %s", w->name,
                 msg ? msg : "no response");
        r = -VSL_EFAULT;
        goto out;
    }
    r = vim_decode_nmp_devices(sink, w->moref, resp, strlen(resp));
    if (r == -VSL_EXML)
        snprintf(c->err, sizeof(c->err), "esxcli on host %s returned malformed XML", w->name);
out:
    if (r < 0 && !fatal_error(r))
        r = gap(sink, w->moref, "esxcli", host_error(c));
    vim_xml_free(x);
    free(mme);
    return r;
}

int vim_collect(struct vim_client *c, struct vim_sink *sink)
{
    struct vim_decoder d = {.sink = sink};
    int r = 0;

    for (size_t i = 0; i < sizeof(reads) / sizeof(reads[0]) && r == 0; i++)
        r = read_type(c, &d, &reads[i]);
    for (size_t i = 0; i < d.n_hosts && r == 0; i++) {
        struct vim_host_work *w = &d.hosts[i];
        if (w->option_manager || w->n_hbas || w->san_luns)
            log_debug("%s: host %s: extra reads", c->url, w->name);
        r = read_options(c, sink, w);
        if (r == 0)
            r = read_bindings(c, sink, w);
        if (r == 0)
            r = read_esxcli(c, sink, w);
    }
    vim_decoder_free(&d);
    return r;
}
