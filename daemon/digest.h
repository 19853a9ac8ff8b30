/* The nightly digest: what changed in the findings history since the previous digest, built
 * from the database as one model (JSON), written as plain text and HTML from that model (so the
 * two parts cannot disagree), wrapped in a multipart/alternative message and sent with
 * libcurl's SMTP. Each digest's window is recorded once the server accepted it. */
#ifndef VSL_DIGEST_H
#define VSL_DIGEST_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "daemon/config.h"
#include "db/db.h"
#include "util/buf.h"

#define VSL_DIGEST_WAIVER_DAYS 14 /* waivers expiring within this many days are listed */
#define VSL_DIGEST_RUNWAY_TOP  10 /* datastores listed by shortest runway */
#define VSL_DIGEST_MAX_LISTED  500 /* findings listed per section; the rest are counted */

/* The model of one digest of the window (from_ms, to_ms] (from_ms 0: the first digest, all
 * history):
 *   {"from","to" (unix ms), "vcenters_total", "vcenters":[{"name","problem"}] (failing or
 *    stale only), "new","resolved","open": [findings as db_findings_query gives them, at or
 *    above min_severity, unwaived; resolved only those seen fixed], "open_total", "waived",
 *    "counts":{"new","resolved","open","critical"}, "waivers":[{"check","object","vcenter",
 *    "reason","expires","days"}], "datastores":[inventory datastores, with "runway" when the
 *    store estimates one], "score" (int or null), "previous_score" (int or null)}
 * prev_score: the previous digest's score, -1 when none. *out is the caller's. */
int vsl_digest_gather(struct db *db, const struct vsl_config *cfg, int64_t from_ms,
                      int64_t to_ms, int prev_score, json_t **out);

/* How a model is written. */
struct vsl_digest_style {
    const char *public_url; /* the dashboard, or NULL: no links */
    const char *tz;         /* for the times shown; NULL: the system's zone */
    const char *prefix;     /* of the subject */
    const char *min_severity;
};

/* The subject, the text part (lines of at most 80 columns) and the HTML part of model; each
 * malloc'd, the caller frees them. 0 or a negative error. */
int vsl_digest_render(const json_t *model, const struct vsl_digest_style *st, char **subject,
                      char **text, char **html);

/* The whole message (headers, both parts quoted-printable, CRLF lines) into out. */
int vsl_digest_message(const json_t *model, const struct vsl_digest_style *st, const char *from,
                       const char *to, int64_t now_ms, const char *message_id,
                       struct vsl_buf *out);

/* Whether the model has nothing to say (nothing new, resolved or failing). */
int vsl_digest_empty(const json_t *model);

/* Sends message through d's server to each address of d->to, with the password (may be NULL).
 * On failure writes the reason (never the password) to err. wait (may be NULL) is
 * vsl_digest_run()'s, asked with 0 seconds about once a second during the transfer: nonzero
 * aborts it (-EINTR), so that a daemon stopping is not held by a relay that never answers. */
int vsl_digest_send(const struct vsl_digest_conf *d, const char *password, const char *message,
                    int (*wait)(void *ctx, int seconds), void *ctx, char *err, size_t errlen);

/* Builds and delivers one digest: the window from the last recorded digest's end (or the
 * beginning) to now_ms; slot_ms the scheduled time it is for (0: by hand). A refused delivery
 * is retried after d->retry_min_s, doubling up to d->retry_max_s, with one log line per
 * failure; up to attempts tries (0: until wait() says stop). wait(ctx, seconds) sleeps and
 * returns nonzero to give up. The window is recorded only once the server accepted the
 * message (or when it is empty and send_when_empty is false). dry_run: the message goes to
 * dry_out, nothing is sent or recorded. 0, or a negative error once logged. */
int vsl_digest_run(struct db *db, const struct vsl_config *cfg, int64_t slot_ms, int64_t now_ms,
                   int attempts, int (*wait)(void *ctx, int seconds), void *ctx, int dry_run,
                   FILE *dry_out);

/* When a daemon starting at now_ms sends its first digest (at: minutes after midnight in
 * d->timezone). If a scheduled time passed since the last recorded digest without one (the
 * daemon was down, or stopped while retrying), that time: the missed digest goes out now, once;
 * otherwise the next time at= comes round. A database that never recorded a digest has missed
 * nothing. 0 or a negative error. */
int vsl_digest_first_due(struct db *db, const struct vsl_digest_conf *d, int at, int64_t now_ms,
                         int64_t *due);

#endif
