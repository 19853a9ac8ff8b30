/* /api/v1/summary: counts of open findings, the score, and each vCenter's polling state
 * (last poll, duration, staleness, error) as the daemon's pollers see it, with what its last
 * poll could not read. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/api-private.h"
#include "db/digest.h"
#include "db/pages.h"
#include "db/findings.h"
#include "util/err.h"
#include "util/log.h"

/* 100 minus the weighted open, unwaived findings per object checked: a critical weighs 10, a
 * warning 3, an info 1, and an estate with one critical finding on every object scores 0.
 * score = round(100 * (1 - min(1, (10 C + 3 W + I) / (10 N)))), N = datastores + hosts + VMs
 * stored (at least 1). Per object, so a large estate is not punished for being large. */
int api_score(int64_t critical, int64_t warning, int64_t info, int64_t objects)
{
    double penalty = 10.0 * (double)critical + 3.0 * (double)warning + (double)info;
    double ratio = penalty / (10.0 * (double)(objects > 0 ? objects : 1));

    if (ratio > 1.0)
        ratio = 1.0;
    return (int)lround(100.0 * (1.0 - ratio));
}

int api_counts(struct db *db, const char *vcenter, json_t **counts, int64_t objs[3], int *score)
{
    int rc = db_findings_summary(db, vcenter, counts);

    if (rc == 0)
        rc = db_object_counts(db, vcenter, objs);
    if (rc < 0) {
        json_decref(*counts);
        *counts = NULL;
        return rc;
    }
    const json_t *sev = json_object_get(*counts, "by_severity");
    *score = api_score(json_integer_value(json_object_get(sev, "critical")),
                       json_integer_value(json_object_get(sev, "warning")),
                       json_integer_value(json_object_get(sev, "info")),
                       objs[0] + objs[1] + objs[2]);
    return 0;
}

json_t *api_vcenter_mode_json(const struct api_vcenter_status *s, json_t *o)
{
    char t[32];

    json_object_set_new(o, "mode", json_string(s->incremental ? "incremental" : "full"));
    json_object_set_new(o, "collector_version", s->incremental ? json_string(s->version)
                                                               : json_null());
    json_object_set_new(o, "last_full_read",
                        s->last_full_ms ? json_string(api_iso_time(s->last_full_ms, t, sizeof(t)))
                                        : json_null());
    return o;
}

static json_t *vcenter_json(const struct api_vcenter_status *s)
{
    char t[32], t2[32];
    json_t *o = json_pack("{s:s,s:s,s:b,s:b,s:b,s:i,s:i}", "name", s->name, "url", s->url,
                          "polled_once", s->polled_once, "polling", s->polling, "stale",
                          s->stale, "backoff_s", s->backoff_s, "consecutive_failures",
                          s->failures);

    if (!o)
        return NULL;
    /* An error cut in the middle of a character (a localised fault) must not make the member
     * vanish: jansson refuses text that is not UTF-8. */
    char err[sizeof(s->error)];
    snprintf(err, sizeof(err), "%s", s->error);
    vsl_utf8_fix(err);
    json_object_set_new(o, "error", err[0] ? json_string(err) : json_null());
    json_object_set_new(o, "stalled", json_boolean(api_stalled(s)));
    json_object_set_new(o, "quiet_s",
                        s->polling ? json_integer((json_int_t)(s->quiet_ms / 1000)) : json_null());
    if (s->last_finished_ms)
        json_object_set_new(
            o, "last_poll",
            json_pack("{s:s,s:s,s:I,s:b}", "started",
                      api_iso_time(s->last_started_ms, t, sizeof(t)), "finished",
                      api_iso_time(s->last_finished_ms, t2, sizeof(t2)), "duration_ms",
                      (json_int_t)s->last_duration_ms, "ok", s->last_ok));
    else
        json_object_set_new(o, "last_poll", json_null());
    json_object_set_new(o, "last_success",
                        s->last_success_ms ? json_string(api_iso_time(s->last_success_ms, t,
                                                                      sizeof(t)))
                                           : json_null());
    api_vcenter_mode_json(s, o);
    json_object_set_new(o, "next_poll",
                        s->next_poll_ms ? json_string(api_iso_time(s->next_poll_ms, t, sizeof(t)))
                                        : json_null());
    return o;
}

