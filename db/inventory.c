/* Reading the stored inventory back out: as one JSON document (shape in docs/inventory.md) and
 * as text for an administrator. One statement per table per call, whatever the estate's size. */
#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db/db-private.h"
#include "db/db.h"
#include "util/err.h"
#include "util/log.h"

/* Objects that later rows attach to, looked up by their key columns joined with KEY_SEP.
 * A registry is a json object used as a hash table; it is never printed. */
enum reg { R_NONE = -1, R_POD, R_DATASTORE, R_HOST, R_HBA, R_TARGET, R_LUN, R_VM, R_ALARM, R_NREG };

enum ftype { F_STR, F_INT, F_BOOL, F_SKIP };

struct field {
    const char *name;
    enum ftype type;
};

/* How a row lands in its parent: as an object appended to an array, as its one field's value
 * appended to an array, or as a key (field 0) and value (field 1) set in an object. */
enum mode { M_OBJECT, M_SCALAR, M_MAP };

struct member {
    const char *name;
    int is_object; /* 0: starts as [], 1: starts as {} */
};

/* One query that reads one table for one vCenter and hangs its rows on their parents. */
struct loader {
    const char *sql; /* ?1 = vcenter */
    enum reg parent; /* R_NONE: the parent is the vCenter object */
    int pkey[5];     /* columns naming the parent in its registry */
    int npkey;
    const char *member; /* where in the parent the row goes */
    enum mode mode;
    int first; /* column of fields[0]; the rest follow */
    const struct field *fields;
    int nfields;
    enum reg reg; /* registry the row's object is entered in, R_NONE for none */
    int rkey[5];
    int nrkey;
    const struct member *members; /* what each row object starts with, NULL-terminated */
    const char *orphans; /* vCenter member for rows whose parent is unknown, or NULL: drop */
};

#define KEY_SEP "\x1f" /* ASCII unit separator: cannot occur in a moref or device name */
#define NF(a)   ((int)(sizeof(a) / sizeof((a)[0])))

static const struct field pod_fields[] = {
    {"moref", F_STR}, {"name", F_STR}, {"capacity", F_INT}, {"free_space", F_INT}};
static const struct member pod_members[] = {{"datastores", 0}, {NULL, 0}};

static const struct field ds_fields[] = {{"moref", F_STR},
                                         {"name", F_STR},
                                         {"type", F_STR},
                                         {"url", F_STR},
                                         {"capacity", F_INT},
                                         {"free_space", F_INT},
                                         {"uncommitted", F_INT},
                                         {"accessible", F_BOOL},
                                         {"maintenance_mode", F_STR},
                                         {"vmfs_major", F_INT},
                                         {"nas_remote_host", F_STR},
                                         {"parent", F_STR},
                                         {"storage_pod", F_STR},
                                         {"vm_count", F_INT},
                                         {"vmfs_version", F_STR},
                                         {"vmfs_local", F_BOOL},
                                         {"vmfs_ssd", F_BOOL},
                                         {"unmap_priority", F_STR}};
static const struct member ds_members[] = {{"extents", 0}, {"hosts", 0}, {NULL, 0}};

static const struct field extent_fields[] = {{"disk_name", F_STR}, {"partition", F_INT}};

static const struct field mount_fields[] = {
    {"host", F_STR}, {"mounted", F_BOOL}, {"accessible", F_BOOL}, {"access_mode", F_STR}};

static const struct field moref_field[] = {{"moref", F_STR}};

static const struct field dvs_fields[] = {
    {"moref", F_STR}, {"name", F_STR}, {"uuid", F_STR}, {"max_mtu", F_INT}};

static const struct field host_fields[] = {
    {"moref", F_STR}, {"name", F_STR}, {"parent", F_STR}, {"connection_state", F_STR}};
static const struct member host_members[] = {{"options", 1},    {"vswitches", 0},  {"vnics", 0},
                                             {"hbas", 0},       {"iscsi_hbas", 0}, {"luns", 0},
                                             {"satp_rules", 0}, {"gaps", 0},       {NULL, 0}};

