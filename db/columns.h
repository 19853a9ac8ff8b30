/* The column list of every table: the one place a column is declared. The DDL of a new
 * database, the ADD COLUMN migrations after version 7, the INSERT of each inventory row and the
 * SELECT lists of the readers (db/load.c, db/inventory.c, db/pages.c) are generated from it.
 *
 * A column is X(S, E, column, source, TYPE, FLAGS, since, EST):
 * - column: its SQL name;
 * - source: the field of the row struct (S, a struct vim_* of model/inventory.h) that the insert
 *   binds; a function `const char *fn(const void *row, char *buf, size_t size)` for a FN column
 *   (a value the store derives, e.g. a key that must not be NULL); the declaration for RAW;
 * - TYPE: TEXT, INT (int), I64 (int64_t), BOOL (int 0/1, true/false in JSON), FN (text), or RAW
 *   (a table of db/'s own, declared as written);
 * - FLAGS: NN (NOT NULL; an inventory row whose NN text is NULL is skipped, not stored), PK
 *   (part of the primary key, in column order), KEY (both), HIDDEN (not one of the members of
 *   the row's object in the inventory JSON), EMPTY_NULL ('' is stored for NULL, so the column
 *   can be in a key; readers turn it back into NULL), or 0;
 * - since: the schema version (PRAGMA user_version) that added it;
 * - EST: the estate struct E has a field of the same name and type that db_estate_load() copies
 *   the column into; NOEST: it has none, or the loader fills it itself.
 * Every inventory table starts with an implicit `vcenter TEXT NOT NULL`, first in its key.
 * Columns are listed in the order the table has them: the order ALTER TABLE ADD COLUMN gives a
 * migrated database, so a new one is added at the end of its table's list. */
#ifndef DB_COLUMNS_H
#define DB_COLUMNS_H

#include <stddef.h>

/* Schema versions 1 to 7 were written by hand (db/schema.c) and never change; from version 8
 * on, the columns, tables and indexes a version adds are created from these lists. */
#define DB_FIRST_GENERATED 8

/* T(ENUM, table, sink, est, since, rowid): inventory tables, in the order their statements
 * are cached. sink: the vim_sink member and struct vim_<sink> of its rows; est: the estate
 * struct a row becomes (or est_none); rowid: WITHOUT_ROWID, or ROWID for a table whose key may
 * hold NULLs. */
#define DB_INVENTORY_TABLES(T)                                                                     \
    T(DATASTORE, datastores, datastore, est_datastore, 1, WITHOUT_ROWID)                           \
    T(DATASTORE_EXTENT, datastore_extents, datastore_extent, est_extent, 7, WITHOUT_ROWID)         \
    T(DATASTORE_HOST, datastore_hosts, datastore_host, est_mount, 7, WITHOUT_ROWID)                \
    T(STORAGE_POD, storage_pods, storage_pod, est_pod, 1, WITHOUT_ROWID)                           \
    T(VM, vms, vm, est_vm, 1, WITHOUT_ROWID)                                                       \
    T(VM_DATASTORE, vm_datastores, vm_datastore, est_none, 1, WITHOUT_ROWID)                       \
    T(CONTROLLER, controllers, controller, est_controller, 1, WITHOUT_ROWID)                       \
    T(VDISK, vdisks, vdisk, est_disk, 1, WITHOUT_ROWID)                                            \
    T(SNAPSHOT, snapshots, snapshot, est_snapshot, 1, ROWID)                                       \
    T(HOST, hosts, host, est_host, 1, WITHOUT_ROWID)                                               \
    T(HOST_OPTION, host_options, host_option, est_none, 1, WITHOUT_ROWID)                          \
    T(VNIC, vnics, vnic, est_vnic, 1, WITHOUT_ROWID)                                               \
    T(VSWITCH, vswitches, vswitch, est_vswitch, 1, WITHOUT_ROWID)                                  \
    T(PORTGROUP, portgroups, portgroup, est_none, 1, WITHOUT_ROWID)                                \
    T(DVSWITCH, dvswitches, dvswitch, est_dvswitch, 1, WITHOUT_ROWID)                              \
    T(HBA, hbas, hba, est_hba, 7, WITHOUT_ROWID)                                                   \
    T(ISCSI_HBA, iscsi_hbas, iscsi_hba, est_iscsi_hba, 1, WITHOUT_ROWID)                           \
    T(ISCSI_TARGET, iscsi_targets, iscsi_target, est_iscsi_target, 1, WITHOUT_ROWID)               \
    T(ISCSI_OPTION, iscsi_options, iscsi_option, est_option, 1, WITHOUT_ROWID)                     \
    T(ISCSI_BINDING, iscsi_bindings, iscsi_binding, est_none, 1, WITHOUT_ROWID)                    \
    T(LUN, luns, lun, est_lun, 1, WITHOUT_ROWID)                                                   \
    T(LUN_PATH, lun_paths, lun_path, est_path, 1, WITHOUT_ROWID)                                   \
    T(NMP_DEVICE, nmp_devices, nmp_device, est_none, 1, WITHOUT_ROWID)                             \
    T(SATP_RULE, satp_rules, satp_rule, est_satp_rule, 4, ROWID)                                   \
    T(GAP, gaps, gap, est_gap, 1, WITHOUT_ROWID)                                                   \
    T(ENTITY, entities, entity, est_entity, 6, WITHOUT_ROWID)                                      \
    T(ALARM_MANAGER, alarm_managers, alarm_manager, est_none, 6, WITHOUT_ROWID)                    \
    T(ALARM, alarms, alarm, est_alarm, 6, WITHOUT_ROWID)                                           \
    T(ALARM_METRIC, alarm_metrics, alarm_metric, est_alarm_metric, 6, WITHOUT_ROWID)               \
    T(PERF_COUNTER, perf_counters, perf_counter, est_none, 6, WITHOUT_ROWID)                    \
    T(ARRAY_POOL, array_pools, array_pool, est_none, 9, WITHOUT_ROWID)                         \
    T(ARRAY_LUN, array_luns, array_lun, est_none, 9, WITHOUT_ROWID)                             \
    T(ALARM_DISABLED, alarm_disabled, alarm_disabled, est_alarm_disabled, 11, WITHOUT_ROWID)     \
    T(ARRAY_PORT, array_ports, array_port, est_none, 11, WITHOUT_ROWID)                         \
    T(ARRAY_PORTAL, array_portals, array_portal, est_none, 12, WITHOUT_ROWID)                   \
    T(ARRAY_NAS_SERVER, array_nas_servers, array_nas_server, est_none, 12, WITHOUT_ROWID)       \
    T(ARRAY_FILE_INTERFACE, array_file_interfaces, array_file_interface, est_none, 12,          \
      WITHOUT_ROWID)                                                                             \
    T(ARRAY_FILESYSTEM, array_filesystems, array_filesystem, est_none, 12, WITHOUT_ROWID)       \
    T(ARRAY_NFS_SHARE, array_nfs_shares, array_nfs_share, est_none, 12, WITHOUT_ROWID)          \
    T(ARRAY_VVOL_POOL, array_vvol_pools, array_vvol_pool, est_none, 12, WITHOUT_ROWID)

