/* Stateful fuzz target for the HTTP API: sequences of requests against one real server (the
 * fixture of fixture.c: api_start on a loopback port over a database of two vCenters'
 * inventory and findings), with every statement cache (the HTTP threads' and the fixture's)
 * cut to TWO entries, so that a request that holds two statements at once (a count and its
 * page) and then needs a third evicts one. A server fails on the second request, not the
 * first: a cursor it issued, an ETag it gave, a statement left checked out.
 *
 * Input: steps of [op, len, len bytes of payload]. op % 8:
 *   0 GET /api/v1/findings?PAYLOAD          3 the last GET again with If-None-Match: its ETag
 *   1 the last answer's "next" (a cursor)    4 POST /api/v1/gate, PAYLOAD the body
 *   2 GET /api/v1/inventory/KIND?PAYLOAD     5 GET /api/v1/placement?PAYLOAD
 *   6 the last GET written twice at once     7 summary, checks, history, metrics, readyz
 * (bit 3 of op adds the bearer token; bytes that cannot go in a request line are %-encoded).
 * Checked after every request: a status below 500; the answer whole (as many body bytes as
 * its Content-Length says, no more); no statement left checked out (db_stmt_outstanding()
 * back to 0); a "next" the server gave taken back (200); a repeated GET with the ETag it just
 * got 304, since nothing writes the database meanwhile. Every request but op 6's asks for
 * `Connection: close` (the answer is read to the end); op 6 writes the request twice at once on
 * one connection, the first copy kept alive and the second closing it: both are answered, the
 * second after the first, whole (a relay or a cached answer that spoils the next request on a
 * kept-alive connection fails here). FUZZ_API_TRACE=1 prints each request line and its
 * status. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "db/db.h"
#include "util/buf.h"
#include "fixture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_ANSWER (8u << 20)
#define MAX_TARGET 4096

/* What the sequence remembers between steps. */
static struct {
    char get[MAX_TARGET];  /* the last GET's target ("" none) */
    char next[MAX_TARGET]; /* the last answer's "next" ("" none) */
    char etag[128];        /* the last 200 GET's ETag ("" none) */
    int auth;              /* the last GET carried the token */
} st;

static void need(int ok, const char *what, const char *req, const char *answer)
{
    if (ok)
        return;
    fprintf(stderr, "fuzz_api: %s\nrequest: %.400s\nanswer: %.400s\n", what, req,
            answer ? answer : "(none)");
    abort();
}

/* target + PAYLOAD, with the bytes a request line cannot hold %-encoded, into out. */
static void make_target(char *out, size_t size, const char *path, const uint8_t *p, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t len = (size_t)snprintf(out, size, "%s", path);

    for (size_t i = 0; i < n && len + 4 < size; i++) {
        const uint8_t c = p[i];
        if (c <= 0x20 || c >= 0x7f || c == '#') {
            out[len++] = '%';
            out[len++] = hex[c >> 4];
            out[len++] = hex[c & 15];
        } else {
            out[len++] = (char)c;
        }
    }
    out[len < size ? len : size - 1] = '\0';
}

/* Sends keep (count - 1 times) then req on one connection, reads until the server closes into
 * ans; the first answer's status. */
static int exchange(const char *keep, size_t klen, const char *req, size_t len, int count,
                    struct vsl_buf *ans)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(fx.port)};
    struct timeval tv = {.tv_sec = 20};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), status = 0;

    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    need(fd >= 0 && setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == 0 &&
             connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0,
         strerror(errno), req, NULL);
    for (int i = 0; i < count; i++)
        if (fuzz_send_all(fd, i + 1 < count ? keep : req, i + 1 < count ? klen : len) < 0)
            break; /* answered and closed before it read everything */
    for (;;) {
        char buf[16384];
        ssize_t n = recv(fd, buf, sizeof(buf), 0);
        if (n < 0 && errno == EINTR)
            continue;
        need(!(n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)), "no answer within 20 s", req,
             NULL);
        if (n <= 0)
            break;
        if (vsl_buf_add(ans, buf, (size_t)n) < 0)
            break; /* bigger than any page: its status line is in */
    }
    close(fd);
    if (vsl_buf_add(ans, "", 1) < 0 || sscanf(ans->data, "HTTP/1.%*d %d", &status) != 1)
        status = 0;
    return status;
}

