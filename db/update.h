/* Applying a vCenter's changes to its stored snapshot without a full re-read: one transaction in
 * which each changed object's rows (its own table's and its child tables': a VM's disks,
 * snapshots, controllers; a host's LUNs, paths, vnics, HBAs, options ...) are removed and the
 * re-read ones inserted through the usual sink. */
#ifndef DB_UPDATE_H
#define DB_UPDATE_H

#include "db/db.h"

/* Starts an update; *sink stages rows (TEMP tables, no lock on the database) as
 * db_snapshot_begin()'s does. */
int db_update_begin(struct db *db, const char *vcenter, struct db_snapshot **out,
                    struct vim_sink *sink);
/* Notes that db_update_commit() is to remove every row of the object moref of vSphere type (VirtualMachine, HostSystem, Datastore,
 * StoragePod, DistributedVirtualSwitch) and of its child tables, its gaps and its entity row.
 * -EINVAL for another type. */
int db_update_forget(struct db_snapshot *u, const char *type, const char *moref);
/* An incremental (WaitForUpdatesEx) round as the polls table records it. */
struct db_round {
    int64_t started_ms, finished_ms; /* unix ms: from vCenter's answer to the end of the round */
    const char *version; /* the collector's version after the round (borrowed), or NULL */
    int64_t bytes;       /* what the round read on the wire; 0: not known */
};
/* Under one BEGIN IMMEDIATE: removes the noted objects' rows, adds the staged ones (replacing
 * rows of the same key), records round (unless NULL) as a successful poll of mode
 * 'incremental' whose counts_json is {"changed": {vSphere type: objects}} and points the
 * vCenter at it, commits; then frees u. With a round window (db_set_retention()) a round is
 * added to the vCenter's last row when that is an incremental one of the same window (rounds,
 * changes, bytes, errors and counts_json summed) instead of a row of its own. On failure rolls back (the snapshot stays as it was)
 * and frees u. */
int db_update_commit(struct db_snapshot *u, const struct db_round *round);
/* Records a round that failed (error) as a failed poll of mode 'incremental'. The vCenter's
 * last poll and last error are left alone: a full read follows at once and says how it
 * went. */
int db_update_failed(struct db *db, const char *vcenter, const struct db_round *round,
                     const char *error);
/* A round of following vcenter's changes ended well at now_ms (with or without changes): the
 * stored snapshot is current as of then, so the vCenter's last_success_ms (the snapshot age the
 * gate and `vslint gate --offline` judge by) moves on. A vCenter not stored yet is left alone. */
int db_update_confirm(struct db *db, const char *vcenter, int64_t now_ms);

#endif