/* {"writable": true|false, "error": why|null}: whether the daemon can store new polls. */
static json_t *database_json(struct api_req *r)
{
    char why[512] = "";
    int ok = api_db_writable(r, why, sizeof(why));

    return json_pack("{s:b,s:o}", "writable", ok, "error", ok ? json_null() : json_string(why));
}

/* Appends v (taken) compactly to b. */
static int add_json(struct vsl_buf *b, json_t *v)
{
    char *s = v ? json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY) : NULL;
    int rc = s ? vsl_buf_addstr(b, s) : -ENOMEM;

    free(s);
    json_decref(v);
    return rc;
}

/* Appends ,"member": and v to b unless rc, an earlier append's result, failed; v is taken
 * either way. The result of the appends. */
static int add_member(struct vsl_buf *b, int rc, const char *member, json_t *v)
{
    if (rc == 0)
        rc = vsl_buf_printf(b, ",\"%s\":", member);
    if (rc == 0)
        return add_json(b, v);
    json_decref(v);
    return rc;
}

#define DAY_MS    86400000LL
#define MINUTE_MS 60000LL

/* {"from", "new", "resolved"}: what changed since from_ms (db_findings_changes()). */
static json_t *window_json(struct db *db, const char *only, int64_t from_ms, int *rc)
{
    int64_t n = 0, fixed = 0;
    char t[32];

    /* To the end of time: a finding recorded in this minute belongs in the window too. */
    *rc = db_findings_changes(db, only, from_ms, INT64_MAX, &n, &fixed);
    return *rc < 0 ? NULL
                   : json_pack("{s:s,s:I,s:I}", "from", api_iso_time(from_ms, t, sizeof(t)), "new",
                               (json_int_t)n, "resolved", (json_int_t)fixed);
}

/* {"last_24h": window, "since_digest": window or null (no digest sent yet)}. */
static json_t *changes_json(struct db *db, const char *only, int64_t minute_ms, int *rc)
{
    struct db_digest d;
    json_t *day = window_json(db, only, minute_ms - DAY_MS, rc), *dig = NULL;

    if (*rc == 0) {
        *rc = db_digest_last(db, &d, NULL);
        if (*rc == -VSL_ENOTFOUND) {
            *rc = 0;
            dig = json_null();
        } else if (*rc == 0) {
            dig = window_json(db, only, d.to_ms, rc);
        }
    }
    if (*rc < 0) {
        json_decref(day);
        json_decref(dig);
        return NULL;
    }
    return json_pack("{s:o,s:o}", "last_24h", day, "since_digest", dig);
}

/* {"<object type>": {"affected", "of"}}: the objects with an open finding per kind, "of" the
 * objects of that kind stored (null where the inventory does not count them: parts of hosts,
 * array pools). Datastores, hosts and VMs are always there. */
static json_t *affected_json(struct db *db, const char *only, const int64_t objs[3], int *rc)
{
    static const char *const kinds[3] = {"datastore", "host", "vm"};
    json_t *by = NULL, *out, *v;
    const char *k;

    if ((*rc = db_findings_affected(db, only, &by)) < 0)
        return NULL;
    out = json_object();
    for (int i = 0; i < 3; i++)
        json_object_set_new(out, kinds[i],
                            json_pack("{s:I,s:I}", "affected",
                                      json_integer_value(json_object_get(by, kinds[i])), "of",
                                      (json_int_t)objs[i]));
    json_object_foreach(by, k, v) {
        if (!json_object_get(out, k))
            json_object_set_new(out, k, json_pack("{s:O,s:n}", "affected", v, "of"));
    }
    json_decref(by);
    return out;
}

