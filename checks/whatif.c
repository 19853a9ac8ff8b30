/* The what-if gate and placement: a proposal is applied to an overlay of a vCenter's snapshot
 * (the target datastore, its datastore cluster and the new VMs changed, everything else
 * shared), the capacity, density and format checks run over it with the configuration's
 * thresholds and waivers, and what they say about the target decides. */
#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks/whatif.h"
#include "model/estate-arena.h"
#include "util/buf.h"
#include "util/err.h"

/* The checks whose answer a proposal changes; an id the build does not have is skipped. A
 * finding of theirs on the target datastore, its datastore cluster, an array pool behind it or
 * a proposed VM denies. */
static const char *const gate_check_ids[] = {
    "datastore-free-space", "vms-per-datastore", "thin-overcommit", "vdisk-format",
    "datastore-runway",     "pool-free-space",
};
#define N_GATE_CHECKS (sizeof(gate_check_ids) / sizeof(gate_check_ids[0]))

#define PROPOSED_MOREF "vslint-proposed-vm-"
#define PROPOSED_NAME  "proposed VM"

/* ---- the proposal -------------------------------------------------------------------------- */

void chk_proposal_init(struct chk_proposal *p)
{
    memset(p, 0, sizeof(*p));
    p->vms = 1;
    p->format = CHK_DISK_LAZY;
    p->fail_on = SEV_WARNING;
}

static const struct {
    const char *name, *vsphere;
} formats[] = {{"thin", "thin"}, {"lazy", "lazyzeroedthick"}, {"eager", "eagerzeroedthick"}};

int chk_disk_format_parse(const char *s, enum chk_disk_format *out)
{
    for (size_t i = 0; s && i < sizeof(formats) / sizeof(formats[0]); i++) {
        if (!strcmp(s, formats[i].name) || !strcmp(s, formats[i].vsphere)) {
            *out = (enum chk_disk_format)i;
            return 0;
        }
    }
    return -EINVAL;
}

const char *chk_disk_format_name(enum chk_disk_format f)
{
    return formats[f].name;
}

static int add_disk(struct chk_proposal *p, double gib, const char *text, char *err,
                    size_t errlen)
{
    if (p->n_disks >= CHK_GATE_MAX_DISKS) {
        snprintf(err, errlen, "disks_gb: at most %d disks per VM", CHK_GATE_MAX_DISKS);
        return -EINVAL;
    }
    if (!(gib > 0) || gib > CHK_GATE_MAX_GB) {
        snprintf(err, errlen, "disks_gb: '%s' is not a size in GiB above 0 and at most %g", text,
                 CHK_GATE_MAX_GB);
        return -EINVAL;
    }
    p->disk_bytes[p->n_disks++] = (int64_t)llround(gib * CHK_GIB);
    return 0;
}

int chk_proposal_disks(struct chk_proposal *p, const char *list, char *err, size_t errlen)
{
    char item[64];

    p->n_disks = 0;
    for (const char *s = list; s;) {
        const char *comma = strchr(s, ',');
        size_t n = comma ? (size_t)(comma - s) : strlen(s);
        char *end;
        double g;

        if (n >= sizeof(item))
            n = sizeof(item) - 1;
        memcpy(item, s, n);
        item[n] = '\0';
        errno = 0;
        g = strtod(item, &end);
        if (!item[0] || *end || errno || !isfinite(g)) {
            snprintf(err, errlen, "disks_gb: '%s' is not a number of GiB (e.g. 100,20)", item);
            return -EINVAL;
        }
        if (add_disk(p, g, item, err, errlen) < 0)
            return -EINVAL;
        s = comma ? comma + 1 : NULL;
    }
    return 0;
}

/* The boolean at key of body into *out (absent: unchanged). 0 or -EINVAL. */
static int json_flag(const json_t *body, const char *key, int *out, char *err, size_t errlen)
{
    const json_t *v = json_object_get(body, key);

    if (!v)
        return 0;
    if (!json_is_boolean(v)) {
        snprintf(err, errlen, "%s: must be true or false", key);
        return -EINVAL;
    }
    *out = json_is_true(v);
    return 0;
}

static int json_text(const json_t *body, const char *key, const char **out, char *err,
                     size_t errlen)
{
    const json_t *v = json_object_get(body, key);

    if (!v)
        return 0;
    if (!json_is_string(v) || !json_string_length(v) || json_string_length(v) > 512) {
        snprintf(err, errlen, "%s: must be a non-empty string of at most 512 bytes", key);
        return -EINVAL;
    }
    *out = json_string_value(v);
    return 0;
}

int chk_proposal_from_json(const json_t *body, struct chk_proposal *p, char *err,
                           size_t errlen)
{
    static const char *const keys[] = {"datastore", "datastore_cluster", "vcenter", "vms",
                                       "disks_gb",  "disk_format",       "ft",      "shared_bus",
                                       "fail_on",   "allow_stale",       "max_age_s"};
    const char *key, *text = NULL;
    const json_t *v, *item;
    size_t i;
    char num[64];

    chk_proposal_init(p);
    if (!json_is_object(body)) {
        snprintf(err, errlen, "the body must be a JSON object (the proposal)");
        return -EINVAL;
    }
    json_object_foreach((json_t *)body, key, v) {
        size_t k = 0;
        while (k < sizeof(keys) / sizeof(keys[0]) && strcmp(keys[k], key))
            k++;
        if (k == sizeof(keys) / sizeof(keys[0])) {
            snprintf(err, errlen, "%.64s: unknown field", key);
            return -EINVAL;
        }
    }
    if (json_text(body, "datastore", &p->datastore, err, errlen) < 0 ||
        json_text(body, "datastore_cluster", &p->datastore_cluster, err, errlen) < 0 ||
        json_text(body, "vcenter", &p->vcenter, err, errlen) < 0 ||
        json_flag(body, "ft", &p->ft, err, errlen) < 0 ||
        json_flag(body, "shared_bus", &p->shared_bus, err, errlen) < 0 ||
        json_flag(body, "allow_stale", &p->allow_stale, err, errlen) < 0)
        return -EINVAL;
    if (!p->datastore == !p->datastore_cluster) {
        snprintf(err, errlen, "datastore, datastore_cluster: give exactly one of them");
        return -EINVAL;
    }
    if (p->ft && p->shared_bus) {
        snprintf(err, errlen, "ft, shared_bus: a VM is either protected by Fault Tolerance or "
                              "clustered on a shared bus, not both");
        return -EINVAL;
    }
    if ((v = json_object_get(body, "vms"))) {
        if (!json_is_integer(v) || json_integer_value(v) < 1 ||
            json_integer_value(v) > CHK_GATE_MAX_VMS) {
            snprintf(err, errlen, "vms: must be a whole number from 1 to %d", CHK_GATE_MAX_VMS);
            return -EINVAL;
        }
        p->vms = (int)json_integer_value(v);
    }
    if ((v = json_object_get(body, "max_age_s"))) {
        if (!json_is_integer(v) || json_integer_value(v) < 1) {
            snprintf(err, errlen, "max_age_s: must be a whole number of seconds above 0");
            return -EINVAL;
        }
        p->max_age_s = json_integer_value(v);
    }
    if (json_text(body, "disk_format", &text, err, errlen) < 0)
        return -EINVAL;
    if (text && chk_disk_format_parse(text, &p->format) < 0) {
        snprintf(err, errlen, "disk_format: '%.64s' is not one of thin, lazy, eager", text);
        return -EINVAL;
    }
    text = NULL;
    if (json_text(body, "fail_on", &text, err, errlen) < 0)
        return -EINVAL;
    if (text && vsl_severity_parse(text, &p->fail_on) < 0) {
        snprintf(err, errlen, "fail_on: '%.64s' is not one of info, warning, critical", text);
        return -EINVAL;
    }
    v = json_object_get(body, "disks_gb");
    if (!json_is_array(v) || json_array_size(v) == 0) {
        snprintf(err, errlen, "disks_gb: required, a list of disk sizes in GiB, e.g. [100, 20]");
        return -EINVAL;
    }
    json_array_foreach(v, i, item) {
        if (!json_is_number(item)) {
            snprintf(err, errlen, "disks_gb: item %zu is not a number", i + 1);
            return -EINVAL;
        }
        snprintf(num, sizeof(num), "%g", json_number_value(item));
        if (add_disk(p, json_number_value(item), num, err, errlen) < 0)
            return -EINVAL;
    }
    return 0;
}

