/* Unit tests for the capacity runway: the Theil-Sen estimate (flat, linear growth, an outlier, a
 * resize, too little history, already below), its JSON, the datastore-runway check, and the
 * capacity history the store keeps (recorded per poll, thinned, aged out, loaded). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks/check.h"
#include "checks/engine.h"
#include "checks/runway.h"
#include "db/capacity.h"
#include "db/changes.h"
#include "db/db.h"
#include "db/findings.h"
#include "util/err.h"
#include "model/estate.h"
#include "testlib.h"

extern const struct check chk_datastore_runway;

#define GIB   ((int64_t)1 << 30)
#define DAYMS ((int64_t)86400000)
#define NOWMS ((int64_t)1700000000000)

/* Points of a datastore of capacity cap, one every step_ms from NOWMS - span_ms to NOWMS, with
 * free space free0 at the first and falling by per_day bytes a day. */
static size_t series(struct est_capacity_point *p, size_t max, int64_t span_ms, int64_t step_ms,
                     int64_t cap, int64_t free0, int64_t per_day)
{
    size_t n = 0;

    for (int64_t t = NOWMS - span_ms; t <= NOWMS && n < max; t += step_ms, n++)
        p[n] = (struct est_capacity_point){
            .t_ms = t,
            .capacity = cap,
            .free_space = free0 - (int64_t)((double)per_day * (double)(t - (NOWMS - span_ms)) /
                                             (double)DAYMS)};
    return n;
}

static struct chk_runway estimate(const struct est_capacity_point *p, size_t n)
{
    struct chk_runway r;

    assert_int_equal(chk_runway_estimate(p, n, NOWMS, 30, 30, 10, &r), 0);
    return r;
}

TEST(test_flat)
{
    struct est_capacity_point p[64];
    size_t n = series(p, 64, 10 * DAYMS, DAYMS / 4, 1000 * GIB, 500 * GIB, 0);
    struct chk_runway r = estimate(p, n);

    assert_true(r.has_growth);
    assert_true(r.growth_bytes_per_day == 0);
    assert_false(r.has_warning);
    assert_false(r.has_critical);
    assert_string_equal(r.reason, "not growing");
    assert_true(fabs(r.history_days - 10) < 1e-9);
}

/* 1000 GiB, 500 GiB free ten days ago, 10 GiB a day: 400 GiB free now, 100 GiB above the 30 %
 * warning (10 days) and 300 GiB above the 10 % critical threshold (30 days). */
TEST(test_linear_growth)
{
    struct est_capacity_point p[64];
    size_t n = series(p, 64, 10 * DAYMS, DAYMS / 2, 1000 * GIB, 500 * GIB, 10 * GIB);
    struct chk_runway r = estimate(p, n);

    assert_true(r.has_growth && r.has_warning && r.has_critical);
    assert_true(fabs(r.growth_bytes_per_day - 10.0 * GIB) < 1.0);
    assert_int_equal(r.days_to_warning, 10);
    assert_int_equal(r.days_to_critical, 30);
    assert_string_equal(r.reason, "");
    assert_int_equal(r.points, n);
}

/* A 300 GiB snapshot made and deleted (one point far down) and a burst of deletions (one point
 * far up) leave the rate where the other points put it; a least-squares line would not. */
TEST(test_outliers_ignored)
{
    struct est_capacity_point p[64];
    size_t n = series(p, 64, 10 * DAYMS, DAYMS / 2, 1000 * GIB, 500 * GIB, 10 * GIB);

    p[5].free_space -= 300 * GIB;
    p[14].free_space += 200 * GIB;
    struct chk_runway r = estimate(p, n);
    assert_true(fabs(r.growth_bytes_per_day - 10.0 * GIB) < 1.0);
    assert_int_equal(r.days_to_critical, 30);

    /* The same outliers moved an ordinary least-squares slope well away from 10 GiB a day. */
    double st = 0, sf = 0, stt = 0, stf = 0;
    for (size_t i = 0; i < n; i++) {
        double t = (double)(p[i].t_ms - NOWMS) / DAYMS, f = (double)p[i].free_space / GIB;
        st += t, sf += f, stt += t * t, stf += t * f;
    }
    double ols = -(n * stf - st * sf) / (n * stt - st * st);
    assert_true(fabs(ols - 10) > 1);
}