/* The tables of db/'s own, written by hand (polls, findings): T(ENUM, table, since). */
#define DB_OWN_TABLES(T)                                                                           \
    T(VCENTERS, vcenters, 1)                                                                       \
    T(POLLS, polls, 1)                                                                             \
    T(FINDINGS, findings, 1)                                                                       \
    T(CAPACITY_HISTORY, capacity_history, 8)                                                       \
    T(RUNWAY, runway, 8)                                                                           \
    T(DIGESTS, digests, 8)                                                                         \
    T(EVALUATIONS, evaluations, 13)                                                                \
    T(DATA_CHANGES, data_changes, 13)

/* ---- inventory ---------------------------------------------------------------------------- */

#define DB_COLS_datastores(X, S, E)                                                                \
    X(S, E, moref, moref, TEXT, KEY, 1, EST)                                                       \
    X(S, E, name, name, TEXT, 0, 1, EST)                                                           \
    X(S, E, type, type, TEXT, 0, 1, EST)                                                           \
    X(S, E, url, url, TEXT, 0, 1, NOEST)                                                           \
    X(S, E, parent, parent, TEXT, 0, 1, EST)                                                       \
    X(S, E, capacity, capacity, I64, 0, 1, EST)                                                    \
    X(S, E, free_space, free_space, I64, 0, 1, EST)                                                \
    X(S, E, uncommitted, uncommitted, I64, 0, 1, EST)                                              \
    X(S, E, accessible, accessible, BOOL, 0, 1, EST)                                               \
    X(S, E, maintenance_mode, maintenance_mode, TEXT, 0, 1, NOEST)                                 \
    X(S, E, vmfs_major, vmfs_major, INT, 0, 1, EST)                                                \
    X(S, E, nas_remote_host, nas_remote_host, TEXT, 0, 1, EST)                                     \
    X(S, E, vm_count, vm_count, INT, 0, 1, EST)                                                    \
    X(S, E, vmfs_version, vmfs_version, TEXT, 0, 7, EST)                                           \
    X(S, E, vmfs_local, vmfs_local, BOOL, 0, 7, EST)                                               \
    X(S, E, vmfs_ssd, vmfs_ssd, BOOL, 0, 7, EST)                                                   \
    X(S, E, unmap_priority, unmap_priority, TEXT, 0, 7, EST)                                       \
    X(S, E, nas_remote_path, nas_remote_path, TEXT, 0, 12, EST)

#define DB_COLS_datastore_extents(X, S, E)                                                         \
    X(S, E, datastore, datastore, TEXT, KEY, 7, NOEST)                                             \
    X(S, E, position, position, INT, KEY | HIDDEN, 7, NOEST)                                       \
    X(S, E, disk_name, disk_name, TEXT, 0, 7, EST)                                                 \
    X(S, E, partition, partition, INT, 0, 7, EST)

#define DB_COLS_datastore_hosts(X, S, E)                                                           \
    X(S, E, datastore, datastore, TEXT, KEY, 7, NOEST)                                             \
    X(S, E, host, host, TEXT, KEY, 7, NOEST)                                                       \
    X(S, E, mounted, mounted, BOOL, 0, 7, EST)                                                     \
    X(S, E, accessible, accessible, BOOL, 0, 7, EST)                                               \
    X(S, E, access_mode, access_mode, TEXT, 0, 7, EST)

#define DB_COLS_storage_pods(X, S, E)                                                              \
    X(S, E, moref, moref, TEXT, KEY, 1, EST)                                                       \
    X(S, E, name, name, TEXT, 0, 1, EST)                                                           \
    X(S, E, capacity, capacity, I64, 0, 1, EST)                                                    \
    X(S, E, free_space, free_space, I64, 0, 1, EST)

#define DB_COLS_vms(X, S, E)                                                                       \
    X(S, E, moref, moref, TEXT, KEY, 1, EST)                                                       \
    X(S, E, name, name, TEXT, 0, 1, EST)                                                           \
    X(S, E, hw_version, hw_version, TEXT, 0, 1, NOEST)                                             \
    X(S, E, template, template, BOOL, 0, 1, EST)                                                   \
    X(S, E, power_state, power_state, TEXT, 0, 1, EST)                                             \
    X(S, E, ft_state, ft_state, TEXT, 0, 1, EST)                                                   \
    X(S, E, host, host, TEXT, 0, 1, NOEST)                                                         \
    X(S, E, vm_path_name, vm_path_name, TEXT, 0, 7, EST)                                          \
    X(S, E, consolidation_needed, consolidation_needed, BOOL, 0, 11, EST)                          \
    X(S, E, managed_by, managed_by, TEXT, 0, 11, EST)                                              \
    X(S, E, managed_by_type, managed_by_type, TEXT, 0, 11, EST)                                    \
    X(S, E, guest_id, guest_id, TEXT, 0, 12, NOEST)

#define DB_COLS_vm_datastores(X, S, E)                                                             \
    X(S, E, vm, vm, TEXT, KEY, 1, NOEST)                                                           \
    X(S, E, datastore, datastore, TEXT, KEY, 1, NOEST)

