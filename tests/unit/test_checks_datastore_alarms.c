/* Unit tests for datastore-alarms on hand-built estates. One inventory tree (root folder >
 * datacenter dc-1 > datastore folder > subfolder sub / datastore cluster pod-a / folder other,
 * and a second datacenter dc-2); each table row defines up to three alarms and what the check
 * must say of the datastore ds-sub (in sub), and whether ds-pod (in pod-a) is covered too. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "checks/check.h"
#include "checks/engine.h"
#include "model/estate.h"
#include "testlib.h"

#define NOW ((int64_t)1750000000)
#define U   EST_UNKNOWN

extern const struct check chk_datastore_alarms;

/* ---- the tree ------------------------------------------------------------------------------ */

/* Sorted by moref, as the loader gives them. */
static struct est_entity entities[] = {
    {"datacenter-1", "Datacenter", "dc-1", "group-d1"},
    {"datacenter-2", "Datacenter", "dc-2", "group-d1"},
    {"group-d1", "Folder", "Datacenters", NULL},
    {"group-other", "Folder", "other", "group-s1"},
    {"group-p1", "StoragePod", "pod-a", "group-s1"},
    {"group-s1", "Folder", "datastore", "datacenter-1"},
    {"group-s2", "Folder", "datastore", "datacenter-2"},
    {"group-sub", "Folder", "sub", "group-s1"},
};

/* ds-sub and ds-pod are the datastores the rows judge; the others are where a datastore sits
 * is unknown, which no alarm can change. */
enum { DS_SUB, DS_POD, DS_ORPHAN, DS_BROKEN, NDS };

static void datastores(struct est_datastore *ds)
{
    static const char *const names[NDS] = {"ds-sub", "ds-pod", "ds-orphan", "ds-broken"};
    static const char *const morefs[NDS] = {"datastore-1", "datastore-2", "datastore-3",
                                            "datastore-4"};
    static const char *const parents[NDS] = {"group-sub", "group-p1", NULL, "group-gone"};

    for (int i = 0; i < NDS; i++)
        ds[i] = (struct est_datastore){.moref = morefs[i],
                                       .name = names[i],
                                       .type = "VMFS",
                                       .capacity = 600LL << 30,
                                       .free_space = 300LL << 30,
                                       .accessible = 1,
                                       .vmfs_major = 6,
                                       .pod = EST_NONE,
                                       .parent = parents[i]};
}

/* ---- alarms -------------------------------------------------------------------------------- */

struct metric_spec {
    const char *counter; /* NULL: the counterId was not resolved */
    const char *type, *op;
    int yellow, red;
};

#define USAGE(y, r)                                                                                \
    {                                                                                              \
        "disk.used.latest", "Datastore", "isAbove", y, r                                           \
    }

struct alarm_spec {
    const char *name; /* NULL ends the list */
    const char *entity;
    int enabled;
    struct metric_spec m[2];
};

