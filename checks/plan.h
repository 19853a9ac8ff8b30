/* The remediation plan: the open findings whose fix is a host setting, turned into a script a
 * person reviews and runs (esxcli in each host's shell, or PowerCLI), and the rest as tasks. */
#ifndef CHK_PLAN_H
#define CHK_PLAN_H

#include <jansson.h>
#include <stddef.h>

enum chk_plan_format {
    CHK_PLAN_ESXCLI,   /* a POSIX sh script for the ESXi shell, one section per host */
    CHK_PLAN_POWERCLI, /* a PowerShell script: Get-EsxCli -V2 per host, through vCenter */
};

/* "esxcli" / "powercli" to the format; -EINVAL for anything else. */
int chk_plan_format_parse(const char *s, enum chk_plan_format *out);

struct chk_plan_opts {
    enum chk_plan_format format;
    const char *generated_at; /* "2026-11-30T19:00:00Z", written in the header */
    const char *scope;        /* what the findings were filtered by, e.g. "vCenter prod", or
                                 NULL for everything */
};

/* Writes the plan for findings (a JSON array in db_findings_query()'s shape: check, status,
 * object, host, fingerprint, message, evidence, unverified, ...) into *out (malloc'd, the
 * caller frees it; *len its length). Findings that are waived or unverified are not planned
 * (the header counts them); those whose fix is a host setting become steps, grouped by host,
 * each with a check of the current value before the change; every other one is a task for a
 * person. 0, or -ENOMEM / -VSL_ETOOBIG. */
int chk_plan(json_t *findings, const struct chk_plan_opts *o, char **out, size_t *len);

#endif