/* A datastore grown from 1000 to 2000 GiB: what it did before says nothing of what it does now. */
TEST(test_resize_starts_a_new_series)
{
    struct est_capacity_point p[128];
    /* 20 days at 50 GiB a day on 1000 GiB, then 2000 GiB for the last 6 days at 10 GiB a day */
    size_t n = series(p, 128, 26 * DAYMS, DAYMS / 2, 1000 * GIB, 900 * GIB, 50 * GIB);
    for (size_t i = 0; i < n; i++)
        if (p[i].t_ms >= NOWMS - 6 * DAYMS) {
            p[i].capacity = 2000 * GIB;
            p[i].free_space = 1000 * GIB - 10 * GIB * (p[i].t_ms - (NOWMS - 6 * DAYMS)) / DAYMS;
        }
    struct chk_runway r = estimate(p, n);
    assert_true(fabs(r.growth_bytes_per_day - 10.0 * GIB) < 1.0);
    assert_true(fabs(r.history_days - 6) < 1e-9);
    assert_int_equal(r.series_start_ms, NOWMS - 6 * DAYMS);
    /* 940 GiB free now; 600 GiB is 30 % of 2000 GiB */
    assert_int_equal(r.days_to_warning, 34);

    /* Grown a day and a half ago: no estimate yet, and the reason says why. */
    n = series(p, 128, 10 * DAYMS, DAYMS / 2, 1000 * GIB, 900 * GIB, 50 * GIB);
    for (size_t i = 0; i < n; i++)
        if (p[i].t_ms >= NOWMS - DAYMS - DAYMS / 2)
            p[i].capacity = 2000 * GIB, p[i].free_space = 1200 * GIB;
    r = estimate(p, n);
    assert_false(r.has_growth || r.has_warning || r.has_critical);
    assert_string_equal(r.reason, "capacity changed 1.5 days ago");

    /* A wobble of a few MB in what vCenter reports is not a resize. */
    n = series(p, 128, 10 * DAYMS, DAYMS / 2, 1000 * GIB, 500 * GIB, 10 * GIB);
    for (size_t i = 0; i < n; i += 3)
        p[i].capacity += 5 << 20;
    r = estimate(p, n);
    assert_true(fabs(r.history_days - 10) < 1e-9);
    assert_int_equal(r.days_to_critical, 30);
}

TEST(test_too_little_history)
{
    struct est_capacity_point p[64];
    size_t n = series(p, 64, 2 * DAYMS + DAYMS / 2, DAYMS / 24, 1000 * GIB, 500 * GIB, 50 * GIB);
    struct chk_runway r = estimate(p, n);

    assert_false(r.has_growth || r.has_warning || r.has_critical);
    assert_string_equal(r.reason, "less than 3 days of history");
    r = estimate(p, 0);
    assert_false(r.has_growth || r.has_warning || r.has_critical);
    assert_string_equal(r.reason, "no capacity history yet");

    /* Long ago points outside the window do not count: 40 days of history, the last 2 days in
     * a 2-day window is too little. */
    n = series(p, 64, 40 * DAYMS, DAYMS, 1000 * GIB, 900 * GIB, 5 * GIB);
    assert_int_equal(chk_runway_estimate(p, n, NOWMS, 2, 30, 10, &r), 0);
    assert_false(r.has_growth);
    assert_string_equal(r.reason, "less than 3 days of history");
}

