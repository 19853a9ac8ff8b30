/* The libmicrohttpd side of the API: listening socket, thread pool and limits, the route
 * table, bearer-token checks, query parameters and the few respond helpers every handler uses. */
#define _GNU_SOURCE /* POLLRDHUP */
#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "api/api-private.h"
#include "api/tls.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/isotime.h"
#include "util/log.h"
#include "web/assets.h"

#define METHODS_GET "GET, HEAD"

enum auth { AUTH_READ, AUTH_NEVER, AUTH_WRITE };

struct route {
    const char *path;   /* exact, or a prefix when it ends in '/' */
    const char *method; /* "GET" routes answer HEAD too */
    api_handler handler;
    enum auth auth;
    const char *const *names; /* what may follow a prefix (NULL-ended), or NULL: any name */
    /* Runs for seconds on a large estate: on api/work.c's threads, not libmicrohttpd's. */
    int long_running;
    /* What it answers, in a few words: `vslint serve --help` lists the routes from here, and a
     * test holds vslint(1) and the README to the same list. For a prefix with any name, the
     * name's placeholder first: "{fingerprint} ...". */
    const char *help;
};

static const struct route routes[] = {
    {"/healthz", "GET", api_h_healthz, AUTH_NEVER, NULL, 0, "200 while the process runs"},
    {"/readyz", "GET", api_h_readyz, AUTH_READ, NULL, 0,
     "200 once every source polled once"},
    {"/metrics", "GET", api_h_metrics, AUTH_READ, NULL, 0, "Prometheus text format"},
    {"/api/v1/findings", "GET", api_h_findings, AUTH_READ, NULL, 0,
     "findings, critical first, paged"},
    {"/api/v1/findings/", "GET", api_h_finding, AUTH_READ, NULL, 0,
     "{fingerprint} one finding, whatever its status"},
    {"/api/v1/checks", "GET", api_h_checks, AUTH_READ, NULL, 0, "the catalogue of checks"},
    {"/api/v1/summary", "GET", api_h_summary, AUTH_READ, NULL, 0,
     "counts, score, each source's polls"},
    {"/api/v1/history", "GET", api_h_history, AUTH_READ, NULL, 0,
     "per day: score, findings, polls"},
    /* Every finding read and written out: seconds at 100,000 VMs. */
    {"/api/v1/plan", "GET", api_h_plan, AUTH_READ, NULL, 1,
     "the remediation plan (text)"},
    {"/api/v1/inventory/", "GET", api_h_inventory, AUTH_READ, api_inventory_kinds, 0,
     "the stored inventory, paged"},
    {"/api/v1/inventory/datastores/history", "GET", api_h_capacity, AUTH_READ, NULL, 0,
     "a datastore's capacity and runway"},
    {"/api/v1/polls", "POST", api_h_polls, AUTH_WRITE, NULL, 0, "poll now (needs the token)"},
    /* A question about the snapshots, which changes nothing: a read. These two build or
     * judge the shared estate (api/estates.c). */
    {"/api/v1/gate", "POST", api_h_gate, AUTH_READ, NULL, 1, "the what-if gate"},
    {"/api/v1/placement", "GET", api_h_placement, AUTH_READ, NULL, 1,
     "where a proposal fits, by headroom"},
};

#define NROUTES (sizeof(routes) / sizeof(routes[0]))

int api_route_doc(size_t i, char *path, size_t size, const char **method, const char **help)
{
    if (i >= NROUTES)
        return -1;
    const struct route *rt = &routes[i];
    const char *h = rt->help;
    size_t n = (size_t)snprintf(path, size, "%s", rt->path);
    if (rt->path[strlen(rt->path) - 1] == '/') {
        if (rt->names) {
            for (size_t k = 0; rt->names[k] && n < size; k++)
                n += (size_t)snprintf(path + n, size - n, "%s%s", k ? "," : "{", rt->names[k]);
            if (n < size)
                snprintf(path + n, size - n, "}");
        } else {
            const char *sp = strchr(h, ' ');
            size_t len = sp ? (size_t)(sp - h) : strlen(h);
            if (n < size)
                snprintf(path + n, size - n, "%.*s", (int)len, h);
            h = sp ? sp + 1 : "";
        }
    }
    *method = rt->method;
    *help = h;
    return 0;
}

/* ---- respond helpers ----------------------------------------------------------------------- */

static enum MHD_Result queue(struct api_req *r, unsigned status, struct MHD_Response *resp)
{
    enum MHD_Result ret;

    if (!resp)
        return MHD_NO; /* out of memory: libmicrohttpd closes the connection */
    if (r->deferred && !r->deferred_done) {
        /* On a thread of api/work.c: libmicrohttpd takes the answer on its own thread once
         * the connection is resumed (on_request()). */
        if (r->deferred_resp)
            MHD_destroy_response(r->deferred_resp);
        r->deferred_resp = resp;
        r->deferred_status = status;
        return MHD_YES;
    }
    ret = MHD_queue_response(r->conn, status, resp);
    MHD_destroy_response(resp);
    return ret;
}

/* Whether the request's Accept-Encoding takes gzip ("gzip" or "*", not with q=0). */
static int accepts_gzip(struct api_req *r)
{
    const char *ae =
        MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING);

    for (const char *p = ae; p && *p; p += strcspn(p, ",")) {
        p += strspn(p, " \t,");
        size_t tok = strcspn(p, " \t;,");
        if (!((tok == 4 && !strncasecmp(p, "gzip", 4)) || (tok == 1 && *p == '*')))
            continue;
        const char *end = p + strcspn(p, ","), *q = strstr(p, "q=");
        return !(q && q < end && strtod(q + 2, NULL) == 0);
    }
    return 0;
}

/* len bytes at s gzip-compressed into *out (malloc'd, *outlen bytes): 0, or -1 (out of memory). */
static int gzip_bytes(const char *s, size_t len, char **out, size_t *outlen)
{
    z_stream z = {0};
    unsigned char *buf = NULL;
    int r = -1;

    *out = NULL;
    if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return -1;
    uLong cap = deflateBound(&z, (uLong)len);
    buf = malloc(cap);
    z.next_in = (Bytef *)s;
    z.avail_in = (uInt)len;
    z.next_out = buf;
    z.avail_out = (uInt)cap;
    if (buf && deflate(&z, Z_FINISH) == Z_STREAM_END) {
        *out = (char *)buf;
        *outlen = z.total_out;
        buf = NULL;
        r = 0;
    }
    deflateEnd(&z);
    free(buf);
    return r;
}

/* resp with its encoding headers: gzip-compressed bytes when gz; vary when the answer depends
 * on Accept-Encoding (it does from API_GZIP_MIN bytes). */
static struct MHD_Response *encoded(struct MHD_Response *resp, int gz, int vary)
{
    if (gz)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
    if (vary)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_VARY, "Accept-Encoding");
    return resp;
}

/* A response of the len bytes at s (taken: freed); gz and vary as encoded() takes them. */
static struct MHD_Response *bytes_response(char *s, size_t len, int gz, int vary)
{
    struct MHD_Response *resp = MHD_create_response_from_buffer(len, s, MHD_RESPMEM_MUST_FREE);

