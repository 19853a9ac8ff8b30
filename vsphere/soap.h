/* The vSphere SOAP client: one libcurl handle per vCenter, the session cookie, envelopes, faults.
 * Every call streams its response through vim_xml; errors leave a one-line reason in the client. */
#ifndef VIM_SOAP_H
#define VIM_SOAP_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "util/tls.h"
#include "vsphere/xml.h"

struct vim_opts {
    const char *url;     /* https://host/sdk */
    const char *ca_file; /* NULL: the system trust store */
    int insecure;        /* 1: skip certificate and host name verification */
    /* "AA:BB:..." (32 bytes), or NULL: the SHA-256 fingerprint of the DER certificate vCenter
     * must present (govc's and `openssl x509 -fingerprint -sha256` form). Replaces the CA and
     * host name checks: the pinned certificate is trusted, any other refused. */
    const char *thumbprint;
    int timeout_s;       /* whole-request timeout */
    int max_objects;     /* RetrievePropertiesEx page size to ask for */
    /* NULL, or where to store the CLOCK_MONOTONIC milliseconds at which vCenter last sent
     * bytes on any of the poll's connections (the daemon tells a stalled vCenter by it). */
    _Atomic int64_t *activity_ms;
    /* NULL, or a flag another thread sets to abandon the poll (vslint serve stopping): the
     * transfer in flight ends within about a second (curl's progress callback runs at least
     * once a second, also while the server sends nothing), and every request after it fails
     * at once, with -ECANCELED. */
    const _Atomic int *cancel;
    /* NULL, or where every request and answer is recorded (`vslint record`, util/capture.h)
     * under the label capture_source; NULL: nothing is copied or kept. */
    struct vsl_capture *capture;
    const char *capture_source;
};

struct vim_stats {
    int64_t requests;
    int64_t bytes_wire; /* bytes received (compressed size when gzip was used) */
    int64_t bytes_xml;  /* bytes of XML parsed */
};

/* The first timeout of a poll, shared by its connections (vim_client.stall). */
struct vim_stall {
    atomic_int set;     /* 0, then 1 for good */
    pthread_mutex_t mu; /* err */
    char err[1024];     /* the request that timed out: its error, as it was reported */
};

struct vim_client {
    void *curl;              /* CURL * */
    void *headers;           /* struct curl_slist * */
    char *url;               /* owned */
    char *soap_action;       /* owned, "urn:vim25/6.7" */
    char *api_version;       /* owned, "6.7" */
    struct vim_opts opts;    /* strings borrowed from the caller's configuration */
    char err[1024];          /* the last error, one line, for humans */
    char fault[128];         /* the last SOAP fault's type, e.g. "InvalidLogin" */
    struct vim_stats stats;
    int reconnected;         /* the last request went over a new connection after an old one */
    struct vsl_tls tls;      /* the pin and what the server showed (util/tls.h) */
    int timed_out;           /* a request timed out: the next ones fail at once, so a stalled
                              * vCenter costs one timeout, not one per request left */
    /* Set when a request of this client or of any client cloned from it, directly or not (the
     * poll's other connections: the hosts' stream, their per-host workers, the pages'
     * prefetch) timed out: the others' requests in flight are cut short and their next ones
     * fail at once, as timed_out does for one client, each with the words of the request that
     * timed out. Points at the first client's stall_own: every client cloned from it, directly
     * or not, is freed before it. */
    struct vim_stall *stall;
    struct vim_stall stall_own;
    int closing;             /* vim_client_closing(): the requests close the session */
    int64_t request_ms;      /* CLOCK_MONOTONIC ms at which the request in flight began */
    /* Service content (owned strings). */
    char *root_folder, *property_collector, *view_manager, *session_manager, *about;
    char *version, *build; /* owned: AboutInfo.version and .build, NULL when not sent */
    /* Also from the service content, NULL when the server has none (an ESXi host). */
    char *alarm_manager, *perf_manager;
};

/* How long a request that closes the session (vim_client_closing()) may take once the poll
 * is abandoned (opts.cancel set): the daemon stopping still logs out of vCenter, but does not
 * wait on a vCenter that does not answer. */
#define VIM_CLOSE_MS 2000

int vim_client_new(const struct vim_opts *opts, struct vim_client **out);
/* closing 1: the requests that follow close the session (DestroyPropertyCollector,
 * DestroyView, Logout), and go out even after opts.cancel is set, each ending within
 * VIM_CLOSE_MS (about a second more: curl's progress callback) of its start; closing 0: back
 * to abandoning every request at once. Returns the previous setting, to restore. */
int vim_client_closing(struct vim_client *c, int closing);
void vim_client_free(struct vim_client *c); /* NULL is a no-op */
/* A second connection to the same vCenter sharing c's session (its cookie) and SOAPAction,
 * for requests made in parallel; no service content. *out is owned by the caller. */
int vim_client_clone(const struct vim_client *c, struct vim_client **out);
const char *vim_client_error(const struct vim_client *c);

/* Sends body (the inside of soapenv:Body, already escaped) and parses the answer. Elements at
 * emit_depth go to fn as they close (see vim_xml). On success *out (may be NULL) receives the
 * parser, whose vim_xml_doc() holds the rest of the response; the caller frees it.
 * A SOAP fault returns -VSL_EFAULT (or -VSL_ELOGIN / -VSL_ENOAUTH) with c->fault set. */
int vim_call(struct vim_client *c, const char *body, int emit_depth, vim_xml_emit_fn fn, void *ctx,
             struct vim_xml **out);

/* The two halves of vim_call(), for an answer fetched on one thread and parsed on another:
 * vim_fetch() POSTs body and hands the raw answer to sink as it arrives (a negative return
 * aborts the transfer with that error), and sets its HTTP status. The other side parses it
 * exactly as vim_call() would have (faults, statuses, malformed XML), reporting errors in c:
 * vim_answer_new() makes the parser, vim_xml_feed() takes the bytes, vim_answer_end() says
 * what they were (r: the feeding's error, or 0) and frees x unless *out takes it. */
typedef int vim_sink_fn(void *ctx, const char *data, size_t len);
int vim_fetch(struct vim_client *c, const char *body, vim_sink_fn *sink, void *ctx, long *status);
int vim_answer_new(struct vim_client *c, int emit_depth, vim_xml_emit_fn fn, void *ctx,
                   struct vim_xml **x);
int vim_answer_end(struct vim_client *c, struct vim_xml *x, long status, int r,
                   struct vim_xml **out);

/* The first element inside soapenv:Body of a parsed response (e.g. LoginResponse). */
struct vim_node *vim_response(struct vim_xml *x);

/* Plain GET of a path under the SDK URL into a bounded buffer (vimServiceVersions.xml). */
int vim_get(struct vim_client *c, const char *path, char **out, size_t max);

#endif