/* The part of the summary read from the database, {"score":..,"objects":{..},"findings":{..}
 * without its closing brace, into b: from the cache while nobody has written the database
 * since it was counted (counting 3,000 findings and 20,000 VMs takes milliseconds); the
 * pollers' state, which changes with the clock, is added per request. */
static int counted(struct api_req *r, struct db *db, const char *only, struct vsl_buf *b)
{
    uint64_t gen = api_generation(r), h;
    char key[API_MAX_ARG + 64], *s;
    struct api_text *t, *gz;
    size_t len;
    int64_t objs[3] = {0};
    json_t *counts = NULL, *changes, *affected;
    int rc, score;
    /* The windows move with the clock: the key holds the minute, so a cached answer is at
     * most a minute behind the window it names (its "from" says which). */
    int64_t minute = (int64_t)time(NULL) * 1000 / MINUTE_MS * MINUTE_MS;

    /* No request path starts with '#': the key is no answer's. */
    snprintf(key, sizeof(key), "#summary@%lld?%s", (long long)minute, only ? only : "");
    if (api_cache_get(r, key, gen, 0, &t, &gz, &h)) {
        rc = vsl_buf_add(b, t->data, t->len); /* the reference is dropped: b has a copy */
        api_text_unref(t);
        api_text_unref(gz);
        return rc;
    }
    if ((rc = api_counts(db, only, &counts, objs, &score)) < 0)
        return rc;
    if (!(changes = changes_json(db, only, minute, &rc))) {
        json_decref(counts);
        return rc < 0 ? rc : -ENOMEM;
    }
    if (!(affected = affected_json(db, only, objs, &rc))) {
        json_decref(counts);
        json_decref(changes);
        return rc < 0 ? rc : -ENOMEM;
    }
    json_t *o = json_pack("{s:i,s:{s:I,s:I,s:I},s:o,s:o,s:o}", "score", score, "objects",
                          "datastores", (json_int_t)objs[0], "hosts", (json_int_t)objs[1],
                          "vms", (json_int_t)objs[2], "findings", counts, "changes", changes,
                          "affected", affected);
    s = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(o);
    if (!s)
        return -ENOMEM;
    len = strlen(s) - 1; /* the closing brace: the pollers' state follows */
    api_cache_put(r, key, gen, s, len, 0, NULL, 0);
    rc = vsl_buf_add(b, s, len);
    free(s);
    return rc;
}

/* The gaps last grouped: by server (and its database), vCenter asked and db_gaps_signature().
 * Not the answer cache's generation: an incremental round writes the database every few
 * seconds (its last success) without changing a gap, and grouping 20,000 hosts' gaps takes a
 * good part of a second. One entry: the dashboard asks for all vCenters. */
static struct {
    pthread_mutex_t mu;
    const struct api_server *srv; /* compared, never followed */
    char db_path[512];
    char only[API_MAX_ARG + 2]; /* "*" + the vCenter asked, or "" for all */
    uint64_t sig;
    char *text; /* owned; NULL: nothing kept */
} gaps_memo = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* What each vCenter's last successful read could not read (db_gaps_grouped()) into *out (new
 * reference): from gaps_memo while the gaps are the same. */