static const struct field any_hba_fields[] = {
    {"device", F_STR}, {"type", F_STR}, {"driver", F_STR}, {"model", F_STR}, {"status", F_STR}};

static const struct field kv_fields[] = {{"key", F_STR}, {"value", F_STR}};

static const struct field vswitch_fields[] = {{"name", F_STR}, {"mtu", F_INT}};

static const struct field vnic_fields[] = {
    {"device", F_STR},   {"mtu", F_INT},           {"portgroup", F_STR}, {"vswitch", F_STR},
    {"dvs_uuid", F_STR}, {"dvs_portgroup", F_STR}, {"ip", F_STR}};

static const struct field hba_fields[] = {
    {"device", F_STR}, {"iscsi_name", F_STR}, {"model", F_STR}};
static const struct member hba_members[] = {
    {"bound_vnics", 0}, {"options", 0}, {"targets", 0}, {NULL, 0}};

static const struct field vnic_name_field[] = {{"vnic", F_STR}};

static const struct field target_fields[] = {
    {"kind", F_STR},       {"target", F_SKIP},          {"address", F_STR}, {"port", F_INT},
    {"iscsi_name", F_STR}, {"discovery_method", F_STR}, {"parent", F_STR}};
static const struct member target_members[] = {{"options", 0}, {NULL, 0}};

static const struct field iscsi_option_fields[] = {
    {"key", F_STR}, {"value", F_STR}, {"inherited", F_BOOL}};

static const struct field lun_fields[] = {
    {"canonical_name", F_STR}, {"display_name", F_STR}, {"vendor", F_STR},
    {"model", F_STR},          {"lun_type", F_STR},     {"local", F_BOOL},
    {"policy", F_STR},         {"satp", F_STR},         {"iops_limit", F_INT},
    {"psp_config", F_STR},     {"policy_type", F_STR},  {"multipath_plugin", F_STR}};
static const struct member lun_members[] = {{"paths", 0}, {NULL, 0}};

static const struct field path_fields[] = {{"name", F_STR}, {"state", F_STR}, {"adapter", F_STR}};

static const struct field satp_rule_fields[] = {
    {"satp", F_STR},        {"vendor", F_STR},        {"model", F_STR},   {"psp", F_STR},
    {"psp_options", F_STR}, {"rule_group", F_STR},    {"device", F_STR},  {"driver", F_STR},
    {"transport", F_STR},   {"claim_options", F_STR}, {"options", F_STR}, {"description", F_STR}};

static const struct field gap_fields[] = {{"object", F_STR}, {"what", F_STR}, {"error", F_STR}};

static const struct field vm_fields[] = {
    {"moref", F_STR},      {"name", F_STR},     {"template", F_BOOL}, {"power_state", F_STR},
    {"hw_version", F_STR}, {"ft_state", F_STR}, {"host", F_STR},      {"vm_path_name", F_STR}};
static const struct member vm_members[] = {
    {"datastores", 0}, {"controllers", 0}, {"disks", 0}, {"snapshots", 0}, {NULL, 0}};

static const struct field ds_moref_field[] = {{"datastore", F_STR}};

static const struct field controller_fields[] = {
    {"key", F_INT}, {"type", F_STR}, {"shared_bus", F_STR}, {"bus_number", F_INT}};

static const struct field disk_fields[] = {{"key", F_INT},
                                           {"label", F_STR},
                                           {"file_name", F_STR},
                                           {"datastore", F_STR},
                                           {"capacity_bytes", F_INT},
                                           {"format", F_STR},
                                           {"controller_key", F_INT},
                                           {"unit_number", F_INT}};

static const struct field snapshot_fields[] = {
    {"name", F_STR}, {"created", F_INT}, {"depth", F_INT}};

static const struct field entity_fields[] = {
    {"moref", F_STR}, {"type", F_STR}, {"name", F_STR}, {"parent", F_STR}};

static const struct field alarm_fields[] = {
    {"moref", F_STR},  {"name", F_STR},        {"system_name", F_STR}, {"enabled", F_BOOL},
    {"entity", F_STR}, {"entity_type", F_STR}, {"entity_name", F_STR}};
