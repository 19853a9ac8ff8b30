/* A full poll's rows staged from a second thread: the sink hands each row over as a record in a
 * block and a writer thread binds and inserts the records into the staging tables, so that
 * parsing and decoding the next objects and inserting the last ones run on two cores. */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "db/db-private.h"
#include "util/err.h"

/* Rows go over in blocks, so that the threads meet once per block rather than once per row;
 * at most STAGE_BLOCKS are allocated, which bounds what is in flight (and the memory) when the
 * writer falls behind: the sink then waits for a block to come back. */
#define STAGE_BLOCK  (256 * 1024)
#define STAGE_BLOCKS 8

/* A record: the table (uint16), then per column a tag (uint8): STAGE_NULL; STAGE_INT and an
 * int64; STAGE_TEXT, a uint32 length and the bytes (no NUL). */
enum { STAGE_NULL, STAGE_INT, STAGE_TEXT };

struct stage_block {
    unsigned char *data; /* owned */
    size_t len, cap;
};

struct db_stager {
    struct db *db;       /* borrowed: its connection is the writer's until db_stager_sync() */
    const char *vcenter; /* borrowed from the snapshot */
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct stage_block blocks[STAGE_BLOCKS];
    /* Block indexes: those full and waiting for the writer (a ring from head), those free. */
    int full[STAGE_BLOCKS], spare[STAGE_BLOCKS];
    int head, nfull, nspare;
    int cur;     /* the block the sink fills (owned by the sink's side), -1 when none */
    int writing; /* the writer holds a block */
    int stop;
    int err; /* the writer's first error: later blocks are dropped, the sink is told */
};

/* Inserts every record of b (the writer's side; the connection is not used by anyone else). */
static int write_block(struct db_stager *s, const struct stage_block *b)
{
    const unsigned char *p = b->data, *end = b->data + b->len;
    const char *text[DB_MAX_COLS];
    int len[DB_MAX_COLS];
    int64_t num[DB_MAX_COLS];
    int r = 0;

    while (p < end && r == 0) {
        uint16_t t;
        memcpy(&t, p, sizeof(t));
        p += sizeof(t);
        assert(t < T_NTABLES);
        const struct db_table_def *d = &db_tables[t];
        for (int i = 0; i < d->ncols; i++) {
            unsigned char tag = *p++;
            text[i] = NULL;
            len[i] = -1;
            num[i] = VIM_UNKNOWN;
            if (tag == STAGE_INT) {
                memcpy(&num[i], p, sizeof(num[i]));
                p += sizeof(num[i]);
            } else if (tag == STAGE_TEXT) {
                uint32_t n;
                memcpy(&n, p, sizeof(n));
                p += sizeof(n);
                text[i] = (const char *)p;
                len[i] = (int)n;
                p += n;
            }
        }
        r = db_insert_values(s->db, (enum db_table)t, s->vcenter, text, len, num);
    }
    return r;
}

