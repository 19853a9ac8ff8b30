/* HTTPS in the front door (api/tls.c): the GnuTLS server credentials, a session for each
 * accepted connection, and the relays that carry a connection's plaintext to and from
 * libmicrohttpd over a socketpair, checking every request head on the way in. */
#ifndef API_TLS_H
#define API_TLS_H

#include <gnutls/gnutls.h>
#include <stddef.h>

struct api_door;

/* The certificate, its key and the priorities (API_TLS_PRIORITIES). */
struct api_tls;
/* Reads the PEM certificate chain and key (the caller wipes its copy of the key). 0, or a
 * negative error with what went wrong in err. */
int api_tls_new(const char *cert_pem, const char *key_pem, struct api_tls **out, char *err,
                size_t errlen);
void api_tls_free(struct api_tls *t); /* NULL is a no-op */
/* A non-blocking server session on fd; NULL when out of memory. The caller deinits it. */
gnutls_session_t api_tls_session(struct api_tls *t, int fd);
/* Sends text over s and close_notify, as far as the socket takes them without waiting: an
 * error answer is short and the socket's buffer empty. */
void api_tls_answer(gnutls_session_t s, const char *text, size_t len);

/* The relays and the thread that runs them. */
struct api_relays;
/* max: at most this many at once; idle_s: a relay where nothing moved for this long is closed.
 * Each relay holds its client's place in the door's counts and gives it back when it ends. */
int api_relays_new(struct api_door *door, unsigned max, int idle_s, struct api_relays **out);
/* Relays between the client (session s on tls_fd) and libmicrohttpd (app_fd, the other end
 * handed over with MHD_add_connection()); in holds the len bytes of plaintext read so far.
 * Takes s, tls_fd and app_fd in every case; 0 or a negative error (everything closed and the
 * count given back). a is the client's address key, who its text for the log. */
int api_relay_add(struct api_relays *rs, gnutls_session_t s, int tls_fd, int app_fd,
                  const unsigned char a[16], const char *who, const char *in, size_t len);
/* Stops the thread and closes every relay; NULL is a no-op. */
void api_relays_free(struct api_relays *rs);

#endif
