/* The check engine: runs each enabled check over an estate, applies severity overrides and
 * waivers, and fingerprints every finding so its history can be followed across polls. */
#define _GNU_SOURCE /* sched_getaffinity(), CPU_COUNT() */
#include <assert.h>
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "checks/engine.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/log.h"

struct chk_ctx {
    const struct check *check;
    const struct chk_settings *settings;
    const struct estate *estate;
    int64_t now;
    struct chk_results *out;
    const struct chk_config *cfg; /* the whole configuration, NULL in chk_run_one */
};

const struct estate *chk_estate(const struct chk_ctx *ctx)
{
    return ctx->estate;
}

double chk_param(const struct chk_ctx *ctx, const char *name)
{
    const struct chk_param *p = ctx->check->params;
    for (size_t i = 0; p && p[i].name && i < CHK_MAX_PARAMS; i++)
        if (!strcmp(p[i].name, name))
            return ctx->settings->params[i];
    assert(!"a check asked for a parameter it does not declare");
    return 0;
}

const char *chk_size(int64_t bytes, char *buf, size_t size)
{
    static const struct {
        double unit;
        const char *name;
    } units[] = {{CHK_TIB, "TB"}, {CHK_GIB, "GB"}, {1048576.0, "MB"}, {1024.0, "KB"}};
    double v = (double)bytes;
    const char *name = "bytes";
    size_t n;

    assert(buf && size > 0);
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (fabs(v) >= units[i].unit) {
            v /= units[i].unit;
            name = units[i].name;
            break;
        }
    }
    snprintf(buf, size, "%.2f", v);
    /* "750.00" -> "750", "599.50" -> "599.5" */
    n = strlen(buf);
    while (n > 0 && buf[n - 1] == '0')
        buf[--n] = '\0';
    if (n > 0 && buf[n - 1] == '.')
        buf[--n] = '\0';
    snprintf(buf + n, size - n, " %s", name);
    return buf;
}

int chk_wants_evidence(const struct chk_ctx *ctx)
{
    return !ctx->out->no_evidence;
}

int64_t chk_now(const struct chk_ctx *ctx)
{
    return ctx->now;
}

void chk_fingerprint(const char *check, const char *vcenter, const char *moref, const char *detail,
                     char out[17])
{
    /* FNV-1a 64 with a separator byte between fields, so ("a","bc") differs from ("ab","c"). */
    const char *parts[4] = {check, vcenter, moref, detail ? detail : ""};
    uint64_t h = 0xcbf29ce484222325ULL;
    for (int i = 0; i < 4; i++) {
        for (const unsigned char *p = (const unsigned char *)(parts[i] ? parts[i] : ""); *p; p++) {
            h ^= *p;
            h *= 0x100000001b3ULL;
        }
        h ^= 0x1f;
        h *= 0x100000001b3ULL;
    }
    snprintf(out, 17, "%016llx", (unsigned long long)h);
}

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* Appends f to r as a finding of check c on vcenter (borrowed), with s's severity override
 * (s may be NULL), about host host_moref/host_name (either may be NULL), fingerprinted by
 * fp_moref; *added (may be NULL) is the new finding. Takes f->evidence. 0 or -ENOMEM (the
 * finding counted even then, so that chk_results_free releases what was copied). */
static int append_finding(struct chk_results *r, const struct check *c, const char *vcenter,
                          const struct chk_settings *s, const struct chk_emit *f,
                          const char *host_moref, const char *host_name, const char *fp_moref,
                          struct chk_finding **added)
{
    int err = 0;

