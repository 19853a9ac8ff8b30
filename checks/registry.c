/* The registry: every built-in check, in the order of the catalogue in DESIGN.md.
 * Adding a check is adding its file and one line here (and to meson.build). */
#include <string.h>

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

const struct check *const chk_registry[] = {
    &chk_datastore_free_space, &chk_datastore_size,       &chk_vms_per_datastore,
    &chk_iscsi_jumbo_frames,   &chk_iscsi_delayed_ack,    &chk_vdisk_format,
    &chk_multipath_policy,     &chk_multipath_redundancy, &chk_device_identifier,
    &chk_pvscsi_controller,    &chk_snapshots,            &chk_thin_overcommit,
};

const size_t chk_registry_len = sizeof(chk_registry) / sizeof(chk_registry[0]);

const struct check *chk_find(const char *id)
{
    for (size_t i = 0; i < chk_registry_len; i++)
        if (!strcmp(chk_registry[i]->id, id))
            return chk_registry[i];
    return NULL;
}
