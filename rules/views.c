/* The public views of the inventory (docs/schema.md lists them with every column): what site
 * rules, `vslint query` and `vslint export` read, instead of the stored tables, whose shape is
 * db/'s own business and changes with its migrations. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "model/finding.h"
#include "rules/views.h"
#include "util/buf.h"

/* One view: its public name and its SELECT. In the SELECT, '@' stands for the inner prefix
 * (rules_views_create): "@scope" is the table of vCenters in scope. Times are ISO-8601 UTC
 * text, as the API writes them; sizes are bytes. A column the collector does not read yet is
 * NULL, documented so, and keeps its name for when it does. */
struct view {
    const char *name;
    const char *select;
};

#define ISO(ms) "strftime('%Y-%m-%dT%H:%M:%SZ', (" ms ") / 1000, 'unixepoch')"

static const struct view views[] = {
    {"vsl_schema_info", "SELECT 1 AS version"},
    {"vsl_vms",
     "SELECT v.vcenter AS vcenter, v.moref AS moref, v.name AS name,"
     " v.power_state AS power_state, v.template AS template, h.name AS host_name,"
     " c.name AS cluster_name, v.hw_version AS hardware_version, v.guest_id AS guest_id,"
     " h.moref AS host_moref, v.ft_state AS ft_state, v.vm_path_name AS vm_path_name"
     " FROM main.vms v"
     " LEFT JOIN main.hosts h ON h.vcenter = v.vcenter AND h.moref = v.host"
     " LEFT JOIN main.entities c ON c.vcenter = h.vcenter AND c.moref = h.parent"
     "  AND c.type = 'ClusterComputeResource'"
     " WHERE v.vcenter IN (SELECT vcenter FROM @scope)"},
    {"vsl_vm_disks",
     "SELECT d.vcenter AS vcenter, d.vm AS vm_moref, v.name AS vm_name, d.label AS label,"
     " d.datastore AS datastore_moref, ds.name AS datastore_name,"
     " d.capacity_bytes AS capacity_bytes,"
     " CASE WHEN d.format = 'thin' THEN 'thin' WHEN d.format = 'lazyzeroedthick' THEN 'lazy'"
     "  WHEN d.format = 'eagerzeroedthick' THEN 'eager' WHEN d.format LIKE 'rdm-%' THEN 'rdm'"
     "  WHEN d.format IS NULL THEN NULL ELSE 'other' END AS format,"
     " k.type AS controller_type, d.controller_key AS controller_key, d.sharing AS sharing,"
     " d.file_name AS file_name, d.unit_number AS unit_number,"
     " k.shared_bus AS controller_sharing, d.parent AS parent_file,"
     " CASE d.format WHEN 'rdm-physical' THEN 'physical' WHEN 'rdm-virtual' THEN 'virtual'"
     "  END AS rdm_mode"
     " FROM main.vdisks d"
     " LEFT JOIN main.vms v ON v.vcenter = d.vcenter AND v.moref = d.vm"
     " LEFT JOIN main.datastores ds ON ds.vcenter = d.vcenter AND ds.moref = d.datastore"
     " LEFT JOIN main.controllers k ON k.vcenter = d.vcenter AND k.vm = d.vm"
     "  AND k.key = d.controller_key"
     " WHERE d.vcenter IN (SELECT vcenter FROM @scope)"},
    {"vsl_datastores",
     "SELECT d.vcenter AS vcenter, d.moref AS moref, d.name AS name, d.type AS type,"
     " d.capacity AS capacity_bytes, d.free_space AS free_bytes,"
     " d.uncommitted AS uncommitted_bytes, d.accessible AS accessible,"
     " coalesce(d.vmfs_local, 0) AS local,"
     " CASE WHEN d.type = 'VMFS' THEN d.vmfs_major END AS vmfs_version,"
     " p.name AS storage_pod_name, d.vm_count AS vm_count, d.url AS url,"
     " d.maintenance_mode AS maintenance_mode, d.nas_remote_host AS nas_remote_host,"
     " d.vmfs_version AS vmfs_version_full, d.vmfs_ssd AS ssd, p.moref AS storage_pod_moref"
     " FROM main.datastores d"
     " LEFT JOIN main.storage_pods p ON p.vcenter = d.vcenter AND p.moref = d.parent"
     " WHERE d.vcenter IN (SELECT vcenter FROM @scope)"},
    {"vsl_hosts",
     "SELECT h.vcenter AS vcenter, h.moref AS moref, h.name AS name, c.name AS cluster_name,"
     " h.connection_state AS connection_state, h.product_version AS version,"
     " c.moref AS cluster_moref"
     " FROM main.hosts h"
     " LEFT JOIN main.entities c ON c.vcenter = h.vcenter AND c.moref = h.parent"
     "  AND c.type = 'ClusterComputeResource'"
     " WHERE h.vcenter IN (SELECT vcenter FROM @scope)"},
    {"vsl_luns",
     "SELECT l.vcenter AS vcenter, l.host AS host_moref, h.name AS host_name,"
     " l.canonical_name AS canonical_name, l.display_name AS display_name,"
     " l.vendor AS vendor, l.model AS model, l.lun_type AS lun_type, l.local AS local,"
     " l.psp AS psp, l.satp AS satp, n.iops AS rr_iops,"
     " (SELECT count(*) FROM main.lun_paths p WHERE p.vcenter = l.vcenter"
     "  AND p.host = l.host AND p.lun = l.canonical_name) AS path_count"
     " FROM main.luns l"
     " LEFT JOIN main.hosts h ON h.vcenter = l.vcenter AND h.moref = l.host"
     " LEFT JOIN main.nmp_devices n ON n.vcenter = l.vcenter AND n.host = l.host"
     "  AND n.device = l.canonical_name"
     " WHERE l.vcenter IN (SELECT vcenter FROM @scope)"},
    {"vsl_lun_paths",
     "SELECT p.vcenter AS vcenter, p.host AS host_moref, h.name AS host_name,"
     " p.lun AS lun, p.name AS name, p.state AS state, p.adapter AS adapter"
     " FROM main.lun_paths p"
     " LEFT JOIN main.hosts h ON h.vcenter = p.vcenter AND h.moref = p.host"
     " WHERE p.vcenter IN (SELECT vcenter FROM @scope)"},
    {"vsl_iscsi_adapters",
     "SELECT a.vcenter AS vcenter, a.host AS host_moref, h.name AS host_name,"
     " a.device AS device, a.iscsi_name AS iscsi_name, a.model AS model,"
     " (SELECT o.value FROM main.iscsi_options o WHERE o.vcenter = a.vcenter"
     "  AND o.host = a.host AND o.hba = a.device AND o.kind = '' AND o.key = 'DelayedAck')"
     "  AS delayed_ack"
     " FROM main.iscsi_hbas a"
     " LEFT JOIN main.hosts h ON h.vcenter = a.vcenter AND h.moref = a.host"
     " WHERE a.vcenter IN (SELECT vcenter FROM @scope)"},
    {"vsl_iscsi_targets",
     "SELECT t.vcenter AS vcenter, t.host AS host_moref, h.name AS host_name,"
     " t.hba AS adapter, t.kind AS kind, t.address AS address, t.port AS port,"
     " nullif(t.iscsi_name, '') AS iscsi_name, t.discovery_method AS discovery_method,"
     " (SELECT o.value FROM main.iscsi_options o WHERE o.vcenter = t.vcenter"
     "  AND o.host = t.host AND o.hba = t.hba AND o.kind = t.kind AND o.target = t.target"
     "  AND o.iscsi_name = t.iscsi_name AND o.key = 'DelayedAck') AS delayed_ack"
     " FROM main.iscsi_targets t"
     " LEFT JOIN main.hosts h ON h.vcenter = t.vcenter AND h.moref = t.host"
     " WHERE t.vcenter IN (SELECT vcenter FROM @scope)"},
    {"vsl_vmknics",
     "SELECT n.vcenter AS vcenter, n.host AS host_moref, h.name AS host_name,"
     " n.device AS device, n.portgroup AS portgroup, n.dvs_uuid AS dvs_uuid, n.mtu AS mtu,"
     " n.ip AS ip,"
     " EXISTS (SELECT 1 FROM main.iscsi_bindings b WHERE b.vcenter = n.vcenter"
     "  AND b.host = n.host AND b.vnic = n.device) AS iscsi_bound"
     " FROM main.vnics n"
     " LEFT JOIN main.hosts h ON h.vcenter = n.vcenter AND h.moref = n.host"
     " WHERE n.vcenter IN (SELECT vcenter FROM @scope)"},
    /* Pools belong to arrays, not to a vCenter: --vcenter does not restrict them. */
    {"vsl_pools",
     "SELECT p.vcenter AS array, p.id AS id, p.name AS name, p.size_total AS size_total_bytes,"
     " p.size_free AS size_free_bytes, p.size_used AS size_used_bytes,"
     " p.size_subscribed AS size_subscribed_bytes, p.alert_threshold AS alert_threshold_pct,"
     " p.health_text AS health"
     " FROM main.array_pools p"},
    {"vsl_findings",
     "SELECT f.fingerprint AS fingerprint, f.check_id AS check_id, f.vcenter AS vcenter,"
     " f.object_type AS object_type, f.object_moref AS object_moref,"
     " f.object_name AS object_name, f.host_name AS host_name, f.detail AS detail,"
     " f.severity AS severity, f.status AS status, f.message AS message,"
     " f.evidence_json AS evidence, " ISO("f.first_seen_ms") " AS first_seen,"
     " " ISO(DB_LAST_SEEN_SQL("f")) " AS last_seen, " ISO("f.resolved_at_ms") " AS resolved_at,"
     " f.resolution AS resolution, f.waiver_reason AS waiver_reason,"
     " f.waiver_expires AS waiver_expires,"
     " " ISO("f.unverified_since_ms") " AS unverified_since"
     " FROM main.findings f"
     " WHERE f.vcenter IN (SELECT vcenter FROM @scope)"},
    {"vsl_capacity_history",
     "SELECT c.vcenter AS vcenter, c.kind AS kind, c.moref AS moref,"
     " " ISO("c.t_ms") " AS time, c.capacity AS capacity_bytes, c.free_space AS free_bytes,"
     " c.uncommitted AS uncommitted_bytes"
     " FROM main.capacity_history c"
     " WHERE c.vcenter IN (SELECT vcenter FROM @scope)"},
    {"vsl_polls",
     "SELECT p.id AS id, p.vcenter AS vcenter, " ISO("p.started_ms") " AS started,"
     " " ISO("p.finished_ms") " AS finished, p.finished_ms - p.started_ms AS duration_ms,"
     " p.ok AS ok, p.error AS error, p.mode AS mode"
     " FROM main.polls p"
     " WHERE p.vcenter IN (SELECT vcenter FROM @scope)"},
};

