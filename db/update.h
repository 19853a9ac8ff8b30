/* Applying a vCenter's changes to its stored snapshot without a full re-read: one transaction in
 * which each changed object's rows (its own table's and its child tables': a VM's disks,
 * snapshots, controllers; a host's LUNs, paths, vnics, HBAs, options ...) are removed and the
 * re-read ones inserted through the usual sink. */
#ifndef DB_UPDATE_H
#define DB_UPDATE_H

#include "db/db.h"

/* Opens the transaction (BEGIN IMMEDIATE) without removing anything; *sink inserts rows. */
int db_update_begin(struct db *db, const char *vcenter, struct db_snapshot **out,
                    struct vim_sink *sink);
/* Removes every row of the object moref of vSphere type (VirtualMachine, HostSystem, Datastore,
 * StoragePod, DistributedVirtualSwitch) and of its child tables, its gaps and its entity row.
 * -EINVAL for another type. */
int db_update_forget(struct db_snapshot *u, const char *type, const char *moref);
/* Commits and frees u; on failure rolls back (the snapshot stays as it was) and frees u. */
int db_update_commit(struct db_snapshot *u);

#endif
