/* Renders findings for `vslint check`: text for people, JSON for scripts, JUnit XML and SARIF
 * 2.1.0 for CI systems. The findings come from db_findings_query() (one shape everywhere). */
#ifndef VSL_REPORT_H
#define VSL_REPORT_H

#include <jansson.h>
#include <stdio.h>

enum vsl_format { VSL_FMT_TEXT, VSL_FMT_JSON, VSL_FMT_JUNIT, VSL_FMT_SARIF };

int vsl_format_parse(const char *s, enum vsl_format *out);

struct vsl_report {
    json_t *findings;   /* array, borrowed */
    json_t *summary;    /* object, borrowed */
    int fail_on;        /* severity index (0 info .. 2 critical), or 3 = never */
    const char *errors; /* run errors, one per line, or NULL */
    /* Site rules (daemon/site.h): listed after the built-in checks in every format; NULL, 0
     * when none. rule_errors (borrowed, may be NULL): the rules that failed, {id, file, line,
     * error} each: JSON's "rule_errors", SARIF's notifications, JUnit's failed cases. */
    const struct check *site;
    size_t n_site;
    json_t *rule_errors;
};

int vsl_report_write(FILE *f, enum vsl_format fmt, const struct vsl_report *r);

/* Writes doc as every command prints JSON: indented by two, members in their order, and a
 * newline. 0, -ENOMEM for a NULL doc (it could not be built), or -EIO. */
int vsl_json_print(FILE *f, const json_t *doc);

/* Severity index of a finding JSON ("info" 0, "warning" 1, "critical" 2). */
int vsl_finding_severity(const json_t *finding);

/* The name of a finding's object as a person says it, into out: a part of a host (a LUN, a
 * vmknic, an adapter, which has no moref) is "HOST PART". */
void vsl_finding_object_name(const json_t *finding, char *out, size_t size);

#endif