static const struct member alarm_members[] = {{"metrics", 0}, {NULL, 0}};

static const struct field alarm_metric_fields[] = {
    {"object_type", F_STR}, {"counter_id", F_INT}, {"counter", F_STR}, {"unit", F_STR},
    {"operator", F_STR},    {"yellow", F_INT},     {"red", F_INT}};

/* In order: a loader's parents are always loaded by an earlier one. Device names sort by
 * length first so vmk2 comes before vmk10. */
static const struct loader loaders[] = {
    {.sql = "SELECT moref, name, capacity, free_space FROM storage_pods WHERE vcenter = ?1"
            " ORDER BY name, moref",
     .parent = R_NONE,
     .member = "storage_pods",
     .fields = pod_fields,
     .nfields = NF(pod_fields),
     .reg = R_POD,
     .rkey = {0},
     .nrkey = 1,
     .members = pod_members},
    {.sql = "SELECT d.moref, d.name, d.type, d.url, d.capacity, d.free_space, d.uncommitted,"
            " d.accessible, d.maintenance_mode, d.vmfs_major, d.nas_remote_host, d.parent,"
            " p.name, d.vm_count, d.vmfs_version, d.vmfs_local, d.vmfs_ssd, d.unmap_priority"
            " FROM datastores d LEFT JOIN storage_pods p"
            " ON p.vcenter = d.vcenter AND p.moref = d.parent"
            " WHERE d.vcenter = ?1 ORDER BY d.name, d.moref",
     .parent = R_NONE,
     .member = "datastores",
     .fields = ds_fields,
     .nfields = NF(ds_fields),
     .reg = R_DATASTORE,
     .rkey = {0},
     .nrkey = 1,
     .members = ds_members},
    {.sql = "SELECT datastore, disk_name, partition FROM datastore_extents WHERE vcenter = ?1"
            " ORDER BY datastore, position",
     .parent = R_DATASTORE,
     .pkey = {0},
     .npkey = 1,
     .member = "extents",
     .first = 1,
     .fields = extent_fields,
     .nfields = NF(extent_fields),
     .reg = R_NONE},
    {.sql = "SELECT datastore, host, mounted, accessible, access_mode FROM datastore_hosts"
            " WHERE vcenter = ?1 ORDER BY datastore, host",
     .parent = R_DATASTORE,
     .pkey = {0},
     .npkey = 1,
     .member = "hosts",
     .first = 1,
     .fields = mount_fields,
     .nfields = NF(mount_fields),
     .reg = R_NONE},
    {.sql = "SELECT parent, moref FROM datastores WHERE vcenter = ?1 AND parent IS NOT NULL"
            " ORDER BY name, moref",
     .parent = R_POD,
     .pkey = {0},
     .npkey = 1,
     .member = "datastores",
     .mode = M_SCALAR,
     .first = 1,
     .fields = moref_field,
     .nfields = 1,
     .reg = R_NONE},
    {.sql = "SELECT moref, name, uuid, max_mtu FROM dvswitches WHERE vcenter = ?1"
            " ORDER BY name, moref",
     .parent = R_NONE,
     .member = "dvswitches",
     .fields = dvs_fields,
     .nfields = NF(dvs_fields),
     .reg = R_NONE},
    {.sql = "SELECT moref, name, parent, connection_state FROM hosts WHERE vcenter = ?1"
            " ORDER BY name, moref",
     .parent = R_NONE,
     .member = "hosts",
     .fields = host_fields,
     .nfields = NF(host_fields),
     .reg = R_HOST,
     .rkey = {0},
     .nrkey = 1,
     .members = host_members},
    {.sql = "SELECT host, key, value FROM host_options WHERE vcenter = ?1 ORDER BY host, key",
     .parent = R_HOST,
     .pkey = {0},
     .npkey = 1,
     .member = "options",
     .mode = M_MAP,
     .first = 1,
     .fields = kv_fields,
     .nfields = NF(kv_fields),
     .reg = R_NONE},
    {.sql = "SELECT host, name, mtu FROM vswitches WHERE vcenter = ?1 ORDER BY host, name",
     .parent = R_HOST,
     .pkey = {0},
     .npkey = 1,
     .member = "vswitches",
     .first = 1,
     .fields = vswitch_fields,
     .nfields = NF(vswitch_fields),
     .reg = R_NONE},
    {.sql = "SELECT n.host, n.device, n.mtu, n.portgroup, pg.vswitch, n.dvs_uuid,"
            " n.dvs_portgroup, n.ip FROM vnics n LEFT JOIN portgroups pg"
            " ON pg.vcenter = n.vcenter AND pg.host = n.host AND pg.name = n.portgroup"
            " WHERE n.vcenter = ?1 ORDER BY n.host, length(n.device), n.device",
     .parent = R_HOST,
     .pkey = {0},
     .npkey = 1,
     .member = "vnics",
     .first = 1,
     .fields = vnic_fields,
     .nfields = NF(vnic_fields),
     .reg = R_NONE},
    {.sql = "SELECT host, device, type, driver, model, status FROM hbas WHERE vcenter = ?1"
            " ORDER BY host, length(device), device",
     .parent = R_HOST,
     .pkey = {0},
     .npkey = 1,
     .member = "hbas",
     .first = 1,
     .fields = any_hba_fields,
     .nfields = NF(any_hba_fields),
     .reg = R_NONE},
    {.sql = "SELECT host, device, iscsi_name, model FROM iscsi_hbas WHERE vcenter = ?1"
            " ORDER BY host, length(device), device",
     .parent = R_HOST,
     .pkey = {0},
     .npkey = 1,
     .member = "iscsi_hbas",
     .first = 1,
     .fields = hba_fields,
     .nfields = NF(hba_fields),
     .reg = R_HBA,
     .rkey = {0, 1},
     .nrkey = 2,
     .members = hba_members},
    {.sql = "SELECT host, hba, vnic FROM iscsi_bindings WHERE vcenter = ?1"
            " ORDER BY host, hba, length(vnic), vnic",
     .parent = R_HBA,
     .pkey = {0, 1},
     .npkey = 2,
     .member = "bound_vnics",
     .mode = M_SCALAR,
     .first = 2,
     .fields = vnic_name_field,
     .nfields = 1,
     .reg = R_NONE},
    /* iscsi_name is '' for send targets in the table (it is part of the key): null here. */
    {.sql = "SELECT host, hba, kind, target, address, port, nullif(iscsi_name, ''),"
            " discovery_method, parent, iscsi_name FROM iscsi_targets"
            " WHERE vcenter = ?1 ORDER BY host, hba, kind, address, port, iscsi_name",
     .parent = R_HBA,
     .pkey = {0, 1},
     .npkey = 2,
     .member = "targets",
     .first = 2,
     .fields = target_fields,
     .nfields = NF(target_fields),
     .reg = R_TARGET,
     .rkey = {0, 1, 2, 3, 9},
     .nrkey = 5,
     .members = target_members},
    {.sql = "SELECT host, hba, key, value, inherited FROM iscsi_options"
            " WHERE vcenter = ?1 AND target = '' ORDER BY host, hba, key",
     .parent = R_HBA,
     .pkey = {0, 1},
     .npkey = 2,
     .member = "options",
     .first = 2,
     .fields = iscsi_option_fields,
     .nfields = NF(iscsi_option_fields),
     .reg = R_NONE},
    {.sql =
         "SELECT host, hba, kind, target, iscsi_name, key, value, inherited FROM iscsi_options"
         " WHERE vcenter = ?1 AND target <> '' ORDER BY host, hba, kind, target, iscsi_name, key",
     .parent = R_TARGET,
     .pkey = {0, 1, 2, 3, 4},
     .npkey = 5,
     .member = "options",
     .first = 5,
     .fields = iscsi_option_fields,
     .nfields = NF(iscsi_option_fields),
     .reg = R_NONE},
    {.sql = "SELECT l.host, l.canonical_name, l.display_name, l.vendor, l.model, l.lun_type,"
            " l.local, l.psp, l.satp, n.iops, n.psp_config, l.policy_type, l.multipath_plugin"
            " FROM luns l LEFT JOIN nmp_devices n"
            " ON n.vcenter = l.vcenter AND n.host = l.host AND n.device = l.canonical_name"
            " WHERE l.vcenter = ?1 ORDER BY l.host, l.canonical_name",
     .parent = R_HOST,
     .pkey = {0},
     .npkey = 1,
     .member = "luns",
     .first = 1,
     .fields = lun_fields,
     .nfields = NF(lun_fields),
     .reg = R_LUN,
     .rkey = {0, 1},
     .nrkey = 2,
     .members = lun_members},
    {.sql = "SELECT host, lun, name, state, adapter FROM lun_paths WHERE vcenter = ?1"
            " ORDER BY host, lun, name",
     .parent = R_LUN,
     .pkey = {0, 1},
     .npkey = 2,
     .member = "paths",
     .first = 2,
     .fields = path_fields,
     .nfields = NF(path_fields),
     .reg = R_NONE},
    {.sql = "SELECT host, satp, vendor, model, psp, psp_options, rule_group, device, driver,"
            " transport, claim_options, options, description FROM satp_rules"
            " WHERE vcenter = ?1 ORDER BY host, satp, vendor, model, rule_group, psp,"
            " psp_options, device, driver, transport, claim_options, options",
     .parent = R_HOST,
     .pkey = {0},
     .npkey = 1,
     .member = "satp_rules",
     .first = 1,
     .fields = satp_rule_fields,
     .nfields = NF(satp_rule_fields),
     .reg = R_NONE},
    {.sql = "SELECT object, object, what, error FROM gaps WHERE vcenter = ?1 ORDER BY object, what",
     .parent = R_HOST,
     .pkey = {0},
     .npkey = 1,
     .member = "gaps",
     .first = 1,
     .fields = gap_fields,
     .nfields = NF(gap_fields),
     .reg = R_NONE,
     .orphans = "gaps"},
    {.sql = "SELECT moref, name, template, power_state, hw_version, ft_state, host, vm_path_name"
            " FROM vms WHERE vcenter = ?1 ORDER BY name, moref",
     .parent = R_NONE,
     .member = "vms",
     .fields = vm_fields,
     .nfields = NF(vm_fields),
     .reg = R_VM,
     .rkey = {0},
     .nrkey = 1,
     .members = vm_members},
    {.sql = "SELECT v.vm, v.datastore FROM vm_datastores v LEFT JOIN datastores d"
            " ON d.vcenter = v.vcenter AND d.moref = v.datastore"
            " WHERE v.vcenter = ?1 ORDER BY v.vm, d.name, v.datastore",
     .parent = R_VM,
     .pkey = {0},
     .npkey = 1,
     .member = "datastores",
     .mode = M_SCALAR,
     .first = 1,
     .fields = ds_moref_field,
     .nfields = 1,
     .reg = R_NONE},
    {.sql = "SELECT vm, key, type, shared_bus, bus_number FROM controllers WHERE vcenter = ?1"
            " ORDER BY vm, key",
     .parent = R_VM,
     .pkey = {0},
     .npkey = 1,
     .member = "controllers",
     .first = 1,
     .fields = controller_fields,
     .nfields = NF(controller_fields),
     .reg = R_NONE},
    {.sql = "SELECT vm, key, label, file_name, datastore, capacity_bytes, format, controller_key,"
            " unit_number FROM vdisks WHERE vcenter = ?1 ORDER BY vm, key",
     .parent = R_VM,
     .pkey = {0},
     .npkey = 1,
     .member = "disks",
     .first = 1,
     .fields = disk_fields,
     .nfields = NF(disk_fields),
     .reg = R_NONE},
    {.sql = "SELECT vm, name, created, depth FROM snapshots WHERE vcenter = ?1"
            " ORDER BY vm, depth, created, name",
     .parent = R_VM,
     .pkey = {0},
     .npkey = 1,
     .member = "snapshots",
     .first = 1,
     .fields = snapshot_fields,
     .nfields = NF(snapshot_fields),
     .reg = R_NONE},
    {.sql = "SELECT moref, type, name, parent FROM entities WHERE vcenter = ?1"
            " ORDER BY name, moref",
     .parent = R_NONE,
     .member = "entities",
     .fields = entity_fields,
     .nfields = NF(entity_fields),
     .reg = R_NONE},
    {.sql = "SELECT moref FROM alarm_managers WHERE vcenter = ?1 ORDER BY moref",
     .parent = R_NONE,
     .member = "alarm_managers",
     .mode = M_SCALAR,
     .fields = moref_field,
     .nfields = 1,
     .reg = R_NONE},
    /* The entity an alarm is defined on, by name, wherever the snapshot has one. */
    {.sql = "SELECT a.moref, a.name, a.system_name, a.enabled, a.entity, a.entity_type,"
            " coalesce(e.name, d.name, h.name, v.name) FROM alarms a"
            " LEFT JOIN entities e ON e.vcenter = a.vcenter AND e.moref = a.entity"
            " LEFT JOIN datastores d ON d.vcenter = a.vcenter AND d.moref = a.entity"
            " LEFT JOIN hosts h ON h.vcenter = a.vcenter AND h.moref = a.entity"
            " LEFT JOIN vms v ON v.vcenter = a.vcenter AND v.moref = a.entity"
            " WHERE a.vcenter = ?1 ORDER BY a.name, a.moref",
     .parent = R_NONE,
     .member = "alarms",
     .fields = alarm_fields,
     .nfields = NF(alarm_fields),
     .reg = R_ALARM,
     .rkey = {0},
     .nrkey = 1,
     .members = alarm_members},
    {.sql = "SELECT m.alarm, m.object_type, m.counter_id, p.name, p.unit, m.operator, m.yellow,"
            " m.red FROM alarm_metrics m LEFT JOIN perf_counters p"
            " ON p.vcenter = m.vcenter AND p.counter_id = m.counter_id"
            " WHERE m.vcenter = ?1 ORDER BY m.alarm, m.pos",
     .parent = R_ALARM,
     .pkey = {0},
     .npkey = 1,
     .member = "metrics",
     .first = 1,
     .fields = alarm_metric_fields,
     .nfields = NF(alarm_metric_fields),
     .reg = R_NONE},
};

