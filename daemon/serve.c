/* The daemon: a poller thread per vCenter (each with its own database connection), a status
 * table under one mutex that the HTTP threads copy from, and the main thread waiting for
 * signals. A failing vCenter backs off and its last good snapshot keeps being served. */
#define _GNU_SOURCE /* pthread_setname_np */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <gnutls/crypto.h>

#include "api/api.h"
#include "api/tls.h"
#include "daemon/cli.h"
#include "daemon/config.h"
#include "daemon/digest.h"
#include "daemon/evaluate.h"
#include "daemon/poll.h"
#include "daemon/serve.h"
#include "daemon/site.h"
#include "daemon/schedule.h"
#include "db/digest.h"
#include "db/pages.h"
#include "util/err.h"
#include "util/heap.h"
#include "util/log.h"
#include "util/worker.h"

#define MAX_BACKOFF_S  3600
#define STOP_GRACE_MS  30000 /* how long SIGTERM waits for a poll in flight */
#define HTTP_THREADS   4
/* How much nicer than the daemon a poller thread runs (and the threads it starts, which inherit
 * it: the staging writer, the hosts' stream, an evaluation's load). A poll is background work
 * that takes seconds; an HTTP answer takes a millisecond and someone waits for it. On a busy
 * machine a full poll's two or three threads would otherwise take a core from the answers:
 * with it, the scheduler gives an HTTP thread about three times a poller's share. */
#define POLL_NICE      5

struct serve;

struct poller {
    struct serve *sv;
    const struct vsl_vcenter_conf *vc; /* in sv->cfg */
    struct api_vcenter_status st;      /* under sv->mu */
    int64_t next_mono_ms;              /* when to poll next (monotonic) */
    int want_poll;                     /* POST /polls asked */
    int reevaluate;                    /* after a reload: run the new checks on the snapshot */
    int stop;
    /* Set once when the daemon stops (SIGTERM, SIGINT): the poll or round in flight is
     * abandoned within about a second, before its commit (vsl_poll_full()). A reload only
     * sets stop, and waits for the poll to end. */
    _Atomic int cancel;
    int running;                       /* the thread has not finished */
    struct vsl_follow *follow;         /* incremental: the session following changes, or NULL */
    int64_t full_due_mono_ms;          /* incremental: when the next full read is due */
    int in_round;                      /* under sv->mu: a WaitForUpdatesEx round is in flight */
    /* Incremental rounds since the last summary line (poller thread only): one info line an
     * hour says following works, instead of a line per round. */
    int64_t sum_since_mono_ms, sum_rounds, sum_changed_rounds, sum_changes, sum_bytes;
    /* When its vCenter last sent anything (monotonic); in a round, when its answer is due. */
    _Atomic int64_t activity_ms;
    pthread_t thread;
};

struct serve {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* wakes pollers (poll now, stop) and the stopper (a poller ended) */
    struct vsl_config *cfg; /* owned; the pollers read it until they are joined */
    uint64_t cfg_gen;       /* under mu: moves on at every reload that swaps cfg */
    struct poller *pollers; /* owned, cfg->n_vcenters entries */
    size_t n;
    struct api_server *api;
    char *token; /* owned, wiped on free */
    /* The running server's HTTPS credentials (NULL without TLS), owned, outliving every
     * server started with them: a reload whose new server does not start restarts the old one
     * with these, never with the files (which may be what failed). tls_sha is the SHA-256 of
     * the tls_cert and tls_key contents they were built from: a SIGHUP restarts the server
     * when they changed, also at the same paths (a certificate renewed in place). Only the
     * digest is kept of the key's PEM. */
    struct api_tls *tls;
    unsigned char tls_sha[32];
    struct vsl_worker digest; /* sends the digest at [digest] at=, when configured; stop under mu */
    /* Under mu: the database cannot be written (a full disk at start or in a poll): why, ""
     * when it can. The last stored snapshot is served read-only meanwhile. */
    char db_error[512];
    /* Under mu: the site rules that failed in the last evaluation, {id, file, line, error}
     * each (/readyz lists them); NULL before the first. Owned. */
    json_t *rule_errors;
    /* Trims the heap when a poller asks (trim_heap()), at the daemon's own priority: the
     * pollers run POLL_NICE nicer, and a trim holds each malloc arena's lock while it works,
     * which the HTTP threads (and /metrics' heap figures) wait for. trim_wanted and trim_for
     * under mu. */
    struct vsl_worker trimmer;
    int trim_wanted;
    char trim_for[256];
};

int vsl_backoff_s(int interval_s, int failures)
{
    long cap = 8L * interval_s < MAX_BACKOFF_S ? 8L * interval_s : MAX_BACKOFF_S;
    long d = interval_s;

    if (cap < interval_s)
        cap = interval_s;
    for (int i = 1; i < failures && d < cap; i++)
        d *= 2;
    return (int)(d < cap ? d : cap);
}

static void deadline(struct timespec *ts, int64_t mono_ms)
{
    ts->tv_sec = (time_t)(mono_ms / 1000);
    ts->tv_nsec = (long)(mono_ms % 1000) * 1000000L;
}

/* What kept vcenter's findings from being recorded (vsl_evaluate_ex()'s record_err, w), for
 * its status and the log. */
static void record_error(const char *vcenter, int w, char *err, size_t errlen)
{
    snprintf(err, errlen, "checks: vcenter %s: cannot record findings: %s", vcenter,
             w == -EBUSY ? "the database is locked by another connection or process"
                         : vsl_strerror(w));
}

/* Runs the checks on the stored snapshot; logs problems once, here. Outside the lock.
 * Returns 0 when the findings were recorded (or there is no snapshot yet), else the error
 * that kept them from it, with why in err (err also says a check's error when they were). */
static int evaluate(struct poller *p, struct db *db, char *err, size_t errlen)
{
    struct vsl_buf errors;
    int r, w = 0;

    vsl_buf_init(&errors, 64 * 1024);
    json_t *rule_errors = json_array();
    r = vsl_evaluate_ex(db, p->sv->cfg, NULL, p->vc->name, vsl_now_ms(), NULL, &errors,
                        rule_errors, &w);
    if (r >= 0 && errors.len) {
        /* The evaluation was recorded; what it says is a site rule that failed: logged each
         * time, as a built-in check that fails is. */
        for (const char *l = errors.data; *l;) {
            size_t n = strcspn(l, "\n");
            log_warnx("%.*s", (int)n, l);
            l += n + (l[n] == '\n');
        }
    }
    if (rule_errors) {
        pthread_mutex_lock(&p->sv->mu);
        json_decref(p->sv->rule_errors);
        p->sv->rule_errors = rule_errors;
        pthread_mutex_unlock(&p->sv->mu);
    }
    if (r < 0 && r != -VSL_ENOTFOUND && errors.len) {
        char *nl = strchr(errors.data, '\n');
        if (nl)
            *nl = '\0';
        /* "check ID failed on vCenter ..." (chk_run_all): the journal gets VSLINT_CHECK=ID. */
        char id[128];
        const struct check *c = NULL;
        if (sscanf(errors.data, "check %127s failed", id) == 1)
            c = chk_find(id);
        log_context_check(c ? c->id : NULL);
        log_warnx("%s", errors.data);
        log_context_check(NULL);
        snprintf(err, errlen, "checks: %s", errors.data);
    } else if (r < 0 && r != -VSL_ENOTFOUND) {
        snprintf(err, errlen, "checks: %s", vsl_strerror(r));
        log_warnx("vcenter %s: %s", p->vc->name, err);
    }
    if (w < 0)
        record_error(p->vc->name, w, err, errlen);
    vsl_buf_free(&errors);
    return w;
}

