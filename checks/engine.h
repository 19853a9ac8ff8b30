/* The check engine: per-check settings (enabled, severity, parameters), waivers, and one run
 * of every enabled check over an estate, producing fingerprinted findings. */
#ifndef CHK_ENGINE_H
#define CHK_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "checks/check.h"

#define CHK_MAX_PARAMS 8

struct chk_settings {
    int enabled;                  /* default 1 */
    int severity_override;        /* -1: the check's own severities; else every finding's */
    double params[CHK_MAX_PARAMS]; /* in the order of check->params */
};

struct chk_waiver {
    char *check;   /* check id, owned */
    char *object;  /* fnmatch(3) pattern on the object name, owned */
    char *vcenter; /* optional: only this vCenter, owned, may be NULL */
    char *reason;  /* owned */
    char *expires_text; /* "2027-01-31", owned */
    int64_t expires;    /* unix seconds of the end of that day (UTC) */
    int line;           /* in the configuration, for messages */
};

struct chk_config {
    struct chk_settings *settings; /* owned, chk_registry_len entries, index = registry index */
    struct chk_waiver *waivers;    /* owned */
    size_t n_waivers;
};

/* Fills cfg with defaults (everything enabled, default thresholds). */
int chk_config_init(struct chk_config *cfg);
void chk_config_free(struct chk_config *cfg);

/* One finding of one run. */
struct chk_finding {
    char fingerprint[17]; /* 16 hex digits of FNV-1a 64 over check|vcenter|moref|detail */
    const struct check *check;
    const char *vcenter; /* borrowed from the estate */
    enum vsl_severity severity; /* after the override */
    char *object_type, *object_moref, *object_name, *detail, *message; /* owned */
    char *host_moref, *host_name; /* owned; NULL unless the finding is on or about a host */
    /* Owned reference, an empty object at least; NULL once the run compacted it
     * (chk_results.compact): evidence_json (owned) holds it then as FINDING_EVIDENCE_FLAGS
     * JSON text. One of the two is set. */
    json_t *evidence;
    char *evidence_json;
    const struct chk_waiver *waiver; /* the active waiver that covers it, or NULL */
};

/* Where a check could not judge this run, so its earlier findings there must be kept as they
 * were (neither refreshed nor resolved) and shown as unverified: the check failed (moref NULL:
 * all its findings), or an input it needs was not read for one object (a host with a gap, a
 * disconnected host, an inaccessible datastore: moref is that object's). */
struct chk_unverified {
    const struct check *check;
    char *moref;  /* owned; NULL: every finding of the check on this vCenter */
    char *reason; /* owned; what could not be read, and why, in one line */
};

struct chk_results {
    struct chk_finding *items; /* owned */
    size_t n, cap;
    /* The checks that ran to completion: a finding of theirs that was not emitted again and is
     * not covered by an unverified scope was really seen fixed. */
    const struct check **completed; /* owned array */
    size_t n_completed;
    /* The checks the configuration disables: their findings are closed as "disabled", not as
     * fixed. A finding of any other check that did not complete is kept as unverified. */
    const struct check **disabled; /* owned array */
    size_t n_disabled;
    struct chk_unverified *unverified; /* owned */
    size_t n_unverified;
    /* Waivers that matched a finding but had expired (for a hint in the output). */
    const struct chk_waiver **expired;
    size_t n_expired;
    /* Set by the caller before a run that only records the findings (an evaluation): each
     * finding's evidence is kept as JSON text (evidence_json), made as it is emitted (by a
     * check or a site rule), not as a tree. At 100,000 VMs the trees of 15,778 findings held
     * about 30 MB until they were recorded; the text is a fraction of that, and only the tree
     * of the finding being emitted exists at a time. A tree that could not be written for
     * want of memory stays a tree (the store takes either). */
    int compact;
    /* Set by the caller before a run whose findings are read for their check, object, severity
     * and message only: a what-if judge, of which a placement runs one per datastore. Each
     * finding's evidence is then an empty object, and checks skip building what would be
     * thrown away (chk_wants_evidence()): a low pool's evidence names every datastore it backs,
     * 4,000 of them under one Unity pool, in every judge. */
    int no_evidence;
    /* Set by the caller: one run of the checks may take this many threads at once, the
     * caller's included (0 or 1: the calling thread alone; never more than the CPUs this
     * process may run on, nor 8). Each run has its own: N runs at once take N times as many.
     * Whatever the threads, the results are the same, in the same order: each check's are
     * gathered in the registry's order. */
    int threads;
};
#ifdef VSL_TEST_HOOKS
/* Tests: nonzero, the CPUs a run counts as usable (to run on threads on a runner with one);
 * and how many threads the last run took, the caller's included. */