#define NLOADERS NF(loaders)

/* The vCenter object's members, in output order, before the loaders fill them. */
static const struct member vcenter_members[] = {
    {"datastores", 0}, {"storage_pods", 0}, {"dvswitches", 0},     {"hosts", 0},  {"vms", 0},
    {"gaps", 0},       {"entities", 0},     {"alarm_managers", 0}, {"alarms", 0}, {NULL, 0}};

/* A column as JSON. Text that is not valid UTF-8 (jansson refuses it) becomes null rather
 * than failing the whole dump. Returns NULL only when out of memory. */
static json_t *column(sqlite3_stmt *st, int i, enum ftype t)
{
    const char *s;
    json_t *v;

    if (sqlite3_column_type(st, i) == SQLITE_NULL)
        return json_null();
    switch (t) {
    case F_INT:
        return json_integer(sqlite3_column_int64(st, i));
    case F_BOOL:
        return json_boolean(sqlite3_column_int64(st, i) != 0);
    default:
        s = (const char *)sqlite3_column_text(st, i);
        if (!s)
            return NULL;
        v = json_stringn(s, (size_t)sqlite3_column_bytes(st, i));
        if (!v)
            log_debug("db: column %s is not UTF-8", sqlite3_column_name(st, i));
        return v ? v : json_null();
    }
}

