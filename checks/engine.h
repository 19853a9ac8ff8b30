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
    enum chk_severity severity; /* after the override */
    char *object_type, *object_moref, *object_name, *detail, *message; /* owned */
    json_t *evidence; /* owned reference, never NULL (an empty object at least) */
    const struct chk_waiver *waiver; /* the active waiver that covers it, or NULL */
};

struct chk_results {
    struct chk_finding *items; /* owned */
    size_t n, cap;
    /* Waivers that matched a finding but had expired (for a hint in the output). */
    const struct chk_waiver **expired;
    size_t n_expired;
};

/* Runs every enabled check over e at time now (unix seconds) and appends to out. A check that
 * fails is reported in err (one line) and the run goes on; returns the first error. */
int chk_run_all(const struct chk_config *cfg, const struct estate *e, int64_t now,
                struct chk_results *out, char *err, size_t errlen);
void chk_results_free(struct chk_results *r);

/* Runs one check with the given settings (NULL = defaults) and appends its findings to out,
 * overrides and waivers applied as in chk_run_all (waivers: none here). For tests. */
int chk_run_one(const struct check *c, const struct chk_settings *s, const struct estate *e,
                int64_t now, struct chk_results *out);

/* Default settings of c (enabled, no override, default parameters). */
void chk_settings_default(const struct check *c, struct chk_settings *s);

/* The fingerprint of (check, vcenter, moref, detail): stable across runs and versions. */
void chk_fingerprint(const char *check, const char *vcenter, const char *moref, const char *detail,
                     char out[17]);

#endif