/* After an array's poll: the vCenters' estates join its pools, so their checks run again on
 * their stored snapshots (a vCenter never polled has none yet, and is skipped quietly).
 * Returns 0, or the first error that kept a vCenter's findings from being recorded, with why
 * in err. */
static int evaluate_vcenters(struct serve *sv, struct db *db, char *err, size_t errlen)
{
    int first = 0;

    for (size_t i = 0; i < sv->cfg->n_vcenters; i++) {
        const char *name = sv->cfg->vcenters[i].name;
        struct vsl_buf errors;
        int w = 0;
        vsl_buf_init(&errors, 64 * 1024);
        int r = vsl_evaluate_ex(db, sv->cfg, NULL, name, vsl_now_ms(), NULL, &errors, NULL, &w);
        if (r < 0 && r != -VSL_ENOTFOUND && errors.len)
            log_warnx("%.*s", (int)strcspn(errors.data, "\n"), errors.data);
        if (w < 0 && first == 0) {
            first = w;
            record_error(name, w, err, errlen);
        }
        vsl_buf_free(&errors);
    }
    return first;
}

/* Records whether the database can be written (why NULL: it can), logging each change once. */
static void set_db_state(struct serve *sv, const char *why)
{
    pthread_mutex_lock(&sv->mu);
    if (why && !sv->db_error[0])
        log_warnx("database %s: cannot write: %s; serving the last stored snapshot read-only "
                  "until it can",
                  sv->cfg->db_path, why);
    else if (!why && sv->db_error[0])
        log_info("database %s: writable again", sv->cfg->db_path);
    snprintf(sv->db_error, sizeof(sv->db_error), "%s", why ? why : "");
    pthread_mutex_unlock(&sv->mu);
}

/* Under sv->mu: p's poll failed (error says why): its snapshot is stale, the failure counted
 * and the next poll due after the backoff. */
static void poll_failed_locked(struct poller *p, const char *error)
{
    struct api_vcenter_status *s = &p->st;

    s->failures++;
    s->backoff_s = vsl_backoff_s(p->vc->interval_s, s->failures);
    s->stale = 1;
    s->last_ok = 0;
    snprintf(s->error, sizeof(s->error), "%s", error);
    p->next_mono_ms = vsl_monotonic_ms() + (int64_t)s->backoff_s * 1000;
    s->next_poll_ms = vsl_now_ms() + (int64_t)s->backoff_s * 1000;
}

/* At most one trim per this long for the whole process, whichever poller's round comes. */
#define TRIM_EVERY_MS (5 * 60 * 1000)

/* Gives freed heap back to the system after a poll or round whose results were committed. A
 * round or a poll frees its SOAP answers, staged rows and findings, but glibc keeps freed pages
 * in each thread's arena and returns them rarely. Whether the trim lowers the RSS over a long
 * run is not yet shown: the soak with it (docs/performance.md, 11:15) ran another binary at
 * another load than the one without, and an A/B of one commit with and without it is still to
 * run. It holds each arena's lock while it works, so any thread allocating or freeing in that
 * arena waits (up to 0.54 s seen for a whole trim), and one that waits while it holds the
 * daemon's status lock (some HTTP handlers and the other pollers allocate under it) makes
 * others wait behind it. So it runs at most once every TRIM_EVERY_MS for the process, not
 * after every round (which, on a busy vCenter, is every few seconds), after this poller's
 * status is updated and not once the daemon is stopping. Logged at debug with what it cost. */
static void trim_now(const char *vcenter)
{
    struct timespec a, b;

    clock_gettime(CLOCK_MONOTONIC, &a);
    vsl_heap_trim();
    clock_gettime(CLOCK_MONOTONIC, &b);
    log_debug("vcenter %s: heap trimmed in %lld us", vcenter,
              (long long)((b.tv_sec - a.tv_sec) * 1000000 + (b.tv_nsec - a.tv_nsec) / 1000));
}

/* The trim is the trimmer thread's (see struct serve), or the caller's when that thread could
 * not be started. sv->trimmer.running is set before the first poller starts and cleared after
 * the last is joined, so a poller reads it unchanged. */
static void trim_heap(struct serve *sv, const char *vcenter)
{
    static _Atomic int64_t last_ms;
    int64_t now = vsl_monotonic_ms();
    int64_t last = atomic_load(&last_ms);

    if ((last && now - last < TRIM_EVERY_MS) ||
        !atomic_compare_exchange_strong(&last_ms, &last, now))
        return;
    if (!sv->trimmer.running) {
        trim_now(vcenter);
        return;
    }
    pthread_mutex_lock(&sv->mu);
    sv->trim_wanted = 1;
    snprintf(sv->trim_for, sizeof(sv->trim_for), "%s", vcenter);
    pthread_cond_broadcast(&sv->cv);
    pthread_mutex_unlock(&sv->mu);
}

static void *trimmer_main(void *arg)
{
    struct serve *sv = arg;
    char vcenter[sizeof(sv->trim_for)];

    pthread_setname_np(pthread_self(), "heap-trim");

    pthread_mutex_lock(&sv->mu);
    for (;;) {
        while (!sv->trimmer.stop && !sv->trim_wanted)
            pthread_cond_wait(&sv->cv, &sv->mu);
        if (sv->trimmer.stop)
            break;
        sv->trim_wanted = 0;
        memcpy(vcenter, sv->trim_for, sizeof(vcenter));
        pthread_mutex_unlock(&sv->mu);
        log_context_vcenter(vcenter); /* its line is about the poller that asked */
        trim_now(vcenter);
        pthread_mutex_lock(&sv->mu);
    }
    pthread_mutex_unlock(&sv->mu);
    return NULL;
}

/* Lines a poller logs once it has let go of sv->mu: it runs POLL_NICE nicer, and writing a
 * line (to the journal, a pipe) while holding the status lock would make the HTTP threads
 * that read the status wait for a thread the scheduler serves last. */
struct deferred_log {
    int n;
    enum log_level level[2];
    char text[2][2048]; /* as long as a line log_at() writes */
};