/* The value of header name in the answer's head, into out ("" when absent). */
static void header(const char *ans, const char *name, char *out, size_t size)
{
    const char *end = strstr(ans, "\r\n\r\n");
    size_t nl = strlen(name);

    out[0] = '\0';
    for (const char *p = strstr(ans, "\r\n"); p && (!end || p < end); p = strstr(p + 2, "\r\n")) {
        if (!strncasecmp(p + 2, name, nl) && p[2 + nl] == ':') {
            const char *v = p + 3 + nl;
            v += strspn(v, " ");
            snprintf(out, size, "%.*s", (int)strcspn(v, "\r"), v);
            return;
        }
    }
}

/* The body's "next" URL (JSON-escaped slashes undone), into st.next ("" when absent). */
static void remember_next(const char *ans)
{
    const char *body = strstr(ans, "\r\n\r\n"), *p = body ? strstr(body, "\"next\":\"") : NULL;
    size_t n = 0;

    st.next[0] = '\0';
    if (!p)
        return;
    for (p += 8; *p && *p != '"' && n + 1 < sizeof(st.next); p++) {
        if (*p == '\\' && p[1] == '/')
            p++;
        st.next[n++] = *p;
    }
    st.next[n] = '\0';
}

/* One request; checks the answer; returns its status. */
static int request(const char *method, const char *target, int auth, const char *etag,
                   const uint8_t *body, size_t body_len, int count, struct vsl_buf *ans)
{
    struct vsl_buf req, keep; /* the same request, asking to close / to keep the connection */
    int status, rc = 0;

    vsl_buf_init(&req, 64 * 1024);
    vsl_buf_init(&keep, 64 * 1024);
    for (int k = 0; k < 2 && rc == 0; k++) {
        struct vsl_buf *b = k ? &keep : &req;
        rc = vsl_buf_printf(b, "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%s%s%s%s%s", method, target,
                            auth ? "Authorization: Bearer " TOKEN "\r\n" : "",
                            etag ? "If-None-Match: " : "", etag ? etag : "", etag ? "\r\n" : "",
                            k ? "" : "Connection: close\r\n");
        if (rc == 0 && body)
            rc = vsl_buf_printf(b, "Content-Type: application/json\r\nContent-Length: %zu\r\n",
                                body_len);
        if (rc == 0)
            rc = vsl_buf_addstr(b, "\r\n");
        if (rc == 0 && body)
            rc = vsl_buf_add(b, body, body_len);
    }
    need(rc == 0, "request too big for its buffer", target, NULL);
    status = exchange(keep.data, keep.len, req.data, req.len, count, ans);
    if (getenv("FUZZ_API_TRACE"))
        fprintf(stderr, "%d %s %s%s\n", status, method, target, etag ? " (conditional)" : "");
    need(status >= 200 && status < 500, "a 5xx, or no whole answer", req.data, ans->data);
    /* The whole first answer: its head, then Content-Length bytes (none for a 304); a second
     * one may follow only when two requests were written. */
    char cl[32];
    const char *head_end = strstr(ans->data, "\r\n\r\n");
    header(ans->data, "Content-Length", cl, sizeof(cl));
    need(head_end != NULL, "an answer without a whole head", req.data, ans->data);
    size_t got = ans->len - 1 - (size_t)(head_end + 4 - ans->data); /* ans ends in its '\0' */
    size_t want = status == 304 ? 0 : cl[0] ? strtoul(cl, NULL, 10) : got;
    need(status == 304 || cl[0], "an answer without Content-Length", req.data, ans->data);
    need(count > 1 ? got >= want : got == want,
         "the body is not as long as its Content-Length", req.data, ans->data);
    if (count > 1 && got > want) {
        /* The kept-alive connection's second answer follows the first, whole. */
        const char *second = head_end + 4 + want, *end2 = strstr(second, "\r\n\r\n");
        need(!strncmp(second, "HTTP/1.1 ", 9) && end2, "bytes after the first answer that are "
             "not a second one", req.data, ans->data);
        header(second - 2, "Content-Length", cl, sizeof(cl));
        size_t got2 = ans->len - 1 - (size_t)(end2 + 4 - ans->data);
        size_t want2 = strstr(second, " 304 ") == second + 8 ? 0 : strtoul(cl, NULL, 10);
        /* ans stops taking bytes near MAX_ANSWER: a second answer cut there is not wrong. */
        need(got2 == want2 || (got2 < want2 && ans->len + 16384 > MAX_ANSWER),
             "the second answer is not as long as its Content-Length", req.data, second);
    }
    /* The handler ran before the answer was sent: every statement it took is back. */
    need(db_stmt_outstanding() == 0, "a statement left checked out", req.data, ans->data);
    vsl_buf_free(&req);
    vsl_buf_free(&keep);
    return status;
}

