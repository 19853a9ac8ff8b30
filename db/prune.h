/* How the database stays the same size: incremental rounds summed per window (db/db.c), polls,
 * resolved findings and digests pruned past their retention in small batches, freed pages
 * given back to the file system; and the figures /metrics shows about it. */
#ifndef DB_PRUNE_H
#define DB_PRUNE_H

#include <stdint.h>

#include "db/db.h"

/* At most this many rows go per transaction: a prune never holds the write lock for long. */
#define DB_PRUNE_BATCH 500
/* At most this many transactions per db_prune() call; the rest waits for the next call. */
#define DB_PRUNE_MAX_BATCHES 20
/* db_prune() runs at most once per this much of its clock, unless the last run was cut short. */
#define DB_PRUNE_EVERY_MS 60000
/* Free pages kept for the next rows (not given back) before incremental_vacuum runs, and the
 * most one call gives back. */
#define DB_VACUUM_SLACK_PAGES 1024
#define DB_VACUUM_STEP_PAGES  2048

/* [database] round_window, poll_retention and findings_retention, in milliseconds (tests run
 * a simulated clock in seconds): rounds summed per window (0: a row per round), polls thinned
 * to one per vCenter per day past poll_ms, resolved findings and digests deleted past
 * findings_ms (0: kept). */
void db_set_retention(struct db *db, int64_t round_window_ms, int64_t poll_ms,
                      int64_t findings_ms);

/* What one db_prune() run did. */
struct db_prune_stats {
    int64_t at_ms;       /* its clock when it ran; 0: never ran */
    int64_t duration_ms; /* wall time it took */
    int64_t polls, findings, digests; /* rows deleted */
    int64_t batches;     /* transactions */
    int64_t pages_freed; /* pages incremental_vacuum gave back */
};

/* Prunes at now_ms (unix ms) what is past retention, in transactions of at most
 * DB_PRUNE_BATCH rows, at most DB_PRUNE_MAX_BATCHES of them; does nothing when the last run
 * was less than DB_PRUNE_EVERY_MS ago and finished its work. Never deletes a poll a finding
 * names (first_poll, resolved_poll) or a vCenter's last poll, an open or waived finding, or the
 * last digest (the next one's window starts from it). Past retention each vCenter keeps one
 * poll per UTC day: its last successful full read, else its last poll. Then gives free pages
 * back to the file system when it was created with auto_vacuum = INCREMENTAL (every database
 * from schema 11 on). out (may be NULL) receives what it did, also kept for db_prune_last().
 * 0 or a negative error. */
int db_prune(struct db *db, int64_t now_ms, struct db_prune_stats *out);

/* The last db_prune() run of this process that deleted rows or gave pages back (zeros: none),
 * for /metrics. Thread-safe. */
void db_prune_last(struct db_prune_stats *out);

/* The size of the database and of its growing tables. */
struct db_size {
    int64_t file_bytes, wal_bytes; /* the main file and its -wal file */
    int64_t free_bytes;            /* pages of the file on its free list */
    int64_t polls, findings, digests, capacity_history; /* rows */
};
int db_size(struct db *db, struct db_size *out);

#endif
