/* The relays: one thread carrying each connection's bytes between its client (plain HTTP, or
 * HTTPS decrypted with the session the front door's handshake made) and libmicrohttpd over a
 * socketpair, checking each request head with api_head_check() before libmicrohttpd sees it,
 * so that a kept-alive connection's next request is checked like its first. */
#define _GNU_SOURCE /* POLLRDHUP */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "api/api-private.h"
#include "api/relay.h"
#include "api/tls.h"
#include "util/clock.h"

#define RELAY_OUT       65536 /* libmicrohttpd's answer read and sent on 64 KiB at a time */
#define RELAY_LINGER_MS 2000

enum { KEEP, DONE };

/* One client connection. Client to libmicrohttpd: what it sent (decrypted, over HTTPS)
 * collects in `in`; the front of it that belongs to a checked request (its head, then its
 * Content-Length body) is `approved` and sent on; anything else is a next request's head,
 * checked once whole. libmicrohttpd to client: what it writes is read into `out` and sent on
 * (as TLS records, over HTTPS). */
struct relay {
    gnutls_session_t s; /* NULL: plain HTTP */
    int client_fd, app_fd;
    struct api_hold *hold; /* the relay's hold of its client's place in the counts */
    char who[64];
    int64_t active_ms;         /* when something last moved */
    char in[API_MAX_HEAD + 1]; /* api_head_check() judges a head of up to API_MAX_HEAD */
    size_t in_len, approved;
    unsigned long long body_left; /* of the request being sent on, beyond `approved` */
    int client_eof;               /* nothing more comes from the client */
    int app_shut;                 /* libmicrohttpd was told so (shutdown SHUT_WR) */
    int refused;                  /* a next request was refused: answer it once MHD is done */
    int answered;                 /* the refusal is in `out` (or was sent) */
    struct api_head verdict;
    char out[RELAY_OUT];
    size_t out_len, out_off;
    int send_blocked;     /* gnutls_record_send() said EAGAIN: wait for POLLOUT */
    int app_eof;          /* libmicrohttpd closed its end */
    int64_t linger_until; /* TLS done, the socket half-closed: read until the client closes */
    /* Since when the client owes the rest of a request it began (owes()): header_timeout runs
     * from here. 0 while it owes nothing: between requests, or while libmicrohttpd has yet
     * to take or answer what arrived (a busy server is not a slow client). */
    int64_t owed_since;
    /* The client is gone but libmicrohttpd still holds its end (a handler runs): the relay
     * keeps the client's place in the front door's counts until libmicrohttpd lets go, so
     * connections libmicrohttpd holds never outnumber what the door admits. */
    int orphan;
    /* A request went on to libmicrohttpd and no byte of an answer has come back since: the
     * server owes an answer (a handler runs), so the connection is not idle. */
    int awaiting;
};

struct api_relays {
    struct api_door *door; /* borrowed: the counts */
    unsigned max;
    int64_t head_ms, idle_ms;
    pthread_t thread;
    int running;
    int wake[2];
    pthread_mutex_t mu; /* incoming, stop */
    struct relay **incoming;
    size_t n_incoming;
    int stop;
    struct relay **all; /* the thread's own */
    size_t n;
    struct pollfd *pfd; /* the thread's own: 1 + 2 * max */
    /* The server is stopping (api_relays_drain()): the thread counts, after each pass, the
     * relays that still owe their client an answer into owing, and passes its count in
     * passes, so that the drain knows the count is new. */
    _Atomic int draining;
    _Atomic unsigned owing;
    _Atomic unsigned long passes;
};

/* Whether r still owes its client bytes of an answer: one was asked and none came back yet,
 * some wait in `out`, or libmicrohttpd wrote some that the relay has not read yet. A client
 * that left is owed nothing. */
static int owes_answer(const struct relay *r)
{
    int unread = 0;

    if (r->orphan || r->client_fd < 0)
        return 0;
    if (r->awaiting || r->out_off < r->out_len)
        return 1;
    return !r->app_eof && r->app_fd >= 0 && ioctl(r->app_fd, FIONREAD, &unread) == 0 &&
           unread > 0;
}

