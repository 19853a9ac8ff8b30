/* The digests sent: each one's window of findings history, so the next digest starts where the
 * last one ended and a restarted daemon neither repeats nor skips one (daemon/digest.c). */
#ifndef DB_DIGEST_H
#define DB_DIGEST_H

#include <stdint.h>

#include "db/db.h"

struct db_digest {
    int64_t slot_ms;   /* the scheduled time it was sent for; 0: sent by hand */
    int64_t from_ms;   /* the window of history it covered: (from, to] */
    int64_t to_ms;
    int64_t sent_ms;
    char message_id[256];
    int64_t new_count, resolved_count, open_count, critical_count;
    int score;         /* -1: none (no vCenter polled) */
};

/* The latest digest recorded (largest window end) into *out; -VSL_ENOTFOUND when none was
 * ever sent. *last_slot_ms (may be NULL) receives the latest scheduled slot any digest was
 * sent for, 0 when none. */
int db_digest_last(struct db *db, struct db_digest *out, int64_t *last_slot_ms);

/* Records a digest the SMTP server accepted. */
int db_digest_record(struct db *db, const struct db_digest *d);

#endif