json_t *chk_proposal_json(const struct chk_proposal *p)
{
    json_t *disks = json_array();
    json_t *j;

    for (size_t i = 0; disks && i < p->n_disks; i++)
        disks = chk_ev_append(disks, json_real((double)p->disk_bytes[i] / CHK_GIB));
    j = json_pack("{s:s?, s:s?, s:s?, s:i, s:o, s:s, s:b, s:b, s:s, s:b}", "datastore",
                  p->datastore, "datastore_cluster", p->datastore_cluster, "vcenter", p->vcenter,
                  "vms", p->vms, "disks_gb", disks, "disk_format",
                  chk_disk_format_name(p->format), "ft", p->ft, "shared_bus", p->shared_bus,
                  "fail_on", vsl_severity_name(p->fail_on), "allow_stale", p->allow_stale);
    /* "s?" packs a NULL as null: a request leaves absent fields out. */
    if (j && !p->datastore)
        json_object_del(j, "datastore");
    if (j && !p->datastore_cluster)
        json_object_del(j, "datastore_cluster");
    if (j && !p->vcenter)
        json_object_del(j, "vcenter");
    if (j && p->max_age_s)
        j = chk_ev_set(j, "max_age_s", json_integer(p->max_age_s));
    return j;
}

/* ---- figures and headroom ------------------------------------------------------------------ */

/* A datastore's figures, before or after. */
struct fig {
    const char *name, *type;
    int64_t capacity, free_space, uncommitted; /* uncommitted: unknown counts as 0 */
    int vms, powered_on;
    const struct est_pod *pod; /* NULL when not in a datastore cluster */
};

static void measure(const struct estate *e, size_t ds, struct fig *f)
{
    const struct est_datastore *d = &e->datastores[ds];

    *f = (struct fig){.name = d->name,
                      .type = d->type,
                      .capacity = d->capacity,
                      .free_space = d->free_space,
                      .uncommitted = d->uncommitted > 0 ? d->uncommitted : 0,
                      .pod = d->pod < e->n_pods ? &e->pods[d->pod] : NULL};
    chk_vms_on_datastore(e, ds, &f->vms, &f->powered_on);
}

static double pct(int64_t part, int64_t whole)
{
    return whole > 0 ? (double)part * 100.0 / (double)whole : NAN;
}

static json_t *pct_json(double v)
{
    return isnan(v) ? json_null() : json_real(round(v * 100.0) / 100.0);
}

/* Provisioned share of capacity, as thin-overcommit computes it. */
static double provisioned_pct(const struct fig *f)
{
    return f->capacity > 0
               ? ((double)(f->capacity - f->free_space) + (double)f->uncommitted) * 100.0 /
                     (double)f->capacity
               : NAN;
}

static json_t *fig_json(const struct fig *f, const char *vcenter)
{
    json_t *j = json_pack("{s:s, s:s, s:s?, s:I, s:I, s:o, s:I, s:o, s:i, s:i}", "datastore",
                          f->name, "vcenter", vcenter, "type", f->type, "capacity_bytes",
                          (json_int_t)f->capacity, "free_bytes", (json_int_t)f->free_space,
                          "free_pct", pct_json(pct(f->free_space, f->capacity)),
                          "uncommitted_bytes", (json_int_t)f->uncommitted, "provisioned_pct",
                          pct_json(provisioned_pct(f)), "vms", f->vms, "powered_on_vms",
                          f->powered_on);
    if (j && f->pod)
        j = chk_ev_set(j, "datastore_cluster",
                       json_pack("{s:s, s:I, s:I, s:o}", "name", f->pod->name, "capacity_bytes",
                                 (json_int_t)f->pod->capacity, "free_bytes",
                                 (json_int_t)f->pod->free_space, "free_pct",
                                 pct_json(pct(f->pod->free_space, f->pod->capacity))));
    return j;
}

/* Headroom: the least room left under any threshold that could deny (see docs/gate.md). */
struct room {
    double value; /* percent; 100 when no threshold applies */
    char by[96];  /* "check:parameter", "" when none */
};

static void term(struct room *r, double used, double limit, double zero, const char *check,
                 const char *param, const char *where)
{
    /* Room left between the value and the limit, as a share of the span from the value's
     * empty state (zero) to the limit: 100 empty, 0 at the limit, below 0 past it. A limit
     * at the empty state leaves no room. */
    double span = limit - zero;
    double v = span != 0 ? 100.0 * (limit - used) / span : 0;

    if (isnan(used))
        return;
    if (!r->by[0] || v < r->value) {
        r->value = v;
        snprintf(r->by, sizeof(r->by), "%s:%s%s", check, param, where);
    }
}

/* The severity a finding raised at level severity gets under settings s. */
static enum vsl_severity effective(const struct chk_settings *s, enum vsl_severity severity)
{
    return s->severity_override >= 0 ? (enum vsl_severity)s->severity_override : severity;
}

static void headroom(const struct chk_config *cfg, enum vsl_severity fail_on, const struct fig *f,
                     struct room *r)
{
    static const struct {
        const char *param;
        enum vsl_severity severity;
    } free_levels[] = {{"warn_free_pct", SEV_WARNING},
                       {"crit_free_pct", SEV_CRITICAL},
                       {"snap_free_pct", SEV_CRITICAL}};
    const struct chk_settings *s;

    r->value = 100;
    r->by[0] = '\0';
    if ((s = chk_config_settings(cfg, "datastore-free-space")) && s->enabled) {
        /* Free space falls towards the highest threshold that would deny. */
        double t = -1;
        const char *by = NULL;
        for (size_t i = 0; i < sizeof(free_levels) / sizeof(free_levels[0]); i++) {
            double v = chk_config_param(cfg, "datastore-free-space", free_levels[i].param);
            if (effective(s, free_levels[i].severity) >= fail_on && v > t) {
                t = v;
                by = free_levels[i].param;
            }
        }
        /* Free space is "used" downwards: from 100 % free (empty) to the threshold. */
        if (by) {
            term(r, -pct(f->free_space, f->capacity), -t, -100, "datastore-free-space", by, "");
            if (f->pod)
                term(r, -pct(f->pod->free_space, f->pod->capacity), -t, -100,
                     "datastore-free-space", by, ":datastore_cluster");
        }
    }
    if ((s = chk_config_settings(cfg, "vms-per-datastore")) && s->enabled &&
        !(f->type && (!strcmp(f->type, "vsan") || !strcmp(f->type, "VVOL")))) {
        if (effective(s, SEV_WARNING) >= fail_on)
            term(r, f->vms, chk_config_param(cfg, "vms-per-datastore", "max_vms"), 0,
                 "vms-per-datastore", "max_vms", "");
        if (effective(s, SEV_CRITICAL) >= fail_on && f->type && !strcmp(f->type, "VMFS"))
            term(r, f->powered_on, chk_config_param(cfg, "vms-per-datastore", "max_powered_on"),
                 0, "vms-per-datastore", "max_powered_on", "");
    }
    if ((s = chk_config_settings(cfg, "thin-overcommit")) && s->enabled &&
        effective(s, SEV_WARNING) >= fail_on)
        term(r, provisioned_pct(f), chk_config_param(cfg, "thin-overcommit", "max_overcommit_pct"),
             0, "thin-overcommit", "max_overcommit_pct", "");
}

/* ---- one vCenter's base run: the findings that do not depend on the proposal ----------------- */

/* What the checks are run over for one datastore of a site: an estate of its own in which the
 * target is datastore 0, with its datastore cluster (pod 0), the array pools behind it and the
 * VMs that name it, plus, blanked (no check judges them), the other datastores those VMs and
 * pools name, so that what the checks say about the target reads as over the whole snapshot.
 * Each gate check judges a datastore, its datastore cluster, the pools behind it and the VMs on
 * it by their own figures, so what they say about the target is what they would say over the
 * whole estate, at a cost that grows with the target, not with the estate: a placement over
 * 4,000 datastores judges each over its own few dozen VMs and a handful of datastores, not
 * 100,000 VMs and 4,000 datastores (walked by every check and the engine's stale passes). The
 * shared snapshot is never written: the judge's estate is an overlay with copies. */
struct chk_ds_vms {
    size_t *at;  /* owned: the VMs naming datastore i are vms[at[i] .. at[i + 1]) */
    size_t *vms; /* owned: indexes into the snapshot's VMs */
};

struct view {
    const size_t *at, *vms;   /* the site's chk_ds_vms, or own's */
    struct chk_ds_vms *own;   /* owned: made when the site has none */
    /* owned, every entry EST_NONE between judges: a snapshot datastore's index in the judge's
     * estate while one is made */
    size_t *ds_map;
    size_t *kept; /* owned: the snapshot datastores in the judge's estate, in its order */
    size_t cap_kept;
    /* owned, each entry owned (NULL until a judge first needs it): pool i's datastore names,
     * which a judge's pools carry instead of the datastores themselves (est_pool) */
    const char ***pool_names;
    size_t n_pools;
    const struct check *only[N_GATE_CHECKS]; /* the gate checks this build has */
    size_t n_only;
};