#define NVIEWS (sizeof(views) / sizeof(views[0]))

const char *const rules_views[] = {
    "vsl_schema_info", "vsl_vms", "vsl_vm_disks", "vsl_datastores", "vsl_hosts", "vsl_luns",
    "vsl_lun_paths", "vsl_iscsi_adapters", "vsl_iscsi_targets", "vsl_vmknics", "vsl_pools",
    "vsl_findings", "vsl_capacity_history", "vsl_polls",
};
const size_t rules_nviews = sizeof(rules_views) / sizeof(rules_views[0]);
_Static_assert(sizeof(rules_views) / sizeof(rules_views[0]) == NVIEWS,
               "rules_views lists every view");

/* s with every '@' replaced by inner, appended to b. */
static int add_expanded(struct vsl_buf *b, const char *s, const char *inner)
{
    int r = 0;

    while (r == 0 && *s) {
        size_t n = strcspn(s, "@");
        r = vsl_buf_add(b, s, n);
        s += n;
        if (r == 0 && *s == '@') {
            r = vsl_buf_addstr(b, inner);
            s++;
        }
    }
    return r;
}

/* Runs b's statements (our own DDL, no input) and empties b. */
static int exec_buf(sqlite3 *h, struct vsl_buf *b, char *err, size_t errlen)
{
    char *msg = NULL;
    int rc = sqlite3_exec(h, b->data, NULL, NULL, &msg);

    if (rc != SQLITE_OK)
        snprintf(err, errlen, "cannot create the public views: %s",
                 msg ? msg : sqlite3_errstr(rc));
    sqlite3_free(msg);
    vsl_buf_reset(b);
    return rc == SQLITE_OK ? 0 : -EINVAL;
}