/* Joins the key columns into buf. Returns NULL if the key does not fit (then nothing in a
 * registry can match it anyway). */
static const char *row_key(sqlite3_stmt *st, const int *cols, int n, char *buf, size_t size)
{
    size_t len = 0;
    int i;

    buf[0] = '\0';
    for (i = 0; i < n; i++) {
        const char *s = (const char *)sqlite3_column_text(st, cols[i]);
        int w = snprintf(buf + len, size - len, "%s%s", i ? KEY_SEP : "", s ? s : "");
        if (w < 0 || (size_t)w >= size - len)
            return NULL;
        len += (size_t)w;
    }
    return buf;
}

static int add_members(json_t *o, const struct member *m)
{
    for (; m && m->name; m++) {
        if (json_object_set_new(o, m->name, m->is_object ? json_object() : json_array()) < 0)
            return -ENOMEM;
    }
    return 0;
}

/* Builds the row's JSON value per the loader's mode. Returns NULL when out of memory. */
static json_t *row_value(const struct loader *l, sqlite3_stmt *st)
{
    json_t *o;
    int i;

    if (l->mode == M_SCALAR)
        return column(st, l->first, l->fields[0].type);
    o = json_object();
    if (!o)
        return NULL;
    for (i = 0; i < l->nfields; i++) {
        if (l->fields[i].type == F_SKIP)
            continue;
        if (json_object_set_new(o, l->fields[i].name, column(st, l->first + i, l->fields[i].type)))
            goto fail;
    }
    if (add_members(o, l->members) < 0)
        goto fail;
    return o;

fail:
    json_decref(o);
    return NULL;
}