    /* A check that could not build its evidence ran out of memory; an empty {} would pass for
     * a finding without measurements. */
    if (!f->evidence)
        return -ENOMEM;
    json_t *evidence = f->evidence;
    if (r->no_evidence) {
        json_decref(evidence);
        if (!(evidence = json_object()))
            return -ENOMEM;
    }
    if (vsl_grow(&r->items, &r->cap, r->n, sizeof(*r->items), 64) < 0) {
        json_decref(evidence);
        return -ENOMEM;
    }
    struct chk_finding *out = &r->items[r->n];
    memset(out, 0, sizeof(*out));
    out->check = c;
    out->vcenter = vcenter;
    out->severity = s && s->severity_override >= 0 ? (enum vsl_severity)s->severity_override
                                                   : f->severity;
    out->object_type = dup_or_null(f->object_type);
    out->object_moref = dup_or_null(f->object_moref);
    out->object_name = dup_or_null(f->object_name);
    out->host_moref = dup_or_null(host_moref);
    out->host_name = dup_or_null(host_name);
    out->detail = dup_or_null(f->detail);
    out->message = dup_or_null(f->message);
    out->evidence = evidence;
    /* Only recorded: the tree as text at once, so that no more than one finding's tree is
     * held (a check of thousands of findings held all their trees until it ended). */
    if (r->compact && (out->evidence_json = json_dumps(evidence, FINDING_EVIDENCE_FLAGS))) {
        json_decref(evidence);
        out->evidence = NULL;
    }
    if (!out->object_name || !out->message || (f->object_moref && !out->object_moref) ||
        (host_moref && !out->host_moref) || (host_name && !out->host_name) ||
        (f->object_type && !out->object_type) || (f->detail && !out->detail))
        err = -ENOMEM;
    chk_fingerprint(c->id, vcenter, fp_moref, f->detail, out->fingerprint);
    r->n++;
    if (added)
        *added = out;
    return err;
}

int chk_emit(struct chk_ctx *ctx, const struct chk_emit *f)
{
    const char *host_moref = f->host ? f->host->moref : NULL;

    assert(f->object_name && f->message && (f->object_moref || host_moref));
    /* A part of a host is fingerprinted by its host's moref and its detail (the LUN's
     * canonical name, the adapter's device...), as findings always were: history survives. */
    return append_finding(ctx->out, ctx->check, ctx->estate->vcenter, ctx->settings, f,
                          host_moref, f->host ? f->host->name : NULL,
                          f->object_moref ? f->object_moref : host_moref, NULL);
}

int chk_emit_object(struct chk_ctx *ctx, const char *type, const char *moref, const char *name,
                    enum vsl_severity severity, const char *message, json_t *evidence)
{
    return chk_emit(ctx, &(struct chk_emit){.severity = severity,
                                            .object_type = type,
                                            .object_moref = moref,
                                            .object_name = name,
                                            .message = message,
                                            .evidence = evidence});
}

int chk_emit_datastore(struct chk_ctx *ctx, const struct est_datastore *d,
                       enum vsl_severity severity, const char *message, json_t *evidence)
{
    return chk_emit_object(ctx, "datastore", d->moref, d->name, severity, message,
                           chk_ev_extents(evidence, d));
}

int chk_emit_measured(struct chk_ctx *ctx, const struct est_datastore *d, const struct est_pod *p,
                      enum vsl_severity severity, const char *message, json_t *evidence)
{
    if (d)
        return chk_emit_datastore(ctx, d, severity, message, evidence);
    return chk_emit_object(ctx, "storage_pod", p->moref, p->name, severity, message, evidence);
}

int chk_emit_vm(struct chk_ctx *ctx, const struct est_vm *vm, enum vsl_severity severity,
                const char *message, json_t *evidence)
{
    return chk_emit_object(ctx, "vm", vm->moref, vm->name, severity, message, evidence);
}

int chk_emit_host(struct chk_ctx *ctx, const struct est_host *h, const char *detail,
                  enum vsl_severity severity, const char *message, json_t *evidence)
{
    return chk_emit(ctx, &(struct chk_emit){.severity = severity,
                                            .object_type = "host",
                                            .object_moref = h->moref,
                                            .object_name = h->name,
                                            .host = h,
                                            .detail = detail,
                                            .message = message,
                                            .evidence = evidence});
}

int chk_emit_part(struct chk_ctx *ctx, const struct est_host *h, const char *type,
                  const char *name, const char *detail, enum vsl_severity severity,
                  const char *message, json_t *evidence)
{
    return chk_emit(ctx, &(struct chk_emit){.severity = severity,
                                            .object_type = type,
                                            .object_name = name,
                                            .host = h,
                                            .detail = detail,
                                            .message = message,
                                            .evidence = evidence});
}

int chk_emit_lun(struct chk_ctx *ctx, const struct est_host *h, const struct est_lun *l,
                 enum vsl_severity severity, const char *message, json_t *evidence)
{
    return chk_emit_part(ctx, h, "lun", l->canonical_name, l->canonical_name, severity, message,
                         evidence);
}

int chk_append_unique(json_t *a, const char *s)
{
    size_t i;
    json_t *v;

    json_array_foreach(a, i, v)
    {
        if (!strcmp(json_string_value(v), s))
            return 0;
    }
    return json_array_append_new(a, json_string(s)) < 0 ? -ENOMEM : 0;
}

