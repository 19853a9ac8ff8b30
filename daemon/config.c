/* The configuration loader. Options are rows of a table (section kind, key, type, bounds);
 * the libinih handler looks each key up there, so unknown keys and bad values name their line. */
#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include <grp.h>
#include <pwd.h>
#include <stdbool.h>
#include <unistd.h>

#include <ini.h>

#include "daemon/config.h"
#include "util/err.h"

enum opt_type {
    OPT_STR, OPT_URL, OPT_BOOL, OPT_INT, OPT_ENVNAME, OPT_LISTEN, OPT_AUTH,
    OPT_FILE,       /* a path that must be readable now, not at the first poll */
    OPT_SECRET,     /* a path to a secret: warned about when others can read it */
    OPT_THUMBPRINT, /* SHA256:AA:BB:... of a certificate */
    OPT_ARRAYTYPE,  /* the kind of storage array: unity */
    OPT_SMTP_URL,   /* smtp:// or smtps:// */
    OPT_STARTTLS,   /* required|optional, stored as "optional" 0/1 */
    OPT_ADDRESS,    /* one e-mail address */
    OPT_ADDRESSES,  /* comma-separated e-mail addresses, at least one */
    OPT_TIME,       /* HH:MM */
    OPT_TIMEZONE,   /* a zone under /usr/share/zoneinfo */
    OPT_SEVERITY,   /* info|warning|critical */
};

#define ZONEINFO "/usr/share/zoneinfo"

/* A line may hold a long value (a path, a pinned thumbprint, a waiver's reason); beyond this it
 * is an error, so a stray binary file cannot make the loader allocate without bound. */
#define MAX_LINE 65536
/* Problems listed in full; past this one summary line says how many more there were. */
#define MAX_SHOWN 20
enum sect_kind {
    SECT_DATABASE, SECT_VCENTER, SECT_ARRAY, SECT_SERVER, SECT_DIGEST, SECT_CHECK, SECT_WAIVER,
    SECT_RULES
};

/* One row per key: how it is read, its default (applied by apply_defaults(), and shown by
 * `vslint help serve` and vslint.conf(5), which docs/man/conf-keys.c generates from this table)
 * and what it means. [check ID] and [waiver] keys are read by check_key() and waiver_key();
 * their rows here document them and name them in "unknown key" messages. */
struct opt {
    enum sect_kind sect;
    const char *key;
    enum opt_type type;
    size_t offset; /* into struct vsl_config or struct vsl_vcenter_conf */
    long min, max;
    const char *dflt; /* the value when the key is absent; NULL: none (see help) */
    const char *help;
};

#define VC(field) offsetof(struct vsl_vcenter_conf, field)
#define CF(field) offsetof(struct vsl_config, field)
#define SV(field) (offsetof(struct vsl_config, server) + offsetof(struct vsl_server_conf, field))
#define DG(field) (offsetof(struct vsl_config, digest) + offsetof(struct vsl_digest_conf, field))

