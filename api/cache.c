/* Rendered answers kept while the data they were rendered from has not changed: a generation
 * that moves whenever a commit changes what answers say (not when a round only confirms its
 * snapshot), and a small table of answers keyed on it,
 * shared by reference (a hit copies nothing) and rendered once however many ask at once. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/api-private.h"
#include "db/changes.h"

/* One rendered text: the bytes of an answer (or a part of one) as of generation gen. */
struct entry {
    char *key; /* owned: the request's path and parameters (api_cache_key()) */
    uint64_t gen;
    struct api_text *body; /* a reference */
    struct api_text *gz;   /* a reference: body gzip-compressed, NULL until a client took it */
    uint64_t hash;         /* of body: the ETag */
    /* The cache's clock at the last lookup: the least recent goes first. Written by readers
     * under the read lock, so atomic. */
    _Atomic uint64_t used;
};

/* A key at a generation that one request is rendering: others asking for it wait for that
 * answer instead of rendering the same (single-flight). */
struct flight {
    char *key; /* owned */
    uint64_t gen;
    const struct api_req *owner; /* compared only: the request that renders */
};

#define FLIGHTS 16 /* past this many renders at once, a request renders without a claim */

struct api_cache {
    /* The generations: the connection that watches for changes, the commits seen, and the
     * changes among them to what answers say (the content stamp and configuration generation
     * last seen, each of which moves `generation` on). */
    pthread_mutex_t watch_mu;
    struct db *watch;
    uint64_t generation, commits;
    uint64_t stamp, cfg_gen;
    int stamped; /* stamp was read */
    /* The entries: lookups share the lock (a hit takes references and leaves), changes take
     * it alone. */
    pthread_rwlock_t lock;
    struct entry e[API_CACHE_ENTRIES];
    size_t n;
    size_t bytes; /* of every body and gz held */
    _Atomic uint64_t clock;
    /* The renders in flight. Lock order: fl_mu, then lock. */
    pthread_mutex_t fl_mu;
    pthread_cond_t fl_done; /* a flight ended */
    struct flight fl[FLIGHTS];
    size_t n_fl;
    /* For /metrics: lookups answered from the cache, after waiting for another's render,
     * and renders (misses). */
    _Atomic uint64_t hits, waits, renders;
};

/* ---- shared texts -------------------------------------------------------------------------- */

struct api_text *api_text_new(const char *p, size_t len)
{
    struct api_text *t = malloc(sizeof(*t) + len + 1);

    if (!t)
        return NULL;
    atomic_init(&t->refs, 1);
    t->len = len;
    memcpy(t->data, p, len);
    t->data[len] = '\0';
    return t;
}

struct api_text *api_text_ref(struct api_text *t)
{
    if (t)
        atomic_fetch_add_explicit(&t->refs, 1, memory_order_relaxed);
    return t;
}

void api_text_unref(struct api_text *t)
{
    /* The last reference frees: release so that every holder's reads happen before, acquire
     * so that the free happens after them. */
    if (t && atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) == 1)
        free(t);
}

/* ---- the table ----------------------------------------------------------------------------- */

/* Under the write lock. The entry's references go; holders keep theirs. */
static void drop(struct api_cache *c, size_t i)
{
    c->bytes -= c->e[i].body->len + (c->e[i].gz ? c->e[i].gz->len : 0);
    free(c->e[i].key);
    api_text_unref(c->e[i].body);
    api_text_unref(c->e[i].gz);
    c->e[i].key = c->e[--c->n].key;
    c->e[i].gen = c->e[c->n].gen;
    c->e[i].body = c->e[c->n].body;
    c->e[i].gz = c->e[c->n].gz;
    c->e[i].hash = c->e[c->n].hash;
    atomic_store_explicit(&c->e[i].used, atomic_load_explicit(&c->e[c->n].used,
                                                              memory_order_relaxed),
                          memory_order_relaxed);
}

/* The server's cache, made on first use (api_start() knows nothing of it); NULL when out of
 * memory, and then nothing is cached. */
static struct api_cache *cache_of(struct api_server *s)
{
    struct api_cache *c;

    pthread_mutex_lock(&s->db_mu);
    if (!s->cache && (c = calloc(1, sizeof(*c)))) {
        if (pthread_mutex_init(&c->watch_mu, NULL) == 0 &&
            pthread_rwlock_init(&c->lock, NULL) == 0 && pthread_mutex_init(&c->fl_mu, NULL) == 0 &&
            pthread_cond_init(&c->fl_done, NULL) == 0)
            s->cache = c;
        else
            free(c); /* (what did init holds nothing to free on Linux) */
    }
    c = s->cache;
    pthread_mutex_unlock(&s->db_mu);
    return c;
}

void api_cache_free(struct api_cache *c)
{
    if (!c)
        return;
    while (c->n)
        drop(c, c->n - 1);
    for (size_t i = 0; i < c->n_fl; i++)
        free(c->fl[i].key);
    db_close(c->watch);
    pthread_rwlock_destroy(&c->lock);
    pthread_mutex_destroy(&c->watch_mu);
    pthread_mutex_destroy(&c->fl_mu);
    pthread_cond_destroy(&c->fl_done);
    free(c);
}

