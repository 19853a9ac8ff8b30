/* The alarm read: containers above datastores (so a check knows which alarms cover which
 * datastore) and the clusters hosts sit in (so a finding can name one), AlarmManager.GetAlarm
 * and each alarm's info, and the counters of their metric conditions from
 * PerformanceManager.perfCounter, since counterIds differ per vCenter. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/err.h"
#include "util/parse.h"
#include "vsphere/alarms.h"
#include "vsphere/collect.h"
#include "vsphere/session.h"

/* declaredAlarmState: which alarms are disabled on the entity itself (vSphere 7 and later). */
const char *const vim_folder_paths[] = {"name", "parent", "childType", "declaredAlarmState",
                                        NULL};
const char *const vim_datacenter_paths[] = {"name", "parent", "declaredAlarmState", NULL};
const char *const vim_pod_parent_paths[] = {"name", "parent", "declaredAlarmState", NULL};
const char *const vim_datastore_alarm_paths[] = {"declaredAlarmState", NULL};
const char *const vim_cluster_paths[] = {"name", "parent", NULL};

#define SINK(s, fn, row) ((s)->fn ? (s)->fn((s)->ctx, (row)) : 0)

/* Alarms read per RetrievePropertiesEx; a vCenter has a few hundred, the request stays small. */
#define ALARM_BATCH 500
/* Or inside Or inside ...: vCenter builds flat ones; anything deeper is not an alarm it made. */
#define MAX_EXPR_DEPTH 16

/* ---- containers ------------------------------------------------------------------------- */

/* The alarms disabled on entity moref: its declaredAlarmState entries with disabled = true
 * (AlarmManager.DisableAlarm). An entry about another entity (a child's, if a server listed
 * those) is that entity's to say. */
static int emit_disabled(struct vim_decoder *d, const char *moref, struct vim_node *objects)
{
    struct vim_node *states = vim_prop(objects, "declaredAlarmState");
    int r = 0;

    for (struct vim_node *s = vim_first_elem(states); s && r == 0; s = vim_next_elem(s)) {
        const char *entity = vim_path_text(s, "entity"), *alarm = vim_path_text(s, "alarm");
        if (!alarm || vim_path_bool(s, "disabled", 0) != 1 || (entity && strcmp(entity, moref)))
            continue;
        struct vim_alarm_disabled ad = {.entity = moref, .alarm = alarm};
        r = SINK(d->sink, alarm_disabled, &ad);
    }
    return r;
}

static int emit_entity(struct vim_decoder *d, const char *moref, struct vim_node *objects,
                       const char *type)
{
    struct vim_entity e = {
        .moref = moref,
        .type = type,
        .name = vim_text(vim_prop(objects, "name")),
        .parent = vim_text(vim_prop(objects, "parent")),
    };
    int r = SINK(d->sink, entity, &e);

    return r == 0 ? emit_disabled(d, moref, objects) : r;
}

int vim_decode_datastore_alarms(struct vim_decoder *d, const char *moref, struct vim_node *objects)
{
    return emit_disabled(d, moref, objects);
}

/* Whether a folder's childType lets a datastore be somewhere below it. */
static int holds_datastores(struct vim_node *child_type)
{
    static const char *const kinds[] = {"Datastore", "StoragePod", "Datacenter"};

    if (!child_type)
        return 1; /* not reported: keep it rather than lose a link of the chain */
    for (struct vim_node *s = vim_first_elem(child_type); s; s = vim_next_elem(s)) {
        const char *t = vim_text(s);
        for (size_t i = 0; t && i < sizeof(kinds) / sizeof(kinds[0]); i++)
            if (!strcmp(t, kinds[i]))
                return 1;
    }
    return 0;
}

int vim_decode_folder(struct vim_decoder *d, const char *moref, struct vim_node *objects)
{
    if (!holds_datastores(vim_prop(objects, "childType")))
        return 0;
    return emit_entity(d, moref, objects, "Folder");
}

int vim_decode_datacenter(struct vim_decoder *d, const char *moref, struct vim_node *objects)
{
    return emit_entity(d, moref, objects, "Datacenter");
}