/* Runs one loader for one vCenter. st is prepared and bound; it is reset on return. */
static int run_loader(const struct loader *l, sqlite3_stmt *st, json_t *vc, json_t **regs)
{
    char key[1024];
    json_t *v = NULL;
    int rc, r = 0;

    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        json_t *parent = vc, *container;
        const char *member = l->member;

        if (l->parent != R_NONE) {
            const char *k = row_key(st, l->pkey, l->npkey, key, sizeof(key));
            parent = k ? json_object_get(regs[l->parent], k) : NULL;
            if (!parent && l->orphans) {
                parent = vc;
                member = l->orphans;
            }
            if (!parent)
                continue; /* a child of an object this snapshot does not hold */
        }
        container = json_object_get(parent, member);
        assert(container);
        v = row_value(l, st);
        if (!v) {
            r = -ENOMEM;
            goto out;
        }
        if (l->mode == M_MAP) {
            /* Option names come from the server: one that is not UTF-8 is left out. */
            json_t *name = column(st, l->first, F_STR);
            if (json_is_string(name) && json_object_set(container, json_string_value(name),
                                                        json_object_get(v, "value")) < 0)
                r = -ENOMEM;
            json_decref(name);
            if (r < 0)
                goto out;
        } else if (json_array_append(container, v) < 0) {
            r = -ENOMEM;
            goto out;
        }
        if (l->reg != R_NONE) {
            const char *k = row_key(st, l->rkey, l->nrkey, key, sizeof(key));
            if (k && json_object_set_nocheck(regs[l->reg], k, v) < 0) {
                r = -ENOMEM;
                goto out;
            }
        }
        json_decref(v);
        v = NULL;
    }
    if (rc != SQLITE_DONE)
        r = db_err(rc);