    if (!resp) {
        free(s);
        return NULL;
    }
    return encoded(resp, gz, vary);
}

/* The answer's bytes, gzip-compressed when the client takes it and they are worth it (a
 * findings page of 55 KB is about 6 KB). Takes s (freed); *gz says whether it compressed. */
static struct MHD_Response *body_response(struct api_req *r, char *s, size_t len, int *gz)
{
    char *z;
    size_t zlen, plain = len;

    *gz = 0;
    if (len >= API_GZIP_MIN && accepts_gzip(r) && gzip_bytes(s, len, &z, &zlen) == 0) {
        free(s);
        s = z;
        len = zlen;
        *gz = 1;
    }
    return bytes_response(s, len, *gz, plain >= API_GZIP_MIN);
}

int api_wants_gzip(struct api_req *r)
{
    return accepts_gzip(r);
}

int api_deflate_piece(const char *s, size_t len, int last, char **out, size_t *outlen)
{
    z_stream z = {0};
    unsigned char *buf = NULL;
    int r = -1, rc;

    *out = NULL;
    if (deflateInit2(&z, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return -1;
    uLong cap = deflateBound(&z, (uLong)len) + 64; /* and the flush's empty block */
    buf = malloc(cap);
    z.next_in = (Bytef *)s;
    z.avail_in = (uInt)len;
    z.next_out = buf;
    z.avail_out = (uInt)cap;
    /* A full flush ends on a byte boundary and forgets the window: what follows may be any
     * other piece. Room left over says all was written. */
    rc = buf ? deflate(&z, last ? Z_FINISH : Z_FULL_FLUSH) : Z_MEM_ERROR;
    if (last ? rc == Z_STREAM_END : rc == Z_OK && z.avail_in == 0 && z.avail_out > 0) {
        *out = (char *)buf;
        *outlen = z.total_out;
        buf = NULL;
        r = 0;
    }
    deflateEnd(&z);
    free(buf);
    return r;
}

static void put_le32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

enum MHD_Result api_respond_pieces(struct api_req *r, const char *ctype, struct api_piece *p,
                                   size_t n)
{
    size_t len = 0, zlen = 18, at;
    int whole = 1;
    char *out;

    for (size_t i = 0; i < n; i++) {
        len += p[i].len;
        zlen += p[i].zlen;
        whole = whole && p[i].z;
    } /* whole: every piece has its deflate data */
    /* A gzip member: its header, the pieces' deflate data one after another (the last one
     * finished), and the CRC-32 and length of the whole text, combined from the pieces'. */
    if (whole && len >= API_GZIP_MIN && accepts_gzip(r) && (out = malloc(zlen))) {
        static const unsigned char gz_head[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
        uLong crc = crc32(0, Z_NULL, 0);
        memcpy(out, gz_head, sizeof(gz_head));
        at = sizeof(gz_head);
        for (size_t i = 0; i < n; i++) {
            memcpy(out + at, p[i].z, p[i].zlen);
            at += p[i].zlen;
            crc = crc32_combine(crc, p[i].crc, (z_off_t)p[i].len);
        }
        put_le32((unsigned char *)out + at, (uint32_t)crc);
        put_le32((unsigned char *)out + at + 4, (uint32_t)len);
        api_pieces_free(p, n);
        struct MHD_Response *resp = bytes_response(out, zlen, 1, 1);
        if (!resp)
            return MHD_NO;
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
        MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
        return queue(r, MHD_HTTP_OK, resp);
    }
    /* Pieces from the cache may carry their deflate data only: then this is out of memory. */
    int texts = 1;
    for (size_t i = 0; i < n; i++)
        texts = texts && p[i].text;
    out = texts ? malloc(len + 1) : NULL;
    at = 0;
    for (size_t i = 0; out && i < n; at += p[i].len, i++)
        memcpy(out + at, p[i].text, p[i].len);
    api_pieces_free(p, n);
    if (!out)
        return MHD_NO;
    out[len] = '\0';
    return api_respond_text(r, MHD_HTTP_OK, ctype, out, len);
}

void api_pieces_free(struct api_piece *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(p[i].text);
        free(p[i].z);
        p[i].text = p[i].z = NULL;
    }
}

enum MHD_Result api_respond_text(struct api_req *r, unsigned status, const char *ctype,
                                 char *text, size_t len)
{
    int gz;
    struct MHD_Response *resp = body_response(r, text, len, &gz);

    if (!resp)
        return MHD_NO;
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    if (status == MHD_HTTP_UNAUTHORIZED)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"vslint\"");
    if (status == MHD_HTTP_SERVICE_UNAVAILABLE && r->retry_after_s) {
        char secs[16];
        snprintf(secs, sizeof(secs), "%u", r->retry_after_s);
        MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, secs);
    }
    return queue(r, status, resp);
}

static char *dump(json_t *body, size_t *len)
{
    char *s = json_dumps(body, JSON_COMPACT | JSON_PRESERVE_ORDER);

    *len = s ? strlen(s) : 0;
    return s;
}

enum MHD_Result api_respond_json(struct api_req *r, unsigned status, json_t *body)
{
    size_t len;
    char *s = body ? dump(body, &len) : NULL;

    json_decref(body);
    if (!s)
        return MHD_NO;
    return api_respond_text(r, status, "application/json", s, len);
}

/* Whether an If-None-Match list ("a", W/"b", *) names etag. */
static int etag_matches(const char *inm, const char *etag)
{
    size_t n = strlen(etag);

    for (const char *p = inm; *p;) {
        while (*p == ' ' || *p == ',' || *p == '\t')
            p++;
        if (*p == '*')
            return 1;
        if (!strncmp(p, "W/", 2))
            p += 2;
        if (!strncmp(p, etag, n) && (p[n] == '\0' || p[n] == ',' || p[n] == ' '))
            return 1;
        while (*p && *p != ',')
            p++;
    }
    return 0;
}

static uint64_t hash_of(const char *s, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ULL;

    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

/* The ETag of an answer of len bytes hashing to h, as this request gets it, into etag; 1 (and
 * the 304 queued, *ret) when If-None-Match names it. */
static int not_modified(struct api_req *r, size_t len, uint64_t h, char etag[32],
                        enum MHD_Result *ret)
{
    struct MHD_Response *resp;
    const char *inm;
    int want_gz = len >= API_GZIP_MIN && accepts_gzip(r);

    /* The compressed bytes are another representation: another tag. */
    snprintf(etag, 32, "\"%016llx%s\"", (unsigned long long)h, want_gz ? "-gz" : "");
    inm = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_IF_NONE_MATCH);
    if (!inm || !etag_matches(inm, etag))
        return 0;
    resp = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
    if (resp)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ETAG, etag);
    *ret = queue(r, MHD_HTTP_NOT_MODIFIED, resp);
    return 1;
}