int vim_decode_pod_parent(struct vim_decoder *d, const char *moref, struct vim_node *objects)
{
    return emit_entity(d, moref, objects, "StoragePod");
}

int vim_decode_cluster(struct vim_decoder *d, const char *moref, struct vim_node *objects)
{
    return emit_entity(d, moref, objects, "ClusterComputeResource");
}

/* ---- alarm definitions ------------------------------------------------------------------ */

/* The plain "type" attribute of a moref element (<entity type="Folder">), or NULL. */
static const char *moref_type(const struct vim_node *n)
{
    return n ? n->type : NULL;
}

static int note_counter(struct vim_alarm_read *ar, int id)
{
    for (size_t i = 0; i < ar->n_counters; i++)
        if (ar->counters[i] == id)
            return 0;
    if (vsl_grow(&ar->counters, &ar->cap, ar->n_counters, sizeof(*ar->counters), 16) < 0)
        return -ENOMEM;
    ar->counters[ar->n_counters++] = id;
    return 0;
}

/* Emits the metric conditions of expr that raise the alarm on their own: expr itself, or the
 * members of an OrAlarmExpression, recursively. An AndAlarmExpression raises only when all its
 * members hold, so none of them counts alone; state and event conditions are not metrics. */
static int walk_expression(struct vim_alarm_read *ar, const char *alarm, struct vim_node *expr,
                           int depth, int *pos)
{
    char tbuf[128];
    const char *type = vim_xsi_type(expr, tbuf, sizeof(tbuf));
    int r = 0;

    if (!type || depth > MAX_EXPR_DEPTH)
        return 0;
    if (!strcmp(type, "OrAlarmExpression")) {
        for (struct vim_node *e = vim_child(expr, "expression"); e && r == 0;
             e = vim_next(e, "expression"))
            r = walk_expression(ar, alarm, e, depth + 1, pos);
        return r;
    }
    if (strcmp(type, "MetricAlarmExpression"))
        return 0;
    struct vim_alarm_metric m = {
        .alarm = alarm,
        .pos = (*pos)++,
        .object_type = vim_path_text(expr, "type"),
        .counter_id = vim_path_int32(expr, "metric/counterId", VIM_UNKNOWN),
        .op = vim_path_text(expr, "operator"),
        .yellow = vim_path_int32(expr, "yellow", VIM_UNKNOWN),
        .red = vim_path_int32(expr, "red", VIM_UNKNOWN),
    };
    if (m.counter_id != VIM_UNKNOWN && (r = note_counter(ar, m.counter_id)) < 0)
        return r;
    return SINK(ar->sink, alarm_metric, &m);
}

/* Remembers why an alarm could not be read (the first time). */
static void note_unreadable(struct vim_alarm_read *ar, struct vim_node *objects)
{
    char tbuf[128];
    char pbuf[256];
    struct vim_node *m = vim_child(objects, "missingSet");
    struct vim_node *f = vim_path(m, "fault/fault");
    const char *fault = vim_xsi_type(f, tbuf, sizeof(tbuf));
    const char *priv = vim_fault_privileges(f, pbuf, sizeof(pbuf));

    /* A refusal in the form vsphere/soap.c gives one, which db_gaps_grouped() reads. */
    if (ar->unreadable++ == 0 && priv && fault)
        snprintf(ar->why, sizeof(ar->why), "%s fault (needs %s)", fault, priv);
    else if (ar->unreadable == 1)
        snprintf(ar->why, sizeof(ar->why), "%s", fault ? fault : "no info");
}

/* One field of an alarm's info: the info.FIELD property vim_collect_alarms() asks for, or the
 * FIELD child of a whole info (older recordings and the unit tests hold it whole). */
static struct vim_node *info_field(struct vim_node *objects, struct vim_node *info,
                                   const char *field)
{
    char path[64];

    if (info)
        return vim_child(info, field);
    snprintf(path, sizeof(path), "info.%s", field);
    return vim_prop(objects, path);
}

