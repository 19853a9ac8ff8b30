/* TLS trust for the HTTPS clients (vCenter's SOAP, an array's REST): the CA file, a pinned
 * SHA-256 certificate fingerprint, or spelled-out insecure; and one clear line for a failed
 * transfer. Shared so that every source is verified, pinned and reported the same way. */
#ifndef VSL_TLS_H
#define VSL_TLS_H

#include <stddef.h>

#include <curl/curl.h>

struct vsl_tls {
    unsigned char pin[32]; /* the thumbprint as bytes */
    char pin_seen[96];     /* the fingerprint the server showed when it did not match */
};

/* Sets h's verification: thumbprint ("AA:BB:...", 32 bytes, or NULL) pins the server's own
 * certificate in place of the CA and host name checks (t must outlive h); else ca_file (or the
 * system store) and the host name, unless insecure. -ENOTSUP when libcurl cannot pin (not an
 * OpenSSL backend) or the thumbprint is not 32 hex bytes. */
int vsl_tls_setup(CURL *h, struct vsl_tls *t, const char *ca_file, int insecure,
                  const char *thumbprint);

/* A new curl handle in *out (the caller's, for curl_easy_cleanup()) with what every HTTPS
 * client of vslint shares (no signals, the in-memory cookie engine that holds the session,
 * compressed answers, the user agent, connect and whole-request timeouts (timeout_s, 60 when
 * not positive), http(s) only, no redirects, TCP keep-alive) and its verification as
 * vsl_tls_setup() sets it; libcurl's global set-up is done on the first call. 0, -ENOMEM, or
 * -ENOTSUP when the verification cannot be set (*out stays NULL). */
int vsl_curl_new(struct vsl_tls *t, long timeout_s, const char *ca_file, int insecure,
                 const char *thumbprint, CURL **out);
/* Turns a failed transfer of h to url into one line in err, naming what the user can do; who
 * is "vCenter" or "array" for the advice. Returns -VSL_ETLS or -VSL_ENET. */
int vsl_tls_transfer_error(CURL *h, struct vsl_tls *t, CURLcode cc, const char *detail,
                           const char *url, const char *who, char *err, size_t errlen);

#endif