#define DB_COLS_controllers(X, S, E)                                                               \
    X(S, E, vm, vm, TEXT, KEY, 1, NOEST)                                                           \
    X(S, E, key, key, INT, KEY, 1, EST)                                                            \
    X(S, E, type, type, TEXT, 0, 1, EST)                                                           \
    X(S, E, shared_bus, shared_bus, TEXT, 0, 1, EST)                                               \
    X(S, E, bus_number, bus_number, INT, 0, 1, NOEST)

#define DB_COLS_vdisks(X, S, E)                                                                    \
    X(S, E, vm, vm, TEXT, KEY, 1, NOEST)                                                           \
    X(S, E, key, key, INT, KEY, 1, EST)                                                            \
    X(S, E, label, label, TEXT, 0, 1, EST)                                                         \
    X(S, E, file_name, file_name, TEXT, 0, 1, EST)                                                 \
    X(S, E, datastore, datastore, TEXT, 0, 1, NOEST)                                               \
    X(S, E, capacity_bytes, capacity_bytes, I64, 0, 1, EST)                                        \
    X(S, E, format, format, TEXT, 0, 1, EST)                                                       \
    X(S, E, controller_key, controller_key, INT, 0, 1, NOEST)                                      \
    X(S, E, unit_number, unit_number, INT, 0, 1, NOEST)                                            \
    X(S, E, parent, parent, TEXT, 0, 11, EST)                                                      \
    X(S, E, sharing, sharing, TEXT, 0, 11, EST)

/* No identifier in what the collector reads: name, time and depth are the key, and created may
 * be unknown (NULL), which is why this table keeps its rowid. */
#define DB_COLS_snapshots(X, S, E)                                                                 \
    X(S, E, vm, vm, TEXT, KEY, 1, NOEST)                                                           \
    X(S, E, name, name, TEXT, KEY, 1, EST)                                                         \
    X(S, E, created, created, I64, PK, 1, EST)                                                     \
    X(S, E, depth, depth, INT, PK, 1, EST)

#define DB_COLS_hosts(X, S, E)                                                                     \
    X(S, E, moref, moref, TEXT, KEY, 1, EST)                                                       \
    X(S, E, name, name, TEXT, 0, 1, EST)                                                           \
    X(S, E, parent, parent, TEXT, 0, 1, EST)                                                       \
    X(S, E, connection_state, connection_state, TEXT, 0, 1, EST)                                   \
    X(S, E, product_version, product_version, TEXT, 0, 11, EST)

#define DB_COLS_host_options(X, S, E)                                                              \
    X(S, E, host, host, TEXT, KEY, 1, NOEST)                                                       \
    X(S, E, key, key, TEXT, KEY, 1, NOEST)                                                         \
    X(S, E, value, value, TEXT, 0, 1, NOEST)

#define DB_COLS_vnics(X, S, E)                                                                     \
    X(S, E, host, host, TEXT, KEY, 1, NOEST)                                                       \
    X(S, E, device, device, TEXT, KEY, 1, EST)                                                     \
    X(S, E, portgroup, portgroup, TEXT, 0, 1, EST)                                                 \
    X(S, E, dvs_uuid, dvs_uuid, TEXT, 0, 1, EST)                                                   \
    X(S, E, dvs_portgroup, dvs_portgroup, TEXT, 0, 1, NOEST)                                       \
    X(S, E, mtu, mtu, INT, 0, 1, EST)                                                              \
    X(S, E, ip, ip, TEXT, 0, 1, EST)                                                               \
    X(S, E, subnet_mask, subnet_mask, TEXT, 0, 11, EST)

#define DB_COLS_vswitches(X, S, E)                                                                 \
    X(S, E, host, host, TEXT, KEY, 1, NOEST)                                                       \
    X(S, E, name, name, TEXT, KEY, 1, EST)                                                         \
    X(S, E, mtu, mtu, INT, 0, 1, EST)

#define DB_COLS_portgroups(X, S, E)                                                                \
    X(S, E, host, host, TEXT, KEY, 1, NOEST)                                                       \
    X(S, E, name, name, TEXT, KEY, 1, NOEST)                                                       \
    X(S, E, vswitch, vswitch, TEXT, 0, 1, NOEST)

#define DB_COLS_dvswitches(X, S, E)                                                                \
    X(S, E, moref, moref, TEXT, KEY, 1, EST)                                                       \
    X(S, E, name, name, TEXT, 0, 1, EST)                                                           \
    X(S, E, uuid, uuid, TEXT, 0, 1, EST)                                                           \
    X(S, E, max_mtu, max_mtu, INT, 0, 1, EST)

#define DB_COLS_hbas(X, S, E)                                                                      \
    X(S, E, host, host, TEXT, KEY, 7, NOEST)                                                       \
    X(S, E, device, device, TEXT, KEY, 7, EST)                                                     \
    X(S, E, type, type, TEXT, 0, 7, EST)                                                           \
    X(S, E, driver, driver, TEXT, 0, 7, EST)                                                       \
    X(S, E, model, model, TEXT, 0, 7, EST)                                                         \
    X(S, E, status, status, TEXT, 0, 7, NOEST)

#define DB_COLS_iscsi_hbas(X, S, E)                                                                \
    X(S, E, host, host, TEXT, KEY, 1, NOEST)                                                       \
    X(S, E, device, device, TEXT, KEY, 1, EST)                                                     \
    X(S, E, iscsi_name, iscsi_name, TEXT, 0, 1, EST)                                               \
    X(S, E, model, model, TEXT, 0, 1, NOEST)

/* target is "address:port" (just "address" when the port is unknown): how iscsi_options names
 * a target. Rebuilt by migration 7 with the IQN in the key ('' for a send target). */