/* all's findings on LUNs by the LUN they name (host index, LUN index): a placement judges every
 * datastore, and matching each against every LUN finding on each of its LUN references cost
 * 4,000 datastores x thousands of findings x 16 hosts of string compares at 100,000 VMs. The
 * findings of LUN slot (host_base[h] + l) are at[first[slot] .. first[slot + 1]), ascending. */
struct chk_lun_index {
    size_t *host_base; /* owned, n_hosts + 1 */
    size_t *first;     /* owned, slots + 1 */
    size_t *at;        /* owned: indexes into all->items */
};

struct base {
    const struct chk_site *site;
    const struct chk_results *all; /* every enabled check over the snapshot as it is */
    struct chk_results own;        /* all, when this call ran them (site->base NULL) */
    int ran;
    struct view view;
    int viewed;
    const struct chk_lun_index *luns; /* all's: site->base_luns, or own_luns */
    struct chk_lun_index *own_luns;   /* owned: made with all when the site has none */
};

static void blank_datastore(struct est_datastore *d)
{
    d->capacity = d->free_space = d->uncommitted = EST_UNKNOWN;
    d->accessible = EST_UNKNOWN; /* neither measured nor stale: not judged, not unverified */
    d->n_history = 0;
}

/* Adds VM v to datastore ds's list (count pass when vms is NULL), once. */
static void name_on(size_t ds, size_t v, size_t n_ds, size_t *last, size_t *at, size_t *vms)
{
    if (ds >= n_ds || last[ds] == v)
        return;
    last[ds] = v;
    if (vms)
        vms[at[ds]++] = v;
    else
        at[ds + 1]++;
}

/* Every reference a VM makes to a datastore: its configuration, its disks, its files. */
static void name_all(const struct estate *e, size_t *last, size_t *at, size_t *vms)
{
    for (size_t i = 0; i < e->n_datastores; i++)
        last[i] = SIZE_MAX;
    for (size_t v = 0; v < e->n_vms; v++) {
        const struct est_vm *vm = &e->vms[v];
        name_on(vm->config_datastore, v, e->n_datastores, last, at, vms);
        for (size_t k = 0; k < vm->n_disks; k++)
            name_on(vm->disks[k].datastore, v, e->n_datastores, last, at, vms);
        for (size_t k = 0; k < vm->n_datastores; k++)
            name_on(vm->datastores[k], v, e->n_datastores, last, at, vms);
    }
}

void chk_ds_vms_free(struct chk_ds_vms *x)
{
    if (!x)
        return;
    free(x->at);
    free(x->vms);
    free(x);
}

int chk_ds_vms_make(const struct estate *e, struct chk_ds_vms **out)
{
    size_t n = e->n_datastores, *last = calloc(n + 1, sizeof(*last)), *fill = NULL;
    struct chk_ds_vms *x = calloc(1, sizeof(*x));
    int rc = -ENOMEM;

    *out = NULL;
    fill = calloc(n + 1, sizeof(*fill));
    if (!x || !last || !fill || !(x->at = calloc(n + 2, sizeof(*x->at))))
        goto out;
    name_all(e, last, x->at, NULL); /* counts into at[i + 1] */
    for (size_t i = 0; i < n; i++)
        x->at[i + 1] += x->at[i];
    if (!(x->vms = malloc((x->at[n] ? x->at[n] : 1) * sizeof(*x->vms))))
        goto out;
    memcpy(fill, x->at, (n + 1) * sizeof(*fill));
    name_all(e, last, fill, x->vms);
    rc = 0;
out:
    free(last);
    free(fill);
    if (rc < 0)
        chk_ds_vms_free(x);
    else
        *out = x;
    return rc;
}

static void view_free(struct view *w)
{
    chk_ds_vms_free(w->own);
    free(w->ds_map);
    free(w->kept);
    for (size_t i = 0; w->pool_names && i < w->n_pools; i++)
        free(w->pool_names[i]);
    free(w->pool_names);
    memset(w, 0, sizeof(*w));
}

/* The view of site e: its VMs by datastore from shared (chk_ds_vms_make(), borrowed) or made
 * here when NULL. */
static int view_make(const struct estate *e, const struct chk_ds_vms *shared, struct view *w)
{
    size_t n = e->n_datastores;
    int rc = -ENOMEM;

    memset(w, 0, sizeof(*w));
    if (!shared && (rc = chk_ds_vms_make(e, &w->own)) < 0)
        goto out;
    shared = shared ? shared : w->own;
    w->at = shared->at;
    w->vms = shared->vms;
    rc = -ENOMEM;
    if (!(w->ds_map = malloc((n + 1) * sizeof(*w->ds_map))))
        goto out;
    for (size_t i = 0; i < n; i++)
        w->ds_map[i] = EST_NONE;
    if (!(w->pool_names = calloc(e->n_pools + 1, sizeof(*w->pool_names))))
        goto out;
    w->n_pools = e->n_pools;
    /* Looked up once, not by name for each datastore judged. */
    for (size_t i = 0; i < N_GATE_CHECKS; i++)
        if ((w->only[w->n_only] = chk_find(gate_check_ids[i])))
            w->n_only++;
    rc = 0;
out:
    if (rc < 0)
        view_free(w);
    return rc;
}

static int streq(const char *a, const char *b);

struct host_key {
    const char *moref; /* borrowed from the estate */
    size_t host;
};

static int by_moref(const void *x, const void *y)
{
    return strcmp(((const struct host_key *)x)->moref, ((const struct host_key *)y)->moref);
}

/* The host whose moref is moref, through the hosts sorted by moref; -1 when none. */
static long host_of(const struct host_key *sorted, size_t n, const char *moref)
{
    size_t lo = 0, hi = n;

    while (moref && lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(sorted[mid].moref, moref);
        if (c == 0)
            return (long)sorted[mid].host;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

void chk_lun_index_free(struct chk_lun_index *x)
{
    if (!x)
        return;
    free(x->host_base);
    free(x->first);
    free(x->at);
    free(x);
}

/* The same matches as comparing names: a finding is on LUN l of host h when its host moref is
 * h's and its object name is l's canonical name. */
int chk_lun_index_make(const struct estate *e, const struct chk_results *all,
                       struct chk_lun_index **out)
{
    struct chk_lun_index *x = calloc(1, sizeof(*x));
    struct host_key *sorted = NULL;
    size_t *slot_of = NULL, n_sorted = 0, n_pairs = 0, slots;
    int rc = -ENOMEM;

    *out = NULL;
    if (!x || !(x->host_base = calloc(e->n_hosts + 1, sizeof(size_t))))
        goto out;
    for (size_t h = 0; h < e->n_hosts; h++)
        x->host_base[h + 1] = x->host_base[h] + e->hosts[h].n_luns;
    slots = x->host_base[e->n_hosts];
    if (!(x->first = calloc(slots + 2, sizeof(size_t))) ||
        !(sorted = calloc(e->n_hosts + 1, sizeof(*sorted))))
        goto out;
    for (size_t h = 0; h < e->n_hosts; h++)
        if (e->hosts[h].moref)
            sorted[n_sorted++] = (struct host_key){e->hosts[h].moref, h};
    qsort(sorted, n_sorted, sizeof(*sorted), by_moref);
    /* Each (slot, finding) pair once, in the findings' order; counted, then placed. */
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < all->n; i++) {
            const struct chk_finding *f = &all->items[i];
            long h = streq(f->object_type, "lun") ? host_of(sorted, n_sorted, f->host_moref)
                                                  : -1;
            for (size_t l = 0; h >= 0 && l < e->hosts[h].n_luns; l++) {
                if (!streq(f->object_name, e->hosts[h].luns[l].canonical_name))
                    continue;
                size_t slot = x->host_base[h] + l;
                if (pass == 0)
                    x->first[slot + 1]++, n_pairs++;
                else
                    x->at[slot_of[slot]++] = i;
            }
        }
        if (pass == 0) {
            for (size_t k = 0; k < slots; k++)
                x->first[k + 1] += x->first[k];
            if (!(x->at = calloc(n_pairs + 1, sizeof(size_t))) ||
                !(slot_of = malloc((slots + 1) * sizeof(size_t))))
                goto out;
            memcpy(slot_of, x->first, (slots + 1) * sizeof(size_t));
        }
    }
    rc = 0;
out:
    free(sorted);
    free(slot_of);
    if (rc < 0)
        chk_lun_index_free(x);
    else
        *out = x;
    return rc;
}

