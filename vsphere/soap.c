/* HTTP transport and SOAP framing for vCenter: POST envelopes with libcurl, stream the answer
 * into the XML parser, turn curl errors, HTTP statuses and SOAP faults into one clear line. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <libxml/parser.h>

#include "util/buf.h"
#include "util/capture.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/log.h"
#include "util/tls.h"
#include "vsphere/soap.h"

#define ENVELOPE_HEAD                                                                              \
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"                                                   \
    "<soapenv:Envelope xmlns:soapenv=\"http://schemas.xmlsoap.org/soap/envelope/\" "               \
    "xmlns:xsd=\"http://www.w3.org/2001/XMLSchema\" "                                              \
    "xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" xmlns=\"urn:vim25\"><soapenv:Body>"
#define ENVELOPE_TAIL "</soapenv:Body></soapenv:Envelope>"

/* Requests are built by us; 1 MiB is far more than the largest (a property spec). */
#define MAX_REQUEST (1u << 20)
/* One managed object's XML (a host with thousands of LUNs) stays far below this. */
#define MAX_OBJECT (64u << 20)
/* curl's receive buffer, per connection (a poll has about ten). */
#define RECV_BUFFER (256L << 10)

static pthread_once_t xml_once = PTHREAD_ONCE_INIT;

static int cancelled(const struct vim_client *c)
{
    return c->opts.cancel && atomic_load(c->opts.cancel);
}

/* Whether another request of the poll (this client's or a clone's) timed out. */
static int stalled(const struct vim_client *c)
{
    return atomic_load(&c->stall->set);
}

/* c's request timed out (c->err says how): the poll's first timeout is recorded. */
static void stall_note(struct vim_client *c)
{
    pthread_mutex_lock(&c->stall->mu);
    if (!atomic_load(&c->stall->set)) {
        memcpy(c->stall->err, c->err, sizeof(c->stall->err));
        atomic_store(&c->stall->set, 1);
    }
    pthread_mutex_unlock(&c->stall->mu);
}

/* c's request is not sent, or was cut, for the poll's first timeout: c->err gets its words, so
 * that whichever connection's error the poll reports, it is the timeout's. */
static int stall_fail(struct vim_client *c)
{
    c->timed_out = 1;
    pthread_mutex_lock(&c->stall->mu);
    memcpy(c->err, c->stall->err, sizeof(c->err));
    pthread_mutex_unlock(&c->stall->mu);
    return -VSL_ENET;
}

/* Whether the transfer in flight is to end: for the cancel at once, except a request that
 * closes the session (c->closing), which has VIM_CLOSE_MS from its start; when another of the
 * poll's requests timed out, at once (the vCenter is not answering: waiting for this one's own
 * timeout would double what a stalled vCenter costs). */
static int cut_short(const struct vim_client *c)
{
    if (!cancelled(c))
        return stalled(c);
    return !c->closing || vsl_mono_ms() - c->request_ms >= VIM_CLOSE_MS;
}

