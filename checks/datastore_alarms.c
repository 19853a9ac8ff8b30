/* Check datastore-alarms: every datastore is watched by an enabled vCenter datastore usage alarm
 * whose thresholds fire no later than datastore-free-space does (003: "set the correct alarms"),
 * so someone is told between two vslint runs, and by vCenter itself. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "checks/check.h"

/* The counter of vCenter's "Datastore usage on disk" alarm ("Space actually used"). Its id
 * differs per vCenter; the collector stores each condition's counter by name. vCenter compares
 * a Datastore condition on it with the thresholds as a share of capacity, in hundredths of a
 * percent (7500 = 75 %). */
#define USAGE_COUNTER "disk.used.latest"
/* A datastore's chain of containers up to the root folder; vCenter nests far less. */
#define MAX_DEPTH 64
/* Alarms named in a finding's evidence. */
#define MAX_EV_ALARMS 10

/* An alarm that watches datastore usage, reduced to when it fires: the lowest usage at which
 * any of its usage conditions turns yellow or red, and at which one turns red (hundredths of a
 * percent, EST_UNKNOWN for never). */
struct usage_alarm {
    const struct est_alarm *a;
    int warn_at, crit_at;
    /* For one datastore: the entity of its chain the alarm is disabled on (DisableAlarm, vSphere
     * 7), or NULL. */
    const char *disabled_on;
};

static int min_set(int a, int b)
{
    if (a == EST_UNKNOWN)
        return b;
    if (b == EST_UNKNOWN)
        return a;
    return a < b ? a : b;
}

/* Whether m raises its alarm as a datastore's used space grows. */
static int is_usage(const struct est_alarm_metric *m)
{
    return m->object_type && !strcmp(m->object_type, "Datastore") && m->counter &&
           !strcmp(m->counter, USAGE_COUNTER) && m->op && !strcmp(m->op, "isAbove");
}

/* The first condition of a on datastores, when none of them is a usage condition: an alarm a
 * reader may take for one, named in the evidence with what it watches instead. */
static const struct est_alarm_metric *other_datastore_metric(const struct est_alarm *a)
{
    const struct est_alarm_metric *first = NULL;

    for (size_t i = 0; i < a->n_metrics; i++) {
        const struct est_alarm_metric *m = &a->metrics[i];
        if (is_usage(m))
            return NULL;
        if (!first && m->object_type && !strcmp(m->object_type, "Datastore"))
            first = m;
    }
    return first;
}

/* Fills u from a; 0 when a has no usage condition. */
static int usage_alarm(const struct est_alarm *a, struct usage_alarm *u)
{
    int found = 0;

    *u = (struct usage_alarm){.a = a, .warn_at = EST_UNKNOWN, .crit_at = EST_UNKNOWN};
    for (size_t i = 0; i < a->n_metrics; i++) {
        const struct est_alarm_metric *m = &a->metrics[i];
        if (!is_usage(m))
            continue;
        found = 1;
        u->warn_at = min_set(u->warn_at, min_set(m->yellow, m->red));
        u->crit_at = min_set(u->crit_at, m->red);
    }
    return found;
}

/* The morefs from d up to the root folder into chain; the count, or 0 when the chain cannot be
 * followed to the top (a parent the snapshot does not hold): then which alarms cover d is not
 * known. */
static size_t ancestry(const struct estate *e, const struct est_datastore *d,
                       const char *chain[MAX_DEPTH])
{
    size_t n = 0;
    const char *p = d->parent;

    chain[n++] = d->moref;
    while (p && n < MAX_DEPTH) {
        const struct est_entity *en = est_entity(e, p);
        if (!en)
            return 0;
        chain[n++] = en->moref;
        if (!en->parent)
            return n; /* the root folder */
        p = en->parent;
    }
    return 0;
}

/* The entity of chain (a datastore and its containers) on which a is disabled for it and
 * everything below it (AlarmManager.DisableAlarm), or NULL: an alarm enabled on the folder it is
 * defined on but disabled on a datastore cluster does not cover that cluster's datastores. */
static const char *disabled_on(const struct estate *e, const struct est_alarm *a,
                               const char *const *chain, size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < e->n_alarms_disabled; j++) {
            const struct est_alarm_disabled *x = &e->alarms_disabled[j];
            if (x->entity && x->alarm && !strcmp(x->entity, chain[i]) &&
                !strcmp(x->alarm, a->moref))
                return chain[i];
        }
    return NULL;
}