/* PRAGMA data_version on one connection kept for it says whether anyone (a poll of this
 * daemon, a `vslint check` beside it) has committed since it was last asked; then the content
 * stamp (db_content_stamp(), a few rows of small tables) says whether the commit changed a
 * snapshot or the findings, or only confirmed a snapshot, as every quiet incremental round
 * does every few seconds: only the former, or a new configuration, moves the generation on,
 * once per change whichever thread notices it. (Each thread's own connection would see the
 * same commit at different times, and each would move the generation again.) A request takes
 * its generation before it reads through its thread's connection, so what it renders is at
 * least as new as that generation; data newer than it is harmless: the next request moves
 * past it. 0 and 0 when it cannot tell. */
void api_generations(struct api_req *r, uint64_t *content, uint64_t *commits)
{
    struct api_cache *c = cache_of(r->srv);
    uint64_t cfg = r->srv->hooks.config_generation
                       ? r->srv->hooks.config_generation(r->srv->hooks.ctx)
                       : 0;
    uint64_t stamp = 0;
    char *msg = NULL;
    int changed;

    *content = *commits = 0;
    if (!c)
        return;
    pthread_mutex_lock(&c->watch_mu);
    if (!c->watch && db_open_reader(r->srv->db_path, &c->watch, &msg) < 0)
        c->watch = NULL; /* api_db() has said why; nothing is cached until it opens */
    free(msg);
    if (!c->watch)
        goto out;
    changed = db_changed(c->watch);
    if (changed > 0 && db_content_stamp(c->watch, &stamp) < 0)
        changed = -1;
    if (changed < 0) { /* cannot tell: cache nothing, and ask again on a fresh connection */
        db_close(c->watch);
        c->watch = NULL;
        goto out;
    }
    if (changed) {
        c->commits++;
        if (!c->stamped || stamp != c->stamp)
            c->generation++;
        c->stamp = stamp;
        c->stamped = 1;
    }
    if (cfg != c->cfg_gen) {
        c->cfg_gen = cfg;
        c->generation++;
    }
    *content = c->generation;
    *commits = c->commits;
out:
    pthread_mutex_unlock(&c->watch_mu);
}

uint64_t api_generation(struct api_req *r)
{
    uint64_t content, commits;

    api_generations(r, &content, &commits);
    return content;
}

/* Under the read (or write) lock: the entry of key at gen, or NULL. */
static struct entry *find(struct api_cache *c, const char *key, uint64_t gen)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->e[i].gen == gen && !strcmp(c->e[i].key, key))
            return &c->e[i];
    return NULL;
}

/* A hit: references to what the entry holds, under the read lock. */
static int lookup(struct api_cache *c, const char *key, uint64_t gen, int want_gz,
                  struct api_text **body, struct api_text **gz, uint64_t *hash)
{
    struct entry *e;

    pthread_rwlock_rdlock(&c->lock);
    e = find(c, key, gen);
    if (e) {
        *body = api_text_ref(e->body);
        *gz = want_gz ? api_text_ref(e->gz) : NULL;
        *hash = e->hash;
        atomic_store_explicit(&e->used,
                              atomic_fetch_add_explicit(&c->clock, 1, memory_order_relaxed) + 1,
                              memory_order_relaxed);
    }
    pthread_rwlock_unlock(&c->lock);
    return e != NULL;
}

/* Under fl_mu: the flight of key at gen, or -1. */
static long flight_of(struct api_cache *c, const char *key, uint64_t gen)
{
    for (size_t i = 0; i < c->n_fl; i++)
        if (c->fl[i].gen == gen && !strcmp(c->fl[i].key, key))
            return (long)i;
    return -1;
}

/* Under fl_mu: ends flight i, and wakes who waits for it. */
static void land(struct api_cache *c, size_t i)
{
    free(c->fl[i].key);
    c->fl[i] = c->fl[--c->n_fl];
    pthread_cond_broadcast(&c->fl_done);
}

#ifdef VSL_TEST_HOOKS
/* Test builds only (meson -Dtest_hooks): VSLINT_DEBUG_RENDER_DELAY_MS=N makes every render
 * that holds a claim take N ms more, so that a test's concurrent requests surely overlap it. */
