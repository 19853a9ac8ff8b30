/* vslint's INI configuration: one declarative table of options per section kind, and a loader
 * that reports every bad line as "FILE:LINE: [section] key: problem". */
#ifndef VSL_CONFIG_H
#define VSL_CONFIG_H

#include <stddef.h>

#include "checks/engine.h"
#include "rules/rule.h"
#include "util/buf.h"

/* The sections as loaded. Every key's default is in the option table (daemon/config.c), which
 * also documents it for vslint.conf(5) and `vslint help`. */
/* A source vslint polls: a vCenter ([vcenter NAME]) or a storage array ([array NAME], whose
 * type is set; max_objects is then unused). Both are read, checked and polled the same way. */
struct vsl_vcenter_conf {
    char *name;          /* from "[vcenter NAME]" or "[array NAME]"; owned */
    char *type;          /* owned; NULL for a vCenter, "unity" for an array */
    char *url;           /* https://vcenter.example.com/sdk; owned */
    char *user;          /* owned */
    char *password_file; /* owned, may be NULL */
    char *password_env;  /* owned, may be NULL */
    char *ca_file;       /* owned, may be NULL: system trust store */
    char *thumbprint;    /* owned, may be NULL: "AA:BB:..." SHA-256 of the pinned certificate */
    int insecure;        /* 1 only when the user wrote insecure=true */
    int interval_s;      /* poll interval for `vslint serve` */
    int timeout_s;       /* per-request timeout */
    int max_objects;     /* RetrievePropertiesEx page size asked for */
    int incremental;     /* follow changes with WaitForUpdatesEx between full reads */
    int full_every_s;    /* with incremental: seconds between full reads */
    int host_reads_every_s; /* with incremental: seconds between per-host reads of all hosts */
    int line;            /* where the section starts, for messages */
};

struct vsl_server_conf {
    char *listen;     /* "ADDRESS:PORT", "[::1]:8080", "0.0.0.0:8443"; owned */
    char *token_file; /* bearer token for POST (and for everything with auth = all); owned */
    int auth_all;     /* auth = all: the token is required for every request but /healthz */
    char *tls_cert, *tls_key; /* PEM files; both or neither; owned */
    int max_connections;      /* simultaneous connections */
    int timeout_s;            /* idle connection timeout */
    int max_per_address;      /* connections from one client address */
    int header_timeout_s;     /* a request must arrive whole within this */
    int strict_permissions;   /* secret files others can read are errors, not warnings */
    char *service_user;       /* the account vslint serve runs as, secrets are judged for; owned */
    int line;
};

/* [digest]: the nightly e-mail (daemon/digest.c). line is 0 when the file has no [digest]. */
struct vsl_digest_conf {
    char *smtp_url;      /* smtp://HOST[:PORT] or smtps://...; owned */
    int starttls_optional; /* 0: required; else the line of starttls = optional: plain text
                            * when the server offers no STARTTLS (refused with a user=) */
    char *user;          /* owned, may be NULL */
    char *password_file; /* owned, may be NULL; read only when sending, never logged */
    char *ca_file;       /* owned, may be NULL: the system trust store */
    int insecure;        /* skip certificate verification of the SMTP server */
    char *from;          /* one address; owned */
    char *to;            /* comma-separated addresses, each checked; owned */
    char *at;            /* HH:MM local time; owned */
    char *timezone;      /* a zone of /usr/share/zoneinfo, or NULL: the system's; owned */
    char *min_severity;  /* info|warning|critical; owned */
    char *public_url;    /* the dashboard, for links; owned, may be NULL */
    int send_when_empty;
    char *subject;       /* the subject's prefix; owned */
    int retry_min_s, retry_max_s; /* backoff of a refused delivery */
    int attempts;        /* deliveries `vslint digest` tries before it gives up */
    int line;
};

