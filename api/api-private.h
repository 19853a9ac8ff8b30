/* What the files of api/ share: the request being answered, the respond helpers every handler
 * uses, and the handlers the route table names. */
#ifndef API_PRIVATE_H
#define API_PRIVATE_H

#include <jansson.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "api/api.h"
#include "api/head.h"
#include "db/db.h"
#include "util/buf.h"

#define API_MAX_HEADERS  (32 * 1024) /* per-connection memory: request line and headers */
#define API_MAX_ARG      512         /* one query parameter's value */
/* HTTPS (GnuTLS priority string, api/tls.c): TLS 1.2 and 1.3 only; AEAD ciphers only (AES-GCM,
 * ChaCha20-Poly1305: no CBC, RC4 or 3DES); key exchange with forward secrecy only (ECDHE; no
 * static RSA); the server's order of preference wins. README.md says the same. */
#define API_TLS_PRIORITIES                                                                     \
    "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-CIPHER-ALL:+AES-256-GCM:+AES-128-GCM:"         \
    "+CHACHA20-POLY1305:-MAC-ALL:+AEAD:-KX-ALL:+ECDHE-ECDSA:+ECDHE-RSA:%SERVER_PRECEDENCE"
#define API_DEFAULT_PAGE 100
#define API_MAX_PAGE     1000
#define API_MAX_FIELDS   32 /* names in fields= */
#define API_GZIP_MIN     1024 /* answers shorter than this are not worth compressing */
#define API_DB_RETRY_MS  2000 /* how long a failed database open is answered 503 without retrying */
/* Rendered answers kept (api/cache.c): at most this many, holding at most this many bytes. */
#define API_CACHE_ENTRIES 64
#define API_CACHE_BYTES   (16 << 20)
/* The long handlers' threads (api/work.c) and how many requests may wait for them; one more
 * is answered 503 with Retry-After: API_WORK_RETRY_S. */
#define API_WORK_THREADS 2
#define API_WORK_QUEUE   16
#define API_WORK_RETRY_S 2
/* How many of the waiting requests one client address may hold: half, so that one address
 * (a pipeline retrying, a script in a loop) cannot refuse everyone else. */
#define API_WORK_PER_ADDRESS (API_WORK_QUEUE / 2)
/* At a stop, how long the answers of the long requests that just finished may take to go out. */
#define API_STOP_DRAIN_MS 5000

/* The front door (api/frontdoor.c): accepts, limits per address, terminates TLS, checks request
 * heads and bounds the time a request may take to arrive. */
struct api_door;
struct api_tls;
/* At most this many refused connections linger (their answer being read out) at once: each
 * holds a descriptor, counted in the open-file reserve (api/http.c). */
#define API_DOOR_MAX_LINGER 256

struct api_door_opts {
    int listen_fd;       /* borrowed */
    struct api_tls *tls; /* borrowed; HTTPS when set (api/tls.h) */
    unsigned max_connections, max_per_address;
    int head_timeout_s;
    int idle_timeout_s; /* a relay where nothing moves this long is closed */
};
int api_door_new(const struct api_door_opts *o, struct api_door **out);
int api_door_run(struct api_door *d, struct MHD_Daemon *mhd); /* starts accepting */
void api_door_stop(struct api_door *d);                         /* stops accepting */
/* After api_door_stop(): waits until every answer asked for has been sent on to its client,
 * up to until_ms (CLOCK_MONOTONIC milliseconds); 0 or -ETIMEDOUT. NULL: 0. */
int api_door_drain(struct api_door *d, int64_t until_ms);
/* After MHD_stop_daemon: closes the relays too; NULL is a no-op. */
void api_door_free(struct api_door *d);
/* The key the per-address connection limit counts a client under: an IPv4 address as
 * IPv4-mapped IPv6, an IPv6 address's /64 (its last 8 bytes zero). */