/* curl calls it while a transfer runs, data or not: nonzero aborts the transfer. */
static int on_progress(void *user, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
    (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
    return cut_short(user);
}

int vim_client_closing(struct vim_client *c, int closing)
{
    int was = c->closing;
    c->closing = closing;
    return was;
}

int vim_client_new(const struct vim_opts *opts, struct vim_client **out)
{
    struct vim_client *c;
    int r;

    *out = NULL;
    /* libxml2's global set-up, once and not twice at once: the pollers make their clients in
     * their own threads. */
    pthread_once(&xml_once, xmlInitParser);
    c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    c->opts = *opts;
    c->stall = &c->stall_own;
    pthread_mutex_init(&c->stall_own.mu, NULL);
    c->url = strdup(opts->url);
    c->soap_action = strdup("\"urn:vim25\"");
    r = c->url && c->soap_action ? vsl_curl_new(&c->tls, opts->timeout_s, opts->ca_file,
                                                opts->insecure, opts->thumbprint, &c->curl)
                                 : -ENOMEM;
    if (r < 0) {
        vim_client_free(c);
        return r;
    }
    /* A poll's answers are hundreds of MB: curl's default 16 KiB receive buffer made each
     * 16 KiB one recv(), one write callback and one feed of the parser. */
    curl_easy_setopt(c->curl, CURLOPT_BUFFERSIZE, RECV_BUFFER);
    /* Always, not only with a cancel flag: another connection's timeout cuts this one's
     * transfer in flight (cut_short()) in `vslint collect` too. */
    curl_easy_setopt(c->curl, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(c->curl, CURLOPT_XFERINFODATA, c);
    curl_easy_setopt(c->curl, CURLOPT_NOPROGRESS, 0L);
    *out = c;
    return 0;
}

int vim_client_clone(const struct vim_client *c, struct vim_client **out)
{
    struct curl_slist *cookies = NULL;
    struct vim_client *n = NULL;
    int r = vim_client_new(&c->opts, &n);

    *out = NULL;
    if (r < 0)
        return r;
    n->stall = c->stall; /* one poll: one vCenter's timeout for all its connections */
    free(n->soap_action);
    n->soap_action = strdup(c->soap_action);
    if (!n->soap_action)
        goto nomem;
    if (curl_easy_getinfo(c->curl, CURLINFO_COOKIELIST, &cookies) != CURLE_OK)
        goto nomem;
    for (struct curl_slist *k = cookies; k; k = k->next)
        curl_easy_setopt(n->curl, CURLOPT_COOKIELIST, k->data);
    curl_slist_free_all(cookies);
    *out = n;
    return 0;
nomem:
    vim_client_free(n);
    return -ENOMEM;
}

void vim_client_free(struct vim_client *c)
{
    if (!c)
        return;
    if (c->curl)
        curl_easy_cleanup(c->curl);
    curl_slist_free_all(c->headers);
    free(c->url);
    free(c->soap_action);
    free(c->api_version);
    free(c->root_folder);
    free(c->property_collector);
    free(c->view_manager);
    free(c->session_manager);
    free(c->about);
    free(c->version);
    free(c->build);
    free(c->alarm_manager);
    free(c->perf_manager);
    pthread_mutex_destroy(&c->stall_own.mu);
    free(c);
}

const char *vim_client_error(const struct vim_client *c)
{
    return c->err[0] ? c->err : "no error";
}

struct transfer {
    struct vim_client *c;
    struct vim_xml *xml; /* NULL: hand the bytes to sink, or collect them into buf */
    vim_sink_fn *sink;
    void *sink_ctx;
    struct vsl_buf *buf;
    int err;
    /* With a capture: the request sent (NULL for a GET) and the answer as it arrives. */
    const char *req;
    size_t req_len;
    struct vsl_buf rec;
    int rec_err;
    /* The SOAP method of the request (its body's first element), "" for a GET; and the bytes
     * of its answer that arrived: an answer broken off names both. */
    char method[64];
    int64_t got;
};

/* Most one answer may be when recorded: bigger, the capture says it is incomplete. */
#define MAX_RECORDED (1u << 30)

static size_t on_data(char *p, size_t size, size_t n, void *user)
{
    struct transfer *t = user;
    size_t len = size * n;

    t->c->stats.bytes_xml += (int64_t)len;
    t->got += (int64_t)len;
    if (t->c->opts.activity_ms)
        atomic_store(t->c->opts.activity_ms, vsl_mono_ms());
    if (t->c->opts.capture && !t->rec_err && vsl_buf_add(&t->rec, p, len) < 0)
        t->rec_err = 1;
    int r = t->xml    ? vim_xml_feed(t->xml, p, len)
            : t->sink ? t->sink(t->sink_ctx, p, len)
                      : vsl_buf_add(t->buf, p, len);
    if (r < 0) {
        t->err = r;
        return 0; /* aborts the transfer */
    }
    return len;
}

/* Hands the exchange just made to the capture, with the session cookies' values as secrets.
 * A failed one too (cc): a user sends the capture of a read that failed to show how. */
static void record(struct vim_client *c, const char *url, struct transfer *t, long status,
                   CURLcode cc)
{
    char failure[96];

    vsl_capture_add(c->opts.capture,
                    &(struct vsl_exchange){.source = c->opts.capture_source,
                                           .proto = t->req ? "soap" : "get",
                                           .method = t->req ? NULL : "GET",
                                           .url = url,
                                           .req = t->req,
                                           .req_len = t->req_len,
                                           .answer = t->rec.data ? t->rec.data : "",
                                           .answer_len = t->rec.len,
                                           .status = status,
                                           .incomplete = t->rec_err,
                                           .failure = vsl_capture_outcome(
                                               c->curl, cc, t->err != 0, t->rec.len, failure,
                                               sizeof(failure))});
    vsl_capture_cookies(c->opts.capture, c->curl);
}

static int perform(struct vim_client *c, const char *url, struct transfer *t, long *status)
{
    char detail[CURL_ERROR_SIZE] = "";
    CURL *h = c->curl;

    if (stalled(c))
        return stall_fail(c);
    if (c->timed_out) {
        snprintf(c->err, sizeof(c->err), "%s: timed out (no answer within %d s)", c->url,
                 c->opts.timeout_s > 0 ? c->opts.timeout_s : 60);
        return -VSL_ENET;
    }
    if (cancelled(c) && !c->closing) {
        snprintf(c->err, sizeof(c->err), "%s: abandoned (stopping)", c->url);
        return -ECANCELED;
    }
    c->request_ms = vsl_mono_ms();
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, t);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, detail);
    if (c->opts.capture)
        vsl_buf_init(&t->rec, MAX_RECORDED);
    CURLcode cc = curl_easy_perform(h);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
    /* A new connection after the first request means curl replaced a dead one, and it may
     * have re-sent a request the server had already handled (curl retries a request whose
     * reused connection died before any answer): the caller decides whether that matters. */
    long connects = 0;
    curl_easy_getinfo(h, CURLINFO_NUM_CONNECTS, &connects);
    c->reconnected = c->stats.requests > 0 && connects > 0;
    c->stats.requests++;
    curl_off_t dl = 0;
    if (curl_easy_getinfo(h, CURLINFO_SIZE_DOWNLOAD_T, &dl) == CURLE_OK)
        c->stats.bytes_wire += dl;
    *status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
    if (c->opts.capture) {
        record(c, url, t, *status, cc);
        vsl_buf_free(&t->rec);
    }
    if (cc == CURLE_ABORTED_BY_CALLBACK && c->closing && cancelled(c)) {
        /* A vCenter that does not close the session within VIM_CLOSE_MS is not asked the
         * rest of the closing requests: each would cost as much again. */
        c->timed_out = 1;
        snprintf(c->err, sizeof(c->err), "%s: no answer within %d ms while stopping", c->url,
                 VIM_CLOSE_MS);
        return -VSL_ENET;
    }
    if (cc == CURLE_ABORTED_BY_CALLBACK && !cancelled(c) && stalled(c))
        return stall_fail(c);
    if (cc == CURLE_ABORTED_BY_CALLBACK || (cc == CURLE_WRITE_ERROR && cancelled(c))) {
        snprintf(c->err, sizeof(c->err), "%s: abandoned (stopping)", c->url);
        return -ECANCELED;
    }
    if (cc == CURLE_WRITE_ERROR && t->err)
        return t->err;
    if (cc == CURLE_OPERATION_TIMEDOUT)
        c->timed_out = 1;
    if (cc != CURLE_OK) {
        int r = vsl_tls_transfer_error(h, &c->tls, cc, detail, c->url, "vCenter", c->err,
                                       sizeof(c->err));
        if (cc == CURLE_OPERATION_TIMEDOUT)
            stall_note(c);
        size_t n = strlen(c->url);
        /* The connection dropped in the middle of an answer: say which, and how far it got
         * (the rows decoded from it so far are the poll's, which then fails whole). */
        if (r == -VSL_ENET && cc != CURLE_OPERATION_TIMEDOUT && t->got > 0 && t->method[0] &&
            !strncmp(c->err, c->url, n) && c->err[n] == ':') {
            char why[sizeof(c->err)];
            snprintf(why, sizeof(why), "%s", c->err + n + 1);
            snprintf(c->err, sizeof(c->err), "%s: the answer to %s broke off after %lld bytes:%s",
                     c->url, t->method, (long long)t->got, why);
        }
        return r;
    }
    return 0;
}

