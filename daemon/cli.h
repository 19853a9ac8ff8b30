/* The vslint command line: subcommands, their options and their help texts. */
#ifndef VSL_CLI_H
#define VSL_CLI_H

#include <stdio.h>

#include "daemon/config.h"

/* Runs argv as a vslint command line; returns the process exit status. */
int vsl_main(int argc, char **argv);

/* A subcommand's command line, parsed by vsl_main() from the one table of options (cli.c)
 * before the command runs. An option the command does not take, or was not given, is NULL / 0;
 * values are checked against what the option accepts. Strings point into argv. */
struct vsl_args {
    const char *config;  /* -c, --config FILE */
    const char *format;  /* -f, --format: one the command accepts, its first when not given */
    const char *fail_on; /* --fail-on: info, warning, critical or never */
    const char *vcenter; /* --vcenter NAME */
    const char *check;   /* --check ID */
    const char *output;  /* -o, --output FILE */
    const char *sarif_location; /* --sarif-location object|config */
    const char *log;     /* --log: stderr, syslog or journal */
    int offline;         /* --offline */
    int dry_run;         /* --dry-run */
    int anonymize;       /* --anonymize (vslint record) */
    /* vslint gate: the proposal, and a daemon to ask instead of polling */
    const char *datastore, *datastore_cluster; /* --datastore / --datastore-cluster NAME */
    const char *vms;                           /* --vms N */
    const char *disk_gb;                       /* --disk-gb G[,G...] */
    const char *disk_format;                   /* --disk-format thin|lazy|eager */
    int ft, shared_bus, allow_stale;           /* --ft, --shared-bus, --allow-stale */
    const char *max_age;                       /* --max-age SECONDS */
    const char *server, *token_file;           /* --server URL, --token-file FILE */
    int verbose;         /* -v, --verbose */
    int connect;         /* config-check --connect */
    const char *hosts;   /* config-check --hosts N */
    char **operands;     /* the arguments after the options (vslint checks ID...) */
    int n_operands;
};

/* Subcommands (daemon/cmd_*.c; cmd_serve in daemon/serve.h). */
int cmd_collect(const struct vsl_args *a);
int cmd_inventory(const struct vsl_args *a);
int cmd_config_check(const struct vsl_args *a);
int cmd_check(const struct vsl_args *a);
int cmd_checks(const struct vsl_args *a);
int cmd_db(const struct vsl_args *a); /* daemon/cmd_db.c */
int cmd_digest(const struct vsl_args *a);
int cmd_gate(const struct vsl_args *a); /* daemon/cmd_gate.c */
int cmd_plan(const struct vsl_args *a);
int cmd_query(const struct vsl_args *a);  /* daemon/cmd_query.c */
int cmd_export(const struct vsl_args *a); /* daemon/cmd_query.c */
int cmd_rules(const struct vsl_args *a);  /* daemon/cmd_rules.c */
int cmd_record(const struct vsl_args *a); /* daemon/cmd_record.c */

/* Exit statuses shared by every subcommand. */
enum { VSL_EXIT_OK = 0, VSL_EXIT_FINDINGS = 1, VSL_EXIT_FAIL = 2 };

struct vsl_config;
struct db;
/* Loads the configuration named by -c for use (what strict_permissions means there), printing
 * every problem to stderr, and its warnings too but for VSL_CONFIG_SERVE (the daemon logs them
 * itself). 0 or -VSL_ECONFIG. */
int vsl_cli_load_config(const char *path, struct vsl_config **cfg, enum vsl_config_use use);
/* What collect, inventory and check start with: logging to stderr (debug with -v), the
 * configuration loaded (warnings printed) and its database open, for reading only when
 * readonly (db_open_reader: another process holding the write lock does not stop it). 0, or -1
 * once the problem is said; then *cfg and *db are NULL. The caller frees both. */
int vsl_cli_open(const struct vsl_args *a, int readonly, struct vsl_config **cfg,
                 struct db **db);
struct vsl_buf;
/* Logs each line of errors (vsl_buf_line()'s list) as one warning on stderr. */
void vsl_cli_warn_lines(const struct vsl_buf *errors);
/* Where a command writes its answer: the file of -o, opened for writing (close-on-exec), or
 * stdout without -o; NULL once the problem is logged. Close it with vsl_cli_close_output(),
 * which leaves stdout open and takes NULL. */
FILE *vsl_cli_output(const struct vsl_args *a);
void vsl_cli_close_output(FILE *f);

#endif
