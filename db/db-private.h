/* What db.c, schema.c and inventory.c share and nobody outside db/ may see.
 * The struct db layout, the migration entry point, and SQLite-to-project error mapping. */
#ifndef DB_DB_PRIVATE_H
#define DB_DB_PRIVATE_H

#include <sqlite3.h>

/* The inventory tables a snapshot writes, in the order their statements are cached. */
enum db_table {
    T_DATASTORE,
    T_DATASTORE_EXTENT,
    T_DATASTORE_HOST,
    T_STORAGE_POD,
    T_VM,
    T_VM_DATASTORE,
    T_CONTROLLER,
    T_VDISK,
    T_SNAPSHOT,
    T_HOST,
    T_HOST_OPTION,
    T_VNIC,
    T_VSWITCH,
    T_PORTGROUP,
    T_DVSWITCH,
    T_HBA,
    T_ISCSI_HBA,
    T_ISCSI_TARGET,
    T_ISCSI_OPTION,
    T_ISCSI_BINDING,
    T_LUN,
    T_LUN_PATH,
    T_NMP_DEVICE,
    T_SATP_RULE,
    T_GAP,
    T_ENTITY,
    T_ALARM_MANAGER,
    T_ALARM,
    T_ALARM_METRIC,
    T_PERF_COUNTER,
    T_NTABLES
};

struct db {
    sqlite3 *h; /* owned */
    /* Prepared on first use and kept for the life of the connection, so a poll of 20,000 VMs
     * compiles each statement once, not once per row or once per poll. All owned. */
    sqlite3_stmt *ins[T_NTABLES];
    sqlite3_stmt *del[T_NTABLES];
    int in_snapshot; /* a db_snapshot is open on this connection */
};

/* Brings the schema up to db_schema_version(), one transaction per migration.
 * On error *errmsg (if not NULL) receives a malloc'd message. */
int db_migrate(sqlite3 *h, char **errmsg);

/* The table name of t, for the statements built from the constant table list. */
const char *db_table_name(enum db_table t);

/* Maps a SQLite result code to 0 or a project error code (-ENOMEM, -EBUSY, -VSL_EDB, ...). */
int db_err(int sqlite_rc);

#endif