static void relay_free(struct api_relays *rs, struct relay *r)
{
    if (r->s)
        gnutls_deinit(r->s);
    if (r->app_fd >= 0)
        close(r->app_fd);
    if (r->client_fd >= 0)
        close(r->client_fd);
    api_door_relay_done(rs->door, r->hold);
    explicit_bzero(r->in, sizeof(r->in)); /* it may hold a bearer token */
    free(r);
}

/* Refuses the request the client is sending: logged with its address now, answered (status,
 * code, message) after the answers before it, as the front door refuses a first head, and
 * libmicrohttpd is told the end so that it finishes those and closes. */
static void refuse_now(struct api_relays *rs, struct relay *r, unsigned status, const char *code,
                       const char *message)
{
    api_door_log_request(rs->door, "http: %s: %u %s", r->who, status, message);
    r->verdict.status = status;
    r->verdict.code = code;
    snprintf(r->verdict.message, sizeof(r->verdict.message), "%s", message);
    r->refused = 1;
    r->in_len = r->approved = 0;
    r->body_left = 0;
    r->owed_since = 0;
    if (!r->app_shut) {
        shutdown(r->app_fd, SHUT_WR);
        r->app_shut = 1;
    }
}

/* Whether in[0..len) holds nothing but CR and LF (an empty len too). */
static int only_line_ends(const char *in, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (in[i] != '\r' && in[i] != '\n')
            return 0;
    return 1;
}

/* Sends what may go on to libmicrohttpd and judges the next head; -1 when the relay is over. */
static int pump_in(struct api_relays *rs, struct relay *r)
{
    for (;;) {
        if (r->app_eof || r->refused) {
            r->in_len = r->approved = 0;
            return 0;
        }
        if (!r->approved && r->body_left && r->in_len) {
            r->approved = r->in_len < r->body_left ? r->in_len : (size_t)r->body_left;
            r->body_left -= r->approved;
        }
        if (r->approved) {
            ssize_t n = send(r->app_fd, r->in, r->approved, MSG_DONTWAIT | MSG_NOSIGNAL);
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
                return 0; /* POLLOUT on app_fd */
            if (n <= 0) {
                r->app_eof = 1; /* libmicrohttpd closed: what it said still goes out */
                continue;
            }
            memmove(r->in, r->in + n, r->in_len - (size_t)n);
            r->in_len -= (size_t)n;
            r->approved -= (size_t)n;
            r->active_ms = vsl_mono_ms();
            continue;
        }
        if (r->body_left || !r->in_len)
            break;
        switch (api_head_check(r->in, r->in_len, &r->verdict)) {
        case API_HEAD_OK:
            r->approved = r->verdict.head_len;
            r->body_left = r->verdict.body_len;
            r->awaiting = 1;
            continue;
        case API_HEAD_MORE:
            break;
        case API_HEAD_REFUSE:
            api_door_log_request(rs->door, "http: %s: %u %s", r->who, r->verdict.status,
                                 r->verdict.message);
            r->refused = 1;
            break;
        default:
            api_door_log_request(rs->door, "http: %s: not HTTP: connection closed", r->who);
            return -1;
        }
        break;
    }
    /* The client ended its side in the middle of a request (part of a head, or less body than
     * its Content-Length said): nothing more will come, and libmicrohttpd would wait for the
     * rest until its own timeout. Empty lines left between or after requests are not a request
     * (RFC 9112 2.2: a server ignores them before a request line), so a client that ends with
     * one had sent all. */
    if (r->client_eof && !r->refused && !r->approved &&
        (r->body_left || !only_line_ends(r->in, r->in_len))) {
        if (r->body_left)
            refuse_now(rs, r, 400, "bad_request",
                       "the connection was closed before the request body was whole "
                       "(Content-Length)");
        else
            refuse_now(rs, r, 400, "bad_request",
                       "the connection was closed before the request head was whole");
    }
    /* A refused request is answered after the answers before it: libmicrohttpd finishes them,
     * sees the end and closes. So does a client's end, once what it sent has gone on. */
    if (!r->app_shut && (r->refused || (r->client_eof && !r->approved && !r->body_left))) {
        shutdown(r->app_fd, SHUT_WR);
        r->app_shut = 1;
    }
    return 0;
}