static int base_run(const struct chk_config *cfg, struct base *b, int64_t now, char *err,
                    size_t errlen)
{
    int rc = 0;

    if (b->ran)
        return 0;
    b->ran = 1;
    b->all = &b->own;
    if (b->site->base)
        b->all = b->site->base;
    else
        rc = chk_run_all(cfg, b->site->estate, now, &b->own, err, errlen);
    /* The site's index goes with its base: made once per shared estate, not per request. */
    if (rc == 0 && b->site->base && b->site->base_luns)
        b->luns = b->site->base_luns;
    else if (rc == 0 && (rc = chk_lun_index_make(b->site->estate, b->all, &b->own_luns)) < 0)
        snprintf(err, errlen, "out of memory");
    else if (rc == 0)
        b->luns = b->own_luns;
    return rc;
}

void chk_site_base_trim(struct chk_results *r)
{
    size_t k = 0;

    /* The findings on LUNs move to the front in their order; the rest go. */
    for (size_t i = 0; i < r->n; i++) {
        if (!streq(r->items[i].object_type, "lun"))
            continue;
        struct chk_finding f = r->items[k];
        r->items[k++] = r->items[i];
        r->items[i] = f;
    }
    chk_results_truncate(r, k);
}

static void base_free(struct base *b)
{
    chk_results_free(&b->own);
    view_free(&b->view);
    chk_lun_index_free(b->own_luns);
}

/* ---- the estate after the proposal --------------------------------------------------------- */

static int64_t per_vm_bytes(const struct chk_proposal *p)
{
    int64_t sum = 0;

    for (size_t i = 0; i < p->n_disks; i++)
        sum += p->disk_bytes[i]; /* at most 64 x 64 TiB: no overflow */
    return sum;
}

/* Every new VM's disks together, saturating rather than overflowing. */
static int64_t total_bytes(const struct chk_proposal *p)
{
    int64_t one = per_vm_bytes(p);

    return one > INT64_MAX / p->vms ? INT64_MAX : one * p->vms;
}

/* Datastore i of the snapshot in the judge's estate being made over w (n so far): its index
 * there, added when new; EST_NONE for none (EST_NONE, or out of range as checks take it). */
static size_t keep(const struct estate *e, struct view *w, size_t *n, size_t i)
{
    if (i >= e->n_datastores)
        return EST_NONE;
    if (w->ds_map[i] == EST_NONE) {
        w->ds_map[i] = *n;
        w->kept[(*n)++] = i;
    }
    return w->ds_map[i];
}

/* The names of the datastores pool i of e backs, made once per view; NULL when out of memory. */
static const char *const *pool_names(const struct estate *e, struct view *w, size_t i)
{
    const struct est_pool *pl = &e->pools[i];

    if (!w->pool_names[i] && (w->pool_names[i] = malloc((pl->n_datastores + 1) *
                                                         sizeof(*w->pool_names[i]))))
        for (size_t j = 0; j < pl->n_datastores; j++)
            w->pool_names[i][j] = chk_pool_datastore(e, pl, j);
    return w->pool_names[i];
}

/* src as a VM of the judge's estate o: its datastores by their index there. 0 or -ENOMEM. */
static int keep_vm(struct estate *o, const struct estate *e, struct view *w, size_t *n,
                   const struct est_vm *src, struct est_vm *dst)
{
    struct est_disk *disks = src->n_disks ? est_alloc(o, src->n_disks * sizeof(*disks)) : NULL;
    size_t *where = src->n_datastores ? est_alloc(o, src->n_datastores * sizeof(*where)) : NULL;

    if ((src->n_disks && !disks) || (src->n_datastores && !where))
        return -ENOMEM;
    *dst = *src;
    dst->config_datastore = keep(e, w, n, src->config_datastore);
    for (size_t k = 0; k < src->n_disks; k++) {
        disks[k] = src->disks[k];
        disks[k].datastore = keep(e, w, n, src->disks[k].datastore);
    }
    for (size_t k = 0; k < src->n_datastores; k++)
        where[k] = keep(e, w, n, src->datastores[k]);
    dst->disks = disks;
    dst->datastores = where;
    return 0;
}

/* The judge's estate (see struct view) for datastore ds of e as it is, over w (view_make()):
 * the target is datastore 0, its datastore cluster pod 0, its pools 0 .. d->n_pools - 1 in its
 * order, then its VMs; NULL when out of memory. The VMs keep every datastore they name, blanked;
 * the pools keep only the names of theirs (their messages list them): a pool behind thousands
 * of datastores adds none to the judge's estate (test_whatif's pool_view_stays_small). w's maps
 * are as they were on return. */
static struct estate *view_of(const struct estate *e, struct view *w, size_t ds)
{
    const struct est_datastore *src = &e->datastores[ds];
    size_t n_on = w->at[ds + 1] - w->at[ds], n = 0, bound = 1, i;
    struct estate *o = est_overlay(e);
    int named = 1;
    struct est_datastore *d;

    if (!o)
        return NULL;
    for (i = w->at[ds]; i < w->at[ds + 1]; i++) {
        const struct est_vm *vm = &e->vms[w->vms[i]];
        bound += 1 + vm->n_disks + vm->n_datastores;
    }
    if (bound > w->cap_kept) {
        size_t *kept = realloc(w->kept, bound * sizeof(*kept));
        if (!kept)
            goto fail;
        w->kept = kept;
        w->cap_kept = bound;
    }
    keep(e, w, &n, ds);
    /* The pools behind the target, each with the names of the datastores it backs. */
    o->n_pools = src->n_pools;
    o->pools = src->n_pools ? est_alloc(o, src->n_pools * sizeof(*o->pools)) : NULL;
    for (size_t k = 0; o->pools && k < src->n_pools; k++) {
        o->pools[k] = e->pools[src->pools[k]];
        o->pools[k].datastores = NULL;
        /* Out of memory fails below, once w's maps are restored. */
        if (!(o->pools[k].datastore_names = pool_names(e, w, src->pools[k])))
            named = 0;
    }
    o->vms = est_alloc(o, (n_on + 1) * sizeof(*o->vms)); /* the proposed VMs: apply() */
    for (i = 0; o->vms && i < n_on; i++)
        if (keep_vm(o, e, w, &n, &e->vms[w->vms[w->at[ds] + i]], &o->vms[i]) < 0)
            break;
    o->n_vms = n_on;
    o->datastores = est_alloc(o, n * sizeof(*o->datastores));
    o->n_datastores = n;
    if (src->pod < e->n_pods && (o->pods = est_alloc(o, sizeof(*o->pods)))) {
        o->pods[0] = e->pods[src->pod];
        o->n_pods = 1;
    } else {
        o->pods = NULL;
        o->n_pods = 0;
    }
    for (size_t k = 0; o->datastores && k < n; k++) {
        const struct est_datastore *of = &e->datastores[w->kept[k]];
        d = &o->datastores[k];
        *d = *of;
        d->pod = o->n_pods && of->pod == src->pod ? 0 : EST_NONE;
        if (k == 0) { /* the target: its pools are the judge's 0 .. n_pools - 1 */
            size_t *pools = src->n_pools ? est_alloc(o, src->n_pools * sizeof(*pools)) : NULL;
            for (size_t j = 0; pools && j < src->n_pools; j++)
                pools[j] = j;
            d->pools = pools;
            continue;
        }
        /* The others are named, not judged: no figures, and none of the pools left out. */
        blank_datastore(d);
        d->pools = NULL;
        d->pool_thin = NULL;
        d->n_pools = 0;
    }
    for (size_t k = 0; k < n; k++)
        w->ds_map[w->kept[k]] = EST_NONE;
    if (!est_failed(o) && o->datastores && i == n_on && named)
        return o;
fail:
    est_free(o);
    return NULL;
}

size_t chk_judge_datastores(const struct chk_site *site, size_t ds)
{
    struct view w;
    struct estate *o;
    size_t n = 0;

    if (ds >= site->estate->n_datastores || view_make(site->estate, site->ds_vms, &w) < 0)
        return 0;
    if ((o = view_of(site->estate, &w, ds))) {
        n = o->n_datastores;
        est_free(o);
    }
    view_free(&w);
    return n;
}

/* e with the proposal placed on datastore ds: the judge's estate (view_of()), whose datastore 0
 * is ds; NULL when out of memory. */