static enum MHD_Result send_json_response(struct api_req *r, struct MHD_Response *resp,
                                          const char *etag)
{
    if (!resp)
        return MHD_NO;
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    MHD_add_response_header(resp, MHD_HTTP_HEADER_ETAG, etag);
    return queue(r, MHD_HTTP_OK, resp);
}

/* Sends the JSON text s (taken) of len bytes with 200 and an ETag of its hash h, or 304 when
 * If-None-Match names that tag. gz (taken, may be NULL) is s gzip-compressed: sent as it is to
 * a client that takes gzip, else made here if worth it. */
static enum MHD_Result send_json_text(struct api_req *r, char *s, size_t len, uint64_t h,
                                      char *gz, size_t gzlen)
{
    struct MHD_Response *resp;
    char etag[32];
    enum MHD_Result ret;
    int was_gz;

    if (not_modified(r, len, h, etag, &ret)) {
        free(s);
        free(gz);
        return ret;
    }
    if (gz && len >= API_GZIP_MIN && accepts_gzip(r)) {
        free(s);
        resp = bytes_response(gz, gzlen, 1, 1);
    } else {
        free(gz);
        resp = body_response(r, s, len, &was_gz);
    }
    return send_json_response(r, resp, etag);
}

static void text_unref_cb(void *cls)
{
    api_text_unref(cls);
}

/* A response over t's bytes, not copied: the reference (taken) goes with it, and libmicrohttpd
 * drops it once the answer is sent or the connection ends. gz: t is compressed bytes. */
static struct MHD_Response *text_response(struct api_text *t, int gz, int vary)
{
    struct MHD_Response *resp =
        MHD_create_response_from_buffer_with_free_callback_cls(t->len, t->data, text_unref_cb, t);

    if (!resp) {
        api_text_unref(t);
        return NULL;
    }
    return encoded(resp, gz, vary);
}

/* The ETag is a hash of the exact bytes sent, so it changes exactly when the answer does,
 * whoever wrote the database (this daemon or a `vslint check` run beside it). */
enum MHD_Result api_respond_json_etag(struct api_req *r, json_t *body)
{
    size_t len;
    char *s = body ? dump(body, &len) : NULL;

    json_decref(body);
    if (!s)
        return MHD_NO;
    return api_respond_json_text(r, 0, s, len);
}

enum MHD_Result api_respond_json_text(struct api_req *r, uint64_t gen, char *s, size_t len)
{
    uint64_t h = hash_of(s, len);
    char *key = gen ? api_cache_key(r) : NULL, *gz = NULL;
    size_t gzlen = 0;

    if (key) {
        /* Compressed once, when the first client that takes gzip asks. */
        if (len >= API_GZIP_MIN && accepts_gzip(r) && gzip_bytes(s, len, &gz, &gzlen) < 0)
            gz = NULL;
        api_cache_put(r, key, gen, s, len, h, gz, gzlen);
        free(key);
    }
    return send_json_text(r, s, len, h, gz, gzlen);
}

/* A hit is sent from the cache's own bytes, by reference: nothing is copied. */
int api_respond_cached(struct api_req *r, uint64_t gen, enum MHD_Result *ret)
{
    char *key = api_cache_key(r), *z = NULL, etag[32];
    struct api_text *body, *gz;
    size_t zlen;
    uint64_t h;
    int want_gz = accepts_gzip(r);

    if (!key || !api_cache_get(r, key, gen, want_gz, &body, &gz, &h)) {
        free(key);
        return 0;
    }
    size_t len = body->len;
    want_gz = want_gz && len >= API_GZIP_MIN;
    if (want_gz && !gz && gzip_bytes(body->data, len, &z, &zlen) == 0)
        api_cache_put(r, key, gen, body->data, len, h, z, zlen); /* compressed once, kept */
    free(key);
    if (not_modified(r, len, h, etag, ret)) {
        api_text_unref(body);
        api_text_unref(gz);
        free(z);
        return 1;
    }
    if (z) { /* the first client that takes gzip gets the bytes just made */
        api_text_unref(body);
        *ret = send_json_response(r, bytes_response(z, zlen, 1, 1), etag);
    } else if (want_gz && gz) {
        api_text_unref(body);
        *ret = send_json_response(r, text_response(gz, 1, 1), etag);
    } else {
        api_text_unref(gz);
        *ret = send_json_response(r, text_response(body, 0, len >= API_GZIP_MIN), etag);
    }
    return 1;
}

static enum MHD_Result respond_verror(struct api_req *r, unsigned status, const char *code,
                                      const char *fmt, va_list ap)
{
    char msg[1024];

    vsnprintf(msg, sizeof(msg), fmt, ap);
    vsl_utf8_fix(msg); /* it may quote the request, and be cut mid-character */
    return api_respond_json(r, status,
                            json_pack("{s:{s:s,s:s}}", "error", "code", code, "message", msg));
}

enum MHD_Result api_respond_error(struct api_req *r, unsigned status, const char *code,
                                  const char *fmt, ...)
{
    va_list ap;
    enum MHD_Result ret;

    va_start(ap, fmt);
    ret = respond_verror(r, status, code, fmt, ap);
    va_end(ap);
    return ret;
}

int api_bad(struct api_req *r, const char *name, const char *fmt, ...)
{
    va_list ap;
    char why[400];

    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    r->fail_status = MHD_HTTP_BAD_REQUEST;
    r->fail_code = "bad_parameter";
    snprintf(r->fail_msg, sizeof(r->fail_msg), "parameter %s: %s", name, why);
    return -1;
}

int api_fields(struct api_req *r, char names[][48], size_t *n)
{
    const char *spec = api_arg(r, "fields");

    *n = 0;
    for (const char *p = spec; p && *p; p += *p == ',') {
        size_t len = strcspn(p, ",");
        if (len == 0 || len >= 48)
            return api_bad(r, "fields", "'%.*s' is not a field name", (int)len, p);
        if (*n == API_MAX_FIELDS)
            return api_bad(r, "fields", "more than %d fields", API_MAX_FIELDS);
        snprintf(names[(*n)++], 48, "%.*s", (int)len, p);
        p += len;
    }
    return 0;
}

/* fields=a,b: keeps only those members of each item, for clients that need less. A name the
 * items do not have is refused (400), rather than answered with empty objects. */
static int project(struct api_req *r, json_t *items)
{
    char names[API_MAX_FIELDS][48];
    size_t n = 0, i;
    json_t *item;

    if (api_fields(r, names, &n) < 0)
        return -1;
    if (!n)
        return 0;
    for (i = 0; i < n && json_array_size(items); i++)
        if (!json_object_get(json_array_get(items, 0), names[i]))
            return api_bad(r, "fields", "no field '%s'", names[i]);
    json_array_foreach(items, i, item) {
        const char *k;
        json_t *v;
        void *tmp;
        json_object_foreach_safe(item, tmp, k, v) {
            size_t j = 0;
            while (j < n && strcmp(names[j], k))
                j++;
            if (j == n)
                json_object_del(item, k);
        }
    }
    return 0;
}

