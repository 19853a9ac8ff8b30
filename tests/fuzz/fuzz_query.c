/* Fuzz target for the HTTP API's parameter handling. The checks of api/ (api_arg_limit,
 * check_enum, api_args_allowed) read their values from a libmicrohttpd connection, so they are
 * reached the only way they can be: a real server (api_start) on a loopback port, over a
 * database filled once from the captured vCenter answers in tests/unit/data/ and the checks'
 * findings. The cursors' decoders (static in db/findings.c and db/pages.c) are also
 * driven directly through db_findings_query() and db_inventory_page().
 *
 * Input: byte 0 even: direct database queries. byte 1 is the limit; the rest is up to six
 * '\n'-separated fields: vcenter, check, severity, status, object, cursor (empty = absent).
 * A page must never be refused with anything but -EINVAL, and a cursor the server issued must
 * always be accepted back.
 * byte 0 odd: one HTTP request. byte 1 picks the route (and bit 7 adds the bearer token); the
 * rest is appended to the route's path, bytes that cannot go in a request line %-encoded (so
 * "?limit=0&cursor=zz" is a query). The answer must be a status below 500: a dropped connection
 * or a 5xx is a crash. FUZZ_QUERY_TRACE=1 prints each request line and its status. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "api/api-private.h"
#include "checks/engine.h"
#include "db/pages.h"
#include "db/findings.h"
#include "util/buf.h"
#include "util/err.h"
#include "vsphere/decode.h"
#include "vsphere/session.h"
#include "fixture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ---- direct: the cursor decoders and filters of db/ ----------------------------------------- */

static void need(int ok, const char *what, int rc)
{
    if (!ok) {
        fprintf(stderr, "fuzz_query: %s (rc %d: %s)\n", what, rc, vsl_strerror(rc));
        abort();
    }
}

/* A cursor-paged read of db/ asked for the page at cursor; 0 or its error. */
typedef int page_fn(void *query, const char *cursor, json_t **list, char **next);

static int findings_page(void *query, const char *cursor, json_t **list, char **next)
{
    struct db_findings_filter *f = query;
    int64_t total;

    f->cursor = cursor;
    return db_findings_query(fx.db, f, list, &total, next);
}

struct inventory_query {
    enum db_page_kind kind;
    struct db_page p;
};

static int inventory_page(void *query, const char *cursor, json_t **list, char **next)
{
    struct inventory_query *q = query;
    int64_t total;

    q->p.cursor = cursor;
    return db_inventory_page(fx.db, q->kind, &q->p, list, &total, next);
}

/* Reads from the fuzzed cursor (a bad one is refused with -EINVAL), then follows the server's
 * own cursors a few pages: each must be taken back, and no page may pass the limit. */
static void follow(const char *what, page_fn *read, void *query, const char *cursor, int limit)
{
    char msg[128];
    char *next = NULL;
    json_t *list = NULL;
    int rc = read(query, cursor, &list, &next);

    snprintf(msg, sizeof(msg), "%s failed", what);
    need(rc == 0 || rc == -EINVAL, msg, rc);
    for (int page = 0; rc == 0 && page < 3; page++) {
        need(!limit || json_array_size(list) <= (size_t)limit, "page over the limit", 0);
        json_decref(list);
        list = NULL;
        if (!next)
            break;
        char *cur = next;
        next = NULL;
        rc = read(query, cur, &list, &next);
        snprintf(msg, sizeof(msg), "%s refused its own cursor", what);
        need(rc == 0, msg, rc);
        free(cur);
    }
    json_decref(list);
    free(next);
}

static void direct(const uint8_t *data, size_t size)
{
    char *fields[6] = {NULL}, *text = malloc(size > 2 ? size - 1 : 1);
    size_t nf = 0;

    if (!text)
        return;
    memcpy(text, data + 2, size > 2 ? size - 2 : 0);
    text[size > 2 ? size - 2 : 0] = '\0';
    for (char *p = text; p && nf < 6; nf++) {
        char *nl = strchr(p, '\n');
        if (nl)
            *nl = '\0';
        fields[nf] = *p ? p : NULL;
        p = nl ? nl + 1 : NULL;
    }

    struct db_findings_filter f = {.vcenter = fields[0],
                                   .check = fields[1],
                                   .severity = fields[2],
                                   .status = fields[3],
                                   .object = fields[4],
                                   .limit = data[1]};
    follow("db_findings_query", findings_page, &f, fields[5], f.limit);

    struct inventory_query q = {.kind = (enum db_page_kind)(data[0] / 2 % 3),
                                .p = {.vcenter = fields[0], .limit = data[1]}};
    follow("db_inventory_page", inventory_page, &q, fields[5], q.p.limit);
    free(text);
}