#define DB_COLS_iscsi_targets(X, S, E)                                                             \
    X(S, E, host, host, TEXT, KEY, 1, NOEST)                                                       \
    X(S, E, hba, hba, TEXT, KEY, 1, NOEST)                                                         \
    X(S, E, kind, kind, TEXT, KEY, 1, EST)                                                         \
    X(S, E, target, db_target_key, FN, KEY | HIDDEN, 1, NOEST)                                     \
    X(S, E, iscsi_name, db_target_iqn, FN, KEY | EMPTY_NULL, 1, EST)                               \
    X(S, E, address, address, TEXT, 0, 1, EST)                                                     \
    X(S, E, port, port, INT, 0, 1, EST)                                                            \
    X(S, E, discovery_method, discovery_method, TEXT, 0, 7, EST)                                   \
    X(S, E, parent, parent, TEXT, 0, 7, EST)

/* kind, target and iscsi_name are '' for the adapter's own options, so the key has no NULL. */
#define DB_COLS_iscsi_options(X, S, E)                                                             \
    X(S, E, host, host, TEXT, KEY, 1, NOEST)                                                       \
    X(S, E, hba, hba, TEXT, KEY, 1, NOEST)                                                         \
    X(S, E, kind, db_option_kind, FN, KEY | HIDDEN, 1, NOEST)                                      \
    X(S, E, target, db_option_target, FN, KEY | HIDDEN, 1, NOEST)                                  \
    X(S, E, iscsi_name, db_option_iqn, FN, KEY | HIDDEN, 7, NOEST)                                 \
    X(S, E, key, key, TEXT, KEY, 1, EST)                                                           \
    X(S, E, value, value, TEXT, 0, 1, EST)                                                         \
    X(S, E, inherited, inherited, BOOL, 0, 1, EST)

#define DB_COLS_iscsi_bindings(X, S, E)                                                            \
    X(S, E, host, host, TEXT, KEY, 1, NOEST)                                                       \
    X(S, E, hba, hba, TEXT, KEY, 1, NOEST)                                                         \
    X(S, E, vnic, vnic, TEXT, KEY, 1, NOEST)

#define DB_COLS_luns(X, S, E)                                                                      \
    X(S, E, host, host, TEXT, KEY, 1, NOEST)                                                       \
    X(S, E, canonical_name, canonical_name, TEXT, KEY, 1, EST)                                     \
    X(S, E, key, key, TEXT, HIDDEN, 1, NOEST)                                                      \
    X(S, E, display_name, display_name, TEXT, 0, 1, EST)                                           \
    X(S, E, vendor, vendor, TEXT, 0, 1, EST)                                                       \
    X(S, E, model, model, TEXT, 0, 1, EST)                                                         \
    X(S, E, lun_type, lun_type, TEXT, 0, 1, EST)                                                   \
    X(S, E, local, local, BOOL, 0, 1, EST)                                                         \
    X(S, E, psp, psp, TEXT, 0, 1, EST)                                                             \
    X(S, E, satp, satp, TEXT, 0, 1, EST)                                                           \
    X(S, E, policy_type, policy_type, TEXT, 0, 7, EST)                                             \
    X(S, E, multipath_plugin, multipath_plugin, TEXT, 0, 7, EST)                                   \
    X(S, E, protocol_endpoint, protocol_endpoint, BOOL, 0, 11, EST)

#define DB_COLS_lun_paths(X, S, E)                                                                 \
    X(S, E, host, host, TEXT, KEY, 1, NOEST)                                                       \
    X(S, E, lun, lun, TEXT, KEY, 1, NOEST)                                                         \
    X(S, E, name, name, TEXT, KEY, 1, EST)                                                         \
    X(S, E, state, state, TEXT, 0, 1, EST)                                                         \
    X(S, E, adapter, adapter, TEXT, 0, 1, EST)                                                     \
    X(S, E, target_wwpn, target_wwpn, TEXT, 0, 11, EST)                                            \
    X(S, E, target_iqn, target_iqn, TEXT, 0, 11, EST)                                              \
    X(S, E, target_address, target_address, TEXT, 0, 11, EST)

#define DB_COLS_nmp_devices(X, S, E)                                                               \
    X(S, E, host, host, TEXT, KEY, 1, NOEST)                                                       \
    X(S, E, device, device, TEXT, KEY, 1, NOEST)                                                   \
    X(S, E, psp, psp, TEXT, 0, 1, NOEST)                                                           \
    X(S, E, psp_config, psp_config, TEXT, 0, 1, NOEST)                                             \
    X(S, E, iops, iops, INT, 0, 1, NOEST)

/* A rule may leave vendor, model, PSP and options empty (NULL: "any", "none"): no key. */
#define DB_COLS_satp_rules(X, S, E)                                                                \
    X(S, E, host, host, TEXT, NN, 4, NOEST)                                                        \
    X(S, E, satp, satp, TEXT, NN, 4, EST)                                                          \
    X(S, E, vendor, vendor, TEXT, 0, 4, EST)                                                       \
    X(S, E, model, model, TEXT, 0, 4, EST)                                                         \
    X(S, E, psp, psp, TEXT, 0, 4, EST)                                                             \
    X(S, E, psp_options, psp_options, TEXT, 0, 4, EST)                                             \
    X(S, E, rule_group, rule_group, TEXT, 0, 4, EST)                                               \
    X(S, E, device, device, TEXT, 0, 7, EST)                                                       \
    X(S, E, driver, driver, TEXT, 0, 7, EST)                                                       \
    X(S, E, transport, transport, TEXT, 0, 7, EST)                                                 \
    X(S, E, claim_options, claim_options, TEXT, 0, 7, EST)                                         \
    X(S, E, options, options, TEXT, 0, 7, EST)                                                     \
    X(S, E, description, description, TEXT, 0, 7, EST)

/* object is '' when a gap is about the vCenter as a whole. */
#define DB_COLS_gaps(X, S, E)                                                                      \
    X(S, E, object, db_gap_object, FN, KEY, 1, NOEST)                                              \
    X(S, E, what, what, TEXT, KEY, 1, EST)                                                         \
    X(S, E, error, error, TEXT, 0, 1, EST)

#define DB_COLS_entities(X, S, E)                                                                  \
    X(S, E, moref, moref, TEXT, KEY, 6, EST)                                                       \
    X(S, E, type, type, TEXT, 0, 6, EST)                                                           \
    X(S, E, name, name, TEXT, 0, 6, EST)                                                           \
    X(S, E, parent, parent, TEXT, 0, 6, EST)

