/* Subcommand dispatch and help. Each subcommand's help says what it does, what it reads, what it
 * prints and what its exit status means, so `vslint help collect` answers an admin's questions. */
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "daemon/cli.h"
#include "daemon/config.h"
#include "daemon/poll.h"
#include "daemon/serve.h"
#include "db/db.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/log.h"

/* Every option a subcommand may take, in one table; each command's row in commands[] names the
 * ones it takes by their ARG_ bits. The value lands in struct vsl_args at .field (a flag: 1). */
enum {
    ARG_CONFIG = 1 << 0,
    ARG_FORMAT = 1 << 1,
    ARG_FAIL_ON = 1 << 2,
    ARG_OFFLINE = 1 << 3,
    ARG_VCENTER = 1 << 4,
    ARG_OUTPUT = 1 << 5,
    ARG_LOG = 1 << 6,
    ARG_VERBOSE = 1 << 7,
    ARG_DRY_RUN = 1 << 8,
    ARG_GATE = 1 << 9, /* vslint gate's proposal and --server options, all of them */
    ARG_CHECK = 1 << 10,
    ARG_LOCATION = 1 << 11, /* --sarif-location (vslint check's CI formats) */
    ARG_CONNECT = 1 << 12,  /* config-check's --connect and --hosts */
    ARG_ANONYMIZE = 1 << 13, /* --anonymize (vslint record) */
};

static const char *const fail_on_values[] = {"info", "warning", "critical", "never", NULL};
static const char *const log_values[] = {"stderr", "syslog", "journal", NULL};
static const char *const disk_formats[] = {"thin", "lazy", "eager", NULL};
static const char *const location_values[] = {"object", "config", NULL};

#define AF(field) offsetof(struct vsl_args, field)

static const struct arg_def {
    unsigned bit;
    struct option opt;
    int has_short;             /* -c as well as --config */
    const char *const *values; /* the values it accepts, or NULL: any (--format: per command) */
    size_t field;              /* AF(...): where in struct vsl_args */
} args[] = {
    {ARG_CONFIG, {"config", required_argument, NULL, 'c'}, 1, NULL, AF(config)},
    {ARG_FORMAT, {"format", required_argument, NULL, 'f'}, 1, NULL, AF(format)},
    {ARG_FAIL_ON, {"fail-on", required_argument, NULL, 'F'}, 0, fail_on_values, AF(fail_on)},
    {ARG_OFFLINE, {"offline", no_argument, NULL, 'O'}, 0, NULL, AF(offline)},
    {ARG_VCENTER, {"vcenter", required_argument, NULL, 'V'}, 0, NULL, AF(vcenter)},
    {ARG_OUTPUT, {"output", required_argument, NULL, 'o'}, 1, NULL, AF(output)},
    {ARG_LOG, {"log", required_argument, NULL, 'l'}, 0, log_values, AF(log)},
    {ARG_VERBOSE, {"verbose", no_argument, NULL, 'v'}, 1, NULL, AF(verbose)},
    {ARG_DRY_RUN, {"dry-run", no_argument, NULL, 'n'}, 0, NULL, AF(dry_run)},
    {ARG_GATE, {"datastore", required_argument, NULL, 'D'}, 0, NULL, AF(datastore)},
    {ARG_GATE, {"datastore-cluster", required_argument, NULL, 'P'}, 0, NULL,
     AF(datastore_cluster)},
    {ARG_GATE, {"vms", required_argument, NULL, 'N'}, 0, NULL, AF(vms)},
    {ARG_GATE, {"disk-gb", required_argument, NULL, 'G'}, 0, NULL, AF(disk_gb)},
    {ARG_GATE, {"disk-format", required_argument, NULL, 'K'}, 0, disk_formats, AF(disk_format)},
    {ARG_GATE, {"ft", no_argument, NULL, 'T'}, 0, NULL, AF(ft)},
    {ARG_GATE, {"shared-bus", no_argument, NULL, 'S'}, 0, NULL, AF(shared_bus)},
    {ARG_GATE, {"allow-stale", no_argument, NULL, 'A'}, 0, NULL, AF(allow_stale)},
    {ARG_GATE, {"max-age", required_argument, NULL, 'M'}, 0, NULL, AF(max_age)},
    {ARG_GATE, {"server", required_argument, NULL, 'U'}, 0, NULL, AF(server)},
    {ARG_GATE, {"token-file", required_argument, NULL, 'k'}, 0, NULL, AF(token_file)},
    {ARG_CHECK, {"check", required_argument, NULL, 'Q'}, 0, NULL, AF(check)},
    {ARG_CONNECT, {"connect", no_argument, NULL, 'X'}, 0, NULL, AF(connect)},
    {ARG_CONNECT, {"hosts", required_argument, NULL, 'H'}, 0, NULL, AF(hosts)},
    {ARG_LOCATION, {"sarif-location", required_argument, NULL, 'L'}, 0, location_values,
     AF(sarif_location)},
    {ARG_ANONYMIZE, {"anonymize", no_argument, NULL, 'Z'}, 0, NULL, AF(anonymize)},
};

#define NARGS (sizeof(args) / sizeof(args[0]))

static const char *const text_json[] = {"text", "json", NULL};
static const char *const report_formats[] = {"text",   "json",   "junit", "sarif",
                                             "gitlab", "github", NULL};
