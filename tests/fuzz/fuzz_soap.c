/* Fuzz target for the SOAP side: bytes from "vCenter" through the streaming parser and the
 * decoders, fed in chunks the way libcurl hands them over, as vsphere/session.c does.
 *
 * Input: byte 0 picks what the document is (selector % 8):
 *   0..4  a RetrievePropertiesEx answer; each <objects> goes to the datastore, host, VM,
 *         storage pod or dvSwitch decoder (emit depth 5, as the collector)
 *   5     an esxcli inner document, given to both esxcli decoders: "storage nmp device list"
 *         (vim_decode_nmp_devices) and "storage nmp satp rule list" (vim_decode_satp_rules)
 *   6     a QueryOptions / QueryBoundVnics answer (emit depth 0, vim_response)
 *   7     a RetrievePropertiesEx answer with every <objects> given to all five decoders, and to
 *         the alarm read's (containers, an Alarm's info, PerformanceManager.perfCounter)
 * byte 1 shapes the feeding: bits 0-1 the number of chunk boundaries (0-3), placed by a hash
 * of the byte and the length; bit 2 a small pending-byte limit so -VSL_ETOOBIG is reached.
 * The rest is the document; it is also handed, NUL-terminated, to vim_parse_time() and
 * vim_parse_rr_iops(). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "vsphere/alarms.h"
#include "vsphere/decode.h"
#include "vsphere/session.h"
#include "vsphere/soap.h"
#include "vsphere/xml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_OBJECT (64u << 20) /* as vsphere/soap.c */
#define SMALL_PENDING 256

/* Every field is read, so ASan sees a string that is not NUL-terminated or already freed. */
static volatile size_t sink_hole;

static void s(const char *p)
{
    if (p)
        sink_hole += strlen(p);
}

static void need(const char *p)
{
    if (!p)
        abort(); /* the decoders promise these are set */
    s(p);
}

static void n(int64_t v)
{
    sink_hole += (size_t)v;
}

static int r_ds(void *c, const struct vim_datastore *d)
{
    need(d->moref), need(d->name), s(d->type), s(d->url), s(d->parent);
    n(d->capacity), n(d->free_space), n(d->uncommitted), n(d->accessible);
    s(d->maintenance_mode), n(d->vmfs_major), s(d->nas_remote_host), n(d->vm_count);
    s(d->vmfs_version), n(d->vmfs_local), n(d->vmfs_ssd), s(d->unmap_priority);
    return 0;
}

static int r_extent(void *c, const struct vim_datastore_extent *x)
{
    need(x->datastore), n(x->position), s(x->disk_name), n(x->partition);
    return 0;
}

static int r_mount(void *c, const struct vim_datastore_host *m)
{
    need(m->datastore), need(m->host), n(m->mounted), n(m->accessible), s(m->access_mode);
    return 0;
}

static int r_pod(void *c, const struct vim_storage_pod *p)
{
    need(p->moref), need(p->name), n(p->capacity), n(p->free_space);
    return 0;
}

static int r_vm(void *c, const struct vim_vm *v)
{
    need(v->moref), need(v->name), s(v->hw_version), n(v->template), s(v->power_state);
    s(v->ft_state), s(v->host), s(v->vm_path_name);
    return 0;
}

static int r_vm_ds(void *c, const struct vim_vm_datastore *v)
{
    need(v->vm), need(v->datastore);
    return 0;
}

static int r_ctl(void *c, const struct vim_controller *x)
{
    need(x->vm), n(x->key), need(x->type), s(x->shared_bus), n(x->bus_number);
    return 0;
}

static int r_disk(void *c, const struct vim_vdisk *x)
{
    need(x->vm), n(x->key), s(x->label), s(x->file_name), s(x->datastore);
    n(x->capacity_bytes), need(x->format), n(x->controller_key), n(x->unit_number);
    return 0;
}

static int r_snap(void *c, const struct vim_snapshot *x)
{
    need(x->vm), s(x->name), n(x->created), n(x->depth);
    return 0;
}

static int r_host(void *c, const struct vim_host *h)
{
    need(h->moref), need(h->name), s(h->parent), s(h->connection_state);
    return 0;
}

static int r_hopt(void *c, const struct vim_host_option *o)
{
    need(o->host), need(o->key), s(o->value);
    return 0;
}

static int r_vnic(void *c, const struct vim_vnic *v)
{
    need(v->host), need(v->device), s(v->portgroup), s(v->dvs_uuid), s(v->dvs_portgroup);
    n(v->mtu), s(v->ip);
    return 0;
}

static int r_vswitch(void *c, const struct vim_vswitch *v)
{
    need(v->host), need(v->name), n(v->mtu);
    return 0;
}

static int r_pg(void *c, const struct vim_portgroup *p)
{
    need(p->host), need(p->name), s(p->vswitch);
    return 0;
}