static const struct opt options[] = {
    {SECT_DATABASE, "path", OPT_STR, CF(db_path), 0, 0, "/var/lib/vslint/vslint.db",
     "The SQLite file (WAL mode), created and migrated on first use with mode 0600 whatever the "
     "umask; its -wal and -shm files follow."},
    {SECT_DATABASE, "capacity_retention", OPT_INT, CF(capacity_retention_days), 31, 36500, "400",
     "Days of capacity history kept per datastore and datastore cluster (one point per poll, "
     "one per hour after a day, one per day after 30 days), what datastore-runway and the "
     "dashboard's capacity chart read."},
    {SECT_DATABASE, "round_window", OPT_INT, CF(round_window_s), 0, 86400, "300",
     "Seconds of incremental rounds summed into one row of the poll history per vCenter "
     "(rounds, objects changed, bytes, errors): a busy vCenter then adds at most 86400 / "
     "round_window rows a day. 0 keeps a row per round that changed something."},
    {SECT_DATABASE, "poll_retention", OPT_INT, CF(poll_retention_days), 1, 36500, "400",
     "Days the poll history keeps every row; older polls are thinned to one per vCenter per day "
     "(its last successful full read), except those a finding names."},
    {SECT_DATABASE, "findings_retention", OPT_INT, CF(findings_retention_days), 1, 36500, "400",
     "Days a resolved finding (and a sent digest's record) is kept after it was resolved "
     "(sent); open and waived findings are never deleted, nor the last digest."},
    {SECT_VCENTER, "url", OPT_URL, VC(url), 0, 0, NULL,
     "Required. The SDK URL, https://HOST/sdk."},
    {SECT_VCENTER, "user", OPT_STR, VC(user), 0, 0, NULL,
     "Required. The vCenter account. Read-only reads all but esxcli and iSCSI port bindings; "
     "the role of docs/vcenter-role.md (Read-only, Host.Config.Storage and "
     "Host.Config.Settings) reads everything."},
    {SECT_VCENTER, "password_file", OPT_SECRET, VC(password_file), 0, 0, NULL,
     "A file holding the password on one line (root:vslint, mode 0640). One of password_file "
     "and password_env is required; passwords are never accepted on the command line."},
    {SECT_VCENTER, "password_env", OPT_ENVNAME, VC(password_env), 0, 0, NULL,
     "The name of an environment variable holding the password."},
    {SECT_VCENTER, "ca_file", OPT_FILE, VC(ca_file), 0, 0, NULL,
     "A PEM file of the CA that signed the vCenter certificate; without it, the system's trust "
     "store."},
    {SECT_VCENTER, "thumbprint", OPT_THUMBPRINT, VC(thumbprint), 0, 0, NULL,
     "Pin the vCenter's own certificate by its SHA-256 fingerprint, as `openssl x509 -noout "
     "-fingerprint -sha256` prints it (or the line `vslint config-check --connect` prints): the "
     "safe way to trust a self-signed vCenter. Replaces ca_file and insecure."},
    {SECT_VCENTER, "insecure", OPT_BOOL, VC(insecure), 0, 1, "false",
     "true skips TLS certificate and host name verification; warned about at every start."},
    {SECT_VCENTER, "interval", OPT_INT, VC(interval_s), 10, 86400, "300",
     "Seconds between full polls of vslint serve when it does not follow changes (incremental "
     "= false, or a vCenter that refuses property filters). A failed poll is retried after it, "
     "then twice that, up to 8 x interval or one hour."},
    {SECT_VCENTER, "timeout", OPT_INT, VC(timeout_s), 1, 3600, "60",
     "Seconds one request to vCenter may take. A vCenter that stops answering fails the "
     "poll once this long has passed: the poll's other requests are not tried."},
    {SECT_VCENTER, "max_objects", OPT_INT, VC(max_objects), 1, 10000, "500",
     "Objects per property-collector page."},
    {SECT_VCENTER, "incremental", OPT_BOOL, VC(incremental), 0, 1, "true",
     "true: after a full read, vslint serve follows the vCenter's changes with WaitForUpdatesEx "
     "and re-reads only the objects that changed (a changed host with its per-host reads); a "
     "full read again on an invalid collector version, a lost session, POST /api/v1/polls and "
     "every full_every seconds. false: a full read every interval seconds."},
    {SECT_VCENTER, "full_every", OPT_INT, VC(full_every_s), 60, 31536000, "86400",
     "With incremental = true: seconds between full reads, the safety net that also re-reads "
     "what the property collector cannot follow (alarms, folders; the per-host reads of hosts "
     "that did not change have their own host_reads_every)."},
    {SECT_VCENTER, "host_reads_every", OPT_INT, VC(host_reads_every_s), 10, 31536000, "3600",
     "With incremental = true: seconds between the per-host reads (esxcli, advanced options, "
     "iSCSI bindings) of hosts whose configuration did not change, which the property collector "
     "cannot follow: every host is read again by moref at this interval, without a full read. "
     "A host whose configuration changes is read again at once."},
    {SECT_ARRAY, "type", OPT_ARRAYTYPE, VC(type), 0, 0, NULL,
     "Required. The kind of array: unity (Dell EMC Unity, read through the Unisphere Management "
     "REST API). vslint reads its pools and LUNs and ties them to the datastores they back."},
    {SECT_ARRAY, "url", OPT_URL, VC(url), 0, 0, NULL,
     "Required. The management address, https://HOST (Unisphere)."},
    {SECT_ARRAY, "user", OPT_STR, VC(user), 0, 0, NULL,
     "Required. The Unisphere account; one with the Operator role (read-only) is enough."},
    {SECT_ARRAY, "password_file", OPT_SECRET, VC(password_file), 0, 0, NULL,
     "A file holding the password on one line (root:vslint, mode 0640). One of password_file "
     "and password_env is required; passwords are never accepted on the command line."},
    {SECT_ARRAY, "password_env", OPT_ENVNAME, VC(password_env), 0, 0, NULL,
     "The name of an environment variable holding the password."},
    {SECT_ARRAY, "ca_file", OPT_FILE, VC(ca_file), 0, 0, NULL,
     "A PEM file of the CA that signed the array's management certificate; without it, the "
     "system's trust store."},
    {SECT_ARRAY, "thumbprint", OPT_THUMBPRINT, VC(thumbprint), 0, 0, NULL,
     "Pin the array's own certificate by its SHA-256 fingerprint (openssl x509 -noout "
     "-fingerprint -sha256, or the line `vslint config-check --connect` prints): the safe way "
     "to trust Unisphere's self-signed certificate. Replaces ca_file and insecure."},
    {SECT_ARRAY, "insecure", OPT_BOOL, VC(insecure), 0, 1, "false",
     "true skips TLS certificate and host name verification; warned about at every start."},
    {SECT_ARRAY, "interval", OPT_INT, VC(interval_s), 10, 86400, "300",
     "Seconds between polls of vslint serve, with the same backoff as a vCenter's."},
    {SECT_ARRAY, "timeout", OPT_INT, VC(timeout_s), 1, 3600, "60",
     "Seconds one request to the array may take."},
    {SECT_SERVER, "listen", OPT_LISTEN, SV(listen), 0, 0, "127.0.0.1:8080",
     "ADDRESS:PORT to serve HTTP on, with a numeric address or localhost: [::1]:8080, "
     "0.0.0.0:8443."},
    {SECT_SERVER, "token_file", OPT_SECRET, SV(token_file), 1, 0, NULL,
     "A file holding the bearer token (at least 16 characters). Without it POST is refused "
     "(403)."},
    {SECT_SERVER, "auth", OPT_AUTH, SV(auth_all), 0, 0, "writes",
     "writes: the token is needed for POST only; all: for everything but /healthz."},
    {SECT_SERVER, "tls_cert", OPT_FILE, SV(tls_cert), 0, 0, NULL,
     "PEM certificate: serve HTTPS (TLS 1.2 and 1.3), with tls_key."},
    {SECT_SERVER, "tls_key", OPT_SECRET, SV(tls_key), 1, 0, NULL,
     "PEM private key of tls_cert."},
    {SECT_SERVER, "max_connections", OPT_INT, SV(max_connections), 1, 10000, "64",
     "Simultaneous HTTP connections; past it a new one is answered 503. Lowered to what "
     "the open-file limit allows (3 descriptors per connection)."},
    {SECT_SERVER, "max_connections_per_address", OPT_INT, SV(max_per_address), 1, 10000, "16",
     "Simultaneous connections from one client address (an IPv6 client: its /64); past it "
     "429. Raise it behind a "
     "reverse proxy."},
    {SECT_SERVER, "header_timeout", OPT_INT, SV(header_timeout_s), 1, 3600, "10",
     "Seconds a request may take to arrive whole (a kept-alive connection's next one: from its "
     "first byte); then 408."},
    {SECT_SERVER, "timeout", OPT_INT, SV(timeout_s), 1, 3600, "30",
     "Seconds a connection may stay silent while a request or answer is in flight, or idle "
     "between requests."},
    {SECT_SERVER, "strict_permissions", OPT_BOOL, SV(strict_permissions), 0, 1, "false",
     "true: a password_file, token_file or tls_key that others can read is an error for vslint "
     "serve (start and reload) and config-check, not a warning; the other commands warn."},
    {SECT_SERVER, "service_user", OPT_STR, SV(service_user), 0, 0, "vslint",
     "The account vslint serve runs as (the unit's User=). Secret files are judged for it, "
     "whoever runs the command: root:vslint 0640 is right; readable by others, or by a group "
     "it is not in, is a warning; one it cannot read is a problem for config-check. When no "
     "such account exists, or a user other than root runs the command, the files are judged "
     "for the user running it."},
    {SECT_DIGEST, "smtp_url", OPT_SMTP_URL, DG(smtp_url), 0, 0, NULL,
     "Required in [digest]. The mail server: smtp://HOST[:PORT] (STARTTLS) or smtps://HOST[:PORT] "
     "(TLS from the start)."},
    {SECT_DIGEST, "starttls", OPT_STARTTLS, DG(starttls_optional), 0, 0, "required",
     "required: an smtp:// server that does not offer STARTTLS gets nothing; optional: use it "
     "when offered, else send in plain text. optional is refused with user= and password_file=: "
     "whoever strips STARTTLS from the server's answer would be offered the password."},
    {SECT_DIGEST, "user", OPT_STR, DG(user), 0, 0, NULL,
     "The SMTP login, with password_file; without them vslint does not authenticate."},
    {SECT_DIGEST, "password_file", OPT_SECRET, DG(password_file), 1, 0, NULL,
     "A file holding the SMTP password on one line (mode 0600 or 0640 to vslint's group); read "
     "when sending, never logged, stored or put in the message."},
    {SECT_DIGEST, "ca_file", OPT_FILE, DG(ca_file), 0, 0, NULL,
     "A PEM file of the CA that signed the mail server's certificate; without it, the system's "
     "trust store."},
    {SECT_DIGEST, "insecure", OPT_BOOL, DG(insecure), 0, 1, "false",
     "true skips the mail server's certificate and host name verification; warned about."},
    {SECT_DIGEST, "from", OPT_ADDRESS, DG(from), 0, 0, NULL,
     "Required in [digest]. The sender address, e.g. vslint@example.com."},
    {SECT_DIGEST, "to", OPT_ADDRESSES, DG(to), 0, 0, NULL,
     "Required in [digest]. Recipients, comma-separated: storage@example.com, oncall@example.com."},
    {SECT_DIGEST, "at", OPT_TIME, DG(at), 0, 0, "06:30",
     "The local time of day vslint serve sends the digest. On the day clocks skip that time it "
     "is sent at the first minute after the gap; on the day it happens twice, once."},
    {SECT_DIGEST, "timezone", OPT_TIMEZONE, DG(timezone), 0, 0, NULL,
     "The zone at= is in, as under /usr/share/zoneinfo (Europe/Berlin, America/New_York, UTC); "
     "default the system's."},
    {SECT_DIGEST, "min_severity", OPT_SEVERITY, DG(min_severity), 0, 0, "warning",
     "The lowest severity the digest lists and counts."},
    {SECT_DIGEST, "public_url", OPT_URL, DG(public_url), 0, 0, NULL,
     "The dashboard's address as readers reach it (https://vslint.example.com/): the digest "
     "links to its filtered views."},
    {SECT_DIGEST, "send_when_empty", OPT_BOOL, DG(send_when_empty), 0, 1, "true",
     "false: no mail on a day with nothing new, resolved or failing (the window still moves "
     "on)."},
    {SECT_DIGEST, "subject", OPT_STR, DG(subject), 0, 0, "vslint",
     "The subject's prefix: \"PREFIX: N new, N resolved, N open (N critical)\"."},
    {SECT_DIGEST, "retry_min", OPT_INT, DG(retry_min_s), 1, 86400, "60",
     "Seconds before the first retry of a refused or dropped delivery; each retry waits twice "
     "as long, up to retry_max."},
    {SECT_DIGEST, "retry_max", OPT_INT, DG(retry_max_s), 1, 86400, "3600",
     "The longest wait between two delivery attempts (at least retry_min)."},
    {SECT_DIGEST, "attempts", OPT_INT, DG(attempts), 1, 100, "5",
     "Deliveries vslint digest tries before it gives up; vslint serve keeps trying until it "
     "stops, and a digest it could not send is sent when it starts again."},
    {SECT_CHECK, "enabled", OPT_BOOL, 0, 0, 1, "true", "false turns the check off."},
    {SECT_CHECK, "severity", OPT_STR, 0, 0, 0, NULL,
     "info, warning or critical: the severity of every finding of the check."},
    {SECT_WAIVER, "check", OPT_STR, 0, 0, 0, NULL, "Required. The check id."},
    {SECT_WAIVER, "object", OPT_STR, 0, 0, 0, NULL,
     "Required. The object name, or an fnmatch(3) pattern such as ds-lab-*."},
    {SECT_WAIVER, "reason", OPT_STR, 0, 0, 0, NULL, "Required. Why; shown with the finding."},
    {SECT_WAIVER, "expires", OPT_STR, 0, 0, 0, NULL,
     "Required. YYYY-MM-DD; from the day after, the finding counts again."},
    {SECT_WAIVER, "vcenter", OPT_STR, 0, 0, 0, NULL, "Only on this vCenter."},
    {SECT_RULES, "dir", OPT_STR, CF(rules_dir), 0, 0, "/etc/vslint/rules.d",
     "The directory of site rules: each *.sql file one rule, a header of -- lines and one "
     "SELECT over the public views (docs/rules.md, docs/schema.md). A missing directory is no "
     "error: no site rules."},
    {SECT_RULES, "timeout", OPT_INT, CF(rules_timeout_s), 1, 600, "2",
     "Seconds one site rule may run; past it the rule fails (its findings stay as they were, "
     "unverified) and the others run."},
    {SECT_RULES, "max_findings", OPT_INT, CF(rules_max_findings), 1, 1000000, "10000",
     "Findings one site rule may give; a rule that gives more fails."},
};

