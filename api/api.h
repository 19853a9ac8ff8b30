/* vslint's HTTP server: the JSON API under /api/v1, /metrics, /healthz and /readyz, on
 * libmicrohttpd with a thread pool. It reads the database and asks the daemon, through hooks,
 * for the pollers' state and the checks' configuration; it never polls, and runs checks only
 * for the what-if gate and placement (checks/whatif.c), over a copy of a stored snapshot. */
#ifndef API_API_H
#define API_API_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include "checks/engine.h"

/* What the daemon knows about one vCenter's polling, copied out under its lock. */
struct api_vcenter_status {
    char name[128];
    char url[512];
    char type[16];      /* "" for a vCenter; an array's type ("unity") for an [array NAME] */
    int polled_once;    /* a first poll has finished, successfully or not */
    int polling;        /* a poll is in flight */
    int last_ok;        /* the last finished poll succeeded */
    int stale;          /* the served snapshot is older than the last poll attempt */
    int64_t last_started_ms, last_finished_ms, last_duration_ms; /* 0: never */
    int64_t last_success_ms; /* 0: never */
    int64_t next_poll_ms;    /* wall clock of the next scheduled poll, 0: none */
    int backoff_s;           /* the current retry delay when failing, 0 when healthy */
    int failures;            /* consecutive failed polls */
    int interval_s;          /* the configured poll interval */
    int timeout_s;           /* the configured request timeout */
    int64_t quiet_ms;        /* polling: since vCenter last sent anything (or the poll began) */
    char error[1024];        /* of the last poll, "" when it succeeded */
    int incremental;         /* following changes with WaitForUpdatesEx since the last full read */
    char version[64];        /* the collector version followed, "" when not following */
    int64_t last_full_ms;    /* when the last successful full read finished, 0: never */
    int64_t last_update_ms;  /* when the last change was applied incrementally, 0: never */
};

/* A poll in flight that has heard nothing from its vCenter for this long is "stalled". */
#define API_STALL_MS 5000

struct api_hooks {
    void *ctx;
    /* Fills *out (malloc'd, the caller frees) with one entry per configured vCenter, in
     * configuration order. 0 or a negative error. Called from HTTP threads. */
    int (*status)(void *ctx, struct api_vcenter_status **out, size_t *n);
    /* Wakes the poller of vcenter (NULL: of every vCenter) to poll now. 0, or -VSL_ENOTFOUND
     * when no such vCenter is configured. */
    int (*poll_now)(void *ctx, const char *vcenter);
    /* Copies the running configuration's check settings and waivers into *out (the caller
     * frees it with chk_config_free), so that a reload cannot free them under a request.
     * 0 or -ENOMEM. NULL: the defaults are used. */
    int (*check_config)(void *ctx, struct chk_config *out);
    /* Drops from a snapshot loaded for a what-if what the running configuration no longer
     * has (the pools of an array removed from it, whose rows stay until they age out), as the
     * evaluation and `vslint gate` do. NULL: the snapshot is judged as stored. */
    void (*scope_estate)(void *ctx, struct estate *e);
    /* A number that moves on whenever the running configuration changes (a reload), so that
     * the what-if estate scoped and judged by the old one is built again. NULL: never. */
    uint64_t (*config_generation)(void *ctx);
    /* 1 when the daemon can write the database; 0 when it cannot (a full disk, a read-only
     * file system), with why in why: the last stored snapshot is served read-only. */
    int (*db_writable)(void *ctx, char *why, size_t len);
    /* The running configuration's site rules as catalogue entries (*checks, an array) and the
     * rules that failed in the daemon's last evaluation (*errors, an array of {id, file, line,
     * error}): new references the caller releases. 0 or -ENOMEM. NULL: no site rules. */
    int (*site_rules)(void *ctx, json_t **checks, json_t **errors);
};

struct api_tls;

struct api_opts {
    const char *listen;  /* "127.0.0.1:8080", "[::1]:8080", "0.0.0.0:8443" */
    const char *db_path; /* each HTTP thread opens its own connection */
    const char *token;   /* bearer token, or NULL: then POST is refused (403) */
    int auth_all;        /* the token is needed for everything but /healthz */
    const char *tls_cert_file, *tls_key_file; /* both or NULL: HTTPS */
    /* HTTPS credentials built already (api_tls_new(), api/tls.h), or NULL: then they are read
     * from tls_cert_file and tls_key_file. Borrowed: they outlive the server. A reload builds
     * them before it stops the running server, and restarts the old one with its own. */
    struct api_tls *tls;
    int max_connections;
    int max_per_address; /* simultaneous connections from one client address */
    int timeout_s;       /* idle seconds while a request or answer is in flight */
    int header_timeout_s; /* a request must arrive whole within this */
    int threads; /* HTTP worker threads */
    int sources; /* vCenters and arrays polled in the same process: their descriptors are
                  * kept out of the connections' share of the open-file limit */
    int stmt_cache; /* tests: statements each HTTP thread's database caches (0: the default) */
};

struct api_server;

/* The score over unwaived, unresolved findings and the objects checked (api/summary.c), as
 * /api/v1/summary, /metrics and the digest report it. */
int api_score(int64_t critical, int64_t warning, int64_t info, int64_t objects);
/* db_findings_summary() of vcenter (NULL: all), the stored object counts and the score.
 * *counts is a new reference. 0 or a negative error. */
struct db;
int api_counts(struct db *db, const char *vcenter, json_t **counts, int64_t objs[3], int *score);

/* Binds and starts serving. On error writes one line to err and returns a negative error.
 * *out is owned by the caller (api_stop). The strings in o are copied. */
int api_start(const struct api_opts *o, const struct api_hooks *h, struct api_server **out,
              char *err, size_t errlen);
/* The TCP port s listens on (the one the system chose for port 0), or -1. */
int api_port(const struct api_server *s);
/* The i-th route of the router, as documented: its path into path (a prefix's names written
 * {a,b} or its placeholder {fingerprint}), its method ("GET" routes answer HEAD too) and a few
 * words on what it answers. 0, or -1 past the last. `vslint serve --help` lists them. */
int api_route_doc(size_t i, char *path, size_t size, const char **method, const char **help);
/* Stops accepting, finishes the threads, closes their databases, frees s. NULL is a no-op. */
void api_stop(struct api_server *s);

#endif