/* Already below a threshold is 0 days, whatever the history says; figures never go negative. */
TEST(test_already_below)
{
    struct est_capacity_point p[64];
    size_t n = series(p, 64, 10 * DAYMS, DAYMS, 1000 * GIB, 200 * GIB, 5 * GIB);
    struct chk_runway r = estimate(p, n);

    assert_int_equal(r.days_to_warning, 0); /* 150 GiB free, below 30 % */
    assert_int_equal(r.days_to_critical, 10);
    n = series(p, 64, 10 * DAYMS, DAYMS, 1000 * GIB, 50 * GIB, 0);
    r = estimate(p, n);
    assert_true(r.has_warning && r.has_critical);
    assert_int_equal(r.days_to_warning, 0);
    assert_int_equal(r.days_to_critical, 0);
    /* freeing up: growth negative, no days to a threshold it moves away from */
    n = series(p, 64, 10 * DAYMS, DAYMS, 1000 * GIB, 400 * GIB, -5 * GIB);
    r = estimate(p, n);
    assert_true(r.growth_bytes_per_day < 0);
    assert_false(r.has_warning || r.has_critical);
    assert_string_equal(r.reason, "not growing");
}

TEST(test_json_shape)
{
    struct est_capacity_point p[64];
    size_t n = series(p, 64, 10 * DAYMS, DAYMS / 2, 1000 * GIB, 500 * GIB, 10 * GIB);
    struct chk_runway r = estimate(p, n);
    json_t *o = chk_runway_json(&r);
    char *s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);

    assert_string_equal(s, "{\"days_to_critical\":30,\"days_to_warning\":10,"
                           "\"growth_gb_per_day\":10.0,\"history_days\":10.0}");
    free(s);
    json_decref(o);
    n = series(p, 64, 2 * DAYMS, DAYMS / 2, 1000 * GIB, 500 * GIB, 10 * GIB);
    r = estimate(p, n);
    o = chk_runway_json(&r);
    s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
    assert_string_equal(s, "{\"days_to_critical\":null,\"days_to_warning\":null,"
                           "\"growth_gb_per_day\":null,\"history_days\":2.0,"
                           "\"reason\":\"less than 3 days of history\"}");
    free(s);
    json_decref(o);
}

/* ---- the check ---- */

TEST(test_check_severities)
{
    static struct est_capacity_point fast[64], slow[64], flat[64], young[64], pod[64];
    /* free now: fast 150 GiB (50 above 10 %: 5 days), slow 300 GiB (200 above: 20 days) */
    size_t nf = series(fast, 64, 10 * DAYMS, DAYMS, 1000 * GIB, 250 * GIB, 10 * GIB);
    size_t ns = series(slow, 64, 10 * DAYMS, DAYMS, 1000 * GIB, 400 * GIB, 10 * GIB);
    size_t nl = series(flat, 64, 10 * DAYMS, DAYMS, 1000 * GIB, 300 * GIB, 0);
    size_t ny = series(young, 64, DAYMS, DAYMS / 4, 1000 * GIB, 300 * GIB, 100 * GIB);
    size_t np = series(pod, 64, 10 * DAYMS, DAYMS, 2000 * GIB, 700 * GIB, 20 * GIB);
    /* 1000 GiB VMFS datastores: moref, name, free GiB, reachable, history */
#define RUNWAY_DS(m, n, free_gib, up, h, nh)                                                       \
    {.moref = m, .name = n, .type = "VMFS", .capacity = 1000 * GIB,                                \
     .free_space = free_gib * GIB, .uncommitted = EST_UNKNOWN, .accessible = up,                   \
     .pod = EST_NONE, .history = h, .n_history = nh}
    struct est_datastore ds[] = {
        RUNWAY_DS("d1", "ds-fast", 150, 1, fast, nf),
        RUNWAY_DS("d2", "ds-slow", 300, 1, slow, ns),
        RUNWAY_DS("d3", "ds-flat", 300, 1, flat, nl),
        RUNWAY_DS("d4", "ds-young", 200, 1, young, ny),
        RUNWAY_DS("d5", "ds-gone", 150, 0, fast, nf),
    };
#undef RUNWAY_DS
    struct est_pod pods[] = {{.moref = "p1", .name = "pod-a", .capacity = 2000 * GIB,
                              .free_space = 500 * GIB, .history = pod, .n_history = np}};
    struct estate e = {.vcenter = "vc", .datastores = ds, .n_datastores = 5, .pods = pods,
                       .n_pods = 1};
    static const struct tl_want_row want[] = {
        {"ds-fast", SEV_CRITICAL, NULL}, {"ds-slow", SEV_WARNING, NULL}, {"ds-flat", -1, NULL},
        {"ds-young", -1, NULL},          {"ds-gone", -1, NULL},          {"pod-a", SEV_WARNING, NULL},
    };
    struct chk_results r = tl_run(&chk_datastore_runway, NULL, &e, NOWMS / 1000);

    tl_want_table(&r, want, sizeof(want) / sizeof(want[0]), NULL, NULL);
    const struct chk_finding *f = tl_find(&r, "ds-fast", NULL);
    assert_int_equal(tl_ev_int(f, "days_to_critical"), 5);
    assert_int_equal(tl_ev_int(f, "days_to_warning"), 0);
    assert_true(fabs(tl_ev_num(f, "growth_gb_per_day") - 10) < 1e-9);
    assert_true(fabs(tl_ev_num(f, "history_days") - 10) < 1e-9);
    assert_non_null(strstr(f->message, "in 5 days"));
    chk_results_free(&r);

    /* crit_days 4: ds-fast is only a warning now; warn_days 10: ds-slow is none */
    struct chk_settings s;
    chk_settings_default(&chk_datastore_runway, &s);
    tl_set_param(&chk_datastore_runway, &s, "crit_days", 4);
    tl_set_param(&chk_datastore_runway, &s, "warn_days", 10);
    r = tl_run(&chk_datastore_runway, &s, &e, NOWMS / 1000);
    static const struct tl_want_row want2[] = {{"ds-fast", SEV_WARNING, NULL},
                                               {"ds-slow", -1, NULL}};
    tl_want_table(&r, want2, 2, NULL, NULL);
    chk_results_free(&r);
}