#define DB_COLS_alarm_managers(X, S, E) X(S, E, moref, moref, TEXT, KEY, 6, NOEST)

#define DB_COLS_alarms(X, S, E)                                                                    \
    X(S, E, moref, moref, TEXT, KEY, 6, EST)                                                       \
    X(S, E, name, name, TEXT, 0, 6, EST)                                                           \
    X(S, E, system_name, system_name, TEXT, 0, 6, EST)                                             \
    X(S, E, enabled, enabled, BOOL, 0, 6, EST)                                                     \
    X(S, E, entity, entity, TEXT, 0, 6, EST)                                                       \
    X(S, E, entity_type, entity_type, TEXT, 0, 6, EST)

#define DB_COLS_alarm_metrics(X, S, E)                                                             \
    X(S, E, alarm, alarm, TEXT, KEY, 6, NOEST)                                                     \
    X(S, E, pos, pos, INT, KEY | HIDDEN, 6, NOEST)                                                 \
    X(S, E, object_type, object_type, TEXT, 0, 6, EST)                                             \
    X(S, E, counter_id, counter_id, INT, 0, 6, EST)                                                \
    X(S, E, operator, op, TEXT, 0, 6, NOEST)                                                       \
    X(S, E, yellow, yellow, INT, 0, 6, EST)                                                        \
    X(S, E, red, red, INT, 0, 6, EST)

/* Alarms disabled on one entity (and below it), from the entities' declaredAlarmState: read
 * with the alarms, by a full read. */
#define DB_COLS_alarm_disabled(X, S, E)                                                            \
    X(S, E, entity, entity, TEXT, KEY, 11, EST)                                                    \
    X(S, E, alarm, alarm, TEXT, KEY, 11, EST)

/* Only the counters an alarm names: counterIds differ from one vCenter to another. */
#define DB_COLS_perf_counters(X, S, E)                                                             \
    X(S, E, counter_id, key, INT, KEY, 6, NOEST)                                                   \
    X(S, E, name, name, TEXT, 0, 6, NOEST)                                                         \
    X(S, E, unit, unit, TEXT, 0, 6, NOEST)

/* An array's pools and LUNs, under the array's name in the vcenter column (the name of the
 * source, one namespace for vCenters and arrays). db_estate_load() joins them to a vCenter's
 * datastores through naa = datastore_extents.disk_name itself. */
#define DB_COLS_array_pools(X, S, E)                                                               \
    X(S, E, id, id, TEXT, KEY, 9, NOEST)                                                           \
    X(S, E, name, name, TEXT, 0, 9, NOEST)                                                         \
    X(S, E, size_total, size_total, I64, 0, 9, NOEST)                                              \
    X(S, E, size_free, size_free, I64, 0, 9, NOEST)                                                \
    X(S, E, size_used, size_used, I64, 0, 9, NOEST)                                                \
    X(S, E, size_subscribed, size_subscribed, I64, 0, 9, NOEST)                                    \
    X(S, E, alert_threshold, alert_threshold, INT, 0, 9, NOEST)                                    \
    X(S, E, health, health, INT, 0, 9, NOEST)                                                      \
    X(S, E, health_text, health_text, TEXT, 0, 9, NOEST)                                           \
    X(S, E, snap_size_used, snap_size_used, I64, 0, 9, NOEST)                                      \
    X(S, E, snap_size_subscribed, snap_size_subscribed, I64, 0, 9, NOEST)

#define DB_COLS_array_luns(X, S, E)                                                                \
    X(S, E, id, id, TEXT, KEY, 9, NOEST)                                                           \
    X(S, E, name, name, TEXT, 0, 9, NOEST)                                                         \
    X(S, E, wwn, wwn, TEXT, 0, 9, NOEST)                                                           \
    X(S, E, naa, naa, TEXT, 0, 9, NOEST)                                                           \
    X(S, E, pool, pool, TEXT, 0, 9, NOEST)                                                         \
    X(S, E, size_total, size_total, I64, 0, 9, NOEST)                                              \
    X(S, E, size_allocated, size_allocated, I64, 0, 9, NOEST)                                      \
    X(S, E, thin, thin, BOOL, 0, 9, NOEST)

/* An array's Fibre Channel ports, under the array's name: which storage processor a path's
 * target port (lun_paths.target_wwpn) belongs to. */
#define DB_COLS_array_ports(X, S, E)                                                               \
    X(S, E, id, id, TEXT, KEY, 11, NOEST)                                                          \
    X(S, E, wwpn, wwpn, TEXT, 0, 11, NOEST)                                                        \
    X(S, E, sp, sp, TEXT, 0, 11, NOEST)                                                            \
    X(S, E, mtu, mtu, INT, 0, 12, NOEST)

/* An array's iSCSI portals: the address a host's target or path names, and the Ethernet port
 * (array_ports.id) whose SP and MTU are the portal's. */
#define DB_COLS_array_portals(X, S, E)                                                             \
    X(S, E, id, id, TEXT, KEY, 12, NOEST)                                                          \
    X(S, E, address, address, TEXT, 0, 12, NOEST)                                                  \
    X(S, E, port, port, TEXT, 0, 12, NOEST)                                                        \
    X(S, E, iqn, iqn, TEXT, 0, 12, NOEST)

/* An array's NAS servers, the SP each is placed on (nfs-server-redundancy) and whether it is a
 * replication destination (which serves no NFS datastore: db/load.c's NAS join). */
#define DB_COLS_array_nas_servers(X, S, E)                                                         \
    X(S, E, id, id, TEXT, KEY, 12, NOEST)                                                          \
    X(S, E, name, name, TEXT, 0, 12, NOEST)                                                        \
    X(S, E, home_sp, home_sp, TEXT, 0, 12, NOEST)                                                  \
    X(S, E, current_sp, current_sp, TEXT, 0, 12, NOEST)                                            \
    X(S, E, replication_destination, replication_destination, BOOL, 0, 13, NOEST)

/* An array's file systems, their shares and its VVol datastores' pools: the pools behind NFS
 * and VVol datastores (pool-free-space). */
