/* HTTPS in the front door (api/tls.c): the GnuTLS server credentials and a session for each
 * accepted connection (api/relay.h carries its plaintext on). */
#ifndef API_TLS_H
#define API_TLS_H

#include <gnutls/gnutls.h>
#include <stddef.h>

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

#endif
