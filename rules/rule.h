/* Site rules: one SELECT over the public views per *.sql file, with a header of "--" lines
 * (id, title, severity, rationale, remediation, param), loaded from a directory and run in the
 * sandbox (rules/sandbox.h). docs/rules.md is the author's guide. */
#ifndef RULES_RULE_H
#define RULES_RULE_H

#include <stddef.h>

#include <jansson.h>

#include "model/finding.h"
#include "rules/sandbox.h"

#define RULES_MAX_PARAMS 8
/* The range a site rule's parameter may be set to in [check ID]: its header gives none. */
#define RULES_PARAM_MIN -1e15
#define RULES_PARAM_MAX 1e15

/* A number the rule's SQL reads as :name, overridable in [check ID]. */
struct rules_param {
    char *name; /* owned */
    double dflt;
    char *unit; /* owned, "" when none */
    char *help; /* owned, "" when none */
    int line;
};

struct rules_rule {
    char *file; /* owned: the path it was read from */
    char *id, *title, *rationale, *remediation; /* owned; rationale/remediation "" when none */
    enum vsl_severity severity;
    struct rules_param params[RULES_MAX_PARAMS];
    size_t n_params;
    char *sql;    /* owned: the file from the first line after the header */
    int sql_line; /* the file's line where sql starts */
};

/* A rule file that could not be read or is malformed: the file, the line (0: the file as a
 * whole) and the cause. */
struct rules_error {
    char *file;  /* owned */
    int line;
    char *cause; /* owned */
    char *id;    /* owned: the rule's id when the header gave one, else NULL */
};

struct rules_set {
    struct rules_rule *rules; /* owned, sorted by file name */
    size_t n, cap;
    struct rules_error *errors; /* owned: the files that did not load */
    size_t n_errors, cap_errors;
};

/* Parses the rule in text (the contents of file) into *out (rules_rule_free). 0, or -EINVAL
 * with *line and cause (the cause in err) of the first problem. */
int rules_parse(const char *file, const char *text, struct rules_rule *out, int *line, char *err,
                size_t errlen);
void rules_rule_free(struct rules_rule *r);

/* Loads every *.sql file of dir (in name order) into set; a missing dir is an empty set.
 * taken(id, ctx) says whether a built-in check has the id (a collision); two files with one id
 * are both refused. A file that fails goes to set->errors, and the others load. 0, or -ENOMEM,
 * or a negative errno when dir exists but cannot be read (said in err). */
int rules_load_dir(const char *dir, int (*taken)(const char *id, void *ctx), void *ctx,
                   struct rules_set *set, char *err, size_t errlen);
/* Loads the named files (for `vslint rules test FILE...`), as rules_load_dir does. */
int rules_load_files(char *const *files, size_t n, int (*taken)(const char *id, void *ctx),
                     void *ctx, struct rules_set *set);
void rules_set_free(struct rules_set *set);
/* The rule of set with id, or NULL. */
const struct rules_rule *rules_find(const struct rules_set *set, const char *id);

/* One finding of a rule, as the rule's row gave it. Strings borrowed for the call only. */
struct rules_row {
    const char *object_type, *object_moref, *object_name, *message;
    const char *host_name, *detail; /* may be NULL */
    enum vsl_severity severity;     /* the row's, else the header's */
    json_t *evidence;               /* a new reference the callee takes: the evidence column,
                                       or the row's other columns, or {} */
};
typedef int rules_emit_fn(void *ctx, const struct rules_rule *rule, struct rules_row *row);

/* Prepares the rule in db: checks that it is one statement the sandbox allows, that every
 * :name it uses is a param of its header and that it returns the required columns. 0, or a
 * negative error with the line of the file and the cause. *out is the caller's. */
int rules_prepare(struct rules_db *db, const struct rules_rule *rule, sqlite3_stmt **out,
                  int *line, char *err, size_t errlen);

/* Runs rule with params (its n_params values, NULL: the defaults) under the limits, calling
 * emit per row. 0, or a negative error with the cause in err (the line in *line when known). */
int rules_run(struct rules_db *db, const struct rules_rule *rule, const double *params,
              long timeout_ms, long max_rows, rules_emit_fn *emit, void *ctx, int *line,
              char *err, size_t errlen);

#endif