extern size_t chk_test_cpus, chk_test_threads_used;
#endif

/* Runs every enabled check over e at time now (unix seconds) and appends to out. A check that
 * fails is reported in err (one line) and the run goes on; returns the first error.
 * The engine also decides what could not be verified (out->unverified): a check that failed,
 * and for each check the objects whose inputs it needs were not read this poll (see
 * enum chk_needs). Findings on a disconnected host or an inaccessible datastore are dropped
 * from a check that needs them: stale configuration is not judged. The checks that finished
 * are listed in out->completed. */
int chk_run_all(const struct chk_config *cfg, const struct estate *e, int64_t now,
                struct chk_results *out, char *err, size_t errlen);
void chk_results_free(struct chk_results *r);
/* Drops the findings of r past the first n (what a check that then failed had given). */
void chk_results_truncate(struct chk_results *r, size_t n);

/* chk_run_all() restricted to the checks in only (n_only of them; NULL: every check), for a
 * caller that needs a few checks' answers over many estates (the what-if gate). */
int chk_run_some(const struct chk_config *cfg, const struct check *const *only, size_t n_only,
                 const struct estate *e, int64_t now, struct chk_results *out, char *err,
                 size_t errlen);

/* The settings of check_id in cfg, or NULL when no check has that id. */
const struct chk_settings *chk_config_settings(const struct chk_config *cfg, const char *check_id);
/* A deep copy of src into dst (chk_config_free), for a reader that must outlive a reload.
 * 0 or -ENOMEM (dst left empty). */
int chk_config_copy(struct chk_config *dst, const struct chk_config *src);

/* The results as the findings store takes them (model/finding.h): a view that borrows every
 * string from r (and the registry, and the configuration's waivers), valid while r is. Free
 * with evaluation_free(). 0 or -ENOMEM. */
int chk_evaluation(const struct chk_results *r, struct evaluation *out);

/* Runs one check with the given settings (NULL = defaults) and appends its findings to out,
 * overrides, unverified scopes and dropped stale findings as in chk_run_all (waivers: none
 * here). For tests. */
int chk_run_one(const struct check *c, const struct chk_settings *s, const struct estate *e,
                int64_t now, struct chk_results *out);

/* Whether a host's configuration as vCenter holds it is current: connected (or the state is
 * unknown). A disconnected or not-responding host keeps its last configuration in vCenter. */
int chk_host_current(const struct est_host *h);

/* The value of check_id's parameter name in cfg (NULL: its default), as the engine runs it.
 * A check or parameter that does not exist is a programming error (assert). */
double chk_config_param(const struct chk_config *cfg, const char *check_id, const char *name);

/* Default settings of c (enabled, no override, default parameters). */
void chk_settings_default(const struct check *c, struct chk_settings *s);

/* A check from outside the registry (a site rule: no run()) reports through these. */
/* Appends a finding of c on vcenter (borrowed: it must outlive out) to out as chk_emit() does,
 * with s's severity override (s may be NULL) and cfg's waivers; host_name may be NULL. Its
 * fingerprint is (c, vcenter, object moref or "HOST/NAME", detail). Takes f->evidence. */
int chk_add_finding(const struct chk_config *cfg, const struct check *c,
                    const struct chk_settings *s, const char *vcenter, const struct chk_emit *f,
                    const char *host_name, int64_t now, struct chk_results *out);
/* Records how c's run ended: completed (its findings not given again were fixed), disabled, or
 * failed for reason (its findings stay as they were, unverified). 0 or -ENOMEM. */
enum chk_outcome { CHK_COMPLETED, CHK_DISABLED, CHK_FAILED };
int chk_add_outcome(struct chk_results *out, const struct check *c, enum chk_outcome outcome,
                    const char *reason);

/* The fingerprint of (check, vcenter, moref, detail): stable across runs and versions. */
void chk_fingerprint(const char *check, const char *vcenter, const char *moref, const char *detail,
                     char out[17]);

#endif