void chk_settings_default(const struct check *c, struct chk_settings *s)
{
    memset(s, 0, sizeof(*s));
    s->enabled = 1;
    s->severity_override = -1;
    for (size_t i = 0; c->params && c->params[i].name && i < CHK_MAX_PARAMS; i++)
        s->params[i] = c->params[i].dflt;
}

int chk_config_init(struct chk_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->settings = calloc(chk_registry_len, sizeof(*cfg->settings));
    if (!cfg->settings)
        return -ENOMEM;
    for (size_t i = 0; i < chk_registry_len; i++)
        chk_settings_default(chk_registry[i], &cfg->settings[i]);
    return 0;
}

void chk_config_free(struct chk_config *cfg)
{
    for (size_t i = 0; i < cfg->n_waivers; i++) {
        struct chk_waiver *w = &cfg->waivers[i];
        free(w->check);
        free(w->object);
        free(w->vcenter);
        free(w->reason);
        free(w->expires_text);
    }
    free(cfg->waivers);
    free(cfg->settings);
    memset(cfg, 0, sizeof(*cfg));
}

int chk_config_copy(struct chk_config *dst, const struct chk_config *src)
{
    memset(dst, 0, sizeof(*dst));
    dst->settings = malloc(chk_registry_len * sizeof(*dst->settings));
    dst->waivers = calloc(src->n_waivers ? src->n_waivers : 1, sizeof(*dst->waivers));
    if (!dst->settings || !dst->waivers)
        goto nomem;
    memcpy(dst->settings, src->settings, chk_registry_len * sizeof(*dst->settings));
    for (size_t i = 0; i < src->n_waivers; i++) {
        const struct chk_waiver *s = &src->waivers[i];
        struct chk_waiver *w = &dst->waivers[dst->n_waivers++];
        *w = (struct chk_waiver){.check = strdup(s->check),
                                 .object = strdup(s->object),
                                 .vcenter = dup_or_null(s->vcenter),
                                 .reason = strdup(s->reason),
                                 .expires_text = strdup(s->expires_text),
                                 .expires = s->expires,
                                 .line = s->line};
        if (!w->check || !w->object || (s->vcenter && !w->vcenter) || !w->reason ||
            !w->expires_text)
            goto nomem;
    }
    return 0;
nomem:
    chk_config_free(dst);
    return -ENOMEM;
}

int chk_evaluation(const struct chk_results *r, struct evaluation *out)
{
    struct finding *fs;
    const char **ids;
    struct unverified_scope *us;
    /* One block: the findings, then the scopes, then the completed and disabled ids. */
    size_t nf = r->n, nu = r->n_unverified, ni = r->n_completed + r->n_disabled;
    char *block = calloc(1, nf * sizeof(*fs) + nu * sizeof(*us) + ni * sizeof(*ids) + 1);

    memset(out, 0, sizeof(*out));
    if (!block)
        return -ENOMEM;
    fs = (struct finding *)block;
    us = (struct unverified_scope *)(fs + nf);
    ids = (const char **)(us + nu);
    for (size_t i = 0; i < nf; i++) {
        const struct chk_finding *f = &r->items[i];
        memcpy(fs[i].fingerprint, f->fingerprint, sizeof(fs[i].fingerprint));
        fs[i].check_id = f->check->id;
        fs[i].check_title = f->check->title;
        fs[i].severity = f->severity;
        fs[i].object_type = f->object_type;
        fs[i].object_moref = f->object_moref;
        fs[i].object_name = f->object_name;
        fs[i].host_moref = f->host_moref;
        fs[i].host_name = f->host_name;
        fs[i].detail = f->detail;
        fs[i].message = f->message;
        fs[i].evidence = f->evidence;
        fs[i].evidence_json = f->evidence_json;
        fs[i].waiver_reason = f->waiver ? f->waiver->reason : NULL;
        fs[i].waiver_expires = f->waiver ? f->waiver->expires_text : NULL;
    }
    for (size_t i = 0; i < nu; i++)
        us[i] = (struct unverified_scope){r->unverified[i].check->id, r->unverified[i].moref,
                                          r->unverified[i].reason};
    for (size_t i = 0; i < r->n_completed; i++)
        ids[i] = r->completed[i]->id;
    for (size_t i = 0; i < r->n_disabled; i++)
        ids[r->n_completed + i] = r->disabled[i]->id;
    *out = (struct evaluation){.findings = fs,
                               .n_findings = nf,
                               .completed = ids,
                               .n_completed = r->n_completed,
                               .disabled = ids + r->n_completed,
                               .n_disabled = r->n_disabled,
                               .unverified = us,
                               .n_unverified = nu,
                               .owned = block};
    return 0;
}

