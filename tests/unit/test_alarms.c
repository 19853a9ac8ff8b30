/* Unit tests for the alarm read: the decoders of vsphere/alarms.c fed with answers captured from
 * the simulator's `violations` scenario (tests/unit/data/, made by capture_alarms.py; the
 * alarms are those of tests/sim/scenario_violations.go's datastore-alarms section), and the
 * rows' way through a snapshot into the estate and the inventory document. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/estate.h"
#include "db/db.h"
#include "db/findings.h"
#include "util/buf.h"
#include "vsphere/alarms.h"
#include "vsphere/session.h"
#include "vsphere/xml.h"

#include "testlib.h"

/* ---- decoding: every emitted row as one line of text (tl_text_sink) ------------------------ */

static struct vsl_buf rows;
static struct vim_sink text_sink; /* into rows; set by the group's setup */

/* Hands every <objects> of a RetrievePropertiesEx answer to fn(ctx, moref, objects). */
struct feed {
    vim_object_fn fn;
    void *ctx;
};

static int on_elem(void *ctx, struct vim_node *n)
{
    struct feed *f = ctx;

    if (!vim_name_is(n, "objects"))
        return 0;
    assert_int_equal(f->fn(f->ctx, vim_path_text(n, "obj"), n), 0);
    return 1;
}

static void feed_file(const char *name, vim_object_fn fn, void *ctx)
{
    char *text = tl_data_read(name);
    struct feed f = {fn, ctx};
    struct vim_xml *x = NULL;

    assert_int_equal(vim_xml_parse_all(text, strlen(text), 5, on_elem, &f, &x), 0);
    vim_xml_free(x);
    free(text);
}

static int on_folder(void *ctx, const char *moref, struct vim_node *o)
{
    return vim_decode_folder(ctx, moref, o);
}
static int on_dc(void *ctx, const char *moref, struct vim_node *o)
{
    return vim_decode_datacenter(ctx, moref, o);
}
static int on_cluster(void *ctx, const char *moref, struct vim_node *o)
{
    return vim_decode_cluster(ctx, moref, o);
}
static int on_alarm(void *ctx, const char *moref, struct vim_node *o)
{
    return vim_decode_alarm(ctx, moref, o);
}

/* The perfCounter value of the one object of perf-counters.xml, decoded for ids. */
struct counters {
    struct vim_sink *sink;
    const int *ids;
    size_t n;
};
static int on_perf(void *ctx, const char *moref, struct vim_node *o)
{
    struct counters *c = ctx;
    return vim_decode_perf_counters(c->sink, vim_prop(o, "perfCounter"), c->ids, c->n);
}

static int has(const char *line)
{
    char l[1100];
    snprintf(l, sizeof(l), "%s\n", line);
    return rows.data && strstr(rows.data, l) != NULL;
}

#define WANT(line)                                                                                 \
    do {                                                                                           \
        if (!has(line))                                                                            \
            fail_msg("no row \"%s\" in:\n%s", line, rows.data ? rows.data : "");                   \
    } while (0)
#define WANT_NOT(line)                                                                             \
    do {                                                                                           \
        if (has(line))                                                                             \
            fail_msg("unwanted row \"%s\"", line);                                                 \
    } while (0)

/* The line after the alarm named name's line (its first metric, or the next alarm). */
static const char *after_alarm(const char *name)
{
    char key[256];
    const char *p;

    snprintf(key, sizeof(key), "alarm %s ", name);
    p = rows.data ? strstr(rows.data, key) : NULL;
    assert_non_null(p);
    return strchr(p, '\n') + 1;
}

static void test_containers(void **state)
{
    struct vim_decoder d = {.sink = &text_sink};

    vsl_buf_init(&rows, 1 << 20);
    feed_file("folders.xml", on_folder, &d);
    feed_file("datacenters.xml", on_dc, &d);
    /* Datastore folders and their subfolders are kept; VM, host and network folders have no
     * datastore below them. */
    WANT("entity Folder name=datastore parent=datacenter-2");
    WANT("entity Folder name=fld-alarm-high parent=folder-240");
    WANT("entity Folder name=fld-alarm-ok-sub parent=folder-255");
    WANT("entity Datacenter name=DC0 parent=group-d1");
    WANT("entity Datacenter name=DC-remote parent=group-d1");
    assert_null(strstr(rows.data, "name=vm "));
    assert_null(strstr(rows.data, "name=host "));
    assert_null(strstr(rows.data, "name=network "));
    vsl_buf_free(&rows);
}

/* Clusters are stored by name with their parent (a host folder, not stored), so a finding about
 * a cluster (nfs-server-redundancy) can name the cluster a host's parent is. */
