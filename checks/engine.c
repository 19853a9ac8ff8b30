/* The check engine: runs each enabled check over an estate, applies severity overrides and
 * waivers, and fingerprints every finding so its history can be followed across polls. */
#include <assert.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks/engine.h"
#include "util/err.h"

struct chk_ctx {
    const struct check *check;
    const struct chk_settings *settings;
    const struct estate *estate;
    int64_t now;
    struct chk_results *out;
    const struct chk_config *cfg; /* the whole configuration, NULL in chk_run_one */
};

static const char *const severity_names[] = {"info", "warning", "critical"};

const char *chk_severity_name(enum chk_severity s)
{
    return (unsigned)s < 3 ? severity_names[s] : "unknown";
}

int chk_severity_parse(const char *s, enum chk_severity *out)
{
    for (int i = 0; i < 3; i++) {
        if (!strcmp(s, severity_names[i])) {
            *out = (enum chk_severity)i;
            return 0;
        }
    }
    return -EINVAL;
}

double chk_param(const struct chk_ctx *ctx, const char *name)
{
    const struct chk_param *p = ctx->check->params;
    for (size_t i = 0; p && p[i].name; i++)
        if (!strcmp(p[i].name, name))
            return ctx->settings->params[i];
    assert(!"a check asked for a parameter it does not declare");
    return 0;
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

int chk_emit(struct chk_ctx *ctx, const struct chk_emit *f)
{
    struct chk_results *r = ctx->out;
    int err = 0;

    assert(f->object_moref && f->object_name && f->message);
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 64;
        struct chk_finding *items = realloc(r->items, cap * sizeof(*items));
        if (!items) {
            json_decref(f->evidence);
            return -ENOMEM;
        }
        r->items = items;
        r->cap = cap;
    }
    struct chk_finding *out = &r->items[r->n];
    memset(out, 0, sizeof(*out));
    out->check = ctx->check;
    out->vcenter = ctx->estate->vcenter;
    out->severity = ctx->settings->severity_override >= 0
                        ? (enum chk_severity)ctx->settings->severity_override
                        : f->severity;
    out->object_type = dup_or_null(f->object_type);
    out->object_moref = dup_or_null(f->object_moref);
    out->object_name = dup_or_null(f->object_name);
    out->detail = dup_or_null(f->detail);
    out->message = dup_or_null(f->message);
    out->evidence = f->evidence ? f->evidence : json_object();
    if (!out->object_moref || !out->object_name || !out->message || !out->evidence ||
        (f->object_type && !out->object_type) || (f->detail && !out->detail))
        err = -ENOMEM;
    chk_fingerprint(ctx->check->id, ctx->estate->vcenter, f->object_moref, f->detail,
                    out->fingerprint);
    r->n++; /* counted even on ENOMEM so chk_results_free releases what was copied */
    return err;
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

static void finding_free(struct chk_finding *f)
{
    free(f->object_type);
    free(f->object_moref);
    free(f->object_name);
    free(f->detail);
    free(f->message);
    json_decref(f->evidence);
}

void chk_results_free(struct chk_results *r)
{
    for (size_t i = 0; i < r->n; i++)
        finding_free(&r->items[i]);
    free(r->items);
    free(r->expired);
    memset(r, 0, sizeof(*r));
}

static int run_check(const struct chk_config *cfg, const struct check *c,
                     const struct chk_settings *s, const struct estate *e, int64_t now,
                     struct chk_results *out)
{
    struct chk_ctx ctx = {
        .check = c, .settings = s, .estate = e, .now = now, .out = out, .cfg = cfg};
    return c->run(&ctx, e);
}

double chk_param_from(const struct chk_ctx *ctx, const char *check_id, const char *name)
{
    const struct check *c = NULL;
    size_t ci = 0;

    for (; ci < chk_registry_len; ci++) {
        if (!strcmp(chk_registry[ci]->id, check_id)) {
            c = chk_registry[ci];
            break;
        }
    }
    assert(c && "a check asked for the parameter of a check that does not exist");
    for (size_t i = 0; c && c->params && c->params[i].name; i++)
        if (!strcmp(c->params[i].name, name))
            return ctx->cfg ? ctx->cfg->settings[ci].params[i] : c->params[i].dflt;
    assert(!"a check asked for a parameter another check does not declare");
    return 0;
}

int chk_run_one(const struct check *c, const struct chk_settings *s, const struct estate *e,
                int64_t now, struct chk_results *out)
{
    struct chk_settings dflt;
    if (!s) {
        chk_settings_default(c, &dflt);
        s = &dflt;
    }
    return run_check(NULL, c, s, e, now, out);
}

static int waiver_matches(const struct chk_waiver *w, const struct chk_finding *f)
{
    if (strcmp(w->check, f->check->id))
        return 0;
    if (w->vcenter && strcmp(w->vcenter, f->vcenter))
        return 0;
    return fnmatch(w->object, f->object_name, 0) == 0;
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

int chk_run_all(const struct chk_config *cfg, const struct estate *e, int64_t now,
                struct chk_results *out, char *err, size_t errlen)
{
    int first = 0;

    for (size_t i = 0; i < chk_registry_len; i++) {
        const struct check *c = chk_registry[i];
        if (!cfg->settings[i].enabled)
            continue;
        size_t before = out->n;
        int r = run_check(cfg, c, &cfg->settings[i], e, now, out);
        if (r < 0) {
            if (!first) {
                first = r;
                snprintf(err, errlen, "check %s failed on vCenter %s: %s", c->id, e->vcenter,
                         vsl_strerror(r));
            }
            continue;
        }
        for (size_t k = before; k < out->n; k++) {
            struct chk_finding *f = &out->items[k];
            for (size_t w = 0; w < cfg->n_waivers; w++) {
                const struct chk_waiver *wv = &cfg->waivers[w];
                if (!waiver_matches(wv, f))
                    continue;
                if (wv->expires < now) {
                    if (note_expired(out, wv) < 0 && !first)
                        first = -ENOMEM;
                    continue;
                }
                f->waiver = wv;
                break;
            }
        }
    }
    return first;
}