VSL_PRINTF(3, 4)
static void defer_log(struct deferred_log *d, enum log_level level, const char *fmt, ...)
{
    va_list ap;

    if (d->n >= 2)
        return;
    va_start(ap, fmt);
    vsnprintf(d->text[d->n], sizeof(d->text[d->n]), fmt, ap);
    va_end(ap);
    d->level[d->n++] = level;
}

static void flush_log(const struct deferred_log *d)
{
    for (int i = 0; i < d->n; i++)
        log_at(d->level[i], "%s", d->text[i]);
}

static void poll_once(struct poller *p, struct db *db)
{
    struct serve *sv = p->sv;
    struct vsl_poll_result res;
    char everr[1024] = "";
    const char *what = p->vc->type ? "array" : "vcenter";
    struct deferred_log dl = {.n = 0};
    int64_t now;

    /* The configuration's, as of the last reload. */
    vsl_db_settings(db, sv->cfg);
    vsl_follow_free(p->follow);
    p->follow = NULL;
    if (p->vc->type)
        vsl_array_poll_full(db, p->vc, &p->cancel, &res);
    else
        vsl_poll_full(db, p->vc, &p->activity_ms, &p->cancel, &res,
                      p->vc->incremental ? &p->follow : NULL);
    if (res.abandoned) {
        /* Nothing of it was stored: the status stays as it was, for the next start. */
        log_info("%s %s: poll abandoned after %.1f s: stopping; the last good snapshot stays",
                 what, p->vc->name, res.duration_ms / 1000.0);
        vsl_follow_free(p->follow);
        p->follow = NULL;
        pthread_mutex_lock(&sv->mu);
        p->st.polling = 0;
        pthread_mutex_unlock(&sv->mu);
        return;
    }
    if (res.ok) {
        /* An array's pools change every vCenter's estate: all of them are judged again. */
        if (p->vc->type ? evaluate_vcenters(sv, db, everr, sizeof(everr)) < 0
                        : evaluate(p, db, everr, sizeof(everr)) < 0) {
            /* The inventory is new, its findings are not: not a good poll. The next one
             * evaluates again. */
            res.ok = 0;
            res.db_err = 1;
            snprintf(res.error, sizeof(res.error), "%s", everr);
        }
        db_checkpoint(db);
    }
    if (res.db_err)
        set_db_state(sv, res.error);
    else if (res.ok)
        set_db_state(sv, NULL);
    if (!res.ok) {
        /* A failed poll backs off; following the changes meanwhile would evaluate each
         * change, fail the same way and read everything again at once. */
        vsl_follow_free(p->follow);
        p->follow = NULL;
    }
    if (p->follow)
        p->full_due_mono_ms = vsl_monotonic_ms() + (int64_t)p->vc->full_every_s * 1000;
    now = vsl_now_ms();
    pthread_mutex_lock(&sv->mu);
    struct api_vcenter_status *s = &p->st;
    s->polling = 0;
    s->polled_once = 1;
    s->last_started_ms = res.started_ms;
    s->last_finished_ms = now;
    s->last_duration_ms = res.duration_ms;
    s->last_ok = res.ok;
    if (res.ok) {
        if (s->failures)
            defer_log(&dl, LOG_LEVEL_INFO, "%s %s: polling again after %d failed polls", what,
                      p->vc->name, s->failures);
        /* The administrator's sign that polling works: one line per full read. */
        int64_t objects = 0;
        for (int k = 0; k < DB_NKINDS; k++)
            objects += res.counts[k];
        defer_log(&dl, LOG_LEVEL_INFO, "%s %s: read in full in %.1f s: %lld objects, %lld bytes",
                  what, p->vc->name, res.duration_ms / 1000.0, (long long)objects,
                  (long long)res.bytes_wire);
        s->last_success_ms = now;
        s->failures = 0;
        s->backoff_s = 0;
        s->stale = 0;
        s->last_full_ms = now;
        s->incremental = p->follow != NULL;
        snprintf(s->version, sizeof(s->version), "%s", vsl_follow_version(p->follow));
        snprintf(s->error, sizeof(s->error), "%s", everr);
        p->next_mono_ms = vsl_monotonic_ms() + (int64_t)p->vc->interval_s * 1000;
    } else {
        poll_failed_locked(p, res.error);
        defer_log(&dl, LOG_LEVEL_WARNX,
                  "%s %s: poll failed: %s; serving the snapshot of %s, retrying in %d s", what,
                  p->vc->name, res.error, s->last_success_ms ? "the last good poll" : "no poll",
                  s->backoff_s);
    }
    s->next_poll_ms = now + (p->next_mono_ms - vsl_monotonic_ms());
    int trim = res.ok && !p->stop;
    pthread_mutex_unlock(&sv->mu);
    flush_log(&dl);
    if (trim)
        trim_heap(sv, p->vc->name);
}

/* How often the incremental rounds are summed up in one info line: an hour. Test builds only
 * (meson -Dtest_hooks) take VSLINT_TEST_ROUND_SUMMARY_MS from the environment, so that a test
 * sees the line without waiting an hour. */
#define ROUND_SUMMARY_MS (3600 * 1000)

static int64_t round_summary_ms(void)
{
#ifdef VSL_TEST_HOOKS
    const char *v = getenv("VSLINT_TEST_ROUND_SUMMARY_MS");
    long long ms = v ? strtoll(v, NULL, 10) : 0;
    if (ms > 0)
        return ms;
#endif
    return ROUND_SUMMARY_MS;
}

/* Counts one round that ended well into the hour's summary, and logs the summary once the hour
 * is over (rounds, those with changes, objects changed, bytes on the wire). */
static void count_round(struct poller *p, size_t changes, int64_t bytes)
{
    int64_t now = vsl_monotonic_ms();

    if (!p->sum_since_mono_ms)
        p->sum_since_mono_ms = now;
    p->sum_rounds++;
    p->sum_changed_rounds += changes > 0;
    p->sum_changes += (int64_t)changes;
    p->sum_bytes += bytes;
    if (now - p->sum_since_mono_ms < round_summary_ms())
        return;
    log_info("vcenter %s: following changes: %lld rounds in the last %lld min, %lld with changes "
             "(%lld changed objects applied), %lld bytes",
             p->vc->name, (long long)p->sum_rounds,
             (long long)((now - p->sum_since_mono_ms) / 60000), (long long)p->sum_changed_rounds,
             (long long)p->sum_changes, (long long)p->sum_bytes);
    p->sum_since_mono_ms = now;
    p->sum_rounds = p->sum_changed_rounds = p->sum_changes = p->sum_bytes = 0;
}

/* Rounds of WaitForUpdatesEx short enough for SIGTERM and SIGHUP (which wait for the poller)
 * to stay responsive, and within the request timeout. */
#define FOLLOW_WAIT_S 5

/* One incremental round; on failure the session is dropped and a full read is due: at once
 * when following failed, after the backoff of a failed poll when the findings could not be
 * recorded (a full read would fail to record them the same way). */