struct vim_node *vim_response(struct vim_xml *x)
{
    return vim_first_elem(vim_child(vim_xml_root(x), "Body"));
}

/* Maps a soapenv:Fault to an error code and fills c->fault and c->err. */
static int fault_error(struct vim_client *c, struct vim_node *fault)
{
    char tbuf[128];
    const char *str = vim_path_text(fault, "faultstring");
    struct vim_node *detail = vim_first_elem(vim_child(fault, "detail"));
    const char *type = vim_xsi_type(detail, tbuf, sizeof(tbuf));

    if (!type && detail) {
        /* <InvalidLoginFault> without xsi:type: drop the "Fault" suffix. */
        snprintf(tbuf, sizeof(tbuf), "%s", detail->name);
        size_t n = strlen(tbuf);
        if (n > 5 && !strcmp(tbuf + n - 5, "Fault"))
            tbuf[n - 5] = '\0';
        type = tbuf;
    }
    snprintf(c->fault, sizeof(c->fault), "%s", type ? type : "unknown");
    /* A refusal names the privilege the account lacks: the error (and so the gap it becomes)
     * says which, so that the user knows what to add to the role (docs/vcenter-role.md). */
    char pbuf[256];
    const char *priv = vim_fault_privileges(detail, pbuf, sizeof(pbuf));
    if (priv)
        snprintf(c->err, sizeof(c->err), "%s: %s fault (needs %s): %s", c->url, c->fault, priv,
                 str ? str : "(no message)");
    else
        snprintf(c->err, sizeof(c->err), "%s: %s fault: %s", c->url, c->fault,
                 str ? str : "(no message)");
    if (!strcmp(c->fault, "InvalidLogin"))
        return -VSL_ELOGIN;
    if (!strcmp(c->fault, "NotAuthenticated"))
        return -VSL_ENOAUTH;
    if (!strcmp(c->fault, "ManagedObjectNotFound"))
        return -VSL_ENOTFOUND;
    return -VSL_EFAULT;
}