void api_addr_key(const struct sockaddr_storage *sa, unsigned char a[16]);
/* The key as text for the log: "192.0.2.7", "2001:db8:1:2::/64". */
void api_addr_text(const unsigned char a[16], char *out, size_t len);
/* Gives back a place in the counts of address key a (a relay's, api/relay.c). */
void api_door_release(struct api_door *d, const unsigned char a[16]);
/* A connection handed over holds its client's place in the counts twice: by its relay and by
 * libmicrohttpd, from MHD_add_connection() until libmicrohttpd is done with the connection
 * (its NOTIFY_CONNECTION callback, MHD_CONNECTION_NOTIFY_CLOSED); the place is given back when
 * both have let go, so that connections libmicrohttpd still holds never outnumber what the
 * door admits, however fast a client closes and connects again. */
struct api_hold;
/* The relay let go of h (or, when MHD_add_connection() failed, nobody took it): also
 * libmicrohttpd's hold when libmicrohttpd never claimed it (it never started the connection). */
void api_door_relay_done(struct api_door *d, struct api_hold *h);
/* libmicrohttpd started the connection on its end fd: its hold (NULL when none is known). */
struct api_hold *api_door_claim(struct api_door *d, int fd);
/* The client address of a hold libmicrohttpd claimed (16 bytes, as the door counts it); it
 * does not change while libmicrohttpd holds the connection. */
const unsigned char *api_hold_address(const struct api_hold *h);
/* libmicrohttpd is done with the connection of h (claimed). */
void api_door_mhd_done(struct api_door *d, struct api_hold *h);
/* The whole answer "HTTP/1.1 status ..." with {"error":{code, message}} and Connection: close,
 * in buf; its length, or -1 when it does not fit. */