static void follow_once(struct poller *p, struct db *db)
{
    struct serve *sv = p->sv;
    struct vsl_poll_result res;
    char everr[1024] = "";
    size_t changes = 0;
    struct deferred_log dl = {.n = 0};
    int wait_s = p->vc->timeout_s > FOLLOW_WAIT_S + 1 ? FOLLOW_WAIT_S : p->vc->timeout_s / 2;

    /* The vCenter may rightly say nothing for wait_s: it is stalled only when silent past that
     * (hook_status() reports the round as a poll in flight from then on). */
    pthread_mutex_lock(&sv->mu);
    p->in_round = 1;
    atomic_store(&p->activity_ms, vsl_monotonic_ms() + (int64_t)wait_s * 1000);
    pthread_mutex_unlock(&sv->mu);
    int r = vsl_poll_changes(db, p->vc, p->follow, wait_s, &res, &changes);
    int unrec = 0;
    int committed = 0; /* changes and their findings stored: the heap is trimmed at the end */

    if (res.abandoned) {
        log_info("vcenter %s: round abandoned: stopping", p->vc->name);
        pthread_mutex_lock(&sv->mu);
        vsl_follow_free(p->follow);
        p->follow = NULL;
        p->in_round = 0;
        pthread_mutex_unlock(&sv->mu);
        return;
    }

    /* A round whose changes could not be stored is a database error like a full poll's; the
     * next round or full read that commits clears it. */
    if (r == 0 && changes > 0) {
        if (evaluate(p, db, everr, sizeof(everr)) < 0) {
            /* Changes stored, findings not: a full read evaluates again (see poll_once). */
            r = -EIO;
            unrec = 1;
            res.db_err = 1;
            snprintf(res.error, sizeof(res.error), "%s", everr);
        }
        db_checkpoint(db);
        committed = r == 0;
    }
    if (res.db_err)
        set_db_state(sv, res.error);
    else if (r == 0)
        set_db_state(sv, NULL);
    pthread_mutex_lock(&sv->mu);
    p->in_round = 0;
    struct api_vcenter_status *s = &p->st;
    if (r < 0) {
        vsl_follow_free(p->follow);
        p->follow = NULL;
        s->incremental = 0;
        s->version[0] = '\0';
        if (unrec) {
            poll_failed_locked(p, res.error);
            defer_log(&dl, LOG_LEVEL_WARNX,
                      "vcenter %s: %s; serving the snapshot of the last good poll, reading "
                      "everything again in %d s",
                      p->vc->name, res.error, s->backoff_s);
        } else {
            defer_log(&dl, LOG_LEVEL_INFO,
                      "vcenter %s: following changes failed (%s); reading everything again",
                      p->vc->name, res.error);
            p->next_mono_ms = vsl_monotonic_ms();
        }
    } else {
        snprintf(s->version, sizeof(s->version), "%s", vsl_follow_version(p->follow));
        /* Every round that ended well says the snapshot is current, changed or not. */
        int64_t now = vsl_now_ms();
        s->last_success_ms = now;
        count_round(p, changes, res.bytes_wire);
        if (changes > 0) {
            defer_log(&dl, LOG_LEVEL_DEBUG,
                      "vcenter %s: %zu changed objects applied in %lld ms (%lld bytes)",
                      p->vc->name, changes, (long long)res.duration_ms,
                      (long long)res.bytes_wire);
            s->last_update_ms = now;
            snprintf(s->error, sizeof(s->error), "%s", everr);
        }
    }
    committed = committed && !p->stop;
    pthread_mutex_unlock(&sv->mu);
    flush_log(&dl);
    if (committed)
        trim_heap(sv, p->vc->name);
}

/* Lowers the calling thread's CPU priority by POLL_NICE. Linux keeps a nice value per thread
 * (setpriority() with who 0 changes the caller only, not the process); raising it needs no
 * privilege. Where it fails, the poll runs at the daemon's priority, as before. */
static void poller_nice(void)
{
    errno = 0;
    int now = getpriority(PRIO_PROCESS, 0);
    if (now == -1 && errno)
        return;
    if (setpriority(PRIO_PROCESS, 0, now + POLL_NICE < 19 ? now + POLL_NICE : 19) < 0)
        log_debug("cannot lower the poller thread's priority: %s", strerror(errno));
}

static void *poller_main(void *arg)
{
    struct poller *p = arg;
    struct serve *sv = p->sv;
    struct db *db = NULL;
    char *msg = NULL;

    log_context_vcenter(p->vc->name); /* this thread's lines are about this vCenter */
    /* What `top -H` shows (at most 15 bytes); the threads it starts inherit it. */
    char name[16];
    snprintf(name, sizeof(name), "poll:%s", p->vc->name);
    pthread_setname_np(pthread_self(), name);
    poller_nice();
    if (p->reevaluate && !p->vc->type && db_open(sv->cfg->db_path, &db, &msg) == 0) {
        char err[1024] = "";
        if (evaluate(p, db, err, sizeof(err)) < 0) {
            /* The new settings' findings are not recorded: not healthy until a poll's are. */
            set_db_state(sv, err);
            pthread_mutex_lock(&sv->mu);
            poll_failed_locked(p, err);
            pthread_mutex_unlock(&sv->mu);
            log_warnx("vcenter %s: judging the stored snapshot again after the reload failed: "
                      "%s; polling again in %d s",
                      p->vc->name, err, p->st.backoff_s);
        }
    }
    free(msg);
    msg = NULL;
    pthread_mutex_lock(&sv->mu);
    for (;;) {
        if (p->follow && !p->stop && !p->want_poll && vsl_monotonic_ms() < p->full_due_mono_ms) {
            pthread_mutex_unlock(&sv->mu);
            follow_once(p, db);
            pthread_mutex_lock(&sv->mu);
            if (p->follow)
                continue;
        }
        if (p->follow)
            p->next_mono_ms = vsl_monotonic_ms(); /* the full read is due */
        while (!p->stop && !p->want_poll && vsl_monotonic_ms() < p->next_mono_ms) {
            struct timespec ts;
            deadline(&ts, p->next_mono_ms);
            pthread_cond_timedwait(&sv->cv, &sv->mu, &ts);
        }
        if (p->stop)
            break;
        p->want_poll = 0;
        pthread_mutex_unlock(&sv->mu);
        if (!db && db_open(sv->cfg->db_path, &db, &msg) < 0) {
            /* A full disk at start: the API serves what is stored; try again at the next
             * poll time. */
            char why[600];
            snprintf(why, sizeof(why), "cannot open it for writing: %s", msg ? msg : "error");
            free(msg);
            msg = NULL;
            set_db_state(sv, why);
            pthread_mutex_lock(&sv->mu);
            p->st.polled_once = 1;
            p->st.stale = 1;
            snprintf(p->st.error, sizeof(p->st.error), "cannot write the database");
            p->next_mono_ms = vsl_monotonic_ms() + (int64_t)p->vc->interval_s * 1000;
            p->st.next_poll_ms = vsl_now_ms() + (int64_t)p->vc->interval_s * 1000;
            continue;
        }
        pthread_mutex_lock(&sv->mu);
        p->st.polling = 1;
        atomic_store(&p->activity_ms, vsl_monotonic_ms());
        pthread_mutex_unlock(&sv->mu);
        log_debug("vcenter %s: polling", p->vc->name);
        poll_once(p, db);
        pthread_mutex_lock(&sv->mu);
    }
    struct vsl_follow *f = p->follow; /* p may be freed once running is 0 */
    p->follow = NULL;
    p->running = 0;
    pthread_cond_broadcast(&sv->cv);
    pthread_mutex_unlock(&sv->mu);
    vsl_follow_free(f);
    db_close(db);
    return NULL;
}

