/* The estate the what-if requests read (POST /api/v1/gate, GET /api/v1/placement): every
 * configured vCenter's snapshot loaded once per generation of the database, shared read-only
 * by reference, built by one request while the others that want it wait (single-flight). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/api-private.h"
#include "checks/whatif.h"
#include "db/findings.h"
#include "util/err.h"
#include "util/log.h"

/* The shared estate of one server. Lock order: mu alone (the hooks and the database are
 * called without it, but for watch, which only mu guards). */
struct api_estates {
    pthread_mutex_t mu;
    pthread_cond_t built; /* a build finished (published or failed) */
    struct db *watch;     /* its own connection: PRAGMA data_version sees every other commit */
    uint64_t generation;  /* moves on when a commit changed the stored snapshots */
    uint64_t stamp;       /* db_snapshots_stamp() as of generation */
    struct api_snap *cur; /* the newest published, holding one reference of its own; or NULL */
    int building;         /* a request is building; the others wait on built */
    uint64_t ticket;      /* builds finished: a waiter knows its build is over when it moves */
    uint64_t failed_ticket; /* the ticket a failed build finished as, with its error */
    int failed_rc;
    uint64_t builds; /* snapshots built and published, for /metrics */
    long debug_build_ms; /* -Dtest_hooks: VSLINT_DEBUG_ESTATE_BUILD_MS, a slow build */
};

static void snap_free(struct api_snap *s)
{
    if (!s)
        return;
    for (size_t i = 0; s->sites && i < s->n; i++) {
        chk_results_free(&s->sites[i].base);
        chk_lun_index_free(s->sites[i].base_luns);
        chk_ds_vms_free(s->sites[i].ds_vms);
        est_free(s->sites[i].estate);
    }
    free(s->sites);
    chk_config_free(&s->cfg);
    free(s);
}

/* The server's shared estate, made on first use as the answer cache is; NULL when out of
 * memory. */
static struct api_estates *estates_of(struct api_server *srv)
{
    struct api_estates *x;

    pthread_mutex_lock(&srv->db_mu);
    if (!srv->estates && (x = calloc(1, sizeof(*x)))) {
#ifdef VSL_TEST_HOOKS
        const char *ms = getenv("VSLINT_DEBUG_ESTATE_BUILD_MS");
        x->debug_build_ms = ms ? strtol(ms, NULL, 10) : 0;
#endif
        if (pthread_mutex_init(&x->mu, NULL) == 0 && pthread_cond_init(&x->built, NULL) == 0)
            srv->estates = x;
        else
            free(x); /* (a mutex or condition that did init holds nothing to free on Linux) */
    }
    x = srv->estates;
    pthread_mutex_unlock(&srv->db_mu);
    return x;
}

void api_estates_free(struct api_estates *x)
{
    if (!x)
        return;
    /* After MHD_stop_daemon(): no handler runs, so the published snapshot's own reference is
     * its last. */
    snap_free(x->cur);
    db_close(x->watch);
    pthread_cond_destroy(&x->built);
    pthread_mutex_destroy(&x->mu);
    free(x);
}

uint64_t api_estate_builds(struct api_server *srv)
{
    struct api_estates *x = estates_of(srv);
    uint64_t n = 0;

    if (x) {
        pthread_mutex_lock(&x->mu);
        n = x->builds;
        pthread_mutex_unlock(&x->mu);
    }
    return n;
}

/* The generation of the stored snapshots as of now, under x->mu: 0 when it cannot tell (then
 * nothing is shared: every request builds its own). A commit by anyone moves PRAGMA
 * data_version on; only one that changed a snapshot (db_snapshots_stamp()) moves the
 * generation: the findings, history pruning and digests written between polls do not make
 * every what-if load the estate again. A snapshot built from reads made after the generation
 * was taken is at least as new as that generation. */
static uint64_t generation(struct api_estates *x, const char *db_path)
{
    char *msg = NULL;
    uint64_t stamp;
    int changed;

    if (!x->watch && db_open_reader(db_path, &x->watch, &msg) < 0)
        x->watch = NULL; /* the request's own open says why */
    free(msg);
    if (!x->watch)
        return 0;
    changed = db_changed(x->watch);
    if (changed > 0 && db_snapshots_stamp(x->watch, &stamp) < 0)
        changed = -1;
    if (changed < 0) { /* ask again on a fresh connection next time */
        db_close(x->watch);
        x->watch = NULL;
        return 0;
    }
    if (changed && (!x->generation || stamp != x->stamp)) {
        log_debug("http: the stored snapshots changed (stamp %016llx, was %016llx): the "
                  "what-if estate is loaded again when next asked",
                  (unsigned long long)stamp, (unsigned long long)x->stamp);
        x->stamp = stamp;
        x->generation++;
    }
    return x->generation;
}

static uint64_t config_generation(struct api_server *srv)
{
    return srv->hooks.config_generation ? srv->hooks.config_generation(srv->hooks.ctx) : 0;
}

/* Loads the snapshot of every configured vCenter on this thread's connection, scoped to the
 * running configuration, with that configuration's check settings. 0 or a negative error,
 * with what failed in what (at least 128 bytes). */
