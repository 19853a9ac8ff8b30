/* What tells a reader that the data the API's answers are rendered from changed: not every
 * commit (an incremental round that found nothing new still confirms its snapshot). */
#ifndef DB_CHANGES_H
#define DB_CHANGES_H

#include <stdint.h>

#include "db/db.h"

/* A number that changes when a stored snapshot does (db_snapshots_stamp()), when findings
 * were recorded or pruned (the data_changes table) or a digest was sent (the summary counts
 * what changed since the last one), and not when a round only confirmed a snapshot
 * (vcenters.last_success_ms), nor with capacity history or poll history pruning. Cheap: small
 * tables and one index step. 0 or a negative error. */
int db_content_stamp(struct db *db, uint64_t *out);

/* Counts one change of `what` ("findings") in the data_changes table, in the caller's open
 * transaction. 0 or a negative error. */
int db_note_change(struct db *db, const char *what);

#endif
