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

/* --- text ------------------------------------------------------------------------------- */

#define LINE_MAX_COLS 119

/* Prints one line, cut to fit LINE_MAX_COLS columns (at a UTF-8 character boundary), so no
 * server-supplied name can wrap an administrator's terminal table. */
static void line(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line(FILE *f, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if (n > LINE_MAX_COLS) {
        n = LINE_MAX_COLS;
        while (n > 0 && ((unsigned char)buf[n] & 0xC0) == 0x80)
            n--;
    }
    while (n > 0 && buf[n - 1] == ' ')
        n--;
    fprintf(f, "%.*s\n", n, buf);
}

static const char *str(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "-";
}

static double gib(const json_t *o, const char *k)
{
    return (double)json_integer_value(json_object_get(o, k)) / (1024.0 * 1024.0 * 1024.0);
}

/* Formats unix milliseconds as UTC ISO-8601. */
static const char *iso_time(int64_t ms, char *buf, size_t size)
{
    time_t t = (time_t)(ms / 1000);
    struct tm tm;

    if (!gmtime_r(&t, &tm) || strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        snprintf(buf, size, "?");
    return buf;
}

static void text_header(const json_t *vc, FILE *f)
{
    const json_t *p = json_object_get(vc, "last_poll");
    char when[32];

    line(f, "vCenter %s  %s", str(vc, "name"), str(vc, "url"));
    if (!json_is_object(p)) {
        line(f, "  last poll: never");
        return;
    }
    iso_time(json_integer_value(json_object_get(p, "started_ms")), when, sizeof(when));
    if (json_is_true(json_object_get(p, "ok")))
        line(f, "  last poll: %s, took %.1f s, ok", when,
             (double)json_integer_value(json_object_get(p, "duration_ms")) / 1000.0);
    else
        line(f, "  last poll: %s, took %.1f s, FAILED: %s", when,
             (double)json_integer_value(json_object_get(p, "duration_ms")) / 1000.0,
             str(p, "error"));
}

static void text_datastores(const json_t *vc, FILE *f)
{
    const json_t *list = json_object_get(vc, "datastores"), *d;
    size_t i;

    line(f, "  Datastores (%zu)", json_array_size(list));
    if (json_array_size(list) == 0)
        return;
    line(f, "    %-32s %-6s %10s %10s %7s %5s  %s", "NAME", "TYPE", "CAP GiB", "FREE GiB", "FREE %",
         "VMs", "POD");
    json_array_foreach(list, i, d)
    {
        json_int_t cap = json_integer_value(json_object_get(d, "capacity"));
        json_int_t free_b = json_integer_value(json_object_get(d, "free_space"));
        char pct[16] = "-";

        if (cap > 0 && json_is_integer(json_object_get(d, "free_space")))
            snprintf(pct, sizeof(pct), "%.1f", 100.0 * (double)free_b / (double)cap);
        line(f, "    %-32.32s %-6.6s %10.1f %10.1f %7s %5lld  %s%s", str(d, "name"), str(d, "type"),
             gib(d, "capacity"), gib(d, "free_space"), pct,
             (long long)json_integer_value(json_object_get(d, "vm_count")), str(d, "storage_pod"),
             json_is_false(json_object_get(d, "accessible")) ? "  INACCESSIBLE" : "");
    }
}

/* Finds the option named key in an array of {"key","value","inherited"}. */
static const json_t *find_option(const json_t *options, const char *key)
{
    const json_t *o;
    size_t i;

    json_array_foreach(options, i, o)
    {
        if (strcmp(str(o, "key"), key) == 0)
            return o;
    }
    return NULL;
}

static void delayed_ack(const json_t *options, char *buf, size_t size)
{
    const json_t *o = find_option(options, "DelayedAck");

    if (!o)
        snprintf(buf, size, "unknown");
    else
        snprintf(buf, size, "%s%s", str(o, "value"),
                 json_is_true(json_object_get(o, "inherited")) ? " (inherited)" : "");
}

static void text_vnics(const json_t *h, const json_t *dvs_by_uuid, FILE *f)
{
    const json_t *vnics = json_object_get(h, "vnics"), *n, *s;
    size_t i;

    json_array_foreach(json_object_get(h, "vswitches"), i, s)
    {
        line(f, "      vSwitch %-24.24s MTU %lld", str(s, "name"),
             (long long)json_integer_value(json_object_get(s, "mtu")));
    }
    json_array_foreach(vnics, i, n)
    {
        char mtu[16] = "?";
        const json_t *dvs_uuid = json_object_get(n, "dvs_uuid");

        if (json_is_integer(json_object_get(n, "mtu")))
            snprintf(mtu, sizeof(mtu), "%lld",
                     (long long)json_integer_value(json_object_get(n, "mtu")));
        if (json_is_string(dvs_uuid)) {
            const char *dvs =
                str(json_object_get(dvs_by_uuid, json_string_value(dvs_uuid)), "name");
            line(f, "      vmknic %-8.8s MTU %-5s DVS %s / %s  %s", str(n, "device"), mtu,
                 strcmp(dvs, "-") ? dvs : json_string_value(dvs_uuid), str(n, "dvs_portgroup"),
                 str(n, "ip"));
        } else {
            line(f, "      vmknic %-8.8s MTU %-5s %s / %s  %s", str(n, "device"), mtu,
                 str(n, "portgroup"), str(n, "vswitch"), str(n, "ip"));
        }
    }
}

static void text_iscsi(const json_t *h, FILE *f)
{
    const json_t *hba, *t, *v;
    char ack[64];
    size_t i, j, k;

    json_array_foreach(json_object_get(h, "iscsi_hbas"), i, hba)
    {
        char bound[256] = "";
        size_t len = 0;

        json_array_foreach(json_object_get(hba, "bound_vnics"), k, v)
        {
            int w = snprintf(bound + len, sizeof(bound) - len, "%s%s", k ? "," : "",
                             json_string_value(v) ? json_string_value(v) : "?");
            if (w < 0 || (size_t)w >= sizeof(bound) - len)
                break;
            len += (size_t)w;
        }
        delayed_ack(json_object_get(hba, "options"), ack, sizeof(ack));
        line(f, "      iSCSI %-9s %s  bound: %s  DelayedAck %s", str(hba, "device"),
             str(hba, "iscsi_name"), len ? bound : "none", ack);
        json_array_foreach(json_object_get(hba, "targets"), j, t)
        {
            delayed_ack(json_object_get(t, "options"), ack, sizeof(ack));
            line(f, "        target %-6s %s:%lld  %s  DelayedAck %s", str(t, "kind"),
                 str(t, "address"), (long long)json_integer_value(json_object_get(t, "port")),
                 json_is_string(json_object_get(t, "iscsi_name")) ? str(t, "iscsi_name") : "", ack);
        }
    }
}

static void text_luns(const json_t *h, FILE *f)
{
    const json_t *luns = json_object_get(h, "luns"), *l, *p;
    size_t i, j;

    if (json_array_size(luns) == 0)
        return;
    line(f, "      %-40s %-14s %-8s %s", "LUN", "POLICY", "IOPS", "PATHS");
    json_array_foreach(luns, i, l)
    {
        char iops[24] = "unknown", dead[128] = "";
        size_t active = 0, dlen = 0;

        if (json_is_integer(json_object_get(l, "iops_limit")))
            snprintf(iops, sizeof(iops), "%lld",
                     (long long)json_integer_value(json_object_get(l, "iops_limit")));
        json_array_foreach(json_object_get(l, "paths"), j, p)
        {
            if (strcmp(str(p, "state"), "active") == 0)
                active++;
            else if (strcmp(str(p, "state"), "dead") == 0) {
                int w = snprintf(dead + dlen, sizeof(dead) - dlen, "%s%s",
                                 dlen ? "," : ", dead: ", str(p, "name"));
                if (w > 0 && (size_t)w < sizeof(dead) - dlen)
                    dlen += (size_t)w;
            }
        }
        line(f, "      %-40.40s %-14.14s %-8s %zu/%zu active%s%s", str(l, "canonical_name"),
             str(l, "policy"), iops, active, json_array_size(json_object_get(l, "paths")), dead,
             json_is_true(json_object_get(l, "local")) ? "  (local)" : "");
    }
}

/* The user's claim rules in full; the system rules (dozens, the same on every host of a
 * release) only counted. */
static void text_satp_rules(const json_t *h, FILE *f)
{
    const json_t *rules = json_object_get(h, "satp_rules"), *r;
    size_t i, system = 0;

    if (json_array_size(rules) == 0)
        return;
    json_array_foreach(rules, i, r)
    {
        if (strcmp(str(r, "rule_group"), "system") == 0) {
            system++;
            continue;
        }
        line(f, "      claim rule (%s): %s vendor %s model %s -> %s %s", str(r, "rule_group"),
             str(r, "satp"), str(r, "vendor"), str(r, "model"), str(r, "psp"),
             str(r, "psp_options"));
    }
    line(f, "      %zu system claim rules", system);
}

static void text_hosts(const json_t *vc, FILE *f)
{
    const json_t *hosts = json_object_get(vc, "hosts"), *h, *g, *d;
    json_t *dvs_by_uuid = json_object();
    size_t i, j;

    /* vmknics name their DVS by uuid; an administrator knows it by name. */
    json_array_foreach(json_object_get(vc, "dvswitches"), i, d)
    {
        const char *uuid = json_string_value(json_object_get(d, "uuid"));
        if (uuid && dvs_by_uuid)
            json_object_set_nocheck(dvs_by_uuid, uuid, (json_t *)d);
    }
    line(f, "  Hosts (%zu)", json_array_size(hosts));
    json_array_foreach(hosts, i, h)
    {
        line(f, "    %s  (%s, in %s)", str(h, "name"), str(h, "connection_state"),
             str(h, "parent"));
        text_vnics(h, dvs_by_uuid, f);
        text_iscsi(h, f);
        text_luns(h, f);
        text_satp_rules(h, f);
        json_array_foreach(json_object_get(h, "gaps"), j, g)
        {
            line(f, "      not read: %s: %s", str(g, "what"), str(g, "error"));
        }
    }
    json_decref(dvs_by_uuid);
}

static void text_vms(const json_t *vc, FILE *f)
{
    const json_t *vms = json_object_get(vc, "vms"), *m, *c, *d;
    json_t *ds_names = json_object();
    size_t i, j;

    json_array_foreach(json_object_get(vc, "datastores"), i, d)
    {
        const char *moref = json_string_value(json_object_get(d, "moref"));
        if (moref && ds_names)
            json_object_set_nocheck(ds_names, moref, json_object_get(d, "name"));
    }
    line(f, "  VMs (%zu)", json_array_size(vms));
    json_array_foreach(vms, i, m)
    {
        char ctl[160] = "";
        size_t len = 0;

        json_array_foreach(json_object_get(m, "controllers"), j, c)
        {
            int w = snprintf(ctl + len, sizeof(ctl) - len, "%s%s", len ? ", " : "", str(c, "type"));
            if (w < 0 || (size_t)w >= sizeof(ctl) - len)
                break;
            len += (size_t)w;
        }
        line(f, "    %-32.32s %-11s %-7s %s%s", str(m, "name"), str(m, "power_state"),
             str(m, "hw_version"), len ? ctl : "no controllers",
             json_is_true(json_object_get(m, "template")) ? "  (template)" : "");
        json_array_foreach(json_object_get(m, "disks"), j, d)
        {
            const char *ds = json_string_value(json_object_get(d, "datastore"));
            const char *dsname = ds ? json_string_value(json_object_get(ds_names, ds)) : NULL;

            line(f, "      %-20.20s %9.1f GiB  %-16s %s", str(d, "label"), gib(d, "capacity_bytes"),
                 str(d, "format"), dsname ? dsname : (ds ? ds : "-"));
        }
    }
    json_decref(ds_names);
}

/* A threshold in hundredths of a percent, as "75 %", or "-" when unset. */
static const char *hundredths(const json_t *v, char *buf, size_t size)
{
    if (!json_is_integer(v))
        return "-";
    snprintf(buf, size, "%g %%", (double)json_integer_value(v) / 100.0);
    return buf;
}

/* The alarms with a datastore condition (a vCenter has a hundred others), one line per
 * condition; the rest only counted. */
static void text_alarms(const json_t *vc, FILE *f)
{
    const json_t *alarms = json_object_get(vc, "alarms"), *a, *m;
    size_t i, j;

    if (json_array_size(json_object_get(vc, "alarm_managers")) == 0) {
        line(f, "  Alarms: not read");
        return;
    }
    line(f, "  Alarms (%zu), those with a datastore condition:", json_array_size(alarms));
    json_array_foreach(alarms, i, a)
    {
        json_array_foreach(json_object_get(a, "metrics"), j, m)
        {
            char y[32], r[32];
            if (strcmp(str(m, "object_type"), "Datastore") != 0)
                continue;
            line(f, "    %-32.32s %-8s on %s: %s %s yellow %s red %s", str(a, "name"),
                 json_is_true(json_object_get(a, "enabled")) ? "enabled" : "DISABLED",
                 json_is_string(json_object_get(a, "entity_name")) ? str(a, "entity_name")
                                                                   : str(a, "entity"),
                 str(m, "counter"), str(m, "operator"),
                 hundredths(json_object_get(m, "yellow"), y, sizeof(y)),
                 hundredths(json_object_get(m, "red"), r, sizeof(r)));
        }
    }
}

int db_inventory_text(const json_t *inv, FILE *f)
{
    const json_t *vc, *g;
    size_t i, j;

    assert(inv && f);
    if (!json_is_array(json_object_get(inv, "vcenters")))
        return -EINVAL;
    json_array_foreach(json_object_get(inv, "vcenters"), i, vc)
    {
        if (i)
            line(f, "%s", "");
        text_header(vc, f);
        json_array_foreach(json_object_get(vc, "gaps"), j, g)
        {
            const char *obj = json_string_value(json_object_get(g, "object"));
            line(f, "  not read: %s%s%s: %s", obj && *obj ? obj : "", obj && *obj ? " " : "",
                 str(g, "what"), str(g, "error"));
        }
        text_datastores(vc, f);
        text_hosts(vc, f);
        text_vms(vc, f);
        text_alarms(vc, f);
    }
    if (fflush(f) != 0 || ferror(f)) {
        int e = errno;
        return e ? -e : -EIO;
    }
    return 0;
}