/* ---- the digest ---------------------------------------------------------------------------- */

/* Waits up to seconds (a delivery's backoff) unless the daemon stops: nonzero then. */
static int digest_wait(void *ctx, int seconds)
{
    struct serve *sv = ctx;
    int64_t until = vsl_monotonic_ms() + (int64_t)seconds * 1000;
    int stop;

    pthread_mutex_lock(&sv->mu);
    while (!sv->digest.stop && vsl_monotonic_ms() < until) {
        struct timespec ts;
        deadline(&ts, until);
        pthread_cond_timedwait(&sv->cv, &sv->mu, &ts);
    }
    stop = sv->digest.stop;
    pthread_mutex_unlock(&sv->mu);
    return stop;
}

static void *digest_main(void *arg)
{
    struct serve *sv = arg;
    const struct vsl_digest_conf *d = &sv->cfg->digest; /* stable until this thread is joined */
    int at = vsl_config_hhmm(d->at);
    struct db *db = NULL;
    char *msg = NULL, t[64];
    int64_t due;
    int r;

    if (db_open(sv->cfg->db_path, &db, &msg) < 0) {
        log_warnx("digest: cannot open database %s: %s; no digest will be sent", sv->cfg->db_path,
                  msg ? msg : "error");
        free(msg);
        return NULL;
    }
    r = vsl_digest_first_due(db, d, at, vsl_now_ms(), &due);
    if (r < 0) {
        log_warnx("digest: cannot schedule it: %s; no digest will be sent", vsl_strerror(r));
        db_close(db);
        return NULL;
    }
    for (;;) {
        log_debug("digest: next at %s", vsl_sched_format(d->timezone, due, t, sizeof(t)));
        /* The wall clock decides; waking every minute follows a clock that was set. */
        pthread_mutex_lock(&sv->mu);
        for (int64_t left; !sv->digest.stop && (left = due - vsl_now_ms()) > 0;) {
            struct timespec ts;
            deadline(&ts, vsl_monotonic_ms() + (left < 60000 ? left : 60000));
            pthread_cond_timedwait(&sv->cv, &sv->mu, &ts);
        }
        int stop = sv->digest.stop;
        pthread_mutex_unlock(&sv->mu);
        if (stop)
            break;
        r = vsl_digest_run(db, sv->cfg, due, vsl_now_ms(), 0, digest_wait, sv, 0, NULL);
        if (r == -EINTR)
            break; /* stopping while retrying: the window stays unsent for the next start */
        int64_t now = vsl_now_ms();
        if (vsl_sched_next(d->timezone, at, now > due ? now : due, &due) < 0)
            break;
    }
    db_close(db);
    return NULL;
}

static void start_digest(struct serve *sv)
{
    if (!sv->cfg->digest.line)
        return;
    if (vsl_worker_start(&sv->digest, digest_main, sv) < 0) {
        log_warnx("digest: cannot start its thread; no digest will be sent");
        return;
    }
    log_info("digest: sending to %s daily at %s%s%s", sv->cfg->digest.to, sv->cfg->digest.at,
             sv->cfg->digest.timezone ? " " : "",
             sv->cfg->digest.timezone ? sv->cfg->digest.timezone : "");
}

static void stop_digest(struct serve *sv)
{
    vsl_worker_stop(&sv->digest, &sv->mu, &sv->cv);
}

/* ---- hooks the HTTP threads call ----------------------------------------------------------- */

static int hook_status(void *ctx, struct api_vcenter_status **out, size_t *n)
{
    struct serve *sv = ctx;

    pthread_mutex_lock(&sv->mu);
    *n = sv->n;
    *out = calloc(sv->n ? sv->n : 1, sizeof(**out));
    int64_t now = vsl_monotonic_ms();
    for (size_t i = 0; *out && i < sv->n; i++) {
        const struct poller *p = &sv->pollers[i];
        (*out)[i] = p->st;
        int64_t quiet = now - atomic_load(&p->activity_ms);
        (*out)[i].quiet_ms = p->st.polling ? quiet : 0;
        /* A follow round past its wait and the stall delay: shown as a stalled poll. */
        if (p->in_round && !p->st.polling && quiet >= API_STALL_MS) {
            (*out)[i].polling = 1;
            (*out)[i].quiet_ms = quiet;
        }
    }
    pthread_mutex_unlock(&sv->mu);
    return *out ? 0 : -ENOMEM;
}

static int hook_db_writable(void *ctx, char *why, size_t len)
{
    struct serve *sv = ctx;
    int ok;

    pthread_mutex_lock(&sv->mu);
    ok = !sv->db_error[0];
    snprintf(why, len, "%s", sv->db_error);
    pthread_mutex_unlock(&sv->mu);
    return ok;
}

static int hook_poll_now(void *ctx, const char *vcenter)
{
    struct serve *sv = ctx;
    int found = 0;

    pthread_mutex_lock(&sv->mu);
    for (size_t i = 0; i < sv->n; i++) {
        if (vcenter && strcmp(vcenter, sv->pollers[i].vc->name))
            continue;
        sv->pollers[i].want_poll = 1;
        found = 1;
    }
    pthread_cond_broadcast(&sv->cv);
    pthread_mutex_unlock(&sv->mu);
    return found ? 0 : -VSL_ENOTFOUND;
}

static int hook_check_config(void *ctx, struct chk_config *out)
{
    struct serve *sv = ctx;
    int r;

    /* A reload swaps sv->cfg under the lock and frees the old one after it. */
    pthread_mutex_lock(&sv->mu);
    r = chk_config_copy(out, &sv->cfg->checks);
    pthread_mutex_unlock(&sv->mu);
    return r;
}

static int hook_site_rules(void *ctx, json_t **checks, json_t **errors)
{
    struct serve *sv = ctx;

    pthread_mutex_lock(&sv->mu);
    *checks = vsl_site_catalogue(&sv->cfg->rules);
    *errors = sv->rule_errors ? json_deep_copy(sv->rule_errors) : json_array();
    pthread_mutex_unlock(&sv->mu);
    return *checks && *errors ? 0 : -ENOMEM;
}