enum MHD_Result api_page(struct api_req *r, const char *what, const char *key, api_page_fn *read,
                         const void *query)
{
    json_t *items = NULL, *body;
    int64_t total = 0;
    char *next = NULL, *url;
    struct db *db = api_db(r);
    enum MHD_Result ret;
    uint64_t gen;
    size_t len;
    char *s;
    int rc;

    if (!db)
        return api_db_unavailable(r);
    gen = api_generation(r);
    if (api_respond_cached(r, gen, &ret))
        return ret;
    rc = read(db, query, &items, &total, &next);
    if (rc == -EINVAL)
        return api_bad(r, "cursor", "not a cursor this server issued"), api_fail(r);
    if (rc < 0)
        return api_db_error(r, what, rc);
    if (project(r, items) < 0) {
        free(next);
        json_decref(items);
        return api_fail(r);
    }
    url = next ? api_next_url(r, next) : NULL;
    if (next && !url) {
        free(next);
        json_decref(items);
        return MHD_NO;
    }
    free(next);
    body = json_pack("{s:o,s:I}", key, items, "total", (json_int_t)total);
    if (body && url)
        json_object_set_new(body, "next", json_string(url));
    free(url);
    s = body ? dump(body, &len) : NULL;
    json_decref(body);
    return s ? api_respond_json_text(r, gen, s, len) : MHD_NO;
}

enum MHD_Result api_fail(struct api_req *r)
{
    return api_respond_error(r, r->fail_status ? r->fail_status : MHD_HTTP_BAD_REQUEST,
                             r->fail_code ? r->fail_code : "bad_request", "%s", r->fail_msg);
}

enum MHD_Result api_db_error(struct api_req *r, const char *what, int err)
{
    log_warnx("http: %s %s: %s: %s", r->method, r->path, what, vsl_strerror(err));
    return api_respond_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal", "%s: %s", what,
                             vsl_strerror(err));
}

/* ---- query parameters ---------------------------------------------------------------------- */

struct arg_check {
    struct api_req *r;
    const char *const *names;
    int bad;
    uint64_t seen; /* bit i: names[i] was given (a handler allows at most 64) */
};

static enum MHD_Result check_one_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                                     const char *value)
{
    struct arg_check *c = cls;
    size_t i;

    for (i = 0; c->names && c->names[i]; i++)
        if (!strcmp(c->names[i], key))
            break;
    if (!c->names || !c->names[i]) {
        c->bad = api_bad(c->r, key, "unknown parameter");
        return MHD_NO;
    }
    /* api_arg() reads the first of several: a second one would be dropped without a word
     * (?rejected_limit=all&rejected_limit=5 took all). */
    assert(i < 64);
    if (c->seen & ((uint64_t)1 << i)) {
        c->bad = api_bad(c->r, key, "given more than once");
        return MHD_NO;
    }
    c->seen |= (uint64_t)1 << i;
    if (value && strlen(value) > API_MAX_ARG) {
        c->bad = api_bad(c->r, key, "longer than %d bytes", API_MAX_ARG);
        return MHD_NO;
    }
    return MHD_YES;
}

int api_args_allowed(struct api_req *r, const char *const *names)
{
    struct arg_check c = {r, names, 0, 0};

    MHD_get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND, check_one_arg, &c);
    return c.bad;
}

const char *api_arg(struct api_req *r, const char *name)
{
    const char *v = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, name);

    return v && *v ? v : NULL;
}

int api_arg_whole(struct api_req *r, const char *name, long lo, long hi, int all, long *out)
{
    const char *v = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, name);
    char *end;
    long n;

    if (!v)
        return 0;
    if (all && !strcmp(v, "all")) {
        *out = -1;
        return 0;
    }
    errno = 0;
    n = v[0] && strspn(v, "0123456789") == strlen(v) ? strtol(v, &end, 10) : -1;
    if (n < lo || n > hi || errno)
        return api_bad(r, name, "'%s' is not a whole number from %ld to %ld%s", v, lo, hi,
                       all ? ", or all" : "");
    *out = n;
    return 0;
}

int api_arg_limit(struct api_req *r, int *limit)
{
    long n = API_DEFAULT_PAGE;
    int rc = api_arg_whole(r, "limit", 1, API_MAX_PAGE, 0, &n);

    *limit = (int)n;
    return rc;
}

static int url_encode(struct vsl_buf *b, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    int rc = 0;

    for (const unsigned char *p = (const unsigned char *)s; *p && rc == 0; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            strchr("-._~", *p)) {
            rc = vsl_buf_add(b, p, 1);
        } else {
            const char e[3] = {'%', hex[*p >> 4], hex[*p & 15]};
            rc = vsl_buf_add(b, e, 3);
        }
    }
    return rc;
}

struct next_ctx {
    struct vsl_buf *b;
    int rc;
    int keep_cursor;
};

static enum MHD_Result add_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                               const char *value)
{
    struct next_ctx *c = cls;

    if (!c->keep_cursor && !strcmp(key, "cursor"))
        return MHD_YES;
    if (c->rc == 0)
        c->rc = url_encode(c->b, key);
    if (c->rc == 0)
        c->rc = vsl_buf_addstr(c->b, "=");
    if (c->rc == 0 && value)
        c->rc = url_encode(c->b, value);
    if (c->rc == 0)
        c->rc = vsl_buf_addstr(c->b, "&");
    return MHD_YES;
}

/* This request's path and parameters, with cursor= replaced by cursor when not NULL. */
static char *url_of(struct api_req *r, const char *cursor)
{
    struct vsl_buf b;
    struct next_ctx c = {&b, 0, cursor == NULL};

    vsl_buf_init(&b, 64 * 1024);
    c.rc = vsl_buf_addstr(&b, r->path);
    if (c.rc == 0)
        c.rc = vsl_buf_addstr(&b, "?");
    if (c.rc == 0)
        MHD_get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND, add_arg, &c);
    if (c.rc == 0 && cursor)
        c.rc = vsl_buf_addstr(&b, "cursor=");
    if (c.rc == 0 && cursor)
        c.rc = url_encode(&b, cursor);
    if (c.rc < 0) {
        vsl_buf_free(&b);
        return NULL;
    }
    return vsl_buf_take(&b);
}

char *api_next_url(struct api_req *r, const char *cursor)
{
    return url_of(r, cursor);
}

char *api_cache_key(struct api_req *r)
{
    return url_of(r, NULL);
}

/* ---- per-thread database and daemon state -------------------------------------------------- */

static void close_thread_db(void *p)
{
    db_close(p);
}

/* Each HTTP thread reads through its own read-only connection: a poll writing, or another
 * process holding the write lock, does not keep it from the last committed state. */
struct db *api_db(struct api_req *r)
{
    struct api_server *s = r->srv;
    struct db *db = pthread_getspecific(s->db_key);
    char *msg = NULL;
    int wait;