#define DB_COLS_array_filesystems(X, S, E)                                                         \
    X(S, E, id, id, TEXT, KEY, 12, NOEST)                                                          \
    X(S, E, name, name, TEXT, 0, 12, NOEST)                                                        \
    X(S, E, pool, pool, TEXT, 0, 12, NOEST)                                                        \
    X(S, E, nas_server, nas_server, TEXT, 0, 12, NOEST)                                            \
    X(S, E, thin, thin, BOOL, 0, 12, NOEST)

#define DB_COLS_array_nfs_shares(X, S, E)                                                          \
    X(S, E, id, id, TEXT, KEY, 12, NOEST)                                                          \
    X(S, E, name, name, TEXT, 0, 12, NOEST)                                                        \
    X(S, E, filesystem, filesystem, TEXT, 0, 12, NOEST)

#define DB_COLS_array_vvol_pools(X, S, E)                                                          \
    X(S, E, id, id, TEXT, KEY, 12, NOEST)                                                          \
    X(S, E, pool, pool, TEXT, KEY, 12, NOEST)                                                      \
    X(S, E, name, name, TEXT, 0, 12, NOEST)                                                        \
    X(S, E, vmware_uuid, vmware_uuid, TEXT, 0, 12, NOEST)

/* The NAS servers' interfaces: the address an NFS datastore is mounted from. */
#define DB_COLS_array_file_interfaces(X, S, E)                                                     \
    X(S, E, id, id, TEXT, KEY, 12, NOEST)                                                          \
    X(S, E, nas_server, nas_server, TEXT, 0, 12, NOEST)                                            \
    X(S, E, address, address, TEXT, 0, 12, NOEST)

/* ---- db/'s own tables --------------------------------------------------------------------- */

#define DB_COLS_vcenters(X, S, E)                                                                  \
    X(S, E, name, "TEXT PRIMARY KEY NOT NULL", RAW, PK, 1, NOEST)                                   \
    X(S, E, url, "TEXT", RAW, 0, 1, NOEST)                                                         \
    X(S, E, last_poll_id, "INTEGER REFERENCES polls(id)", RAW, 0, 1, NOEST)                        \
    X(S, E, last_success_ms, "INTEGER", RAW, 0, 1, NOEST)                                          \
    X(S, E, last_error, "TEXT", RAW, 0, 1, NOEST)                                                  \
    /* NULL for a vCenter; an array's type ("unity") for an [array NAME] source. */             \
    X(S, E, kind, "TEXT", RAW, 0, 9, NOEST)

#define DB_COLS_polls(X, S, E)                                                                     \
    X(S, E, id, "INTEGER PRIMARY KEY", RAW, PK, 1, NOEST)                                           \
    X(S, E, vcenter, "TEXT NOT NULL", RAW, 0, 1, NOEST)                                            \
    X(S, E, url, "TEXT", RAW, 0, 1, NOEST)                                                         \
    X(S, E, started_ms, "INTEGER NOT NULL", RAW, 0, 1, NOEST)                                      \
    X(S, E, finished_ms, "INTEGER NOT NULL", RAW, 0, 1, NOEST)                                     \
    X(S, E, ok, "INTEGER NOT NULL", RAW, 0, 1, NOEST)                                              \
    X(S, E, error, "TEXT", RAW, 0, 1, NOEST)                                                       \
    X(S, E, counts_json, "TEXT", RAW, 0, 1, NOEST)                                             \
    /* How the poll read: 'full' (every object: a full read, an array's poll) or 'incremental'  \
     * (a WaitForUpdatesEx round that applied changes or failed; quiet rounds write no row).     \
     * Rows older than version 10 were all full reads. */                                        \
    X(S, E, mode, "TEXT NOT NULL DEFAULT 'full'", RAW, 0, 10, NOEST)                             \
    /* The property collector's version after an incremental round; NULL for a full read. */  \
    X(S, E, version, "TEXT", RAW, 0, 10, NOEST)                                             \
    /* Incremental rounds are summed into one row per vCenter per [database] round_window       \
     * (db/db.c, record_poll()): rounds is how many, changes the objects they changed, bytes     \
     * what they read on the wire, errors how many failed, busy_ms their summed and longest_ms  \
     * their longest duration; started_ms and finished_ms are the last round's. A full read is   \
     * a row of its own with rounds 1. NULL before version 11: one round (or read) per row.     */ \
    X(S, E, rounds, "INTEGER", RAW, 0, 11, NOEST)                                              \
    X(S, E, changes, "INTEGER", RAW, 0, 11, NOEST)                                             \
    X(S, E, bytes, "INTEGER", RAW, 0, 11, NOEST)                                               \
    X(S, E, errors, "INTEGER", RAW, 0, 11, NOEST)                                              \
    X(S, E, busy_ms, "INTEGER", RAW, 0, 11, NOEST)                                             \
    X(S, E, longest_ms, "INTEGER", RAW, 0, 11, NOEST)

/* Findings outlive snapshots: keyed by fingerprint, not by poll. severity_order is the sort key
 * "critical first" (a virtual column: no space, one spelling of the ranking). */