#define NOPTIONS (sizeof(options) / sizeof(options[0]))

static const char *const sect_names[] = {
    [SECT_DATABASE] = "database", [SECT_VCENTER] = "vcenter NAME", [SECT_ARRAY] = "array NAME",
    [SECT_SERVER] = "server",     [SECT_DIGEST] = "digest",         [SECT_CHECK] = "check ID",
    [SECT_WAIVER] = "waiver",     [SECT_RULES] = "rules",
};

/* The keys of a section kind, "a, b, c", for "unknown key" messages. */
/* Appends the keys of kind, comma-separated. 0, or the append's error (the list is cut). */
static int known_keys(struct vsl_buf *b, enum sect_kind kind)
{
    int r = 0;

    for (size_t i = 0; r == 0 && i < NOPTIONS; i++)
        if (options[i].sect == kind)
            r = vsl_buf_printf(b, "%s%s", b->len ? ", " : "", options[i].key);
    return r;
}

/* Replaces the string at field (owned) with a copy of v. 1, or 0 out of memory (inih's "stop"). */
static int set_string(char **field, const char *v)
{
    free(*field);
    *field = strdup(v);
    return *field != NULL;
}

/* Frees the string fields of kind in base: the keys that are not numbers or flags. */
static void free_fields(enum sect_kind kind, void *base)
{
    for (size_t i = 0; i < NOPTIONS; i++) {
        const struct opt *o = &options[i];
        if (o->sect == kind && o->type != OPT_INT && o->type != OPT_BOOL && o->type != OPT_AUTH &&
            o->type != OPT_STARTTLS)
            free(*(char **)((char *)base + o->offset));
    }
}

/* Sets every key of kind in base to its default. Fields start zeroed (calloc). */
static int apply_defaults(enum sect_kind kind, void *base)
{
    for (size_t i = 0; i < NOPTIONS; i++) {
        const struct opt *o = &options[i];
        char *field = (char *)base + o->offset;
        if (o->sect != kind || !o->dflt)
            continue;
        switch (o->type) {
        case OPT_INT:
            *(int *)field = (int)strtol(o->dflt, NULL, 10);
            break;
        case OPT_BOOL:
        case OPT_AUTH:
        case OPT_STARTTLS:
            *(int *)field = !strcmp(o->dflt, "true") || !strcmp(o->dflt, "all") ||
                            !strcmp(o->dflt, "optional");
            break;
        default:
            if (!set_string((char **)field, o->dflt))
                return -ENOMEM;
        }
    }
    return 0;
}

int vsl_config_doc(size_t i, struct vsl_config_doc *out)
{
    static const char *const syntax[] = {
        [OPT_STR] = "TEXT",          [OPT_URL] = "URL",           [OPT_BOOL] = "true|false",
        [OPT_ENVNAME] = "NAME",      [OPT_LISTEN] = "ADDRESS:PORT", [OPT_AUTH] = "writes|all",
        [OPT_FILE] = "FILE",         [OPT_SECRET] = "FILE",       [OPT_THUMBPRINT] = "SHA256:AA:BB:...",
        [OPT_SMTP_URL] = "URL",      [OPT_STARTTLS] = "required|optional",
        [OPT_ADDRESS] = "ADDRESS",   [OPT_ADDRESSES] = "ADDRESS[,ADDRESS...]",
        [OPT_TIME] = "HH:MM",        [OPT_TIMEZONE] = "ZONE",
        [OPT_SEVERITY] = "info|warning|critical",
        [OPT_ARRAYTYPE] = "unity",
    };
    if (i >= NOPTIONS)
        return -1;
    const struct opt *o = &options[i];
    out->section = sect_names[o->sect];
    out->key = o->key;
    out->dflt = o->dflt;
    out->help = o->help;
    if (o->type == OPT_INT)
        snprintf(out->syntax, sizeof(out->syntax), "%ld-%ld", o->min, o->max);
    else if (o->sect == SECT_CHECK && !strcmp(o->key, "severity"))
        snprintf(out->syntax, sizeof(out->syntax), "info|warning|critical");
    else if (o->sect == SECT_WAIVER && !strcmp(o->key, "expires"))
        snprintf(out->syntax, sizeof(out->syntax), "YYYY-MM-DD");
    else
        snprintf(out->syntax, sizeof(out->syntax), "%s", syntax[o->type]);
    return 0;
}

/* A secret file named by the configuration, judged once the whole file (and so
 * strict_permissions, wherever it stands) has been read. */
struct secret {
    char section[160];
    const char *key;
    char *path; /* owned */
    int line;
};

struct loader {
    const char *path;
    enum vsl_config_use use; /* who reads it: what strict_permissions and unreadable files mean */
    FILE *f;
    int line;
    int at_bol;        /* the reader's next chunk starts a new line */
    size_t line_len;   /* bytes of the current line read so far */
    int bad_line;      /* a line already reported (too long, NUL byte): its key is ignored */
    struct vsl_config *cfg;
    struct vsl_buf *errors;
    struct vsl_buf warnings;
    int nerr;
    struct secret *secrets; /* owned */
    size_t n_secrets;
    char *cur_section; /* the last section name seen, to detect a new [vcenter] */
    int new_section;   /* the reader saw a "[...]" line since the last key */
    int section_line;  /* the line of the last "[...]" */
    int skip_section;  /* the current [vcenter] header was bad: ignore its keys */
    struct deferred *deferred; /* owned: [check ID] keys of ids that are not built in */
    size_t n_deferred, cap_deferred;
};

/* A [check ID] key of an id the catalogue does not have: a site rule's, or a mistake, known
 * only once [rules] dir (wherever it stands in the file) has been read. */
struct deferred {
    char *id, *key, *value; /* owned */
    int line, section_line;
    int waiver; /* a [waiver]'s check = value (id ""): the check must exist */
};