static int covers(const struct est_alarm *a, const char *const *chain, size_t n)
{
    for (size_t i = 0; a->entity && i < n; i++)
        if (!strcmp(a->entity, chain[i]))
            return 1;
    return 0;
}

/* What a person calls the entity an alarm is defined on. */
static const char *entity_name(const struct estate *e, const struct est_datastore *d,
                               const char *moref)
{
    const struct est_entity *en;

    if (!moref)
        return "?";
    if (!strcmp(moref, d->moref))
        return d->name;
    en = est_entity(e, moref);
    return en && en->name ? en->name : moref;
}

static json_t *pct_json(int hundredths)
{
    return hundredths == EST_UNKNOWN ? json_null() : json_real(hundredths / 100.0);
}

/* "75 %", or "never". */
static const char *pct_text(int hundredths, char *buf, size_t size)
{
    if (hundredths == EST_UNKNOWN)
        return "never";
    snprintf(buf, size, "%g %%", hundredths / 100.0);
    return buf;
}

/* The containers above d, top first, by name: where to look in the vSphere Client. */
static json_t *path_json(const struct estate *e, const char *const *chain, size_t n)
{
    json_t *a = json_array();

    for (size_t i = n; a && i-- > 1;) {
        const struct est_entity *en = est_entity(e, chain[i]);
        a = chk_ev_append(a, json_string(en && en->name ? en->name : chain[i]));
    }
    return a;
}

/* The alarms of e with a datastore condition that is not a usage one, and those of them that
 * cover the datastore being checked. */
struct others {
    const struct est_alarm **all, **cov;
    size_t n_all, n_cov;
};

static json_t *others_json(const struct estate *e, const struct est_datastore *d,
                           const struct others *o)
{
    json_t *a = json_array();

    for (size_t i = 0; a && i < o->n_cov && i < MAX_EV_ALARMS; i++) {
        const struct est_alarm_metric *m = other_datastore_metric(o->cov[i]);
        a = chk_ev_append(a, json_pack("{s:s, s:s, s:b, s:s?, s:s?}", "name", o->cov[i]->name,
                                       "entity_name", entity_name(e, d, o->cov[i]->entity),
                                       "enabled", o->cov[i]->enabled == 1, "counter", m->counter,
                                       "operator", m->op));
    }
    return a;
}

struct verdict {
    const char *level; /* no_alarm, disabled, thresholds; NULL: fine */
    int warn_at, crit_at;
    const struct usage_alarm *first_disabled;
};

static int emit(struct chk_ctx *ctx, const struct estate *e, const struct est_datastore *d,
                const char *const *chain, size_t depth, const struct usage_alarm *cov, size_t n_cov,
                const struct others *o, const struct verdict *v, double want_warn, double want_crit)
{
    double warn_free = 100.0 - want_warn / 100.0, crit_free = 100.0 - want_crit / 100.0;
    char msg[768], w[32], c[32];
    json_t *alarms = json_array();

    for (size_t i = 0; alarms && i < n_cov && i < MAX_EV_ALARMS; i++) {
        const struct est_alarm *a = cov[i].a;
        const char *off = cov[i].disabled_on;
        alarms = chk_ev_append(
            alarms, json_pack("{s:s, s:s, s:s?, s:s, s:b, s:o, s:o, s:s?, s:s?}", "name", a->name,
                              "moref", a->moref, "entity", a->entity, "entity_name",
                              entity_name(e, d, a->entity), "enabled", a->enabled == 1, "warn_pct",
                              pct_json(cov[i].warn_at), "red_pct", pct_json(cov[i].crit_at),
                              "disabled_on", off, "disabled_on_name",
                              off ? entity_name(e, d, off) : NULL));
    }
    if (!strcmp(v->level, "no_alarm")) {
        snprintf(msg, sizeof(msg),
                 "no datastore usage alarm covers %s: vCenter will not warn before it fills up "
                 "(datastore-free-space warns below %g %% free, at %g %% used)",
                 d->name, warn_free, want_warn / 100.0);
    } else if (!strcmp(v->level, "disabled")) {
        const struct est_alarm *a = v->first_disabled->a;
        const char *off = v->first_disabled->disabled_on;
        if (a->enabled == 1 && off)
            snprintf(msg, sizeof(msg),
                     "the datastore usage alarms covering %s are all disabled (\"%s\", defined "
                     "on %s, is disabled on %s): vCenter will not warn before it fills up",
                     d->name, a->name, entity_name(e, d, a->entity), entity_name(e, d, off));
        else
            snprintf(msg, sizeof(msg),
                     "the datastore usage alarms covering %s are all disabled (\"%s\" on %s): "
                     "vCenter will not warn before it fills up",
                     d->name, a->name, entity_name(e, d, a->entity));
    } else {
        snprintf(msg, sizeof(msg),
                 "the datastore usage alarms covering %s warn at %s used and go red at %s; they "
                 "should warn by %g %% and go red by %g %% (datastore-free-space warns below %g "
                 "%% free and is critical below %g %%)",
                 d->name, pct_text(v->warn_at, w, sizeof(w)), pct_text(v->crit_at, c, sizeof(c)),
                 want_warn / 100.0, want_crit / 100.0, warn_free, crit_free);
    }
    json_t *ev = json_pack("{s:s, s:f, s:f, s:o, s:o, s:o, s:o, s:o}", "level", v->level,
                           "want_warn_pct", want_warn / 100.0, "want_red_pct", want_crit / 100.0,
                           "warn_pct", pct_json(v->warn_at), "red_pct", pct_json(v->crit_at),
                           "alarms", alarms, "not_usage_alarms",
                           others_json(e, d, o), "path", path_json(e, chain, depth));
    return chk_emit_datastore(ctx, d, SEV_WARNING, msg, ev);
}