static const struct row {
    const char *what;
    struct alarm_spec alarms[3];
    const char *want; /* level for ds-sub: no_alarm, disabled, thresholds; NULL: no finding */
    int warn, red;    /* its evidence warn_pct and red_pct in hundredths, U for null */
    int pod_flagged;  /* ds-pod gets a finding too */
} rows[] = {
    {"no alarm at all", {{0}}, "no_alarm", U, U, 1},
    {"root, at vslint's thresholds", {{"a", "group-d1", 1, {USAGE(7000, 9000)}}}, NULL, U, U, 0},
    {"root, vCenter's default 75/85",
     {{"a", "group-d1", 1, {USAGE(7500, 8500)}}},
     "thresholds",
     7500,
     8500,
     1},
    {"root, disabled", {{"a", "group-d1", 0, {USAGE(7000, 9000)}}}, "disabled", U, U, 1},
    {"enabled not reported", {{"a", "group-d1", U, {USAGE(7000, 9000)}}}, "disabled", U, U, 1},
    {"the datacenter", {{"a", "datacenter-1", 1, {USAGE(7000, 9000)}}}, NULL, U, U, 0},
    {"the other datacenter", {{"a", "datacenter-2", 1, {USAGE(7000, 9000)}}}, "no_alarm", U, U, 1},
    {"the datastore folder", {{"a", "group-s1", 1, {USAGE(7000, 9000)}}}, NULL, U, U, 0},
    {"its own folder", {{"a", "group-sub", 1, {USAGE(7000, 9000)}}}, NULL, U, U, 1},
    {"a sibling folder", {{"a", "group-other", 1, {USAGE(7000, 9000)}}}, "no_alarm", U, U, 1},
    {"the datastore cluster", {{"a", "group-p1", 1, {USAGE(7000, 9000)}}}, "no_alarm", U, U, 0},
    {"the datastore itself", {{"a", "datastore-1", 1, {USAGE(7000, 9000)}}}, NULL, U, U, 1},
    {"another datastore", {{"a", "datastore-2", 1, {USAGE(7000, 9000)}}}, "no_alarm", U, U, 0},
    {"exactly at the thresholds, lower is fine too",
     {{"a", "group-d1", 1, {USAGE(6000, 8000)}}},
     NULL,
     U,
     U,
     0},
    {"yellow just too high",
     {{"a", "group-d1", 1, {USAGE(7001, 9000)}}},
     "thresholds",
     7001,
     9000,
     1},
    {"red too high", {{"a", "group-d1", 1, {USAGE(7000, 9500)}}}, "thresholds", 7000, 9500, 1},
    {"yellow only: never red", {{"a", "group-d1", 1, {USAGE(7000, U)}}}, "thresholds", 7000, U, 1},
    {"red only, early: warns and goes red by 70 %",
     {{"a", "group-d1", 1, {USAGE(U, 7000)}}},
     NULL,
     U,
     U,
     0},
    {"red only at 90: no warning before",
     {{"a", "group-d1", 1, {USAGE(U, 9000)}}},
     "thresholds",
     9000,
     9000,
     1},
    {"two alarms make one: yellow-only and red-only",
     {{"y", "group-d1", 1, {USAGE(7000, U)}}, {"r", "group-sub", 1, {USAGE(U, 9000)}}},
     NULL,
     U,
     U,
     1},
    {"two conditions in one alarm",
     {{"a", "group-d1", 1, {USAGE(8000, 9000), USAGE(7000, 9500)}}},
     NULL,
     U,
     U,
     0},
    {"a lax enabled one and a good disabled one",
     {{"lax", "group-d1", 1, {USAGE(8000, 9500)}}, {"good", "group-s1", 0, {USAGE(7000, 9000)}}},
     "thresholds",
     8000,
     9500,
     1},
    {"a lax one above, a good one below",
     {{"lax", "group-d1", 1, {USAGE(8000, 9500)}}, {"good", "group-sub", 1, {USAGE(7000, 9000)}}},
     NULL,
     U,
     U,
     1},
    {"provisioned space is not usage",
     {{"a", "group-d1", 1, {{"disk.provisioned.latest", "Datastore", "isAbove", 7000, 9000}}}},
     "no_alarm",
     U,
     U,
     1},
    {"a counter that was not resolved is not guessed",
     {{"a", "group-d1", 1, {{NULL, "Datastore", "isAbove", 7000, 9000}}}},
     "no_alarm",
     U,
     U,
     1},
    {"isBelow",
     {{"a", "group-d1", 1, {{"disk.used.latest", "Datastore", "isBelow", 7000, 9000}}}},
     "no_alarm",
     U,
     U,
     1},
    {"a host condition on the same counter name",
     {{"a", "group-d1", 1, {{"disk.used.latest", "HostSystem", "isAbove", 7000, 9000}}}},
     "no_alarm",
     U,
     U,
     1},
    {"no conditions (a state alarm)", {{"a", "group-d1", 1, {{0}}}}, "no_alarm", U, U, 1},
};

/* An estate of the tree, the datastores and the alarms as (up to three, ended by one without a
 * name); storage owned by the caller. */
struct world {
    struct estate e;
    struct est_datastore ds[NDS];
    struct est_alarm alarms[3];
    struct est_alarm_metric metrics[3][2];
};