static void *writer(void *arg)
{
    struct db_stager *s = arg;

    pthread_mutex_lock(&s->lock);
    for (;;) {
        while (!s->nfull && !s->stop)
            pthread_cond_wait(&s->cond, &s->lock);
        if (!s->nfull)
            break;
        int b = s->full[s->head];
        s->head = (s->head + 1) % STAGE_BLOCKS;
        s->nfull--;
        s->writing = 1;
        int failed = s->err;
        pthread_mutex_unlock(&s->lock);
        int r = failed ? 0 : write_block(s, &s->blocks[b]);
        pthread_mutex_lock(&s->lock);
        if (r < 0 && !s->err)
            s->err = r;
        s->blocks[b].len = 0;
        s->spare[s->nspare++] = b;
        s->writing = 0;
        pthread_cond_broadcast(&s->cond);
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

int db_stager_start(struct db *db, const char *vcenter, struct db_stager **out)
{
    struct db_stager *s = calloc(1, sizeof(*s));
    int r = -ENOMEM;

    *out = NULL;
    if (!s)
        return -ENOMEM;
    s->db = db;
    s->vcenter = vcenter;
    s->cur = -1;
    for (int i = 0; i < STAGE_BLOCKS; i++)
        s->spare[s->nspare++] = i;
    if (pthread_mutex_init(&s->lock, NULL) != 0)
        goto fail_free;
    if (pthread_cond_init(&s->cond, NULL) != 0)
        goto fail_mutex;
    r = -pthread_create(&s->thread, NULL, writer, s);
    if (r < 0)
        goto fail_cond;
    *out = s;
    return 0;

fail_cond:
    pthread_cond_destroy(&s->cond);
fail_mutex:
    pthread_mutex_destroy(&s->lock);
fail_free:
    free(s);
    return r;
}

/* Hands the block being filled to the writer (the lock held). */
static void hand_over(struct db_stager *s)
{
    if (s->cur < 0)
        return;
    if (s->blocks[s->cur].len == 0) {
        s->spare[s->nspare++] = s->cur;
    } else {
        s->full[(s->head + s->nfull) % STAGE_BLOCKS] = s->cur;
        s->nfull++;
        pthread_cond_broadcast(&s->cond);
    }
    s->cur = -1;
}

/* A block with room for need bytes to fill, waiting for the writer to give one back when all
 * are in flight; the writer's error instead, if it had one. */
static int room(struct db_stager *s, size_t need)
{
    struct stage_block *b = s->cur >= 0 ? &s->blocks[s->cur] : NULL;
    int r = 0;

    if (b && b->cap - b->len >= need)
        return 0;
    pthread_mutex_lock(&s->lock);
    hand_over(s);
    while (!s->nspare && !s->err)
        pthread_cond_wait(&s->cond, &s->lock);
    r = s->err;
    if (r == 0)
        s->cur = s->spare[--s->nspare];
    pthread_mutex_unlock(&s->lock);
    if (r < 0)
        return r;
    b = &s->blocks[s->cur];
    /* A row larger than a block gets a block of its own size (its text is bounded by the
     * parser's limit on one object). */
    size_t cap = need > STAGE_BLOCK ? need : STAGE_BLOCK;
    if (b->cap < cap) {
        unsigned char *p = realloc(b->data, cap);
        if (!p)
            return -ENOMEM;
        b->data = p;
        b->cap = cap;
    }
    return 0;
}

int db_stager_put(struct db_stager *s, enum db_table t, const char *const *text,
                  const int64_t *num)
{
    const struct db_table_def *d = &db_tables[t];
    size_t need = sizeof(uint16_t);
    uint16_t t16 = (uint16_t)t;
    int r;

    for (int i = 0; i < d->ncols; i++) {
        if (text[i])
            need += 1 + sizeof(uint32_t) + strlen(text[i]);
        else
            need += 1 + (num[i] == VIM_UNKNOWN ? 0 : sizeof(int64_t));
    }
    r = room(s, need);
    if (r < 0)
        return r;
    struct stage_block *b = &s->blocks[s->cur];
    unsigned char *p = b->data + b->len;
    memcpy(p, &t16, sizeof(t16));
    p += sizeof(t16);
    for (int i = 0; i < d->ncols; i++) {
        if (text[i]) {
            uint32_t n = (uint32_t)strlen(text[i]);
            *p++ = STAGE_TEXT;
            memcpy(p, &n, sizeof(n));
            p += sizeof(n);
            memcpy(p, text[i], n);
            p += n;
        } else if (num[i] == VIM_UNKNOWN) {
            *p++ = STAGE_NULL;
        } else {
            *p++ = STAGE_INT;
            memcpy(p, &num[i], sizeof(num[i]));
            p += sizeof(num[i]);
        }
    }
    b->len = (size_t)(p - b->data);
    return 0;
}

/* Waits until the writer has inserted everything handed over: its error, or 0. */
static int drain(struct db_stager *s)
{
    int r;

    pthread_mutex_lock(&s->lock);
    hand_over(s);
    while (s->nfull || s->writing)
        pthread_cond_wait(&s->cond, &s->lock);
    r = s->err;
    pthread_mutex_unlock(&s->lock);
    return r;
}

int db_stager_stop(struct db_stager *s)
{
    int r;

    if (!s)
        return 0;
    r = drain(s);
    pthread_mutex_lock(&s->lock);
    s->stop = 1;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
    pthread_join(s->thread, NULL);
    pthread_cond_destroy(&s->cond);
    pthread_mutex_destroy(&s->lock);
    for (int i = 0; i < STAGE_BLOCKS; i++)
        free(s->blocks[i].data);
    free(s);
    return r;
}