/* POSTs the envelope around body; the answer goes to t (a parser, or a buffer). The request
 * buffer is a secret's (vsl_buf_init_secret): a Login request carries the password, and none
 * of vslint's blocks holding it (those it grew out of, the last) is freed without being zeroed.
 * That is all vslint can wipe: libcurl copies a small POST body into its own send buffer
 * (and TLS its records), which it frees unwiped. */
static int post(struct vim_client *c, const char *body, struct transfer *t, long *status)
{
    struct vsl_buf req;
    char action[160];
    int r;

    c->err[0] = '\0';
    c->fault[0] = '\0';
    *status = 0;
    vsl_buf_init_secret(&req, MAX_REQUEST);
    r = vsl_buf_addstr(&req, ENVELOPE_HEAD);
    if (r == 0)
        r = vsl_buf_addstr(&req, body);
    if (r == 0)
        r = vsl_buf_addstr(&req, ENVELOPE_TAIL);
    if (r < 0) {
        snprintf(c->err, sizeof(c->err), "%s: request too large", c->url);
        goto out;
    }
    snprintf(action, sizeof(action), "SOAPAction: %s", c->soap_action);
    curl_slist_free_all(c->headers);
    c->headers = curl_slist_append(NULL, "Content-Type: text/xml; charset=utf-8");
    c->headers = curl_slist_append(c->headers, action);
    c->headers = curl_slist_append(c->headers, "Expect:");
    curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, c->headers);
    curl_easy_setopt(c->curl, CURLOPT_POST, 1L);
    curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, req.data);
    curl_easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE, (long)req.len);
    t->req = req.data;
    t->req_len = req.len;
    /* The method is the body's first element: our own request, not remote input. */
    size_t m = body[0] == '<' ? strcspn(body + 1, " />") : 0;
    snprintf(t->method, sizeof(t->method), "%.*s", (int)(m < sizeof(t->method) ? m : 0),
             body + 1);
    r = perform(c, c->url, t, status);
    t->req = NULL;