static void build(struct world *w, const struct alarm_spec *as)
{
    memset(w, 0, sizeof(*w));
    w->e.vcenter = "vc";
    datastores(w->ds);
    w->e.datastores = w->ds;
    w->e.n_datastores = NDS;
    w->e.entities = entities;
    w->e.n_entities = N(entities);
    w->e.alarms_read = 1;
    w->e.alarms = w->alarms;
    for (size_t i = 0; i < 3 && as[i].name; i++) {
        struct est_alarm *a = &w->alarms[i];
        *a = (struct est_alarm){.moref = as[i].name,
                                .name = as[i].name,
                                .enabled = as[i].enabled,
                                .entity = as[i].entity,
                                .metrics = w->metrics[i]};
        for (size_t k = 0; k < 2 && as[i].m[k].type; k++) {
            const struct metric_spec *m = &as[i].m[k];
            w->metrics[i][k] = (struct est_alarm_metric){.object_type = m->type,
                                                         .counter_id = 281,
                                                         .counter = m->counter,
                                                         .op = m->op,
                                                         .yellow = m->yellow,
                                                         .red = m->red};
            a->n_metrics++;
        }
        w->e.n_alarms++;
    }
}

static void want_pct(const struct row *row, const struct chk_finding *f, const char *key, int want)
{
    json_t *v = json_object_get(f->evidence, key);
    if (want == U) {
        if (!json_is_null(v))
            fail_msg("%s: %s is %g, want null", row->what, key, json_number_value(v));
    } else if (!json_is_number(v) || json_number_value(v) != want / 100.0) {
        fail_msg("%s: %s is %g, want %g", row->what, key, json_number_value(v), want / 100.0);
    }
}

TEST(test_table)
{
    for (size_t i = 0; i < N(rows); i++) {
        const struct row *row = &rows[i];
        struct world w;

        build(&w, row->alarms);
        struct chk_results r = tl_run(&chk_datastore_alarms, NULL, &w.e, NOW);
        /* Where a datastore sits is unknown: never a finding, whatever the alarms. */
        if (tl_find(&r, "ds-orphan", NULL) || tl_find(&r, "ds-broken", NULL))
            fail_msg("%s: a datastore of unknown place was flagged", row->what);
        const struct chk_finding *f = tl_find(&r, "ds-sub", NULL);
        if (!row->want && f)
            fail_msg("%s: ds-sub flagged: %s", row->what, f->message);
        if (row->want && !f)
            fail_msg("%s: ds-sub not flagged, want %s", row->what, row->want);
        if ((tl_find(&r, "ds-pod", NULL) != NULL) != row->pod_flagged)
            fail_msg("%s: ds-pod %s", row->what, row->pod_flagged ? "not flagged" : "flagged");
        if (f) {
            assert_int_equal(f->severity, SEV_WARNING);
            assert_string_equal(f->object_type, "datastore");
            assert_string_equal(f->object_moref, "datastore-1");
            assert_null(f->detail);
            const char *level = tl_ev_str(f, "level");
            if (!level || strcmp(level, row->want))
                fail_msg("%s: level %s, want %s (%s)", row->what, level ? level : "-", row->want,
                         f->message);
            want_pct(row, f, "warn_pct", row->warn);
            want_pct(row, f, "red_pct", row->red);
            assert_true(json_number_value(json_object_get(f->evidence, "want_warn_pct")) == 70);
            assert_true(json_number_value(json_object_get(f->evidence, "want_red_pct")) == 90);
        }
        chk_results_free(&r);
    }
}

