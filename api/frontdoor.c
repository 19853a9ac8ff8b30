/* The front door of the HTTP server: one thread accepts every connection, counts them per client
 * address, and holds it until its first request head has arrived whole, within a deadline:
 * peeked over plain HTTP, read after the TLS handshake over HTTPS (api/tls.c). A head that
 * libmicrohttpd would answer with its own HTML page, or mishandle, is answered here in JSON; a
 * good one's connection becomes a socketpair, one end handed to libmicrohttpd with
 * MHD_add_connection(), the other to a relay (api/relay.c), which checks every next request of
 * a kept-alive connection the same way and holds it to the same deadline. */
#define _GNU_SOURCE /* accept4, pipe2, POLLRDHUP */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "api/api-private.h"
#include "api/relay.h"
#include "api/tls.h"
#include "util/clock.h"
#include "util/log.h"

#define ACCEPT_BATCH 64
#define QUIET_MS     50   /* a socket peeked without progress is left alone this long */
#define LINGER_MS    2000 /* after an error answer, how long what still arrives is read */
#define MAX_LINGER   API_DOOR_MAX_LINGER
/* Out of descriptors, accept() is tried again when a connection ends, or after this long
 * (one ended that the door thread did not see: a lingering socket, another thread's file). */
#define ACCEPT_RETRY_MS 250

/* Connections per client address (api_addr_key(): an IPv6 client's /64). */
struct addr_count {
    unsigned char a[16];
    unsigned n;
};

/* A handed-over connection's place in the counts (api_door_relay_done()). Under d->mu. */
struct api_hold {
    unsigned char a[16];
    int fd;            /* libmicrohttpd's end, to find the hold by until it claims it */
    unsigned holders;  /* the relay, libmicrohttpd */
    int listed;        /* in d->handed: libmicrohttpd has not claimed it yet */
    struct api_hold *next;
};

/* A connection the front door still holds. */
struct pending {
    int fd;
    struct sockaddr_storage sa;
    socklen_t salen;
    unsigned char a[16];
    int64_t since_ms;
    int64_t quiet_until_ms;
    size_t peeked;
    /* HTTPS, once the first byte was a TLS handshake record: the session, whether its
     * handshake is done, what poll() waits for meanwhile, and the plaintext read so far (a
     * buffer of API_MAX_HEAD + 1). */
    gnutls_session_t tls;
    int handshaken;
    short events;
    char *head;
    size_t head_len;
};

struct ratelimit {
    int64_t window_ms;
    int lines;
    int suppressed;
};

struct api_door {
    struct MHD_Daemon *mhd; /* borrowed: set by api_door_run */
    struct api_door_opts o;
    pthread_t thread;
    int running;
    int wake[2];

    pthread_mutex_t mu; /* counts: the relays' thread ends connections */
    struct addr_count *counts;
    size_t n_counts;
    unsigned total;
    unsigned closes; /* connections ended so far (wraps) */
    /* Out of descriptors: the listener, which stays readable, is not polled until a
     * connection has ended (closes moves on) or resume_ms, lest poll() return at once
     * forever. The door thread's own. */
    int paused;
    unsigned paused_closes;
    int64_t resume_ms;

    struct api_relays *relays;
    struct api_hold *handed; /* under mu: holds libmicrohttpd has not claimed yet */
    struct pending *pend;      /* the door thread's own */
    size_t n_pend;
    /* Answered with an error and half-closed: read until the client closes (or LINGER_MS),
     * because closing a socket with unread bytes resets it and can destroy the answer. */
    struct linger_fd {
        int fd;
        int64_t until_ms;
    } linger[MAX_LINGER];
    size_t n_linger;
    char buf[API_MAX_HEAD + 1];
    struct ratelimit rl_limits, rl_requests;
};

/* At most 10 lines per minute for each kind; the next line after a quiet spell counts the
 * ones left out. A flood of bad requests costs a few log lines, not one each. */
