/* HTTPS terminated in the front door: GnuTLS credentials and a session for each connection
 * api/frontdoor.c accepts; api/relay.c carries the plaintext on to libmicrohttpd. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api-private.h"
#include "api/tls.h"

struct api_tls {
    gnutls_certificate_credentials_t cred;
    gnutls_priority_t prio;
};

int api_tls_new(const char *cert_pem, const char *key_pem, struct api_tls **out, char *err,
                size_t errlen)
{
    struct api_tls *t = calloc(1, sizeof(*t));
    gnutls_datum_t cert = {(unsigned char *)cert_pem, (unsigned)strlen(cert_pem)};
    gnutls_datum_t key = {(unsigned char *)key_pem, (unsigned)strlen(key_pem)};
    const char *where = NULL;
    int r;

    *out = NULL;
    if (!t) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    r = gnutls_certificate_allocate_credentials(&t->cred);
    if (r < 0) {
        t->cred = NULL;
        goto fail;
    }
    r = gnutls_certificate_set_x509_key_mem(t->cred, &cert, &key, GNUTLS_X509_FMT_PEM);
    if (r < 0)
        goto fail;
    r = gnutls_priority_init(&t->prio, API_TLS_PRIORITIES, &where);
    if (r < 0) {
        t->prio = NULL;
        goto fail;
    }
    *out = t;
    return 0;

fail:
    snprintf(err, errlen, "tls_cert and tls_key: %s%s%s", gnutls_strerror(r), where ? " at " : "",
             where ? where : "");
    api_tls_free(t);
    return -EINVAL;
}

void api_tls_free(struct api_tls *t)
{
    if (!t)
        return;
    if (t->prio)
        gnutls_priority_deinit(t->prio);
    if (t->cred)
        gnutls_certificate_free_credentials(t->cred);
    free(t);
}

gnutls_session_t api_tls_session(struct api_tls *t, int fd)
{
    gnutls_session_t s;

    if (gnutls_init(&s, GNUTLS_SERVER | GNUTLS_NONBLOCK | GNUTLS_NO_SIGNAL) < 0)
        return NULL;
    if (gnutls_priority_set(s, t->prio) < 0 ||
        gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, t->cred) < 0) {
        gnutls_deinit(s);
        return NULL;
    }
    /* No client certificates; the deadline is the front door's, not GnuTLS's. */
    gnutls_certificate_server_set_request(s, GNUTLS_CERT_IGNORE);
    gnutls_handshake_set_timeout(s, 0);
    gnutls_transport_set_int(s, fd);
    return s;
}

void api_tls_answer(gnutls_session_t s, const char *text, size_t len)
{
    while (len) {
        ssize_t n = gnutls_record_send(s, text, len);
        if (n == GNUTLS_E_INTERRUPTED)
            continue;
        if (n <= 0)
            break;
        text += n;
        len -= (size_t)n;
    }
    (void)gnutls_bye(s, GNUTLS_SHUT_WR);
}