static int r_dvs(void *c, const struct vim_dvswitch *d)
{
    need(d->moref), need(d->name), s(d->uuid), n(d->max_mtu);
    return 0;
}

static int r_any_hba(void *c, const struct vim_hba *h)
{
    need(h->host), need(h->device), s(h->type), s(h->driver), s(h->model), s(h->status);
    return 0;
}

static int r_hba(void *c, const struct vim_iscsi_hba *h)
{
    need(h->host), need(h->device), s(h->iscsi_name), s(h->model);
    return 0;
}

static int r_target(void *c, const struct vim_iscsi_target *t)
{
    need(t->host), need(t->hba), need(t->kind), need(t->address), n(t->port);
    s(t->iscsi_name), s(t->discovery_method), s(t->parent);
    return 0;
}

static int r_iopt(void *c, const struct vim_iscsi_option *o)
{
    need(o->host), need(o->hba), s(o->kind), s(o->target), need(o->key), s(o->value);
    n(o->inherited), s(o->target_iqn);
    return 0;
}

static int r_binding(void *c, const struct vim_iscsi_binding *b)
{
    need(b->host), need(b->hba), need(b->vnic);
    return 0;
}

static int r_lun(void *c, const struct vim_lun *l)
{
    need(l->host), need(l->key), need(l->canonical_name), s(l->display_name), s(l->vendor);
    s(l->model), s(l->lun_type), n(l->local), s(l->psp), s(l->satp);
    s(l->policy_type), s(l->multipath_plugin);
    return 0;
}

static int r_path(void *c, const struct vim_lun_path *p)
{
    need(p->host), need(p->lun), need(p->name), s(p->state), s(p->adapter);
    return 0;
}

static int r_nmp(void *c, const struct vim_nmp_device *d)
{
    need(d->host), need(d->device), s(d->psp), s(d->psp_config), n(d->iops);
    return 0;
}

static int r_satp(void *c, const struct vim_satp_rule *r)
{
    need(r->host), need(r->satp), s(r->vendor), s(r->model), s(r->psp), s(r->psp_options),
        s(r->rule_group), s(r->device), s(r->driver), s(r->transport), s(r->claim_options),
        s(r->options), s(r->description);
    return 0;
}

static int r_gap(void *c, const struct vim_gap *g)
{
    s(g->object), s(g->what), s(g->error);
    return 0;
}

static int r_entity(void *c, const struct vim_entity *e)
{
    need(e->moref), need(e->type), s(e->name), s(e->parent);
    return 0;
}

static int r_alarm(void *c, const struct vim_alarm *a)
{
    need(a->moref), s(a->name), s(a->system_name), n(a->enabled), s(a->entity), s(a->entity_type);
    return 0;
}

static int r_metric(void *c, const struct vim_alarm_metric *m)
{
    need(m->alarm), n(m->pos), s(m->object_type), n(m->counter_id), s(m->op), n(m->yellow),
        n(m->red);
    return 0;
}

static int r_counter(void *c, const struct vim_perf_counter *p)
{
    n(p->key), need(p->name), s(p->unit);
    return 0;
}

static struct vim_sink sink = {
    .datastore = r_ds,
    .datastore_extent = r_extent,
    .datastore_host = r_mount,
    .storage_pod = r_pod,
    .vm = r_vm,
    .vm_datastore = r_vm_ds,
    .controller = r_ctl,
    .vdisk = r_disk,
    .snapshot = r_snap,
    .host = r_host,
    .host_option = r_hopt,
    .vnic = r_vnic,
    .vswitch = r_vswitch,
    .portgroup = r_pg,
    .dvswitch = r_dvs,
    .hba = r_any_hba,
    .iscsi_hba = r_hba,
    .iscsi_target = r_target,
    .iscsi_option = r_iopt,
    .iscsi_binding = r_binding,
    .lun = r_lun,
    .lun_path = r_path,
    .nmp_device = r_nmp,
    .satp_rule = r_satp,
    .gap = r_gap,
    .entity = r_entity,
    .alarm = r_alarm,
    .alarm_metric = r_metric,
    .perf_counter = r_counter,
};

/* An Alarm's info, and a perfCounter list naming every counter the alarm's conditions use. */
static int decode_alarm(struct vim_decoder *d, const char *moref, struct vim_node *objects)
{
    struct vim_alarm_read ar = {.sink = d->sink};
    int r = vim_decode_alarm(&ar, moref, objects);

    s(ar.why);
    n((int64_t)ar.unreadable);
    if (r == 0)
        r = vim_decode_perf_counters(d->sink, vim_prop(objects, "perfCounter"), ar.counters,
                                     ar.n_counters);
    vim_alarm_read_free(&ar);
    return r;
}

static vim_decode_fn *const decoders[] = {
    vim_decode_datastore,   vim_decode_host,       vim_decode_vm,
    vim_decode_storage_pod, vim_decode_dvswitch,   vim_decode_folder,
    vim_decode_datacenter,  vim_decode_pod_parent, decode_alarm};
