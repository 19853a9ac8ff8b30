/* A finding as the layers after the checks see it: severities, one finding of one evaluation,
 * and an evaluation of one vCenter (what was found, which checks completed or were disabled,
 * and where the checks could not verify). The check engine fills these (chk_evaluation), the
 * findings store records them: neither needs the other's headers. */
#ifndef MODEL_FINDING_H
#define MODEL_FINDING_H

#include <jansson.h>
#include <stddef.h>

enum vsl_severity { SEV_INFO = 0, SEV_WARNING = 1, SEV_CRITICAL = 2 };

const char *vsl_severity_name(enum vsl_severity s); /* "info", "warning", "critical" */
int vsl_severity_parse(const char *s, enum vsl_severity *out); /* 0 or -EINVAL */

/* One finding. Every pointer is borrowed from whoever made the evaluation. */
struct finding {
    char fingerprint[17];                /* 16 hex digits, stable across runs and versions */
    const char *check_id, *check_title;  /* the check as the catalogue names it */
    enum vsl_severity severity;          /* after the configuration's override */
    const char *object_type, *object_moref, *object_name; /* moref NULL for a part of a host */
    const char *host_moref, *host_name;  /* NULL unless it is on or about a host */
    const char *detail, *message;
    /* The evidence, as a tree, or as the compact JSON text the engine keeps instead when a run
     * asks it to (chk_results.compact, evidence then NULL): exactly one is set. The store
     * writes the text as it is, or the tree as JSON_COMPACT dumps it (FINDING_EVIDENCE_FLAGS),
     * so the two give the same stored bytes. */
    const json_t *evidence;
    const char *evidence_json;
    const char *waiver_reason, *waiver_expires; /* both NULL unless a live waiver covers it */
};

/* Where a check could not judge in this evaluation: its earlier findings there are kept as
 * they were, unverified. moref NULL: all of the check's findings (it failed). */
struct unverified_scope {
    const char *check_id, *moref, *reason;
};

/* One evaluation of one vCenter, as the findings store records it (db_findings_record). */
struct evaluation {
    const struct finding *findings;
    size_t n_findings;
    const char *const *completed; /* ids of the checks that ran to completion */
    size_t n_completed;
    const char *const *disabled;  /* ids of the checks the configuration turns off */
    size_t n_disabled;
    const struct unverified_scope *unverified;
    size_t n_unverified;
    void *owned; /* what the maker allocated for the arrays above; evaluation_free() frees it */
};

void evaluation_free(struct evaluation *ev); /* frees ev->owned; NULL-safe, ev zeroed */

/* How a finding's evidence tree is written as text, by the engine and the store alike. */
#define FINDING_EVIDENCE_FLAGS JSON_COMPACT

/* A finding's last_seen (unix ms) as SQL over the findings row of alias t: an open or waived
 * finding that its vCenter's latest evaluation verified was seen at that evaluation (the
 * evaluations table); any other keeps the time its row holds. An evaluation rewrites only the
 * rows that changed (db_findings_record()), so the row's own last_seen_ms of an unchanged open
 * finding is older. Every reader of last_seen reads it through this, db/ and rules/'s views
 * alike (rules/ may not include db/, so it lives with the finding). */
#define DB_LAST_SEEN_SQL(t)                                                                        \
    "(CASE WHEN " t ".status IN ('open', 'waived') AND " t ".unverified_since_ms IS NULL"        \
    " THEN coalesce((SELECT e.evaluated_ms FROM main.evaluations e WHERE e.vcenter = " t         \
    ".vcenter), " t ".last_seen_ms) ELSE " t ".last_seen_ms END)"

#endif
