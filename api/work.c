/* The long handlers' own threads: a request that builds or judges the shared estate (placement,
 * the gate, the plan) waits in a bounded queue for one of a few threads of vslint's own while its
 * connection is suspended, so that libmicrohttpd's threads keep serving every other connection. */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "api/api-private.h"
#include "util/worker.h"

struct api_work {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct vsl_worker *threads; /* owned, nthreads of them */
    size_t nthreads;
    /* Waiting requests, a ring of cap (borrowed: each is a suspended connection's, which
     * libmicrohttpd keeps until it is resumed). Under mu, like everything below. */
    struct api_req **ring;
    size_t cap, head, n;
    size_t running;
    int stopping; /* api_work_stop() began: nothing more is taken */
    uint64_t refused;
    uint64_t abandoned; /* skipped: the client had left while they waited */
};

/* The request that has waited longest, off the ring; under mu, with one waiting. */
static struct api_req *take(struct api_work *w)
{
    struct api_req *r = w->ring[w->head];

    w->head = (w->head + 1) % w->cap;
    w->n--;
    return r;
}

static void *work_main(void *arg)
{
    struct api_work *w = arg;

    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->stopping && w->n == 0)
            pthread_cond_wait(&w->cv, &w->mu);
        if (w->stopping)
            break; /* what still waits is answered by api_work_free() */
        struct api_req *r = take(w);
        w->running++;
        pthread_mutex_unlock(&w->mu);
        /* A client that left (or timed out and retries) would otherwise hold a thread for
         * the whole of a request nobody reads, and every live client behind it waits or is
         * refused 503. Checked here, not while it runs: a running handler is not cut. */
        int gone = api_deferred_client_gone(r);
        if (gone)
            api_deferred_drop(r);
        else
            api_deferred_run(r); /* r is libmicrohttpd's again once either returns */
        pthread_mutex_lock(&w->mu);
        w->running--;
        w->abandoned += (uint64_t)gone;
    }
    pthread_mutex_unlock(&w->mu);
    return NULL; /* the thread's database closes with it (api_db(): a thread-specific key) */
}

int api_work_new(unsigned threads, unsigned queue, struct api_work **out)
{
    struct api_work *w = calloc(1, sizeof(*w));
    int r = -ENOMEM;

    assert(threads > 0 && queue > 0 && out);
    *out = NULL;
    if (!w)
        return -ENOMEM;
    w->cap = queue;
    w->ring = calloc(queue, sizeof(*w->ring));
    w->threads = calloc(threads, sizeof(*w->threads));
    if (!w->ring || !w->threads || pthread_mutex_init(&w->mu, NULL) != 0)
        goto fail_alloc;
    if (pthread_cond_init(&w->cv, NULL) != 0) {
        pthread_mutex_destroy(&w->mu);
        goto fail_alloc;
    }
    for (; w->nthreads < threads; w->nthreads++)
        if ((r = vsl_worker_start(&w->threads[w->nthreads], work_main, w)) < 0) {
            api_work_free(w);
            return r;
        }
    *out = w;
    return 0;

fail_alloc:
    free(w->ring);
    free(w->threads);
    free(w);
    return r;
}

/* How many of the waiting requests are from r's address; under mu. */
static size_t waiting_from(const struct api_work *w, const struct api_req *r)
{
    size_t k = 0;

    if (!r->has_addr)
        return 0;
    for (size_t i = 0; i < w->n; i++) {
        const struct api_req *q = w->ring[(w->head + i) % w->cap];
        k += q->has_addr && !memcmp(q->addr, r->addr, sizeof(r->addr));
    }
    return k;
}

int api_work_submit(struct api_work *w, struct api_req *r)
{
    int rc = 0;

    pthread_mutex_lock(&w->mu);
    if (w->stopping || w->n == w->cap) {
        w->refused++;
        rc = w->stopping ? -ESHUTDOWN : -EAGAIN;
    } else if (waiting_from(w, r) >= API_WORK_PER_ADDRESS) {
        w->refused++;
        rc = -EUSERS;
    } else {
        /* Suspended before a thread can see it: the thread resumes it when done, perhaps
         * before the access handler that calls this has returned (libmicrohttpd allows it). */
        MHD_suspend_connection(r->conn);
        w->ring[(w->head + w->n) % w->cap] = r;
        w->n++;
        pthread_cond_signal(&w->cv);
    }
    pthread_mutex_unlock(&w->mu);
    return rc;
}

void api_work_counts(struct api_work *w, uint64_t *waiting, uint64_t *running, uint64_t *refused,
                     uint64_t *abandoned)
{
    *waiting = *running = *refused = *abandoned = 0;
    if (!w)
        return;
    pthread_mutex_lock(&w->mu);
    *waiting = w->n;
    *running = w->running;
    *refused = w->refused;
    *abandoned = w->abandoned;
    pthread_mutex_unlock(&w->mu);
}

void api_work_stop(struct api_work *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->mu);
    w->stopping = 1;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    /* Each thread finishes the request it runs, and answers it; those that never started are
     * answered 503 here, so that no connection stays suspended when libmicrohttpd stops. */
    for (size_t i = 0; i < w->nthreads; i++)
        vsl_worker_join(&w->threads[i]);
    /* stopping refuses every submit now, so nothing joins the ring; the counts are still read
     * (/metrics, api_work_counts()) and refused counted (api_work_submit()) on
     * libmicrohttpd's threads: under mu. Each is answered outside it, as the threads do. */
    for (;;) {
        pthread_mutex_lock(&w->mu);
        if (w->n == 0) {
            pthread_mutex_unlock(&w->mu);
            break;
        }
        struct api_req *r = take(w);
        w->refused++;
        pthread_mutex_unlock(&w->mu);
        api_deferred_cancel(r);
    }
}

void api_work_free(struct api_work *w)
{
    if (!w)
        return;
    api_work_stop(w); /* a no-op when stopped */
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    free(w->threads);
    free(w->ring);
    free(w);
}