#define NDECODERS (sizeof(decoders) / sizeof(decoders[0]))

struct feed {
    struct vim_decoder d;
    int which; /* index into decoders, or -1 for all of them */
};

/* vsphere/session.c's on_page_elem and check_missing, which are static there. */
static int on_elem(void *ctx, struct vim_node *node)
{
    struct feed *f = ctx;
    char tbuf[128];
    int r = 0;

    if (!vim_name_is(node->parent, "returnval"))
        return 0;
    if (vim_name_is(node, "token")) {
        s(vim_text(node));
        return 1;
    }
    if (!vim_name_is(node, "objects"))
        return 1;
    for (struct vim_node *m = vim_child(node, "missingSet"); m; m = vim_next(m, "missingSet"))
        s(vim_xsi_type(vim_path(m, "fault/fault"), tbuf, sizeof(tbuf)));
    const char *moref = vim_path_text(node, "obj");
    if (!moref)
        return 1;
    if (f->which >= 0)
        r = decoders[f->which](&f->d, moref, node);
    for (size_t i = 0; f->which < 0 && i < NDECODERS && r >= 0; i++)
        r = decoders[i](&f->d, moref, node);
    return r < 0 ? r : 1;
}

/* Feeds doc in chunks whose boundaries come from ctl and the length. */
static int feed_chunks(struct vim_xml *x, const char *doc, size_t len, uint8_t ctl)
{
    size_t cuts[4], ncuts = ctl & 3, at = 0;
    uint32_t h = 2166136261u ^ ctl;

    for (size_t i = 0; i < ncuts; i++) {
        h = (h ^ (uint32_t)(len + i)) * 16777619u;
        cuts[i] = len ? h % (len + 1) : 0;
    }
    /* Sort the few cut points (insertion sort). */
    for (size_t i = 1; i < ncuts; i++)
        for (size_t j = i; j > 0 && cuts[j - 1] > cuts[j]; j--) {
            size_t t = cuts[j];
            cuts[j] = cuts[j - 1];
            cuts[j - 1] = t;
        }
    cuts[ncuts] = len;
    for (size_t i = 0; i <= ncuts; i++) {
        int r = vim_xml_feed(x, doc + at, cuts[i] - at);
        if (r < 0)
            return r;
        at = cuts[i];
    }
    return vim_xml_finish(x);
}

/* A response as vim_call() reads it: the element after Body, a Fault's parts. */
static void read_response(struct vim_xml *x)
{
    char tbuf[128];
    struct vim_node *resp = vim_response(x);

    if (vim_name_is(resp, "Fault")) {
        struct vim_node *detail = vim_first_elem(vim_child(resp, "detail"));
        s(vim_path_text(resp, "faultstring"));
        s(vim_xsi_type(detail, tbuf, sizeof(tbuf)));
    }
    vim_decode_options(&sink, "host-1", resp);
    vim_decode_bound_vnics(&sink, "host-1", "vmhba64", resp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct vim_xml *x = NULL;
    int64_t t;

    if (size < 2)
        return 0;
    uint8_t sel = data[0] % 8, ctl = data[1];
    const char *doc = (const char *)data + 2;
    size_t len = size - 2;
    size_t max_pending = ctl & 4 ? SMALL_PENDING : MAX_OBJECT;

    /* The string parsers take C strings: give them the bytes up to the first NUL. */
    char *str = malloc(len + 1);
    if (!str)
        return 0;
    memcpy(str, doc, len);
    str[len] = '\0';
    if (vim_parse_time(str, &t) == 0)
        n(t);
    n(vim_parse_rr_iops(str));
    free(str);

    if (sel == 5) {
        vim_decode_nmp_devices(&sink, "host-1", doc, len);
        vim_decode_satp_rules(&sink, "host-1", doc, len);
        return 0;
    }
    if (sel == 6) {
        if (vim_xml_new(&x, 0, NULL, NULL, max_pending) == 0 && feed_chunks(x, doc, len, ctl) == 0)
            read_response(x);
        s(x ? vim_xml_error(x) : NULL);
        vim_xml_free(x);
        return 0;
    }

    struct feed f = {.d = {.sink = &sink}, .which = sel == 7 ? -1 : sel};
    if (vim_xml_new(&x, 5, on_elem, &f, max_pending) == 0) {
        if (feed_chunks(x, doc, len, ctl) == 0)
            read_response(x);
        s(vim_xml_error(x));
    }
    /* What the collector does next with the hosts it decoded. */
    for (size_t i = 0; i < f.d.n_hosts; i++) {
        const struct vim_host_work *w = &f.d.hosts[i];
        need(w->moref), need(w->name), s(w->option_manager), s(w->iscsi_manager);
        for (size_t j = 0; j < w->n_hbas; j++)
            need(w->hbas[j]);
        n(w->san_luns);
    }
    vim_xml_free(x);
    vim_decoder_free(&f.d);
    return 0;
}
