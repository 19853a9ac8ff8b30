/* One evaluation of one vCenter: load its stored snapshot, run every enabled check, record the
 * findings' history. Shared by `vslint check` and the daemon's poll loop. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <errno.h>
#include <stdlib.h>

#include "checks/engine.h"
#include "checks/runway.h"
#include "daemon/evaluate.h"
#include "daemon/site.h"
#include "db/capacity.h"
#include "db/findings.h"
#include "util/err.h"

/* Whether array is an [array NAME] of the configuration: a removed one's last snapshot is
 * still stored, and must not judge pools nobody asked about any more. */
static int configured_array(const char *array, void *ctx)
{
    const struct vsl_config *cfg = ctx;

    for (size_t i = 0; i < cfg->n_arrays; i++)
        if (!strcmp(cfg->arrays[i].name, array))
            return 1;
    return 0;
}

void vsl_keep_configured_pools(struct estate *e, const struct vsl_config *cfg)
{
    est_keep_pools(e, configured_array, (void *)cfg);
}

/* One object's runway as the store takes it; json is malloc'd into *json. */
static int runway_row(const struct est_capacity_point *h, size_t n, const char *moref,
                      const char *kind, const struct chk_runway_settings *s, int64_t now_ms,
                      struct db_runway_row *row, char **json)
{
    struct chk_runway rw;
    int r = chk_runway_estimate(h, n, now_ms, s->window_days, s->warn_free_pct, s->crit_free_pct,
                                &rw);
    json_t *o = r < 0 ? NULL : chk_runway_json(&rw);

    *json = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (!*json)
        return -ENOMEM;
    *row = (struct db_runway_row){.moref = moref, .kind = kind, .json = *json,
                                  .warn_free_pct = s->warn_free_pct,
                                  .crit_free_pct = s->crit_free_pct};
    return 0;
}

/* The runway of every datastore and datastore cluster of e, with the configured thresholds,
 * for the API to read (it runs no estimate itself). */
static int record_runway(struct db *db, const struct vsl_config *cfg, const struct estate *e,
                         int64_t now_ms)
{
    struct chk_runway_settings s;
    size_t n = e->n_datastores + e->n_pods, k = 0;
    struct db_runway_row *rows = calloc(n ? n : 1, sizeof(*rows));
    char **json = calloc(n ? n : 1, sizeof(*json));
    int r = rows && json ? 0 : -ENOMEM;

    chk_runway_settings(&cfg->checks, &s);
    for (size_t i = 0; r == 0 && i < e->n_datastores; i++, k++) {
        const struct est_datastore *d = &e->datastores[i];
        r = runway_row(d->history, d->n_history, d->moref, "datastore", &s, now_ms, &rows[k],
                       &json[k]);
    }
    for (size_t i = 0; r == 0 && i < e->n_pods; i++, k++) {
        const struct est_pod *p = &e->pods[i];
        r = runway_row(p->history, p->n_history, p->moref, "storage_pod", &s, now_ms, &rows[k],
                       &json[k]);
    }
    if (r == 0)
        r = db_runway_record(db, e->vcenter, now_ms, rows, n);
    for (size_t i = 0; json && i < n; i++)
        free(json[i]);
    free(json);
    free(rows);
    return r;
}

/* Runs the checks over vc's stored snapshot and records the findings. */
int vsl_evaluate(struct db *db, const struct vsl_config *cfg, const char *vcenter, int64_t now_ms,
                 json_t *expired, struct vsl_buf *errors)
{
    return vsl_evaluate_ex(db, cfg, NULL, vcenter, now_ms, expired, errors, NULL, NULL);
}

int vsl_evaluate_ex(struct db *db, const struct vsl_config *cfg, const struct vsl_site *site,
                    const char *vcenter, int64_t now_ms, json_t *expired,
                    struct vsl_buf *errors, json_t *rule_errors, int *record_err)
{
    struct vsl_site own = {0};
    struct estate *e = NULL;
    struct chk_results res = {0};
    struct evaluation ev;
    char err[512] = "";
    int r = db_estate_load(db, vcenter, &e);

    if (record_err)
        *record_err = r == -VSL_ENOTFOUND ? 0 : r;
    if (r == -VSL_ENOTFOUND) {
        vsl_buf_line(errors, "vcenter %s: no inventory stored yet (it has never been polled "
                               "successfully)", vcenter);
        return r;
    }
    if (r < 0) {
        vsl_buf_line(errors, "vcenter %s: cannot load the inventory: %s", vcenter,
                       vsl_strerror(r));
        return r;
    }
    vsl_keep_configured_pools(e, cfg);
    res.compact = 1; /* the findings are only recorded */
    res.threads = 2;
    r = chk_run_all(&cfg->checks, e, now_ms / 1000, &res, err, sizeof(err));
    if (r < 0)
        vsl_buf_line(errors, "%s", err);
    /* The site rules read the stored snapshot through the views, after the checks. */
    if (!site && vsl_site_init(cfg, &own) == 0)
        site = &own;
    if (site)
        vsl_site_run(site, cfg, e->vcenter, now_ms / 1000, &res, errors, rule_errors);
    /* The engine's results as the store takes them: db/ knows no check. */
    int w = chk_evaluation(&res, &ev);
    if (w == 0)
        w = db_findings_record(db, vcenter, &ev, now_ms);
    evaluation_free(&ev);
    if (record_err)
        *record_err = w;
    if (w == -EBUSY)
        vsl_buf_line(errors, "vcenter %s: cannot record findings: the database is locked by "
                             "another connection or process; its findings are as last recorded",
                     vcenter);
    else if (w < 0)
        vsl_buf_line(errors, "vcenter %s: cannot record findings: %s", vcenter,
                       vsl_strerror(w));
    if (w < 0)
        r = r < 0 ? r : w;
    /* The runway is recorded unless the database is locked (the findings said so already). */
    if (w != -EBUSY) {
        w = record_runway(db, cfg, e, now_ms);
        if (w < 0) {
            vsl_buf_line(errors, "vcenter %s: cannot record the capacity runway: %s", vcenter,
                         vsl_strerror(w));
            r = r < 0 ? r : w;
        }
    }
    for (size_t i = 0; i < res.n_expired; i++) {
        const struct chk_waiver *wv = res.expired[i];
        char note[1024];
        snprintf(note, sizeof(note),
                 "the waiver of %s for '%s' (%s:%d) expired on %s and no longer applies",
                 wv->check, wv->object, cfg->path, wv->line, wv->expires_text);
        if (expired)
            json_array_append_new(expired, json_string(note));
    }
    chk_results_free(&res);
    vsl_site_free(&own);
    est_free(e);
    return r;
}
