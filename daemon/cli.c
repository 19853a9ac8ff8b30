/* Subcommand dispatch and help. Each subcommand's help says what it does, what it reads, what it
 * prints and what its exit status means, so `vslint help collect` answers an admin's questions. */
#include <stdio.h>
#include <string.h>

#include "daemon/cli.h"
#include "daemon/config.h"
#include "daemon/serve.h"
#include "util/buf.h"
#include "util/err.h"

struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
    const char *help;
    const char *keys; /* a configuration section whose keys the help lists, or NULL */
};

static const struct command commands[] = {
    {"collect", cmd_collect, "poll every configured vCenter once into the database",
     "Usage: vslint collect -c FILE [--vcenter NAME] [-v]\n"
     "\n"
     "Connects to each [vcenter NAME] of the configuration, logs in, reads the inventory the\n"
     "checks need (datastores, datastore clusters, distributed switches, hosts with their\n"
     "vmknics, iSCSI adapters and LUNs, VMs with their disks and controllers) and stores it in\n"
     "the SQLite database as one snapshot per vCenter. Prints, per vCenter, what it stored and\n"
     "how long it took. A vCenter that fails keeps its previous snapshot.\n"
     "\n"
     "  -c, --config FILE   configuration file (required)\n"
     "      --vcenter NAME  poll only this vCenter\n"
     "  -v, --verbose       log each request's progress to stderr\n"
     "\n"
     "Exit status: 0 every vCenter was polled, 2 a configuration error or any vCenter failed.\n", NULL},
    {"inventory", cmd_inventory, "print the stored inventory",
     "Usage: vslint inventory -c FILE [--format text|json] [--vcenter NAME]\n"
     "\n"
     "Prints what the last successful poll of each vCenter stored, without contacting vCenter:\n"
     "datastores (capacity, free, type, VM count), hosts (vmknics and MTU, iSCSI adapters with\n"
     "DelayedAck per adapter and target, LUNs with multipath policy, IOPS limit and paths) and\n"
     "VMs (disks with format and size, controllers).\n"
     "\n"
     "  -c, --config FILE     configuration file (for the database path)\n"
     "  -f, --format FORMAT   text (default) or json (shape in docs/inventory.md)\n"
     "      --vcenter NAME    only this vCenter\n"
     "\n"
     "Exit status: 0 printed, 2 error.\n", NULL},
    {"check", cmd_check, "poll, run the checks and print findings (for people and CI)",
     "Usage: vslint check -c FILE [--format text|json|junit|sarif] [--fail-on LEVEL]\n"
     "                    [--offline] [--vcenter NAME] [-o FILE]\n"
     "\n"
     "Polls each configured vCenter (as `vslint collect` does), runs every enabled check over\n"
     "the stored snapshot, records the findings' history in the database (first seen, last\n"
     "seen, resolved) and prints the open findings. Waived findings are printed as waived.\n"
     "\n"
     "  -c, --config FILE     configuration file (required)\n"
     "  -f, --format FORMAT   text (default), json, junit (JUnit XML) or sarif (SARIF 2.1.0)\n"
     "      --fail-on LEVEL   info, warning (default), critical or never: the lowest severity\n"
     "                        that makes the exit status 1\n"
     "      --offline         do not poll: check the last stored snapshot\n"
     "      --vcenter NAME    only this vCenter\n"
     "  -o, --output FILE     write the report to FILE instead of standard output\n"
     "  -v, --verbose         log progress to stderr\n"
     "\n"
     "Checks are configured in [check ID] sections (enabled, severity, thresholds; see\n"
     "`vslint checks`) and silenced per object by [waiver] sections:\n"
     "  [waiver]\n"
     "  check = datastore-size\n"
     "  object = ds-archive-*        ; fnmatch pattern on the object name\n"
     "  reason = archive tier, sized by the backup vendor\n"
     "  expires = 2027-06-30         ; after this day the finding counts again\n"
     "\n"
     "Exit status: 0 no unwaived finding at or above --fail-on, 1 there is one, 2 the run\n"
     "itself failed (bad configuration, a vCenter could not be polled or checked).\n", NULL},
    {"serve", cmd_serve, "run the daemon: poll on schedule, run the checks, serve the HTTP API",
     "Usage: vslint serve -c FILE [--log stderr|syslog|journal] [-v]\n"
     "\n"
     "Runs in the foreground until SIGTERM. Polls each [vcenter NAME] every interval= seconds\n"
     "(one thread per vCenter), runs the checks after each poll and records the findings'\n"
     "history, and serves them over HTTP on [server] listen= (default 127.0.0.1:8080):\n"
     "  /api/v1/findings, /api/v1/findings/FINGERPRINT, /api/v1/summary, /api/v1/checks,\n"
     "  /api/v1/inventory/{datastores,hosts,vms}, POST /api/v1/polls (poll now),\n"
     "  /metrics (Prometheus), /healthz (alive), /readyz (every vCenter polled once).\n"
     "The API is described in docs/openapi.yaml.\n"
     "\n"
     "A vCenter whose poll fails is retried after its interval, then twice that, and so on up\n"
     "to 8 x interval or one hour; its last good snapshot keeps being served, marked stale\n"
     "with the error, until a poll succeeds again.\n"
     "\n"
     "  -c, --config FILE   configuration file (required)\n"
     "      --log WHERE     stderr (default); syslog: through syslog(3); journal: to the\n"
     "                      systemd journal with the fields VSLINT_VCENTER=, VSLINT_CHECK=\n"
     "                      and PRIORITY= (journalctl VSLINT_VCENTER=prod), or syslog when\n"
     "                      built without libsystemd (use under systemd)\n"
     "  -v, --verbose       log debug lines too\n"
     "\n"
     "Malformed requests get a JSON error and one short log line (at most 10 a minute).\n"
     "\n"
     "Signals: SIGHUP reloads the configuration (a bad file is logged and the running one\n"
     "kept); SIGTERM or SIGINT finishes the polls in flight (at most 30 s) and exits 0.\n"
     "\n"
     "Exit status: 0 stopped by a signal, 2 could not start (configuration, port, database).\n",
     "server"},
    {"checks", cmd_checks, "list the catalogue of checks",
     "Usage: vslint checks [--format text|json] [ID...]\n"
     "\n"
     "Lists every check (or only the checks named): id, default severity, why it matters, the\n"
     "source document and section it comes from, the fix, and its parameters with defaults and\n"
     "allowed ranges.\n"
     "\n"
     "  -f, --format FORMAT   text (default) or json\n"
     "\n"
     "Exit status: 0 listed, 2 an unknown check id or format.\n", NULL},
    {"config-check", cmd_config_check, "validate a configuration file",
     "Usage: vslint config-check -c FILE\n"
     "\n"
     "Reads the configuration and prints \"configuration OK\", or one line per problem in the\n"
     "form FILE:LINE: [section] key: problem (the first 20, then how many more). Checks that\n"
     "password files, ca_file, tls_cert, tls_key and token_file are readable and that listen=\n"
     "is a numeric address, but never prints a password. Warnings (insecure = true; a token,\n"
     "password or key file others can read) go to stderr as FILE:LINE: [section] key: warning:\n"
     "...; with [server] strict_permissions = true such files are problems.\n"
     "\n"
     "Exit status: 0 valid, 2 invalid.\n", NULL},
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static const char overview[] =
    "vslint: lint VMware vSphere storage against vendor best practices.\n"
    "\n"
    "Usage: vslint COMMAND [OPTIONS]\n"
    "       vslint help COMMAND\n"
    "\n"
    "Commands:\n";

static const char config_help[] =
    "\n"
    "Configuration (INI), e.g. /etc/vslint/vslint.conf:\n"
    "  [database]\n"
    "  path = /var/lib/vslint/vslint.db\n"
    "\n"
    "  [vcenter prod]\n"
    "  url = https://vcenter.example.com/sdk\n"
    "  user = svc-vslint@vsphere.local\n"
    "  password_file = /etc/vslint/prod.password   ; or password_env = VSLINT_PROD_PASSWORD\n"
    "  ca_file = /etc/vslint/vcenter-ca.pem         ; default: the system trust store\n"
    "  ; thumbprint = SHA256:AA:BB:...              ; or pin a self-signed certificate\n"
    "  ; insecure = true                            ; skip TLS verification (not recommended)\n"
    "\n"
    "  [server]                                     ; for vslint serve\n"
    "  listen = 127.0.0.1:8080\n"
    "  token_file = /etc/vslint/token               ; bearer token for POST /api/v1/polls\n"
    "\n"
    "  [check vms-per-datastore]                    ; thresholds: see vslint checks\n"
    "  max_vms = 30\n"
    "\n"
    "  [waiver]                                     ; report a finding as waived until a date\n"
    "  check = datastore-size\n"
    "  object = ds-archive-*\n"
    "  reason = archive tier\n"
    "  expires = 2027-06-30\n"
    "\n"
    "Passwords are never accepted on the command line. vslint.conf(5) describes every key.\n";

/* A command's help, and the keys of its configuration section with their defaults from the
 * option table (daemon/config.c), so the numbers are written in one place. */
static void help(const struct command *c, FILE *f)
{
    struct vsl_config_doc d;

    fputs(c->help, f);
    if (!c->keys)
        return;
    fprintf(f, "\n[%s] keys (vslint.conf(5) says more):\n", c->keys);
    for (size_t i = 0; vsl_config_doc(i, &d) == 0; i++) {
        if (strcmp(d.section, c->keys))
            continue;
        if (d.dflt)
            fprintf(f, "  %-28s %-16s %s\n", d.key, d.syntax, d.dflt);
        else
            fprintf(f, "  %-28s %s\n", d.key, d.syntax);
    }
}

void vsl_usage(const char *cmd, FILE *f)
{
    if (cmd) {
        for (size_t i = 0; i < NCOMMANDS; i++) {
            if (!strcmp(commands[i].name, cmd)) {
                help(&commands[i], f);
                return;
            }
        }
    }
    fputs(overview, f);
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-14s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "  %-14s %s\n", "help", "show the help of a command");
    fputs(config_help, f);
}

