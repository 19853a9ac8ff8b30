/* A full poll's rows staged from a second thread: the sink hands each row over as a record in a
 * block and a writer thread binds and inserts the records into the staging tables, so that
 * parsing and decoding the next objects and inserting the last ones run on two cores. */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db-private.h"
#include "util/err.h"
#include "util/log.h"

/* Rows go over in blocks, so that the threads meet once per block rather than once per row;
 * at most STAGE_BLOCKS are allocated, which bounds what is in flight (and the memory) when the
 * writer falls behind: the sink then waits for a block to come back. A row larger than a block
 * gets a block of its own size, given back to the allocator as soon as the writer is done with
 * it, so the blocks hold at most STAGE_BLOCKS x STAGE_BLOCK bytes outside such a row's way
 * through, and STAGE_BLOCKS x the largest row in flight at worst (db_stager_memory()). */
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
    /* The writer's first error: later blocks are dropped, and the sink's next put returns it
     * (failed, read without the lock, is err once errmsg is written: the poll stops at the
     * next row, not at the next block). errmsg names the table, the row and SQLite's words. */
    int err;
    _Atomic int failed;
    char errmsg[256];
    int64_t rows; /* rows inserted so far (the writer's) */
#ifdef VSL_TEST_HOOKS
    int64_t fail_row; /* VSLINT_DEBUG_STAGE_FAIL_ROW: this row fails as a full disk would */
#endif
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
        const char *why = NULL;
#ifdef VSL_TEST_HOOKS
        if (s->fail_row > 0 && s->rows + 1 == s->fail_row) {
            r = db_fail(NULL, SQLITE_FULL, d->name);
            why = sqlite3_errstr(SQLITE_FULL);
        }
#endif
        if (!why)
            r = db_insert_values(s->db, (enum db_table)t, s->vcenter, text, len, num);
        if (r < 0) {
            /* Only the writer uses the connection: SQLite's message is this insert's. */
            pthread_mutex_lock(&s->lock);
            snprintf(s->errmsg, sizeof(s->errmsg), "cannot stage row %lld of the poll (%s): %s",
                     (long long)s->rows + 1, d->name, why ? why : sqlite3_errmsg(s->db->h));
            pthread_mutex_unlock(&s->lock);
            log_debug("vcenter %s: db writer: %s", s->vcenter, s->errmsg);
        } else {
            s->rows++;
        }
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
        if (r < 0 && !s->err) {
            s->err = r;
            atomic_store_explicit(&s->failed, r, memory_order_release);
        }
        s->blocks[b].len = 0;
        if (s->blocks[b].cap > STAGE_BLOCK) {
            /* Grown for an oversized row: back to nothing, room() makes it again. */
            free(s->blocks[b].data);
            s->blocks[b].data = NULL;
            s->blocks[b].cap = 0;
        }
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
#ifdef VSL_TEST_HOOKS
    const char *fail = getenv("VSLINT_DEBUG_STAGE_FAIL_ROW");
    s->fail_row = fail ? strtoll(fail, NULL, 10) : 0;
#endif
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
    int r = atomic_load_explicit(&s->failed, memory_order_acquire);

    if (r < 0)
        return r;
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

const char *db_stager_error(struct db_stager *s)
{
    /* errmsg is written once, before failed is set, and never again. */
    return atomic_load_explicit(&s->failed, memory_order_acquire) < 0 && s->errmsg[0] ? s->errmsg
                                                                                      : NULL;
}

size_t db_stager_memory(struct db_stager *s)
{
    size_t n = 0;

    pthread_mutex_lock(&s->lock);
    for (int i = 0; i < STAGE_BLOCKS; i++)
        n += s->blocks[i].cap;
    pthread_mutex_unlock(&s->lock);
    return n;
}

int db_stager_stop(struct db_stager *s, char *why, size_t len)
{
    int r;

    if (!s)
        return 0;
    r = drain(s);
    if (r < 0 && why && db_stager_error(s))
        snprintf(why, len, "%s", db_stager_error(s));
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