static int build(struct api_req *r, uint64_t gen, uint64_t cfg_gen, struct api_snap **out,
                 const char **what)
{
    struct api_server *srv = r->srv;
    struct api_vcenter_status *st = NULL;
    struct api_snap *s = calloc(1, sizeof(*s));
    struct db *db = api_db(r);
    size_t n = 0;
    int rc;

    *out = NULL;
    *what = "loading the snapshots";
    if (!s)
        return -ENOMEM;
    s->gen = gen;
    s->cfg_gen = cfg_gen;
    if (!db) {
        *what = "opening the database";
        rc = -VSL_EDB;
        goto out;
    }
    /* The settings before the estates: a reload in between leaves a snapshot tagged with the
     * older configuration generation, built again by the next request, never the reverse. */
    rc = srv->hooks.check_config ? srv->hooks.check_config(srv->hooks.ctx, &s->cfg)
                                 : chk_config_init(&s->cfg);
    if (rc == 0)
        rc = api_status(r, &st, &n);
    if (rc == 0 && !(s->sites = calloc(n + 1, sizeof(*s->sites))))
        rc = -ENOMEM;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        struct api_snap_site *site = &s->sites[s->n];
        snprintf(site->name, sizeof(site->name), "%s", st[i].name);
        site->interval_s = st[i].interval_s;
        rc = db_estate_load(db, st[i].name, &site->estate);
        if (rc == -VSL_ENOTFOUND)
            rc = 0; /* never polled successfully: listed without an estate */
        else if (rc == 0 && srv->hooks.scope_estate)
            srv->hooks.scope_estate(srv->hooks.ctx, site->estate);
        if (rc == 0)
            s->n++;
        if (rc == 0 && site->estate) {
            /* The run over the snapshot as it is, once for every request: a what-if reads its
             * findings on the target's LUNs (checks/whatif.c). */
            char err[256];
            site->base_ok = chk_run_all(&s->cfg, site->estate, time(NULL), &site->base, err,
                                        sizeof(err)) == 0;
            chk_site_base_trim(&site->base); /* the rest would only take memory */
            /* Its index too (after the trim: it points into base's items). Out of memory
             * leaves it NULL, and each request makes its own. */
            if (site->base_ok && chk_lun_index_make(site->estate, &site->base,
                                                    &site->base_luns) < 0)
                site->base_luns = NULL;
            /* And which VMs name each datastore, a walk of every VM that every request made. */
            if (chk_ds_vms_make(site->estate, &site->ds_vms) < 0)
                site->ds_vms = NULL;
        }
    }
out:
    free(st);
    if (rc < 0)
        snap_free(s);
    else
        *out = s;
    return rc;
}

int api_snap_get(struct api_req *r, struct api_snap **out, const char **what)
{
    struct api_estates *x = estates_of(r->srv);
    struct api_snap *s = NULL, *old = NULL;
    uint64_t gen, cfg_gen, ticket;
    int rc;

    *out = NULL;
    *what = "loading the snapshots";
    if (!x)
        return -ENOMEM;
    cfg_gen = config_generation(r->srv);
    pthread_mutex_lock(&x->mu);
    gen = generation(x, r->srv->db_path);
    for (;;) {
        /* A snapshot at least as new as the database when this request asked. */
        if (gen && x->cur && x->cur->gen >= gen && x->cur->cfg_gen >= cfg_gen) {
            x->cur->refs++;
            *out = x->cur;
            pthread_mutex_unlock(&x->mu);
            return 0;
        }
        if (!gen || !x->building)
            break;
        ticket = x->ticket;
        while (x->building && x->ticket == ticket)
            pthread_cond_wait(&x->built, &x->mu);
        if (x->failed_ticket == ticket + 1 && x->failed_rc < 0) {
            /* The build this request waited for failed: it says so rather than try again
             * at once, as every waiter would. */
            rc = x->failed_rc;
            pthread_mutex_unlock(&x->mu);
            return rc;
        }
    }
    if (gen) {
        x->building = 1;
        /* The old snapshot is no use to anyone arriving from now on: its own reference goes,
         * and it is freed when its last reader drops it, before the new one is read if it
         * has none (the peak holds one estate, not two). */
        old = x->cur;
        x->cur = NULL;
        if (old && --old->refs > 0)
            old = NULL;
        /* Tagged with the newest generation seen: the reads come after it. */
        gen = x->generation;
    }
    pthread_mutex_unlock(&x->mu);
    snap_free(old);

#ifdef VSL_TEST_HOOKS
    if (x->debug_build_ms > 0) { /* the tests' concurrent requests arrive during the build */
        struct timespec ts = {x->debug_build_ms / 1000, (x->debug_build_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
#endif
    struct vsl_watch w;
    double wall, cpu;
    vsl_watch_start(&w);
    rc = build(r, gen, cfg_gen, &s, what);
    vsl_watch_read(&w, &wall, &cpu);
    log_debug("http: the what-if estate of database generation %llu %s in %.3f s, CPU %.3f s",
              (unsigned long long)gen, rc == 0 ? "built" : "failed", wall, cpu);
    if (!gen) { /* not shared: this request's alone */
        if (rc == 0)
            s->refs = 1;
        *out = s;
        return rc;
    }
    pthread_mutex_lock(&x->mu);
    x->building = 0;
    x->ticket++;
    if (rc == 0) {
        s->refs = 2; /* the server's, and this request's */
        x->cur = s;
        x->builds++;
        *out = s;
    } else {
        x->failed_ticket = x->ticket;
        x->failed_rc = rc;
    }
    pthread_cond_broadcast(&x->built);
    pthread_mutex_unlock(&x->mu);
    return rc;
}

void api_snap_put(struct api_req *r, struct api_snap *s)
{
    struct api_estates *x;
    unsigned left;

    if (!s)
        return;
    if (!s->gen) { /* built for one request alone */
        snap_free(s);
        return;
    }
    x = estates_of(r->srv); /* made already: s came from it */
    pthread_mutex_lock(&x->mu);
    left = --s->refs;
    pthread_mutex_unlock(&x->mu);
    if (left == 0)
        snap_free(s);
}