static struct estate *apply(const struct estate *e, struct view *w, size_t ds,
                            const struct chk_proposal *p)
{
    struct estate *o = view_of(e, w, ds);
    int64_t total = total_bytes(p);
    const char *vformat = formats[p->format].vsphere;
    size_t n_on;
    struct est_datastore *d;
    struct est_vm *vms;
    char moref[64];

    if (!o)
        return NULL;
    n_on = o->n_vms;
    vms = est_alloc(o, (n_on + (size_t)p->vms) * sizeof(*vms));
    if (!vms)
        goto fail;
    memcpy(vms, o->vms, n_on * sizeof(*vms));
    o->vms = vms;
    d = &o->datastores[0];
    if (p->format == CHK_DISK_THIN) {
        /* A thin disk takes nothing now and adds its size to what is promised. */
        int64_t unc = d->uncommitted > 0 ? d->uncommitted : 0;
        d->uncommitted = unc > INT64_MAX - total ? INT64_MAX : unc + total;
    } else {
        d->free_space = total >= d->free_space ? 0 : d->free_space - total;
        if (d->pod < o->n_pods) {
            struct est_pod *pod = &o->pods[d->pod];
            pod->free_space = total >= pod->free_space ? 0 : pod->free_space - total;
        }
        /* A thick disk on a thin LUN takes its size from the array pool as well (issue 14):
         * the LUN's space is allocated as it is written. A thick LUN's space is the pool's
         * already. Unknown (no pool_thin) counts as thin: the gate does not guess in favour.
         * The judge's pools are copies already (view_of()). */
        for (size_t k = 0; k < d->n_pools; k++) {
            struct est_pool *pool = &o->pools[d->pools[k]];
            if ((d->pool_thin && !d->pool_thin[k]) || pool->size_free < 0)
                continue;
            pool->size_free = total >= pool->size_free ? 0 : pool->size_free - total;
            if (pool->size_used >= 0)
                pool->size_used =
                    pool->size_used > INT64_MAX - total ? INT64_MAX : pool->size_used + total;
        }
    }
    d->vm_count += p->vms;
    for (int v = 0; v < p->vms; v++) {
        struct est_vm *vm = &o->vms[n_on + (size_t)v];
        struct est_controller *c = est_alloc(o, sizeof(*c));
        size_t *where = est_alloc(o, sizeof(*where));
        struct est_disk *disks = est_alloc(o, p->n_disks * sizeof(*disks));

        snprintf(moref, sizeof(moref), PROPOSED_MOREF "%d", v + 1);
        if (!c || !where || (p->n_disks && !disks))
            goto fail;
        *c = (struct est_controller){.key = 1000,
                                     .type = "ParaVirtualSCSIController",
                                     .shared_bus = p->shared_bus ? "physicalSharing"
                                                                 : "noSharing"};
        *where = 0;
        for (size_t k = 0; k < p->n_disks; k++)
            disks[k] = (struct est_disk){.key = 2000 + (int)k,
                                         .label = "proposed disk",
                                         .datastore = 0,
                                         .capacity_bytes = p->disk_bytes[k],
                                         .format = vformat,
                                         .controller = 0};
        *vm = (struct est_vm){.moref = est_strdup(o, moref),
                              .name = PROPOSED_NAME,
                              .power_state = "poweredOn",
                              .ft_state = p->ft ? "running" : "notConfigured",
                              .hw_version = EST_UNKNOWN,
                              .host = EST_NONE,
                              .config_datastore = 0,
                              .datastores = where,
                              .n_datastores = 1,
                              .controllers = c,
                              .n_controllers = 1,
                              .disks = disks,
                              .n_disks = p->n_disks};
    }
    o->n_vms = n_on + (size_t)p->vms;
    if (est_failed(o))
        goto fail;
    return o;
fail:
    est_free(o);
    return NULL;
}

/* The findings of w's checks over the judge's estate of datastore ds with p placed on it
 * (apply(): *o, the caller's to free with est_free(), NULL when out of memory), into res. A
 * judge reads their messages, never their evidence, so none is built: a low pool's would name
 * every datastore the pool backs in each of a placement's thousands of judges. */
static int judge_run(const struct chk_config *cfg, const struct estate *e, struct view *w,
                     size_t ds, const struct chk_proposal *p, int64_t now, struct estate **o,
                     struct chk_results *res, char *err, size_t errlen)
{
    if (!(*o = apply(e, w, ds, p)))
        return -ENOMEM;
    res->no_evidence = 1;
    return chk_run_some(cfg, w->only, w->n_only, *o, now, res, err, errlen);
}

int chk_judge_findings(const struct chk_config *cfg, const struct chk_site *site, size_t ds,
                       const struct chk_proposal *p, int64_t now, struct chk_results *out,
                       char *err, size_t errlen)
{
    struct estate *o = NULL;
    struct view w;
    int rc;

    if (ds >= site->estate->n_datastores)
        return -EINVAL;
    if ((rc = view_make(site->estate, site->ds_vms, &w)) < 0)
        return rc;
    size_t first = out->n;
    /* judge_run() builds no evidence into out; the caller's later runs into it still do. */
    int no_evidence = out->no_evidence;
    rc = judge_run(cfg, site->estate, &w, ds, p, now, &o, out, err, errlen);
    out->no_evidence = no_evidence;
    /* Their vcenter was the judge's estate's copy, which goes: the same name, the site's. */
    for (size_t i = first; i < out->n; i++)
        out->items[i].vcenter = site->estate->vcenter;
    est_free(o);
    view_free(&w);
    return rc;
}

/* measure() of datastore ds of e counting only the VMs w says name it (the others do not
 * live there): the same figures, without a walk over every VM. */
static void measure_named(const struct estate *e, const struct view *w, size_t ds,
                          struct fig *f)
{
    struct estate one = *e;

    one.n_vms = 0;
    measure(&one, ds, f);
    one.n_vms = 1;
    for (size_t i = w->at[ds]; i < w->at[ds + 1]; i++) {
        int vms, on;
        one.vms = &e->vms[w->vms[i]];
        chk_vms_on_datastore(&one, ds, &vms, &on);
        f->vms += vms;
        f->powered_on += on;
    }
}

/* ---- judging one datastore ----------------------------------------------------------------- */

struct verdict {
    json_t *reasons, *waived; /* arrays */
    struct fig before, after;
    struct room room;
    int measured; /* after and room mean something */
};

static void verdict_free(struct verdict *v)
{
    json_decref(v->reasons);
    json_decref(v->waived);
    v->reasons = v->waived = NULL;
}

/* Whether list already holds a reason with the same check, object and message (the proposed
 * VMs are alike: one reason says it for all of them). */
static int listed(const json_t *list, const json_t *r)
{
    size_t i;
    const json_t *x;

    json_array_foreach(list, i, x) {
        if (json_equal(json_object_get(x, "check"), json_object_get(r, "check")) &&
            json_equal(json_object_get(x, "object"), json_object_get(r, "object")) &&
            json_equal(json_object_get(x, "message"), json_object_get(r, "message")))
            return 1;
    }
    return 0;
}

static int add_to(json_t *list, json_t *r)
{
    if (!r)
        return -ENOMEM;
    if (listed(list, r)) {
        json_decref(r);
        return 0;
    }
    return json_array_append_new(list, r) < 0 ? -ENOMEM : 0;
}