struct vsl_config {
    char *path;    /* the file it was read from; owned */
    char *db_path; /* owned */
    int capacity_retention_days; /* [database] capacity_retention */
    int round_window_s;          /* [database] round_window */
    int poll_retention_days;     /* [database] poll_retention */
    int findings_retention_days; /* [database] findings_retention */
    struct vsl_vcenter_conf *vcenters; /* owned array */
    size_t n_vcenters;
    struct vsl_vcenter_conf *arrays; /* owned array: [array NAME] sections, type set */
    size_t n_arrays;
    struct chk_config checks; /* [check ID] settings and [waiver] sections; owned */
    struct vsl_server_conf server; /* [server] */
    struct vsl_digest_conf digest; /* [digest] */
    char *warnings; /* owned, NULL when none: "FILE:LINE: [section] key: ..." lines */
    /* [rules]: the site rules of dir, loaded with the configuration. A rule file that does not
     * load is in rules.errors, not a problem of the configuration: a bad rule never stops
     * vslint (config-check and `vslint rules test` report it). */
    char *rules_dir;             /* owned */
    int rules_timeout_s;         /* [rules] timeout */
    int rules_max_findings;      /* [rules] max_findings */
    struct rules_set rules;      /* owned */
    struct chk_settings *rule_settings; /* owned, rules.n entries: [check ID] of each rule */
};

/* The settings of site rule i of cfg->rules ([check ID] of its id). */
const struct chk_settings *vsl_config_rule_settings(const struct vsl_config *cfg, size_t i);

/* Reads path. On a bad file returns -VSL_ECONFIG and appends one line per problem to errors
 * (which the caller initialises and frees; after 20 problems one line counts the rest); *out
 * is then NULL. What is allowed but unwise (insecure=true, a secret file others can read)
 * is left in (*out)->warnings for the caller to print or log. */
/* The sources to poll: the vCenters, then the arrays; i < vsl_config_nsources(cfg). */
size_t vsl_config_nsources(const struct vsl_config *cfg);
const struct vsl_vcenter_conf *vsl_config_source(const struct vsl_config *cfg, size_t i);

int vsl_config_load(const char *path, struct vsl_config **out, struct vsl_buf *errors);
/* Who a configuration is read for. Secret files are judged for [server] service_user either
 * way; strict_permissions makes the ones others can read errors for the daemon and
 * config-check only (one-shot commands warn), and a secret the service account cannot read is
 * an error for config-check only (the daemon warns and its poll says why). */
enum vsl_config_use {
    VSL_CONFIG_SERVE,   /* vslint serve, start and reload; what vsl_config_load() reads for */
    VSL_CONFIG_CHECK,   /* vslint config-check, the unit's ExecStartPre */
    VSL_CONFIG_COMMAND, /* collect, check, inventory, plan, digest, gate */
};
int vsl_config_load_for(const char *path, enum vsl_config_use use, struct vsl_config **out,
                        struct vsl_buf *errors);
void vsl_config_free(struct vsl_config *cfg); /* NULL is a no-op */

/* Reads the vCenter's password from password_file or password_env. *out is malloc'd, owned
 * by the caller, who should wipe it (vsl_config_wipe) after use. On error writes why to err. */
int vsl_config_password(const struct vsl_vcenter_conf *vc, char **out, char *err, size_t errlen);
void vsl_config_wipe(char *secret); /* zeroes and frees; NULL is a no-op */

/* "HH:MM" as minutes after midnight, or -1 when it is not a time of day. */
int vsl_config_hhmm(const char *s);
/* Whether s is one plain e-mail address (local@domain, no display name). */
int vsl_config_address(const char *s);
/* Reads [digest] password_file (NULL when no password_file: *out NULL, 0). Same rules as
 * vsl_config_password; the caller wipes *out. */
int vsl_config_smtp_password(const struct vsl_digest_conf *d, char **out, char *err,
                             size_t errlen);

/* One key the loader knows, from its option table: for help texts and vslint.conf(5). */
struct vsl_config_doc {
    const char *section; /* "database", "vcenter NAME", "array NAME", "server", "digest",
                            "check ID" or "waiver" */
    const char *key;
    const char *dflt;    /* the value when absent; NULL: none (help says what happens) */
    const char *help;    /* sentences */
    char syntax[64];     /* what a value looks like: "1-10000", "true|false", "FILE", ... */
};
/* The i-th key, in the table's order (sections together): 0, or -1 past the last. The [check
 * ID] rows are the keys every check takes; each check's own parameters are in its params. */
int vsl_config_doc(size_t i, struct vsl_config_doc *out);

#endif