/* ---- HTTP: the handlers' parameter checks, through libmicrohttpd ---------------------------- */

static const struct {
    const char *method, *path;
} routes[] = {
    {"GET", "/api/v1/findings"},
    {"GET", "/api/v1/findings/"},
    {"GET", "/api/v1/inventory/datastores"},
    {"GET", "/api/v1/inventory/hosts"},
    {"GET", "/api/v1/inventory/vms"},
    {"GET", "/api/v1/summary"},
    {"GET", "/api/v1/checks"},
    {"POST", "/api/v1/polls"},
    {"GET", "/metrics"},
    {"GET", "/readyz"},
    {"GET", "/healthz"},
    {"HEAD", "/api/v1/findings"},
    {"GET", "/"},
    {"GET", "/api/v1/inventory/"},
    {"DELETE", "/api/v1/findings"},
    {"GET", "/api/v1/findings"},
};

static void http(const uint8_t *data, size_t size)
{
    static const char hex[] = "0123456789ABCDEF";
    struct vsl_buf req;
    char resp[512];
    size_t got = 0;
    int fd = -1;

    vsl_buf_init(&req, 256 * 1024);
    const int ri = data[1] % (sizeof(routes) / sizeof(routes[0]));
    int rc = vsl_buf_printf(&req, "%s %s", routes[ri].method, routes[ri].path);
    for (size_t i = 2; i < size && rc == 0; i++) {
        const uint8_t c = data[i];
        if (c <= 0x20 || c >= 0x7f || c == '#') {
            const char e[3] = {'%', hex[c >> 4], hex[c & 15]};
            rc = vsl_buf_add(&req, e, 3);
        } else {
            rc = vsl_buf_add(&req, &c, 1);
        }
    }
    if (rc == 0)
        rc = vsl_buf_printf(&req, " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n%s\r\n",
                            data[1] & 0x80 ? "Authorization: Bearer " TOKEN "\r\n" : "");
    if (rc < 0)
        goto out;

    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(fx.port)};
    struct timeval tv = {.tv_sec = 20};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
        connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
        fprintf(stderr, "fuzz_query: connect: %s\n", strerror(errno));
        abort();
    }
    if (fuzz_send_all(fd, req.data, req.len) < 0)
        goto out; /* the server may answer and close before reading it all */
    /* Only the status line matters; read to the end so the server finishes the request. */
    for (;;) {
        char buf[4096];
        ssize_t n = recv(fd, buf, sizeof(buf), 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            fprintf(stderr, "fuzz_query: no answer within 20 s to: %.200s\n", req.data);
            abort();
        }
        if (n <= 0)
            break;
        if (got < sizeof(resp) - 1) {
            size_t k = (size_t)n < sizeof(resp) - 1 - got ? (size_t)n : sizeof(resp) - 1 - got;
            memcpy(resp + got, buf, k);
            got += k;
        }
    }
    resp[got] = '\0';
    int status = 0;
    if (sscanf(resp, "HTTP/1.%*d %d", &status) != 1 || status < 200 || status >= 500) {
        fprintf(stderr, "fuzz_query: answer '%.60s' to request: %.300s\n", resp, req.data);
        abort();
    }
    if (getenv("FUZZ_QUERY_TRACE"))
        fprintf(stderr, "%d %.*s\n", status, (int)strcspn(req.data, "\r"), req.data);
out:
    if (fd >= 0)
        close(fd);
    vsl_buf_free(&req);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!fx.ready)
        fuzz_setup("query", 0);
    if (size < 2)
        return 0;
    if (data[0] % 2 == 0)
        direct(data, size);
    else
        http(data, size);
    return 0;
}