static void render_delay(void)
{
    const char *v = getenv("VSLINT_DEBUG_RENDER_DELAY_MS");
    long ms = v ? strtol(v, NULL, 10) : 0;
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

    while (ms > 0 && nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}
#endif

int api_cache_get(struct api_req *r, const char *key, uint64_t gen, int want_gz,
                  struct api_text **body, struct api_text **gz, uint64_t *hash)
{
    struct api_cache *c = cache_of(r->srv);
    int waited = 0, claimed = 0;

    *body = *gz = NULL;
    *hash = 0;
    if (!c || !gen)
        return 0;
    if (lookup(c, key, gen, want_gz, body, gz, hash)) {
        atomic_fetch_add_explicit(&c->hits, 1, memory_order_relaxed);
        return 1;
    }
    /* A miss. One request renders; the others wait for its answer. A request that itself
     * holds a claim never waits (two that each wait for the other's would wait forever), and
     * a request waits once: a render that kept nothing (too big, out of memory) is not waited
     * for again. */
    pthread_mutex_lock(&c->fl_mu);
    for (;;) {
        if (lookup(c, key, gen, want_gz, body, gz, hash))
            break;
        if (flight_of(c, key, gen) < 0 || r->claims || waited) {
            if (!r->claims && flight_of(c, key, gen) < 0 && c->n_fl < FLIGHTS &&
                (c->fl[c->n_fl].key = strdup(key))) {
                c->fl[c->n_fl].gen = gen;
                c->fl[c->n_fl++].owner = r;
                r->claims++;
                claimed = 1;
            }
            break;
        }
        pthread_cond_wait(&c->fl_done, &c->fl_mu);
        /* fl_done is signalled when any flight lands: the wait is over only when this key's
         * flight has, else another key's landing (or a spurious wake-up) would send this
         * request rendering beside the one it waits for. */
        waited = flight_of(c, key, gen) < 0;
    }
    pthread_mutex_unlock(&c->fl_mu);
    if (*body) {
        atomic_fetch_add_explicit(waited ? &c->waits : &c->hits, 1, memory_order_relaxed);
        return 1;
    }
    atomic_fetch_add_explicit(&c->renders, 1, memory_order_relaxed);
#ifdef VSL_TEST_HOOKS
    if (claimed)
        render_delay();
#else
    (void)claimed;
#endif
    return 0;
}

void api_cache_put(struct api_req *r, const char *key, uint64_t gen, const char *body, size_t len,
                   uint64_t hash, const char *gz, size_t gzlen)
{
    struct api_cache *c = cache_of(r->srv);
    struct entry *e;
    struct api_text *tb = NULL, *tz = NULL;
    char *k = NULL;
    size_t i;

    if (!c || !gen)
        return;
    if (len + gzlen > API_CACHE_BYTES / 4)
        goto land; /* an answer that would push out most others is not kept */
    /* Copied outside the lock: the render's own buffers stay the caller's. */
    tb = api_text_new(body, len);
    tz = gz ? api_text_new(gz, gzlen) : NULL;
    k = strdup(key);
    if (!tb || (gz && !tz) || !k)
        goto land;
    pthread_rwlock_wrlock(&c->lock);
    for (i = 0; i < c->n; i++) {
        if (strcmp(c->e[i].key, key))
            continue;
        e = &c->e[i];
        if (e->gen == gen && e->body->len == len && e->hash == hash) {
            /* Another request rendered the same: add the compressed bytes if it had none. */
            if (tz && !e->gz) {
                e->gz = tz;
                tz = NULL;
                c->bytes += gzlen;
            }
            goto unlock;
        }
        if (e->gen > gen)
            goto unlock; /* rendered from newer data already */
        drop(c, i);
        break;
    }
    /* Answers of older generations are never served again; then the least recently used. */
    for (i = 0; i < c->n;)
        if (c->e[i].gen < gen)
            drop(c, i);
        else
            i++;
    while (c->n && (c->n == API_CACHE_ENTRIES || c->bytes + len + gzlen > API_CACHE_BYTES)) {
        size_t lru = 0;
        for (i = 1; i < c->n; i++)
            if (atomic_load_explicit(&c->e[i].used, memory_order_relaxed) <
                atomic_load_explicit(&c->e[lru].used, memory_order_relaxed))
                lru = i;
        drop(c, lru);
    }
    e = &c->e[c->n++];
    e->key = k;
    e->gen = gen;
    e->body = tb;
    e->gz = tz;
    e->hash = hash;
    atomic_store_explicit(&e->used, atomic_fetch_add_explicit(&c->clock, 1, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    c->bytes += len + gzlen;
    k = NULL;
    tb = tz = NULL;
unlock:
    pthread_rwlock_unlock(&c->lock);
land:
    free(k);
    api_text_unref(tb);
    api_text_unref(tz);
    /* The answer is in (or could not be kept): whoever waits for it looks again. */
    pthread_mutex_lock(&c->fl_mu);
    for (i = 0; i < c->n_fl; i++)
        if (c->fl[i].owner == r && c->fl[i].gen == gen && !strcmp(c->fl[i].key, key)) {
            land(c, i);
            r->claims--;
            break;
        }
    pthread_mutex_unlock(&c->fl_mu);
}

void api_cache_release(struct api_req *r)
{
    struct api_cache *c;

    if (!r->claims)
        return;
    c = cache_of(r->srv);
    pthread_mutex_lock(&c->fl_mu);
    for (size_t i = 0; i < c->n_fl;)
        if (c->fl[i].owner == r)
            land(c, i);
        else
            i++;
    r->claims = 0;
    pthread_mutex_unlock(&c->fl_mu);
}

void api_cache_counts(struct api_server *s, uint64_t *hits, uint64_t *waits, uint64_t *renders)
{
    struct api_cache *c = cache_of(s);

    *hits = c ? atomic_load(&c->hits) : 0;
    *waits = c ? atomic_load(&c->waits) : 0;
    *renders = c ? atomic_load(&c->renders) : 0;
}