/* The thresholds come from datastore-free-space's settings as configured. */
TEST(test_settings_follow_free_space)
{
    struct chk_config cfg;
    struct chk_runway_settings s;

    assert_int_equal(chk_config_init(&cfg), 0);
    chk_runway_settings(&cfg, &s);
    assert_true(s.warn_free_pct == 30 && s.crit_free_pct == 10 && s.window_days == 30);
    for (size_t i = 0; i < chk_registry_len; i++)
        if (!strcmp(chk_registry[i]->id, "datastore-free-space"))
            tl_set_param(chk_registry[i], &cfg.settings[i], "crit_free_pct", 15);
    chk_runway_settings(&cfg, &s);
    assert_true(s.crit_free_pct == 15);
    chk_config_free(&cfg);
}

/* ---- the store ---- */

static int64_t ds_free = 500 * GIB, ds_cap = 1000 * GIB;

static void fill_one(const struct vim_sink *sink, const void *arg)
{
    struct vim_datastore d = {.moref = "datastore-1", .name = "ds-one", .type = "VMFS",
                              .capacity = ds_cap, .free_space = ds_free,
                              .uncommitted = VIM_UNKNOWN, .accessible = 1};
    struct vim_datastore gone = d;
    struct vim_storage_pod p = {.moref = "pod-1", .name = "pod-one", .capacity = 2 * ds_cap,
                                .free_space = 2 * ds_free};

    gone.moref = "datastore-2", gone.name = "ds-inaccessible", gone.accessible = 0;
    assert_int_equal(sink->datastore(sink->ctx, &d), 0);
    assert_int_equal(sink->datastore(sink->ctx, &gone), 0);
    assert_int_equal(sink->storage_pod(sink->ctx, &p), 0);
}

static int64_t count(struct db *db, const char *path, const char *sql)
{
    (void)db;
    return tl_db_count(path, sql);
}

/* Every poll adds a point per datastore and datastore cluster (not the inaccessible one), and
 * the estate carries them, one an hour at most. */