static void finding_free(struct chk_finding *f)
{
    free(f->object_type);
    free(f->object_moref);
    free(f->object_name);
    free(f->host_moref);
    free(f->host_name);
    free(f->detail);
    free(f->message);
    json_decref(f->evidence);
    free(f->evidence_json);
}

void chk_results_truncate(struct chk_results *r, size_t n)
{
    while (r->n > n)
        finding_free(&r->items[--r->n]);
}

void chk_results_free(struct chk_results *r)
{
    for (size_t i = 0; i < r->n; i++)
        finding_free(&r->items[i]);
    free(r->items);
    free(r->expired);
    free(r->completed);
    free(r->disabled);
    for (size_t i = 0; i < r->n_unverified; i++) {
        free(r->unverified[i].moref);
        free(r->unverified[i].reason);
    }
    free(r->unverified);
    memset(r, 0, sizeof(*r));
}

int chk_host_current(const struct est_host *h)
{
    const char *s = h->connection_state;

    return !s || strcmp(s, "connected") == 0;
}

/* ---- what could not be verified ------------------------------------------------------------ */

static int add_unverified(struct chk_results *r, const struct check *c, const char *moref,
                          const char *reason)
{
    struct chk_unverified *u = realloc(r->unverified, (r->n_unverified + 1) * sizeof(*u));

    if (!u)
        return -ENOMEM;
    r->unverified = u;
    u = &u[r->n_unverified];
    u->check = c;
    u->moref = dup_or_null(moref);
    u->reason = strdup(reason);
    if ((moref && !u->moref) || !u->reason) {
        free(u->moref);
        free(u->reason);
        return -ENOMEM;
    }
    r->n_unverified++;
    return 0;
}

/* The gap names of the inputs in enum chk_needs, as the collector records them. */
static const struct {
    unsigned need;
    const char *gap;
    const char *what; /* for the reason */
} gap_needs[] = {
    {CHK_NEEDS_ESXCLI, "esxcli", "esxcli"},
    {CHK_NEEDS_OPTIONS, "options", "the advanced options"},
    {CHK_NEEDS_ISCSI_BINDINGS, "iscsi-bindings", "the iSCSI port bindings"},
};

/* The staleness rule, one predicate per kind, for check c (only what it needs counts): a host
 * that is not connected, of which vCenter holds only its last known configuration, and an
 * inaccessible datastore, whose capacity figures in vCenter are stale. */
static int host_stale(const struct check *c, const struct est_host *h)
{
    return (c->needs & CHK_NEEDS_HOST) && !chk_host_current(h);
}

static int datastore_stale(const struct check *c, const struct est_datastore *d)
{
    return (c->needs & CHK_NEEDS_DATASTORE) && d->accessible == 0;
}

/* Records where check c could not judge e: hosts and datastores whose inputs it needs were
 * not read in the poll that made e. */
static int note_unverifiable(struct chk_results *r, const struct check *c, const struct estate *e)
{
    char reason[1024];
    unsigned host_needs = CHK_NEEDS_HOST;
    int rc = 0;

    for (size_t k = 0; k < sizeof(gap_needs) / sizeof(gap_needs[0]); k++)
        host_needs |= gap_needs[k].need;
    /* A check that reads nothing of a host's has nothing to miss there: the what-if runs its
     * checks once per datastore judged, and walking 1,000 hosts each time was most of it. */
    for (size_t i = 0; rc == 0 && (c->needs & host_needs) && i < e->n_hosts; i++) {
        const struct est_host *h = &e->hosts[i];
        if (host_stale(c, h)) {
            snprintf(reason, sizeof(reason),
                     "host %s is %s: vCenter holds only its last known configuration", h->name,
                     h->connection_state);
            rc = add_unverified(r, c, h->moref, reason);
            continue;
        }
        for (size_t k = 0; rc == 0 && k < sizeof(gap_needs) / sizeof(gap_needs[0]); k++) {
            const struct est_gap *g;
            if (!(c->needs & gap_needs[k].need) || !(g = est_gap(h, gap_needs[k].gap)))
                continue;
            snprintf(reason, sizeof(reason), "%s could not be read on host %s: %s",
                     gap_needs[k].what, h->name, g->error ? g->error : "unknown error");
            rc = add_unverified(r, c, h->moref, reason);
        }
    }
    for (size_t i = 0; rc == 0 && (c->needs & CHK_NEEDS_DATASTORE) && i < e->n_datastores; i++) {
        const struct est_datastore *d = &e->datastores[i];
        if (!datastore_stale(c, d))
            continue;
        snprintf(reason, sizeof(reason),
                 "datastore %s is inaccessible: its capacity figures in vCenter are stale",
                 d->name);
        rc = add_unverified(r, c, d->moref, reason);
    }
    return rc;
}

