/* Renders findings for `vslint check`: text for people, JSON for scripts, JUnit XML and SARIF
 * 2.1.0 for CI systems. The findings are read from the database as each report is written
 * (db_findings_each_text(), db_findings_each_row()): one shape everywhere. */
#ifndef VSL_REPORT_H
#define VSL_REPORT_H

#include <jansson.h>
#include <stdio.h>

#include "db/db.h"

struct check;

enum vsl_format {
    VSL_FMT_TEXT,
    VSL_FMT_JSON,
    VSL_FMT_JUNIT,
    VSL_FMT_SARIF,
    VSL_FMT_GITLAB, /* GitLab Code Quality report */
    VSL_FMT_GITHUB, /* GitHub Actions workflow annotations */
};

/* Where the CI formats (SARIF, GitLab, GitHub) say a finding is: at a path made from its
 * object ("vsphere/VCENTER/datastore/NAME"), or at the configuration file's [vcenter NAME]. */
enum vsl_location { VSL_LOC_OBJECT, VSL_LOC_CONFIG };
int vsl_location_parse(const char *s, enum vsl_location *out);

/* A vCenter or array the run judged: one SARIF run (code scanning category) each. */
struct vsl_report_source {
    const char *name; /* borrowed */
    int line;         /* of its section in the configuration file */
    int array;        /* an [array NAME], not a [vcenter NAME] */
};

int vsl_format_parse(const char *s, enum vsl_format *out);

struct vsl_report {
    /* JSON only: the findings as a tree (an array, borrowed), written as it is; NULL (always,
     * for the other formats) to read them from db as the report is written. */
    json_t *findings;
    json_t *summary;    /* object, borrowed */
    int fail_on;        /* severity index (0 info .. 2 critical), or 3 = never */
    const char *errors; /* run errors, one per line, or NULL */
    const struct vsl_report_source *sources; /* borrowed, n_sources of them; may be NULL */
    size_t n_sources;
    enum vsl_location location;
    const char *config_path; /* for VSL_LOC_CONFIG: relative to the repository's top */
    /* Site rules (daemon/site.h): listed after the built-in checks in every format; NULL, 0
     * when none. rule_errors (borrowed, may be NULL): the rules that failed, {id, file, line,
     * error} each: JSON's "rule_errors", SARIF's notifications, JUnit's failed cases. */
    const struct check *site;
    size_t n_site;
    json_t *rule_errors;
    /* With findings NULL: the findings of these vCenters (borrowed, n_vcenters of them, in
     * this order) are read from db row by row as the report is written, instead of from a tree
     * of them all held in memory; a report that reads them more than once (text by severity,
     * JUnit by check) sees one state only inside db_findings_read_begin(). */
    struct db *db;
    const char *const *vcenters;
    size_t n_vcenters;
    /* With db (may be NULL): what the findings written said, so that the exit status agrees
     * with the document printed rather than with another read of a store the daemon may have
     * changed since. */
    struct vsl_report_seen *seen;
};

struct vsl_report_seen {
    int failing; /* an unwaived finding at fail_on or above was written */
    int unread;  /* a vCenter's findings could not be read (said on stderr); the document was
                  * still closed, without them */
    /* The other formats: which of the report's vCenters could not be read (n_vcenters flags,
     * malloc'd at the first such failure, freed by the caller): their later reads are skipped,
     * the others' still made. what: the first failure, as the report says it. */
    unsigned char *unread_of;
    char what[512];
};

int vsl_report_write(FILE *f, enum vsl_format fmt, const struct vsl_report *r);
#ifdef VSL_TEST_HOOKS
/* Tests: nonzero, what the streamed JSON report's buffer may hold (a block and a finding). */
extern size_t vsl_test_report_max;
#endif

/* The rules of a report: the built-in catalogue, then the site rules; c < nchecks(r). */
size_t vsl_report_nchecks(const struct vsl_report *r);
const struct check *vsl_report_check(const struct vsl_report *r, size_t c);

/* The CI platforms' formats (daemon/report_ci.c). */
int vsl_report_sarif(FILE *f, const struct vsl_report *r);
int vsl_report_gitlab(FILE *f, const struct vsl_report *r);
int vsl_report_github(FILE *f, const struct vsl_report *r);

/* Writes doc as every command prints JSON: indented by two, members in their order, and a
 * newline. 0, -ENOMEM for a NULL doc (it could not be built), or -EIO. */
int vsl_json_print(FILE *f, const json_t *doc);

/* Severity index of a finding JSON ("info" 0, "warning" 1, "critical" 2). */
int vsl_finding_severity(const json_t *finding);

/* The name of a finding's object as a person says it, into out: a part of a host (a LUN, a
 * vmknic, an adapter, which has no moref) is "HOST PART". */
void vsl_finding_object_name(const json_t *finding, char *out, size_t size);

#endif