static const char *const plan_formats[] = {"esxcli", "powercli", NULL};
static const char *const query_formats[] = {"table", "csv", "json", "jsonl", NULL};
static const char *const export_formats[] = {"csv", NULL};

struct command {
    const char *name;
    int (*run)(const struct vsl_args *a);
    unsigned takes;             /* the ARG_ bit of each option it takes */
    const char *const *formats; /* what --format accepts, the first the default */
    const char *const *keys;    /* the configuration sections whose keys the help lists, or NULL */
    const char *summary;
    const char *help;
};

static const char *const check_keys[] = {"check ID", "waiver", NULL};
static const char *const serve_keys[] = {"server", "digest", NULL};
static const char *const digest_keys[] = {"digest", NULL};

static const struct command commands[] = {
    {"collect", cmd_collect, ARG_CONFIG | ARG_VCENTER | ARG_VERBOSE, NULL, NULL,
     "poll every configured vCenter and array once into the database",
     "Usage: vslint collect -c FILE [--vcenter NAME] [-v]\n"
     "\n"
     "Connects to each [vcenter NAME] of the configuration, logs in, reads the inventory the\n"
     "checks need (datastores, datastore clusters, distributed switches, hosts with their\n"
     "vmknics, iSCSI adapters and LUNs, VMs with their disks and controllers) and stores it in\n"
     "the SQLite database as one snapshot per vCenter. Prints, per vCenter, what it stored and\n"
     "how long it took. A vCenter that fails keeps its previous snapshot. Each [array NAME]\n"
     "(a Dell EMC Unity) is read the same way: its pools and LUNs, one snapshot per array.\n"
     "\n"
     "  -c, --config FILE   configuration file (required)\n"
     "      --vcenter NAME  poll only this vCenter (or array)\n"
     "  -v, --verbose       log each request's progress to stderr\n"
     "\n"
     "Exit status: 0 every vCenter was polled, 2 a configuration error or any vCenter failed.\n"},
    {"record", cmd_record, ARG_CONFIG | ARG_VCENTER | ARG_OUTPUT | ARG_ANONYMIZE | ARG_VERBOSE,
     NULL, NULL, "record one read of a vCenter into an archive to send back (a capture)",
     "Usage: vslint record -c FILE --vcenter NAME --output FILE.tar.gz [--anonymize] [-v]\n"
     "\n"
     "Reads the vCenter [vcenter NAME] once, as `vslint collect` does, and every configured\n"
     "[array NAME], storing nothing in the database, and writes every request vslint sent and\n"
     "every answer it got, in order, into a tar.gz archive (mode 0600) with a README.md that\n"
     "says what is in it and what was removed. Removed: the Login password and user name, the\n"
     "session key, and wherever they appear the password, the session cookies' values and\n"
     "the arrays' CSRF tokens; no HTTP header is recorded. With --anonymize, the names the\n"
     "estate owns (hosts, VMs, datastores, clusters, port groups, VMFS labels, iSCSI aliases,\n"
     "NFS servers and paths, snapshots, array objects, ...), host names and DNS domains, URL\n"
     "hosts, e-mail addresses, IQNs, WWNs, MAC, IPv4 and IPv6 addresses and the vCenter's name\n"
     "are replaced, the same original (whatever its case) by the same token everywhere, in\n"
     "text only; morefs, sizes, versions and the API's words are kept (the README lists it).\n"
     "Look inside before sending: tar tzf FILE.tar.gz; tar xzf it and grep. The test harness\n"
     "replays a capture as a vCenter (docs/captures.md).\n"
     "\n"
     "  -c, --config FILE      configuration file (required)\n"
     "      --vcenter NAME     the vCenter to read (required)\n"
     "  -o, --output FILE      the archive to write (required; written beside, then renamed)\n"
     "      --anonymize        replace names, domains, IQNs, WWNs, MACs and addresses\n"
     "  -v, --verbose          log progress to stderr\n"
     "\n"
     "A read of the vCenter or of an array that fails partway still writes the archive, up\n"
     "to and with the failed exchange (its README says where it failed): it is the capture\n"
     "that reproduces the failure. Interrupted (SIGINT, SIGTERM, SIGHUP), it leaves nothing\n"
     "behind: the rows are held in memory only, and a half-written archive is removed.\n"
     "\n"
     "Exit status: 0 written; 2 error (configuration, a read that failed, the archive could\n"
     "not be written; nothing is written when nothing answered at all). Interrupted, it ends\n"
     "by the signal.\n"},
    {"inventory", cmd_inventory, ARG_CONFIG | ARG_FORMAT | ARG_VCENTER, text_json, NULL,
     "print the stored inventory",
     "Usage: vslint inventory -c FILE [--format text|json] [--vcenter NAME]\n"
     "\n"
     "Prints what the last successful poll of each vCenter stored, without contacting vCenter:\n"
     "datastores (capacity, free, type, VM count), hosts (vmknics and MTU, iSCSI adapters with\n"
     "DelayedAck per adapter and target, LUNs with multipath policy, IOPS limit and paths) and\n"
     "VMs (disks with format and size, controllers).\n"
     "\n"
     "  -c, --config FILE     configuration file (for the database path)\n"
     "  -f, --format FORMAT   text (default) or json (its shape:\n"
     "                        /usr/share/doc/vslint/docs/inventory.md)\n"
     "      --vcenter NAME    only this vCenter\n"
     "\n"
     "Exit status: 0 printed, 2 error.\n"},
    {"query", cmd_query, ARG_CONFIG | ARG_FORMAT | ARG_VCENTER, query_formats, NULL,
     "run a read-only SQL query over the public views of the inventory",
     "Usage: vslint query -c FILE [--format table|csv|json|jsonl] [--vcenter NAME] SQL\n"
     "\n"
     "Runs one SELECT (a WITH is fine) over the public views of the stored inventory and\n"
     "findings: vsl_vms, vsl_vm_disks, vsl_datastores, vsl_hosts, vsl_luns, vsl_lun_paths,\n"
     "vsl_iscsi_adapters, vsl_iscsi_targets, vsl_vmknics, vsl_pools, vsl_findings,\n"
     "vsl_capacity_history, vsl_polls and vsl_schema_info (columns in docs/schema.md). The\n"
     "query runs on a read-only connection that may read only those views: a second statement,\n"
     "PRAGMA, ATTACH, a write or a read of the stored tables is refused, with the reason.\n"
     "\n"
     "  -c, --config FILE     configuration file (for the database path)\n"
     "  -f, --format FORMAT   table (default: aligned for a terminal), csv (RFC 4180, header\n"
     "                        row), json (an array of objects) or jsonl (one object a line)\n"
     "      --vcenter NAME    every view shows only this vCenter's rows (vsl_pools: all)\n"
     "\n"
     "Example: vslint query -c /etc/vslint/vslint.conf --format csv \\\n"
     "           'SELECT name, capacity_bytes, free_bytes FROM vsl_datastores ORDER BY name'\n"
     "\n"
     "Exit status: 0 printed, 2 error (the query refused or failed: said on stderr).\n"},
    {"export", cmd_export, ARG_CONFIG | ARG_FORMAT | ARG_OUTPUT | ARG_VCENTER, export_formats,
     NULL, "write every public view to DIR/VIEW.csv",
     "Usage: vslint export -c FILE --output DIR [--format csv] [--vcenter NAME]\n"
     "\n"
     "Writes each public view (docs/schema.md) to DIR/VIEW.csv (RFC 4180, a header row):\n"
     "the inventory, findings and capacity history as a spreadsheet reads them. DIR is\n"
     "created if missing; each file is written beside and renamed into place, so a failed\n"
     "export leaves the previous file whole. Prints each file and its row count.\n"
     "\n"
     "  -c, --config FILE     configuration file (for the database path)\n"
     "  -o, --output DIR      the directory (required)\n"
     "  -f, --format FORMAT   csv (the default and only one)\n"
     "      --vcenter NAME    only this vCenter's rows\n"
     "\n"
     "Exit status: 0 written, 2 error.\n"},
    {"rules", cmd_rules, ARG_CONFIG | ARG_VERBOSE, NULL, NULL,
     "test site rules against the stored inventory (vslint rules test)",
     "Usage: vslint rules test -c FILE [-v] [RULE.sql...]\n"
     "\n"
     "For rule authors and their CI: reads each site rule (the files named, or every *.sql\n"
     "file of [rules] dir), parses its header, prepares its SELECT against the public views\n"
     "and runs it against the current database with the configured limits ([rules] timeout,\n"
     "max_findings) and its [check ID] parameters. Prints the findings it would give, one a\n"
     "line (RULE  SEVERITY  OBJECT_TYPE NAME: MESSAGE), and on stderr how many per rule or,\n"
     "for a broken rule, FILE:LINE: the cause. docs/rules.md says how to write a rule.\n"
     "\n"
     "  -c, --config FILE   configuration file (the database, [rules] and [check ID])\n"
     "  -v, --verbose       log progress to stderr\n"
     "\n"
     "Exit status: 0 every rule ran and gave no finding, 1 findings, 2 a rule is broken (or\n"
     "another error).\n"},
    {"check", cmd_check,
     ARG_CONFIG | ARG_FORMAT | ARG_FAIL_ON | ARG_OFFLINE | ARG_VCENTER | ARG_OUTPUT | ARG_VERBOSE |
         ARG_LOCATION,
     report_formats, check_keys,
     "poll, run the checks and print findings (for people and CI)",
     "Usage: vslint check -c FILE [--format text|json|junit|sarif|gitlab|github]\n"
     "                    [--fail-on LEVEL] [--offline] [--vcenter NAME] [-o FILE]\n"
     "                    [--sarif-location object|config]\n"
     "\n"
     "Polls each configured array and vCenter (as `vslint collect` does), runs every enabled\n"
     "check over each vCenter's stored snapshot (with the pools of the arrays behind its\n"
     "datastores), records the findings' history in the database (first seen, last seen,\n"
     "resolved) and prints the open findings. Waived findings are printed as waived.\n"
     "\n"
     "  -c, --config FILE     configuration file (required)\n"
     "  -f, --format FORMAT   text (default), json, junit (JUnit XML), sarif (SARIF 2.1.0 as\n"
     "                        GitHub code scanning takes it), gitlab (GitLab Code Quality\n"
     "                        report) or github (GitHub Actions annotations): docs/ci.md\n"
     "      --fail-on LEVEL   info, warning (default), critical or never: the lowest severity\n"
     "                        that makes the exit status 1\n"
     "      --offline         do not poll: check the last stored snapshot\n"
     "      --vcenter NAME    only this vCenter\n"
     "  -o, --output FILE     write the report to FILE instead of standard output\n"
     "      --sarif-location WHERE\n"
     "                        where sarif, gitlab and github put a finding: object (default)\n"
     "                        a stable path made from it, vsphere/VCENTER/TYPE/NAME; config\n"
     "                        the configuration file (-c, relative to the current directory,\n"
     "                        the repository's top) at its [vcenter NAME] line\n"
     "  -v, --verbose         log progress to stderr\n"
     "\n"
     "Checks are configured in [check ID] sections (the keys below, and each check's\n"
     "thresholds: see `vslint checks`) and silenced per object by [waiver] sections:\n"
     "  [waiver]\n"
     "  check = datastore-size\n"
     "  object = ds-archive-*        ; fnmatch pattern on the object name\n"
     "  reason = archive tier, sized by the backup vendor\n"
     "  expires = 2027-06-30         ; after this day the finding counts again\n"
     "\n"
     "Exit status: 0 no unwaived finding at or above --fail-on, 1 there is one, 2 the run\n"
     "itself failed (bad configuration, a vCenter could not be polled or checked).\n"},
    {"plan", cmd_plan,
     ARG_CONFIG | ARG_FORMAT | ARG_CHECK | ARG_OFFLINE | ARG_VCENTER | ARG_OUTPUT | ARG_VERBOSE,
     plan_formats, NULL,
     "print a reviewed script that fixes the findings a host setting fixes",
     "Usage: vslint plan -c FILE [--format esxcli|powercli] [--check ID] [--vcenter NAME]\n"
     "                   [--offline] [-o FILE]\n"
     "\n"
     "Polls and checks each configured vCenter (as `vslint check` does; --offline reads the\n"
     "stored findings instead) and prints a remediation plan for the open findings: the ones\n"
     "whose fix is a host setting become script steps, grouped by host, each commented with\n"
     "the finding it fixes (check, object, fingerprint) and the source of the practice, and\n"
     "each reading the current value first and changing only what is not yet right, so the\n"
     "plan is safe to run twice:\n"
     "  multipath-policy    esxcli storage nmp device set / psp roundrobin deviceconfig set\n"
     "  satp-claim-rule     esxcli storage nmp satp rule add\n"
     "  iscsi-delayed-ack   esxcli iscsi adapter [discovery sendtarget|target portal] param set\n"
     "  iscsi-jumbo-frames  esxcli network vswitch standard set, network ip interface set\n"
     "  space-reclaim       esxcli system settings advanced set (EnableBlockDelete),\n"
     "                      storage vmfs reclaim config set (VMFS6 UNMAP)\n"
     "Every other finding (free space, datastore size, snapshots, disk formats, a distributed\n"
     "switch's MTU, ...) is listed at the end as a task for a person. Waived findings and\n"
     "findings the last poll could not verify are not planned. vslint applies nothing itself.\n"
     "\n"
     "  -c, --config FILE     configuration file (required)\n"
     "  -f, --format FORMAT   esxcli (default): a sh script run in each host's ESXi shell,\n"
     "                        `ssh root@HOST sh -s -- HOST < plan.sh`; powercli: a PowerShell\n"
     "                        script using Get-EsxCli -V2 per host, after Connect-VIServer\n"
     "      --check ID        only this check's findings\n"
     "      --vcenter NAME    only this vCenter\n"
     "      --offline         do not poll: plan from the findings stored by the last run\n"
     "  -o, --output FILE     write the plan to FILE instead of standard output\n"
     "  -v, --verbose         log progress to stderr\n"
     "\n"
     "Exit status: 0 the plan was written (it may have no steps), 2 an error (configuration,\n"
     "an unknown check or vCenter, a vCenter that could not be polled).\n"},
    {"serve", cmd_serve, ARG_CONFIG | ARG_LOG | ARG_VERBOSE, NULL, serve_keys,
     "run the daemon: poll on schedule, run the checks, serve the HTTP API",
     "Usage: vslint serve -c FILE [--log stderr|syslog|journal] [-v]\n"
     "\n"
     "Runs in the foreground until SIGTERM. Reads each [vcenter NAME] in full (one thread\n"
     "each), then follows its changes and reads again only what changed (incremental = true,\n"
     "the default; a full read every full_every= seconds, per-host reads every\n"
     "host_reads_every=); with incremental = false, and for each [array NAME], a full poll\n"
     "every interval= seconds. It runs the checks after each poll or change, records the\n"
     "findings' history, and serves them over HTTP on the [server] listen= address (the\n"
     "routes below, and the dashboard at /). The API is described in\n"
     "/usr/share/doc/vslint/docs/openapi.yaml (docs/openapi.yaml in the source).\n"
     "\n"
     "It logs one line per full read (seconds, objects, bytes) and, once an hour, one\n"
     "line summing the incremental rounds (rounds, changes, bytes); rounds log nothing\n"
     "else (-v: a line for each round with changes).\n"
     "\n"
     "A vCenter whose poll fails is retried after its interval, then twice that, and so on up\n"
     "to 8 x interval or one hour; its last good snapshot keeps being served, marked stale\n"
     "with the error, until a poll succeeds again.\n"
     "\n"
     "With a [digest] section it also e-mails the digest (see vslint help digest) every day\n"
     "at at= in timezone=; a digest due while it was down is sent once when it starts, and a\n"
     "restart never sends one twice.\n"
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
     "kept); the new one takes effect once the polls in flight end (an incremental round\n"
     "waits up to 5 s for changes, a full read is finished first). SIGTERM or SIGINT\n"
     "finishes the polls in flight (at most 30 s) and exits 0.\n"
     "\n"
     "Exit status: 0 stopped by a signal, 2 could not start (configuration, port, database).\n"},
    {"digest", cmd_digest, ARG_CONFIG | ARG_DRY_RUN | ARG_VERBOSE, NULL, digest_keys,
     "send the e-mail digest now (or print it with --dry-run)",
     "Usage: vslint digest -c FILE [--dry-run] [-v]\n"
     "\n"
     "Builds the digest of what changed in the findings history since the previous digest\n"
     "(the first one: everything so far) and sends it to the [digest] to= addresses through\n"
     "smtp_url=, as vslint serve does every day at at=. It reads the database only: run it\n"
     "after vslint check or next to vslint serve. In order: vCenters that failed to poll or\n"
     "are stale; findings new since the previous digest; findings resolved since then (only\n"
     "those seen fixed, not those of a disabled check or a host that could not be read); all\n"
     "open findings by severity and check, grouped by object; waivers expiring in the next 14\n"
     "days; the datastores with the shortest runway; the score and its change. The subject\n"
     "says \"PREFIX: N new, N resolved, N open (N critical)\". The message has a plain text\n"
     "and an HTML part, with links to the dashboard when public_url= is set.\n"
     "\n"
     "A refused or dropped delivery is retried after retry_min= seconds, then twice that up\n"
     "to retry_max=, attempts= times in all. The window the digest covers is recorded in the\n"
     "database only once the server accepted it, so the next digest starts where this one\n"
     "ended and a failed one loses nothing.\n"
     "\n"
     "  -c, --config FILE   configuration file (required), with a [digest] section\n"
     "      --dry-run       print the whole MIME message to standard output instead: nothing\n"
     "                      is sent and nothing recorded (no password is read)\n"
     "  -v, --verbose       log debug lines too\n"
     "\n"
     "Exit status: 0 sent (or printed, or nothing to send with send_when_empty = false),\n"
     "2 not sent (configuration, database, or every delivery attempt failed).\n"},
    {"db", cmd_db, ARG_CONFIG | ARG_VERBOSE, NULL, NULL,
     "back the database up while vslint serve runs, or check it",
     "Usage: vslint db backup -c FILE OUT\n"
     "       vslint db check -c FILE\n"
     "\n"
     "backup copies the database of the configuration ([database] path) to OUT while vslint\n"
     "serve may be writing it: the last committed state (never half a poll), compacted, one\n"
     "self-contained file of mode 0600, checked with SQLite's integrity_check before it\n"
     "replaces OUT (a failed backup leaves OUT as it was). Run it as the service's user\n"
     "(runuser -u vslint -- vslint db backup ...). To restore: stop vslint, copy the backup\n"
     "over the database (and remove its -wal and -shm files), start vslint\n"
     "(docs/operations.md, installed as /usr/share/doc/vslint/docs/operations.md).\n"
     "\n"
     "check reads the database without changing it: integrity_check, the schema version\n"
     "against this vslint's, and whether it is a vslint database at all.\n"
     "\n"
     "  -c, --config FILE   configuration file (for the database path)\n"
     "  -v, --verbose       log debug lines too\n"
     "\n"
     "Exit status: 0 backed up / the database is sound, 1 (check) integrity_check found a\n"
     "problem, 2 the backup failed, or the file cannot be read, is another program's, or was\n"
     "written by a newer vslint.\n"},
    {"checks", cmd_checks, ARG_CONFIG | ARG_FORMAT, text_json, NULL,
     "list the catalogue of checks",
     "Usage: vslint checks [-c FILE] [--format text|json] [ID...]\n"
     "\n"
     "Lists every check (or only the checks named): id, default severity, why it matters, the\n"
     "source document and section it comes from, the fix, and its parameters with defaults and\n"
     "allowed ranges. With -c, the site rules of its [rules] dir follow the catalogue (in JSON\n"
     "marked \"source\": \"site\" with their \"file\").\n"
     "\n"
     "  -c, --config FILE     configuration file (for the site rules)\n"
     "  -f, --format FORMAT   text (default) or json\n"
     "\n"
     "Exit status: 0 listed, 2 an unknown check id or format.\n"},
    {"gate", cmd_gate, ARG_CONFIG | ARG_FORMAT | ARG_FAIL_ON | ARG_OFFLINE | ARG_VCENTER |
                           ARG_VERBOSE | ARG_GATE,
     text_json, check_keys,
     "ask before provisioning: would these VMs keep the estate within best practice?",
     "Usage: vslint gate -c FILE (--datastore NAME | --datastore-cluster NAME) [--vcenter NAME]\n"
     "                   [--vms N] --disk-gb G[,G...] [--disk-format thin|lazy|eager]\n"
     "                   [--ft | --shared-bus] [--fail-on info|warning|critical]\n"
     "                   [--allow-stale] [--max-age SECONDS] [--offline]\n"
     "                   [--server URL [--token-file FILE]] [--format text|json]\n"
     "\n"
     "Answers what a pipeline asks before it creates VMs: if N VMs with these disks went to\n"
     "this datastore (or, for a datastore cluster, to its member with the most free space,\n"
     "where Storage DRS would put them), would the estate still be within best practice?\n"
     "The proposal is applied to a copy of the vCenter's latest snapshot: thick disks (lazy,\n"
     "eager) take their full size from free space now, thin disks take nothing now and add\n"
     "their size to the uncommitted total. Then datastore-free-space (the datastore and its\n"
     "datastore cluster), vms-per-datastore, thin-overcommit, vdisk-format (--shared-bus\n"
     "needs eager disks; --ft on other disks is info, since FT on ESXi 6.5+ supports them)\n"
     "and datastore-runway, where it exists, run with the\n"
     "configured thresholds and waivers. The proposal is denied when, after it, the target\n"
     "has an unwaived finding at or above --fail-on from those checks, or from any check on\n"
     "the LUNs behind it (a dead path, a single path), or when the snapshot is older than\n"
     "--max-age (default 2 x the vCenter's interval) and --allow-stale was not given.\n"
     "Each reason, the figures before and after, the headroom left and the snapshot's age\n"
     "are printed.\n"
     "\n"
     "Without --server it polls the configured vCenters first, as `vslint check` does (a\n"
     "vCenter that cannot be polled is judged on its last snapshot, and the age rule applies);\n"
     "with --offline it reads the database only; with --server it asks a running `vslint\n"
     "serve` (POST /api/v1/gate) and -c is not read.\n"
     "\n"
     "  -c, --config FILE           configuration file (required unless --server)\n"
     "      --datastore NAME        the datastore the VMs would go to, or\n"
     "      --datastore-cluster NAME  the datastore cluster\n"
     "      --vcenter NAME          the vCenter, when the name is on more than one\n"
     "      --vms N                 how many VMs (1-10000, default 1)\n"
     "      --disk-gb G[,G...]      each VM's disks in GiB (required), e.g. 100,20\n"
     "      --disk-format FORMAT    thin, lazy (default, as the vSphere Client) or eager\n"
     "      --ft                    the VMs are protected by Fault Tolerance\n"
     "      --shared-bus            the VMs share a SCSI bus (MSCS / WSFC)\n"
     "      --fail-on LEVEL         info, warning (default) or critical\n"
     "      --allow-stale           judge a snapshot older than --max-age anyway\n"
     "      --max-age SECONDS       how old a snapshot may be (default 2 x interval)\n"
     "      --offline               do not poll: judge the last stored snapshots\n"
     "      --server URL            ask the daemon at URL (http://127.0.0.1:8080); a 503 busy\n"
     "                              is asked again after Retry-After, up to 5 times\n"
     "      --token-file FILE       the bearer token for --server (never on the command line)\n"
     "  -f, --format FORMAT         text (default) or json (the API's answer)\n"
     "  -v, --verbose               log progress to stderr\n"
     "\n"
     "Exit status: 0 allowed, 1 denied, 2 error (a bad option, an unknown name, no snapshot,\n"
     "an unreachable server), said in one line on stderr.\n"},
    {"config-check", cmd_config_check, ARG_CONFIG | ARG_FORMAT | ARG_VCENTER | ARG_CONNECT,
     text_json, NULL, "validate a configuration file; with --connect, try each source's reads",
     "Usage: vslint config-check -c FILE [--connect [--format text|json] [--vcenter NAME]\n"
     "                                    [--hosts N]]\n"
     "\n"
     "Reads the configuration and prints \"configuration OK\", or one line per problem in the\n"
     "form FILE:LINE: [section] key: problem (the first 20, then how many more). Checks that\n"
     "password files, ca_file, tls_cert, tls_key and token_file are readable and that listen=\n"
     "is a numeric address, but never prints a password. Warnings (insecure = true; a token,\n"
     "password or key file others can read) go to stderr as FILE:LINE: [section] key: warning:\n"
     "...; with [server] strict_permissions = true such files are problems. Secret files are\n"
     "judged for the account vslint serve runs as ([server] service_user, vslint), whoever\n"
     "runs config-check: root:vslint 0640 is right, and one that account cannot read is a\n"
     "problem.\n"
     "\n"
     "With --connect, a valid configuration is then tried against each vCenter and array (or\n"
     "the one --vcenter names), storing nothing and opening no database: the TLS certificate\n"
     "presented (subject, issuer, validity, and its SHA-256 fingerprint as a thumbprint = line)\n"
     "and whether the configured trust accepts it; the login; the product, version, build and\n"
     "API version; how many datacenters, clusters, hosts, datastores and VMs the account sees;\n"
     "on each host, or on N spread over the list when there are more (--hosts, default 10, 0\n"
     "for none), the advanced options, the iSCSI port bindings and esxcli; the alarms and the\n"
     "performance counters; an array's pools, LUNs and ports. Each read that fails is one line\n"
     "problem: KIND NAME: [host H: ]WHAT: CAUSE; fix: FIX, naming the privilege the account\n"
     "lacks when vCenter refused it (docs/vcenter-role.md). timeout = applies to each request.\n"
     "\n"
     "  -c, --config FILE           configuration file (required)\n"
     "      --connect               connect to each vCenter and array and try its reads\n"
     "      --vcenter NAME          only the [vcenter NAME] or [array NAME] section\n"
     "      --hosts N               per-host reads on at most N hosts per vCenter (0-100000)\n"
     "  -f, --format FORMAT         text (default) or json (one document: sources, problems,\n"
     "                              status)\n"
     "\n"
     "Exit status: 0 valid (with --connect: and everything read), 1 with --connect: something\n"
     "could not be read, 2 invalid, or with --connect: a vCenter or array could not be\n"
     "connected to or logged in to (an unreachable array too).\n"},
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static const char help_help[] =
    "Usage: vslint help [COMMAND]\n"
    "\n"
    "Prints the help of COMMAND (as vslint COMMAND --help does), or without one the list of\n"
    "commands. vslint(1) and vslint.conf(5) say the same at more length.\n"
    "\n"
    "Exit status: 0 printed, 2 no such command.\n";

static const char overview[] =
    "vslint: lint VMware vSphere storage against vendor best practices.\n"
    "\n"
    "Usage: vslint COMMAND [OPTIONS]\n"
    "       vslint help COMMAND\n"
    "\n"
    "Commands:\n";

/* The configuration's keys that have a default show it, from the option table. */
static const char config_help[] =
    "\n"
    "Configuration (INI), e.g. /etc/vslint/vslint.conf:\n"
    "  [database]\n"
    "  path = %s\n"
    "\n"
    "  [vcenter prod]\n"
    "  url = https://vcenter.example.com/sdk\n"
    "  user = svc-vslint@vsphere.local\n"
    "  password_file = /etc/vslint/prod.password   ; or password_env = VSLINT_PROD_PASSWORD\n"
    "  ca_file = /etc/vslint/vcenter-ca.pem         ; default: the system trust store\n"
    "  ; thumbprint = SHA256:AA:BB:...              ; or pin a self-signed certificate\n"
    "  ; insecure = true                            ; skip TLS verification (not recommended)\n"
    "\n"
    "  [array unity1]                               ; optional: the pools behind datastores\n"
    "  type = unity\n"
    "  url = https://unity1.example.com\n"
    "  user = vslint                                ; a Unisphere Operator (read-only)\n"
    "  password_file = /etc/vslint/unity1.password\n"
    "  thumbprint = SHA256:AA:BB:...\n"
    "\n"
    "  [server]                                     ; for vslint serve\n"
    "  listen = %s\n"
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

/* The default of a key, from the option table (daemon/config.c). */
static const char *key_default(const char *section, const char *key)
{
    struct vsl_config_doc d;

    for (size_t i = 0; vsl_config_doc(i, &d) == 0; i++)
        if (!strcmp(d.section, section) && !strcmp(d.key, key))
            return d.dflt;
    return NULL;
}

/* The HTTP routes, from the router's own table (api/http.c), so the list cannot leave one out. */
static void print_routes(FILE *f)
{
    char path[256];
    const char *method, *what;

    fputs("\nHTTP routes (GET answers HEAD too):\n", f);
    for (size_t i = 0; api_route_doc(i, path, sizeof(path), &method, &what) == 0; i++) {
        if (strlen(path) <= 37 && 2 + 5 + 37 + 1 + strlen(what) <= 80)
            fprintf(f, "  %-4s %-37s %s\n", method, path, what);
        else
            fprintf(f, "  %-4s %s\n         %s\n", method, path, what);
    }
    fprintf(f, "  %-4s %-37s %s\n", "GET", "/", "the dashboard");
}

/* A command's help, and the keys of its configuration sections with their defaults from the
 * option table (daemon/config.c), so the numbers are written in one place. */
static void help(const struct command *c, FILE *f)
{
    struct vsl_config_doc d;

    fputs(c->help, f);
    if (!strcmp(c->name, "serve"))
        print_routes(f);
    for (size_t k = 0; c->keys && c->keys[k]; k++) {
        fprintf(f, "\n[%s] keys (vslint.conf(5) says more):\n", c->keys[k]);
        for (size_t i = 0; vsl_config_doc(i, &d) == 0; i++) {
            if (strcmp(d.section, c->keys[k]))
                continue;
            if (d.dflt)
                fprintf(f, "  %-28s %-16s %s\n", d.key, d.syntax, d.dflt);
            else
                fprintf(f, "  %-28s %s\n", d.key, d.syntax);
        }
    }
}

/* The help of command c, or with NULL the overview of every command. */
static void usage(const struct command *c, FILE *f)
{
    if (c) {
        help(c, f);
        return;
    }
    fputs(overview, f);
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-14s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "  %-14s %s\n", "help", "show the help of a command");
    fprintf(f, config_help, key_default("database", "path"), key_default("server", "listen"));
}