/* Whether finding f of check c stands on stale configuration: on a disconnected host, or
 * about an inaccessible datastore (host_stale(), datastore_stale()). */
static int stale(const struct check *c, const struct estate *e, const struct chk_finding *f)
{
    for (size_t i = 0; (c->needs & CHK_NEEDS_HOST) && f->host_moref && i < e->n_hosts; i++)
        if (host_stale(c, &e->hosts[i]) && strcmp(e->hosts[i].moref, f->host_moref) == 0)
            return 1;
    for (size_t i = 0; (c->needs & CHK_NEEDS_DATASTORE) && f->object_moref && i < e->n_datastores;
         i++)
        if (datastore_stale(c, &e->datastores[i]) &&
            strcmp(e->datastores[i].moref, f->object_moref) == 0)
            return 1;
    return 0;
}

/* Removes the findings from index first on that stand on stale configuration (stale()). */
static void drop_stale(struct chk_results *r, size_t first, const struct check *c,
                       const struct estate *e)
{
    size_t k = first, n_stale = 0;

    /* Most estates have no stale object at all: then no finding needs the search. */
    for (size_t i = 0; (c->needs & CHK_NEEDS_HOST) && i < e->n_hosts && !n_stale; i++)
        n_stale += host_stale(c, &e->hosts[i]);
    for (size_t i = 0; (c->needs & CHK_NEEDS_DATASTORE) && i < e->n_datastores && !n_stale; i++)
        n_stale += datastore_stale(c, &e->datastores[i]);
    if (!n_stale)
        return;

    for (size_t i = first; i < r->n; i++) {
        if (stale(c, e, &r->items[i]))
            finding_free(&r->items[i]);
        else
            r->items[k++] = r->items[i];
    }
    r->n = k;
}

static int add_check(const struct check ***list, size_t *n, const struct check *c)
{
    const struct check **l = realloc(*list, (*n + 1) * sizeof(*l));

    if (!l)
        return -ENOMEM;
    l[(*n)++] = c;
    *list = l;
    return 0;
}

/* The evidence trees of r's findings from the first-th on as JSON text (chk_results.compact):
 * append_finding() made each one text as it was emitted, so only a tree it could not write for
 * want of memory is left, tried once more here; one that still cannot be is kept (the store
 * takes either). */
static void compact(struct chk_results *r, size_t first)
{
    for (size_t k = first; k < r->n; k++) {
        struct chk_finding *f = &r->items[k];
        if (!f->evidence || !(f->evidence_json = json_dumps(f->evidence, FINDING_EVIDENCE_FLAGS)))
            continue;
        json_decref(f->evidence);
        f->evidence = NULL;
    }
}

/* Runs c and records what the run could and could not verify. Returns the check's error, if
 * any; *failed says whether it was the check (rather than bookkeeping) that failed. */
static int run_check(const struct chk_config *cfg, const struct check *c,
                     const struct chk_settings *s, const struct estate *e, int64_t now,
                     struct chk_results *out, int *failed)
{
    struct chk_ctx ctx = {
        .check = c, .settings = s, .estate = e, .now = now, .out = out, .cfg = cfg};
    size_t before = out->n;
    int r = c->run(&ctx, e), rr;

    *failed = r < 0;
    if (c->needs & (CHK_NEEDS_HOST | CHK_NEEDS_DATASTORE))
        drop_stale(out, before, c, e);
    if (out->compact)
        compact(out, before);
    if (r < 0) {
        char reason[512];
        snprintf(reason, sizeof(reason), "check %s failed: %s", c->id, vsl_strerror(r));
        rr = add_unverified(out, c, NULL, reason);
        return rr < 0 ? rr : r;
    }
    rr = note_unverifiable(out, c, e);
    return rr < 0 ? rr : add_check(&out->completed, &out->n_completed, c);
}