/* A GET whose target, ETag and "next" the following steps may use. */
static int get(const char *target, int auth, struct vsl_buf *ans)
{
    int status = request("GET", target, auth, NULL, NULL, 0, 1, ans);

    snprintf(st.get, sizeof(st.get), "%s", target);
    st.auth = auth;
    st.etag[0] = '\0';
    if (status == 200)
        header(ans->data, "ETag", st.etag, sizeof(st.etag));
    remember_next(ans->data);
    return status;
}

static void step(uint8_t op, const uint8_t *p, size_t n)
{
    static const char *const kinds[] = {"datastores", "hosts", "vms", "pools"};
    static const char *const others[] = {"/api/v1/summary?", "/api/v1/checks?",
                                         "/api/v1/history?", "/metrics?", "/readyz?",
                                         "/api/v1/findings/"};
    const int auth = (op >> 3) & 1;
    char target[MAX_TARGET], path[64];
    struct vsl_buf ans;
    int status;

    vsl_buf_init(&ans, MAX_ANSWER);
    switch (op % 8) {
    case 0:
        make_target(target, sizeof(target), "/api/v1/findings?", p, n);
        get(target, auth, &ans);
        break;
    case 1:
        if (!st.next[0])
            break;
        snprintf(target, sizeof(target), "%s", st.next);
        status = get(target, st.auth, &ans);
        need(status == 200, "the server refused its own next page", target, ans.data);
        break;
    case 2:
        snprintf(path, sizeof(path), "/api/v1/inventory/%s?", kinds[(op >> 4) % 4]);
        make_target(target, sizeof(target), path, p, n);
        get(target, auth, &ans);
        break;
    case 3:
        if (!st.etag[0])
            break;
        status = request("GET", st.get, st.auth, st.etag, NULL, 0, 1, &ans);
        need(status == 304, "the same GET with its ETag was not 304 (nothing changed)", st.get,
             ans.data);
        break;
    case 4:
        request("POST", "/api/v1/gate", auth, NULL, p, n, 1, &ans);
        break;
    case 5:
        make_target(target, sizeof(target), "/api/v1/placement?", p, n);
        get(target, auth, &ans);
        break;
    case 6:
        if (st.get[0])
            request("GET", st.get, st.auth, NULL, NULL, 0, 2, &ans);
        break;
    default:
        make_target(target, sizeof(target), others[(op >> 4) % 6], p, n);
        get(target, auth, &ans);
        break;
    }
    vsl_buf_free(&ans);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!fx.ready)
        fuzz_setup("api", 2);
    memset(&st, 0, sizeof(st));
    for (size_t i = 0; i + 2 <= size;) {
        const uint8_t op = data[i];
        size_t n = data[i + 1];
        if (n > size - i - 2)
            n = size - i - 2;
        step(op, data + i + 2, n);
        i += 2 + n;
    }
    return 0;
}