int rules_views_create(sqlite3 *h, const char *inner, const char *vcenter, char *err,
                       size_t errlen)
{
    struct vsl_buf b;
    sqlite3_stmt *st = NULL;
    int r;

    vsl_buf_init(&b, 64 * 1024);
    r = vsl_buf_printf(&b, "CREATE TEMP TABLE %sscope (vcenter TEXT PRIMARY KEY);", inner);
    if (r == 0)
        r = exec_buf(h, &b, err, errlen);
    if (r < 0)
        goto out;
    /* The vCenters in scope: the one asked for, or every source the database knows. */
    r = vsl_buf_printf(&b, "INSERT INTO temp.%sscope SELECT name FROM main.vcenters WHERE "
                           "?1 IS NULL OR name = ?1", inner);
    if (r == 0 && sqlite3_prepare_v2(h, b.data, -1, &st, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "cannot read the vCenters: %s", sqlite3_errmsg(h));
        r = -EINVAL;
    }
    vsl_buf_reset(&b);
    if (r < 0)
        goto out;
    sqlite3_bind_text(st, 1, vcenter, -1, SQLITE_STATIC);
    if (sqlite3_step(st) != SQLITE_DONE) {
        snprintf(err, errlen, "cannot read the vCenters: %s", sqlite3_errmsg(h));
        r = -EINVAL;
        goto out;
    }
    for (size_t i = 0; r == 0 && i < NVIEWS; i++) {
        const char *base = views[i].name + 4; /* after "vsl_" */
        r = vsl_buf_printf(&b, "CREATE TEMP VIEW %s%s AS ", inner, base);
        if (r == 0)
            r = add_expanded(&b, views[i].select, inner);
        if (r == 0)
            r = vsl_buf_printf(&b, "; CREATE TEMP VIEW %s AS SELECT * FROM temp.%s%s;",
                               views[i].name, inner, base);
    }
    if (r == 0)
        r = exec_buf(h, &b, err, errlen);
    else
        snprintf(err, errlen, "cannot create the public views: %s", strerror(-r));
out:
    sqlite3_finalize(st);
    vsl_buf_free(&b);
    return r < 0 ? -EINVAL : 0;
}