/* A reason of the gate's own (code), not of a check: always denies. */
static int own_reason(struct verdict *v, const char *code, const char *object_type,
                      const char *object, const char *vcenter, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
static int own_reason(struct verdict *v, const char *code, const char *object_type,
                      const char *object, const char *vcenter, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return add_to(v->reasons,
                  json_pack("{s:s, s:n, s:s, s:s, s:s, s:n, s:s, s:s}", "code", code, "check",
                            "severity", "critical", "object_type", object_type, "object", object,
                            "host", "vcenter", vcenter, "message", msg));
}

/* A check's finding f: a reason when at or above fail_on, listed as waived when a waiver
 * covers it. */
static int finding_reason(struct verdict *v, const struct chk_finding *f, enum vsl_severity fail_on)
{
    if (f->waiver)
        return add_to(v->waived,
                      json_pack("{s:s, s:s, s:s?, s:s, s:s?, s:s, s:s, s:s, s:s}", "check",
                                f->check->id, "severity", vsl_severity_name(f->severity),
                                "object_type", f->object_type, "object", f->object_name, "host",
                                f->host_name, "vcenter", f->vcenter, "message", f->message,
                                "waiver_reason", f->waiver->reason, "waiver_expires",
                                f->waiver->expires_text));
    if (f->severity < fail_on)
        return 0;
    return add_to(v->reasons,
                  json_pack("{s:s, s:s, s:s, s:s?, s:s, s:s?, s:s, s:s}", "code", "finding",
                            "check", f->check->id, "severity", vsl_severity_name(f->severity),
                            "object_type", f->object_type, "object", f->object_name, "host",
                            f->host_name, "vcenter", f->vcenter, "message", f->message));
}

static int streq(const char *a, const char *b)
{
    return a && b && !strcmp(a, b);
}

static int by_index(const void *x, const void *y)
{
    size_t a = *(const size_t *)x, b = *(const size_t *)y;

    return a < b ? -1 : a > b;
}

/* The findings of b->all about one of datastore d's LUNs (on any host that mounts it), each
 * once, in b->all's order: *out (owned by the caller, NULL when none) holds *n indexes. */
static int backing_lun_findings(const struct base *b, const struct est_datastore *d,
                                size_t **out, size_t *n)
{
    const struct chk_lun_index *x = b->luns;
    size_t *v = NULL, cap = 0, k = 0;

    *out = NULL;
    *n = 0;
    for (size_t e = 0; e < d->n_extents; e++) {
        for (size_t r = 0; r < d->extents[e].n_luns; r++) {
            const struct est_lun_ref *ref = &d->extents[e].luns[r];
            size_t slot = x->host_base[ref->host] + ref->lun;
            for (size_t j = x->first[slot]; j < x->first[slot + 1]; j++) {
                if (vsl_grow(&v, &cap, k, sizeof(*v), 16) < 0) {
                    free(v);
                    return -ENOMEM;
                }
                v[k++] = x->at[j];
            }
        }
    }
    if (k > 1) {
        size_t u = 1;
        qsort(v, k, sizeof(*v), by_index);
        for (size_t j = 1; j < k; j++)
            if (v[j] != v[u - 1])
                v[u++] = v[j];
        k = u;
    }
    *out = v;
    *n = k;
    return 0;
}

/* Whether f, from a run over the estate after the proposal, is about the target: the
 * datastore, its datastore cluster, or a proposed VM. */
static int on_target(const struct estate *o, const struct est_datastore *d,
                     const struct chk_finding *f)
{
    if (streq(f->object_type, "datastore"))
        return streq(f->object_moref, d->moref);
    if (streq(f->object_type, "storage_pod"))
        return d->pod < o->n_pods && streq(f->object_moref, o->pods[d->pod].moref);
    if (streq(f->object_type, "vm"))
        return f->object_moref && !strncmp(f->object_moref, PROPOSED_MOREF,
                                           strlen(PROPOSED_MOREF));
    if (streq(f->object_type, "array_pool")) {
        char id[512];
        for (size_t k = 0; k < d->n_pools; k++) {
            const struct est_pool *p = &o->pools[d->pools[k]];
            snprintf(id, sizeof(id), "%s/%s", p->array, p->id); /* as chk_emit_pool names it */
            if (streq(f->object_moref, id))
                return 1;
        }
    }
    return 0;
}

static int64_t age_of(const struct chk_site *site, int64_t now)
{
    return now - (site->polled_ms ? site->polled_ms : site->estate->polled_ms) / 1000;
}

static int64_t max_age(const struct chk_site *site, const struct chk_proposal *p)
{
    return p->max_age_s > 0 ? p->max_age_s : site->max_age_s;
}

static int judge(const struct chk_config *cfg, struct base *b, size_t ds,
                 const struct chk_proposal *p, int64_t now, struct verdict *v, char *err,
                 size_t errlen)
{
    const struct estate *e = b->site->estate;
    const struct est_datastore *d = &e->datastores[ds];
    struct chk_results res = {0};
    struct estate *o = NULL;
    char a[32], c[32];
    int64_t total = total_bytes(p), age = age_of(b->site, now), limit = max_age(b->site, p);
    int rc;

    memset(v, 0, sizeof(*v));
    v->reasons = json_array();
    v->waived = json_array();
    if (!v->reasons || !v->waived)
        return -ENOMEM;
    if (!b->viewed) {
        if ((rc = view_make(e, b->site->ds_vms, &b->view)) < 0)
            return rc;
        b->viewed = 1;
    }
    measure_named(e, &b->view, ds, &v->before);
    v->after = v->before;
    if (!p->allow_stale && age > limit &&
        (rc = own_reason(v, "stale_snapshot", "vcenter", e->vcenter, e->vcenter,
                         "the snapshot of vCenter %s is %lld s old, older than max_age %lld s: "
                         "poll again or allow stale data",
                         e->vcenter, (long long)age, (long long)limit)) < 0)
        return rc;
    if (d->accessible != 1)
        return own_reason(v, "inaccessible", "datastore", d->name, e->vcenter,
                          "datastore %s is not accessible: no place for new VMs, and its "
                          "capacity figures are stale",
                          d->name);
    if (d->capacity <= 0 || d->free_space < 0)
        return own_reason(v, "unknown_capacity", "datastore", d->name, e->vcenter,
                          "datastore %s does not report its capacity and free space: it cannot "
                          "be judged",
                          d->name);
    if (p->format != CHK_DISK_THIN && total > d->free_space &&
        (rc = own_reason(v, "no_space", "datastore", d->name, e->vcenter,
                         "the proposal's thick disks take %s now; datastore %s has %s free",
                         chk_size(total, a, sizeof(a)), d->name,
                         chk_size(d->free_space, c, sizeof(c)))) < 0)
        return rc;

    /* The backing LUNs' findings do not depend on the proposal: from the run over the
     * snapshot as it is. */
    if ((rc = base_run(cfg, b, now, err, errlen)) < 0)
        return rc;
    size_t *lun_f, n_lun_f;
    if ((rc = backing_lun_findings(b, d, &lun_f, &n_lun_f)) < 0)
        return rc;
    for (size_t i = 0; rc == 0 && i < n_lun_f; i++)
        rc = finding_reason(v, &b->all->items[lun_f[i]], p->fail_on);
    free(lun_f);
    if (rc < 0)
        return rc;

    rc = judge_run(cfg, e, &b->view, ds, p, now, &o, &res, err, errlen);
    for (size_t i = 0; rc == 0 && i < res.n; i++)
        if (on_target(o, &o->datastores[0], &res.items[i]))
            rc = finding_reason(v, &res.items[i], p->fail_on);
    if (rc == 0) {
        measure(o, 0, &v->after);
        /* The figures outlive the overlay and its pod array: after_json() works the datastore
         * cluster's out again from the snapshot's. */
        v->after.pod = NULL;
        v->measured = 1;
    }
    chk_results_free(&res);
    est_free(o);
    return rc;
}

/* The datastore cluster's figures after the proposal, from before's (the overlay is gone). */
static void pod_after(const struct fig *before, const struct chk_proposal *p, struct est_pod *out)
{
    int64_t total = p->format == CHK_DISK_THIN ? 0 : total_bytes(p);

    *out = *before->pod;
    out->free_space = total >= out->free_space ? 0 : out->free_space - total;
}

/* Fills v->room and the "after" JSON (with the datastore cluster's figures after). */
static json_t *after_json(const struct chk_config *cfg, const struct chk_proposal *p,
                          struct verdict *v, const char *vcenter)
{
    struct est_pod pod;
    struct fig after = v->after;

    if (v->before.pod && v->measured) {
        pod_after(&v->before, p, &pod);
        after.pod = &pod;
    }
    headroom(cfg, p->fail_on, &after, &v->room);
    return fig_json(&after, vcenter);
}

/* ---- finding the target -------------------------------------------------------------------- */

/* Whether site i is in scope: vcenter's, or every one. */
static int in_scope(const struct chk_site *sites, const char *vcenter, size_t i)
{
    return !vcenter || !strcmp(sites[i].estate->vcenter, vcenter);
}

static int vcenter_known(const struct chk_site *sites, size_t n, const char *vcenter, char *err,
                         size_t errlen)
{
    for (size_t i = 0; vcenter && i < n; i++)
        if (!strcmp(sites[i].estate->vcenter, vcenter))
            return 0;
    if (!vcenter)
        return 0;
    snprintf(err, errlen, "no vCenter %s with a snapshot", vcenter);
    return -VSL_ENOTFOUND;
}

struct hit {
    size_t site, index;
};

/* The one datastore (pod 0) or datastore cluster (pod 1) named name in scope. */
static int find_target(const struct chk_site *sites, size_t n, const char *vcenter,
                       const char *name, int pod, struct hit *out, char *err, size_t errlen)
{
    const char *kind = pod ? "datastore cluster" : "datastore";
    size_t found = 0;
    char where[512] = "";

    for (size_t s = 0; s < n; s++) {
        const struct estate *e = sites[s].estate;
        size_t m = pod ? e->n_pods : e->n_datastores;
        if (!in_scope(sites, vcenter, s))
            continue;
        for (size_t i = 0; i < m; i++) {
            if (strcmp(pod ? e->pods[i].name : e->datastores[i].name, name))
                continue;
            if (found++ == 0)
                *out = (struct hit){s, i};
            size_t used = strlen(where);
            snprintf(where + used, sizeof(where) - used, "%s%s", used ? ", " : "", e->vcenter);
        }
    }
    if (found == 1)
        return 0;
    if (found == 0) {
        snprintf(err, errlen, "no %s named %s%s%s", kind, name, vcenter ? " on vCenter " : "",
                 vcenter ? vcenter : "");
        return -VSL_ENOTFOUND;
    }
    snprintf(err, errlen,
             "%zu %ss are named %s (on vCenter %s): name the vCenter, or rename one", found,
             kind, name, where);
    return -EINVAL;
}

/* Where Storage DRS puts new VMs in datastore cluster pod: its accessible member with the
 * most free space (the first by name among equals); EST_NONE when no member can be judged. */
static size_t sdrs_member(const struct estate *e, size_t pod)
{
    size_t best = EST_NONE;

    for (size_t i = 0; i < e->n_datastores; i++) {
        const struct est_datastore *d = &e->datastores[i];
        if (d->pod != pod || d->accessible != 1 || d->capacity <= 0 || d->free_space < 0)
            continue;
        if (best == EST_NONE || d->free_space > e->datastores[best].free_space ||
            (d->free_space == e->datastores[best].free_space &&
             strcmp(d->name, e->datastores[best].name) < 0))
            best = i;
    }
    return best;
}

static json_t *room_json(const struct verdict *v)
{
    return v->measured ? json_real(round(v->room.value * 100.0) / 100.0) : json_null();
}

/* ---- the gate ------------------------------------------------------------------------------ */

int chk_gate(const struct chk_config *cfg, const struct chk_site *sites, size_t n_sites,
             const struct chk_proposal *p, int64_t now, json_t **answer, char *err,
             size_t errlen)
{
    struct hit t;
    struct base b = {0};
    struct verdict v = {0};
    size_t ds;
    const struct estate *e;
    json_t *before = NULL, *after = NULL, *target;
    int rc;

    assert(p->vms >= 1 && p->n_disks >= 1 && !p->datastore != !p->datastore_cluster);
    *answer = NULL;
    if ((rc = vcenter_known(sites, n_sites, p->vcenter, err, errlen)) < 0)
        return rc;
    rc = find_target(sites, n_sites, p->vcenter,
                     p->datastore ? p->datastore : p->datastore_cluster, !p->datastore, &t, err,
                     errlen);
    if (rc < 0)
        return rc;
    b.site = &sites[t.site];
    e = b.site->estate;
    ds = p->datastore ? t.index : sdrs_member(e, t.index);
    if (ds == EST_NONE) {
        /* A datastore cluster with no member that can take VMs. */
        const struct est_pod *pod = &e->pods[t.index];
        v.reasons = json_array();
        v.waived = json_array();
        rc = v.reasons && v.waived ? 0 : -ENOMEM;
        if (rc == 0)
            rc = own_reason(&v, "no_member", "storage_pod", pod->name, e->vcenter,
                            "datastore cluster %s has no accessible member with known free space",
                            pod->name);
        before = json_pack("{s:s, s:{s:s, s:I, s:I, s:o}}", "vcenter", e->vcenter,
                           "datastore_cluster", "name", pod->name, "capacity_bytes",
                           (json_int_t)pod->capacity, "free_bytes", (json_int_t)pod->free_space,
                           "free_pct", pct_json(pct(pod->free_space, pod->capacity)));
        after = json_deep_copy(before);
    } else {
        rc = judge(cfg, &b, ds, p, now, &v, err, errlen);
        if (rc == 0) {
            before = fig_json(&v.before, e->vcenter);
            after = after_json(cfg, p, &v, e->vcenter);
        }
    }
    if (rc < 0)
        goto out;
    target = p->datastore ? json_pack("{s:s}", "datastore", p->datastore)
                          : json_pack("{s:s}", "datastore_cluster", p->datastore_cluster);
    *answer = json_pack(
        "{s:b, s:o, s:s, s:s?, s:o, s:s, s:O, s:O, s:o, s:o, s:o, s:s?, s:I, s:I}", "allowed",
        json_array_size(v.reasons) == 0, "target", target, "vcenter", e->vcenter, "placed_on",
        ds == EST_NONE ? NULL : e->datastores[ds].name, "proposal", chk_proposal_json(p),
        "fail_on", vsl_severity_name(p->fail_on), "reasons", v.reasons, "waived", v.waived,
        "before", before, "after", after, "headroom", room_json(&v), "limited_by",
        v.measured && v.room.by[0] ? v.room.by : NULL, "snapshot_age_s",
        (json_int_t)age_of(b.site, now), "max_age_s", (json_int_t)max_age(b.site, p));
    before = after = NULL; /* taken by json_pack, even when it failed */
    if (!*answer)
        rc = -ENOMEM;
out:
    json_decref(before);
    json_decref(after);
    verdict_free(&v);
    base_free(&b);
    if (rc == -ENOMEM && !err[0])
        snprintf(err, errlen, "out of memory");
    return rc;
}

/* ---- placement ----------------------------------------------------------------------------- */

struct candidate {
    json_t *item;
    double room;
    int64_t free_after;
    const char *vcenter, *name;
};

static int by_room(const void *x, const void *y)
{
    const struct candidate *a = x, *b = y;
    int c;

    if (a->room != b->room)
        return a->room > b->room ? -1 : 1;
    if (a->free_after != b->free_after)
        return a->free_after > b->free_after ? -1 : 1;
    if ((c = strcmp(a->vcenter, b->vcenter)))
        return c;
    return strcmp(a->name, b->name);
}

/* The hosts of e in the compute cluster with moref cl. */
static int in_cluster(const struct est_host *h, const char *cl)
{
    return streq(h->parent, cl);
}

/* Whether datastore d is mounted on a host of cluster cl; *missing names (up to its size) the
 * hosts of cl where it is not mounted and accessible. */
static int mounted_in(const struct estate *e, const struct est_datastore *d, const char *cl,
                      char *missing, size_t size)
{
    int any = 0;

    missing[0] = '\0';
    for (size_t h = 0; h < e->n_hosts; h++) {
        int here = 0;
        if (!in_cluster(&e->hosts[h], cl))
            continue;
        for (size_t m = 0; m < d->n_mounts; m++) {
            const struct est_mount *mt = &d->mounts[m];
            if (mt->host == h) {
                any = 1;
                here = mt->mounted != 0 && mt->accessible != 0;
            }
        }
        if (!here) {
            size_t used = strlen(missing);
            snprintf(missing + used, size - used, "%s%s", used ? ", " : "", e->hosts[h].name);
        }
    }
    return any;
}

/* The moref of the compute cluster called name on e, or NULL. */
static const char *cluster_moref(const struct estate *e, const char *name)
{
    for (size_t i = 0; i < e->n_entities; i++)
        if (streq(e->entities[i].type, "ClusterComputeResource") &&
            streq(e->entities[i].name, name))
            return e->entities[i].moref;
    return NULL;
}

/* The rejected datastores of a placement: every one counted under each of its reasons' kinds,
 * the first max of them listed with their reasons. At 4,000 datastores a list of all is 2.2 MB
 * of JSON that a pipeline reads none of, held as a tree per request until it is sent. */
struct refusals {
    json_t *listed;  /* array: at most max items */
    size_t max;      /* SIZE_MAX: every one */
    size_t total;    /* rejected datastores, listed or not */
    struct refusal_kind {
        char code[32], check[64]; /* check "" for the gate's own reasons */
        size_t datastores;
        size_t last; /* the datastore (no->total when it was counted) counted last */
    } *kinds; /* owned */
    size_t n_kinds, cap_kinds;
};

/* The kind (code, check) of reason r: its index in no->kinds, added when new; -ENOMEM. */
static long kind_of(struct refusals *no, const json_t *r)
{
    const char *code = json_string_value(json_object_get(r, "code"));
    const char *check = json_string_value(json_object_get(r, "check"));
    size_t i;

    code = code ? code : "";
    check = check ? check : "";
    for (i = 0; i < no->n_kinds; i++)
        if (!strcmp(no->kinds[i].code, code) && !strcmp(no->kinds[i].check, check))
            return (long)i;
    if (vsl_grow(&no->kinds, &no->cap_kinds, no->n_kinds, sizeof(*no->kinds), 8) < 0)
        return -ENOMEM;
    memset(&no->kinds[i], 0, sizeof(no->kinds[i]));
    snprintf(no->kinds[i].code, sizeof(no->kinds[i].code), "%s", code);
    snprintf(no->kinds[i].check, sizeof(no->kinds[i].check), "%s", check);
    no->n_kinds++;
    return (long)i;
}

/* Datastore name of vcenter rejected for reasons (an array, borrowed): counted, listed while
 * there is room. 0 or -ENOMEM. */
static int refused(struct refusals *no, const char *name, const char *vcenter,
                   const json_t *reasons)
{
    size_t i;
    const json_t *r;

    no->total++;
    json_array_foreach(reasons, i, r) {
        long k = kind_of(no, r);
        if (k < 0)
            return -ENOMEM;
        /* A datastore counts once under each kind, however many of its reasons are of it. */
        if (no->kinds[k].last != no->total) {
            no->kinds[k].last = no->total;
            no->kinds[k].datastores++;
        }
    }
    if (json_array_size(no->listed) >= no->max)
        return 0;
    json_t *item = json_pack("{s:s, s:s, s:O}", "datastore", name, "vcenter", vcenter,
                             "reasons", reasons);
    return item && json_array_append_new(no->listed, item) == 0 ? 0 : -ENOMEM;
}

static int by_count(const void *x, const void *y)
{
    const struct refusal_kind *a = x, *b = y;
    int c;

    if (a->datastores != b->datastores)
        return a->datastores > b->datastores ? -1 : 1;
    if ((c = strcmp(a->code, b->code)))
        return c;
    return strcmp(a->check, b->check);
}

/* [{"code","check","datastores"}], the most datastores first; NULL when out of memory. */
static json_t *kinds_json(struct refusals *no)
{
    json_t *a = json_array();

    if (no->n_kinds)
        qsort(no->kinds, no->n_kinds, sizeof(*no->kinds), by_count);
    for (size_t i = 0; a && i < no->n_kinds; i++)
        a = chk_ev_append(a, json_pack("{s:s, s:s?, s:I}", "code", no->kinds[i].code, "check",
                                       no->kinds[i].check[0] ? no->kinds[i].check : NULL,
                                       "datastores", (json_int_t)no->kinds[i].datastores));
    return a;
}

static int place_site(const struct chk_config *cfg, struct base *b, const struct chk_proposal *p,
                      const char *cluster, int64_t now, struct candidate **cands, size_t *n_cands,
                      struct refusals *no, char *err, size_t errlen)
{
    const struct estate *e = b->site->estate;
    const char *cl = cluster ? cluster_moref(e, cluster) : NULL;
    char missing[512];
    int rc = 0;

    if (cluster && !cl)
        return 0;
    for (size_t i = 0; rc == 0 && i < e->n_datastores; i++) {
        const struct est_datastore *d = &e->datastores[i];
        struct verdict v;
        json_t *item;

        if (p->datastore_cluster &&
            !(d->pod < e->n_pods && !strcmp(e->pods[d->pod].name, p->datastore_cluster)))
            continue;
        if (cl && !mounted_in(e, d, cl, missing, sizeof(missing)))
            continue;
        rc = judge(cfg, b, i, p, now, &v, err, errlen);
        if (rc == 0 && cl && missing[0])
            rc = own_reason(&v, "not_on_every_host", "datastore", d->name, e->vcenter,
                            "datastore %s is not mounted and accessible on every host of "
                            "cluster %s (not on %s): a VM there could not run on those hosts",
                            d->name, cluster, missing);
        if (rc < 0) {
            verdict_free(&v);
            break;
        }
        if (json_array_size(v.reasons)) {
            rc = refused(no, d->name, e->vcenter, v.reasons);
        } else {
            struct candidate *c = realloc(*cands, (*n_cands + 1) * sizeof(*c));
            json_t *after = c ? after_json(cfg, p, &v, e->vcenter) : NULL;
            if (c)
                *cands = c;
            item = after ? json_pack("{s:s, s:s, s:s?, s:o, s:o, s:s?, s:O}", "datastore",
                                     d->name, "vcenter", e->vcenter, "datastore_cluster",
                                     d->pod < e->n_pods ? e->pods[d->pod].name : NULL, "after",
                                     after, "headroom", room_json(&v), "limited_by",
                                     v.room.by[0] ? v.room.by : NULL, "waived", v.waived)
                         : NULL;
            if (!item) {
                rc = -ENOMEM;
            } else {
                (*cands)[(*n_cands)++] = (struct candidate){
                    item, v.room.value, v.after.free_space, e->vcenter, d->name};
            }
        }
        verdict_free(&v);
    }
    return rc;
}

int chk_placement(const struct chk_config *cfg, const struct chk_site *sites, size_t n_sites,
                  const struct chk_proposal *p, const char *cluster, int limit,
                  size_t max_rejected, int64_t now, json_t **answer, char *err, size_t errlen)
{
    struct candidate *cands = NULL;
    struct refusals no = {.listed = json_array(), .max = max_rejected};
    size_t n_cands = 0;
    json_t *list = json_array(), *snaps = json_array();
    int rc = 0, cluster_seen = !cluster, pod_seen = !p->datastore_cluster;

    assert(p->vms >= 1 && p->n_disks >= 1 && !p->datastore && limit >= 1);
    *answer = NULL;
    if (!no.listed || !list || !snaps) {
        rc = -ENOMEM;
        goto out;
    }
    if ((rc = vcenter_known(sites, n_sites, p->vcenter, err, errlen)) < 0)
        goto out;
    for (size_t s = 0; s < n_sites; s++) {
        const struct estate *e = sites[s].estate;
        if (!in_scope(sites, p->vcenter, s))
            continue;
        if (cluster && cluster_moref(e, cluster))
            cluster_seen = 1;
        for (size_t i = 0; !pod_seen && i < e->n_pods; i++)
            pod_seen = !strcmp(e->pods[i].name, p->datastore_cluster);
    }
    if (!cluster_seen || !pod_seen) {
        snprintf(err, errlen, "no %s named %s%s%s", cluster_seen ? "datastore cluster" : "cluster",
                 cluster_seen ? p->datastore_cluster : cluster, p->vcenter ? " on vCenter " : "",
                 p->vcenter ? p->vcenter : "");
        rc = -VSL_ENOTFOUND;
        goto out;
    }
    for (size_t s = 0; rc == 0 && s < n_sites; s++) {
        struct base b = {.site = &sites[s]};
        if (!in_scope(sites, p->vcenter, s))
            continue;
        rc = place_site(cfg, &b, p, cluster, now, &cands, &n_cands, &no, err, errlen);
        base_free(&b);
        if (rc == 0 && json_array_append_new(
                           snaps, json_pack("{s:s, s:I, s:I}", "vcenter", sites[s].estate->vcenter,
                                            "snapshot_age_s",
                                            (json_int_t)age_of(&sites[s], now),
                                            "max_age_s", (json_int_t)max_age(&sites[s], p))) < 0)
            rc = -ENOMEM;
    }
    if (rc < 0)
        goto out;
    if (n_cands)
        qsort(cands, n_cands, sizeof(*cands), by_room);
    for (size_t i = 0; i < n_cands && i < (size_t)limit; i++)
        if (json_array_append(list, cands[i].item) < 0)
            rc = -ENOMEM;
    if (rc == 0)
        /* rejected_truncated: a client that reads only the list learns it is cut (the default
         * 100 cuts it beyond 100 datastores rejected). */
        *answer = json_pack("{s:O, s:O, s:I, s:b, s:o, s:I, s:o, s:s?, s:s, s:O}", "candidates",
                            list, "rejected", no.listed, "total_rejected", (json_int_t)no.total,
                            "rejected_truncated", json_array_size(no.listed) < no.total,
                            "rejected_by_reason", kinds_json(&no), "total_candidates",
                            (json_int_t)n_cands, "proposal", chk_proposal_json(p), "cluster",
                            cluster, "fail_on", vsl_severity_name(p->fail_on), "snapshots",
                            snaps);
    if (rc == 0 && !*answer)
        rc = -ENOMEM;
out:
    for (size_t i = 0; i < n_cands; i++)
        json_decref(cands[i].item);
    free(cands);
    json_decref(no.listed);
    free(no.kinds);
    json_decref(list);
    json_decref(snaps);
    if (rc == -ENOMEM && !err[0])
        snprintf(err, errlen, "out of memory");
    return rc;
}