/* What a reader of one finding is told: the messages, the covering alarms, the path. */
TEST(test_evidence)
{
    static const struct alarm_spec lax[] = {
        {"Datastore usage (lax)", "group-sub", 1, {USAGE(8000, 9500)}},
        {"Datastore usage on disk", "group-d1", 0, {USAGE(7500, 8500)}},
        {"Datastore overcommitment",
         "datastore-1",
         1,
         {{"disk.provisioned.latest", "Datastore", "isAbove", 7000, 9000}}},
    };
    struct world w;
    struct est_extent span[] = {{.disk_name = "naa.a", .partition = 1},
                                {.disk_name = "naa.b", .partition = 1}};

    build(&w, lax);
    w.ds[DS_SUB].extents = span; /* a spanned volume: its finding names both LUNs */
    w.ds[DS_SUB].n_extents = N(span);
    struct chk_results r = tl_run(&chk_datastore_alarms, NULL, &w.e, NOW);
    const struct chk_finding *f = tl_find(&r, "ds-sub", NULL);
    assert_non_null(f);
    assert_int_equal(json_array_size(json_object_get(f->evidence, "extents")), 2);
    assert_string_equal(tl_ev_item(f, "extents", 1, NULL), "naa.b");
    assert_string_equal(f->message,
                        "the datastore usage alarms covering ds-sub warn at 80 % used and go red "
                        "at 95 %; they should warn by 70 % and go red by 90 % (datastore-free-space "
                        "warns below 30 % free and is critical below 10 %)");
    json_t *alarms = json_object_get(f->evidence, "alarms");
    assert_int_equal(json_array_size(alarms), 2);
    assert_string_equal(tl_ev_item(f, "alarms", 0, "name"), "Datastore usage (lax)");
    assert_string_equal(tl_ev_item(f, "alarms", 0, "entity_name"), "sub");
    assert_true(json_is_true(json_object_get(json_array_get(alarms, 0), "enabled")));
    json_t *a1 = json_array_get(alarms, 1);
    assert_string_equal(tl_ev_item(f, "alarms", 1, "entity_name"), "Datacenters");
    assert_true(json_is_false(json_object_get(a1, "enabled")));
    assert_true(json_number_value(json_object_get(a1, "warn_pct")) == 75);
    assert_int_equal(json_array_size(json_object_get(f->evidence, "not_usage_alarms")), 1);
    assert_string_equal(tl_ev_item(f, "not_usage_alarms", 0, "counter"), "disk.provisioned.latest");
    assert_string_equal(tl_ev_item(f, "not_usage_alarms", 0, "entity_name"), "ds-sub");
    assert_int_equal(json_array_size(json_object_get(f->evidence, "path")), 4);
    assert_string_equal(tl_ev_item(f, "path", 0, NULL), "Datacenters");
    assert_string_equal(tl_ev_item(f, "path", 1, NULL), "dc-1");
    assert_string_equal(tl_ev_item(f, "path", 3, NULL), "sub");

    /* ds-pod: only the disabled default covers it. */
    f = tl_find(&r, "ds-pod", NULL);
    assert_non_null(f);
    assert_string_equal(f->message, "the datastore usage alarms covering ds-pod are all disabled "
                                    "(\"Datastore usage on disk\" on Datacenters): vCenter will "
                                    "not warn before it fills up");
    chk_results_free(&r);

    build(&w, (const struct alarm_spec[]){{0}});
    r = tl_run(&chk_datastore_alarms, NULL, &w.e, NOW);
    f = tl_find(&r, "ds-sub", NULL);
    assert_non_null(f);
    assert_string_equal(f->message, "no datastore usage alarm covers ds-sub: vCenter will not warn "
                                    "before it fills up (datastore-free-space warns below 30 % "
                                    "free, at 70 % used)");
    assert_int_equal(json_array_size(json_object_get(f->evidence, "alarms")), 0);
    chk_results_free(&r);
}

/* Alarms that could not be read, or a snapshot without them, are unknown: nothing is said. */
TEST(test_unknown)
{
    struct est_gap gap = {"alarms", "NoPermission fault: Permission to perform this operation"};
    struct world w;
    struct chk_results r = {0};

    build(&w, (const struct alarm_spec[]){{0}});
    w.e.alarms_read = 0;
    assert_int_equal(chk_run_one(&chk_datastore_alarms, NULL, &w.e, NOW, &r), 0);
    assert_int_equal(r.n, 0);

    w.e.alarms_read = 1;
    w.e.gaps = &gap;
    w.e.n_gaps = 1;
    assert_int_equal(chk_run_one(&chk_datastore_alarms, NULL, &w.e, NOW, &r), 0);
    assert_int_equal(r.n, 0);

    /* Another gap of the vCenter's does not hide the alarms. */
    gap.what = "dvswitches";
    assert_int_equal(chk_run_one(&chk_datastore_alarms, NULL, &w.e, NOW, &r), 0);
    assert_int_equal(r.n, 2);
    chk_results_free(&r);
}