/* Reads what the client sent; -1 when the connection is broken. */
static int read_client(struct relay *r)
{
    while (!r->client_eof && !r->refused && r->in_len < sizeof(r->in)) {
        ssize_t n;
        if (!r->s) {
            n = recv(r->client_fd, r->in + r->in_len, sizeof(r->in) - r->in_len, MSG_DONTWAIT);
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
                break;
            if (n < 0)
                return -1;
        } else {
            n = gnutls_record_recv(r->s, r->in + r->in_len, sizeof(r->in) - r->in_len);
        }
        if (n > 0) {
            r->in_len += (size_t)n;
            r->active_ms = vsl_mono_ms();
        } else if (n == 0 || n == GNUTLS_E_PREMATURE_TERMINATION) {
            r->client_eof = 1; /* close_notify, or the TCP end: as a plain client's FIN */
        } else if (n == GNUTLS_E_AGAIN || n == GNUTLS_E_INTERRUPTED) {
            break;
        } else {
            return -1; /* a bad record, a renegotiation */
        }
    }
    return 0;
}

/* Sends libmicrohttpd's answers to the client; -1 when the connection is broken. */
static int pump_out(struct relay *r)
{
    for (;;) {
        if (r->out_off < r->out_len) {
            ssize_t n;
            if (!r->s) {
                n = send(r->client_fd, r->out + r->out_off, r->out_len - r->out_off,
                         MSG_DONTWAIT | MSG_NOSIGNAL);
                if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
                    n = GNUTLS_E_AGAIN;
            } else {
                n = gnutls_record_send(r->s, r->out + r->out_off, r->out_len - r->out_off);
            }
            if (n == GNUTLS_E_AGAIN || n == GNUTLS_E_INTERRUPTED) {
                r->send_blocked = 1;
                return 0;
            }
            r->send_blocked = 0;
            if (n < 0)
                return -1;
            r->out_off += (size_t)n;
            r->active_ms = vsl_mono_ms();
            continue;
        }
        r->out_off = r->out_len = 0;
        if (r->app_eof)
            return 0;
        ssize_t n = recv(r->app_fd, r->out, sizeof(r->out), MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
            return 0;
        if (n <= 0) {
            r->app_eof = 1;
            return 0;
        }
        r->awaiting = 0;
        r->out_len = (size_t)n;
    }
}

/* The connection is over, every answer (and the refusal, queue_refusal()) sent: TLS's
 * close_notify, half-close, and read until the client closes (closing a socket with unread
 * bytes resets it, which can destroy the answer). */
static void start_linger(struct relay *r)
{
    if (r->s) {
        (void)gnutls_bye(r->s, GNUTLS_SHUT_WR);
        gnutls_deinit(r->s);
        r->s = NULL;
    }
    close(r->app_fd);
    r->app_fd = -1;
    shutdown(r->client_fd, SHUT_WR);
    r->linger_until = vsl_mono_ms() + RELAY_LINGER_MS;
}

/* Whether the client has begun a request and not yet sent all of it: part of a head, or less
 * of the body than its Content-Length. Not when `in` is full: then libmicrohttpd is behind. */
static int owes(const struct relay *r)
{
    if (r->refused || r->app_eof || r->client_eof || r->linger_until || r->in_len == sizeof(r->in))
        return 0;
    /* While approved is a head, in_len - approved bytes of its body are here; while it is a
     * piece of a body, in_len == approved and body_left is what is still to come. */
    if (r->body_left)
        return r->body_left > r->in_len - r->approved;
    return r->in_len > r->approved;
}

/* A request begun and not finished within header_timeout: refused with 408 (a header line
 * every few seconds would otherwise hold the connection forever). */
static void cut_late(struct api_relays *rs, struct relay *r)
{
    refuse_now(rs, r, 408, "request_timeout",
               "the request did not arrive whole within header_timeout");
}

/* The refusal, as the answer after libmicrohttpd's: in `out`, sent as any answer is, waiting
 * for the client to take it (POLLOUT) up to the idle timeout. One send() that met a full
 * socket buffer (a client slow to read the answers before) would lose it. */
static void queue_refusal(struct relay *r)
{
    int len = api_door_error_text(r->out, sizeof(r->out), r->verdict.status, r->verdict.code,
                                  r->verdict.message);

    r->answered = 1;
    r->awaiting = 0;
    r->out_off = 0;
    r->out_len = len > 0 ? (size_t)len : 0;
    r->active_ms = vsl_mono_ms();
}

/* Moves what can move. */
static int step(struct api_relays *rs, struct relay *r)
{
    if (r->orphan) {
        ssize_t n;
        while ((n = recv(r->app_fd, r->out, sizeof(r->out), MSG_DONTWAIT)) > 0)
            ; /* an answer nobody will read */
        if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
            return DONE;
        return KEEP;
    }
    if (r->linger_until) {
        char sink[4096];
        ssize_t n;
        while ((n = recv(r->client_fd, sink, sizeof(sink), MSG_DONTWAIT)) > 0)
            ;
        if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
            return DONE;
        return KEEP;
    }
    for (int k = 0; k < 64; k++) {
        size_t in0 = r->in_len, out0 = r->out_off + r->out_len;
        int eof0 = r->client_eof + r->app_eof;
        if (read_client(r) < 0 || pump_in(rs, r) < 0 || pump_out(r) < 0)
            return DONE;
        if (r->app_eof && r->out_off == r->out_len) {
            if (r->refused && !r->answered) {
                queue_refusal(r);
                continue;
            }
            start_linger(r);
            return KEEP;
        }
        /* Again while something moved and more may be waiting (GnuTLS keeps records it has
         * read but not yet handed out: poll() would not report them). */
        if (r->in_len == in0 && r->out_off + r->out_len == out0 &&
            r->client_eof + r->app_eof == eof0)
            break;
    }
    if (!owes(r))
        r->owed_since = 0;
    else if (!r->owed_since)
        r->owed_since = vsl_mono_ms();
    return KEEP;
}

/* What poll() waits for on each side; returns whether GnuTLS already holds readable data. */
static int want(const struct relay *r, struct pollfd *tls, struct pollfd *app)
{
    int reading = !r->client_eof && !r->refused && r->in_len < sizeof(r->in);

    *tls = (struct pollfd){.fd = r->client_fd};
    *app = (struct pollfd){.fd = -1};
    if (r->orphan) {
        *tls = (struct pollfd){.fd = -1};
        *app = (struct pollfd){.fd = r->app_fd, .events = POLLIN};
        return 0;
    }
    if (r->linger_until) {
        tls->events = POLLIN;
        return 0;
    }
    if (reading)
        tls->events |= POLLIN;
    if (r->send_blocked)
        tls->events |= POLLOUT;
    if (!r->app_eof) {
        if (r->out_len == 0)
            app->events |= POLLIN;
        if (r->approved)
            app->events |= POLLOUT;
        /* Not polled for nothing: its POLLHUP would wake the thread again and again while
         * the client is slow to take the rest of the answer. */
        if (app->events)
            app->fd = r->app_fd;
    }
    return reading && r->s && gnutls_record_check_pending(r->s) > 0;
}

/* The client's side is over. While libmicrohttpd still holds its end (it has not closed or
 * shut it: a handler may still run), the relay closes the client's socket, tells
 * libmicrohttpd the end and waits for it to let go (step()); else it is freed. Returns
 * whether it was freed. */
static int finish(struct api_relays *rs, struct relay *r)
{
    if (r->orphan || r->app_fd < 0 || r->app_eof) {
        relay_free(rs, r);
        return 1;
    }
    if (r->s) {
        gnutls_deinit(r->s);
        r->s = NULL;
    }
    close(r->client_fd);
    r->client_fd = -1;
    explicit_bzero(r->in, sizeof(r->in)); /* it may hold a bearer token */
    r->in_len = r->approved = 0;
    r->body_left = 0;
    r->owed_since = 0;
    r->linger_until = 0;
    if (!r->app_shut) {
        shutdown(r->app_fd, SHUT_WR);
        r->app_shut = 1;
    }
    r->orphan = 1;
    return 0;
}

static void *relays_main(void *arg)
{
    struct api_relays *rs = arg;
    struct pollfd *pfd = rs->pfd;
    int64_t last_idle = vsl_mono_ms();

    for (;;) {
        int timeout = 1000, stop;
        size_t first_new = rs->n;
        int64_t now;

        pthread_mutex_lock(&rs->mu);
        stop = rs->stop;
        while (rs->n_incoming && rs->n < rs->max)
            rs->all[rs->n++] = rs->incoming[--rs->n_incoming];
        pthread_mutex_unlock(&rs->mu);
        if (stop)
            break;
        int draining = atomic_load(&rs->draining);
        if (draining)
            timeout = 20; /* owing is counted again at least this often */
        /* The bytes read with the head may hold more than it: move them at once. */
        for (size_t i = rs->n; i-- > first_new;) {
            if (step(rs, rs->all[i]) == DONE && finish(rs, rs->all[i]))
                rs->all[i] = rs->all[--rs->n];
        }
        pfd[0] = (struct pollfd){.fd = rs->wake[0], .events = POLLIN};
        now = vsl_mono_ms();
        for (size_t i = 0; i < rs->n; i++) {
            if (want(rs->all[i], &pfd[1 + 2 * i], &pfd[2 + 2 * i]))
                timeout = 0;
            if (rs->all[i]->owed_since) {
                int64_t left = rs->all[i]->owed_since + rs->head_ms - now + 1;
                if (left < timeout)
                    timeout = left > 0 ? (int)left : 0;
            }
            if (rs->all[i]->linger_until && rs->all[i]->linger_until - now < timeout)
                timeout =
                    (int)(rs->all[i]->linger_until > now ? rs->all[i]->linger_until - now : 0);
        }
        if (poll(pfd, 1 + 2 * rs->n, timeout) < 0 && errno != EINTR)
            break;
        if (pfd[0].revents) {
            char sink[64];
            while (read(rs->wake[0], sink, sizeof(sink)) > 0)
                ;
        }
        now = vsl_mono_ms();
        int check_idle = now - last_idle >= 1000;
        if (check_idle)
            last_idle = now;
        for (size_t i = rs->n; i-- > 0;) {
            struct relay *r = rs->all[i];
            short tre = pfd[1 + 2 * i].revents, are = pfd[2 + 2 * i].revents;
            int done = 0;
            if (tre & (POLLERR | POLLNVAL) || (tre & POLLHUP && !r->linger_until))
                done = 1; /* the client is gone both ways: nothing to answer */
            else if (tre || are || (r->s && gnutls_record_check_pending(r->s) > 0))
                done = step(rs, r) == DONE;
            if (!done && r->linger_until && now >= r->linger_until)
                done = 1;
            if (!done && r->owed_since && now - r->owed_since > rs->head_ms)
                cut_late(rs, r);
            if (!done && check_idle && !r->linger_until && !r->orphan && !r->awaiting &&
                now - r->active_ms > rs->idle_ms)
                done = 1; /* a client that reads nothing, or sends nothing, forever */
            if (done && finish(rs, r))
                rs->all[i] = rs->all[--rs->n];
        }
        if (draining) {
            unsigned owing = 0;
            for (size_t i = 0; i < rs->n; i++)
                owing += (unsigned)owes_answer(rs->all[i]);
            atomic_store(&rs->owing, owing);
            atomic_fetch_add(&rs->passes, 1);
        }
    }
    return NULL;
}

/* Frees rs itself: its wake pipe and lists, once no relay is left in them. */
static void relays_release(struct api_relays *rs)
{
    if (rs->wake[0] >= 0) {
        close(rs->wake[0]);
        close(rs->wake[1]);
    }
    free(rs->incoming);
    free(rs->all);
    free(rs->pfd);
    free(rs);
}

int api_relays_new(struct api_door *door, unsigned max, int head_s, int idle_s,
                   struct api_relays **out)
{
    struct api_relays *rs = calloc(1, sizeof(*rs));

    *out = NULL;
    if (!rs)
        return -ENOMEM;
    rs->door = door;
    rs->max = max;
    rs->head_ms = (int64_t)head_s * 1000;
    rs->idle_ms = (int64_t)idle_s * 1000;
    rs->wake[0] = rs->wake[1] = -1;
    rs->incoming = calloc(max, sizeof(*rs->incoming));
    rs->all = calloc(max, sizeof(*rs->all));
    rs->pfd = calloc(2 * (size_t)max + 1, sizeof(*rs->pfd));
    if (!rs->incoming || !rs->all || !rs->pfd || pipe2(rs->wake, O_CLOEXEC | O_NONBLOCK) < 0)
        goto fail;
    pthread_mutex_init(&rs->mu, NULL);
    if (pthread_create(&rs->thread, NULL, relays_main, rs) != 0) {
        pthread_mutex_destroy(&rs->mu);
        goto fail;
    }
    rs->running = 1;
    *out = rs;
    return 0;

fail:
    relays_release(rs);
    return -ENOMEM;
}

int api_relay_add(struct api_relays *rs, gnutls_session_t s, int client_fd, int app_fd,
                  struct api_hold *h, const char *who, const char *in, size_t len)
{
    struct relay *r = calloc(1, sizeof(*r));
    int queued = 0;

    if (!r) {
        gnutls_deinit(s);
        close(app_fd);
        close(client_fd);
        api_door_relay_done(rs->door, h);
        return -ENOMEM;
    }
    r->s = s;
    r->client_fd = client_fd;
    r->app_fd = app_fd;
    r->hold = h;
    snprintf(r->who, sizeof(r->who), "%s", who);
    r->active_ms = vsl_mono_ms();
    if (len)
        memcpy(r->in, in, len < sizeof(r->in) ? len : sizeof(r->in));
    r->in_len = len < sizeof(r->in) ? len : sizeof(r->in);
    pthread_mutex_lock(&rs->mu);
    /* The front door's counts keep the relays within max_connections. */
    if (rs->n_incoming < rs->max && !rs->stop) {
        rs->incoming[rs->n_incoming++] = r;
        queued = 1;
    }
    pthread_mutex_unlock(&rs->mu);
    if (!queued) {
        relay_free(rs, r);
        return -EAGAIN;
    }
    (void)!write(rs->wake[1], "x", 1);
    return 0;
}

int api_relays_drain(struct api_relays *rs, int64_t until_ms)
{
    unsigned long seen;

    if (!rs || !rs->running)
        return 0;
    atomic_store(&rs->draining, 1);
    seen = atomic_load(&rs->passes);
    (void)!write(rs->wake[1], "x", 1);
    for (;;) {
        /* Two passes after the flag: the first may have begun before it. */
        if (atomic_load(&rs->passes) >= seen + 2 && atomic_load(&rs->owing) == 0)
            return 0;
        if (vsl_mono_ms() >= until_ms)
            return -ETIMEDOUT;
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
    }
}

void api_relays_free(struct api_relays *rs)
{
    if (!rs)
        return;
    if (rs->running) {
        pthread_mutex_lock(&rs->mu);
        rs->stop = 1;
        pthread_mutex_unlock(&rs->mu);
        (void)!write(rs->wake[1], "x", 1);
        pthread_join(rs->thread, NULL);
        pthread_mutex_destroy(&rs->mu);
    }
    while (rs->n)
        relay_free(rs, rs->all[--rs->n]);
    while (rs->n_incoming)
        relay_free(rs, rs->incoming[--rs->n_incoming]);
    relays_release(rs);
}