static void test_clusters(void **state)
{
    struct vim_decoder d = {.sink = &text_sink};

    vsl_buf_init(&rows, 1 << 20);
    feed_file("clusters.xml", on_cluster, &d);
    WANT("entity ClusterComputeResource name=cluster-clean parent=folder-4");
    WANT("entity ClusterComputeResource name=cluster-lab parent=folder-4");
    vsl_buf_free(&rows);
}

static void test_alarm_definitions(void **state)
{
    struct vim_alarm_read ar = {.sink = &text_sink};

    vsl_buf_init(&rows, 1 << 20);
    feed_file("alarms.xml", on_alarm, &ar);
    assert_int_equal(ar.unreadable, 0);
    WANT("alarm Datastore usage on disk enabled=0 system=alarm.DatastoreDiskUsageAlarm on=Folder");
    WANT("alarm Datastore usage (DC0) enabled=1 system=- on=Datacenter");
    WANT("alarm Datastore usage (lax) enabled=1 system=- on=Folder");
    WANT("alarm Datastore usage (pod) enabled=1 system=- on=StoragePod");
    WANT("alarm Datastore usage (own) enabled=1 system=- on=Datastore");
    /* The Or's metric member, not its state member. */
    assert_true(!strncmp(after_alarm("Datastore usage (lax)"),
                         "metric pos=0 type=Datastore counter=281 op=isAbove yellow=8000 red=9500\n"
                         "alarm ",
                         strlen("metric pos=0 type=Datastore counter=281 op=isAbove yellow=8000 "
                                "red=9500\nalarm ")));
    /* An And raises only when all its members hold: no metric of its counts alone. */
    assert_true(!strncmp(after_alarm("Datastore usage while accessible"), "alarm ", 6));
    /* A threshold left unset is unknown. */
    WANT("metric pos=0 type=Datastore counter=281 op=isAbove yellow=7000 red=-1");
    WANT("metric pos=0 type=Datastore counter=281 op=isAbove yellow=-1 red=9000");
    WANT("metric pos=0 type=Datastore counter=282 op=isAbove yellow=7000 red=9000");
    /* A host alarm: no metric conditions at all. */
    assert_true(!strncmp(after_alarm("Host connection and power state"), "alarm ", 6));
    /* The counters to resolve: the two the alarms name, once each. */
    assert_int_equal(ar.n_counters, 2);
    assert_true((ar.counters[0] == 281 && ar.counters[1] == 282) ||
                (ar.counters[0] == 282 && ar.counters[1] == 281));

    /* Their names, from the PerformanceManager's list of several hundred. */
    struct counters c = {&text_sink, ar.counters, ar.n_counters};
    vsl_buf_reset(&rows);
    feed_file("perf-counters.xml", on_perf, &c);
    assert_string_equal(rows.data, ar.counters[0] == 281
                                       ? "counter 281 disk.used.latest unit=kiloBytes\n"
                                         "counter 282 disk.provisioned.latest unit=kiloBytes\n"
                                       : "counter 282 disk.provisioned.latest unit=kiloBytes\n"
                                         "counter 281 disk.used.latest unit=kiloBytes\n");
    vim_alarm_read_free(&ar);
    vsl_buf_free(&rows);
}

/* vSphere 7.0.3 on: missingPrivileges[].privilegeIds where privilegeId is left out; each id
 * once, in order. */
static void test_unreadable_missing_privileges(void **state)
{
    static const char doc[] =
        "<r xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\"><objects>"
        "<obj type=\"Alarm\">alarm-9</obj><missingSet><path>info</path><fault>"
        "<fault xsi:type=\"NoPermission\"><object type=\"Alarm\">alarm-9</object>"
        "<missingPrivileges><entity type=\"Alarm\">alarm-9</entity>"
        "<privilegeIds>System.Read</privilegeIds><privilegeIds>Alarm.View</privilegeIds>"
        "</missingPrivileges><missingPrivileges><entity type=\"Folder\">group-d1</entity>"
        "<privilegeIds>System.Read</privilegeIds></missingPrivileges></fault>"
        "</fault></missingSet></objects></r>";
    struct vim_alarm_read ar = {.sink = &text_sink};
    struct vim_xml *x = NULL;

    (void)state;
    vsl_buf_init(&rows, 1 << 16);
    assert_int_equal(vim_xml_parse_all(doc, strlen(doc), 0, NULL, NULL, &x), 0);
    struct vim_node *objects = vim_child(vim_xml_root(x), "objects");
    assert_int_equal(vim_decode_alarm(&ar, "alarm-9", objects), 0);
    assert_string_equal(ar.why, "NoPermission fault (needs System.Read, Alarm.View)");
    vim_xml_free(x);
    vim_alarm_read_free(&ar);
    vsl_buf_free(&rows);
}