/* The registry index of check id, or chk_registry_len. */
static size_t registry_index(const char *id)
{
    size_t ci = 0;

    while (ci < chk_registry_len && strcmp(chk_registry[ci]->id, id))
        ci++;
    return ci;
}

const struct chk_settings *chk_config_settings(const struct chk_config *cfg, const char *check_id)
{
    size_t ci = registry_index(check_id);

    return ci < chk_registry_len ? &cfg->settings[ci] : NULL;
}

/* The value of parameter name of check id in cfg (its default when cfg is NULL). */
static double param_of(const struct chk_config *cfg, const char *check_id, const char *name)
{
    size_t ci = registry_index(check_id);
    const struct check *c = ci < chk_registry_len ? chk_registry[ci] : NULL;

    assert(c && "a parameter of a check that does not exist");
    for (size_t i = 0; c && c->params && c->params[i].name; i++)
        if (!strcmp(c->params[i].name, name))
            return cfg ? cfg->settings[ci].params[i] : c->params[i].dflt;
    assert(!"a parameter the check does not declare");
    return 0;
}

double chk_config_param(const struct chk_config *cfg, const char *check_id, const char *name)
{
    return param_of(cfg, check_id, name);
}

double chk_param_from(const struct chk_ctx *ctx, const char *check_id, const char *name)
{
    return param_of(ctx->cfg, check_id, name);
}

int chk_run_one(const struct check *c, const struct chk_settings *s, const struct estate *e,
                int64_t now, struct chk_results *out)
{
    struct chk_settings dflt;
    int failed;

    if (!s) {
        chk_settings_default(c, &dflt);
        s = &dflt;
    }
    return run_check(NULL, c, s, e, now, out, &failed);
}

/* A waiver's object pattern matches the object's name, or for a part of a host also "HOST
 * NAME" (e.g. "esx-lab-* naa.6006*"), which is how such findings were named before they
 * carried their host apart: waivers written then keep working. */
static int waiver_matches(const struct chk_waiver *w, const struct chk_finding *f)
{
    char both[1024];

    if (strcmp(w->check, f->check->id))
        return 0;
    if (w->vcenter && strcmp(w->vcenter, f->vcenter))
        return 0;
    if (fnmatch(w->object, f->object_name, 0) == 0)
        return 1;
    if (!f->host_name || f->object_moref)
        return 0;
    if ((size_t)snprintf(both, sizeof(both), "%s %s", f->host_name, f->object_name) >=
        sizeof(both))
        return 0;
    return fnmatch(w->object, both, 0) == 0;
}

static int note_expired(struct chk_results *r, const struct chk_waiver *w)
{
    for (size_t i = 0; i < r->n_expired; i++)
        if (r->expired[i] == w)
            return 0;
    const struct chk_waiver **e = realloc(r->expired, (r->n_expired + 1) * sizeof(*e));
    if (!e)
        return -ENOMEM;
    r->expired = e;
    r->expired[r->n_expired++] = w;
    return 0;
}

/* Sets f's waiver: the first of cfg's that covers it and has not expired (an expired one that
 * matched is noted for a hint). 0 or -ENOMEM. */
static int apply_waivers(const struct chk_config *cfg, struct chk_finding *f, int64_t now,
                         struct chk_results *out)
{
    int r = 0;

    for (size_t w = 0; w < cfg->n_waivers; w++) {
        const struct chk_waiver *wv = &cfg->waivers[w];
        if (!waiver_matches(wv, f))
            continue;
        if (wv->expires < now) {
            if (note_expired(out, wv) < 0)
                r = -ENOMEM;
            continue;
        }
        f->waiver = wv;
        break;
    }
    return r;
}

/* Whether c is among only[0..n] (every check is when only is NULL). */
static int chosen(const struct check *c, const struct check *const *only, size_t n)
{
    for (size_t i = 0; only && i < n; i++)
        if (only[i] == c)
            return 1;
    return !only;
}

int chk_run_all(const struct chk_config *cfg, const struct estate *e, int64_t now,
                struct chk_results *out, char *err, size_t errlen)
{
    return chk_run_some(cfg, NULL, 0, e, now, out, err, errlen);
}

/* The most threads one run of the checks takes, the caller's included. */
#define CHK_MAX_THREADS 8

/* One check of a run on several threads: its results apart until they are gathered. */
struct check_run {
    size_t index; /* in the registry */
    struct chk_results res;
    int r, failed;
};