static uint64_t hook_config_generation(void *ctx)
{
    struct serve *sv = ctx;
    uint64_t g;

    pthread_mutex_lock(&sv->mu);
    g = sv->cfg_gen;
    pthread_mutex_unlock(&sv->mu);
    return g;
}

static void hook_scope_estate(void *ctx, struct estate *e)
{
    struct serve *sv = ctx;

    pthread_mutex_lock(&sv->mu);
    vsl_keep_configured_pools(e, sv->cfg);
    pthread_mutex_unlock(&sv->mu);
}

/* ---- start, reload, stop ------------------------------------------------------------------- */

/* Makes pollers for cfg, carrying over the state of vCenters that old (may be NULL) had under
 * the same name and URL. Does not start them. */
static int make_pollers(struct serve *sv, struct vsl_config *cfg, const struct poller *old,
                        size_t nold, struct poller **out)
{
    const size_t n = vsl_config_nsources(cfg);
    struct poller *ps = calloc(n ? n : 1, sizeof(*ps));
    struct db *db = NULL;
    char *msg = NULL;

    if (!ps)
        return -ENOMEM;
    /* Migrates once, here, before any reader opens it. A database that can be read but not
     * written (a full disk) is served read-only; one that cannot be read at all is an error. */
    if (!old && db_open(cfg->db_path, &db, &msg) < 0) {
        char *rmsg = NULL;
        if (db_open_reader(cfg->db_path, &db, &rmsg) < 0) {
            log_warnx("cannot open database %s: %s", cfg->db_path, msg ? msg : "error");
            free(msg);
            free(rmsg);
            free(ps);
            return -VSL_EDB;
        }
        snprintf(sv->db_error, sizeof(sv->db_error), "cannot open it for writing: %s",
                 msg ? msg : "error");
        log_warnx("database %s: %s; serving the last stored snapshot read-only until it can be "
                  "written",
                  cfg->db_path, sv->db_error);
        free(msg);
    }
    int64_t now_mono = vsl_monotonic_ms();
    for (size_t i = 0; i < n; i++) {
        struct poller *p = &ps[i];
        const struct vsl_vcenter_conf *vc = vsl_config_source(cfg, i);
        p->sv = sv;
        p->vc = vc;
        p->next_mono_ms = now_mono; /* a new vCenter polls at once */
        for (size_t j = 0; j < nold; j++) {
            if (strcmp(old[j].vc->name, vc->name) || strcmp(old[j].vc->url, vc->url) ||
                !old[j].vc->type != !vc->type)
                continue;
            p->st = old[j].st;
            p->st.polling = 0;
            p->next_mono_ms = old[j].next_mono_ms;
            /* A follower's session ended with its thread: a full read starts following again. */
            if (p->st.incremental)
                p->next_mono_ms = now_mono;
            p->st.incremental = 0;
            p->st.version[0] = '\0';
            p->want_poll = old[j].want_poll;
            p->reevaluate = old[j].st.last_success_ms != 0;
        }
        if (db) {
            /* A restart: remember what the database knows, so staleness and the snapshot's
             * age are right before the first poll of this process. */
            struct db_vcenter_state dst;
            if (db_vcenter_state(db, vc->name, &dst) == 0) {
                p->st.last_success_ms = dst.last_success_ms;
                p->st.stale = dst.last_finished_ms && !dst.last_ok;
            }
        }
        snprintf(p->st.name, sizeof(p->st.name), "%s", vc->name);
        snprintf(p->st.url, sizeof(p->st.url), "%s", vc->url);
        snprintf(p->st.type, sizeof(p->st.type), "%s", vc->type ? vc->type : "");
        p->st.interval_s = vc->interval_s;
        p->st.timeout_s = vc->timeout_s;
    }
    db_close(db);
    *out = ps;
    return 0;
}

static int start_pollers(struct serve *sv)
{
    for (size_t i = 0; i < sv->n; i++) {
        struct poller *p = &sv->pollers[i];
        p->running = 1;
        if (pthread_create(&p->thread, NULL, poller_main, p) != 0) {
            p->running = 0;
            log_warnx("%s %s: cannot start its poller thread", p->vc->type ? "array" : "vcenter",
                      p->vc->name);
            return -EAGAIN;
        }
    }
    return 0;
}

/* How often a reload waiting for polls in flight looks for SIGTERM. */
#define RELOAD_SIGNAL_CHECK_MS 200

/* Whether one of the signals in set is pending for this thread (then taken: *sig). */
static int signal_pending(const sigset_t *set, int *sig)
{
    struct timespec zero = {0, 0};
    int r = sigtimedwait(set, NULL, &zero);

    if (r <= 0)
        return 0;
    *sig = r;
    return 1;
}

/* Asks every poller to stop and waits until grace_ms passed (0: forever) or, with stop_on, one
 * of its signals is pending (*sig says which, else 0). Returns the number still running (a
 * poll in flight that did not finish in time). */
static size_t stop_pollers(struct serve *sv, int64_t grace_ms, const sigset_t *stop_on, int *sig)
{
    int64_t until = vsl_monotonic_ms() + grace_ms;
    size_t running;

    if (sig)
        *sig = 0;
    pthread_mutex_lock(&sv->mu);
    for (size_t i = 0; i < sv->n; i++)
        sv->pollers[i].stop = 1;
    pthread_cond_broadcast(&sv->cv);
    for (;;) {
        running = 0;
        for (size_t i = 0; i < sv->n; i++)
            running += sv->pollers[i].running;
        if (!running || (grace_ms && vsl_monotonic_ms() >= until))
            break;
        if (stop_on && signal_pending(stop_on, sig))
            break;
        if (grace_ms || stop_on) {
            int64_t wake = vsl_monotonic_ms() + RELOAD_SIGNAL_CHECK_MS;
            struct timespec ts;
            deadline(&ts, !stop_on || (grace_ms && until < wake) ? until : wake);
            pthread_cond_timedwait(&sv->cv, &sv->mu, &ts);
        } else {
            pthread_cond_wait(&sv->cv, &sv->mu);
        }
    }
    pthread_mutex_unlock(&sv->mu);
    if (!running)
        for (size_t i = 0; i < sv->n; i++)
            if (sv->pollers[i].thread)
                pthread_join(sv->pollers[i].thread, NULL);
    return running;
}

static int read_token(const struct vsl_config *cfg, char **out)
{
    int r;

    *out = NULL;
    if (!cfg->server.token_file)
        return 0;
    r = vsl_read_secret_file(cfg->server.token_file, 4096, out);
    if (r < 0) {
        log_warnx("[server] token_file %s: cannot read: %s", cfg->server.token_file,
                  vsl_strerror(r));
        return r;
    }
    if (strlen(*out) < 16) {
        log_warnx("[server] token_file %s: the token must be at least 16 characters",
                  cfg->server.token_file);
        vsl_config_wipe(*out);
        *out = NULL;
        return -VSL_ECONFIG;
    }
    return 0;
}

