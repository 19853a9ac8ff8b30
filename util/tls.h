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

/* What a server's own certificate says, read from its TLS handshake without judging it, for
 * `vslint config-check --connect` (daemon/probe.c). */
struct vsl_cert {
    char subject[256], issuer[256]; /* RFC 2253 distinguished names */
    char not_before[32], not_after[32]; /* "2026-12-01 23:10:18 UTC" */
    char sha256[100];  /* "AA:BB:..." in the form thumbprint= takes */
    int self_signed;   /* issued by itself (its own issuer and key) */
    int expired;       /* not_after has passed */
    int not_yet_valid; /* not_before is still to come */
};

/* Connects to url (https only), completes a TLS handshake that trusts anything, and reads the
 * certificate the server presented into *out; sends no request. 0; -VSL_ENET or -VSL_ETLS with
 * one line in err when there is no handshake; -ENOENT for a plain http:// url (no
 * certificate); -VSL_EPROTO when the server sent none. */
int vsl_tls_peer_cert(const char *url, long timeout_s, const char *who, struct vsl_cert *out,
                      char *err, size_t errlen);

#endif
