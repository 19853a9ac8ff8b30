/* The check of a plain-HTTP request head before libmicrohttpd reads it (api/frontdoor.c peeks it
 * off the socket): whatever libmicrohttpd would refuse with its own HTML page, or mishandle, is
 * refused here with a JSON answer, or closed when it is not HTTP at all. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "api/head.h"

static int is_tchar(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("!#$%&'*+-.^_`|~", c));
}

static int verdict(struct api_head *h, enum api_head_verdict v, unsigned status,
                   const char *code, const char *msg)
{
    h->status = status;
    h->code = code;
    snprintf(h->message, sizeof(h->message), "%s", msg);
    return (int)v;
}

#define BAD(h, status, code, msg) verdict(h, API_HEAD_REFUSE, status, code, msg)

/* The end of the line starting at p (its '\n'), or NULL when it has not arrived. */
static const char *line_end(const char *p, const char *end)
{
    return memchr(p, '\n', (size_t)(end - p));
}

/* Request line: METHOD SP TARGET SP HTTP/D.D */
static int request_line(struct api_head *h, const char *p, const char *eol)
{
    const char *q = p, *target, *tend, *query = NULL;
    size_t params = 1;

    if (eol > p && eol[-1] == '\r')
        eol--;
    while (q < eol && *q >= 'A' && *q <= 'Z')
        q++;
    if (q == p || q - p > 20 || q == eol || *q != ' ')
        return BAD(h, 400, "bad_request", "the request line is not METHOD /PATH HTTP/1.1");
    target = ++q;
    while (q < eol && *q != ' ')
        q++;
    tend = q;
    if (tend == target || q == eol)
        return BAD(h, 400, "bad_request", "the request line is not METHOD /PATH HTTP/1.1");
    if ((size_t)(tend - target) > API_MAX_URL)
        return BAD(h, 414, "uri_too_long", "the URL is longer than " API_STR(API_MAX_URL)
                                            " bytes");
    if (*target != '/' && !(tend - target == 1 && *target == '*'))
        return BAD(h, 400, "bad_request", "the request target must be a path starting with /");
    for (const char *c = target; c < tend; c++) {
        unsigned char u = (unsigned char)*c;
        if (u <= 0x20 || u >= 0x7f)
            return BAD(h, 400, "bad_request", "the URL holds a byte that must be %-encoded");
        if (u == '%' && tend - c >= 3 && c[1] == '0' && c[2] == '0')
            return BAD(h, 400, "bad_request", "the URL holds a NUL byte (%00)");
        if (u == '?' && !query)
            query = c;
        if (u == '&' && query)
            params++;
    }
    if (params > API_MAX_PARAMS)
        return BAD(h, 400, "bad_request",
                   "more than " API_STR(API_MAX_PARAMS) " query parameters");
    q++;
    if (eol - q != 8 || strncmp(q, "HTTP/", 5) || q[5] < '0' || q[5] > '9' || q[6] != '.' ||
        q[7] < '0' || q[7] > '9')
        return BAD(h, 400, "bad_request", "the request line does not end in HTTP/1.1");
    if (q[5] != '1' || (q[7] != '0' && q[7] != '1'))
        return BAD(h, 505, "http_version_not_supported", "only HTTP/1.0 and HTTP/1.1 are served");
    h->http11 = q[7] == '1';
    return API_HEAD_OK;
}

/* Whether a line (up to eol, '\n' excluded) holds a byte no HTTP head holds. */
static int binary(const char *p, const char *eol)
{
    for (; p < eol; p++) {
        unsigned char u = (unsigned char)*p;
        if ((u < 0x20 && u != '\t' && u != '\r') || u == 0x7f)
            return 1;
    }
    return 0;
}

