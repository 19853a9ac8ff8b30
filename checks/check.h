/* A check is data plus one function: id, title, default severity, rationale, reference,
 * remediation, parameters with defaults, and run(), which reads an estate and emits findings.
 * checks/registry.c lists every check in one table. */
#ifndef CHK_CHECK_H
#define CHK_CHECK_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "checks/estate.h"

enum chk_severity { CHK_INFO = 0, CHK_WARNING = 1, CHK_CRITICAL = 2 };

const char *chk_severity_name(enum chk_severity s); /* "info", "warning", "critical" */
int chk_severity_parse(const char *s, enum chk_severity *out); /* 0 or -EINVAL */

/* A numeric threshold a user may override in [check ID]. */
struct chk_param {
    const char *name; /* config key, e.g. "warn_free_pct" */
    double dflt, min, max;
    const char *unit; /* "%", "GB", "VMs", "days", ... for help and messages */
    const char *help;
};

struct chk_ctx; /* one run of one check over one estate; see chk_emit() */

struct check {
    const char *id;    /* kebab-case, stable forever: configs, waivers, pipelines name it */
    const char *title; /* one line */
    enum chk_severity severity; /* the default (highest) severity it raises */
    const char *rationale;      /* why, in a sentence or two */
    const char *reference;      /* "000_5bd48962a767ee9e.txt §3.5.1", KB numbers */
    const char *remediation;    /* the concrete fix, with the esxcli/PowerCLI command */
    const struct chk_param *params; /* terminated by an entry with name == NULL; may be NULL */
    /* Reads e and calls chk_emit() once per finding. Returns 0 or a negative error. */
    int (*run)(struct chk_ctx *ctx, const struct estate *e);
};

/* The value of the check's parameter name in this run (the configured one or the default).
 * Asking for a name the check does not declare is a programming error (assert). */
double chk_param(const struct chk_ctx *ctx, const char *name);

/* The value of another check's parameter in this run's configuration (its default when the run
 * has none, as in chk_run_one), for a check whose rule follows another's thresholds. Naming a
 * check or parameter that does not exist is a programming error (assert). */
double chk_param_from(const struct chk_ctx *ctx, const char *check_id, const char *name);

/* The time of this run (unix seconds), for age-based rules. */
int64_t chk_now(const struct chk_ctx *ctx);

/* What a check reports about one object. */
struct chk_emit {
    enum chk_severity severity;
    const char *object_type;  /* "datastore", "storage_pod", "host", "vm", "lun", "iscsi_hba", ... */
    const char *object_moref; /* the managed object (for a LUN or adapter: its host's moref) */
    const char *object_name;  /* what a human calls it: "ds-crowded", "esx01 naa.6006..." */
    const char *detail;       /* distinguishes several findings on one object ("vmhba64/10.0.0.20:3260"), or NULL */
    const char *message;      /* a sentence a human can act on */
    json_t *evidence;         /* measured values and thresholds; reference stolen (may be NULL) */
};

/* Records a finding. The run applies severity overrides and waivers afterwards. */
int chk_emit(struct chk_ctx *ctx, const struct chk_emit *f);

/* The registry: every built-in check, in catalogue order. */
extern const struct check *const chk_registry[];
extern const size_t chk_registry_len;
const struct check *chk_find(const char *id);
/* The catalogue as a JSON document (a new reference, NULL on ENOMEM). */
json_t *chk_catalogue_json(void);

#endif