TEST(test_recorded_per_poll)
{
    struct tl_dbfile *fx;

    assert_int_equal(tl_db_setup_open(state), 0);
    fx = *state;
    struct estate *e = NULL;

    for (int i = 0; i < 12; i++) {
        ds_free = 500 * GIB - i * 2 * GIB;
        tl_snapshot(fx->db, "vc", fill_one, NULL, NOWMS + i * 3600000LL / 2,
                    NOWMS + i * 3600000LL / 2 + 1, NULL);
    }
    assert_int_equal(count(fx->db, fx->path,
                           "SELECT count(*) FROM capacity_history WHERE kind = 'datastore'"),
                     12);
    assert_int_equal(count(fx->db, fx->path,
                           "SELECT count(*) FROM capacity_history WHERE kind = 'storage_pod'"),
                     12);
    assert_int_equal(count(fx->db, fx->path,
                           "SELECT count(*) FROM capacity_history WHERE moref = 'datastore-2'"),
                     0);
    assert_int_equal(db_estate_load(fx->db, "vc", &e), 0);
    const struct est_datastore *d = NULL;
    for (size_t i = 0; i < e->n_datastores; i++)
        if (!strcmp(e->datastores[i].moref, "datastore-1"))
            d = &e->datastores[i];
    assert_non_null(d);
    /* 12 polls half an hour apart span 6 hours: the latest of each hour */
    assert_int_equal(d->n_history, 6);
    assert_int_equal(d->history[d->n_history - 1].free_space, 500 * GIB - 22 * GIB);
    assert_int_equal(d->history[d->n_history - 1].t_ms, NOWMS + 11 * 3600000LL / 2 + 1);
    assert_int_equal(e->pods[0].n_history, 6);
    est_free(e);
    tl_db_teardown(state);
}

/* Raw points every 10 minutes for 40 days, then polls: one point an hour after a day, one a day
 * after 30 days, none past the retention. */