int api_head_check(const char *buf, size_t len, struct api_head *h)
{
    const char *p = buf, *end = buf + len, *eol;
    int r, hosts = 0, lines = 0;
    int have_cl = 0;
    unsigned long long cl = 0;

    memset(h, 0, sizeof(*h));
    /* RFC 9112 2.2: empty lines before a request line are ignored. */
    while (p < end && (*p == '\r' || *p == '\n') && p - buf < 4)
        p++;
    if (p == end)
        return API_HEAD_MORE;
    /* Not an HTTP method's first letter: a TLS handshake, a probe, noise. Not answered. */
    if (*p < 'A' || *p > 'Z')
        return API_HEAD_GARBAGE;
    eol = line_end(p, end);
    if (!eol) {
        if (binary(p, end))
            return API_HEAD_GARBAGE;
        if (len > API_MAX_URL + 64)
            return BAD(h, 414, "uri_too_long",
                       "the URL is longer than " API_STR(API_MAX_URL) " bytes");
        return API_HEAD_MORE;
    }
    if (binary(p, eol))
        return API_HEAD_GARBAGE;
    r = request_line(h, p, eol);
    if (r != API_HEAD_OK)
        return r;
    for (p = eol + 1;; p = eol + 1) {
        const char *name, *colon, *v, *vend;
        eol = line_end(p, end);
        if (!eol) {
            if (len > API_MAX_HEAD)
                return BAD(h, 431, "headers_too_large",
                           "the request head is larger than " API_STR(API_MAX_HEAD) " bytes");
            return API_HEAD_MORE;
        }
        if (eol - p <= 1 && (eol == p || *p == '\r'))
            break; /* the empty line: the head is complete */
        if (++lines > API_MAX_HEADER_LINES)
            return BAD(h, 431, "headers_too_large",
                       "more than " API_STR(API_MAX_HEADER_LINES) " header lines");
        if (binary(p, eol))
            return BAD(h, 400, "bad_request", "a header holds a control character");
        if (*p == ' ' || *p == '\t')
            return BAD(h, 400, "bad_request", "a header is folded over two lines");
        name = p;
        colon = p;
        while (colon < eol && is_tchar((unsigned char)*colon))
            colon++;
        if (colon == name || colon == eol || *colon != ':')
            return BAD(h, 400, "bad_request", "a header line is not NAME: VALUE");
        v = colon + 1;
        vend = eol > v && eol[-1] == '\r' ? eol - 1 : eol;
        while (v < vend && (*v == ' ' || *v == '\t'))
            v++;
        while (vend > v && (vend[-1] == ' ' || vend[-1] == '\t'))
            vend--;
        size_t nlen = (size_t)(colon - name);
        if (nlen == 4 && !strncasecmp(name, "Host", 4)) {
            hosts++;
        } else if (nlen == 17 && !strncasecmp(name, "Transfer-Encoding", 17)) {
            h->transfer_encoding = 1;
        } else if (nlen == 14 && !strncasecmp(name, "Content-Length", 14)) {
            unsigned long long n = 0;
            if (v == vend)
                return BAD(h, 400, "bad_request", "Content-Length is not a number of bytes");
            for (const char *d = v; d < vend; d++) {
                if (*d < '0' || *d > '9')
                    return BAD(h, 400, "bad_request", "Content-Length is not a number of bytes");
                if (n > (~0ULL - 9) / 10)
                    return BAD(h, 413, "payload_too_large", "request bodies are limited to "
                                                            API_STR(API_MAX_BODY) " bytes");
                n = n * 10 + (unsigned long long)(*d - '0');
            }
            if (have_cl && n != cl)
                return BAD(h, 400, "bad_request", "two different Content-Length headers");
            have_cl = 1;
            cl = n;
        }
    }
    if (h->http11 && hosts == 0)
        return BAD(h, 400, "bad_request", "an HTTP/1.1 request needs a Host header");
    if (hosts > 1)
        return BAD(h, 400, "bad_request", "more than one Host header");
    if (h->transfer_encoding && have_cl)
        return BAD(h, 400, "bad_request", "both Transfer-Encoding and Content-Length");
    if (h->transfer_encoding)
        return BAD(h, 411, "length_required",
                   "request bodies are taken only with Content-Length, not chunked");
    if (cl > API_MAX_BODY)
        return BAD(h, 413, "payload_too_large",
                   "request bodies are limited to " API_STR(API_MAX_BODY) " bytes");
    h->head_len = (size_t)(eol + 1 - buf);
    h->body_len = (size_t)cl;
    return API_HEAD_OK;
}