struct check_pool {
    const struct chk_config *cfg;
    const struct estate *e;
    int64_t now;
    struct check_run *runs;
    size_t n;
    atomic_size_t next; /* the next run to take */
    atomic_llong cpu_ns; /* the CPU time of the threads started, besides the caller's */
};

/* Takes the pool's checks one at a time until none is left (each thread, the caller's too). */
static void *pool_work(void *arg)
{
    struct check_pool *p = arg;

    for (size_t i; (i = atomic_fetch_add(&p->next, 1)) < p->n;) {
        struct check_run *cr = &p->runs[i];
        cr->r = run_check(p->cfg, chk_registry[cr->index], &p->cfg->settings[cr->index], p->e,
                          p->now, &cr->res, &cr->failed);
    }
    return NULL;
}

static void *pool_thread(void *arg)
{
    struct check_pool *p = arg;
    struct timespec cpu;

    log_context_vcenter(p->e->vcenter);
    pool_work(p);
    log_context_vcenter(NULL);
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu) == 0)
        atomic_fetch_add(&p->cpu_ns, (long long)cpu.tv_sec * 1000000000LL + cpu.tv_nsec);
    return NULL;
}

/* Moves what one check's run found (its findings, its unverified scopes, its completion) to
 * the end of out, leaving cr->res empty. 0 or -ENOMEM (out is then as it was). */
static int gather(struct chk_results *out, struct check_run *cr)
{
    struct chk_results *from = &cr->res;

    if (out->n + from->n > out->cap) {
        size_t cap = out->cap * 2 > out->n + from->n ? out->cap * 2 : out->n + from->n;
        struct chk_finding *items = realloc(out->items, cap * sizeof(*items));
        if (!items)
            return -ENOMEM;
        out->items = items;
        out->cap = cap;
    }
    if (from->n_unverified) {
        struct chk_unverified *u = realloc(out->unverified, (out->n_unverified +
                                           from->n_unverified) * sizeof(*u));
        if (!u)
            return -ENOMEM;
        out->unverified = u;
    }
    if (from->n_completed && add_check(&out->completed, &out->n_completed, from->completed[0]) < 0)
        return -ENOMEM;
    if (from->n)
        memcpy(out->items + out->n, from->items, from->n * sizeof(*out->items));
    out->n += from->n;
    from->n = 0;
    if (from->n_unverified)
        memcpy(out->unverified + out->n_unverified, from->unverified,
               from->n_unverified * sizeof(*out->unverified));
    out->n_unverified += from->n_unverified;
    from->n_unverified = 0;
    return 0;
}

/* The CPUs this process may run on (its affinity: taskset, a cpuset, systemd's CPUAffinity=),
 * asked once. */
static size_t usable_cpus;

static void count_cpus(void)
{
    cpu_set_t set;

    usable_cpus = sched_getaffinity(0, sizeof(set), &set) == 0 ? (size_t)CPU_COUNT(&set) : 1;
}

#ifdef VSL_TEST_HOOKS
size_t chk_test_cpus, chk_test_threads_used;
#endif

/* How many threads a run of n checks takes: as many as asked, at most the CPUs usable, n and
 * CHK_MAX_THREADS; 1 (the caller) unless more were asked. */
static size_t pool_size(const struct chk_results *out, size_t n)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    size_t t = out->threads > 1 ? (size_t)out->threads : 1, cpus;

    if (t == 1 || n < 2)
        return 1;
    pthread_once(&once, count_cpus);
    cpus = usable_cpus;
#ifdef VSL_TEST_HOOKS
    if (chk_test_cpus)
        cpus = chk_test_cpus;
#endif
    if (t > cpus)
        t = cpus;
    if (t > CHK_MAX_THREADS)
        t = CHK_MAX_THREADS;
    return t < n ? t : n;
}


