/* Check pool-subscription: array pools whose thin LUNs promise more than the pool holds, past a
 * settable ratio (default 150 %, as thin-overcommit does for datastores). */
#include <stdio.h>

#include "checks/check.h"

static const struct chk_param params[] = {
    {"max_subscribed_pct", 150, 1, 100000, "%",
     "warning when the LUNs' subscribed size exceeds this share of the pool's total size"},
    {0},
};

static int run(struct chk_ctx *ctx, const struct estate *e)
{
    const double max = chk_param(ctx, "max_subscribed_pct");

    for (size_t i = 0; i < e->n_pools; i++) {
        const struct est_pool *p = &e->pools[i];
        char msg[1024], sub[32], to[32];

        /* Thick LUNs reserve their space: only thin ones can overcommit a pool. */
        if (p->n_thin_luns <= 0 || p->size_total <= 0 || p->size_subscribed < 0)
            continue;
        double pct = (double)p->size_subscribed * 100.0 / (double)p->size_total;
        if ((double)p->size_subscribed * 100.0 <= max * (double)p->size_total)
            continue;
        snprintf(msg, sizeof(msg),
                 "pool %s of array %s is subscribed %.0f %% (%s of LUNs on %s), over %g %%: the "
                 "thin LUNs behind its datastores can ask for more than it holds",
                 p->name ? p->name : p->id, p->array, pct,
                 chk_size(p->size_subscribed, sub, sizeof(sub)),
                 chk_size(p->size_total, to, sizeof(to)), max);
        /* The pool's evidence names every datastore it backs (thousands under one pool); a
         * what-if judge, one per datastore in a placement, would throw it away. */
        json_t *ev = chk_wants_evidence(ctx) ? chk_ev_pool(e, p) : json_object();
        ev = chk_ev_set(ev, "size_subscribed_bytes", json_integer(p->size_subscribed));
        ev = chk_ev_set(ev, "subscribed_pct", json_real(pct));
        ev = chk_ev_set(ev, "max_subscribed_pct", json_real(max));
        ev = chk_ev_set(ev, "thin_luns", json_integer(p->n_thin_luns));
        ev = chk_ev_set(ev, "luns", json_integer(p->n_luns));
        int rc = chk_emit_pool(ctx, p, SEV_WARNING, msg, ev);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* The seeds' words this check rests on, verbatim (tests/unit/test_registry.c). */
static const struct chk_source sources[] = {
    {CHK_SEED_UNITY, "§1.1.1", CHK_QUOTE_POOL_CAPACITY},
    {CHK_SEED_YELLOW_BRICKS, "Performance: Thin Provisioning", CHK_QUOTE_OVERCOMMIT},
    {0},
};

const struct check chk_pool_subscription = {
    .id = "pool-subscription",
    .title = "Array pool oversubscribed by thin LUNs",
    .severity = SEV_WARNING,
    .rationale =
        "Thin LUNs take pool space as they are written; when their sizes add up to much more "
        "than the pool, a few busy datastores can fill it and stop every LUN in it, and the "
        "Unity guide wants a pool always to keep free capacity (§1.1.1). The guide gives no "
        "subscription limit: the ratio, 150 % by default, is vslint's. Judged for pools of "
        "configured arrays that back a datastore and hold thin LUNs: sizeSubscribed over "
        "sizeTotal above the ratio.",
    .reference = "000_5bd48962a767ee9e.txt §1.1.1 (storage pool capacity); "
                 "003_c6252f56ada835be.txt (Performance: Thin Provisioning: overcommitment)",
    .sources = sources,
    .own =
        "The seeds give no subscription limit: the guide's pool rule is about free capacity, and "
        "the post asks to watch overcommitment without a number. The limit, thin LUNs subscribing "
        "more than 150 % of the pool's size (max_subscribed_pct), and the warning are vslint's: "
        "past it, a pool cannot hold what its LUNs may write, and a few busy datastores can fill "
        "it.",
    .remediation =
        "Expand the pool (Unisphere: Storage > Pools > Expand Pool), move thin LUNs to another "
        "pool, or convert the LUNs that must not run out to thick; watch the pool with "
        "pool-free-space meanwhile.",
    .params = params,
    .run = run,
};