out:
    json_decref(v);
    sqlite3_reset(st);
    return r;
}

static json_t *last_poll(sqlite3_stmt *st)
{
    int64_t started, finished;
    json_t *p;

    if (sqlite3_column_type(st, 2) == SQLITE_NULL)
        return json_null();
    started = sqlite3_column_int64(st, 2);
    finished = sqlite3_column_int64(st, 3);
    p = json_object();
    if (!p)
        return NULL;
    if (json_object_set_new(p, "started_ms", json_integer(started)) ||
        json_object_set_new(p, "finished_ms", json_integer(finished)) ||
        json_object_set_new(p, "duration_ms", json_integer(finished - started)) ||
        json_object_set_new(p, "ok", json_boolean(sqlite3_column_int(st, 4) != 0)) ||
        json_object_set_new(p, "error", column(st, 5, F_STR))) {
        json_decref(p);
        return NULL;
    }
    return p;
}

/* Builds one vCenter's object from the current row of vst and every loader. */
static int vcenter_json(sqlite3_stmt *vst, sqlite3_stmt **lst, json_t **out)
{
    json_t *vc = json_object();
    json_t *regs[R_NREG] = {NULL};
    const char *name = (const char *)sqlite3_column_text(vst, 0);
    int i, r = -ENOMEM;

    *out = NULL;
    if (!vc || !name)
        goto out;
    if (json_object_set_new(vc, "name", column(vst, 0, F_STR)) ||
        json_object_set_new(vc, "url", column(vst, 1, F_STR)) ||
        json_object_set_new(vc, "last_poll", last_poll(vst)) ||
        add_members(vc, vcenter_members) < 0)
        goto out;
    for (i = 0; i < R_NREG; i++) {
        regs[i] = json_object();
        if (!regs[i])
            goto out;
    }
    for (i = 0; i < NLOADERS; i++) {
        int rc = sqlite3_bind_text(lst[i], 1, name, -1, SQLITE_TRANSIENT);
        if (rc != SQLITE_OK) {
            r = db_err(rc);
            goto out;
        }
        r = run_loader(&loaders[i], lst[i], vc, regs);
        if (r < 0)
            goto out;
    }
    *out = vc;
    vc = NULL;
    r = 0;
out:
    for (i = 0; i < R_NREG; i++)
        json_decref(regs[i]);
    json_decref(vc);
    return r;
}