out:
    vsl_buf_free(&req);
    return r;
}

/* Interprets an answer parsed by x (whatever the transfer said, in r): a SOAP fault, an HTTP
 * status without SOAP, malformed XML. On success *out (may be NULL) takes x. */
static int interpret(struct vim_client *c, struct vim_xml *x, long status, int r,
                     struct vim_xml **out)
{
    if (r == -VSL_EXML || r == -VSL_ETOOBIG) {
        snprintf(c->err, sizeof(c->err), "%s: bad response: %s", c->url, vim_xml_error(x));
        goto fail;
    }
    if (r < 0) {
        if (!c->err[0])
            snprintf(c->err, sizeof(c->err), "%s: %s", c->url, vsl_strerror(r));
        goto fail;
    }
    r = vim_xml_finish(x);
    if (r < 0) {
        if (status != 200)
            snprintf(c->err, sizeof(c->err), "%s: HTTP %ld with a body that is not SOAP (%s)",
                     c->url, status, vim_xml_error(x));
        else
            snprintf(c->err, sizeof(c->err), "%s: malformed XML in response: %s", c->url,
                     vim_xml_error(x));
        r = status != 200 ? -VSL_EHTTP : r;
        goto fail;
    }
    struct vim_node *resp = vim_response(x);
    if (vim_name_is(resp, "Fault")) {
        r = fault_error(c, resp);
        goto fail;
    }
    if (status != 200 || !resp) {
        snprintf(c->err, sizeof(c->err), "%s: HTTP %ld without a SOAP response", c->url, status);
        r = -VSL_EHTTP;
        goto fail;
    }
    if (out)
        *out = x;
    else
        vim_xml_free(x);
    return 0;
fail:
    vim_xml_free(x);
    return r;
}

int vim_call(struct vim_client *c, const char *body, int emit_depth, vim_xml_emit_fn fn, void *ctx,
             struct vim_xml **out)
{
    struct transfer t = {.c = c};
    long status = 0;
    int r;

    if (out)
        *out = NULL;
    r = vim_xml_new(&t.xml, emit_depth, fn, ctx, MAX_OBJECT);
    if (r < 0)
        return r;
    r = post(c, body, &t, &status);
    return interpret(c, t.xml, status, r, out);
}

int vim_fetch(struct vim_client *c, const char *body, vim_sink_fn *sink, void *ctx, long *status)
{
    struct transfer t = {.c = c, .sink = sink, .sink_ctx = ctx};
    return post(c, body, &t, status);
}

int vim_answer_new(struct vim_client *c, int emit_depth, vim_xml_emit_fn fn, void *ctx,
                   struct vim_xml **x)
{
    c->err[0] = '\0';
    c->fault[0] = '\0';
    return vim_xml_new(x, emit_depth, fn, ctx, MAX_OBJECT);
}

int vim_answer_end(struct vim_client *c, struct vim_xml *x, long status, int r,
                   struct vim_xml **out)
{
    if (out)
        *out = NULL;
    return interpret(c, x, status, r, out);
}

int vim_get(struct vim_client *c, const char *path, char **out, size_t max)
{
    struct vsl_buf buf;
    struct transfer t = {.c = c, .buf = &buf};
    char url[2048];
    long status;
    int r;

    *out = NULL;
    c->err[0] = '\0';
    snprintf(url, sizeof(url), "%s%s", c->url, path);
    vsl_buf_init(&buf, max);
    curl_easy_setopt(c->curl, CURLOPT_HTTPGET, 1L);
    curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, NULL);
    r = perform(c, url, &t, &status);
    if (r == 0 && status != 200) {
        snprintf(c->err, sizeof(c->err), "%s: HTTP %ld", url, status);
        r = -VSL_EHTTP;
    } else if (r == -VSL_ETOOBIG) {
        snprintf(c->err, sizeof(c->err), "%s: response larger than %zu bytes", url, max);
    }
    if (r == 0)
        *out = vsl_buf_take(&buf);
    vsl_buf_free(&buf);
    return r;
}