int vsl_main(int argc, char **argv)
{
    if (argc < 2) {
        vsl_usage(NULL, stderr);
        return VSL_EXIT_FAIL;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
        vsl_usage(NULL, stdout);
        return VSL_EXIT_OK;
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
        printf("vslint %s\n", VSL_VERSION); /* meson.build's project version */
        return VSL_EXIT_OK;
    }
    if (!strcmp(cmd, "help")) {
        if (argc > 2) {
            for (size_t i = 0; i < NCOMMANDS; i++) {
                if (!strcmp(commands[i].name, argv[2])) {
                    help(&commands[i], stdout);
                    return VSL_EXIT_OK;
                }
            }
            fprintf(stderr, "vslint: no command '%s'\n", argv[2]);
            return VSL_EXIT_FAIL;
        }
        vsl_usage(NULL, stdout);
        return VSL_EXIT_OK;
    }
    for (size_t i = 0; i < NCOMMANDS; i++) {
        if (!strcmp(commands[i].name, cmd)) {
            for (int a = 2; a < argc; a++) {
                if (!strcmp(argv[a], "-h") || !strcmp(argv[a], "--help")) {
                    help(&commands[i], stdout);
                    return VSL_EXIT_OK;
                }
            }
            return commands[i].run(argc - 1, argv + 1);
        }
    }
    fprintf(stderr, "vslint: unknown command '%s' (try 'vslint --help')\n", cmd);
    return VSL_EXIT_FAIL;
}

int vsl_cli_load_config(const char *path, struct vsl_config **cfg, int print_warnings)
{
    struct vsl_buf errors;
    int r;

    *cfg = NULL;
    if (!path) {
        fprintf(stderr, "vslint: error: no configuration given: use -c FILE (see 'vslint --help')\n");
        return -VSL_ECONFIG;
    }
    vsl_buf_init(&errors, 1 << 20);
    r = vsl_config_load(path, cfg, &errors);
    if (r < 0)
        fprintf(stderr, "%s", errors.data ? errors.data : "vslint: cannot read configuration\n");
    else if (print_warnings && (*cfg)->warnings)
        fprintf(stderr, "%s", (*cfg)->warnings);
    vsl_buf_free(&errors);
    return r;
}