#define DB_COLS_findings(X, S, E)                                                                  \
    X(S, E, fingerprint, "TEXT PRIMARY KEY NOT NULL", RAW, PK, 1, NOEST)                            \
    X(S, E, check_id, "TEXT NOT NULL", RAW, 0, 1, NOEST)                                           \
    X(S, E, vcenter, "TEXT NOT NULL", RAW, 0, 1, NOEST)                                            \
    X(S, E, object_type, "TEXT", RAW, 0, 1, NOEST)                                                 \
    X(S, E, object_moref, "TEXT", RAW, 0, 1, NOEST)                                                \
    X(S, E, object_name, "TEXT", RAW, 0, 1, NOEST)                                                 \
    X(S, E, detail, "TEXT", RAW, 0, 1, NOEST)                                                      \
    X(S, E, severity, "TEXT NOT NULL", RAW, 0, 1, NOEST)                                           \
    X(S, E, status, "TEXT NOT NULL", RAW, 0, 1, NOEST)                                             \
    X(S, E, message, "TEXT", RAW, 0, 1, NOEST)                                                     \
    X(S, E, evidence_json, "TEXT", RAW, 0, 1, NOEST)                                               \
    X(S, E, first_seen_ms, "INTEGER NOT NULL", RAW, 0, 1, NOEST)                                   \
    X(S, E, last_seen_ms, "INTEGER NOT NULL", RAW, 0, 1, NOEST)                                    \
    X(S, E, resolved_at_ms, "INTEGER", RAW, 0, 1, NOEST)                                           \
    X(S, E, title, "TEXT", RAW, 0, 2, NOEST)                                                       \
    X(S, E, waiver_reason, "TEXT", RAW, 0, 2, NOEST)                                               \
    X(S, E, waiver_expires, "TEXT", RAW, 0, 2, NOEST)                                              \
    X(S, E, severity_order,                                                                        \
      "INTEGER GENERATED ALWAYS AS"                                                                \
      " (CASE severity WHEN 'critical' THEN 0 WHEN 'warning' THEN 1 ELSE 2 END) VIRTUAL",          \
      RAW, 0, 2, NOEST)                                                                            \
    X(S, E, host_moref, "TEXT", RAW, 0, 5, NOEST)                                                  \
    X(S, E, host_name, "TEXT", RAW, 0, 5, NOEST)                                                   \
    X(S, E, unverified_since_ms, "INTEGER", RAW, 0, 5, NOEST)                                      \
    X(S, E, unverified_reason, "TEXT", RAW, 0, 5, NOEST)                                           \
    X(S, E, resolution, "TEXT", RAW, 0, 5, NOEST)                                              \
    /* The poll whose snapshot first showed this occurrence, and the one whose snapshot no      \
     * longer did (the vCenter's latest successful poll when the evaluation ran); NULL before     \
     * version 10. */                                                                            \
    X(S, E, first_poll, "INTEGER REFERENCES polls(id)", RAW, 0, 10, NOEST)                       \
    X(S, E, resolved_poll, "INTEGER REFERENCES polls(id)", RAW, 0, 10, NOEST)

/* Capacity at every successful poll of each datastore (kind 'datastore') and datastore cluster
 * ('storage_pod'), written in the poll's transaction; thinned to the latest point of each hour
 * once a day old and of each day once 30 days old, and dropped after [database]
 * capacity_retention days. Outlives the snapshot: a datastore that went away keeps its history
 * until then. */
#define DB_COLS_capacity_history(X, S, E)                                                          \
    X(S, E, vcenter, "TEXT NOT NULL", RAW, 0, 8, NOEST)                                            \
    X(S, E, kind, "TEXT NOT NULL", RAW, 0, 8, NOEST)                                               \
    X(S, E, moref, "TEXT NOT NULL", RAW, 0, 8, NOEST)                                              \
    X(S, E, t_ms, "INTEGER NOT NULL", RAW, 0, 8, NOEST)                                            \
    X(S, E, capacity, "INTEGER", RAW, 0, 8, NOEST)                                                 \
    X(S, E, free_space, "INTEGER", RAW, 0, 8, NOEST)                                               \
    X(S, E, uncommitted, "INTEGER", RAW, 0, 8, NOEST)

/* The latest runway estimate of each datastore and datastore cluster, written by each
 * evaluation (the daemon computes it with the configured thresholds; the API only reads it):
 * the estimate as the API shows it, and the thresholds it counted down to. */
#define DB_COLS_runway(X, S, E)                                                                    \
    X(S, E, vcenter, "TEXT NOT NULL", RAW, 0, 8, NOEST)                                            \
    X(S, E, moref, "TEXT NOT NULL", RAW, 0, 8, NOEST)                                              \
    X(S, E, kind, "TEXT NOT NULL", RAW, 0, 8, NOEST)                                               \
    X(S, E, computed_ms, "INTEGER NOT NULL", RAW, 0, 8, NOEST)                                     \
    X(S, E, runway_json, "TEXT NOT NULL", RAW, 0, 8, NOEST)                                        \
    X(S, E, warn_free_pct, "REAL", RAW, 0, 8, NOEST)                                               \
    X(S, E, crit_free_pct, "REAL", RAW, 0, 8, NOEST)

/* One row per digest sent (daemon/digest.c): the window of findings history it covered, so a
 * restarted daemon neither repeats nor skips one. slot_ms is the scheduled time it was sent for
 * (NULL for `vslint digest` run by hand); score what the digest reported, for the next one's
 * change. Written only after the SMTP server accepted the message. */
#define DB_COLS_digests(X, S, E)                                                                   \
    X(S, E, id, "INTEGER PRIMARY KEY", RAW, PK, 8, NOEST)                                           \
    X(S, E, slot_ms, "INTEGER", RAW, 0, 8, NOEST)                                                  \
    X(S, E, window_from_ms, "INTEGER NOT NULL", RAW, 0, 8, NOEST)                                  \
    X(S, E, window_to_ms, "INTEGER NOT NULL", RAW, 0, 8, NOEST)                                    \
    X(S, E, sent_ms, "INTEGER NOT NULL", RAW, 0, 8, NOEST)                                         \
    X(S, E, message_id, "TEXT", RAW, 0, 8, NOEST)                                                  \
    X(S, E, new_count, "INTEGER", RAW, 0, 8, NOEST)                                                \
    X(S, E, resolved_count, "INTEGER", RAW, 0, 8, NOEST)                                           \
    X(S, E, open_count, "INTEGER", RAW, 0, 8, NOEST)                                               \
    X(S, E, critical_count, "INTEGER", RAW, 0, 8, NOEST)                                           \
    X(S, E, score, "INTEGER", RAW, 0, 8, NOEST)

/* When each vCenter's findings were last recorded (db_findings_record()). Every finding of it
 * still open or waived, and verified, was seen then: its last_seen is this time, not its row's
 * last_seen_ms, which moves only when the row is rewritten for another reason (its message,
 * evidence, waiver... changed, or it was new at the evaluation before). An evaluation thus
 * rewrites the rows that changed instead of every open finding's row with its evidence and
 * index entries. No row (a database from before version 13 until its next evaluation): the
 * rows' own last_seen_ms hold. */