int chk_run_some(const struct chk_config *cfg, const struct check *const *only, size_t n_only,
                 const struct estate *e, int64_t now, struct chk_results *out, char *err,
                 size_t errlen)
{
    struct vsl_watch watch;
    size_t ran = 0, found = out->n, n_runs = 0;
    struct check_pool pool = {.cfg = cfg, .e = e, .now = now};
    pthread_t threads[CHK_MAX_THREADS];
    size_t started = 0;
    int first = 0;

    vsl_watch_start(&watch);
    /* The checks that run, each with results of its own when they run on several threads. */
    for (size_t i = 0; i < chk_registry_len; i++)
        n_runs += chosen(chk_registry[i], only, n_only) && cfg->settings[i].enabled;
    size_t want = pool_size(out, n_runs) - 1; /* threads besides the caller */
    if (want && (pool.runs = calloc(n_runs, sizeof(*pool.runs)))) {
        for (size_t i = 0; i < chk_registry_len; i++) {
            if (!chosen(chk_registry[i], only, n_only) || !cfg->settings[i].enabled)
                continue;
            struct check_run *cr = &pool.runs[pool.n++];
            cr->index = i;
            cr->res.compact = out->compact;
            cr->res.no_evidence = out->no_evidence;
        }
        atomic_init(&pool.next, 0);
        atomic_init(&pool.cpu_ns, 0);
        /* A thread that cannot start leaves its share to the others, the caller's at least. */
        while (started < want && pthread_create(&threads[started], NULL, pool_thread, &pool) == 0)
            started++;
        pool_work(&pool);
        for (size_t t = 0; t < started; t++)
            pthread_join(threads[t], NULL);
    }
    struct check_run *cr = pool.runs;
    for (size_t i = 0; i < chk_registry_len; i++) {
        const struct check *c = chk_registry[i];
        if (!chosen(c, only, n_only))
            continue;
        if (!cfg->settings[i].enabled) {
            if (add_check(&out->disabled, &out->n_disabled, c) < 0 && !first)
                first = -ENOMEM;
            continue;
        }
        size_t before = out->n;
        int failed, r;
        if (cr) {
            /* Ran on the pool: its results join the others' in the registry's order. */
            failed = cr->failed;
            r = cr->r;
            int g = gather(out, cr);
            chk_results_free(&cr->res);
            cr++;
            if (g < 0) {
                /* Its results lost: as a check that failed, its earlier findings are kept
                 * unverified (if even that cannot be noted, nothing it did is recorded as
                 * complete, so nothing of it is resolved either). */
                (void)add_unverified(out, c, NULL, "out of memory gathering its results");
                if (!first) {
                    first = g;
                    snprintf(err, errlen, "check %s failed on vCenter %s: %s", c->id,
                             e->vcenter, vsl_strerror(g));
                }
                continue;
            }
        } else {
            r = run_check(cfg, c, &cfg->settings[i], e, now, out, &failed);
        }
        ran++;
        if (r < 0) {
            if (!first) {
                first = r;
                if (failed)
                    snprintf(err, errlen, "check %s failed on vCenter %s: %s", c->id,
                             e->vcenter, vsl_strerror(r));
                else
                    snprintf(err, errlen, "vCenter %s: %s", e->vcenter, vsl_strerror(r));
            }
            if (!failed)
                continue;
        }
        for (size_t k = before; k < out->n; k++)
            if (apply_waivers(cfg, &out->items[k], now, out) < 0 && !first)
                first = -ENOMEM;
    }
    double wall, cpu;
    vsl_watch_read(&watch, &wall, &cpu);
    if (pool.runs)
        cpu += (double)atomic_load(&pool.cpu_ns) / 1e9;
    log_debug("checks: %zu checks ran over vCenter %s (%zu findings) on %zu thread(s) in %.3f s, "
              "CPU %.3f s",
              ran, e->vcenter, out->n - found, started + 1, wall, cpu);
    free(pool.runs);
#ifdef VSL_TEST_HOOKS
    chk_test_threads_used = started + 1;
#endif
    return first;
}

/* ---- checks from outside the registry (site rules) ------------------------------------------ */

int chk_add_finding(const struct chk_config *cfg, const struct check *c,
                    const struct chk_settings *s, const char *vcenter, const struct chk_emit *f,
                    const char *host_name, int64_t now, struct chk_results *out)
{
    struct chk_finding *added = NULL;
    char key[1024];

    /* An object without a moref (a part of a host) is known by its host and name. */
    snprintf(key, sizeof(key), "%s/%s", host_name ? host_name : "", f->object_name);
    int err = append_finding(out, c, vcenter, s, f, NULL, host_name,
                             f->object_moref ? f->object_moref : key, &added);
    if (err == 0)
        err = apply_waivers(cfg, added, now, out);
    return err;
}

int chk_add_outcome(struct chk_results *out, const struct check *c, enum chk_outcome outcome,
                    const char *reason)
{
    switch (outcome) {
    case CHK_COMPLETED:
        return add_check(&out->completed, &out->n_completed, c);
    case CHK_DISABLED:
        return add_check(&out->disabled, &out->n_disabled, c);
    case CHK_FAILED:
        break;
    }
    return add_unverified(out, c, NULL, reason);
}
