/* The registry: every built-in check, in the order of the catalogue in DESIGN.md.
 * Adding a check is adding its file and one line here (and to meson.build). */
#include <string.h>

#include <jansson.h>

#include "checks/check.h"

extern const struct check chk_datastore_free_space;
extern const struct check chk_datastore_size;
extern const struct check chk_vms_per_datastore;
extern const struct check chk_iscsi_jumbo_frames;
extern const struct check chk_iscsi_delayed_ack;
extern const struct check chk_vdisk_format;
extern const struct check chk_multipath_policy;
extern const struct check chk_multipath_redundancy;
extern const struct check chk_device_identifier;
extern const struct check chk_pvscsi_controller;
extern const struct check chk_snapshots;
extern const struct check chk_thin_overcommit;
extern const struct check chk_satp_claim_rule;
extern const struct check chk_host_coverage;
extern const struct check chk_vmfs_version;
extern const struct check chk_datastore_alarms;
extern const struct check chk_space_reclaim;
extern const struct check chk_nfs_server_redundancy;

const struct check *const chk_registry[] = {
    &chk_datastore_free_space, &chk_datastore_size,       &chk_vms_per_datastore,
    &chk_iscsi_jumbo_frames,   &chk_iscsi_delayed_ack,    &chk_vdisk_format,
    &chk_multipath_policy,     &chk_multipath_redundancy, &chk_device_identifier,
    &chk_pvscsi_controller,    &chk_snapshots,            &chk_thin_overcommit,
    &chk_satp_claim_rule,      &chk_host_coverage,        &chk_vmfs_version,
    &chk_datastore_alarms,
    &chk_space_reclaim,
    &chk_nfs_server_redundancy,
};

const size_t chk_registry_len = sizeof(chk_registry) / sizeof(chk_registry[0]);

const struct check *chk_find(const char *id)
{
    for (size_t i = 0; i < chk_registry_len; i++)
        if (!strcmp(chk_registry[i]->id, id))
            return chk_registry[i];
    return NULL;
}

/* The catalogue as JSON, {"checks":[{id, title, severity, rationale, reference, remediation,
 * parameters:[{name, default, min, max, unit, help}]}]}: `vslint checks --format json` and
 * GET /api/v1/checks print the same document. */
json_t *chk_catalogue_json(void)
{
    json_t *arr = json_array();

    for (size_t i = 0; arr && i < chk_registry_len; i++) {
        const struct check *ck = chk_registry[i];
        json_t *params = json_array();
        for (size_t p = 0; ck->params && ck->params[p].name; p++) {
            const struct chk_param *pm = &ck->params[p];
            json_array_append_new(params, json_pack("{s:s,s:f,s:f,s:f,s:s,s:s}", "name",
                                                    pm->name, "default", pm->dflt, "min",
                                                    pm->min, "max", pm->max, "unit",
                                                    pm->unit ? pm->unit : "", "help",
                                                    pm->help ? pm->help : ""));
        }
        json_array_append_new(
            arr, json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:o}", "id", ck->id, "title", ck->title,
                           "severity", chk_severity_name(ck->severity), "rationale",
                           ck->rationale, "reference", ck->reference, "remediation",
                           ck->remediation, "parameters", params));
    }
    return arr ? json_pack("{s:o}", "checks", arr) : NULL;
}