    if (db)
        return db;
    pthread_mutex_lock(&s->db_mu);
    wait = vsl_mono_ms() < s->db_retry_ms;
    pthread_mutex_unlock(&s->db_mu);
    if (wait)
        return NULL;
    if (db_open_reader(s->db_path, &db, &msg) < 0) {
        pthread_mutex_lock(&s->db_mu);
        /* Logged once per retry period, not once per request. */
        if (!s->db_retry_ms || vsl_mono_ms() >= s->db_retry_ms)
            log_warnx("http: cannot open database %s: %s; answering 503 for %d s", s->db_path,
                      msg ? msg : "error", API_DB_RETRY_MS / 1000);
        snprintf(s->db_error, sizeof(s->db_error), "%s", msg ? msg : "cannot open it");
        s->db_retry_ms = vsl_mono_ms() + API_DB_RETRY_MS;
        pthread_mutex_unlock(&s->db_mu);
        free(msg);
        return NULL;
    }
    if (s->stmt_cache > 0)
        db_stmt_cache_size(db, s->stmt_cache);
    pthread_setspecific(s->db_key, db);
    return db;
}

enum MHD_Result api_db_unavailable(struct api_req *r)
{
    char why[sizeof(r->srv->db_error)];

    pthread_mutex_lock(&r->srv->db_mu);
    snprintf(why, sizeof(why), "%s", r->srv->db_error);
    pthread_mutex_unlock(&r->srv->db_mu);
    return api_respond_error(r, MHD_HTTP_SERVICE_UNAVAILABLE, "database_unavailable",
                             "the database cannot be opened: %s", why);
}

int api_status(struct api_req *r, struct api_vcenter_status **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (!r->srv->hooks.status)
        return 0;
    return r->srv->hooks.status(r->srv->hooks.ctx, out, n);
}

int api_db_writable(struct api_req *r, char *why, size_t len)
{
    why[0] = '\0';
    if (!r->srv->hooks.db_writable)
        return 1;
    return r->srv->hooks.db_writable(r->srv->hooks.ctx, why, len);
}

int api_site_rules(struct api_req *r, json_t **checks, json_t **errors)
{
    *checks = *errors = NULL;
    int rc = r->srv->hooks.site_rules
                 ? r->srv->hooks.site_rules(r->srv->hooks.ctx, checks, errors)
                 : 0;
    if (rc == 0 && !*checks)
        *checks = json_array();
    if (rc == 0 && !*errors)
        *errors = json_array();
    if (rc == 0 && (!*checks || !*errors))
        rc = -ENOMEM;
    if (rc < 0) {
        json_decref(*checks);
        json_decref(*errors);
        *checks = *errors = NULL;
    }
    return rc;
}

int api_stalled(const struct api_vcenter_status *s)
{
    return s->polling && s->quiet_ms >= API_STALL_MS;
}

const char *api_iso_time(int64_t ms, char *buf, size_t size)
{
    if (ms <= 0 || !vsl_iso_time(ms, buf, size))
        buf[0] = '\0';
    return buf;
}

/* ---- dispatch ------------------------------------------------------------------------------ */

/* Compares in time that depends only on the configured token's length, so a caller cannot
 * learn the token a byte at a time from response times. */
static int token_ok(const struct api_server *s, const char *given)
{
    size_t glen = strlen(given);
    unsigned char d = glen != s->token_len;

    for (size_t i = 0; i < s->token_len; i++)
        d |= (unsigned char)((i < glen ? given[i] : 0) ^ s->token[i]);
    return d == 0;
}

/* 0 when allowed; otherwise the response has been queued into *ret. */
static int authorize(struct api_req *r, enum auth need, enum MHD_Result *ret)
{
    const char *h;

    if (need == AUTH_NEVER || (need == AUTH_READ && !r->srv->auth_all))
        return 0;
    if (!r->srv->token) {
        *ret = api_respond_error(r, MHD_HTTP_FORBIDDEN, "forbidden",
                                 "this server accepts no writes: set token_file= in [server]");
        return -1;
    }
    h = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    if (h && !strncasecmp(h, "Bearer ", 7)) {
        h += 7;
        while (*h == ' ')
            h++;
        if (token_ok(r->srv, h))
            return 0;
        *ret = api_respond_error(r, MHD_HTTP_UNAUTHORIZED, "unauthorized",
                                 "the bearer token is not valid");
        return -1;
    }
    *ret = api_respond_error(r, MHD_HTTP_UNAUTHORIZED, "unauthorized",
                             "this request needs an Authorization: Bearer token");
    return -1;
}

/* Whether name is one of names (NULL-ended); any name is when names is NULL. */
static int among(const char *name, const char *const *names)
{
    for (size_t i = 0; names && names[i]; i++)
        if (!strcmp(name, names[i]))
            return 1;
    return !names;
}

static int path_matches(const struct route *rt, const char *path, const char **arg)
{
    size_t n = strlen(rt->path);

    if (rt->path[n - 1] == '/') {
        if (strncmp(path, rt->path, n) || !path[n] || strchr(path + n, '/') ||
            !among(path + n, rt->names))
            return 0;
        *arg = path + n;
        return 1;
    }
    *arg = NULL;
    return !strcmp(path, rt->path);
}

/* One of the dashboard's embedded files (web/assets.h), with its build-time ETag. */
static enum MHD_Result respond_asset(struct api_req *r, const struct api_asset *a)
{
    const char *inm =
        MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_IF_NONE_MATCH);
    int fresh = inm && etag_matches(inm, a->etag);
    struct MHD_Response *resp = MHD_create_response_from_buffer(
        fresh ? 0 : a->len, fresh ? NULL : (void *)a->data, MHD_RESPMEM_PERSISTENT);

    if (!resp)
        return MHD_NO;
    MHD_add_response_header(resp, MHD_HTTP_HEADER_ETAG, a->etag);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    if (!fresh) {
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, a->content_type);
        MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
        MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
        MHD_add_response_header(resp, "Content-Security-Policy",
                                "default-src 'self'; img-src 'self' data:; "
                                "frame-ancestors 'none'; base-uri 'none'; form-action 'self'");
    }
    return queue(r, fresh ? MHD_HTTP_NOT_MODIFIED : MHD_HTTP_OK, resp);
}

/* Test builds only (meson -Dtest_hooks, on with the tests, off in a package): an environment
 * variable of the daemon's must not slow a production server. VSLINT_DEBUG_HANDLER_DELAY_MS=N
 * makes every handler take N ms more, so that tests can show that a slow handler, or a request
 * queued behind one, is not cut as a slow client (header_timeout); with
 * VSLINT_DEBUG_HANDLER_DELAY_PATH=/api/v1/placement only that path's, so that tests can show
 * what else is answered meanwhile. No estate small enough for a test is reliably that slow. */