static void rl_log(struct ratelimit *rl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void rl_log(struct ratelimit *rl, const char *fmt, ...)
{
    int64_t now = vsl_mono_ms();
    char msg[400];
    va_list ap;

    if (now - rl->window_ms >= 60000) {
        rl->window_ms = now;
        rl->lines = 0;
    }
    if (rl->lines >= 10) {
        rl->suppressed++;
        return;
    }
    rl->lines++;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (rl->suppressed)
        log_warnx("%s (and %d more like it left out of the log)", msg, rl->suppressed);
    else
        log_warnx("%s", msg);
    rl->suppressed = 0;
}

void api_door_log_request(struct api_door *d, const char *fmt, ...)
{
    char msg[400];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    /* Called from libmicrohttpd's threads too: the limiter is under the lock. */
    pthread_mutex_lock(&d->mu);
    rl_log(&d->rl_requests, "%s", msg);
    pthread_mutex_unlock(&d->mu);
}

void api_addr_key(const struct sockaddr_storage *sa, unsigned char a[16])
{
    static const unsigned char v4[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

    memset(a, 0, 16);
    if (sa->ss_family == AF_INET6) {
        memcpy(a, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
        /* One site gets a /64 and picks any address in it at will (RFC 4291, privacy
         * addresses): keyed by the whole address, one /64 could take every slot. */
        if (memcmp(a, v4, 12) != 0)
            memset(a + 8, 0, 8);
    } else if (sa->ss_family == AF_INET) {
        a[10] = a[11] = 0xff;
        memcpy(a + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
    }
}

void api_addr_text(const unsigned char a[16], char *out, size_t len)
{
    static const unsigned char v4[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    char ip[INET6_ADDRSTRLEN] = "?";

    if (!memcmp(a, v4, 12)) {
        inet_ntop(AF_INET, a + 12, out, (socklen_t)len);
        return;
    }
    inet_ntop(AF_INET6, a, ip, sizeof(ip));
    snprintf(out, len, "%s/64", ip);
}

/* Under d->mu. */
static struct addr_count *count_of(struct api_door *d, const unsigned char a[16], int make)
{
    for (size_t i = 0; i < d->n_counts; i++)
        if (!memcmp(d->counts[i].a, a, 16))
            return &d->counts[i];
    if (!make)
        return NULL;
    struct addr_count *c = realloc(d->counts, (d->n_counts + 1) * sizeof(*c));
    if (!c)
        return NULL;
    d->counts = c;
    c = &c[d->n_counts++];
    memcpy(c->a, a, 16);
    c->n = 0;
    return c;
}

/* Under d->mu. */
static void release(struct api_door *d, const unsigned char a[16])
{
    struct addr_count *c = count_of(d, a, 0);

    if (d->total)
        d->total--;
    d->closes++;
    if (c && c->n && --c->n == 0) {
        *c = d->counts[--d->n_counts];
    }
}

void api_door_release(struct api_door *d, const unsigned char a[16])
{
    pthread_mutex_lock(&d->mu);
    release(d, a);
    pthread_mutex_unlock(&d->mu);
}

/* Under d->mu: takes h off the unclaimed list. */
static void unlist(struct api_door *d, struct api_hold *h)
{
    for (struct api_hold **pp = &d->handed; *pp; pp = &(*pp)->next)
        if (*pp == h) {
            *pp = h->next;
            break;
        }
    h->listed = 0;
}

/* Under d->mu: one holder of h let go; the last gives the place back. */
static void let_go(struct api_door *d, struct api_hold *h)
{
    if (h->holders && --h->holders == 0) {
        release(d, h->a);
        free(h);
    }
}

void api_door_relay_done(struct api_door *d, struct api_hold *h)
{
    pthread_mutex_lock(&d->mu);
    if (h->listed) {
        unlist(d, h); /* libmicrohttpd never started it: its hold goes too */
        let_go(d, h);
    }
    let_go(d, h);
    pthread_mutex_unlock(&d->mu);
}

struct api_hold *api_door_claim(struct api_door *d, int fd)
{
    struct api_hold *h;

    pthread_mutex_lock(&d->mu);
    for (h = d->handed; h && h->fd != fd; h = h->next)
        ;
    if (h)
        unlist(d, h);
    pthread_mutex_unlock(&d->mu);
    return h;
}

const unsigned char *api_hold_address(const struct api_hold *h)
{
    return h->a;
}

void api_door_mhd_done(struct api_door *d, struct api_hold *h)
{
    pthread_mutex_lock(&d->mu);
    let_go(d, h);
    pthread_mutex_unlock(&d->mu);
}

/* ---- answers ------------------------------------------------------------------------------- */

static const char *reason(unsigned status)
{
    switch (status) {
    case 400: return "Bad Request";
    case 408: return "Request Timeout";
    case 411: return "Length Required";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Error";
    }
}

static void drain(int fd)
{
    char sink[4096];

    while (recv(fd, sink, sizeof(sink), MSG_DONTWAIT) > 0)
        ;
}

/* Half-closes fd and keeps reading it a while (see struct linger_fd). */
static void linger_close(struct api_door *d, int fd)
{
    shutdown(fd, SHUT_WR);
    drain(fd);
    if (d->n_linger == MAX_LINGER) {
        close(fd);
        return;
    }
    d->linger[d->n_linger++] = (struct linger_fd){fd, vsl_mono_ms() + LINGER_MS};
}

int api_door_error_text(char *buf, size_t size, unsigned status, const char *code, const char *msg)
{
    char body[512];
    int blen, rlen;

    /* Messages are fixed texts of api/head.c and this file: nothing to escape. */
    blen = snprintf(body, sizeof(body), "{\"error\":{\"code\":\"%s\",\"message\":\"%s\"}}", code,
                    msg);
    rlen = snprintf(buf, size,
                    "HTTP/1.1 %u %s\r\nContent-Type: application/json\r\n"
                    "Cache-Control: no-cache\r\nX-Content-Type-Options: nosniff\r\n"
                    "Connection: close\r\nContent-Length: %d\r\n\r\n%s",
                    status, reason(status), blen, body);
    return rlen > 0 && (size_t)rlen < size ? rlen : -1;
}

/* Writes a complete JSON error answer, over TLS when tls is a session (then deinited), and
 * closes (lingering). */
static void answer_and_close(struct api_door *d, int fd, gnutls_session_t tls, unsigned status,
                             const char *code, const char *msg)
{
    char resp[1024];
    int rlen = api_door_error_text(resp, sizeof(resp), status, code, msg);

    if (tls) {
        if (rlen > 0)
            api_tls_answer(tls, resp, (size_t)rlen);
        gnutls_deinit(tls);
    } else if (rlen > 0) {
        (void)!send(fd, resp, (size_t)rlen, MSG_DONTWAIT | MSG_NOSIGNAL);
    }
    linger_close(d, fd);
}

/* ---- the pending connections --------------------------------------------------------------- */

static void drop_pending(struct api_door *d, size_t i, int close_fd)
{
    struct pending *p = &d->pend[i];

    if (close_fd)
        close(p->fd);
    if (p->tls)
        gnutls_deinit(p->tls);
    if (p->head) {
        explicit_bzero(p->head, p->head_len); /* it may hold a bearer token */
        free(p->head);
    }
    api_door_release(d, p->a);
    d->pend[i] = d->pend[--d->n_pend];
}

static void refuse(struct api_door *d, size_t i, unsigned status, const char *code,
                   const char *msg)
{
    struct pending *p = &d->pend[i];
    char who[64];

    api_addr_text(p->a, who, sizeof(who));
    api_door_log_request(d, "http: %s: %u %s", who, status, msg);
    answer_and_close(d, p->fd, p->tls, status, code, msg);
    p->tls = NULL;
    drop_pending(d, i, 0);
}

/* A connection whose first head is good: libmicrohttpd gets one end of a socketpair, with the
 * client's address (for its log), and a relay (api/relay.c) the other, which checks each next
 * request's head as this thread checked the first, so the connection may stay alive. The relay
 * keeps the client's place in the counts until it ends. */
static void hand_over(struct api_door *d, size_t i)
{
    struct pending p = d->pend[i];
    int sp[2], one = 1;
    char who[64];

    api_addr_text(p.a, who, sizeof(who));
    /* The relay reads the client's socket (plain HTTP: the head this thread only peeked). */
    setsockopt(p.fd, SOL_SOCKET, SO_RCVLOWAT, &one, sizeof(one));
    /* The relay writes an answer as it comes, in pieces of up to 64 KiB: with Nagle's algorithm
     * the last short piece would wait for the client's delayed ACK (40 ms on Linux), which
     * libmicrohttpd's own TCP_CORK/TCP_NODELAY handling avoided when it held the socket. */
    setsockopt(p.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sp) < 0) {
        rl_log(&d->rl_limits, "http: %s: socketpair: %s: connection closed", who, strerror(errno));
        refuse(d, i, 503, "busy", "the server is at its connection limit");
        return;
    }
    struct api_hold *h = calloc(1, sizeof(*h));
    if (!h) {
        close(sp[0]);
        close(sp[1]);
        refuse(d, i, 503, "busy", "the server is at its connection limit");
        return;
    }
    d->pend[i] = d->pend[--d->n_pend]; /* the relay owns its session, socket and count */
    memcpy(h->a, p.a, 16);
    h->fd = sp[1];
    h->holders = 2;
    h->listed = 1;
    pthread_mutex_lock(&d->mu);
    h->next = d->handed;
    d->handed = h;
    pthread_mutex_unlock(&d->mu);
    if (MHD_add_connection(d->mhd, sp[1], (const struct sockaddr *)&p.sa, p.salen) != MHD_YES) {
        /* libmicrohttpd closed sp[1]. */
        rl_log(&d->rl_limits, "http: %s: libmicrohttpd took no more connections", who);
        close(sp[0]);
        answer_and_close(d, p.fd, p.tls, 503, "busy", "the server is at its connection limit");
        api_door_relay_done(d, h);
    } else {
        (void)api_relay_add(d->relays, p.tls, p.fd, sp[0], h, who, p.head, p.head_len);
    }
    if (p.head) {
        explicit_bzero(p.head, p.head_len); /* it may hold a bearer token */
        free(p.head);
    }
}

/* Acts on the verdict on connection i's head so far: hands it over to a relay, refuses it or
 * closes it, and returns 1 (it left the list); 0 while more is needed. */
static int judge_head(struct api_door *d, size_t i, const char *buf, size_t len)
{
    struct api_head h;
    char who[64];

    switch (api_head_check(buf, len, &h)) {
    case API_HEAD_OK:
        hand_over(d, i);
        return 1;
    case API_HEAD_REFUSE:
        refuse(d, i, h.status, h.code, h.message);
        return 1;
    case API_HEAD_GARBAGE:
        api_addr_text(d->pend[i].a, who, sizeof(who));
        api_door_log_request(d, "http: %s: not HTTP: connection closed", who);
        drop_pending(d, i, 1);
        return 1;
    default:
        return 0;
    }
}

static int examine_tls(struct api_door *d, size_t i)
{
    struct pending *p = &d->pend[i];
    char who[64];
    int r;

    if (!p->tls) {
        p->tls = api_tls_session(d->o.tls, p->fd);
        p->head = malloc(API_MAX_HEAD + 1);
        if (!p->tls || !p->head) {
            drop_pending(d, i, 1);
            return 1;
        }
    }
    if (!p->handshaken) {
        r = gnutls_handshake(p->tls);
        if (r == GNUTLS_E_AGAIN || r == GNUTLS_E_INTERRUPTED) {
            p->events = gnutls_record_get_direction(p->tls) ? POLLOUT : POLLIN;
            return 0;
        }
        if (r < 0) {
            api_addr_text(p->a, who, sizeof(who));
            api_door_log_request(d, "http: %s: TLS handshake failed: %s", who, gnutls_strerror(r));
            drop_pending(d, i, 1);
            return 1;
        }
        p->handshaken = 1;
        p->events = POLLIN;
    }
    while (p->head_len <= API_MAX_HEAD) {
        ssize_t n =
            gnutls_record_recv(p->tls, p->head + p->head_len, API_MAX_HEAD + 1 - p->head_len);
        if (n == GNUTLS_E_AGAIN || n == GNUTLS_E_INTERRUPTED)
            break;
        if (n <= 0) {
            drop_pending(d, i, 1); /* closed, or broken, before a whole request */
            return 1;
        }
        p->head_len += (size_t)n;
    }
    return judge_head(d, i, p->head, p->head_len);
}

/* Looks at what arrived on pending connection i. Returns 1 when it left the list. */
static int examine(struct api_door *d, size_t i, short revents)
{
    struct pending *p = &d->pend[i];
    ssize_t n;
    char who[64];

    if (p->tls)
        return examine_tls(d, i);
    n = recv(p->fd, d->buf, sizeof(d->buf), MSG_PEEK | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return 0;
    if (n <= 0) {
        drop_pending(d, i, 1); /* closed before sending a request: nothing to say */
        return 1;
    }
    if (d->o.tls) {
        /* A TLS handshake starts with a handshake record (22). Plain HTTP sent to the HTTPS
         * port is told so. */
        if (d->buf[0] == 0x16) {
            return examine_tls(d, i);
        } else if (d->buf[0] >= 'A' && d->buf[0] <= 'Z') {
            refuse(d, i, 400, "bad_request", "this server speaks HTTPS");
        } else {
            api_addr_text(p->a, who, sizeof(who));
            api_door_log_request(d, "http: %s: not TLS: connection closed", who);
            drop_pending(d, i, 1);
        }
        return 1;
    }
    if (judge_head(d, i, d->buf, (size_t)n))
        return 1;
    if (revents & (POLLRDHUP | POLLHUP | POLLERR)) {
        drop_pending(d, i, 1); /* half a head, then nothing more can come */
        return 1;
    }
    /* Until more arrives, poll() must not report the bytes already peeked again. */
    if ((size_t)n == p->peeked)
        p->quiet_until_ms = vsl_mono_ms() + QUIET_MS;
    p->peeked = (size_t)n;
    int lowat = (int)n + 1;
    setsockopt(p->fd, SOL_SOCKET, SO_RCVLOWAT, &lowat, sizeof(lowat));
    return 0;
}

static void accept_some(struct api_door *d)
{
    for (int k = 0; k < ACCEPT_BATCH; k++) {
        struct pending p = {0};
        p.salen = sizeof(p.sa);
        p.fd = accept4(d->o.listen_fd, (struct sockaddr *)&p.sa, &p.salen,
                       SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (p.fd < 0) {
            if (errno == EMFILE || errno == ENFILE) {
                rl_log(&d->rl_limits, "http: out of file descriptors: not accepting until a "
                                      "connection ends");
                pthread_mutex_lock(&d->mu);
                d->paused_closes = d->closes;
                pthread_mutex_unlock(&d->mu);
                d->paused = 1;
                d->resume_ms = vsl_mono_ms() + ACCEPT_RETRY_MS;
            }
            return;
        }
        api_addr_key(&p.sa, p.a);
        p.since_ms = vsl_mono_ms();
        pthread_mutex_lock(&d->mu);
        struct addr_count *c = count_of(d, p.a, 1);
        unsigned status = 0;
        if (d->total >= d->o.max_connections)
            status = 503;
        else if (!c || c->n >= d->o.max_per_address)
            status = 429;
        if (!status) {
            c->n++;
            d->total++;
        } else if (c && c->n == 0) {
            *c = d->counts[--d->n_counts];
        }
        pthread_mutex_unlock(&d->mu);
        if (status) {
            char who[64];
            api_addr_text(p.a, who, sizeof(who));
            if (status == 429)
                rl_log(&d->rl_limits,
                       "http: %s: more than %u connections from this address "
                       "(max_connections_per_address): refusing more",
                       who, d->o.max_per_address);
            else
                rl_log(&d->rl_limits, "http: %u connections (max_connections): refusing %s",
                       d->o.max_connections, who);
            /* Over HTTPS an answer would need a handshake, which is what the limit spares:
             * the connection is closed. */
            if (d->o.tls)
                linger_close(d, p.fd);
            else
                answer_and_close(d, p.fd, NULL, status,
                                 status == 429 ? "too_many_connections" : "busy",
                                 status == 429 ? "too many connections from your address"
                                               : "the server is at its connection limit");
            continue;
        }
        d->pend[d->n_pend++] = p;
    }
}

static void *door_main(void *arg)
{
    struct api_door *d = arg;
    struct pollfd *pfd = calloc(d->o.max_connections + MAX_LINGER + 2, sizeof(*pfd));
    size_t *idx = calloc(d->o.max_connections + MAX_LINGER + 2, sizeof(*idx));

    if (!pfd || !idx) {
        log_warnx("http: out of memory: not accepting connections");
        goto out;
    }
    for (;;) {
        int64_t now = vsl_mono_ms(), limit = (int64_t)d->o.head_timeout_s * 1000;
        int timeout = 1000;
        nfds_t n = 2;

        /* Requests that did not arrive in time: 408 and closed. */
        for (size_t i = 0; i < d->n_pend;) {
            if (now - d->pend[i].since_ms > limit && d->o.tls && !d->pend[i].handshaken) {
                char who[64];
                api_addr_text(d->pend[i].a, who, sizeof(who));
                api_door_log_request(d,
                                     "http: %s: no TLS handshake within header_timeout: "
                                     "connection closed",
                                     who);
                drop_pending(d, i, 1); /* nothing to say it in */
                continue;
            }
            if (now - d->pend[i].since_ms > limit) {
                refuse(d, i, 408, "request_timeout",
                       "the request did not arrive whole within header_timeout");
                continue;
            }
            i++;
        }
        for (size_t i = 0; i < d->n_linger;) {
            if (now >= d->linger[i].until_ms) {
                close(d->linger[i].fd);
                d->paused = 0; /* a descriptor is free */
                d->linger[i] = d->linger[--d->n_linger];
                continue;
            }
            if (d->linger[i].until_ms - now < timeout)
                timeout = (int)(d->linger[i].until_ms - now);
            i++;
        }
        if (d->paused) {
            pthread_mutex_lock(&d->mu);
            d->paused = d->closes == d->paused_closes && now < d->resume_ms;
            pthread_mutex_unlock(&d->mu);
            if (d->paused && d->resume_ms - now < timeout)
                timeout = (int)(d->resume_ms - now);
        }
        pfd[0] = (struct pollfd){.fd = d->wake[0], .events = POLLIN};
        /* poll() skips a negative descriptor. */
        pfd[1] = (struct pollfd){.fd = d->paused ? -1 : d->o.listen_fd, .events = POLLIN};
        for (size_t i = 0; i < d->n_pend; i++) {
            int64_t left = d->pend[i].since_ms + limit - now + 1;
            if (left < timeout)
                timeout = left > 0 ? (int)left : 0;
            if (d->pend[i].quiet_until_ms > now) {
                if (d->pend[i].quiet_until_ms - now < timeout)
                    timeout = (int)(d->pend[i].quiet_until_ms - now);
                continue;
            }
            pfd[n] =
                (struct pollfd){.fd = d->pend[i].fd,
                                .events = d->pend[i].tls ? d->pend[i].events : POLLIN | POLLRDHUP};
            idx[n++] = i;
        }
        nfds_t first_linger = n;
        for (size_t i = 0; i < d->n_linger; i++)
            pfd[n++] = (struct pollfd){.fd = d->linger[i].fd, .events = POLLIN};
        if (poll(pfd, n, timeout) < 0 && errno != EINTR) {
            log_warn("http: poll");
            break;
        }
        if (pfd[0].revents)
            break;
        /* Walk backwards: a removal moves the last entry into the freed slot. */
        for (nfds_t k = n; k-- > first_linger;) {
            size_t i = k - first_linger;
            char sink[4096];
            ssize_t got;
            if (!pfd[k].revents)
                continue;
            while ((got = recv(d->linger[i].fd, sink, sizeof(sink), MSG_DONTWAIT)) > 0)
                ;
            if (got == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
                close(d->linger[i].fd);
                d->paused = 0;
                d->linger[i] = d->linger[--d->n_linger];
            }
        }
        for (nfds_t k = first_linger; k-- > 2;)
            if (pfd[k].revents)
                examine(d, idx[k], pfd[k].revents);
        if (pfd[1].revents & POLLIN)
            accept_some(d);
    }
out:
    free(pfd);
    free(idx);
    return NULL;
}

/* ---- start and stop ------------------------------------------------------------------------ */

int api_door_new(const struct api_door_opts *o, struct api_door **out)
{
    struct api_door *d = calloc(1, sizeof(*d));

    *out = NULL;
    if (!d)
        return -ENOMEM;
    d->o = *o;
    d->wake[0] = d->wake[1] = -1;
    /* accept_some() takes what is there and goes back to poll(). */
    int fl = fcntl(o->listen_fd, F_GETFL);
    if (fl < 0 || fcntl(o->listen_fd, F_SETFL, fl | O_NONBLOCK) < 0) {
        free(d);
        return -errno;
    }
    d->pend = calloc(o->max_connections + 1, sizeof(*d->pend));
    if (!d->pend || pipe2(d->wake, O_CLOEXEC | O_NONBLOCK) < 0) {
        free(d->pend);
        free(d);
        return -ENOMEM;
    }
    pthread_mutex_init(&d->mu, NULL);
    /* The relays count in max_connections from their accept to their end: never more. */
    if (api_relays_new(d, o->max_connections, o->head_timeout_s, o->idle_timeout_s, &d->relays) <
        0) {
        api_door_free(d);
        return -ENOMEM;
    }
    *out = d;
    return 0;
}

int api_door_run(struct api_door *d, struct MHD_Daemon *mhd)
{
    d->mhd = mhd;
    if (pthread_create(&d->thread, NULL, door_main, d) != 0)
        return -EAGAIN;
    d->running = 1;
    return 0;
}

void api_door_stop(struct api_door *d)
{
    if (!d)
        return;
    if (d->running) {
        (void)!write(d->wake[1], "x", 1);
        pthread_join(d->thread, NULL);
        d->running = 0;
    }
    while (d->n_pend)
        drop_pending(d, d->n_pend - 1, 1);
    while (d->n_linger)
        close(d->linger[--d->n_linger].fd);
}

int api_door_drain(struct api_door *d, int64_t until_ms)
{
    return d ? api_relays_drain(d->relays, until_ms) : 0;
}

void api_door_free(struct api_door *d)
{
    if (!d)
        return;
    api_door_stop(d);
    api_relays_free(d->relays); /* whatever libmicrohttpd left open is closed */
    d->relays = NULL;
    close(d->wake[0]);
    close(d->wake[1]);
    pthread_mutex_destroy(&d->mu);
    while (d->handed) { /* libmicrohttpd, stopped, never started these */
        struct api_hold *h = d->handed;
        d->handed = h->next;
        free(h);
    }
    free(d->counts);
    free(d->pend);
    free(d);
}