static int check_datastore(struct chk_ctx *ctx, const struct estate *e,
                           const struct est_datastore *d, const struct usage_alarm *usage,
                           size_t n_usage, struct usage_alarm *cov, struct others *o,
                           double want_warn, double want_crit)
{
    const char *chain[MAX_DEPTH];
    size_t depth = ancestry(e, d, chain), n_cov = 0, n_enabled = 0;
    struct verdict v = {.warn_at = EST_UNKNOWN, .crit_at = EST_UNKNOWN};

    if (depth == 0)
        return 0; /* where it sits is unknown, so is what covers it */
    for (size_t i = 0; i < n_usage; i++) {
        if (!covers(usage[i].a, chain, depth))
            continue;
        cov[n_cov] = usage[i];
        cov[n_cov].disabled_on = disabled_on(e, usage[i].a, chain, depth);
        if (usage[i].a->enabled != 1 || cov[n_cov].disabled_on) {
            if (!v.first_disabled)
                v.first_disabled = &cov[n_cov];
            n_cov++;
            continue;
        }
        n_cov++;
        n_enabled++;
        v.warn_at = min_set(v.warn_at, usage[i].warn_at);
        v.crit_at = min_set(v.crit_at, usage[i].crit_at);
    }
    if (n_cov == 0)
        v.level = "no_alarm";
    else if (n_enabled == 0)
        v.level = "disabled";
    else if (v.warn_at == EST_UNKNOWN || v.warn_at > want_warn + 1e-9 || v.crit_at == EST_UNKNOWN ||
             v.crit_at > want_crit + 1e-9)
        v.level = "thresholds";
    else
        return 0;
    o->n_cov = 0;
    for (size_t i = 0; i < o->n_all; i++)
        if (covers(o->all[i], chain, depth))
            o->cov[o->n_cov++] = o->all[i];
    return emit(ctx, e, d, chain, depth, cov, n_cov, o, &v, want_warn, want_crit);
}

static int run(struct chk_ctx *ctx, const struct estate *e)
{
    /* The usage at which datastore-free-space warns and goes critical, in the alarms' unit. */
    double want_warn = (100.0 - chk_param_from(ctx, "datastore-free-space", "warn_free_pct")) * 100;
    double want_crit = (100.0 - chk_param_from(ctx, "datastore-free-space", "crit_free_pct")) * 100;
    struct usage_alarm *usage, *cov;
    struct others o = {0};
    size_t n_usage = 0;
    int r = 0;

    /* Alarms that could not be read, or a snapshot that does not hold them, say nothing about
     * what covers a datastore: no finding rather than a guess (the gap is in the inventory). */
    if (e->alarms_read != 1 || est_vcenter_gap(e, "alarms") || e->n_datastores == 0)
        return 0;
    usage = calloc(e->n_alarms + 1, sizeof(*usage));
    cov = calloc(e->n_alarms + 1, sizeof(*cov));
    o.all = calloc(e->n_alarms + 1, sizeof(*o.all));
    o.cov = calloc(e->n_alarms + 1, sizeof(*o.cov));
    if (!usage || !cov || !o.all || !o.cov) {
        r = -ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < e->n_alarms; i++) {
        if (usage_alarm(&e->alarms[i], &usage[n_usage]))
            n_usage++;
        else if (other_datastore_metric(&e->alarms[i]))
            o.all[o.n_all++] = &e->alarms[i];
    }
    for (size_t i = 0; i < e->n_datastores && r == 0; i++)
        r = check_datastore(ctx, e, &e->datastores[i], usage, n_usage, cov, &o, want_warn,
                            want_crit);
out:
    free(usage);
    free(cov);
    free(o.all);
    free(o.cov);
    return r;
}