int vim_decode_alarm(struct vim_alarm_read *ar, const char *moref, struct vim_node *objects)
{
    struct vim_node *info = vim_prop(objects, "info");
    struct vim_node *name = info_field(objects, info, "name");
    struct vim_node *entity = info_field(objects, info, "entity");
    struct vim_node *enabled = info_field(objects, info, "enabled");
    int pos = 0, r;

    if (!info && !name) {
        note_unreadable(ar, objects);
        return 0;
    }
    struct vim_alarm a = {
        .moref = moref,
        .name = vim_text(name),
        .system_name = vim_text(info_field(objects, info, "systemName")),
        .enabled = vsl_parse_bool(vim_text(enabled), 0),
        .entity = vim_text(entity),
        .entity_type = moref_type(entity),
    };
    if (a.system_name && !*a.system_name)
        a.system_name = NULL;
    if ((r = SINK(ar->sink, alarm, &a)) < 0)
        return r;
    return walk_expression(ar, moref, info_field(objects, info, "expression"), 0, &pos);
}

static int wanted(const int *ids, size_t n, int id)
{
    for (size_t i = 0; i < n; i++)
        if (ids[i] == id)
            return 1;
    return ids == NULL;
}

int vim_decode_perf_counters(struct vim_sink *sink, struct vim_node *list, const int *ids, size_t n)
{
    for (struct vim_node *o = vim_first_elem(list); o; o = vim_next_elem(o)) {
        const char *group = vim_path_text(o, "groupInfo/key");
        const char *name = vim_path_text(o, "nameInfo/key");
        const char *rollup = vim_path_text(o, "rollupType");
        char full[384];
        struct vim_perf_counter pc = {
            .key = vim_path_int32(o, "key", VIM_UNKNOWN),
            .name = full,
            .unit = vim_path_text(o, "unitInfo/key"),
        };
        int r;

        if (pc.key == VIM_UNKNOWN || !group || !name || !rollup || !wanted(ids, n, pc.key))
            continue;
        snprintf(full, sizeof(full), "%s.%s.%s", group, name, rollup);
        if ((r = SINK(sink, perf_counter, &pc)) < 0)
            return r;
    }
    return 0;
}

void vim_alarm_read_free(struct vim_alarm_read *ar)
{
    free(ar->counters);
    ar->counters = NULL;
    ar->n_counters = ar->cap = 0;
}

/* ---- the read --------------------------------------------------------------------------- */

static int alarms_gap(struct vim_sink *sink, const char *error)
{
    struct vim_gap g = {.object = "", .what = "alarms", .error = error};
    return SINK(sink, gap, &g);
}

/* The client's error as a gap's text, or the fatal error itself. */
static int fail(struct vim_client *c, struct vim_sink *sink, int r)
{
    return vim_poll_fatal(r) ? r : alarms_gap(sink, vim_gap_error(c));
}

/* GetAlarm with no entity: every alarm of the vCenter. *morefs (owned) is NULL-free. */
static int get_alarms(struct vim_client *c, char ***morefs, size_t *n)
{
    struct vim_xml *x = NULL;
    size_t cap = 0;
    int r;

    *morefs = NULL;
    *n = 0;
    r = vim_invoke(c, "GetAlarm", "AlarmManager", c->alarm_manager, NULL, 0, NULL, NULL, &x);
    for (struct vim_node *rv = vim_child(vim_response(x), "returnval"); r == 0 && rv;
         rv = vim_next(rv, "returnval")) {
        const char *m = vim_text(rv);
        if (!m)
            continue;
        if ((r = vsl_grow(morefs, &cap, *n, sizeof(**morefs), 64)) < 0)
            break;
        if (!((*morefs)[*n] = strdup(m)))
            r = -ENOMEM;
        else
            (*n)++;
    }
    vim_xml_free(x);
    return r;
}

static int on_root(void *ctx, const char *moref, struct vim_node *objects)
{
    return vim_decode_folder(ctx, moref, objects);
}

/* The root folder, which no view lists (a view holds what is below its container): the top of
 * every datastore's chain, where vCenter's default alarms are defined. */
static int read_root(struct vim_client *c, struct vim_sink *sink)
{
    struct vim_decoder d = {.sink = sink};
    const char *const root[] = {c->root_folder};

    return vim_retrieve_objects(c, "Folder", root, 1, vim_folder_paths, on_root, &d);
}