static const struct command *find_command(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (!strcmp(commands[i].name, name))
            return &commands[i];
    return NULL;
}

/* Whether v is among values; if not, says which ones opt takes. */
static int value_ok(const char *opt, const char *v, const char *const *values)
{
    size_t n = 0;

    for (; values[n]; n++)
        if (!strcmp(v, values[n]))
            return 1;
    fprintf(stderr, "vslint: error: --%s must be ", opt);
    for (size_t i = 0; i < n; i++)
        fprintf(stderr, "%s%s", i == 0 ? "" : i + 1 < n ? ", " : " or ", values[i]);
    fprintf(stderr, ", not '%s'\n", v);
    return 0;
}

/* The options of command c from argv (argv[0] is the command's name) into *a, with getopt_long
 * over the rows of args[] that c takes. 0, or -1 once a wrong option or value is said. */
static int parse_args(const struct command *c, int argc, char **argv, struct vsl_args *a)
{
    struct option longopts[NARGS + 1];
    char shortopts[2 * NARGS + 1];
    size_t nl = 0, ns = 0;
    int ch;

    memset(a, 0, sizeof(*a));
    a->format = c->formats ? c->formats[0] : NULL;
    for (size_t i = 0; i < NARGS; i++) {
        if (!(c->takes & args[i].bit))
            continue;
        longopts[nl++] = args[i].opt;
        if (args[i].has_short) {
            shortopts[ns++] = (char)args[i].opt.val;
            if (args[i].opt.has_arg == required_argument)
                shortopts[ns++] = ':';
        }
    }
    memset(&longopts[nl], 0, sizeof(longopts[nl]));
    shortopts[ns] = '\0';
    optind = 1;
    while ((ch = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
        const struct arg_def *def = NULL;
        for (size_t i = 0; i < NARGS && !def; i++)
            if (args[i].opt.val == ch && (c->takes & args[i].bit))
                def = &args[i];
        if (!def) {
            usage(c, stderr);
            return -1;
        }
        const char *const *values = def->bit == ARG_FORMAT ? c->formats : def->values;
        if (values && !value_ok(def->opt.name, optarg, values))
            return -1;
        if (def->opt.has_arg == no_argument)
            *(int *)((char *)a + def->field) = 1;
        else
            *(const char **)((char *)a + def->field) = optarg;
    }
    a->operands = argv + optind;
    a->n_operands = argc - optind;
    return 0;
}

int vsl_main(int argc, char **argv)
{
    const struct command *c;
    struct vsl_args a;

    if (argc < 2) {
        usage(NULL, stderr);
        return VSL_EXIT_FAIL;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
        usage(NULL, stdout);
        return VSL_EXIT_OK;
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
        printf("vslint %s\n", VSL_VERSION); /* meson.build's project version */
        return VSL_EXIT_OK;
    }
    if (!strcmp(cmd, "help")) {
        if (argc > 2 && !strcmp(argv[2], "help")) {
            fputs(help_help, stdout);
            return VSL_EXIT_OK;
        }
        if (argc > 2 && !(c = find_command(argv[2]))) {
            fprintf(stderr, "vslint: no command '%s'\n", argv[2]);
            return VSL_EXIT_FAIL;
        }
        usage(argc > 2 ? c : NULL, stdout);
        return VSL_EXIT_OK;
    }
    if (!(c = find_command(cmd))) {
        fprintf(stderr, "vslint: unknown command '%s' (try 'vslint --help')\n", cmd);
        return VSL_EXIT_FAIL;
    }
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            help(c, stdout);
            return VSL_EXIT_OK;
        }
    }
    if (parse_args(c, argc - 1, argv + 1, &a) < 0)
        return VSL_EXIT_FAIL;
    return c->run(&a);
}