/* The seeds' words this check rests on, verbatim (tests/unit/test_registry.c). */
static const struct chk_source sources[] = {
    {CHK_SEED_YELLOW_BRICKS, "Performance: Thin Provisioning", CHK_QUOTE_OVERCOMMIT},
    {CHK_SEED_UNITY, "§1.1.1", CHK_QUOTE_POOL_CAPACITY},
    {0},
};

const struct check chk_datastore_alarms = {
    .id = "datastore-alarms",
    .title = "Datastores are covered by an enabled vCenter usage alarm at vslint's thresholds",
    .severity = SEV_WARNING,
    .rationale =
        "Yellow Bricks (003) on thin provisioning: \"make sure you set the correct alarms\" and "
        "watch the percentage of disk space still available. vslint sees a datastore only when it "
        "polls; vCenter's datastore usage alarm (Space actually used, disk.used.latest, on type "
        "Datastore, isAbove) fires the moment it fills. An alarm covers the entity it is defined "
        "on and everything below it: the datastore, its datastore cluster, folders, datacenter, "
        "the root folder, unless it is disabled on one of them (vSphere 7's DisableAlarm, an "
        "entity's declaredAlarmState entry with disabled = true), which turns it off for that "
        "entity and everything below it. Each datastore needs an enabled one that turns yellow (or red) by the "
        "usage at which datastore-free-space warns and red by the usage at which it is critical "
        "(its warn_free_pct and crit_free_pct, 30 % and 10 % free by default: 70 % and 90 % "
        "used), so the two never disagree (vslint's thresholds: the seeds give none for a "
        "datastore alarm); vCenter's default alarm (75 %/85 %) warns later. "
        "Several covering alarms count together. Conditions inside an AND, on other counters "
        "(disk.provisioned is overcommitment, not usage) or isBelow do not count. When vCenter's "
        "alarms could not be read (see the inventory's \"alarms\" gap), or where a datastore sits "
        "is unknown, nothing is reported.",
    .reference = "003_c6252f56ada835be.txt (Performance: Thin Provisioning, \"set the correct "
                 "alarms\"); 000_5bd48962a767ee9e.txt §1.1.1 (a storage pool's levels, which "
                 "datastore-free-space applies to datastores)",
    .sources = sources,
    .own =
        "The seeds give no alarm threshold for a datastore: the post asks for \"the correct "
        "alarms\" without a number, and 30 % and 10 % free are the Unity guide's levels for a "
        "storage pool. vslint wants each datastore's usage alarm to warn and go red where "
        "datastore-free-space does (70 % and 90 % used by default), so that vCenter and vslint "
        "never disagree; vCenter's default alarm (75 %/85 %) warns later. The warning severity is "
        "vslint's. An alarm disabled on an entity (vSphere 7 and later) covers nothing at or "
        "below it: that is vSphere's behaviour, not a seed's.",
    .remediation =
        "Edit vCenter's \"Datastore usage on disk\" alarm, or define one on the datacenter or "
        "datastore folder (vSphere Client: select the object > Configure > Alarm Definitions > "
        "Add or Edit; target type Datastore, trigger \"Datastore Disk Usage\" above: warning "
        "70 %, critical 90 %; enable it). PowerCLI: Get-AlarmDefinition -Name \"Datastore usage "
        "on disk\" | Set-AlarmDefinition -Enabled:$true; for its thresholds, $a = "
        "Get-AlarmDefinition -Name \"Datastore usage on disk\" | Get-View, set "
        "$a.Info.Expression.Expression[0].Yellow = 7000 and .Red = 9000 (hundredths of a "
        "percent), then $a.ReconfigureAlarm($a.Info); or New-AlarmDefinition -Name \"Datastore "
        "usage\" -Entity (Get-Datacenter <dc>) -AlarmTrigger (New-AlarmTrigger -Metric "
        "(Get-Metric -Name disk.used.latest) -MetricAlarmOperator Above -Yellow 70 -Red 90 "
        "-EntityType Datastore). The thresholds wanted follow [check datastore-free-space] "
        "warn_free_pct and crit_free_pct.",
    .params = NULL,
    .run = run,
};