static void report(struct loader *ld, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(struct loader *ld, const char *section, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Every problem goes through here: a file of garbage gives MAX_SHOWN lines and a count, not a
 * screenful per line. */
static void report(struct loader *ld, const char *fmt, ...)
{
    va_list ap;

    if (++ld->nerr > MAX_SHOWN)
        return;
    va_start(ap, fmt);
    char line[1024];
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    line[strcspn(line, "\n")] = '\0';
    vsl_buf_line(ld->errors, "%s", line);
}

static void problem(struct loader *ld, const char *section, const char *key, const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (key)
        report(ld, "%s:%d: [%s] %s: %s\n", ld->path, ld->line, section, key, msg);
    else
        report(ld, "%s:%d: [%s]: %s\n", ld->path, ld->line, section, msg);
}

/* inih calls this for each line, and again for the rest of a line longer than its buffer (which
 * it doubles up to ini_max_line); counting lines here gives the handler its line number. */
static char *reader(char *str, int num, void *stream)
{
    struct loader *ld = stream;
    int c = EOF, n = 0, nul = 0;

    while (n < num - 1 && (c = getc(ld->f)) != EOF) {
        if (c == '\0') {
            nul = 1;
            c = ' ';
        }
        str[n++] = (char)c;
        if (c == '\n')
            break;
    }
    if (n == 0)
        return NULL;
    str[n] = '\0';
    if (ld->at_bol) {
        ld->line++;
        ld->line_len = 0;
        /* inih does not report section lines; a repeated [vcenter X] must still be seen. */
        const char *p = str;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '[') {
            ld->new_section = 1;
            ld->section_line = ld->line;
        }
    }
    ld->line_len += (size_t)n;
    ld->at_bol = str[n - 1] == '\n';
    if (nul && ld->bad_line != ld->line) {
        report(ld, "%s:%d: a NUL byte in the line (a value cannot hold one)\n", ld->path,
               ld->line);
        ld->bad_line = ld->line;
    }
    if (!ld->at_bol && ld->line_len >= MAX_LINE - 1) {
        if (ld->bad_line != ld->line)
            report(ld, "%s:%d: line longer than %d characters\n", ld->path, ld->line,
                   MAX_LINE - 2);
        ld->bad_line = ld->line;
        while ((c = getc(ld->f)) != EOF && c != '\n')
            ;
        ld->at_bol = 1;
    }
    return str;
}

static int parse_bool(const char *v, int *out)
{
    static const char *const yes[] = {"true", "yes", "on", "1"};
    static const char *const no[] = {"false", "no", "off", "0"};
    for (size_t i = 0; i < 4; i++) {
        if (!strcasecmp(v, yes[i])) {
            *out = 1;
            return 0;
        }
        if (!strcasecmp(v, no[i])) {
            *out = 0;
            return 0;
        }
    }
    return -EINVAL;
}

static int parse_long(const char *v, long min, long max, long *out)
{
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (errno || end == v || *end != '\0' || n < min || n > max)
        return -EINVAL;
    *out = n;
    return 0;
}

/* Appends a [vcenter NAME] or [array NAME] section to its list, with its defaults. */
static struct vsl_vcenter_conf *new_vcenter(struct loader *ld, enum sect_kind kind,
                                            const char *name)
{
    struct vsl_config *cfg = ld->cfg;
    struct vsl_vcenter_conf **list = kind == SECT_ARRAY ? &cfg->arrays : &cfg->vcenters;
    size_t *n = kind == SECT_ARRAY ? &cfg->n_arrays : &cfg->n_vcenters;
    struct vsl_vcenter_conf *v = realloc(*list, (*n + 1) * sizeof(*v));
    if (!v)
        return NULL;
    *list = v;
    v = &v[(*n)++];
    memset(v, 0, sizeof(*v));
    v->name = strdup(name);
    v->line = ld->section_line;
    return v->name && apply_defaults(kind, v) == 0 ? v : NULL;
}

size_t vsl_config_nsources(const struct vsl_config *cfg)
{
    return cfg->n_vcenters + cfg->n_arrays;
}

const struct vsl_vcenter_conf *vsl_config_source(const struct vsl_config *cfg, size_t i)
{
    assert(i < vsl_config_nsources(cfg));
    return i < cfg->n_vcenters ? &cfg->vcenters[i] : &cfg->arrays[i - cfg->n_vcenters];
}

/* The source named name, vCenter or array, other than skip; NULL when there is none. */
static const struct vsl_vcenter_conf *find_source(const struct vsl_config *cfg, const char *name,
                                                  const struct vsl_vcenter_conf *skip)
{
    for (size_t i = 0; i < vsl_config_nsources(cfg); i++) {
        const struct vsl_vcenter_conf *s = vsl_config_source(cfg, i);
        if (s != skip && !strcmp(s->name, name))
            return s;
    }
    return NULL;
}

static int valid_name(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!(*s >= 'a' && *s <= 'z') && !(*s >= 'A' && *s <= 'Z') && !(*s >= '0' && *s <= '9') &&
            !strchr("-_.", *s))
            return 0;
    return 1;
}

/* A key of [check ID] into st: enabled, severity, or one of params (terminated by a NULL
 * name), with the messages every check's keys get. 1 (inih's "go on"). */
static int settings_key(struct loader *ld, const char *section, const char *key,
                        const char *value, struct chk_settings *st, const struct chk_param *cp)
{
    if (!strcmp(key, "enabled")) {
        if (parse_bool(value, &st->enabled) < 0)
            problem(ld, section, key, "'%s' is not true or false", value);
        return 1;
    }
    if (!strcmp(key, "severity")) {
        enum vsl_severity sev;
        if (vsl_severity_parse(value, &sev) < 0)
            problem(ld, section, key, "'%s' is not info, warning or critical", value);
        else
            st->severity_override = (int)sev;
        return 1;
    }
    /* The registry test holds every check to CHK_MAX_PARAMS; the bound keeps a check that
     * broke it from writing past st->params. */
    for (size_t i = 0; cp && cp[i].name && i < CHK_MAX_PARAMS; i++) {
        const struct chk_param *p = &cp[i];
        if (strcmp(p->name, key))
            continue;
        char *end;
        errno = 0;
        double v = strtod(value, &end);
        if (errno || end == value || *end || v < p->min || v > p->max)
            problem(ld, section, key, "'%s' is not a number from %g to %g%s%s", value, p->min,
                    p->max, p->unit ? " " : "", p->unit ? p->unit : "");
        else
            st->params[i] = v;
        return 1;
    }
    struct vsl_buf known;
    vsl_buf_init(&known, 1024);
    int r = known_keys(&known, SECT_CHECK);
    for (size_t i = 0; r == 0 && cp && cp[i].name; i++)
        r = vsl_buf_printf(&known, ", %s", cp[i].name);
    problem(ld, section, key, "unknown key (known keys: %s%s)", known.data ? known.data : "",
            r < 0 ? ", ..." : "");
    vsl_buf_free(&known);
    return 1;
}

/* Keeps a [check ID] key of an id the catalogue does not have for site_keys(). 1, or 0 out of
 * memory (inih's "stop"). */
static int defer_key(struct loader *ld, const char *id, const char *key, const char *value)
{
    if (vsl_grow(&ld->deferred, &ld->cap_deferred, ld->n_deferred, sizeof(*ld->deferred), 8) < 0)
        return 0;
    struct deferred *d = &ld->deferred[ld->n_deferred++];
    d->id = strdup(id);
    d->key = strdup(key);
    d->value = strdup(value);
    d->line = ld->line;
    d->section_line = ld->section_line;
    d->waiver = 0;
    return d->id && d->key && d->value;
}

/* [check ID]: enabled=, severity=, and the check's own numeric parameters. */
static int check_key(struct loader *ld, const char *section, const char *id, const char *key,
                     const char *value)
{
    size_t idx;
    const struct check *c = NULL;

    for (idx = 0; idx < chk_registry_len; idx++) {
        if (!strcmp(chk_registry[idx]->id, id)) {
            c = chk_registry[idx];
            break;
        }
    }
    if (!c) /* a site rule's, maybe: judged once the rules are loaded (site_keys()) */
        return defer_key(ld, id, key, value);
    return settings_key(ld, section, key, value, &ld->cfg->checks.settings[idx], c->params);
}

/* Parses YYYY-MM-DD into the last second of that day, UTC. */
static int parse_date(const char *s, int64_t *out)
{
    struct tm tm;
    int y, m, d, n = 0;

    if (sscanf(s, "%4d-%2d-%2d%n", &y, &m, &d, &n) != 3 || s[n] || m < 1 || m > 12 || d < 1 ||
        d > 31)
        return -EINVAL;
    memset(&tm, 0, sizeof(tm));
    tm.tm_year = y - 1900;
    tm.tm_mon = m - 1;
    tm.tm_mday = d;
    time_t t = timegm(&tm);
    if (t == (time_t)-1)
        return -EINVAL;
    struct tm back;
    gmtime_r(&t, &back);
    if (back.tm_mday != d) /* 2027-02-30 */
        return -EINVAL;
    *out = (int64_t)t + 86399;
    return 0;
}

static struct chk_waiver *cur_waiver(struct loader *ld)
{
    struct chk_config *cc = &ld->cfg->checks;
    if (ld->new_section || cc->n_waivers == 0) {
        struct chk_waiver *w = realloc(cc->waivers, (cc->n_waivers + 1) * sizeof(*w));
        if (!w)
            return NULL;
        cc->waivers = w;
        w = &cc->waivers[cc->n_waivers++];
        memset(w, 0, sizeof(*w));
        w->line = ld->section_line;
        w->expires = -1;
        ld->new_section = 0;
    }
    return &cc->waivers[cc->n_waivers - 1];
}

/* [waiver]: check=, object=, reason=, expires=, and optionally vcenter=. */
static int waiver_key(struct loader *ld, const char *section, const char *key, const char *value)
{
    struct chk_waiver *w = cur_waiver(ld);
    char **field = NULL;

    if (!w)
        return 0;
    if (!strcmp(key, "check")) {
        /* A check that is not built in may be a site rule: load_rules() asks once the rules
         * are loaded. */
        if (!chk_find(value)) {
            if (!defer_key(ld, "", key, value))
                return 0;
            ld->deferred[ld->n_deferred - 1].waiver = 1;
        }
        field = &w->check;
    } else if (!strcmp(key, "object")) {
        field = &w->object;
    } else if (!strcmp(key, "reason")) {
        field = &w->reason;
    } else if (!strcmp(key, "vcenter")) {
        field = &w->vcenter;
    } else if (!strcmp(key, "expires")) {
        if (parse_date(value, &w->expires) < 0) {
            problem(ld, section, key, "'%s' is not a date written YYYY-MM-DD", value);
            return 1;
        }
        field = &w->expires_text;
    } else {
        struct vsl_buf known;
        vsl_buf_init(&known, 1024);
        known_keys(&known, SECT_WAIVER);
        problem(ld, section, key, "unknown key (known keys: %s)", known.data ? known.data : "");
        vsl_buf_free(&known);
        return 1;
    }
    if (!*value) {
        problem(ld, section, key, "empty value");
        return 1;
    }
    return set_string(field, value);
}