/* An alarm the server would not show (missingSet) is counted, with the fault and the privilege
 * it lacks in the form vsphere/soap.c writes a refusal (which the summary's gaps read). */
static void test_unreadable(void **state)
{
    static const char doc[] =
        "<r xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\"><objects>"
        "<obj type=\"Alarm\">alarm-9</obj><missingSet><path>info</path><fault>"
        "<fault xsi:type=\"NoPermission\"><privilegeId>System.Read</privilegeId></fault>"
        "</fault></missingSet></objects></r>";
    struct vim_alarm_read ar = {.sink = &text_sink};
    struct vim_xml *x = NULL;

    vsl_buf_init(&rows, 1 << 16);
    assert_int_equal(vim_xml_parse_all(doc, strlen(doc), 0, NULL, NULL, &x), 0);
    struct vim_node *objects = vim_child(vim_xml_root(x), "objects");
    assert_int_equal(vim_decode_alarm(&ar, "alarm-9", objects), 0);
    assert_int_equal(ar.unreadable, 1);
    assert_string_equal(ar.why, "NoPermission fault (needs System.Read)");
    assert_null(rows.data);
    vim_xml_free(x);
    vim_alarm_read_free(&ar);
    vsl_buf_free(&rows);
}

/* ---- a snapshot with alarms, back as an estate and an inventory ---------------------------- */

/* One poll of vcenter: a datastore in a folder of a datacenter, and, unless gap, its alarms. */
static void store(struct db *db, const char *vcenter, int gap)
{
    struct db_snapshot *snap;
    struct vim_sink s;
    const struct vim_entity ents[] = {
        {"group-d1", "Folder", "Datacenters", NULL},
        {"datacenter-2", "Datacenter", "DC0", "group-d1"},
        {"group-s5", "Folder", "datastore", "datacenter-2"},
        {"group-p9", "StoragePod", "pod-a", "group-s5"},
    };

    assert_int_equal(db_snapshot_begin(db, vcenter, NULL, &snap, &s), 0);
    for (size_t i = 0; i < sizeof(ents) / sizeof(ents[0]); i++)
        assert_int_equal(s.entity(s.ctx, &ents[i]), 0);
    assert_int_equal(s.datastore(s.ctx, &(struct vim_datastore){.moref = "datastore-7",
                                                                .name = "ds-a",
                                                                .type = "VMFS",
                                                                .parent = "group-p9",
                                                                .capacity = 100,
                                                                .free_space = 50,
                                                                .uncommitted = 0,
                                                                .accessible = 1,
                                                                .vmfs_major = 6}),
                     0);
    if (gap) {
        assert_int_equal(s.gap(s.ctx, &(struct vim_gap){"", "alarms", "NoPermission fault"}), 0);
    } else {
        assert_int_equal(s.alarm(s.ctx, &(struct vim_alarm){"alarm-8", "Datastore usage on disk",
                                                            "alarm.DatastoreDiskUsageAlarm", 1,
                                                            "group-d1", "Folder"}),
                         0);
        assert_int_equal(s.alarm(s.ctx, &(struct vim_alarm){"alarm-9", "Host state", NULL, 0,
                                                            "group-d1", "Folder"}),
                         0);
        assert_int_equal(
            s.alarm_metric(s.ctx, &(struct vim_alarm_metric){"alarm-8", 0, "Datastore", 281,
                                                             "isAbove", 7500, -1}),
            0);
        assert_int_equal(s.alarm_metric(s.ctx, &(struct vim_alarm_metric){"alarm-8", 1, "Datastore",
                                                                          999, "isAbove", 1, 2}),
                         0);
        assert_int_equal(
            s.perf_counter(s.ctx, &(struct vim_perf_counter){281, "disk.used.latest", "kiloBytes"}),
            0);
        assert_int_equal(s.alarm_manager(s.ctx, &(struct vim_alarm_manager){"AlarmManager"}), 0);
    }
    assert_int_equal(db_snapshot_commit(snap, 1000, 2000, NULL), 0);
}