static void debug_delay(const struct api_req *r)
{
#ifdef VSL_TEST_HOOKS
    const struct api_server *s = r->srv;
    if (s->debug_delay_ms > 0 &&
        (!s->debug_delay_path[0] || !strcmp(r->path, s->debug_delay_path))) {
        struct timespec ts = {s->debug_delay_ms / 1000, (s->debug_delay_ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
            ;
    }
#else
    (void)r;
#endif
}

/* ---- the long handlers, off libmicrohttpd's threads ---------------------------------------- */

/* 503 "stopping": a long request the server will not run (a restart may: Retry-After). */
static enum MHD_Result stopping(struct api_req *r)
{
    r->retry_after_s = API_WORK_RETRY_S;
    return api_respond_error(r, MHD_HTTP_SERVICE_UNAVAILABLE, "stopping",
                             "the server is stopping; try again in %d s", API_WORK_RETRY_S);
}

/* A handler that runs for seconds on a large estate would hold up every other connection its
 * libmicrohttpd thread serves (an answer half sent stalls until libmicrohttpd's timeout cuts
 * it): its connection is suspended and the handler runs on a thread of api/work.c. *gone says
 * that r was handed over: the caller must not touch it again. When API_WORK_QUEUE requests
 * wait already, 503 with Retry-After. */
static enum MHD_Result defer(struct api_req *r, api_handler h, int *gone)
{
    struct api_server *s = r->srv;

    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    if (ci && ci->socket_context) { /* the door's hold (on_connection()) */
        memcpy(r->addr, api_hold_address(ci->socket_context), sizeof(r->addr));
        r->has_addr = 1;
    }
    r->deferred = h;
    atomic_fetch_add(&s->deferred_open, 1);
    int rc = api_work_submit(s->work, r);
    if (rc == 0) {
        *gone = 1;
        return MHD_YES;
    }
    atomic_fetch_sub(&s->deferred_open, 1);
    r->deferred = NULL;
    r->retry_after_s = API_WORK_RETRY_S;
    if (rc == -ESHUTDOWN)
        return stopping(r);
    if (rc == -EUSERS)
        return api_respond_error(r, MHD_HTTP_SERVICE_UNAVAILABLE, "busy",
                                 "%d placement, gate or plan requests from this address wait "
                                 "already (half of the queue); try again in %d s",
                                 API_WORK_PER_ADDRESS, API_WORK_RETRY_S);
    return api_respond_error(r, MHD_HTTP_SERVICE_UNAVAILABLE, "busy",
                             "%d placement, gate or plan requests wait already; try again in %d s",
                             API_WORK_QUEUE, API_WORK_RETRY_S);
}

/* The end of a deferred request on its thread: its answer kept, its claims on the answer cache
 * ended, and the connection given back to libmicrohttpd, which queues the answer. */
static void deferred_end(struct api_req *r, enum MHD_Result ret)
{
    if (ret == MHD_NO && r->deferred_resp) { /* the handler gave up: close, as inline */
        MHD_destroy_response(r->deferred_resp);
        r->deferred_resp = NULL;
    }
    api_cache_release(r);
    r->deferred_done = 1;
    MHD_resume_connection(r->conn); /* after this, r is libmicrohttpd's */
}

void api_deferred_run(struct api_req *r)
{
    debug_delay(r);
    deferred_end(r, r->deferred(r));
}

void api_deferred_cancel(struct api_req *r)
{
    deferred_end(r, stopping(r));
}

/* The relay shuts its end of the socketpair for writing once the client has sent its last
 * byte (a FIN, a close) or is gone (api/relay.c): libmicrohttpd, which reads the socket only
 * while the connection is not suspended, would see the end and close the connection as a
 * client's abort once resumed, whatever the handler answered; that is read here without
 * taking a byte (POLLRDHUP, even when more requests wait in the socket before the end). */
int api_deferred_client_gone(const struct api_req *r)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    struct pollfd p = {.fd = ci ? ci->connect_fd : -1, .events = POLLIN | POLLRDHUP};

    return p.fd >= 0 && poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

void api_deferred_drop(struct api_req *r)
{
    deferred_end(r, MHD_NO);
}

/* *gone: r was handed to a thread of api/work.c (defer()). */
static enum MHD_Result dispatch(struct api_req *r, int *gone)
{
    const struct route *found = NULL;
    char allow[64] = "";
    enum MHD_Result ret;
    int is_get = !strcmp(r->method, "GET") || !strcmp(r->method, "HEAD");

    /* The dashboard's files hold no data, and a browser cannot send a token when it navigates
     * to "/": they are served to anyone, even with auth = all; the page's API calls carry it. */
    const struct api_asset *asset = is_get ? api_asset_find(r->path) : NULL;
    if (asset)
        return respond_asset(r, asset);
    /* With auth = all nothing but /healthz is visible without the token, not even which
     * routes exist. */
    if (strcmp(r->path, "/healthz") && authorize(r, AUTH_READ, &ret) < 0)
        return ret;
    for (size_t i = 0; i < NROUTES; i++) {
        const char *arg;
        if (!path_matches(&routes[i], r->path, &arg))
            continue;
        const char *m = !strcmp(routes[i].method, "GET") ? METHODS_GET : routes[i].method;
        snprintf(allow + strlen(allow), sizeof(allow) - strlen(allow), "%s%s",
                 allow[0] ? ", " : "", m);
        if ((!strcmp(routes[i].method, "GET") && is_get) || !strcmp(routes[i].method, r->method)) {
            found = &routes[i];
            r->path_arg = arg;
        }
    }
    if (!found && !allow[0])
        return api_respond_error(r, MHD_HTTP_NOT_FOUND, "not_found", "no such resource: %s",
                                 r->path);
    if (!found) {
        struct MHD_Response *resp;
        size_t len;
        char *text;
        json_t *body = json_pack("{s:{s:s,s:s+}}", "error", "code", "method_not_allowed",
                                 "message", "this resource takes only ", allow);
        text = body ? dump(body, &len) : NULL;
        json_decref(body);
        if (!text)
            return MHD_NO;
        resp = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
        if (!resp) {
            free(text);
            return MHD_NO;
        }
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, allow);
        return queue(r, MHD_HTTP_METHOD_NOT_ALLOWED, resp);
    }
    if (found->auth == AUTH_WRITE && authorize(r, AUTH_WRITE, &ret) < 0)
        return ret;
    if (found->long_running && r->srv->work)
        return defer(r, found->handler, gone);
    debug_delay(r);
    return found->handler(r);
}

/* The request's state starts here (the front door has refused a %00 in the URL, which
 * libmicrohttpd would silently cut, and HTTP/1.1 without Host). */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
    return calloc(1, sizeof(struct api_req));
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
    struct api_req *r = *con_cls;

    if (!r)
        return MHD_NO; /* on_uri ran out of memory */
    if (r->deferred_done) { /* resumed: the answer a thread of api/work.c made */
        struct MHD_Response *resp = r->deferred_resp;
        enum MHD_Result ret = MHD_NO;
        r->deferred_resp = NULL;
        if (resp) {
            ret = MHD_queue_response(conn, r->deferred_status, resp);
            MHD_destroy_response(resp);
        }
        return ret;
    }
    if (!r->started) {
        const char *cl;
        r->started = 1;
        r->srv = cls;
        r->conn = conn;
        r->method = method;
        r->path = url;
        vsl_buf_init(&r->body, API_MAX_BODY);
        cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (cl && strtoull(cl, NULL, 10) > API_MAX_BODY) {
            r->too_big = 1;
            return api_respond_error(r, MHD_HTTP_CONTENT_TOO_LARGE, "payload_too_large",
                                     "request bodies are limited to %d bytes", API_MAX_BODY);
        }
        return MHD_YES;
    }
    if (*upload_data_size) {
        if (!r->too_big && vsl_buf_add(&r->body, upload_data, *upload_data_size) < 0)
            r->too_big = 1; /* chunked and over the limit: drain it, answer 413 at the end */
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (r->too_big)
        return api_respond_error(r, MHD_HTTP_CONTENT_TOO_LARGE, "payload_too_large",
                                 "request bodies are limited to %d bytes", API_MAX_BODY);
    int gone = 0;
    enum MHD_Result ret = dispatch(r, &gone);
    if (gone)
        return ret; /* the request's thread answers and releases it (deferred_end()) */
    /* The handler has answered: a render it claimed and did not keep is waited for no more. */
    api_cache_release(r);
    return ret;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    struct api_req *r = *con_cls;

    if (!r)
        return;
    if (r->started)
        vsl_buf_free(&r->body);
    if (r->deferred_resp) /* closed before the answer was queued (the server stopping) */
        MHD_destroy_response(r->deferred_resp);
    if (r->deferred)
        atomic_fetch_sub(&((struct api_server *)cls)->deferred_open, 1);
    free(r);
    *con_cls = NULL;
}

/* libmicrohttpd's own messages, one short line each and rate-limited: a malformed request it
 * answers itself would otherwise log two lines with its HTML page in them. */
static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    struct api_server *s = cls;
    char msg[512];
    size_t n;
    char *html;

    vsnprintf(msg, sizeof(msg), fmt, ap);
    /* An HTTPS connection reaches libmicrohttpd as a socketpair (api/tls.c), where its TCP
     * options do not apply: libmicrohttpd 0.9.75 says so at every answer. Nothing is lost;
     * the relay sends each TLS record at once. */
    if (!strncmp(msg, "Setting TCP_", 12) || !strncmp(msg, "Failed to push the data", 23))
        return;
    html = strstr(msg, " (`<html>");
    if (!html)
        html = strstr(msg, " ('<html>");
    if (html)
        memcpy(html, ").", 3);
    n = strlen(msg);
    while (n && (msg[n - 1] == '\n' || msg[n - 1] == '.'))
        msg[--n] = '\0';
    if (s->door)
        api_door_log_request(s->door, "http: %s", msg);
    else
        log_warnx("http: %s", msg);
}