/* The thresholds are datastore-free-space's, as configured: warning below 20 % free and
 * critical below 5 % let an alarm at 80 % / 95 % used pass. */
TEST(test_follows_free_space)
{
    /* build() reads up to three: the rest are the terminator. */
    static const struct alarm_spec lax[3] = {{"lax", "group-d1", 1, {USAGE(8000, 9500)}}};
    struct chk_config cfg;
    struct world w;
    struct chk_results r = {0};
    char err[256] = "";
    size_t fs = chk_registry_len;

    assert_int_equal(chk_config_init(&cfg), 0);
    for (size_t i = 0; i < chk_registry_len; i++) {
        cfg.settings[i].enabled = chk_registry[i] == &chk_datastore_alarms;
        if (!strcmp(chk_registry[i]->id, "datastore-free-space"))
            fs = i;
    }
    assert_true(fs < chk_registry_len);
    build(&w, lax);
    assert_int_equal(chk_run_all(&cfg, &w.e, NOW, &r, err, sizeof(err)), 0);
    assert_int_equal(r.n, 2); /* ds-sub and ds-pod, at the default 30 % / 10 % */
    chk_results_free(&r);

    cfg.settings[fs].params[0] = 20; /* warn_free_pct */
    cfg.settings[fs].params[1] = 5;  /* crit_free_pct */
    assert_int_equal(chk_run_all(&cfg, &w.e, NOW, &r, err, sizeof(err)), 0);
    assert_int_equal(r.n, 0);

    /* ... and only just: critical below 6 % free wants red by 94 %. */
    cfg.settings[fs].params[1] = 6;
    assert_int_equal(chk_run_all(&cfg, &w.e, NOW, &r, err, sizeof(err)), 0);
    assert_int_equal(r.n, 2);
    assert_true(json_number_value(json_object_get(r.items[0].evidence, "want_red_pct")) == 94);
    assert_non_null(strstr(r.items[0].message, "they should warn by 80 % and go red by 94 %"));
    chk_results_free(&r);
    chk_config_free(&cfg);
}

int main(void)
{
    return tl_main();
}

/* An alarm disabled on one entity (DisableAlarm) covers nothing at or below it, and only there:
 * disabled on the datastore cluster, the root's alarm no longer covers ds-pod but still covers
 * ds-sub; disabled on another alarm, or on another entity, it changes nothing. */
TEST(test_disabled_on_entity)
{
    static const struct alarm_spec root[] = {{"a", "group-d1", 1, {USAGE(7000, 9000)}}, {0}};
    static const struct {
        const char *what;
        struct est_alarm_disabled off;
        int pod_flagged, sub_flagged;
    } cases[] = {
        {"disabled on the datastore cluster", {"group-p1", "a"}, 1, 0},
        {"disabled on the datacenter above both", {"datacenter-1", "a"}, 1, 1},
        {"disabled on the datastore itself", {"datastore-2", "a"}, 1, 0},
        {"another alarm disabled there", {"group-p1", "b"}, 0, 0},
        {"disabled on a sibling folder", {"group-sub", "a"}, 0, 1},
    };

    for (size_t i = 0; i < N(cases); i++) {
        struct world w;
        struct est_alarm_disabled off = cases[i].off;

        build(&w, root);
        w.e.alarms_disabled = &off;
        w.e.n_alarms_disabled = 1;
        struct chk_results r = tl_run(&chk_datastore_alarms, NULL, &w.e, NOW);
        const struct chk_finding *pod = tl_find(&r, "ds-pod", NULL);
        if ((pod != NULL) != cases[i].pod_flagged)
            fail_msg("%s: ds-pod %s", cases[i].what, pod ? "flagged" : "not flagged");
        if ((tl_find(&r, "ds-sub", NULL) != NULL) != cases[i].sub_flagged)
            fail_msg("%s: ds-sub wrongly judged", cases[i].what);
        if (pod) {
            assert_string_equal(tl_ev_str(pod, "level"), "disabled");
            assert_string_equal(tl_ev_item(pod, "alarms", 0, "disabled_on"), off.entity);
            assert_non_null(strstr(pod->message, "is disabled on"));
        }
        chk_results_free(&r);
    }
}