static void test_estate(void **state)
{
    struct tl_dbfile *fx = *state;
    struct estate *e = NULL;

    store(fx->db, "vc-a", 0);
    assert_int_equal(db_estate_load(fx->db, "vc-a", &e), 0);
    assert_int_equal(e->alarms_read, 1);
    assert_int_equal(e->n_gaps, 0);
    assert_int_equal(e->n_datastores, 1);
    assert_string_equal(e->datastores[0].parent, "group-p9");
    /* The chain up from the datastore, by moref. */
    const struct est_entity *en = est_entity(e, "group-p9");
    assert_non_null(en);
    assert_string_equal(en->type, "StoragePod");
    en = est_entity(e, en->parent);
    assert_string_equal(en->name, "datastore");
    en = est_entity(e, est_entity(e, en->parent)->parent);
    assert_string_equal(en->name, "Datacenters");
    assert_null(en->parent);
    assert_null(est_entity(e, "group-x"));
    /* Alarms by name; conditions in order, the counter by name where it was resolved. */
    assert_int_equal(e->n_alarms, 2);
    const struct est_alarm *a = &e->alarms[0];
    assert_string_equal(a->name, "Datastore usage on disk");
    assert_string_equal(a->system_name, "alarm.DatastoreDiskUsageAlarm");
    assert_int_equal(a->enabled, 1);
    assert_string_equal(a->entity, "group-d1");
    assert_int_equal(a->n_metrics, 2);
    assert_string_equal(a->metrics[0].counter, "disk.used.latest");
    assert_int_equal(a->metrics[0].counter_id, 281);
    assert_int_equal(a->metrics[0].yellow, 7500);
    assert_int_equal(a->metrics[0].red, EST_UNKNOWN);
    assert_null(a->metrics[1].counter);
    assert_string_equal(e->alarms[1].name, "Host state");
    assert_int_equal(e->alarms[1].enabled, 0);
    assert_int_equal(e->alarms[1].n_metrics, 0);
    est_free(e);

    /* A poll that could not read them: unknown, and the gap says why. */
    store(fx->db, "vc-a", 1);
    assert_int_equal(db_estate_load(fx->db, "vc-a", &e), 0);
    assert_int_equal(e->alarms_read, 0);
    assert_int_equal(e->n_alarms, 0);
    assert_non_null(est_vcenter_gap(e, "alarms"));
    assert_string_equal(est_vcenter_gap(e, "alarms")->error, "NoPermission fault");
    assert_null(est_vcenter_gap(e, "esxcli"));
    est_free(e);
}

static void test_inventory(void **state)
{
    struct tl_dbfile *fx = *state;
    json_t *inv = NULL;

    store(fx->db, "vc-a", 0);
    assert_int_equal(db_inventory_json(fx->db, "vc-a", &inv), 0);
    json_t *vc = json_array_get(json_object_get(inv, "vcenters"), 0);
    json_t *am = json_object_get(vc, "alarm_managers");
    assert_int_equal(json_array_size(am), 1);
    assert_string_equal(json_string_value(json_array_get(am, 0)), "AlarmManager");
    assert_int_equal(json_array_size(json_object_get(vc, "entities")), 4);
    json_t *a = json_array_get(json_object_get(vc, "alarms"), 0);
    assert_string_equal(json_string_value(json_object_get(a, "entity_name")), "Datacenters");
    assert_true(json_is_true(json_object_get(a, "enabled")));
    json_t *m = json_array_get(json_object_get(a, "metrics"), 0);
    assert_string_equal(json_string_value(json_object_get(m, "counter")), "disk.used.latest");
    assert_string_equal(json_string_value(json_object_get(m, "unit")), "kiloBytes");
    assert_int_equal(json_integer_value(json_object_get(m, "yellow")), 7500);
    assert_true(json_is_null(json_object_get(m, "red")));
    json_decref(inv);

    store(fx->db, "vc-a", 1);
    assert_int_equal(db_inventory_json(fx->db, "vc-a", &inv), 0);
    vc = json_array_get(json_object_get(inv, "vcenters"), 0);
    assert_int_equal(json_array_size(json_object_get(vc, "alarm_managers")), 0);
    assert_int_equal(json_array_size(json_object_get(vc, "alarms")), 0);
    json_t *g = json_array_get(json_object_get(vc, "gaps"), 0);
    assert_string_equal(json_string_value(json_object_get(g, "what")), "alarms");
    json_decref(inv);
}

static int setup_text(void **state)
{
    text_sink = tl_text_sink(&rows);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_containers),
        cmocka_unit_test(test_clusters),
        cmocka_unit_test(test_alarm_definitions),
        cmocka_unit_test(test_unreadable),
        cmocka_unit_test(test_unreadable_missing_privileges),
        cmocka_unit_test_setup_teardown(test_estate, tl_db_setup_open, tl_db_teardown),
        cmocka_unit_test_setup_teardown(test_inventory, tl_db_setup_open, tl_db_teardown),
    };

    return cmocka_run_group_tests(tests, setup_text, NULL);
}
