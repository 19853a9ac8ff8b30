/* One evaluation of one vCenter: load its stored snapshot, run every enabled check, record the
 * findings' history. Shared by `vslint check` and the daemon's poll loop. */
#include <stdio.h>
#include <string.h>

#include "checks/engine.h"
#include "daemon/evaluate.h"
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

/* Runs the checks over vc's stored snapshot and records the findings. */
int vsl_evaluate(struct db *db, const struct vsl_config *cfg, const char *vcenter, int64_t now_ms,
                 json_t *expired, struct vsl_buf *errors)
{
    struct estate *e = NULL;
    struct chk_results res = {0};
    struct evaluation ev;
    char err[512] = "";
    int r = db_estate_load(db, vcenter, &e);

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
    est_keep_pools(e, configured_array, (void *)cfg);
    r = chk_run_all(&cfg->checks, e, now_ms / 1000, &res, err, sizeof(err));
    if (r < 0)
        vsl_buf_line(errors, "%s", err);
    /* The engine's results as the store takes them: db/ knows no check. */
    int w = chk_evaluation(&res, &ev);
    if (w == 0)
        w = db_findings_record(db, vcenter, &ev, now_ms);
    evaluation_free(&ev);
    if (w < 0) {
        vsl_buf_line(errors, "vcenter %s: cannot record findings: %s", vcenter,
                       vsl_strerror(w));
        r = r < 0 ? r : w;
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
    est_free(e);
    return r;
}