static int gaps_json(struct api_req *r, struct db *db, const char *only, json_t **out)
{
    char key[sizeof(gaps_memo.only)], *s = NULL; /* s owned */
    uint64_t sig;
    int rc;

    *out = NULL;
    snprintf(key, sizeof(key), "%s%s", only ? "*" : "", only ? only : "");
    if ((rc = db_gaps_signature(db, only, &sig)) < 0)
        return rc;
    pthread_mutex_lock(&gaps_memo.mu);
    if (gaps_memo.text && gaps_memo.srv == r->srv && gaps_memo.sig == sig &&
        !strcmp(gaps_memo.only, key) && !strcmp(gaps_memo.db_path, r->srv->db_path))
        *out = json_loads(gaps_memo.text, 0, NULL);
    pthread_mutex_unlock(&gaps_memo.mu);
    if (*out)
        return 0;
    if ((rc = db_gaps_grouped(db, only, out)) < 0)
        return rc;
    log_info("api: gaps grouped (vCenter %s)", only ? only : "all");
    if (!(s = json_dumps(*out, JSON_COMPACT | JSON_PRESERVE_ORDER)))
        return 0;
    pthread_mutex_lock(&gaps_memo.mu);
    free(gaps_memo.text);
    gaps_memo.text = s;
    gaps_memo.srv = r->srv;
    gaps_memo.sig = sig;
    snprintf(gaps_memo.only, sizeof(gaps_memo.only), "%s", key);
    snprintf(gaps_memo.db_path, sizeof(gaps_memo.db_path), "%s", r->srv->db_path);
    pthread_mutex_unlock(&gaps_memo.mu);
    return 0;
}

enum MHD_Result api_h_summary(struct api_req *r)
{
    static const char *const names[] = {"vcenter", NULL};
    const char *only = api_arg(r, "vcenter");
    struct api_vcenter_status *st = NULL;
    size_t n = 0;
    json_t *list, *arrays;
    struct vsl_buf b;
    struct db *db;
    int rc;

    if (api_args_allowed(r, names) < 0)
        return api_fail(r);
    if (!(db = api_db(r)))
        return api_db_unavailable(r);
    vsl_buf_init(&b, 16 << 20);
    rc = counted(r, db, only, &b);
    if (rc < 0) {
        vsl_buf_free(&b);
        return api_db_error(r, "summarising findings", rc);
    }
    /* What each vCenter's last poll could not read, for the dashboard's banner. */
    json_t *gaps = NULL;
    rc = gaps_json(r, db, only, &gaps);
    if (rc < 0) {
        /* The banner is worth less than the rest of the page: without it, gaps is null. */
        log_warnx("api: summary without its gaps: reading what the last polls could not read: %s",
                 vsl_strerror(rc));
        gaps = NULL;
    }
    rc = api_status(r, &st, &n);
    if (rc < 0) {
        json_decref(gaps);
        vsl_buf_free(&b);
        return api_db_error(r, "reading the pollers' state", rc);
    }
    list = json_array();
    arrays = json_array();
    for (size_t i = 0; i < n; i++) {
        if (only && strcmp(only, st[i].name))
            continue;
        json_t *o = vcenter_json(&st[i]);
        /* An array is a source like a vCenter: the same polling state, and its type. */
        if (st[i].type[0]) {
            json_object_set_new(o, "type", json_string(st[i].type));
        } else {
            json_t *g = json_object_get(gaps, st[i].name);
            json_object_set_new(o, "gaps", g ? json_incref(g) : gaps ? json_array() : json_null());
        }
        json_array_append_new(st[i].type[0] ? arrays : list, o);
    }
    free(st);
    json_decref(gaps);
    rc = add_member(&b, 0, "vcenters", list);
    rc = add_member(&b, rc, "arrays", arrays);
    /* Whether POST /api/v1/polls can be accepted at all (a token is configured): the
     * dashboard turns "Poll now" off with the reason instead of letting it fail. */
    rc = add_member(&b, rc, "poll_now", json_boolean(r->srv->token != NULL));
    if (rc == 0)
        rc = add_member(&b, rc, "database", database_json(r));
    if (rc == 0)
        rc = vsl_buf_addstr(&b, "}");
    if (rc < 0) {
        vsl_buf_free(&b);
        return MHD_NO;
    }
    size_t len = b.len;
    return api_respond_json_text(r, 0, vsl_buf_take(&b), len);
}
