/* What the report writers of `vslint check` share (daemon/report.c, daemon/report_ci.c): the
 * walk over the stored findings row by row, and the JSON stream the JSON, SARIF and GitLab
 * reports are written through. Not for other callers. */
#ifndef VSL_REPORT_PRIVATE_H
#define VSL_REPORT_PRIVATE_H

#include <stdio.h>

#include "daemon/report.h"
#include "db/findings.h"
#include "util/buf.h"

/* A string of a finding's row, "" for a member that is null (what str() of its tree reads). */
static inline const char *or_empty(const char *s)
{
    return s ? s : "";
}

/* Each finding of r's vCenters (r->vcenters, in their order; only f->vcenter's when f names
 * one) matching f, handed to fn, each vCenter's in one walk (db_findings_each_row()). Marks
 * r->seen->failing for an unwaived finding at r->fail_on or above. A vCenter whose read fails
 * is vsl_report_read_failed() and skipped by every later walk; the others are still read, and
 * the walk returns 0. fn's own error (writing the report) is returned as it is. */
int vsl_report_walk(const struct vsl_report *r, const struct db_findings_filter *f,
                    db_findings_row_fn *fn, void *ctx);
/* Whether the findings of vCenter v (of r->vcenters) could not be read. */
int vsl_report_unread(const struct vsl_report *r, size_t v);
/* Says on stderr that vCenter v's findings could not be read (err), and marks it in r->seen. */
void vsl_report_read_failed(const struct vsl_report *r, size_t v, int err);

/* vsl_finding_object_name() of a row. */
void vsl_row_object_name(const struct db_finding_row *w, char *out, size_t size);

/* A JSON document written as json_dumpf(JSON_INDENT(2) | JSON_PRESERVE_ORDER) would write it,
 * from compact text made piece by piece, out to f a 64 KiB block at a time: written a token at
 * a time through stdio (each call taking the stream's lock), the 24 MB report of 100,000 VMs
 * spent half its time there. */
struct vsl_jstream {
    FILE *f;
    struct vsl_buf out; /* written to f a block at a time (vsl_jstream_flush()) */
    /* f is a terminal: each finding is written as soon as it is made, so that a warning on
     * stderr shows among the findings where it happened (stdio's line buffering then writes
     * it out line by line, as when the report went to stdio a character at a time). */
    int tty;
    size_t items;
    int fail_on;
    int failing; /* an unwaived finding at fail_on or above was written */
    /* The first error of building or writing the report (the buffer's -ENOMEM or
     * -VSL_ETOOBIG, a write's -EIO), as opposed to one of reading the findings: the report
     * cannot be written whole, where a read error still closes the document. 0: none. */
    int werr;
};
void vsl_jstream_init(struct vsl_jstream *s, FILE *f);
/* Writes out what s holds once it is a block, or all of it (all nonzero), and empties it.
 * 0 or -EIO. */
int vsl_jstream_flush(struct vsl_jstream *s, int all);
/* The compact JSON text json[0..len) as the next element (s->items counts them: a comma
 * before all but the first) of the array being written, at depth, then out to f once a block
 * is held (at once to a terminal). On an error nothing of it stays in s's buffer, and s->werr
 * has it. 0 or the error. */
int vsl_jstream_item(struct vsl_jstream *s, const char *json, size_t len, int depth);
/* A newline and the indent of depth. 0 or the buffer's error. */
int vsl_json_newline(struct vsl_buf *out, int depth);
/* The compact JSON text s[0..n) appended to out as a value at depth depth (see report.c). */
int vsl_json_indented(struct vsl_buf *out, const char *s, size_t n, int depth);

#endif
