/* The vslint command line: subcommands, their options and their help texts. */
#ifndef VSL_CLI_H
#define VSL_CLI_H

/* Runs argv as a vslint command line; returns the process exit status. */
int vsl_main(int argc, char **argv);

/* Subcommands (daemon/cmd_*.c). */
int cmd_collect(int argc, char **argv);
int cmd_inventory(int argc, char **argv);
int cmd_config_check(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_checks(int argc, char **argv);

/* Exit statuses shared by every subcommand. */
enum { VSL_EXIT_OK = 0, VSL_EXIT_FINDINGS = 1, VSL_EXIT_FAIL = 2 };

/* Prints the help text of a subcommand (or the overview for NULL) to f. */
#include <stdio.h>
void vsl_usage(const char *cmd, FILE *f);


struct vsl_config;
/* Loads the configuration named by -c, printing every problem to stderr, and its warnings
 * too when print_warnings (the daemon logs them itself). 0 or -VSL_ECONFIG. */
int vsl_cli_load_config(const char *path, struct vsl_config **cfg, int print_warnings);

#endif