static int on_alarm(void *ctx, const char *moref, struct vim_node *objects)
{
    return vim_decode_alarm(ctx, moref, objects);
}

struct counters_read {
    struct vim_sink *sink;
    const struct vim_alarm_read *ar;
    int seen;
};

static int on_perf_manager(void *ctx, const char *moref, struct vim_node *objects)
{
    struct counters_read *cr = ctx;
    struct vim_node *list = vim_prop(objects, "perfCounter");

    if (!list)
        return 0;
    cr->seen = 1;
    return vim_decode_perf_counters(cr->sink, list, cr->ar->counters, cr->ar->n_counters);
}

/* The names of the counters the alarms name, from PerformanceManager.perfCounter: one read of
 * the whole list (a few hundred counters) rather than QueryPerfCounter, which faults on the
 * whole call if any one id is unknown to it. */
static int read_counters(struct vim_client *c, struct vim_sink *sink,
                         const struct vim_alarm_read *ar)
{
    static const char *const paths[] = {"perfCounter", NULL};
    const char *const pm[] = {c->perf_manager};
    struct counters_read cr = {.sink = sink, .ar = ar};
    int r = vim_retrieve_objects(c, "PerformanceManager", pm, 1, paths, on_perf_manager, &cr);

    if (r == 0 && !cr.seen) {
        snprintf(c->err, sizeof(c->err), "%s: PerformanceManager.perfCounter was not returned",
                 c->url);
        r = -VSL_EPROTO;
    }
    return r;
}

int vim_collect_alarms(struct vim_client *c, struct vim_sink *sink)
{
    /* Only the fields the checks read: the rest of AlarmInfo (lastModifiedUser, the actions'
     * e-mail addresses and scripts) would otherwise sit in memory and in `vslint record`'s
     * captures, which users send to strangers. */
    static const char *const paths[] = {"info.name",    "info.systemName", "info.enabled",
                                        "info.entity",  "info.expression", NULL};
    struct vim_alarm_read ar = {.sink = sink};
    char **morefs = NULL, msg[512];
    size_t n = 0;
    int r;

    if (!c->alarm_manager)
        return alarms_gap(sink, "the server has no AlarmManager (is it a vCenter?)");
    r = read_root(c, sink);
    if (r < 0)
        return fail(c, sink, r);
    r = get_alarms(c, &morefs, &n);
    if (r < 0) {
        r = fail(c, sink, r);
        goto out;
    }
    for (size_t i = 0; i < n && r == 0; i += ALARM_BATCH)
        r = vim_retrieve_objects(c, "Alarm", (const char *const *)morefs + i,
                                 n - i < ALARM_BATCH ? n - i : ALARM_BATCH, paths, on_alarm, &ar);
    if (r < 0) {
        r = fail(c, sink, r);
        goto out;
    }
    if (ar.unreadable > 0) {
        /* A refusal leads, as soap.c's do, so that the gap names the privilege it lacks. */
        if (strstr(ar.why, " fault (needs "))
            snprintf(msg, sizeof(msg), "%s: %zu of %zu alarms could not be read", ar.why,
                     ar.unreadable, n);
        else
            snprintf(msg, sizeof(msg), "%zu of %zu alarms could not be read (%s)", ar.unreadable,
                     n, ar.why);
        r = alarms_gap(sink, msg);
        goto out;
    }
    if (ar.n_counters > 0 && !c->perf_manager) {
        r = alarms_gap(sink, "the server has no PerformanceManager to name the alarms' counters");
        goto out;
    }
    if (ar.n_counters > 0)
        r = read_counters(c, sink, &ar);
    if (r < 0) {
        r = fail(c, sink, r);
        goto out;
    }
    struct vim_alarm_manager am = {.moref = c->alarm_manager};
    r = SINK(sink, alarm_manager, &am);
out:
    for (size_t i = 0; i < n; i++)
        free(morefs[i]);
    free(morefs);
    vim_alarm_read_free(&ar);
    return r;
}
