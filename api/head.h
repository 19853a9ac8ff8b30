/* The check of a plain-HTTP request head before libmicrohttpd parses it, and the limits it
 * enforces. A pure function of the bytes received so far: api/frontdoor.c calls it as they
 * arrive. */
#ifndef API_HEAD_H
#define API_HEAD_H

#include <stddef.h>

#define API_STR_(x) #x
#define API_STR(x)  API_STR_(x)

#define API_MAX_BODY         16384 /* request bodies: POST /polls takes none */
#define API_MAX_URL          8192  /* the request target, query included */
#define API_MAX_HEAD         16384 /* request line and headers */
#define API_MAX_HEADER_LINES 100
#define API_MAX_PARAMS       64    /* query parameters: no route takes more than a dozen */

enum api_head_verdict {
    API_HEAD_OK,      /* a complete, acceptable head of head_len bytes */
    API_HEAD_MORE,    /* incomplete so far, and nothing wrong yet */
    API_HEAD_REFUSE,  /* answer status with {"error":{code, message}} and close */
    API_HEAD_GARBAGE, /* not HTTP: close without an answer */
};

struct api_head {
    unsigned status;    /* API_HEAD_REFUSE: 400, 411, 413, 414, 431 or 505 */
    const char *code;   /* API_HEAD_REFUSE: the error code, e.g. "uri_too_long" */
    char message[160];  /* API_HEAD_REFUSE: for the client and the log */
    size_t head_len;    /* API_HEAD_OK: bytes up to and including the empty line */
    size_t body_len;    /* API_HEAD_OK: Content-Length, 0 when absent */
    int http11;
    int transfer_encoding;
};

/* Judges the first len bytes received on a connection. Returns an enum api_head_verdict. */
int api_head_check(const char *buf, size_t len, struct api_head *h);

#endif