/* What the configuration allows but warns about (insecure=true, a secret others can read):
 * logged at every start and reload, not only by config-check. */
static void log_config_warnings(const struct vsl_config *cfg)
{
    for (const char *p = cfg->warnings; p && *p;) {
        const char *nl = strchr(p, '\n');
        int n = nl ? (int)(nl - p) : (int)strlen(p);
        log_warnx("%.*s", n, p);
        p += n + (nl != NULL);
    }
}

static int start_api(struct serve *sv, const struct vsl_config *cfg, const char *token,
                     struct api_tls *tls)
{
    struct api_opts o = {
        .listen = cfg->server.listen,
        .db_path = cfg->db_path,
        .token = token,
        .auth_all = cfg->server.auth_all,
        .tls_cert_file = cfg->server.tls_cert,
        .tls_key_file = cfg->server.tls_key,
        .tls = tls,
        .max_connections = cfg->server.max_connections,
        .max_per_address = cfg->server.max_per_address,
        .timeout_s = cfg->server.timeout_s,
        .header_timeout_s = cfg->server.header_timeout_s,
        .threads = HTTP_THREADS,
        .sources = (int)vsl_config_nsources(cfg),
    };
    struct api_hooks h = {.ctx = sv,
                          .status = hook_status,
                          .poll_now = hook_poll_now,
                          .check_config = hook_check_config,
                          .scope_estate = hook_scope_estate,
                          .config_generation = hook_config_generation,
                          .db_writable = hook_db_writable,
                          .site_rules = hook_site_rules};
    char err[512] = "";
    int r = api_start(&o, &h, &sv->api, err, sizeof(err));

    if (r < 0)
        log_warnx("%s", err);
    else
        log_info("serving http%s://%s/ (%zu vCenter%s)", cfg->server.tls_cert ? "s" : "",
                 cfg->server.listen, cfg->n_vcenters, cfg->n_vcenters == 1 ? "" : "s");
    return r;
}

