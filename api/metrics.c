/* /metrics in the Prometheus text exposition format 0.0.4: open findings by check and
 * severity, the score, the database's size, each vCenter's last poll, and datastore capacity and
 * free space. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "api/api-private.h"
#include "checks/check.h"
#include "db/pages.h"
#include "db/findings.h"
#include "db/prune.h"
#include "util/err.h"
#include "util/heap.h"
#include "util/log.h"

#define MAX_METRICS (8 << 20) /* 200 datastores take a few tens of KiB */

/* Label values escape backslash, double quote and newline, as the format requires. */
static int label(struct vsl_buf *b, const char *v)
{
    int rc = 0;

    for (const char *p = v ? v : ""; *p && rc == 0; p++) {
        if (*p == '\\')
            rc = vsl_buf_addstr(b, "\\\\");
        else if (*p == '"')
            rc = vsl_buf_addstr(b, "\\\"");
        else if (*p == '\n')
            rc = vsl_buf_addstr(b, "\\n");
        else
            rc = vsl_buf_add(b, p, 1);
    }
    return rc;
}

static int head(struct vsl_buf *b, const char *name, const char *help)
{
    return vsl_buf_printf(b, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}

/* One sample, NAME{KEY="VALUE",...} NUMBER: labels are KEY, VALUE pairs ending in a NULL key
 * (NULL itself: none), their values escaped; number is formatted already. */
static int sample(struct vsl_buf *b, const char *name, const char *const *labels,
                  const char *number)
{
    int rc = vsl_buf_addstr(b, name);

    for (size_t i = 0; rc == 0 && labels && labels[i]; i += 2) {
        rc = vsl_buf_printf(b, "%s%s=\"", i ? "," : "{", labels[i]);
        if (rc == 0)
            rc = label(b, labels[i + 1]);
        if (rc == 0)
            rc = vsl_buf_addstr(b, labels[i + 2] ? "\"" : "\"}");
    }
    if (rc == 0)
        rc = vsl_buf_printf(b, " %s\n", number);
    return rc;
}

/* A sample of an integer value. */
static int sample_int(struct vsl_buf *b, const char *name, const char *const *labels,
                      long long v)
{
    char number[32];

    snprintf(number, sizeof(number), "%lld", v);
    return sample(b, name, labels, number);
}

/* The site rules that failed in the daemon's last evaluation, each its own sample by id and
 * file (a rule file that did not load has no id: "" then), and the count, which is 0 with
 * no failure (an alert reads it). */
static int site_rule_errors(struct api_req *r, struct vsl_buf *b)
{
    json_t *site = NULL, *errors = NULL, *e;
    size_t i;
    int rc = api_site_rules(r, &site, &errors);

    if (rc == 0)
        rc = head(b, "vslint_site_rule_errors",
                  "Site rules that failed in the last evaluation (a broken file, a refused "
                  "operation, the time or row limit): their findings are kept, unverified.");
    if (rc == 0)
        rc = sample_int(b, "vslint_site_rule_errors", NULL, (long long)json_array_size(errors));
    if (rc == 0)
        rc = head(b, "vslint_site_rule_failed", "1 for each site rule that failed in the last "
                                                "evaluation, by rule id and file.");
    json_array_foreach(errors, i, e) {
        const char *id = json_string_value(json_object_get(e, "id"));
        const char *labels[] = {"rule", id ? id : "", "file",
                                json_string_value(json_object_get(e, "file")), NULL};
        if (rc == 0 && labels[3])
            rc = sample_int(b, "vslint_site_rule_failed", labels, 1);
    }
    json_decref(site);
    json_decref(errors);
    return rc;
}

/* How the answer cache's lookups went since the start: "cached" at once, "waited" for another
 * request that was rendering the same answer (single-flight), "rendered" by the request
 * itself. A dashboard's N concurrent cold requests for one answer render it once. */
static int cache_answers(struct api_req *r, struct vsl_buf *b)
{
    uint64_t n[3];
    static const char *const how[] = {"cached", "waited", "rendered"};
    int rc = vsl_buf_addstr(b, "# HELP vslint_api_answers_total Lookups of the API's answer "
                               "cache since the start, by how they were answered.\n"
                               "# TYPE vslint_api_answers_total counter\n");

    api_cache_counts(r->srv, &n[0], &n[1], &n[2]);
    for (size_t i = 0; rc == 0 && i < 3; i++) {
        const char *labels[] = {"how", how[i], NULL};
        rc = sample_int(b, "vslint_api_answers_total", labels, (long long)n[i]);
    }
    return rc;
}

static int findings(struct vsl_buf *b, const json_t *counts)
{
    static const char *const sev[] = {"critical", "warning", "info"};
    const json_t *by_check = json_object_get(counts, "by_check");
    const json_t *by_status = json_object_get(counts, "by_status");
    int rc = head(b, "vslint_findings", "Open (unresolved, unwaived) findings by check and severity.");

    /* Every check and severity, zeros included, so a series never vanishes when fixed. */
    for (size_t i = 0; rc == 0 && i < chk_registry_len; i++) {
        const json_t *c = json_object_get(by_check, chk_registry[i]->id);
        for (size_t s = 0; rc == 0 && s < 3; s++) {
            const char *const labels[] = {"check", chk_registry[i]->id, "severity", sev[s], NULL};
            rc = sample_int(b, "vslint_findings", labels,
                            json_integer_value(json_object_get(c, sev[s])));
        }
    }
    if (rc == 0)
        rc = head(b, "vslint_findings_waived", "Unresolved findings silenced by a waiver.");
    if (rc == 0)
        rc = sample_int(b, "vslint_findings_waived", NULL,
                        json_integer_value(json_object_get(by_status, "waived")));
    return rc;
}

/* The gauges with one sample per vCenter, in the order they are written. */
enum vc_gauge {
    VC_DURATION,
    VC_SUCCESS,
    VC_STALE,
    VC_FAILURES,
    VC_AGE,
    VC_LAST_SUCCESS,
    VC_INTERVAL,
    VC_MODE,
    VC_LAST_FULL,
};

static const struct {
    const char *name, *help;
} vc_gauges[] = {
    [VC_DURATION] = {"vslint_poll_duration_seconds", "Duration of the last poll of each vCenter."},
    [VC_SUCCESS] = {"vslint_poll_success",
                    "Whether the last poll of each vCenter succeeded (1) or failed (0)."},
    [VC_STALE] = {"vslint_poll_stale",
                  "1 when the served snapshot of a vCenter is older than its last poll."},
    [VC_FAILURES] = {"vslint_poll_consecutive_failures",
                     "Failed polls of each vCenter since its last success."},
    [VC_AGE] = {"vslint_last_success_age_seconds",
                "Seconds since the last successful poll of each vCenter."},
    [VC_LAST_SUCCESS] = {"vslint_last_success_timestamp_seconds",
                         "Unix time of the last successful poll of each vCenter."},
    /* Alerting compares the age of the last success with the interval (dist/prometheus). */
    [VC_INTERVAL] = {"vslint_poll_interval_seconds",
                     "Configured seconds between polls of each vCenter."},
    [VC_MODE] = {"vslint_poll_mode",
                 "1 while a vCenter's changes are followed with WaitForUpdatesEx (incremental), "
                 "0 when it is read in full at every poll."},
    [VC_LAST_FULL] = {"vslint_last_full_read_timestamp_seconds",
                      "Unix time of the last successful full read of each vCenter."},
};

/* Gauge g of vCenter s at now (unix ms); *has = 0 leaves the vCenter out: a value it never had
 * (no poll finished, or none succeeded). */
static double vc_value(enum vc_gauge g, const struct api_vcenter_status *s, int64_t now,
                       int *has)
{
    *has = g == VC_DURATION || g == VC_SUCCESS ? s->last_finished_ms != 0
           : g == VC_AGE || g == VC_LAST_SUCCESS ? s->last_success_ms != 0
           : g == VC_LAST_FULL                   ? s->last_full_ms != 0
                                                 : 1;
    switch (g) {
    case VC_DURATION: return (double)s->last_duration_ms / 1000.0;
    case VC_SUCCESS: return s->last_ok;
    case VC_STALE: return s->stale;
    case VC_FAILURES: return s->failures;
    case VC_AGE: return (double)(now - s->last_success_ms) / 1000.0;
    case VC_LAST_SUCCESS: return (double)s->last_success_ms / 1000.0;
    case VC_INTERVAL: return s->interval_s;
    case VC_MODE: return s->incremental;
    case VC_LAST_FULL: return (double)s->last_full_ms / 1000.0;
    }
    return 0;
}

static int per_vcenter(struct vsl_buf *b, const struct api_vcenter_status *st, size_t n,
                       int64_t now)
{
    int rc = 0;

    for (size_t g = 0; rc == 0 && g < sizeof(vc_gauges) / sizeof(vc_gauges[0]); g++) {
        rc = head(b, vc_gauges[g].name, vc_gauges[g].help);
        for (size_t i = 0; rc == 0 && i < n; i++) {
            /* An [array NAME] is polled like a vCenter, but is not one: its own label, so
             * that dashboards and alerts can tell them apart (dist/prometheus). */
            const char *const labels[] = {st[i].type[0] ? "array" : "vcenter", st[i].name,
                                          NULL};
            char number[32];
            int has;
            double v = vc_value((enum vc_gauge)g, &st[i], now, &has);
            if (!has)
                continue;
            vsl_fmt_double(number, sizeof(number), v);
            rc = sample(b, vc_gauges[g].name, labels, number);
        }
    }
    return rc;
}

/* The datastore gauges, each a run of samples after its head: written in one pass over the
 * datastores (db_datastore_gauges()) into a buffer per gauge, appended in this order. */
enum ds_gauge { DS_CAPACITY, DS_FREE, DS_RUNWAY, DS_NGAUGES };

static const struct {
    const char *name, *help;
} ds_gauges[] = {
    [DS_CAPACITY] = {"vslint_datastore_capacity_bytes", "Datastore capacity in bytes."},
    [DS_FREE] = {"vslint_datastore_free_bytes", "Datastore free space in bytes."},
    /* Days until each datastore's free space falls below the datastore-free-space thresholds,
     * as the last evaluation estimated them (the inventory pages' "runway"); only known
     * figures: a null has its reason in the API. */
    [DS_RUNWAY] = {"vslint_datastore_runway_days",
                   "Days until a datastore's free space falls below the "
                   "datastore-free-space threshold, at its measured growth rate."},
};

static int ds_samples(const struct db_ds_gauges *g, void *ctx)
{
    struct vsl_buf *b = ctx;
    const char *const labels[] = {"vcenter", g->vcenter, "datastore", g->name,
                                  "moref", g->moref, NULL, NULL, NULL};
    const char *const runway[] = {"vcenter", g->vcenter, "datastore", g->name,
                                  "moref", g->moref, "threshold", "warning", NULL};
    const char *const runway_crit[] = {"vcenter", g->vcenter, "datastore", g->name,
                                       "moref", g->moref, "threshold", "critical", NULL};
    int rc = 0;

    if (g->has_capacity)
        rc = sample_int(&b[DS_CAPACITY], ds_gauges[DS_CAPACITY].name, labels, g->capacity);
    if (rc == 0 && g->has_free)
        rc = sample_int(&b[DS_FREE], ds_gauges[DS_FREE].name, labels, g->free_space);
    if (rc == 0 && g->has_warning)
        rc = sample_int(&b[DS_RUNWAY], ds_gauges[DS_RUNWAY].name, runway, g->days_to_warning);
    if (rc == 0 && g->has_critical)
        rc = sample_int(&b[DS_RUNWAY], ds_gauges[DS_RUNWAY].name, runway_crit,
                        g->days_to_critical);
    return rc;
}

static int datastores(struct vsl_buf *b, struct db *db)
{
    struct vsl_buf g[DS_NGAUGES];
    int rc;

    for (size_t i = 0; i < DS_NGAUGES; i++)
        vsl_buf_init(&g[i], MAX_METRICS);
    rc = db_datastore_gauges(db, ds_samples, g);
    for (size_t i = 0; i < DS_NGAUGES; i++) {
        if (rc == 0)
            rc = head(b, ds_gauges[i].name, ds_gauges[i].help);
        if (rc == 0 && g[i].len)
            rc = vsl_buf_add(b, g[i].data, g[i].len);
        vsl_buf_free(&g[i]);
    }
    return rc;
}

/* The database's size, its growing tables' rows and the last pruning (db/prune.h): what shows
 * it stays the same size. */
static int database(struct vsl_buf *b, struct db *db)
{
    struct db_prune_stats p;
    struct db_size z;
    int rc = db_size(db, &z);

    if (rc < 0)
        return rc;
    const struct {
        const char *table;
        int64_t rows;
    } t[] = {{"polls", z.polls}, {"findings", z.findings}, {"digests", z.digests},
             {"capacity_history", z.capacity_history}};
    rc = head(b, "vslint_database_size_bytes",
              "Size of the database's files: the main file and its write-ahead log.");
    if (rc == 0)
        rc = sample_int(b, "vslint_database_size_bytes", (const char *const[]){"file", "main", NULL},
                        z.file_bytes);
    if (rc == 0)
        rc = sample_int(b, "vslint_database_size_bytes", (const char *const[]){"file", "wal", NULL},
                        z.wal_bytes);
    if (rc == 0)
        rc = head(b, "vslint_database_free_bytes",
                  "Bytes of the main file on its free list, reused by the next rows.");
    if (rc == 0)
        rc = sample_int(b, "vslint_database_free_bytes", NULL, z.free_bytes);
    if (rc == 0)
        rc = head(b, "vslint_database_rows", "Rows of the database's growing tables.");
    for (size_t i = 0; rc == 0 && i < sizeof(t) / sizeof(t[0]); i++)
        rc = sample_int(b, "vslint_database_rows", (const char *const[]){"table", t[i].table, NULL},
                        t[i].rows);
    db_prune_last(&p);
    if (rc < 0 || p.at_ms == 0)
        return rc; /* no pruning yet in this process: no time to give */
    rc = head(b, "vslint_database_last_prune_timestamp_seconds",
              "Unix time of the last pruning that deleted rows or gave pages back.");
    if (rc == 0)
        rc = sample_int(b, "vslint_database_last_prune_timestamp_seconds", NULL, p.at_ms / 1000);
    if (rc == 0)
        rc = head(b, "vslint_database_last_prune_duration_seconds",
                  "How long the last pruning took.");
    if (rc == 0) {
        char number[32];
        snprintf(number, sizeof(number), "%.3f", (double)p.duration_ms / 1000.0);
        rc = sample(b, "vslint_database_last_prune_duration_seconds", NULL, number);
    }
    if (rc == 0)
        rc = head(b, "vslint_database_last_prune_rows", "Rows the last pruning deleted, by table.");
    const struct {
        const char *table;
        int64_t n;
    } d[] = {{"polls", p.polls}, {"findings", p.findings}, {"digests", p.digests}};
    for (size_t i = 0; rc == 0 && i < sizeof(d) / sizeof(d[0]); i++)
        rc = sample_int(b, "vslint_database_last_prune_rows",
                        (const char *const[]){"table", d[i].table, NULL}, d[i].n);
    return rc;
}

/* Samples for the client as a piece of the answer: their text, and their deflate data when the
 * client takes gzip (last: the piece that ends the answer). Takes b's text. */
static int piece_of(struct api_req *r, struct vsl_buf *b, int last, struct api_piece *p)
{
    p->len = b->len;
    p->text = vsl_buf_take(b);
    if (!p->text)
        return -ENOMEM;
    p->crc = (uint32_t)crc32(0, (const Bytef *)p->text, (uInt)p->len);
    if (api_wants_gzip(r) && api_deflate_piece(p->text, p->len, last, &p->z, &p->zlen) < 0)
        p->z = NULL; /* then the whole answer is compressed at once */
    return 0;
}

/* The samples read from the database, before the per-vCenter ones (which="pre": findings and
 * score) or after them ("post": datastores, which end the answer): rendered once per
 * generation of the data (api_generation()) and kept, with their deflate data once a client
 * took gzip, since most scrapes find the data unchanged. The per-vCenter gauges come from the
 * pollers' state and the clock and are rendered per request; the database's size, which
 * every commit moves, once per commit (db_part()). */
static int stored_part(struct api_req *r, struct db *db, uint64_t gen, const char *which,
                       struct api_piece *p)
{
    int last = !strcmp(which, "post"), want_gz = api_wants_gzip(r), rc;
    char key[32];
    uint64_t crc;
    struct vsl_buf b;

    snprintf(key, sizeof(key), "#metrics-%s", which); /* no request path starts with '#' */
    struct api_text *t, *z;
    if (api_cache_get(r, key, gen, want_gz, &t, &z, &crc)) {
        /* Copies (the pieces are joined into one answer anyway); NULL: out of memory. */
        p->len = t->len;
        p->text = malloc(t->len + 1);
        if (p->text)
            memcpy(p->text, t->data, t->len + 1);
        if (z && (p->z = malloc(z->len))) {
            memcpy(p->z, z->data, z->len);
            p->zlen = z->len;
        }
        api_text_unref(t);
        api_text_unref(z);
        if (!p->text)
            return -ENOMEM;
        p->crc = (uint32_t)crc;
        if (!want_gz || p->z)
            return 0;
        /* The first client that takes gzip: compressed once, and kept. */
        if (api_deflate_piece(p->text, p->len, last, &p->z, &p->zlen) == 0)
            api_cache_put(r, key, gen, p->text, p->len, crc, p->z, p->zlen);
        return 0;
    }
    vsl_buf_init(&b, MAX_METRICS);
    if (!strcmp(which, "pre")) {
        int64_t objs[3] = {0};
        json_t *counts = NULL;
        int score = 0;
        rc = api_counts(db, NULL, &counts, objs, &score);
        if (rc == 0)
            rc = findings(&b, counts);
        if (rc == 0)
            rc = head(&b, "vslint_score", "Estate score 0-100 (see /api/v1/summary).");
        if (rc == 0)
            rc = sample_int(&b, "vslint_score", NULL, score);
        json_decref(counts);
    } else {
        rc = datastores(&b, db);
    }
    if (rc == 0)
        rc = piece_of(r, &b, last, p);
    vsl_buf_free(&b);
    if (rc == 0)
        api_cache_put(r, key, gen, p->text, p->len, p->crc, p->z, p->zlen);
    return rc;
}

/* The database's size samples as last rendered: by server and commit generation
 * (api_generations()). Not in the answer cache: every commit, a quiet round's too, moves
 * them, and the cache keeps one generation of answers (an entry of a newer one would push out
 * every answer of the older). */
static struct {
    pthread_mutex_t mu;
    const struct api_server *srv; /* compared, never followed */
    uint64_t commits;
    char *text; /* owned; NULL: nothing kept */
    size_t len;
} db_memo = {.mu = PTHREAD_MUTEX_INITIALIZER};

static int db_part(struct api_req *r, struct db *db, uint64_t commits, struct api_piece *p)
{
    struct vsl_buf b;
    int rc = 1;

    vsl_buf_init(&b, MAX_METRICS);
    pthread_mutex_lock(&db_memo.mu);
    if (commits && db_memo.text && db_memo.srv == r->srv && db_memo.commits == commits)
        rc = vsl_buf_add(&b, db_memo.text, db_memo.len);
    pthread_mutex_unlock(&db_memo.mu);
    if (rc > 0) {
        rc = database(&b, db);
        char *copy = rc == 0 && commits ? malloc(b.len + 1) : NULL;
        if (copy) {
            memcpy(copy, b.data, b.len);
            pthread_mutex_lock(&db_memo.mu);
            free(db_memo.text);
            db_memo.text = copy;
            db_memo.len = b.len;
            db_memo.srv = r->srv;
            db_memo.commits = commits;
            pthread_mutex_unlock(&db_memo.mu);
        }
    }
    if (rc == 0)
        rc = piece_of(r, &b, 0, p);
    vsl_buf_free(&b);
    return rc;
}

/* The long requests' queue (api/work.c): how full it is, and how often it was too full. */
static int long_requests(struct api_req *r, struct vsl_buf *b)
{
    uint64_t waiting, running, refused, abandoned;

    api_work_counts(r->srv->work, &waiting, &running, &refused, &abandoned);
    return vsl_buf_printf(
        b,
        "# HELP vslint_http_long_requests Placement, gate and plan requests running on their "
        "threads, or waiting for one (at most %d).\n"
        "# TYPE vslint_http_long_requests gauge\n"
        "vslint_http_long_requests{state=\"running\"} %llu\n"
        "vslint_http_long_requests{state=\"waiting\"} %llu\n"
        "# HELP vslint_http_long_requests_refused_total Placement, gate and plan requests "
        "answered 503 because %d waited already, or the server was stopping.\n"
        "# TYPE vslint_http_long_requests_refused_total counter\n"
        "vslint_http_long_requests_refused_total %llu\n"
        "# HELP vslint_http_long_requests_abandoned_total Placement, gate and plan requests "
        "not run because their client had left while they waited.\n"
        "# TYPE vslint_http_long_requests_abandoned_total counter\n"
        "vslint_http_long_requests_abandoned_total %llu\n",
        API_WORK_QUEUE, (unsigned long long)running, (unsigned long long)waiting, API_WORK_QUEUE,
        (unsigned long long)refused, (unsigned long long)abandoned);
}

/* The allocator's figures, so that a growing RSS can be told apart: heap in use that grows is
 * a leak or a growing table; heap held that grows while in use stays is fragmentation. Left
 * out where the C library does not tell (not glibc). And SQLite's part of the heap in use,
 * whose page caches fill over days (db_memory()). */
static int heap(struct vsl_buf *b)
{
    struct vsl_heap h;
    int64_t sql, cache;

    db_memory(&sql, &cache);
    int rc = vsl_buf_printf(b,
                            "# HELP vslint_sqlite_memory_bytes SQLite's memory (part of the "
                            "heap in use): part=all is all of it; part=page_cache a lower bound "
                            "of its page caches (each connection's first pages are not "
                            "counted), included in all: do not sum over part.\n"
                            "# TYPE vslint_sqlite_memory_bytes gauge\n"
                            "vslint_sqlite_memory_bytes{part=\"all\"} %lld\n"
                            "vslint_sqlite_memory_bytes{part=\"page_cache\"} %lld\n",
                            (long long)sql, (long long)cache);
    if (rc < 0 || vsl_heap_stats(&h) < 0)
        return rc;
    return vsl_buf_printf(
        b,
        "# HELP vslint_heap_in_use_bytes Bytes the daemon has allocated and not freed (the C "
        "library's count).\n"
        "# TYPE vslint_heap_in_use_bytes gauge\n"
        "vslint_heap_in_use_bytes %zu\n"
        "# HELP vslint_heap_held_bytes Bytes the C library's allocator holds from the system, "
        "free blocks included; the RSS adds thread stacks, libraries and mapped files, and "
        "counts only the pages touched.\n"
        "# TYPE vslint_heap_held_bytes gauge\n"
        "vslint_heap_held_bytes %zu\n",
        h.in_use, h.held);
}

enum MHD_Result api_h_metrics(struct api_req *r)
{
    struct api_vcenter_status *st = NULL;
    struct api_piece p[4] = {{0}};
    size_t n = 0;
    struct vsl_buf b;
    struct db *db;
    uint64_t gen, commits;
    int rc;

    if (api_args_allowed(r, NULL) < 0)
        return api_fail(r);
    if (!(db = api_db(r)))
        return api_db_unavailable(r);
    vsl_buf_init(&b, MAX_METRICS);
    api_generations(r, &gen, &commits);
    rc = stored_part(r, db, gen, "pre", &p[0]);
    if (rc == 0)
        rc = db_part(r, db, commits, &p[1]);
    if (rc == 0)
        rc = api_status(r, &st, &n);
    if (rc == 0) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        int64_t now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
        rc = per_vcenter(&b, st, n, now);
    }
    if (rc == 0)
        rc = site_rule_errors(r, &b);
    if (rc == 0)
        rc = cache_answers(r, &b);
    if (rc == 0)
        rc = vsl_buf_printf(&b,
                            "# HELP vslint_estate_builds_total Times the estate the gate and "
                            "placement share was loaded from the database (once per change).\n"
                            "# TYPE vslint_estate_builds_total counter\n"
                            "vslint_estate_builds_total %llu\n",
                            (unsigned long long)api_estate_builds(r->srv));
    if (rc == 0)
        rc = long_requests(r, &b);
    if (rc == 0)
        rc = heap(&b);
    if (rc == 0)
        rc = piece_of(r, &b, 0, &p[2]);
    if (rc == 0)
        rc = stored_part(r, db, gen, "post", &p[3]);
    free(st);
    vsl_buf_free(&b);
    if (rc < 0) {
        api_pieces_free(p, 4);
        return api_db_error(r, "collecting metrics", rc);
    }
    return api_respond_pieces(r, "text/plain; version=0.0.4; charset=utf-8", p, 4);
}