/* Whether id is a site rule's, loaded or not (a broken rule's id still names it). */
static int site_rule_id(const struct vsl_config *cfg, const char *id)
{
    if (rules_find(&cfg->rules, id))
        return 1;
    for (size_t i = 0; i < cfg->rules.n_errors; i++)
        if (cfg->rules.errors[i].id && !strcmp(cfg->rules.errors[i].id, id))
            return 1;
    return 0;
}

static int builtin_id(const char *id, void *ctx)
{
    (void)ctx;
    return chk_find(id) != NULL;
}

const struct chk_settings *vsl_config_rule_settings(const struct vsl_config *cfg, size_t i)
{
    assert(i < cfg->rules.n);
    return &cfg->rule_settings[i];
}

_Static_assert(RULES_MAX_PARAMS <= CHK_MAX_PARAMS, "a site rule's params fit chk_settings");

/* The site rules of [rules] dir, and the [check ID] keys kept for them (defer_key): a key of a
 * rule is read as a built-in check's is, with the same messages; a key of an id that is neither
 * is the problem it always was. A rule that does not load is no problem here (see
 * vsl_config.rules). */
static void load_rules(struct loader *ld)
{
    struct vsl_config *cfg = ld->cfg;
    char err[512];
    int saved = ld->line;

    if (rules_load_dir(cfg->rules_dir, builtin_id, NULL, &cfg->rules, err, sizeof(err)) < 0) {
        /* An unreadable directory is said like a broken rule: the checks still run. */
        struct rules_set *set = &cfg->rules;
        if (vsl_grow(&set->errors, &set->cap_errors, set->n_errors, sizeof(*set->errors), 8) == 0)
            set->errors[set->n_errors++] =
                (struct rules_error){.file = strdup(cfg->rules_dir), .cause = strdup(err)};
    }
    cfg->rule_settings = calloc(cfg->rules.n ? cfg->rules.n : 1, sizeof(*cfg->rule_settings));
    if (!cfg->rule_settings) {
        report(ld, "%s: out of memory while loading the site rules\n", ld->path);
        return;
    }
    for (size_t i = 0; i < cfg->rules.n; i++) {
        struct chk_settings *st = &cfg->rule_settings[i];
        *st = (struct chk_settings){.enabled = 1, .severity_override = -1};
        for (size_t k = 0; k < cfg->rules.rules[i].n_params; k++)
            st->params[k] = cfg->rules.rules[i].params[k].dflt;
    }
    for (size_t d = 0; d < ld->n_deferred; d++) {
        struct deferred *k = &ld->deferred[d];
        char section[160];
        size_t i = 0;
        if (k->waiver) {
            if (!site_rule_id(cfg, k->value)) {
                ld->line = k->line;
                problem(ld, "waiver", "check", "no check '%s' (vslint checks lists them)",
                        k->value);
            }
            continue;
        }
        snprintf(section, sizeof(section), "check %s", k->id);
        while (i < cfg->rules.n && strcmp(cfg->rules.rules[i].id, k->id))
            i++;
        if (i == cfg->rules.n) {
            /* A broken rule's keys wait for the rule to be fixed; anything else is a typo. */
            if (!site_rule_id(cfg, k->id)) {
                ld->line = k->section_line;
                problem(ld, section, NULL, "no check '%s' (vslint checks lists them)", k->id);
            }
            continue;
        }
        const struct rules_rule *rule = &cfg->rules.rules[i];
        struct chk_param params[RULES_MAX_PARAMS + 1] = {{0}};
        for (size_t p = 0; p < rule->n_params; p++)
            params[p] = (struct chk_param){
                .name = rule->params[p].name,
                .dflt = rule->params[p].dflt,
                .min = RULES_PARAM_MIN,
                .max = RULES_PARAM_MAX,
                .unit = rule->params[p].unit[0] ? rule->params[p].unit : NULL,
                .help = rule->params[p].help};
        ld->line = k->line;
        settings_key(ld, section, k->key, k->value, &cfg->rule_settings[i], params);
    }
    for (size_t d = 0; d < ld->n_deferred; d++) {
        free(ld->deferred[d].id);
        free(ld->deferred[d].key);
        free(ld->deferred[d].value);
    }
    free(ld->deferred);
    ld->deferred = NULL;
    ld->n_deferred = 0;
    ld->line = saved;
}

static void check_waiver(struct loader *ld, struct chk_waiver *w)
{
    int saved = ld->line;
    ld->line = w->line;
    if (!w->check)
        problem(ld, "waiver", "check", "missing: which check does this waiver silence?");
    if (!w->object)
        problem(ld, "waiver", "object", "missing: a name or pattern such as ds-lab-*");
    if (!w->reason)
        problem(ld, "waiver", "reason", "missing: say why, it is shown with the finding");
    if (!w->expires_text)
        problem(ld, "waiver", "expires", "missing: waivers must expire (YYYY-MM-DD)");
    ld->line = saved;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* "SHA256:AA:BB:..." (the prefix and the colons may be left out, hex in either case) into
 * the canonical upper-case, colon-separated form in out (at least 96 bytes). *sha1 tells a
 * 20-byte (SHA-1) thumbprint, the form older vSphere tools print, for a clearer message. */
static int parse_thumbprint(const char *v, char *out, size_t outlen, int *sha1)
{
    unsigned char d[32];
    size_t n = 0;

    *sha1 = 0;
    if (!strncasecmp(v, "SHA256:", 7))
        v += 7;
    while (*v) {
        if (*v == ':' && n > 0)
            v++;
        int hi = hexval(v[0]), lo = hi < 0 ? -1 : hexval(v[1]);
        if (hi < 0 || lo < 0)
            return -EINVAL;
        if (n == sizeof(d))
            return -EINVAL;
        d[n++] = (unsigned char)(hi << 4 | lo);
        v += 2;
    }
    if (n == 20)
        *sha1 = 1;
    if (n != sizeof(d) || outlen < 96)
        return -EINVAL;
    for (size_t i = 0; i < n; i++)
        snprintf(out + 3 * i, 4, "%02X%s", d[i], i + 1 < n ? ":" : "");
    return 0;
}

/* ADDRESS:PORT with a numeric IPv4 address, [IPv6] or localhost: what cannot be bound is said
 * by config-check, not found out when the daemon starts. */
static int valid_listen(const char *value)
{
    const char *colon = strrchr(value, ':');
    char host[128];
    unsigned char addr[16];
    long port;
    size_t hl;

    if (!colon || colon == value || parse_long(colon + 1, 1, 65535, &port) < 0)
        return 0;
    hl = (size_t)(colon - value);
    if (value[0] == '[') {
        if (hl < 3 || value[hl - 1] != ']' || hl - 2 >= sizeof(host))
            return 0;
        memcpy(host, value + 1, hl - 2);
        host[hl - 2] = '\0';
        return inet_pton(AF_INET6, host, addr) == 1;
    }
    if (hl >= sizeof(host))
        return 0;
    memcpy(host, value, hl);
    host[hl] = '\0';
    return !strcmp(host, "localhost") || inet_pton(AF_INET, host, addr) == 1;
}

int vsl_config_hhmm(const char *s)
{
    if (strlen(s) != 5 || s[2] != ':')
        return -1;
    for (int i = 0; i < 5; i++)
        if (i != 2 && (s[i] < '0' || s[i] > '9'))
            return -1;
    int h = (s[0] - '0') * 10 + (s[1] - '0'), m = (s[3] - '0') * 10 + (s[4] - '0');
    return h < 24 && m < 60 ? h * 60 + m : -1;
}

/* local@domain: the local part printable ASCII without the characters that would let it escape
 * an SMTP command or a header (spaces, <>, quotes, commas, ...); the domain letters, digits,
 * hyphens and dots. What a storage team writes, not all of RFC 5321. */
int vsl_config_address(const char *s)
{
    const char *at = strchr(s, '@');
    size_t n = strlen(s);

    if (!at || at == s || strchr(at + 1, '@') || !at[1] || n > 254)
        return 0;
    for (const char *p = s; p < at; p++)
        if (*p <= ' ' || *p >= 127 || strchr("<>()[]\\,;:\"", *p))
            return 0;
    if (at[1] == '.' || s[n - 1] == '.' || strstr(at, ".."))
        return 0;
    for (const char *p = at + 1; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '-' || *p == '.'))
            return 0;
    return 1;
}