int api_door_error_text(char *buf, size_t size, unsigned status, const char *code, const char *msg);
/* One short line about a refused request, rate-limited (10 a minute). */
void api_door_log_request(struct api_door *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

struct api_server {
    struct MHD_Daemon *mhd;
    struct api_door *door;
    int listen_fd;
    int tls;
    struct api_hooks hooks;
    char *db_path;  /* owned */
    char *token;    /* owned, NULL: writes refused */
    size_t token_len;
    int auth_all;
    struct api_tls *tls_ctx;  /* owned unless tls_borrowed; HTTPS (tls set): api/tls.h */
    int tls_borrowed;         /* tls_ctx is api_opts.tls, its caller's */
    pthread_key_t db_key;     /* each HTTP thread's struct db */
    int db_key_made;
    /* A failed open is remembered for a while, so every request does not retry (and wait)
     * while the database cannot be opened; under db_mu. */
    pthread_mutex_t db_mu;
    int db_mu_made;
    int64_t db_retry_ms; /* monotonic: no new open before */
    char db_error[256];
    struct api_cache *cache; /* owned; made on first use, under db_mu */
    struct api_estates *estates; /* owned; made on first use, under db_mu (api/estates.c) */
    long debug_delay_ms;     /* -Dtest_hooks: VSLINT_DEBUG_HANDLER_DELAY_MS (api/http.c) */
    char debug_delay_path[64]; /* and VSLINT_DEBUG_HANDLER_DELAY_PATH: only that path's */
    struct api_work *work;   /* owned: the long handlers' threads (api/work.c) */
    /* Deferred requests handed over and not yet complete (answer sent or connection closed):
     * api_stop() lets their answers go out before it stops libmicrohttpd. */
    _Atomic unsigned deferred_open;
    int stmt_cache;          /* api_opts.stmt_cache */
};

struct api_req {
    struct api_server *srv;
    struct MHD_Connection *conn;
    const char *method;
    const char *path;
    const char *path_arg; /* what follows a route ending in '/', e.g. the fingerprint */
    struct vsl_buf body;
    int too_big;
    int started; /* the access handler has seen this request */
    int claims;  /* renders of the answer cache's this request owes (api/cache.c) */
    /* Run on a thread of api/work.c while its connection is suspended: the answer is kept
     * here (deferred_resp, owned, with deferred_status; NULL: close the connection) and
     * queued once libmicrohttpd resumes the connection and calls the access handler again. */
    enum MHD_Result (*deferred)(struct api_req *r); /* its handler (an api_handler) */
    int deferred_done;
    unsigned deferred_status;
    struct MHD_Response *deferred_resp;
    unsigned char addr[16]; /* the client's address (IPv4 mapped), when has_addr */
    int has_addr;
    unsigned retry_after_s; /* a 503 says Retry-After: this many seconds (0: nothing) */
    /* Why a parameter was refused, for api_fail(). */
    unsigned fail_status;
    const char *fail_code;
    char fail_msg[512];
};

typedef enum MHD_Result (*api_handler)(struct api_req *r);

/* Responders. Each queues a response and returns what the access handler must return. */
/* Sends body (a reference this function steals) with status and Content-Type JSON. */
enum MHD_Result api_respond_json(struct api_req *r, unsigned status, json_t *body);
/* Sends body with 200 and an ETag over its bytes; 304 when If-None-Match names it. */
enum MHD_Result api_respond_json_etag(struct api_req *r, json_t *body);
/* Sends {"error":{"code","message"}}. */
enum MHD_Result api_respond_error(struct api_req *r, unsigned status, const char *code,
                                  const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Sends text (owned, malloc'd) of len bytes with the given Content-Type. */
enum MHD_Result api_respond_text(struct api_req *r, unsigned status, const char *ctype,
                                 char *text, size_t len);
/* A paged read of db/: query's page into *items (a new reference), the count of every match
 * into *total and the following page's cursor (malloc'd, NULL on the last page) into *next;
 * -EINVAL for a cursor the server did not make. */
typedef int api_page_fn(struct db *db, const void *query, json_t **items, int64_t *total,
                        char **next);
/* Reads a page with read(query) on this thread's connection and sends it as
 * {"<key>":items,"total":N,"next":URL} (next omitted on the last page) with an ETag; a cursor
 * this server did not issue is a 400, another failure a 500 saying what was being done. */
enum MHD_Result api_page(struct api_req *r, const char *what, const char *key, api_page_fn *read,
                         const void *query);
/* ---- the cache of rendered answers (api/cache.c) ---- */
/* An immutable rendered text shared by reference: the cache holds one, each request answering
 * from it another, which libmicrohttpd drops once the answer is sent. Whoever holds a
 * reference may read data until it drops it; nobody writes it after api_text_new(). */
struct api_text {
    _Atomic unsigned refs;
    size_t len;
    char data[]; /* len bytes, then a NUL */
};
/* A copy of the len bytes at p with one reference (the caller's); NULL when out of memory. */
struct api_text *api_text_new(const char *p, size_t len);
struct api_text *api_text_ref(struct api_text *t); /* another reference to t; NULL: NULL */
void api_text_unref(struct api_text *t);           /* NULL is a no-op */
struct api_cache;
void api_cache_free(struct api_cache *c); /* NULL is a no-op */
/* The generation of the data served: it moves on when a commit changed what answers are
 * rendered from (a snapshot, findings: db_content_stamp()) or the configuration changed, not
 * when an incremental round only confirmed the snapshot, so an answer rendered from what a
 * request reads after asking for generation g stays right while the generation is g. Figures
 * that move with the clock (snapshot ages, last success) are not part of what is cached under
 * it. 0 when it cannot tell: cache nothing. */
uint64_t api_generation(struct api_req *r);
/* api_generation() into *content, and in *commits one that moves with every commit anyone
 * made to the database (PRAGMA data_version), for what every commit changes (the database's
 * size), read together. 0 and 0 when it cannot tell. */
void api_generations(struct api_req *r, uint64_t *content, uint64_t *commits);
/* The text stored under key at gen: on a hit 1, a reference to the plain bytes in *body, to
 * the gzip-compressed ones in *gz when want_gz and they were stored (else NULL), and *hash
 * what api_cache_put() was given; the caller drops the references. On a miss 0, and this
 * request renders the answer and puts it: while it does, other requests for the same key and
 * gen wait for its answer instead of rendering it too (single-flight). The request's claim
 * ends with api_cache_put() of that key, or at the latest when its handler returns
 * (api_cache_release(), called by api/http.c), kept or not. */
int api_cache_get(struct api_req *r, const char *key, uint64_t gen, int want_gz,
                  struct api_text **body, struct api_text **gz, uint64_t *hash);
/* Keeps a copy of body (and of gz, its compressed bytes, when not NULL) under key at gen,
 * replacing what an older generation left there, and ends this request's claim on it. Best
 * effort: out of memory keeps nothing. */
void api_cache_put(struct api_req *r, const char *key, uint64_t gen, const char *body, size_t len,
                   uint64_t hash, const char *gz, size_t gzlen);
/* Ends every claim of r's (api_cache_get()): after its handler has returned. */
void api_cache_release(struct api_req *r);
/* Lookups answered from the cache at once, after waiting for another request's render, and
 * renders, since the start: for /metrics. */
void api_cache_counts(struct api_server *s, uint64_t *hits, uint64_t *waits, uint64_t *renders);
/* This request's path and parameters, the key of its answer (malloc'd; NULL: out of memory). */
char *api_cache_key(struct api_req *r);
/* Answers this request from the cache when it holds its answer at gen: 1 (and *ret), else 0. */
int api_respond_cached(struct api_req *r, uint64_t gen, enum MHD_Result *ret);
/* Sends the JSON text s (owned, malloc'd) of len bytes as api_respond_json_etag() does, and
 * keeps it in the cache as this request's answer at gen (0: not kept). */
enum MHD_Result api_respond_json_text(struct api_req *r, uint64_t gen, char *s, size_t len);
/* The names of fields= (at most API_MAX_FIELDS, each shorter than 48 bytes) into names; 0 with
 * *n = 0 when there is none, -1 when it is malformed (api_bad called). */
int api_fields(struct api_req *r, char names[][48], size_t *n);

/* An answer in pieces, some of which are kept rendered (/metrics): each piece's text, and the
 * same text as raw deflate data that other pieces may follow (api_deflate_piece()). */
struct api_piece {
    char *text; /* owned */
    size_t len;
    char *z; /* owned, or NULL: not compressed */
    size_t zlen;
    uint32_t crc; /* CRC-32 of text */
};
/* Whether the request's Accept-Encoding takes gzip. */
int api_wants_gzip(struct api_req *r);
/* The len bytes at s as raw deflate data into *out (malloc'd): ending with a full flush, which
 * other pieces may follow, or finished when last. 0, or -1 (out of memory). */
int api_deflate_piece(const char *s, size_t len, int last, char **out, size_t *outlen);
/* Sends the texts of the n pieces one after another (200, ctype; taken): to a client that
 * takes gzip, when every piece has its deflate data (only the last finished), as one gzip
 * stream of those, compressing nothing here. */
enum MHD_Result api_respond_pieces(struct api_req *r, const char *ctype, struct api_piece *p,
                                   size_t n);
void api_pieces_free(struct api_piece *p, size_t n);

/* ---- the long handlers' threads (api/work.c) ---- */
struct api_work;
/* threads threads, at most queue requests waiting for them. 0 or a negative error. */
int api_work_new(unsigned threads, unsigned queue, struct api_work **out);
/* Suspends r's connection (from its access handler) and hands r to a thread, which calls
 * api_deferred_run(r); -EAGAIN when queue requests already wait, -EUSERS when
 * API_WORK_PER_ADDRESS of them are from r's address (r->has_addr), -ESHUTDOWN when the threads
 * are stopping: then nothing was suspended and r is still the caller's. */
int api_work_submit(struct api_work *w, struct api_req *r);
/* Requests waiting and running now, refused since the start, and skipped because their client
 * had left while they waited (for /metrics). */
void api_work_counts(struct api_work *w, uint64_t *waiting, uint64_t *running, uint64_t *refused,
                     uint64_t *abandoned);
/* Lets the running handlers finish, answers those still waiting with api_deferred_cancel()
 * and ends the threads: before MHD_stop_daemon(), which must find no suspended connection.
 * Later submits are refused. NULL is a no-op. */
void api_work_stop(struct api_work *w);
/* After MHD_stop_daemon(): no thread submits any more. NULL is a no-op. */
void api_work_free(struct api_work *w);
/* api/http.c: runs r's handler on this thread, keeps its answer and resumes the connection;
 * r belongs to libmicrohttpd again when it returns. */
void api_deferred_run(struct api_req *r);
/* api/http.c: answers r 503 (the server is stopping) and resumes the connection. */
void api_deferred_cancel(struct api_req *r);
/* api/http.c: whether r's client has gone (the relay ended libmicrohttpd's side of the
 * connection, a suspended connection's socket stays open), so its answer would be read by no
 * one. */
int api_deferred_client_gone(const struct api_req *r);
/* api/http.c: ends r unanswered (its claims released, the connection resumed and closed). */
void api_deferred_drop(struct api_req *r);

/* ---- the estate shared by the what-if requests (api/estates.c) ---- */
struct api_estates;
void api_estates_free(struct api_estates *x); /* NULL is a no-op; after the handlers stopped */
/* One configured vCenter (or array, as api_status() lists them) in a shared snapshot. */
struct api_snap_site {
    char name[128];
    int interval_s;         /* its poll interval when the snapshot was built */
    struct estate *estate;  /* owned by the snapshot; NULL: never polled successfully */
    /* Every enabled check over estate with the snapshot's settings, kept for every what-if on
     * it (struct chk_site.base): their findings on LUNs, all a what-if reads of them
     * (chk_site_base_trim()); base_ok 0: they failed, and each request runs them again to say
     * why. */
    struct chk_results base;
    int base_ok;
    /* Owned: base indexed by LUN once for every what-if (struct chk_site.base_luns); NULL
     * when base failed or out of memory (each request then indexes it itself). */
    struct chk_lun_index *base_luns;
    /* Owned: estate's VMs by datastore (struct chk_site.ds_vms); NULL when out of memory. */
    struct chk_ds_vms *ds_vms;
};
/* Every configured vCenter's stored snapshot, scoped to the running configuration, and that
 * configuration's check settings: read-only once published, shared by every request holding
 * a reference, freed when the last reference goes. */
struct api_snap {
    unsigned refs;     /* under the shared estate's lock */
    uint64_t gen;      /* of the stored snapshots it was read after (0: one request's own) */
    uint64_t cfg_gen;  /* of the configuration (api_hooks.config_generation) */
    struct chk_config cfg;
    struct api_snap_site *sites; /* in configuration order */
    size_t n;
};
/* A reference to a snapshot at least as new as the database and the configuration are now:
 * the one already built, or one this request builds while any other that wants it waits
 * (one build however many ask). Release it with api_snap_put(). 0, or a negative error with
 * what was being done in *what. */
int api_snap_get(struct api_req *r, struct api_snap **out, const char **what);
void api_snap_put(struct api_req *r, struct api_snap *s); /* NULL is a no-op */
/* Snapshots built and published since the server started (vslint_estate_builds_total). */
uint64_t api_estate_builds(struct api_server *srv);

/* Sends the error a parameter check recorded with api_bad(). */
enum MHD_Result api_fail(struct api_req *r);
/* Answers a database error as 500 (logged once). */
enum MHD_Result api_db_error(struct api_req *r, const char *what, int err);

/* Records "parameter NAME: why" as a 400 for api_fail(); returns -1. */
int api_bad(struct api_req *r, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Query parameters. api_args_allowed() refuses any parameter not in names (NULL-ended, at most
 * 64), any given more than once and any value longer than API_MAX_ARG. 0 or -1 (api_bad
 * called). */
int api_args_allowed(struct api_req *r, const char *const *names);
const char *api_arg(struct api_req *r, const char *name); /* NULL when absent or empty */
/* Parameter name as a whole number from lo to hi into *out (absent: unchanged), or "all" as -1
 * when all is set. Digits only: strtol's sign and leading blanks ("+5", " 5", "-0") and an
 * empty value (which api_arg() takes as absent) are refused, not read as a number or as the
 * default. 0 or -1 (api_bad called). */
int api_arg_whole(struct api_req *r, const char *name, long lo, long hi, int all, long *out);
/* limit= as 1..API_MAX_PAGE, API_DEFAULT_PAGE when absent. 0 or -1. */
int api_arg_limit(struct api_req *r, int *limit);
/* The URL of the next page: this request's path and parameters with cursor= replaced.
 * Returns a malloc'd string or NULL when out of memory. */
char *api_next_url(struct api_req *r, const char *cursor);

/* This thread's database connection, opened on first use; NULL (and 500 sent is up to the
 * caller) when it cannot be opened. */
struct db *api_db(struct api_req *r);
/* 1 when the daemon can write the database (or nobody said otherwise); 0 with why. */
int api_db_writable(struct api_req *r, char *why, size_t len);
/* The daemon's site rules (catalogue entries) and those that failed in its last evaluation,
 * two arrays (empty without the hook): new references. 0 or -ENOMEM. */
int api_site_rules(struct api_req *r, json_t **checks, json_t **errors);
/* A poll in flight that has heard nothing from its vCenter for API_STALL_MS. */
int api_stalled(const struct api_vcenter_status *s);
/* The answer when api_db() gave NULL: 503 with why the database cannot be opened. */
enum MHD_Result api_db_unavailable(struct api_req *r);

/* Unix milliseconds as "2026-01-31T12:00:00Z" in buf (at least 32 bytes); "" for 0. */
const char *api_iso_time(int64_t ms, char *buf, size_t size);
/* Sets mode, collector_version and last_full_read of vCenter s in o (a summary's vcenter entry,
 * /readyz's); returns o. */
json_t *api_vcenter_mode_json(const struct api_vcenter_status *s, json_t *o);

/* The daemon's view of every vCenter; *out malloc'd. 0 or a negative error. */
int api_status(struct api_req *r, struct api_vcenter_status **out, size_t *n);


/* Handlers (api/handlers.c, api/inventory.c, api/summary.c, api/metrics.c). */
enum MHD_Result api_h_healthz(struct api_req *r);
enum MHD_Result api_h_readyz(struct api_req *r);
enum MHD_Result api_h_findings(struct api_req *r);
enum MHD_Result api_h_finding(struct api_req *r);
enum MHD_Result api_h_checks(struct api_req *r);
enum MHD_Result api_h_plan(struct api_req *r);
enum MHD_Result api_h_polls(struct api_req *r);
enum MHD_Result api_h_summary(struct api_req *r);
/* /api/v1/inventory/KIND, KIND one of api_inventory_kinds (api/inventory.c). */
enum MHD_Result api_h_inventory(struct api_req *r);
extern const char *const api_inventory_kinds[];
enum MHD_Result api_h_metrics(struct api_req *r);
enum MHD_Result api_h_history(struct api_req *r); /* api/history.c */
enum MHD_Result api_h_capacity(struct api_req *r); /* api/capacity.c */
enum MHD_Result api_h_gate(struct api_req *r);      /* api/whatif.c */
enum MHD_Result api_h_placement(struct api_req *r); /* api/whatif.c */

/* api_score() and api_counts() are in api/api.h: the digest reports the same score. */

#endif