/* ---- start and stop ------------------------------------------------------------------------ */

/* Binds the listening socket ourselves, so a port in use or a bad address is reported in one
 * clear line instead of libmicrohttpd's generic start failure. */
static int listen_on(const char *listen_addr, int *fd_out, int *ipv6, char *err, size_t errlen)
{
    char host[256];
    const char *colon = strrchr(listen_addr, ':');
    struct addrinfo hints = {0}, *ai = NULL;
    size_t hl;
    int fd = -1, one = 1, rc;

    if (!colon || (size_t)(colon - listen_addr) >= sizeof(host)) {
        snprintf(err, errlen, "listen = %s: not ADDRESS:PORT", listen_addr);
        return -EINVAL;
    }
    hl = (size_t)(colon - listen_addr);
    memcpy(host, listen_addr, hl);
    host[hl] = '\0';
    if (host[0] == '[' && hl >= 2 && host[hl - 1] == ']') {
        memmove(host, host + 1, hl - 2);
        host[hl - 2] = '\0';
    }
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    rc = getaddrinfo(host[0] ? host : NULL, colon + 1, &hints, &ai);
    if (rc != 0) {
        snprintf(err, errlen, "listen = %s: %s", listen_addr, gai_strerror(rc));
        return -EINVAL;
    }
    fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
        bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 128) < 0) {
        rc = -errno;
        snprintf(err, errlen, "cannot listen on %s: %s", listen_addr, strerror(errno));
        if (fd >= 0)
            close(fd);
        freeaddrinfo(ai);
        return rc;
    }
    *ipv6 = ai->ai_family == AF_INET6;
    freeaddrinfo(ai);
    *fd_out = fd;
    return 0;
}

static int read_pem(const char *path, char **out, char *err, size_t errlen)
{
    int r = vsl_read_file(path, 1 << 20, out);

    if (r < 0)
        snprintf(err, errlen, "cannot read %s: %s", path, vsl_strerror(r));
    return r;
}

/* Descriptors a polled source holds while it polls: its poller's database (file, WAL,
 * shared memory), the vCenter's connections (the main one, the host readers, the prefetch)
 * and the array's; an estimate on the high side. */
#define FDS_PER_SOURCE 9

/* libmicrohttpd's own connection lifetime: the client's place in the front door's counts is
 * held from its start until it is done (api_door_claim()), not only while the relay runs. */
static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    struct api_server *s = cls;

    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        *socket_context = ci ? api_door_claim(s->door, ci->connect_fd) : NULL;
    } else if (toe == MHD_CONNECTION_NOTIFY_CLOSED && *socket_context) {
        api_door_mhd_done(s->door, *socket_context);
        *socket_context = NULL;
    }
}

/* Raises the soft open-file limit to the hard one (once: later calls find them equal), then
 * lowers go->max_connections to what the limit allows, saying so: past it accept() fails with
 * EMFILE while the server believes it has room. A connection holds three descriptors (the
 * client's socket and the relay's socketpair). Kept aside: each HTTP
 * thread's database (file, WAL, shared memory) and wake-up pipe, the refused connections that
 * linger (API_DOOR_MAX_LINGER), each polled source's (FDS_PER_SOURCE), and the daemon's own
 * (its listener, the digest's and the answer cache's databases, the log). */
static void clamp_connections(struct api_door_opts *go, int threads, int sources)
{
    const rlim_t per = 3;
    const rlim_t reserve = 24 + 5 * (rlim_t)threads + API_DOOR_MAX_LINGER +
                           FDS_PER_SOURCE * (rlim_t)(sources > 0 ? sources : 0);
    struct rlimit rl;
    rlim_t room;

    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        return;
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_max != RLIM_INFINITY &&
        rl.rlim_cur < rl.rlim_max) {
        rlim_t was = rl.rlim_cur;
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) == 0)
            log_info("http: open-file limit (RLIMIT_NOFILE) raised from %llu to its hard "
                     "limit %llu",
                     (unsigned long long)was, (unsigned long long)rl.rlim_max);
        else if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
            return;
    }
    if (rl.rlim_cur == RLIM_INFINITY)
        return;
    room = rl.rlim_cur > reserve + per ? (rl.rlim_cur - reserve) / per : 1;
    if (room >= go->max_connections)
        return;
    log_warnx("http: max_connections lowered from %u to %u: the open-file limit "
              "(RLIMIT_NOFILE, LimitNOFILE= in a unit) is %llu, %u descriptor%s per connection "
              "and %llu kept for the rest",
              go->max_connections, (unsigned)room, (unsigned long long)rl.rlim_cur, (unsigned)per,
              per == 1 ? "" : "s", (unsigned long long)reserve);
    go->max_connections = (unsigned)room;
}