int vsl_cli_load_config(const char *path, struct vsl_config **cfg, enum vsl_config_use use)
{
    struct vsl_buf errors;
    int r;

    *cfg = NULL;
    if (!path) {
        fprintf(stderr, "vslint: error: no configuration given: use -c FILE (see 'vslint --help')\n");
        return -VSL_ECONFIG;
    }
    vsl_buf_init(&errors, 1 << 20);
    r = vsl_config_load_for(path, use, cfg, &errors);
    if (r < 0)
        fprintf(stderr, "%s", errors.data ? errors.data : "vslint: cannot read configuration\n");
    else if (use != VSL_CONFIG_SERVE && (*cfg)->warnings) /* the daemon logs them */
        fprintf(stderr, "%s", (*cfg)->warnings);
    vsl_buf_free(&errors);
    return r;
}

int vsl_cli_open(const struct vsl_args *a, int readonly, struct vsl_config **cfg,
                 struct db **db)
{
    char *dberr = NULL;

    *db = NULL;
    log_init(a->verbose, LOG_TO_STDERR);
    if (vsl_cli_load_config(a->config, cfg, VSL_CONFIG_COMMAND) < 0)
        return -1;
    if ((readonly ? db_open_reader : db_open)((*cfg)->db_path, db, &dberr) < 0) {
        log_warnx("cannot open database %s: %s", (*cfg)->db_path,
                  dberr ? dberr : "unknown error");
        free(dberr);
        vsl_config_free(*cfg);
        *cfg = NULL;
        return -1;
    }
    vsl_db_settings(*db, *cfg);
    return 0;
}

FILE *vsl_cli_output(const struct vsl_args *a)
{
    FILE *f = a->output ? fopen(a->output, "we") : stdout;

    if (!f)
        log_warn("cannot write %s", a->output);
    return f;
}

void vsl_cli_close_output(FILE *f)
{
    if (f && f != stdout)
        fclose(f);
}

void vsl_cli_warn_lines(const struct vsl_buf *errors)
{
    for (const char *line = errors->len ? errors->data : ""; *line;) {
        size_t n = strcspn(line, "\n");
        log_warnx("%.*s", (int)n, line);
        line += n + (line[n] == '\n');
    }
}