static int streq(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

/* Builds cfg's HTTPS credentials from tls_cert and tls_key, read once: *tls (NULL without
 * TLS; api_tls_free()) and sha, the SHA-256 of what was read (zeros without TLS). 0, or a
 * negative error with what went wrong (naming the file) in err: nothing is built then. */
static int read_tls(const struct vsl_config *cfg, struct api_tls **tls, unsigned char sha[32],
                    char *err, size_t errlen)
{
    const char *cf = cfg->server.tls_cert, *kf = cfg->server.tls_key;
    char *cert = NULL, *key = NULL; /* owned; key wiped */
    gnutls_hash_hd_t h = NULL;
    char e[400] = "";
    int r;

    *tls = NULL;
    memset(sha, 0, 32);
    if (!cf || !kf)
        return 0;
    if ((r = vsl_read_file(cf, 1 << 20, &cert)) < 0) {
        snprintf(err, errlen, "[server] tls_cert %s: cannot read: %s", cf, vsl_strerror(r));
        goto out;
    }
    if ((r = vsl_read_secret_file(kf, 1 << 20, &key)) < 0) {
        snprintf(err, errlen, "[server] tls_key %s: cannot read: %s", kf, vsl_strerror(r));
        goto out;
    }
    if ((r = api_tls_new(cert, key, tls, e, sizeof(e))) < 0) {
        snprintf(err, errlen, "[server] tls_cert %s and tls_key %s: %s", cf, kf, e);
        goto out;
    }
    /* The lengths keep a boundary moved between the files from giving the same digest. */
    size_t lens[2] = {strlen(cert), strlen(key)};
    if (gnutls_hash_init(&h, GNUTLS_DIG_SHA256) < 0 || gnutls_hash(h, lens, sizeof(lens)) < 0 ||
        gnutls_hash(h, cert, lens[0]) < 0 || gnutls_hash(h, key, lens[1]) < 0) {
        snprintf(err, errlen, "[server] tls_cert %s: cannot hash it", cf);
        api_tls_free(*tls);
        *tls = NULL;
        r = -ENOMEM;
    }
out:
    if (h)
        gnutls_hash_deinit(h, r == 0 ? sha : NULL);
    free(cert);
    vsl_config_wipe(key);
    return r;
}

/* Whether the running server (a, its token ta and TLS files' digest fa) serves as b (tb, fb) asks:
 * compared by contents, as a renewed certificate or a new token keeps its path. */
static int same_server(const struct vsl_config *a, const struct vsl_config *b, const char *ta,
                       const char *tb, const unsigned char fa[32], const unsigned char fb[32])
{
    const struct vsl_server_conf *x = &a->server, *y = &b->server;

    return streq(x->listen, y->listen) && streq(ta, tb) && x->auth_all == y->auth_all &&
           streq(x->tls_cert, y->tls_cert) && streq(x->tls_key, y->tls_key) && !memcmp(fa, fb, 32) &&
           x->max_connections == y->max_connections && x->timeout_s == y->timeout_s &&
           x->max_per_address == y->max_per_address &&
           x->header_timeout_s == y->header_timeout_s &&
           streq(a->db_path, b->db_path);
}

/* SIGHUP: read and validate the file again; on any problem keep running as before. A SIGTERM
 * or SIGINT while it waits for the polls in flight ends the wait: returns that signal (the
 * daemon stops, within STOP_GRACE_MS as after any SIGTERM), else 0. */
static int reload(struct serve *sv)
{
    struct vsl_config *cfg = NULL;
    struct poller *ps = NULL;
    struct vsl_buf errors;
    char *token = NULL;
    struct api_tls *tls = NULL; /* owned until it becomes sv->tls */
    unsigned char tls_sha[32];
    char err[600];
    sigset_t term;
    int sig = 0;

    vsl_buf_init(&errors, 64 * 1024);
    if (vsl_config_load(sv->cfg->path, &cfg, &errors) < 0) {
        char *nl = errors.data ? strchr(errors.data, '\n') : NULL;
        if (nl)
            *nl = '\0';
        log_warnx("reload: %s; keeping the running configuration",
                  errors.data ? errors.data : "cannot read the configuration");
        goto out;
    }
    log_config_warnings(cfg);
    if (read_token(cfg, &token) < 0) {
        log_warnx("reload: keeping the running configuration");
        goto out;
    }
    /* Built from the files, read once, before anything stops: a certificate renewed without
     * its key (or a key file left empty) fails here, with the running server untouched. */
    if (read_tls(cfg, &tls, tls_sha, err, sizeof(err)) < 0) {
        log_warnx("reload: %s; keeping the running configuration", err);
        goto out;
    }
    /* Finish the polls in flight under the old configuration, then carry their state over:
     * copied while a poller still ran, a poll's result could be lost (or read half-written). */
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    sigaddset(&term, SIGINT);
    stop_pollers(sv, 0, &term, &sig);
    if (sig)
        goto out; /* the pollers stop; cmd_serve() waits for them within its bound */
    stop_digest(sv);
    if (make_pollers(sv, cfg, sv->pollers, sv->n, &ps) < 0) {
        pthread_mutex_lock(&sv->mu);
        for (size_t i = 0; i < sv->n; i++)
            sv->pollers[i].stop = 0;
        pthread_mutex_unlock(&sv->mu);
        start_pollers(sv);
        start_digest(sv);
        goto out;
    }
    /* A new zone is set with no other thread alive to read the environment meanwhile (SQLite
     * reads TMPDIR on the HTTP threads): the HTTP server restarts around it. */
    const char *zone = cfg->digest.line ? cfg->digest.timezone : NULL;
    int new_zone = !vsl_sched_process_zone_is(zone);
    /* No server (a reload before failed to start either): this one tries again. */
    if (new_zone || !sv->api ||
        !same_server(sv->cfg, cfg, sv->token, token, sv->tls_sha, tls_sha)) {
        api_stop(sv->api);
        sv->api = NULL;
        if (new_zone)
            vsl_sched_set_process_zone(zone);
        if (start_api(sv, cfg, token, tls) < 0) {
            log_warnx("reload: the new [server] does not start; serving the old one");
            if (start_api(sv, sv->cfg, sv->token, sv->tls) < 0)
                log_warnx("reload: the old [server] does not start either: not serving HTTP "
                          "until a reload starts one");
        } else {
            vsl_config_wipe(sv->token);
            sv->token = token;
            token = NULL;
            api_tls_free(sv->tls);
            sv->tls = tls;
            tls = NULL;
            memcpy(sv->tls_sha, tls_sha, sizeof(tls_sha));
        }
    }
    pthread_mutex_lock(&sv->mu);
    struct poller *old = sv->pollers;
    struct vsl_config *oldcfg = sv->cfg;
    sv->pollers = ps;
    sv->n = vsl_config_nsources(cfg);
    sv->cfg = cfg;
    sv->cfg_gen++;
    pthread_mutex_unlock(&sv->mu);
    ps = NULL;
    cfg = NULL;
    free(old);
    vsl_config_free(oldcfg);
    start_pollers(sv);
    start_digest(sv);
    log_info("reloaded %s (%zu vCenter%s)", sv->cfg->path, sv->n, sv->n == 1 ? "" : "s");
out:
    vsl_config_wipe(token);
    api_tls_free(tls);
    free(ps);
    vsl_config_free(cfg);
    vsl_buf_free(&errors);
    return sig;
}

int cmd_serve(const struct vsl_args *a)
{
    struct serve sv = {0};
    int rc = VSL_EXIT_FAIL, sig;
    sigset_t set;
    pthread_condattr_t ca;

    if (vsl_cli_load_config(a->config, &sv.cfg, VSL_CONFIG_SERVE) < 0)
        return VSL_EXIT_FAIL;
    /* journald keeps each line's priority (and with journal, its vCenter and check as fields
     * to filter on); stderr would lose them. */
    log_init(a->verbose, !a->log || !strcmp(a->log, "stderr") ? LOG_TO_STDERR
                         : !strcmp(a->log, "syslog")           ? LOG_TO_SYSLOG
                                                               : LOG_TO_JOURNAL);

    /* Signals are taken by sigwait() in this thread only: block them before any thread starts
     * so every thread inherits the mask. */
    signal(SIGPIPE, SIG_IGN);
    sigemptyset(&set);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);

    pthread_mutex_init(&sv.mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&sv.cv, &ca);
    pthread_condattr_destroy(&ca);

    log_config_warnings(sv.cfg);
    /* Before any thread: the digest's local times then never change the environment. */
    vsl_sched_set_process_zone(sv.cfg->digest.line ? sv.cfg->digest.timezone : NULL);
    if (read_token(sv.cfg, &sv.token) < 0)
        goto out;
    if (make_pollers(&sv, sv.cfg, NULL, 0, &sv.pollers) < 0)
        goto out;
    sv.n = vsl_config_nsources(sv.cfg);
    char err[600];
    if (read_tls(sv.cfg, &sv.tls, sv.tls_sha, err, sizeof(err)) < 0) {
        log_warnx("%s", err);
        goto out;
    }
    if (start_api(&sv, sv.cfg, sv.token, sv.tls) < 0)
        goto out;
    if (!sv.cfg->server.token_file)
        log_info("no [server] token_file: POST /api/v1/polls is refused");
    /* Before the pollers, which ask it to trim; from this thread, so at the daemon's priority. */
    if (vsl_worker_start(&sv.trimmer, trimmer_main, &sv) < 0)
        log_debug("cannot start the heap trimmer's thread: the pollers trim");
    if (start_pollers(&sv) < 0)
        goto stop;
    start_digest(&sv);
    for (;;) {
        if (sigwait(&set, &sig) != 0)
            continue;
        if (sig == SIGHUP) {
            log_info("SIGHUP: reloading %s", sv.cfg->path);
            sig = reload(&sv);
            if (!sig)
                continue;
            log_info("reload abandoned for %s", sig == SIGTERM ? "SIGTERM" : "SIGINT");
        }
        log_info("%s: stopping", sig == SIGTERM ? "SIGTERM" : "SIGINT");
        break;
    }
    rc = VSL_EXIT_OK;
stop:
    /* First, so that the polls are abandoned while the HTTP server finishes its requests.
     * stop with cancel: a poller whose abandoned poll returns at once must not start the next
     * one it finds due (each would be abandoned at once, in a tight loop, for as long as
     * api_stop() waits for a slow request). */
    pthread_mutex_lock(&sv.mu);
    for (size_t i = 0; i < sv.n; i++) {
        atomic_store(&sv.pollers[i].cancel, 1);
        sv.pollers[i].stop = 1;
    }
    pthread_cond_broadcast(&sv.cv);
    pthread_mutex_unlock(&sv.mu);
    api_stop(sv.api);
    sv.api = NULL;
    stop_digest(&sv);
    if (stop_pollers(&sv, STOP_GRACE_MS, NULL, NULL)) {
        /* A poll still in flight writes inside one transaction: leaving now loses only that
         * poll, and SQLite rolls it back on the next open. */
        log_warnx("a poll did not finish within %d s; exiting without it", STOP_GRACE_MS / 1000);
        _exit(rc);
    }
out:
    api_stop(sv.api);
    vsl_worker_stop(&sv.trimmer, &sv.mu, &sv.cv); /* the pollers are joined: none asks now */
    free(sv.pollers);
    vsl_config_wipe(sv.token);
    api_tls_free(sv.tls); /* after api_stop(): the server borrowed it */
    vsl_config_free(sv.cfg);
    pthread_cond_destroy(&sv.cv);
    json_decref(sv.rule_errors);
    pthread_mutex_destroy(&sv.mu);
    return rc;
}