int db_inventory_json(struct db *db, const char *vcenter, json_t **out)
{
    static const char vc_sql[] =
        "SELECT v.name, v.url, p.started_ms, p.finished_ms, p.ok, p.error FROM vcenters v"
        " LEFT JOIN polls p ON p.id = v.last_poll_id"
        " WHERE ?1 IS NULL OR v.name = ?1 ORDER BY v.name";
    sqlite3_stmt *vst = NULL, *lst[NLOADERS] = {NULL};
    json_t *root = NULL, *list, *vc;
    int i, rc, r, in_tx = 0;

    assert(db && out);
    assert(!db->in_snapshot);
    *out = NULL;
    /* One read transaction: with WAL it pins one committed state, so a poll committing while we
     * read cannot give us half of the old snapshot and half of the new one. */
    rc = sqlite3_exec(db->h, "BEGIN", NULL, NULL, NULL);
    if (rc != SQLITE_OK)
        goto fail_db;
    in_tx = 1;
    rc = sqlite3_prepare_v2(db->h, vc_sql, -1, &vst, NULL);
    if (rc != SQLITE_OK)
        goto fail_db;
    rc = vcenter ? sqlite3_bind_text(vst, 1, vcenter, -1, SQLITE_STATIC) : SQLITE_OK;
    if (rc != SQLITE_OK)
        goto fail_db;
    for (i = 0; i < NLOADERS; i++) {
        rc = sqlite3_prepare_v2(db->h, loaders[i].sql, -1, &lst[i], NULL);
        if (rc != SQLITE_OK)
            goto fail_db;
    }
    root = json_object();
    list = json_array();
    if (!root || json_object_set_new(root, "vcenters", list) < 0) {
        r = -ENOMEM;
        goto out;
    }
    while ((rc = sqlite3_step(vst)) == SQLITE_ROW) {
        r = vcenter_json(vst, lst, &vc);
        if (r < 0)
            goto out;
        if (json_array_append_new(list, vc) < 0) {
            r = -ENOMEM;
            goto out;
        }
    }
    if (rc != SQLITE_DONE)
        goto fail_db;
    if (vcenter && json_array_size(list) == 0) {
        r = -VSL_ENOTFOUND;
        goto out;
    }
    *out = root;
    root = NULL;
    r = 0;
    goto out;

fail_db:
    log_debug("db: reading inventory: %s", sqlite3_errmsg(db->h));
    r = db_err(rc);
    if (r == 0)
        r = -VSL_EDB;
out:
    sqlite3_finalize(vst);
    for (i = 0; i < NLOADERS; i++)
        sqlite3_finalize(lst[i]);
    if (in_tx)
        sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL);
    json_decref(root);
    return r;
}
