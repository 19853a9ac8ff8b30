/* The digests table: one row per digest the SMTP server accepted. A digest that could not be
 * delivered leaves no row, so its window is sent again by the next attempt. */
#include <assert.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "db/db-private.h"
#include "db/digest.h"
#include "util/err.h"

int db_digest_last(struct db *db, struct db_digest *out, int64_t *last_slot_ms)
{
    static const char sql[] =
        "SELECT coalesce(slot_ms, 0), window_from_ms, window_to_ms, sent_ms, message_id,"
        " new_count, resolved_count, open_count, critical_count, coalesce(score, -1),"
        " (SELECT coalesce(max(slot_ms), 0) FROM digests)"
        " FROM digests ORDER BY window_to_ms DESC, id DESC LIMIT 1";
    sqlite3_stmt *st = NULL;
    int r;

    assert(db && out);
    memset(out, 0, sizeof(*out));
    if (last_slot_ms)
        *last_slot_ms = 0;
    r = db_row_args(db->h, sql, &st, "reading the last digest", NULL, 0);
    if (r == 0) {
        const unsigned char *mid = sqlite3_column_text(st, 4);
        out->slot_ms = sqlite3_column_int64(st, 0);
        out->from_ms = sqlite3_column_int64(st, 1);
        out->to_ms = sqlite3_column_int64(st, 2);
        out->sent_ms = sqlite3_column_int64(st, 3);
        snprintf(out->message_id, sizeof(out->message_id), "%s", mid ? (const char *)mid : "");
        out->new_count = sqlite3_column_int64(st, 5);
        out->resolved_count = sqlite3_column_int64(st, 6);
        out->open_count = sqlite3_column_int64(st, 7);
        out->critical_count = sqlite3_column_int64(st, 8);
        out->score = sqlite3_column_int(st, 9);
        if (last_slot_ms)
            *last_slot_ms = sqlite3_column_int64(st, 10);
    }
    sqlite3_finalize(st);
    return r;
}

int db_digest_record(struct db *db, const struct db_digest *d)
{
    static const char sql[] =
        "INSERT INTO digests (slot_ms, window_from_ms, window_to_ms, sent_ms, message_id,"
        " new_count, resolved_count, open_count, critical_count, score)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)";

    assert(db && d);
    return db_run(db->h, sql, "recording a digest", d->slot_ms ? DB_INT(d->slot_ms) : DB_NULL,
                  DB_INT(d->from_ms), DB_INT(d->to_ms), DB_INT(d->sent_ms),
                  DB_TEXT(d->message_id[0] ? d->message_id : NULL), DB_INT(d->new_count),
                  DB_INT(d->resolved_count), DB_INT(d->open_count), DB_INT(d->critical_count),
                  d->score >= 0 ? DB_INT(d->score) : DB_NULL);
}