/* A comma-separated list of at least one address; each bad one is reported. */
static int valid_addresses(struct loader *ld, const char *section, const char *key,
                           const char *value)
{
    char *copy = strdup(value), *save = NULL, *tok;
    int n = 0, ok = 1;

    if (!copy)
        return 0;
    for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ' || *tok == '\t')
            tok++;
        size_t len = strlen(tok);
        while (len && (tok[len - 1] == ' ' || tok[len - 1] == '\t'))
            tok[--len] = '\0';
        if (!len)
            continue;
        n++;
        if (!vsl_config_address(tok)) {
            problem(ld, section, key, "'%s' is not an e-mail address (user@example.com)", tok);
            ok = 0;
        }
    }
    free(copy);
    if (ok && !n)
        problem(ld, section, key, "no address: give at least one, comma-separated");
    return ok && n;
}

/* A zone name as TZ takes it, that names a file under ZONEINFO: no absolute path, no "..". */
static int valid_zone(const char *name)
{
    char path[512];
    struct stat st;

    if (!*name || name[0] == '/' || strstr(name, "..") || strlen(name) > 200)
        return 0;
    for (const char *p = name; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              strchr("/_+-", *p)))
            return 0;
    snprintf(path, sizeof(path), ZONEINFO "/%s", name);
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static void add_secret(struct loader *ld, const char *section, const char *key, const char *path)
{
    struct secret *s = realloc(ld->secrets, (ld->n_secrets + 1) * sizeof(*s));

    if (!s)
        return;
    ld->secrets = s;
    s = &s[ld->n_secrets];
    snprintf(s->section, sizeof(s->section), "%s", section);
    s->key = key;
    s->line = ld->line;
    s->path = strdup(path);
    if (s->path)
        ld->n_secrets++;
}

static int handler(void *user, const char *section, const char *key, const char *value)
{
    struct loader *ld = user;
    enum sect_kind kind;
    void *base;

    if (ld->bad_line == ld->line)
        return 1; /* already reported: a cut or NUL-bearing value must not be used */

    if (!strcmp(section, "database")) {
        kind = SECT_DATABASE;
        base = ld->cfg;
    } else if (!strcmp(section, "server")) {
        kind = SECT_SERVER;
        base = ld->cfg;
        if (!ld->cfg->server.line)
            ld->cfg->server.line = ld->section_line;
    } else if (!strcmp(section, "rules")) {
        kind = SECT_RULES;
        base = ld->cfg;
    } else if (!strcmp(section, "digest")) {
        kind = SECT_DIGEST;
        base = ld->cfg;
        if (!ld->cfg->digest.line)
            ld->cfg->digest.line = ld->section_line;
    } else if (!strncmp(section, "vcenter ", 8) || !strcmp(section, "vcenter") ||
               !strncmp(section, "array ", 6) || !strcmp(section, "array")) {
        const int is_array = section[0] == 'a';
        const size_t word = is_array ? 5 : 7;
        const char *name = section[word] ? section + word + 1 : "";
        while (*name == ' ')
            name++;
        kind = is_array ? SECT_ARRAY : SECT_VCENTER;
        if (ld->skip_section && !ld->new_section)
            return 1;
        if (!ld->cur_section || strcmp(ld->cur_section, section) || ld->new_section) {
            int key_line = ld->line;
            ld->new_section = 0;
            ld->line = ld->section_line; /* section problems point at the [...] line */
            int bad = !valid_name(name);
            if (bad) {
                problem(ld, section, NULL,
                        is_array ? "an array section is written [array NAME], NAME of letters, "
                                   "digits, '-', '_' or '.'"
                                 : "a vCenter section is written [vcenter NAME], NAME of "
                                   "letters, digits, '-', '_' or '.'");
            }
            /* One namespace for vCenters and arrays: the name keys the stored snapshot. */
            const struct vsl_vcenter_conf *dup = bad ? NULL : find_source(ld->cfg, name, NULL);
            if (dup) {
                problem(ld, section, NULL, "%s '%s' is already defined on line %d",
                        dup->type ? "array" : "vCenter", name, dup->line);
                bad = 1;
            }
            ld->line = key_line;
            if (bad) {
                /* Keep the later keys of this section from being reported one by one. */
                free(ld->cur_section);
                ld->cur_section = NULL;
                ld->skip_section = 1;
                return 1;
            }
            ld->skip_section = 0;
            free(ld->cur_section);
            ld->cur_section = strdup(section);
            if (!ld->cur_section || !new_vcenter(ld, kind, name))
                return 0;
        }
        base = is_array ? &ld->cfg->arrays[ld->cfg->n_arrays - 1]
                        : &ld->cfg->vcenters[ld->cfg->n_vcenters - 1];
    } else if (!strncmp(section, "check ", 6)) {
        return check_key(ld, section, section + 6, key, value);
    } else if (!strcmp(section, "waiver")) {
        return waiver_key(ld, section, key, value);
    } else {
        problem(ld, section, NULL, "unknown section (expected [database], [server], "
                                   "[vcenter NAME], [array NAME], [digest], [rules], [check ID] "
                                   "or [waiver])");
        return 1;
    }

    const struct opt *o = NULL;
    for (size_t i = 0; i < NOPTIONS; i++) {
        if (options[i].sect == kind && !strcmp(options[i].key, key)) {
            o = &options[i];
            break;
        }
    }
    if (!o) {
        struct vsl_buf known;
        vsl_buf_init(&known, 1024);
        const int cut = known_keys(&known, kind) < 0;
        problem(ld, section, key, "unknown key (known keys: %s%s)", known.data ? known.data : "",
                cut ? ", ..." : "");
        vsl_buf_free(&known);
        return 1;
    }

    char *field = (char *)base + o->offset;
    switch (o->type) {
    case OPT_FILE:
    case OPT_SECRET:
        if (!*value) {
            problem(ld, section, key, "empty value");
            return 1;
        }
        if ((o->type == OPT_FILE || o->min) && access(value, R_OK) < 0) {
            problem(ld, section, key, "cannot read %s: %s", value, strerror(errno));
            return 1;
        }
        if (o->type == OPT_SECRET)
            add_secret(ld, section, o->key, value);
        goto store;
    case OPT_THUMBPRINT: {
        char canon[96];
        int sha1;
        if (parse_thumbprint(value, canon, sizeof(canon), &sha1) < 0) {
            problem(ld, section, key,
                    sha1 ? "'%s' is a SHA-1 thumbprint: give the SHA-256 one "
                           "(openssl x509 -noout -fingerprint -sha256 -in CERT)"
                         : "'%s' is not a SHA-256 fingerprint written SHA256:AA:BB:... "
                           "(32 hex bytes)",
                    value);
            return 1;
        }
        return set_string((char **)field, canon);
    }
    case OPT_ARRAYTYPE:
        if (strcmp(value, "unity")) {
            problem(ld, section, key, "'%s' is not an array type vslint reads (unity)", value);
            return 1;
        }
        return set_string((char **)field, value);
    case OPT_SMTP_URL:
        if ((strncmp(value, "smtp://", 7) || !value[7]) && (strncmp(value, "smtps://", 8) || !value[8])) {
            problem(ld, section, key, "'%s' is not an smtp:// or smtps:// URL", value);
            return 1;
        }
        return set_string((char **)field, value);
    case OPT_STARTTLS:
        if (!strcmp(value, "optional"))
            *(int *)field = ld->line; /* its line, for check_digest()'s message */
        else if (!strcmp(value, "required"))
            *(int *)field = 0;
        else
            problem(ld, section, key, "'%s' is not required or optional", value);
        return 1;
    case OPT_ADDRESS:
        if (!vsl_config_address(value)) {
            problem(ld, section, key, "'%s' is not an e-mail address (user@example.com)", value);
            return 1;
        }
        return set_string((char **)field, value);
    case OPT_ADDRESSES:
        if (!valid_addresses(ld, section, key, value))
            return 1;
        return set_string((char **)field, value);
    case OPT_TIME:
        if (vsl_config_hhmm(value) < 0) {
            problem(ld, section, key, "'%s' is not a time of day HH:MM (00:00 to 23:59)", value);
            return 1;
        }
        return set_string((char **)field, value);
    case OPT_TIMEZONE:
        if (!valid_zone(value)) {
            problem(ld, section, key, "'%s' is not a time zone of " ZONEINFO
                    " (e.g. Europe/Berlin, America/New_York, UTC)", value);
            return 1;
        }
        return set_string((char **)field, value);
    case OPT_SEVERITY: {
        enum vsl_severity sev;
        if (vsl_severity_parse(value, &sev) < 0) {
            problem(ld, section, key, "'%s' is not info, warning or critical", value);
            return 1;
        }
        return set_string((char **)field, value);
    }
    case OPT_URL: {
        /* A user name or password in the URL (https://USER:PASS@HOST/) would be printed
         * wherever the URL is (reports, logs): refused, and never echoed. */
        const char *host = strstr(value, "://");
        size_t authority = host ? strcspn(host + 3, "/?#") : 0;
        if (host && memchr(host + 3, '@', authority)) {
            problem(ld, section, key,
                    "the URL holds a user name or password before '@' (not shown here): put the "
                    "user in user = and the password in password_file =");
            return 1;
        }
    }
        if (strncmp(value, "https://", 8) && strncmp(value, "http://", 7)) {
            problem(ld, section, key, "'%s' is not an http:// or https:// URL", value);
            return 1;
        }
        /* fall through */
    case OPT_ENVNAME:
    case OPT_STR: {
        if (!*value) {
            problem(ld, section, key, "empty value");
            return 1;
        }
        if (o->type == OPT_ENVNAME && !valid_name(value)) {
            problem(ld, section, key, "'%s' is not an environment variable name", value);
            return 1;
        }
    store:
        return set_string((char **)field, value);
    }
    case OPT_LISTEN: {
        if (!valid_listen(value)) {
            problem(ld, section, key,
                    "'%s' is not ADDRESS:PORT with a numeric IPv4 address, [IPv6] address or "
                    "localhost (e.g. 127.0.0.1:8080, 0.0.0.0:8443 or [::1]:8080)",
                    value);
            return 1;
        }
        return set_string((char **)field, value);
    }
    case OPT_AUTH:
        if (!strcmp(value, "all"))
            *(int *)field = 1;
        else if (!strcmp(value, "writes"))
            *(int *)field = 0;
        else
            problem(ld, section, key, "'%s' is not writes or all", value);
        return 1;
    case OPT_BOOL:
        if (parse_bool(value, (int *)field) < 0)
            problem(ld, section, key, "'%s' is not true or false", value);
        return 1;
    case OPT_INT: {
        long n;
        if (parse_long(value, o->min, o->max, &n) < 0)
            problem(ld, section, key, "'%s' is not a whole number from %ld to %ld", value, o->min,
                    o->max);
        else
            *(int *)field = (int)n;
        return 1;
    }
    }
    return 1;
}