int api_start(const struct api_opts *o, const struct api_hooks *h, struct api_server **out,
              char *err, size_t errlen)
{
    struct api_server *s = calloc(1, sizeof(*s));
    /* The front door (api/frontdoor.c) accepts and hands connections over: no listening socket of
     * libmicrohttpd's own, and ITC so that a handed-over connection is seen at once. */
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG | MHD_USE_AUTO |
                     MHD_USE_NO_LISTEN_SOCKET | MHD_USE_ITC | MHD_ALLOW_SUSPEND_RESUME;
    int fd = -1, ipv6 = 0, r = -ENOMEM;

    assert(o && o->listen && o->db_path && out);
    *out = NULL;
    if (!s)
        goto fail;
    s->listen_fd = -1;
    if (h)
        s->hooks = *h;
    s->auth_all = o->auth_all;
    s->stmt_cache = o->stmt_cache;
#ifdef VSL_TEST_HOOKS
    const char *delay = getenv("VSLINT_DEBUG_HANDLER_DELAY_MS");
    if (delay)
        s->debug_delay_ms = strtol(delay, NULL, 10);
    const char *delay_path = getenv("VSLINT_DEBUG_HANDLER_DELAY_PATH");
    if (delay_path)
        snprintf(s->debug_delay_path, sizeof(s->debug_delay_path), "%s", delay_path);
#endif
    s->db_path = strdup(o->db_path);
    if (!s->db_path)
        goto fail;
    if (o->token) {
        s->token = strdup(o->token);
        if (!s->token)
            goto fail;
        s->token_len = strlen(s->token);
    }
    if (pthread_key_create(&s->db_key, close_thread_db) != 0)
        goto fail;
    s->db_key_made = 1;
    if (pthread_mutex_init(&s->db_mu, NULL) != 0)
        goto fail;
    s->db_mu_made = 1;
    if (o->tls) {
        s->tls_ctx = o->tls;
        s->tls_borrowed = 1;
    } else if (o->tls_cert_file) {
        /* HTTPS ends in the front door (api/tls.c): libmicrohttpd speaks plain HTTP to it. */
        char *cert = NULL, *key = NULL;
        if ((r = read_pem(o->tls_cert_file, &cert, err, errlen)) == 0 &&
            (r = read_pem(o->tls_key_file, &key, err, errlen)) == 0)
            r = api_tls_new(cert, key, &s->tls_ctx, err, errlen);
        free(cert);
        if (key) {
            explicit_bzero(key, strlen(key));
            free(key);
        }
        if (r < 0)
            goto fail;
    }
    r = listen_on(o->listen, &fd, &ipv6, err, errlen);
    if (r < 0)
        goto fail;
    s->listen_fd = fd;
    s->tls = s->tls_ctx != NULL;
    if (ipv6)
        flags |= MHD_USE_IPv6;
    struct api_door_opts go = {
        .listen_fd = fd,
        .tls = s->tls_ctx,
        .max_connections = (unsigned)(o->max_connections > 0 ? o->max_connections : 64),
        .max_per_address = (unsigned)(o->max_per_address > 0 ? o->max_per_address : 16),
        .head_timeout_s = o->header_timeout_s > 0 ? o->header_timeout_s : 10,
        .idle_timeout_s = o->timeout_s > 0 ? o->timeout_s : 30,
    };
    clamp_connections(&go, (o->threads > 0 ? o->threads : 4) + API_WORK_THREADS, o->sources);
    r = api_work_new(API_WORK_THREADS, API_WORK_QUEUE, &s->work);
    if (r < 0) {
        snprintf(err, errlen, "cannot start the HTTP server's threads for long requests");
        goto fail;
    }
    r = api_door_new(&go, &s->door);
    if (r < 0)
        goto fail;
    s->mhd = MHD_start_daemon(
        flags, 0, NULL, NULL, on_request, s,
        MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, s, /* first, or early messages miss it */
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned)(o->threads > 0 ? o->threads : 4),
        /* The front door keeps to max_connections; this only backs it up (libmicrohttpd
         * splits its limit between its threads, and counts a closing connection a while). */
        MHD_OPTION_CONNECTION_LIMIT, 2 * go.max_connections + 16,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)o->timeout_s,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)API_MAX_HEADERS,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
        MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
        MHD_OPTION_URI_LOG_CALLBACK, on_uri, s,
        MHD_OPTION_END);
    if (!s->mhd) {
        snprintf(err, errlen, "cannot start the HTTP server on %s", o->listen);
        r = -VSL_ECONFIG;
        goto fail;
    }
    r = api_door_run(s->door, s->mhd);
    if (r < 0) {
        snprintf(err, errlen, "cannot start the HTTP server's accepting thread");
        goto fail;
    }
    *out = s;
    return 0;

fail:
    if (r == -ENOMEM && err[0] == '\0')
        snprintf(err, errlen, "out of memory");
    api_stop(s);
    return r;
}

int api_port(const struct api_server *s)
{
    struct sockaddr_storage sa;
    socklen_t len = sizeof(sa);

    if (getsockname(s->listen_fd, (struct sockaddr *)&sa, &len) < 0)
        return -1;
    if (sa.ss_family == AF_INET6)
        return ntohs(((struct sockaddr_in6 *)&sa)->sin6_port);
    return ntohs(((struct sockaddr_in *)&sa)->sin_port);
}

/* The answers of the long requests just resumed, and of any other request answered now, are
 * written by libmicrohttpd's threads and sent on by the relays, which MHD_stop_daemon() and
 * api_door_free() would stop with them unsent: waited for, up to API_STOP_DRAIN_MS together
 * (a client that reads nothing does not hold the stop up longer). */
static void drain(struct api_server *s)
{
    int64_t until = vsl_mono_ms() + API_STOP_DRAIN_MS;

    while (s->mhd && atomic_load(&s->deferred_open) > 0 && vsl_mono_ms() < until) {
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
    }
    if (s->mhd && api_door_drain(s->door, until) < 0)
        log_info("http: stopping with answers not yet read by their clients");
}

void api_stop(struct api_server *s)
{
    if (!s)
        return;
    api_door_stop(s->door); /* no more connections handed over */
    /* The long requests running finish and are resumed, those waiting are answered 503:
     * libmicrohttpd must find no connection suspended when it stops. */
    api_work_stop(s->work);
    drain(s);
    if (s->mhd)
        MHD_stop_daemon(s->mhd); /* joins the pool threads: their databases close */
    api_work_free(s->work);
    api_door_free(s->door); /* and the relays: nothing uses tls_ctx after them */
    if (!s->tls_borrowed)
        api_tls_free(s->tls_ctx);
    if (s->listen_fd >= 0)
        close(s->listen_fd);
    if (s->db_key_made)
        pthread_key_delete(s->db_key);
    if (s->db_mu_made)
        pthread_mutex_destroy(&s->db_mu);
    if (s->token) {
        explicit_bzero(s->token, s->token_len);
        free(s->token);
    }
    free(s->db_path);
    api_cache_free(s->cache);
    api_estates_free(s->estates);
    free(s);
}