#define DB_COLS_evaluations(X, S, E)                                                               \
    X(S, E, vcenter, "TEXT PRIMARY KEY NOT NULL", RAW, PK, 13, NOEST)                              \
    X(S, E, evaluated_ms, "INTEGER NOT NULL", RAW, 0, 13, NOEST)

/* How many times each kind of data the API's answers are rendered from, and that no snapshot
 * stamp covers, was written: what = "findings" (db_findings_record(), a prune of findings), n
 * its count. One row per kind, bumped in the writing transaction, so that a reader can tell a
 * commit that changed findings from one that only confirmed a snapshot (db_content_stamp()). */
#define DB_COLS_data_changes(X, S, E)                                                              \
    X(S, E, what, "TEXT PRIMARY KEY NOT NULL", RAW, PK, 13, NOEST)                                 \
    X(S, E, n, "INTEGER NOT NULL", RAW, 0, 13, NOEST)

/* The indexes: I(name, since, "table(columns)"). An index that changes is a new name (or a hand-
 * written migration that drops the old one). */
#define DB_INDEXES(I)                                                                              \
    I(polls_vcenter, 1, "polls(vcenter, id)")                                                      \
    /* The checks ask "which VMs sit on datastore X": the reverse direction too. */                \
    I(vm_datastores_ds, 1, "vm_datastores(vcenter, datastore)")                                    \
    I(vdisks_ds, 1, "vdisks(vcenter, datastore)")                                                  \
    I(findings_status, 1, "findings(status, severity)")                                            \
    I(findings_vcenter, 1, "findings(vcenter, check_id)")                                          \
    /* The order and keyset pagination of db_findings_query(). */                                  \
    I(findings_order, 2, "findings(severity_order, check_id, vcenter, object_name, fingerprint)")  \
    I(satp_rules_host, 4, "satp_rules(vcenter, host)")                                             \
    /* Every column the summary reads, in the order it groups by: one index range read. */        \
    I(findings_summary, 5,                                                                         \
      "findings(status, check_id, severity, vcenter, first_seen_ms, last_seen_ms,"                 \
      " unverified_since_ms)")                                                                  \
    /* One object's points in time order, and the range each poll thins or drops. */               \
    I(capacity_history_key, 8, "capacity_history(vcenter, moref, t_ms)")                          \
    I(capacity_history_age, 8, "capacity_history(vcenter, t_ms)")                                  \
    I(runway_key, 8, "runway(vcenter, moref)")                                                     \
    /* The inventory pages' order and keyset (db/pages.c): a page is an index range read. */       \
    I(datastores_page, 8, "datastores(vcenter, coalesce(name, ''), moref)")                        \
    I(hosts_page, 8, "hosts(vcenter, coalesce(name, ''), moref)")                                  \
    I(vms_page, 8, "vms(vcenter, coalesce(name, ''), moref)")                                      \
    /* The join of a datastore's extents to the array LUNs behind them. */                      \
    I(array_luns_naa, 9, "array_luns(naa)")                                                    \
    /* The history's last full read of a vCenter by a day's end: one index lookup. */            \
    I(polls_mode, 10, "polls(vcenter, mode, ok, finished_ms)")                                    \
    /* Pruning (db/prune.c): the polls past retention, the digests past it, and whether a     \
     * finding still names a poll. */                                                          \
    I(polls_age, 11, "polls(finished_ms)")                                                     \
    I(digests_age, 11, "digests(sent_ms)")                                                     \
    I(findings_first_poll, 11, "findings(first_poll)")                                         \
    I(findings_resolved_poll, 11, "findings(resolved_poll)")                                   \
    I(findings_resolved_at, 11, "findings(status, resolved_at_ms)")

/* ---- what the lists generate -------------------------------------------------------------- */

/* Column positions in a reader's SELECT of a table's columns (db_select_columns): P_<ENUM>_<col>
 * counts from 0 without the implicit vcenter; P_<ENUM>_NCOLS is the number of columns, the
 * position of a reader's first extra expression. */
#define DB_POSITION(S, E, col, src, type, fl, since, est) S##_##col,
#define DB_POSITIONS(ENUM, table, sink, est, since, rowid)                                         \
    enum { DB_COLS_##table(DB_POSITION, P_##ENUM, est) P_##ENUM##_NCOLS };
DB_INVENTORY_TABLES(DB_POSITIONS)
/* findings: F_<col>, in table order. */
enum { DB_COLS_findings(DB_POSITION, F, _) F_NCOLS };

enum db_ctype { DB_TEXT, DB_INT, DB_I64, DB_BOOL, DB_FN, DB_RAW };
enum {
    DB_NN = 1,         /* NOT NULL */
    DB_PK = 2,         /* in the primary key */
    DB_HIDDEN = 4,     /* not in the inventory JSON by itself */
    DB_EMPTY_NULL = 8, /* '' stands for NULL */
};

typedef const char *db_value_fn(const void *row, char *buf, size_t size);

struct db_column {
    const char *name;
    enum db_ctype type;
    int flags;
    int since;
    size_t off;        /* of the field in the row struct (TEXT, INT, I64, BOOL) */
    db_value_fn *fn;   /* FN */
    const char *decl;  /* RAW: the declaration as written */
    ptrdiff_t est_off; /* of the estate field the loader copies it into, or -1 */
};

struct db_table_def {
    const char *name;
    int since;
    int inventory;     /* starts with the implicit vcenter column, written by snapshots */
    int without_rowid;
    const struct db_column *cols;
    int ncols;
};

struct db_index_def {
    const char *name;
    int since;
    const char *on; /* "table(columns)" */
};

/* Every table, inventory first in enum db_table order, then db/'s own; and every index. */
extern const struct db_table_def db_tables[];
extern const int db_ntables;
extern const struct db_index_def db_indexes[];
extern const int db_nindexes;

/* The values the FN columns store. */
db_value_fn db_target_key, db_target_iqn, db_option_kind, db_option_target, db_option_iqn,
    db_gap_object;

#endif