TEST(test_thinning)
{
    struct tl_dbfile *fx;

    assert_int_equal(tl_db_setup_open(state), 0);
    fx = *state;
    const int64_t end = 1700006400000; /* a whole hour and a whole day, UTC */
    sqlite3 *h;
    sqlite3_stmt *st;

    assert_int_equal(end % DAYMS, 0);
    assert_int_equal(sqlite3_open(fx->path, &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h, "BEGIN", NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(h,
                                        "INSERT INTO capacity_history (vcenter, kind, moref, t_ms,"
                                        " capacity, free_space) VALUES ('vc', 'datastore',"
                                        " 'datastore-1', ?1, 1000, 500)",
                                        -1, &st, NULL),
                     SQLITE_OK);
    for (int64_t t = end - 40 * DAYMS; t < end; t += 600000) {
        sqlite3_bind_int64(st, 1, t);
        assert_int_equal(sqlite3_step(st), SQLITE_DONE);
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    assert_int_equal(sqlite3_exec(h, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(h);

    db_set_capacity_retention(fx->db, 35);
    tl_snapshot(fx->db, "vc", fill_one, NULL, end, end, NULL);
    const char *last_day = "SELECT count(*) FROM capacity_history WHERE moref = 'datastore-1'"
                           " AND t_ms >= 1700006400000 - 86400000";
    const char *hourly = "SELECT count(*), count(DISTINCT t_ms / 3600000) FROM capacity_history"
                         " WHERE moref = 'datastore-1' AND t_ms < 1700006400000 - 86400000"
                         " AND t_ms >= 1700006400000 - 30 * 86400000";
    const char *daily = "SELECT count(*) FROM capacity_history WHERE moref = 'datastore-1'"
                        " AND t_ms < 1700006400000 - 30 * 86400000";
    /* the last day untouched: 144 raw points and the poll's */
    assert_int_equal(count(fx->db, fx->path, last_day), 145);
    /* 29 days of hours, the latest point of each */
    assert_int_equal(count(fx->db, fx->path, hourly), 29 * 24);
    assert_int_equal(count(fx->db, fx->path,
                           "SELECT count(*) FROM capacity_history WHERE moref = 'datastore-1'"
                           " AND t_ms % 3600000 <> 3000000 AND t_ms < 1700006400000 - 86400000"),
                     0);
    /* 30 to 35 days old: one a day (the retention drops the rest) */
    assert_int_equal(count(fx->db, fx->path, daily), 5);
    assert_int_equal(count(fx->db, fx->path,
                           "SELECT min(t_ms) FROM capacity_history WHERE moref = 'datastore-1'"),
                     end - 35 * DAYMS + DAYMS - 600000);

    /* Two hours later, thinning goes on from where the previous poll left it. */
    tl_snapshot(fx->db, "vc", fill_one, NULL, end + 7200000, end + 7200000, NULL);
    assert_int_equal(count(fx->db, fx->path,
                           "SELECT count(*) - count(DISTINCT t_ms / 3600000) FROM capacity_history"
                           " WHERE moref = 'datastore-1' AND t_ms < 1700006400000 + 7200000 -"
                           " 86400000"),
                     0);
    assert_int_equal(count(fx->db, fx->path,
                           "SELECT count(*) - count(DISTINCT t_ms / 86400000) FROM"
                           " capacity_history WHERE moref = 'datastore-1' AND t_ms <"
                           " 1700006400000 + 7200000 - 30 * 86400000"),
                     0);
    tl_db_teardown(state);
}

/* The runway the daemon records is what the dashboard's series read answers with. */
TEST(test_runway_record_and_series)
{
    struct tl_dbfile *fx;

    assert_int_equal(tl_db_setup_open(state), 0);
    fx = *state;
    json_t *o = NULL;
    struct db_runway_row row = {.moref = "datastore-1", .kind = "datastore",
                                .json = "{\"days_to_warning\":3,\"days_to_critical\":9,"
                                        "\"growth_gb_per_day\":1.5,\"history_days\":4.0}",
                                .warn_free_pct = 30, .crit_free_pct = 12.5};

    tl_snapshot(fx->db, "vc", fill_one, NULL, NOWMS, NOWMS, NULL);
    /* Recording runway moves the content stamp the API's answer cache is keyed on: the
     * datastores page and /metrics show it (review of b23c: they kept old runway). */
    uint64_t stamp0 = 0, stamp1 = 0;
    assert_int_equal(db_content_stamp(fx->db, &stamp0), 0);
    assert_int_equal(db_runway_record(fx->db, "vc", NOWMS, &row, 1), 0);
    assert_int_equal(db_content_stamp(fx->db, &stamp1), 0);
    assert_true(stamp0 != stamp1);
    assert_int_equal(db_capacity_series(fx->db, "vc", NULL, "ds-one", &o), 0);
    assert_string_equal(json_string_value(json_object_get(o, "moref")), "datastore-1");
    assert_int_equal(json_array_size(json_object_get(o, "points")), 1);
    assert_int_equal(json_integer_value(json_object_get(
                         json_array_get(json_object_get(o, "points"), 0), "free_space")),
                     ds_free);
    assert_int_equal(json_integer_value(
                         json_object_get(json_object_get(o, "runway"), "days_to_critical")),
                     9);
    assert_true(json_real_value(json_object_get(o, "crit_free_pct")) == 12.5);
    json_decref(o);
    assert_int_equal(db_capacity_series(fx->db, "vc", NULL, "no-such", &o), -VSL_ENOTFOUND);
    assert_int_equal(db_capacity_series(fx->db, "vc", "pod-1", NULL, &o), 0);
    assert_string_equal(json_string_value(json_object_get(o, "kind")), "storage_pod");
    assert_string_equal(json_string_value(json_object_get(json_object_get(o, "runway"), "reason")),
                        "not estimated yet");
    assert_true(json_is_null(json_object_get(o, "computed")));
    json_decref(o);
    tl_db_teardown(state);
}

int main(void)
{
    return tl_main();
}
