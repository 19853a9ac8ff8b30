/* Rendered answers kept while the data they were rendered from has not changed: a generation
 * that moves whenever anyone commits to the database, and a small table of answers keyed on it. */
#include <stdlib.h>
#include <string.h>

#include "api/api-private.h"

/* One rendered text: the bytes of an answer (or a part of one) as of generation gen. */
struct entry {
    char *key;     /* owned: the request's path and parameters (api_cache_key()) */
    uint64_t gen;
    char *body;    /* owned */
    size_t len;
    char *gz;      /* owned: body gzip-compressed, NULL until a client took it */
    size_t gzlen;
    uint64_t hash; /* of body: the ETag */
    uint64_t used; /* the cache's clock at the last lookup: the least recent goes first */
};

struct api_cache {
    /* The generation: the connection that watches for changes and the count of those seen. */
    pthread_mutex_t watch_mu;
    struct db *watch;
    uint64_t generation;
    pthread_mutex_t mu; /* the entries */
    struct entry e[API_CACHE_ENTRIES];
    size_t n;
    size_t bytes; /* of every body and gz held */
    uint64_t clock;
};

static void drop(struct api_cache *c, size_t i)
{
    c->bytes -= c->e[i].len + c->e[i].gzlen;
    free(c->e[i].key);
    free(c->e[i].body);
    free(c->e[i].gz);
    c->e[i] = c->e[--c->n];
}

/* The server's cache, made on first use (api_start() knows nothing of it); NULL when out of
 * memory, and then nothing is cached. */
static struct api_cache *cache_of(struct api_server *s)
{
    struct api_cache *c;

    pthread_mutex_lock(&s->db_mu);
    if (!s->cache && (c = calloc(1, sizeof(*c)))) {
        if (pthread_mutex_init(&c->mu, NULL) == 0 && pthread_mutex_init(&c->watch_mu, NULL) == 0)
            s->cache = c;
        else
            free(c); /* (a mutex that did init holds nothing to free on Linux) */
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
    db_close(c->watch);
    pthread_mutex_destroy(&c->mu);
    pthread_mutex_destroy(&c->watch_mu);
    free(c);
}

/* PRAGMA data_version on one connection kept for it says whether anyone (a poll of this
 * daemon, a `vslint check` beside it) has committed since it was last asked: then the
 * generation moves on, once per change whichever thread notices it, and every answer rendered
 * before is old. (Each thread's own connection would see the same commit at different times,
 * and each would move the generation again.) A request takes its generation before it reads
 * through its thread's connection, so what it renders is at least as new as that generation;
 * data newer than it is harmless: the next request moves past it. */
uint64_t api_generation(struct api_req *r)
{
    struct api_cache *c = cache_of(r->srv);
    uint64_t gen = 0;
    char *msg = NULL;
    int changed;

    if (!c)
        return 0;
    pthread_mutex_lock(&c->watch_mu);
    if (!c->watch && db_open_reader(r->srv->db_path, &c->watch, &msg) < 0)
        c->watch = NULL; /* api_db() has said why; nothing is cached until it opens */
    free(msg);
    if (c->watch) {
        changed = db_changed(c->watch);
        if (changed < 0) { /* cannot tell: cache nothing, and ask again on a fresh connection */
            db_close(c->watch);
            c->watch = NULL;
        } else {
            c->generation += changed;
            gen = c->generation;
        }
    }
    pthread_mutex_unlock(&c->watch_mu);
    return gen;
}

int api_cache_get(struct api_req *r, const char *key, uint64_t gen, int want_gz, char **body,
                  size_t *len, char **gz, size_t *gzlen, uint64_t *hash)
{
    struct api_cache *c = cache_of(r->srv);
    int hit = 0;

    *body = *gz = NULL;
    *len = *gzlen = 0;
    if (!c || !gen)
        return 0;
    pthread_mutex_lock(&c->mu);
    for (size_t i = 0; i < c->n; i++) {
        struct entry *e = &c->e[i];
        if (e->gen != gen || strcmp(e->key, key))
            continue;
        /* The compressed bytes when those are wanted and made, else the plain ones. */
        if (want_gz && e->gz)
            *gz = malloc(e->gzlen);
        else
            *body = malloc(e->len + 1);
        if (*gz) {
            memcpy(*gz, e->gz, e->gzlen);
            *gzlen = e->gzlen;
        } else if (*body) {
            memcpy(*body, e->body, e->len);
            (*body)[e->len] = '\0';
        }
        *len = e->len;
        *hash = e->hash;
        e->used = ++c->clock;
        hit = *gz || *body;
        break;
    }
    pthread_mutex_unlock(&c->mu);
    return hit;
}

void api_cache_put(struct api_req *r, const char *key, uint64_t gen, const char *body, size_t len,
                   uint64_t hash, const char *gz, size_t gzlen)
{
    struct api_cache *c = cache_of(r->srv);
    struct entry e = {.gen = gen, .len = len, .hash = hash};
    size_t i;

    if (!c || !gen || len + gzlen > API_CACHE_BYTES / 4)
        return; /* an answer that would push out most others is not kept */
    pthread_mutex_lock(&c->mu);
    for (i = 0; i < c->n; i++) {
        if (strcmp(c->e[i].key, key))
            continue;
        if (c->e[i].gen == gen && c->e[i].len == len && c->e[i].hash == hash) {
            /* Another thread rendered the same: add the compressed bytes if it had none. */
            if (gz && !c->e[i].gz && (c->e[i].gz = malloc(gzlen))) {
                memcpy(c->e[i].gz, gz, gzlen);
                c->e[i].gzlen = gzlen;
                c->bytes += gzlen;
            }
            goto out;
        }
        if (c->e[i].gen > gen)
            goto out; /* rendered from newer data already */
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
            if (c->e[i].used < c->e[lru].used)
                lru = i;
        drop(c, lru);
    }
    e.key = strdup(key);
    e.body = malloc(len + 1);
    e.gz = gz ? malloc(gzlen) : NULL;
    if (!e.key || !e.body || (gz && !e.gz)) {
        free(e.key);
        free(e.body);
        free(e.gz);
        goto out;
    }
    memcpy(e.body, body, len);
    e.body[len] = '\0';
    if (gz) {
        memcpy(e.gz, gz, gzlen);
        e.gzlen = gzlen;
    }
    e.used = ++c->clock;
    c->e[c->n++] = e;
    c->bytes += len + e.gzlen;
out:
    pthread_mutex_unlock(&c->mu);
}
