/* vsl_poll(): the glue between vsphere/ and db/. The password is read just before login and
 * wiped right after; it never reaches a log line, the database or an error message. */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "arrays/unity.h"
#include "daemon/poll.h"
#include "util/capture.h"
#include "util/clock.h"
#include "util/err.h"
#include <stdlib.h>

#include "db/history.h"
#include "db/prune.h"
#include "db/update.h"
#include "util/log.h"
#include "vsphere/collect.h"
#include "vsphere/session.h"
#include "vsphere/updates.h"

int64_t vsl_now_ms(void)
{
#ifdef VSL_TEST_HOOKS
    /* A stored capture (tests/captures/) is judged at the time it was recorded: the ages of its
     * snapshots are those of that day, whenever the test runs. */
    const char *fixed = getenv("VSLINT_TEST_NOW_MS");
    if (fixed && *fixed)
        return strtoll(fixed, NULL, 10);
#endif
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t vsl_monotonic_ms(void)
{
    return vsl_mono_ms();
}

void vsl_db_settings(struct db *db, const struct vsl_config *cfg)
{
    db_set_capacity_retention(db, cfg->capacity_retention_days);
    db_set_retention(db, (int64_t)cfg->round_window_s * 1000,
                     (int64_t)cfg->poll_retention_days * DB_DAY_MS,
                     (int64_t)cfg->findings_retention_days * DB_DAY_MS);
}

/* After a poll or a round: what is past retention goes, a few small transactions at most (see
 * db_prune()). A failure costs nothing but the pruning: logged, and tried at the next poll. */
static void prune(struct db *db, const char *name)
{
    struct db_prune_stats s;
    int r = db_prune(db, vsl_now_ms(), &s);

    if (r < 0)
        log_warnx("%s: cannot prune the database: %s", name, vsl_strerror(r));
    else if (s.polls || s.findings || s.digests || s.pages_freed)
        log_info("%s: pruned %lld polls, %lld resolved findings, %lld digests in %lld ms; "
                 "%lld free pages given back",
                 name, (long long)s.polls, (long long)s.findings, (long long)s.digests,
                 (long long)s.duration_ms, (long long)s.pages_freed);
}

/* The client of a vCenter (vim) or of an array (arr; the other is NULL), for the steps a poll
 * of either takes alike: log in, read into one snapshot, read again once when the session
 * expired or a page may have been lost. */
struct client {
    struct vim_client *vim; /* owned, as arr is */
    struct arr_client *arr;
    const char *kind; /* "vcenter", "array": how the log lines name it */
    int64_t t0;       /* monotonic: when the poll began */
    struct vsl_capture *capture; /* borrowed, or NULL: `vslint record`'s */
    const _Atomic int *cancel;   /* borrowed, or NULL: set when the daemon stops */
};

/* Whether the poll was abandoned because the daemon stops (not a failure of the vCenter). */
static int abandoned(const struct client *c)
{
    return c->cancel && atomic_load(c->cancel);
}

/* Whether a poll of c that ended with r logs out of vCenter (or the array). One that succeeded
 * or was abandoned does (the daemon stopping leaves no session behind), and so does one that
 * failed while vCenter still answered (a fault, a malformed answer, a row the database
 * refused): its session would stay open until vCenter's idle timeout, one more with each retry
 * of a read that keeps failing. A vCenter that did not answer, or a login that made no
 * session, is not asked again. `vslint record` follows the same rule, so a capture replays as
 * the poll went. */
static int logs_out(const struct client *c, int r)
{
    return r == 0 || abandoned(c) ||
           (r != -VSL_ENET && r != -VSL_ETLS && r != -VSL_ELOGIN && r != -VSL_ENOAUTH);
}

static const char *client_error(const struct client *c)
{
    return c->vim ? vim_client_error(c->vim) : arr_client_error(c->arr);
}

static int login(const struct client *c, const struct vsl_vcenter_conf *conf, char *err, size_t len)
{
    char *password = NULL;
    int r = vsl_config_password(conf, &password, err, len);

    if (r < 0)
        return r;
    /* A recording removes the password wherever it shows, not only from the Login request. */
    if (c->capture)
        r = vsl_capture_secret(c->capture, password);
    if (r == 0 && c->capture)
        r = vsl_capture_user(c->capture, conf->user);
    if (r == 0)
        r = c->vim ? vim_login(c->vim, conf->user, password)
                   : arr_login(c->arr, conf->user, password);
    vsl_config_wipe(password);
    if (r < 0)
        snprintf(err, len, "%s", client_error(c));
    return r;
}

static int collect_once(struct db *db, const struct client *c, const struct vsl_vcenter_conf *conf,
                        struct vsl_poll_result *res)
{
    struct db_snapshot *snap = NULL;
    struct vim_sink sink;
    int r;

    /* A second attempt (after a new login) starts clean: a database error the first one met
     * must not mark the database unwritable after a read that went well. */
    res->error[0] = '\0';
    res->db_err = 0;
    r = db_snapshot_begin(db, conf->name, conf->url, &snap, &sink);
    if (r < 0) {
        snprintf(res->error, sizeof(res->error), "cannot write the database: %s",
                 vsl_strerror(r));
        res->db_err = r;
        return r;
    }
    if (c->arr)
        db_snapshot_set_kind(snap, conf->type);
    r = c->vim ? vim_collect(c->vim, &sink) : arr_collect(c->arr, &sink);
    if (r == 0)
        r = db_snapshot_sync(snap);
    /* Stopping after the last answer: the copy and commit (seconds at 100,000 VMs) are not
     * begun, the previous snapshot stays. */
    if (r == 0 && abandoned(c))
        r = -ECANCELED;
    if (r < 0 && abandoned(c)) {
        snprintf(res->error, sizeof(res->error), "abandoned: the daemon is stopping");
        db_snapshot_abort(snap);
        return -ECANCELED;
    }
    if (r < 0) {
        /* A row the database refused ends the read too: that is the error to report, not
         * whatever the source's last words were. */
        if (db_snapshot_error(snap)) {
            snprintf(res->error, sizeof(res->error), "cannot write the database: %s",
                     db_snapshot_error(snap));
            res->db_err = r;
        } else {
            snprintf(res->error, sizeof(res->error), "%s", client_error(c));
        }
        db_snapshot_abort(snap);
        return r;
    }
    r = db_snapshot_commit(snap, res->started_ms, vsl_now_ms(), res->counts);
    if (r < 0) {
        snprintf(res->error, sizeof(res->error), "cannot commit the snapshot: %s",
                 vsl_strerror(r));
        res->db_err = r;
    }
    return r;
}

/* collect_once(), and once more after logging in again when the session was refused
 * (expired), or at once when a page may have been lost: a second expiry or interruption in a
 * row is reported, not chased. */
static int collect(struct db *db, const struct client *c, const struct vsl_vcenter_conf *conf,
                   struct vsl_poll_result *res)
{
    int r = collect_once(db, c, conf, res);

    if (r == -VSL_ENOAUTH) {
        log_info("%s %s: session %s during the poll; logging in again", c->kind, conf->name,
                 c->vim ? "expired" : "refused");
        r = login(c, conf, res->error, sizeof(res->error));
        if (r == 0)
            r = collect_once(db, c, conf, res);
    } else if (r == -VSL_ERETRY) {
        log_info("%s %s: %s; polling again", c->kind, conf->name, client_error(c));
        r = collect_once(db, c, conf, res);
    }
    return r;
}

/* res->error for a client that could not be made (r from vim_client_new, arr_client_new). */
static void client_new_failed(int r, struct vsl_poll_result *res)
{
    if (r == -ENOTSUP)
        snprintf(res->error, sizeof(res->error),
                 "thumbprint= needs libcurl built with OpenSSL (libcurl4-openssl): this one "
                 "cannot pin a certificate");
    else
        snprintf(res->error, sizeof(res->error), "%s", vsl_strerror(r));
}

/* The session kept between a full read and the incremental rounds that follow it. */
struct vsl_follow {
    struct vim_client *c;
    struct vim_watch w;
    int64_t hosts_due_ms; /* monotonic: when every host's per-host reads are due again */
};

static void client_stats(const struct vim_client *c, struct vsl_poll_result *res)
{
    res->requests = c->stats.requests;
    res->bytes_wire = c->stats.bytes_wire;
    res->bytes_xml = c->stats.bytes_xml;
}

/* The connection settings of a [vcenter] or [array] section, which both clients take alike:
 * designated initializers of struct vim_opts and struct arr_opts. */
#define TRANSPORT_OPTS(conf)                                                                       \
    .url = (conf)->url, .ca_file = (conf)->ca_file, .insecure = (conf)->insecure,                  \
    .thumbprint = (conf)->thumbprint, .timeout_s = (conf)->timeout_s

/* Begins a poll of conf, an array's when conf->type is set, else a vCenter's: res cleared and
 * started, c's client made (a vCenter's also connected: its service content read) and logged
 * in. On failure res->error says why; poll_end() frees what was made. */
static int poll_begin(const struct vsl_vcenter_conf *conf, _Atomic int64_t *activity_ms,
                      const _Atomic int *cancel, struct vsl_capture *capture, const char *label,
                      struct client *c, struct vsl_poll_result *res)
{
    int r;

    *c = (struct client){.kind = conf->type ? "array" : "vcenter",
                         .t0 = vsl_monotonic_ms(),
                         .capture = capture,
                         .cancel = cancel};
    memset(res, 0, sizeof(*res));
    res->started_ms = vsl_now_ms();
    if (conf->type) {
        struct arr_opts opts = {TRANSPORT_OPTS(conf), .cancel = cancel, .capture = capture,
                                .capture_source = label};
        r = arr_client_new(&opts, &c->arr);
    } else {
        struct vim_opts opts = {
            TRANSPORT_OPTS(conf),
            .max_objects = conf->max_objects,
            .activity_ms = activity_ms,
            .cancel = cancel,
            .capture = capture,
            .capture_source = label,
        };
        r = vim_client_new(&opts, &c->vim);
    }
    if (r < 0) {
        client_new_failed(r, res);
        return r;
    }
    if (c->vim && (r = vim_connect(c->vim)) < 0) {
        snprintf(res->error, sizeof(res->error), "%s", client_error(c));
        return r;
    }
    return login(c, conf, res->error, sizeof(res->error));
}

/* Ends a poll that poll_begin() began and that came out as r: its duration, the client's
 * traffic and the outcome into res, a failure into the history; frees the client. Returns r. */
static int poll_end(struct db *db, const struct vsl_vcenter_conf *conf, struct client *c, int r,
                    struct vsl_poll_result *res)
{
    res->duration_ms = vsl_monotonic_ms() - c->t0;
    if (c->vim)
        client_stats(c->vim, res);
    if (c->arr) {
        res->requests = c->arr->requests;
        res->bytes_wire = c->arr->bytes;
        res->bytes_xml = c->arr->bytes;
    }
    res->ok = r == 0;
    res->abandoned = r < 0 && abandoned(c);
    if (res->abandoned)
        snprintf(res->error, sizeof(res->error), "abandoned: the daemon is stopping");
    else if (r < 0 && conf->type)
        db_array_poll_failed(db, conf->name, conf->url, conf->type, res->started_ms, vsl_now_ms(),
                             res->error);
    else if (r < 0)
        db_poll_failed(db, conf->name, conf->url, res->started_ms, vsl_now_ms(), res->error);
    vim_client_free(c->vim);
    arr_client_free(c->arr);
    return r;
}

int vsl_poll(struct db *db, const struct vsl_vcenter_conf *vc, struct vsl_poll_result *res)
{
    return vsl_poll_full(db, vc, NULL, NULL, res, NULL);
}

int vsl_poll_full(struct db *db, const struct vsl_vcenter_conf *vc, _Atomic int64_t *activity_ms,
                  const _Atomic int *cancel, struct vsl_poll_result *res,
                  struct vsl_follow **follow)
{
    struct client cl;
    int r;

    assert(!vc->type);
    r = poll_begin(vc, activity_ms, cancel, NULL, NULL, &cl, res);
    if (r < 0)
        goto out;
    struct vim_client *c = cl.vim;
    struct vsl_follow *f = NULL;
    if (follow && !(f = calloc(1, sizeof(*f)))) {
        r = -ENOMEM;
        goto out;
    }
    /* The filter comes first: a change made during the read is then delivered by the first
     * round after it (and applied again, which changes nothing), never lost between the two. */
    if (f && vim_watch_start(c, &f->w) < 0) {
        log_warnx("vcenter %s: cannot follow changes (%s); polling in full every %d s",
                  vc->name, vim_client_error(c), vc->interval_s);
        free(f);
        f = NULL;
    }
    r = collect(db, &cl, vc, res);
    if (r == 0 && f) {
        res->duration_ms = vsl_monotonic_ms() - cl.t0;
        client_stats(c, res);
        res->ok = 1;
        f->c = c;
        f->hosts_due_ms = vsl_monotonic_ms() + (int64_t)vc->host_reads_every_s * 1000;
        *follow = f;
        prune(db, vc->name);
        return 0;
    }
    if (f) {
        vim_watch_stop(c, &f->w);
        free(f);
    }
    if (logs_out(&cl, r))
        vim_logout(c);
out:
    r = poll_end(db, vc, &cl, r, res);
    if (!res->db_err && !res->abandoned)
        prune(db, vc->name);
    return r;
}

const char *vsl_follow_version(const struct vsl_follow *f)
{
    return f && f->w.version ? f->w.version : "";
}

void vsl_follow_free(struct vsl_follow *f)
{
    if (!f)
        return;
    vim_watch_stop(f->c, &f->w);
    vim_logout(f->c);
    vim_client_free(f->c);
    free(f);
}

/* Applies cs in one transaction: every changed object's rows go, the entered and modified ones
 * are read again by moref (with the per-host reads of the hosts among them); the round is
 * recorded in the polls table in the same transaction, as one that began at answered_ms. */
static int apply_changes(struct db *db, const struct vsl_vcenter_conf *vc, struct vsl_follow *f,
                         const struct vim_changes *cs, int64_t answered_ms, int64_t bytes,
                         struct vsl_poll_result *res)
{
    struct vim_client *c = f->c;
    struct db_snapshot *u = NULL;
    struct vim_sink sink;
    int r = db_update_begin(db, vc->name, &u, &sink);

    if (r < 0) {
        snprintf(res->error, sizeof(res->error), "cannot write the database: %s",
                 vsl_strerror(r));
        res->db_err = r;
        return r;
    }
    for (size_t i = 0; i < cs->n && r == 0; i++) {
        r = db_update_forget(u, cs->v[i].type, cs->v[i].moref);
        if (r < 0)
            snprintf(res->error, sizeof(res->error), "cannot update %s %s: %s", cs->v[i].type,
                     cs->v[i].moref, vsl_strerror(r));
    }
    if (r == 0) {
        r = vim_collect_changes(c, cs, &sink);
        if (r < 0 && db_snapshot_error(u)) {
            snprintf(res->error, sizeof(res->error), "cannot write the database: %s",
                     db_snapshot_error(u));
            res->db_err = r;
        } else if (r < 0) {
            snprintf(res->error, sizeof(res->error), "%s", vim_client_error(c));
        }
    }
    /* Stopping after the last answer: the round is abandoned whole, not committed with
     * whatever of it was read (nothing of it is stored). */
    if (r == 0 && c->opts.cancel && atomic_load(c->opts.cancel)) {
        snprintf(res->error, sizeof(res->error), "%s: abandoned (stopping)", vc->name);
        r = -ECANCELED;
    }
    if (r < 0) {
        db_snapshot_abort(u);
        return r;
    }
    r = db_update_commit(u, &(struct db_round){.started_ms = answered_ms,
                                               .finished_ms = vsl_now_ms(),
                                               .version = f->w.version,
                                               .bytes = c->stats.bytes_wire - bytes});
    if (r < 0) {
        snprintf(res->error, sizeof(res->error), "cannot commit the changes: %s",
                 vsl_strerror(r));
        res->db_err = r;
    }
    return r;
}

int vsl_poll_changes(struct db *db, const struct vsl_vcenter_conf *vc, struct vsl_follow *f,
                     int max_wait_s, struct vsl_poll_result *res, size_t *changes)
{
    struct vim_changes cs = {0};
    struct vim_stats before = f->c->stats;
    int64_t t0 = vsl_monotonic_ms();
    int r;

    memset(res, 0, sizeof(*res));
    *changes = 0;
    res->started_ms = vsl_now_ms();
    r = vim_watch_wait(f->c, &f->w, max_wait_s, &cs);
    if (r < 0)
        snprintf(res->error, sizeof(res->error), "%s", vim_client_error(f->c));
    /* The round's cost is from the answer on: the wait itself costs vCenter nothing. */
    int64_t t1 = vsl_monotonic_ms(), answered_ms = vsl_now_ms();
    /* What the property collector cannot follow (esxcli, advanced options, iSCSI bindings) is
     * read again on its own interval: every host as if it had changed, by moref. */
    if (r == 0 && vc->host_reads_every_s > 0 && t1 >= f->hosts_due_ms) {
        int added = vim_watch_add_hosts(&f->w, &cs);
        if (added < 0) {
            r = added;
            snprintf(res->error, sizeof(res->error), "%s", vsl_strerror(r));
        } else {
            if (added > 0)
                log_info("vcenter %s: reading %d hosts again (host_reads_every %d s)", vc->name,
                         added, vc->host_reads_every_s);
            f->hosts_due_ms = t1 + (int64_t)vc->host_reads_every_s * 1000;
        }
    }
    if (r == 0 && cs.n > 0) {
        log_debug("vcenter %s: %zu objects changed (version %s) after %lld ms", vc->name, cs.n,
                  vsl_follow_version(f), (long long)(t1 - t0));
        r = apply_changes(db, vc, f, &cs, answered_ms, before.bytes_wire, res);
    }
    /* The snapshot is current as of this answer, changed or not: its age moves on. */
    if (r == 0) {
        r = db_update_confirm(db, vc->name, vsl_now_ms());
        if (r < 0) {
            snprintf(res->error, sizeof(res->error), "cannot write the database: %s",
                     vsl_strerror(r));
            res->db_err = r;
        }
    }
    /* Stopping is not a failure of the vCenter: an abandoned round is not recorded. */
    res->abandoned = r < 0 && f->c->opts.cancel && atomic_load(f->c->opts.cancel);
    if (res->abandoned)
        snprintf(res->error, sizeof(res->error), "abandoned: the daemon is stopping");
    /* A round that failed is in the history too (quiet ones are not: one every maxWait
     * seconds would bury the rest). A database that cannot be written will not take it. */
    if (r < 0 && !res->db_err && !res->abandoned &&
        db_update_failed(db, vc->name,
                         &(struct db_round){.started_ms = answered_ms,
                                            .finished_ms = vsl_now_ms(),
                                            .version = f->w.version,
                                            .bytes = f->c->stats.bytes_wire - before.bytes_wire},
                         res->error) < 0)
        log_debug("vcenter %s: cannot record the failed round", vc->name);
    if (r == 0 && cs.n > 0)
        prune(db, vc->name);
    *changes = cs.n;
    vim_changes_free(&cs);
    res->duration_ms = vsl_monotonic_ms() - t1;
    client_stats(f->c, res);
    res->requests -= before.requests;
    res->bytes_wire -= before.bytes_wire;
    res->bytes_xml -= before.bytes_xml;
    res->ok = r == 0;
    return r;
}

/* ---- arrays ------------------------------------------------------------------------------- */

int vsl_array_poll(struct db *db, const struct vsl_vcenter_conf *ac, struct vsl_poll_result *res)
{
    return vsl_array_poll_full(db, ac, NULL, res);
}

int vsl_array_poll_full(struct db *db, const struct vsl_vcenter_conf *ac,
                        const _Atomic int *cancel, struct vsl_poll_result *res)
{
    struct client cl;
    int r;

    assert(ac->type);
    r = poll_begin(ac, NULL, cancel, NULL, NULL, &cl, res);
    /* As for a vCenter: an expired session, or instances that moved while paged. */
    if (r == 0)
        r = collect(db, &cl, ac, res);
    if (cl.arr && logs_out(&cl, r) && arr_logout(cl.arr) < 0)
        log_debug("array %s: logout: %s", ac->name, arr_client_error(cl.arr));
    r = poll_end(db, ac, &cl, r, res);
    if (!res->db_err && !res->abandoned)
        prune(db, ac->name);
    return r;
}

int vsl_record(const struct vsl_vcenter_conf *conf, struct vsl_capture *capture,
               const char *label, struct vsl_poll_result *res)
{
    /* The rows go to a database in memory: the decoders and the arrays' readers run exactly as
     * a poll runs them (every row kind has its sink), nothing is stored in the configured
     * database, and no file ever holds the un-anonymized rows (db_open() makes SQLite's
     * temporary storage, the staging database's, memory too), so none is left behind when
     * the record is interrupted (a signal ends it where it stands). */
    struct db *db = NULL;
    char *dberr = NULL;
    struct client cl;
    int r = poll_begin(conf, NULL, NULL, capture, label, &cl, res);

    if (r == 0 && (r = db_open(DB_MEMORY, &db, &dberr)) < 0)
        snprintf(res->error, sizeof(res->error), "cannot make a database in memory: %s",
                 dberr ? dberr : vsl_strerror(r));
    free(dberr);
    /* The reads `vslint collect` makes, its one read again included (a session that expired, a
     * page that may have been lost): the capture replays as the poll went. */
    if (r == 0)
        r = collect(db, &cl, conf, res);
    if (cl.vim && logs_out(&cl, r))
        vim_logout(cl.vim);
    else if (cl.arr && logs_out(&cl, r))
        arr_logout(cl.arr);
    res->duration_ms = vsl_monotonic_ms() - cl.t0;
    if (cl.vim)
        client_stats(cl.vim, res);
    if (cl.arr)
        res->requests = cl.arr->requests;
    res->ok = r == 0;
    db_close(db);
    vim_client_free(cl.vim);
    arr_client_free(cl.arr);
    return r;
}