static void check_server(struct loader *ld, struct vsl_server_conf *s)
{
    int saved = ld->line;

    ld->line = s->line;
    if (!!s->tls_cert != !!s->tls_key)
        problem(ld, "server", s->tls_cert ? "tls_key" : "tls_cert",
                "missing: HTTPS needs both tls_cert= and tls_key=");
    if (s->auth_all && !s->token_file)
        problem(ld, "server", "token_file", "missing: auth = all needs a token_file=");
    ld->line = saved;
}

static void check_digest(struct loader *ld, struct vsl_digest_conf *d)
{
    int saved = ld->line;

    if (!d->line)
        return;
    ld->line = d->line;
    if (!d->smtp_url)
        problem(ld, "digest", "smtp_url", "missing (e.g. smtp_url = smtp://mail.example.com:587)");
    if (!d->from)
        problem(ld, "digest", "from", "missing (e.g. from = vslint@example.com)");
    if (!d->to)
        problem(ld, "digest", "to", "missing: at least one recipient address");
    if (!!d->user != !!d->password_file)
        problem(ld, "digest", d->user ? "password_file" : "user",
                "missing: SMTP authentication needs both user= and password_file=");
    if (d->insecure && d->ca_file)
        problem(ld, "digest", "insecure", "insecure=true and ca_file= contradict each other");
    if (d->starttls_optional && d->user && d->smtp_url && !strncmp(d->smtp_url, "smtp://", 7)) {
        ld->line = d->starttls_optional;
        problem(ld, "digest", "starttls",
                "optional is refused with user= and password_file=: a server that offers no "
                "STARTTLS would be sent the SMTP password in plain text; remove the line (TLS "
                "required) or use smtps://");
        ld->line = d->line;
    }
    if (d->insecure)
        vsl_buf_line(&ld->warnings,
                     "%s:%d: [digest] insecure: warning: the mail server's certificate and host "
                     "name are not verified, so anyone on the path can read the SMTP password "
                     "and the digest",
                     ld->path, d->line);
    ld->line = saved;
}

static void check_vcenter(struct loader *ld, struct vsl_vcenter_conf *v, int is_array)
{
    char section[256];
    int saved = ld->line;

    snprintf(section, sizeof(section), "%s %s", is_array ? "array" : "vcenter", v->name);
    ld->line = v->line;
    if (is_array && !v->type)
        problem(ld, section, "type", "missing (type = unity)");
    if (!v->url)
        problem(ld, section, "url",
                is_array ? "missing (e.g. url = https://unity.example.com)"
                         : "missing (e.g. url = https://vcenter.example.com/sdk)");
    if (!v->user)
        problem(ld, section, "user", "missing");
    if (!v->password_file && !v->password_env)
        problem(ld, section, "password_file", "missing: set password_file= or password_env=");
    if (v->password_file && v->password_env)
        problem(ld, section, "password_env", "set password_file= or password_env=, not both");
    if (v->insecure && v->ca_file)
        problem(ld, section, "insecure", "insecure=true and ca_file= contradict each other");
    if (v->thumbprint && (v->insecure || v->ca_file))
        problem(ld, section, "thumbprint",
                "a pinned thumbprint replaces ca_file= and insecure=: set only one of them");
    /* Said by config-check only: every command warning on each run of a lab's http://
     * simulator would bury the warnings that are news. */
    if (ld->use == VSL_CONFIG_CHECK && v->url && !strncmp(v->url, "http://", 7))
        vsl_buf_line(&ld->warnings,
                     "%s:%d: [%s] url: warning: http:// sends the password and everything read "
                     "across the network in clear; use https://",
                     ld->path, v->line, section);
    if (v->insecure && !v->thumbprint)
        vsl_buf_line(&ld->warnings,
                       "%s:%d: [%s] insecure: warning: the %s certificate and host name are not "
                       "verified, so anyone on the path can read the password; pin the "
                       "certificate with thumbprint = SHA256:... instead",
                       ld->path, v->line, section, is_array ? "array's" : "vCenter");
    ld->line = saved;
}

/* The account a secret file is judged for: its user and every group it is in. */
struct reader {
    char name[64];
    uid_t uid;
    gid_t gids[64];
    int ngids;
    char group[64]; /* its primary group's name, for the chown in the advice */
    int service;    /* it is [server] service_user, not the account running the command */
};

/* The service account (service_user) when the command runs as root or as it and it exists;
 * otherwise the account running the command, which is then the one that reads the files (a
 * developer's or a pipeline's own configuration, a machine without the package's user). */
static void find_reader(const char *service_user, struct reader *rd)
{
    struct passwd pw, *p = NULL;
    char buf[4096];
    uid_t self = geteuid();

    memset(rd, 0, sizeof(*rd));
    if (service_user && *service_user &&
        getpwnam_r(service_user, &pw, buf, sizeof(buf), &p) == 0 && p &&
        (self == 0 || self == p->pw_uid)) {
        rd->service = 1;
    } else if (getpwuid_r(self, &pw, buf, sizeof(buf), &p) != 0 || !p) {
        /* No name for this uid (a container's arbitrary uid): its own groups still count. */
        rd->uid = self;
        snprintf(rd->name, sizeof(rd->name), "uid %u", (unsigned)self);
        int n = getgroups((int)(sizeof(rd->gids) / sizeof(rd->gids[0])) - 1, rd->gids);
        rd->ngids = n < 0 ? 0 : n;
        rd->gids[rd->ngids++] = getegid();
        snprintf(rd->group, sizeof(rd->group), "%u", (unsigned)getegid());
        return;
    }
    rd->uid = p->pw_uid;
    snprintf(rd->name, sizeof(rd->name), "%s", p->pw_name);
    int n = (int)(sizeof(rd->gids) / sizeof(rd->gids[0]));
    if (getgrouplist(p->pw_name, p->pw_gid, rd->gids, &n) < 0)
        n = (int)(sizeof(rd->gids) / sizeof(rd->gids[0])); /* the first 64 are enough */
    rd->ngids = n;
    struct group gr, *g = NULL;
    if (getgrgid_r(p->pw_gid, &gr, buf, sizeof(buf), &g) == 0 && g)
        snprintf(rd->group, sizeof(rd->group), "%s", g->gr_name);
    else
        snprintf(rd->group, sizeof(rd->group), "%u", (unsigned)p->pw_gid);
}

static int in_groups(const struct reader *rd, gid_t gid)
{
    for (int i = 0; i < rd->ngids; i++)
        if (rd->gids[i] == gid)
            return 1;
    return 0;
}

/* A secret file must be readable by the account that uses it and by no one else but root.
 * Readable by others, or by a group that account is not in, is a warning (an error with
 * strict_permissions, for the daemon and config-check); one the account cannot read is a
 * problem for config-check (the daemon would fail to poll) and a warning for the rest. The
 * advice is the same everywhere: root:GROUP 0640 for the service account, 0600 for one's own. */
static void check_secrets(struct loader *ld)
{
    const int strict = ld->cfg->server.strict_permissions && ld->use != VSL_CONFIG_COMMAND;
    int saved = ld->line;
    struct reader rd;

    if (ld->n_secrets)
        find_reader(ld->cfg->server.service_user, &rd);
    for (size_t i = 0; i < ld->n_secrets; i++) {
        const struct secret *s = &ld->secrets[i];
        struct stat st;
        char who[128], fix[512];
        if (stat(s->path, &st) < 0)
            continue; /* not there: reading it reports that, with its own message */
        const unsigned mode = (unsigned)(st.st_mode & 07777);
        const int readable = rd.uid == 0 || (st.st_uid == rd.uid ? (st.st_mode & S_IRUSR) != 0
                                             : in_groups(&rd, st.st_gid)
                                                 ? (st.st_mode & S_IRGRP) != 0
                                                 : (st.st_mode & S_IROTH) != 0);
        if (rd.service)
            snprintf(fix, sizeof(fix), "chown root:%s %s && chmod 0640 %s", rd.group, s->path,
                     s->path);
        else
            snprintf(fix, sizeof(fix), "chmod 0600 %s", s->path);
        ld->line = s->line;
        if (!readable) {
            if (ld->use == VSL_CONFIG_CHECK)
                problem(ld, s->section, s->key,
                        "%s cannot be read by %s%s (mode %04o): %s", s->path, rd.name,
                        rd.service ? ", the account vslint serve runs as" : "", mode, fix);
            else
                vsl_buf_line(&ld->warnings,
                             "%s:%d: [%s] %s: warning: %s cannot be read by %s%s (mode %04o): %s",
                             ld->path, s->line, s->section, s->key, s->path, rd.name,
                             rd.service ? ", the account vslint serve runs as" : "", mode, fix);
            continue;
        }
        if (st.st_mode & S_IROTH)
            snprintf(who, sizeof(who), "everyone");
        else if ((st.st_mode & S_IRGRP) && !in_groups(&rd, st.st_gid))
            snprintf(who, sizeof(who), "its group, which %s is not in", rd.name);
        else
            continue;
        if (strict)
            problem(ld, s->section, s->key,
                    "%s is readable by %s (mode %04o) and strict_permissions is on: %s", s->path,
                    who, mode, fix);
        else
            vsl_buf_line(&ld->warnings,
                         "%s:%d: [%s] %s: warning: %s is readable by %s (mode %04o): %s",
                         ld->path, s->line, s->section, s->key, s->path, who, mode, fix);
    }
    ld->line = saved;
}

int vsl_config_load(const char *path, struct vsl_config **out, struct vsl_buf *errors)
{
    return vsl_config_load_for(path, VSL_CONFIG_SERVE, out, errors);
}

int vsl_config_load_for(const char *path, enum vsl_config_use use, struct vsl_config **out,
                        struct vsl_buf *errors)
{
    struct loader ld = {.path = path, .use = use, .errors = errors, .at_bol = 1};
    int r;

    *out = NULL;
    ld.f = fopen(path, "re");
    if (!ld.f) {
        vsl_buf_line(errors, "%s: cannot open: %s", path, strerror(errno));
        return -VSL_ECONFIG;
    }
    ld.cfg = calloc(1, sizeof(*ld.cfg));
    if (!ld.cfg) {
        fclose(ld.f);
        return -ENOMEM;
    }
    ld.cfg->path = strdup(path);
    if (apply_defaults(SECT_DATABASE, ld.cfg) < 0 || apply_defaults(SECT_SERVER, ld.cfg) < 0 ||
        apply_defaults(SECT_DIGEST, ld.cfg) < 0 || apply_defaults(SECT_RULES, ld.cfg) < 0 ||
        chk_config_init(&ld.cfg->checks) < 0) {
        fclose(ld.f);
        vsl_config_free(ld.cfg);
        return -ENOMEM;
    }
    vsl_buf_init(&ld.warnings, 64 * 1024);
    /* Debian's inih reads a line into a buffer of ini_max_line bytes (200 unless told): let it
     * grow the buffer instead, so long values (paths, reasons, thumbprints) are read whole. */
    ini_use_stack = false;
    ini_allow_realloc = true;
    ini_max_line = MAX_LINE;
    r = ini_parse_stream(reader, &ld, handler, &ld);
    fclose(ld.f);
    free(ld.cur_section);
    if (r > 0 && ld.nerr == 0) {
        /* inih rejected the line itself (no '=' or ']'), before any handler ran. */
        report(&ld, "%s:%d: not a 'key = value' or '[section]' line\n", path, r);
    } else if (r < 0) {
        report(&ld, "%s: out of memory while reading\n", path);
    }
    load_rules(&ld);
    check_server(&ld, &ld.cfg->server);
    check_digest(&ld, &ld.cfg->digest);
    if (ld.cfg->n_vcenters == 0) {
        vsl_buf_line(errors, "%s: no [vcenter NAME] section: nothing to poll", path);
        ld.nerr++;
    }
    for (size_t i = 0; i < ld.cfg->n_vcenters; i++)
        check_vcenter(&ld, &ld.cfg->vcenters[i], 0);
    for (size_t i = 0; i < ld.cfg->n_arrays; i++)
        check_vcenter(&ld, &ld.cfg->arrays[i], 1);
    for (size_t i = 0; i < ld.cfg->checks.n_waivers; i++)
        check_waiver(&ld, &ld.cfg->checks.waivers[i]);
    check_secrets(&ld);
    for (size_t i = 0; i < ld.n_secrets; i++)
        free(ld.secrets[i].path);
    free(ld.secrets);
    if (ld.nerr > MAX_SHOWN)
        vsl_buf_line(errors, "%s: and %d more problems", path, ld.nerr - MAX_SHOWN);
    if (ld.nerr) {
        vsl_buf_free(&ld.warnings);
        vsl_config_free(ld.cfg);
        return -VSL_ECONFIG;
    }
    ld.cfg->warnings = ld.warnings.len ? vsl_buf_take(&ld.warnings) : NULL;
    vsl_buf_free(&ld.warnings);
    *out = ld.cfg;
    return 0;
}

void vsl_config_free(struct vsl_config *cfg)
{
    if (!cfg)
        return;
    for (size_t i = 0; i < cfg->n_vcenters; i++) {
        free(cfg->vcenters[i].name);
        free_fields(SECT_VCENTER, &cfg->vcenters[i]);
    }
    free(cfg->vcenters);
    for (size_t i = 0; i < cfg->n_arrays; i++) {
        free(cfg->arrays[i].name);
        free_fields(SECT_ARRAY, &cfg->arrays[i]);
    }
    free(cfg->arrays);
    chk_config_free(&cfg->checks);
    free_fields(SECT_SERVER, cfg);
    free_fields(SECT_DIGEST, cfg);
    free_fields(SECT_DATABASE, cfg);
    free_fields(SECT_RULES, cfg);
    rules_set_free(&cfg->rules);
    free(cfg->rule_settings);
    free(cfg->path);
    free(cfg->warnings);
    free(cfg);
}

void vsl_config_wipe(char *secret)
{
    if (!secret)
        return;
    volatile char *p = secret;
    while (*p)
        *p++ = '\0';
    free(secret);
}

int vsl_config_smtp_password(const struct vsl_digest_conf *d, char **out, char *err,
                             size_t errlen)
{
    *out = NULL;
    if (!d->password_file)
        return 0;
    int r = vsl_read_file(d->password_file, 4096, out);
    if (r < 0) {
        snprintf(err, errlen, "cannot read [digest] password_file %s: %s", d->password_file,
                 vsl_strerror(r));
        return r;
    }
    if (!**out) {
        snprintf(err, errlen, "[digest] password_file %s is empty", d->password_file);
        vsl_config_wipe(*out);
        *out = NULL;
        return -VSL_ECONFIG;
    }
    return 0;
}

int vsl_config_password(const struct vsl_vcenter_conf *vc, char **out, char *err, size_t errlen)
{
    *out = NULL;
    if (vc->password_env) {
        const char *v = getenv(vc->password_env);
        if (!v || !*v) {
            snprintf(err, errlen, "environment variable %s (password_env) is not set",
                     vc->password_env);
            return -VSL_ECONFIG;
        }
        *out = strdup(v);
        return *out ? 0 : -ENOMEM;
    }
    int r = vsl_read_file(vc->password_file, 4096, out);
    if (r < 0) {
        snprintf(err, errlen, "cannot read password_file %s: %s", vc->password_file,
                 vsl_strerror(r));
        return r;
    }
    if (!**out) {
        snprintf(err, errlen, "password_file %s is empty", vc->password_file);
        vsl_config_wipe(*out);
        *out = NULL;
        return -VSL_ECONFIG;
    }
    return 0;
}
