/* TLS trust and transfer errors for libcurl handles: certificate pinning through OpenSSL's
 * verify callback, and the messages that tell an administrator which key to set. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include "util/err.h"
#include "util/tls.h"

static void hex_fingerprint(const unsigned char *d, size_t n, char *out, size_t outlen)
{
    size_t o = 0;

    out[0] = '\0';
    for (size_t i = 0; i < n && o + 3 + (i > 0) <= outlen; i++)
        o += (size_t)snprintf(out + o, outlen - o, i ? ":%02X" : "%02X", d[i]);
}

/* OpenSSL calls this instead of its chain verification (see pin_ctx): the one certificate
 * that counts is the server's own, by its SHA-256 fingerprint. Runs inside the handshake, so
 * nothing (not a login with its password) is sent to a server that fails it. */
static int pin_verify(X509_STORE_CTX *xs, void *arg)
{
    struct vsl_tls *t = arg;
    X509 *leaf = X509_STORE_CTX_get0_cert(xs);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned n = 0;

    if (!leaf || !X509_digest(leaf, EVP_sha256(), md, &n) || n != sizeof(t->pin)) {
        X509_STORE_CTX_set_error(xs, X509_V_ERR_UNSPECIFIED);
        return 0;
    }
    if (!memcmp(md, t->pin, sizeof(t->pin)))
        return 1;
    hex_fingerprint(md, n, t->pin_seen, sizeof(t->pin_seen));
    X509_STORE_CTX_set_error(xs, X509_V_ERR_CERT_REJECTED);
    return 0;
}

static CURLcode pin_ctx(CURL *h, void *ssl_ctx, void *arg)
{
    (void)h;
    SSL_CTX_set_verify(ssl_ctx, SSL_VERIFY_PEER, NULL);
    SSL_CTX_set_cert_verify_callback(ssl_ctx, pin_verify, arg);
    return CURLE_OK;
}

static int parse_pin(const char *tp, unsigned char pin[32])
{
    size_t n = 0;

    while (*tp && n < 32) {
        unsigned v;
        if (sscanf(tp, "%2x", &v) != 1)
            return -EINVAL;
        pin[n++] = (unsigned char)v;
        tp += 2;
        if (*tp == ':')
            tp++;
    }
    return n == 32 && !*tp ? 0 : -EINVAL;
}

int vsl_tls_setup(CURL *h, struct vsl_tls *t, const char *ca_file, int insecure,
                  const char *thumbprint)
{
    if (ca_file)
        curl_easy_setopt(h, CURLOPT_CAINFO, ca_file);
    if (thumbprint) {
        /* curl's own checks are off; pin_verify() turns OpenSSL's back on with the pin as the
         * only test. CURLOPT_SSL_CTX_FUNCTION exists only with an OpenSSL-like backend. */
        if (parse_pin(thumbprint, t->pin) < 0 ||
            curl_easy_setopt(h, CURLOPT_SSL_CTX_FUNCTION, pin_ctx) != CURLE_OK ||
            curl_easy_setopt(h, CURLOPT_SSL_CTX_DATA, t) != CURLE_OK)
            return -ENOTSUP;
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    } else if (insecure) {
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    } else {
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
    }
    return 0;
}

int vsl_tls_transfer_error(CURL *h, struct vsl_tls *t, CURLcode cc, const char *detail,
                           const char *url, const char *who, char *err, size_t errlen)
{
    const char *why = detail && *detail ? detail : curl_easy_strerror(cc);
    long verify = -1;

    if (t->pin_seen[0]) {
        char want[96];
        hex_fingerprint(t->pin, sizeof(t->pin), want, sizeof(want));
        snprintf(err, errlen,
                 "%s: the server's certificate is SHA256:%s, not the pinned thumbprint "
                 "SHA256:%s; if the %s certificate was replaced on purpose, pin the new one",
                 url, t->pin_seen, want, who);
        t->pin_seen[0] = '\0';
        return -VSL_ETLS;
    }
    if (cc == CURLE_PEER_FAILED_VERIFICATION)
        curl_easy_getinfo(h, CURLINFO_SSL_VERIFYRESULT, &verify);
    /* OpenSSL may check the name itself (verify result), or curl does after a chain that
     * verified, in words of its own (OpenSSL backend: lib/vtls/openssl.c). */
    if (cc == CURLE_PEER_FAILED_VERIFICATION &&
        (verify == X509_V_ERR_HOSTNAME_MISMATCH || verify == X509_V_ERR_IP_ADDRESS_MISMATCH ||
         strstr(why, "subject name matches target host name") ||
         strstr(why, "does not match target host name"))) {
        snprintf(err, errlen,
                 "%s: TLS certificate name mismatch (%s); use the host name the certificate "
                 "was issued for in url=, or pin the certificate with thumbprint=",
                 url, why);
        return -VSL_ETLS;
    }
    switch (cc) {
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
        snprintf(err, errlen,
                 "%s: TLS certificate not trusted (%s); set ca_file= to the CA that signed the "
                 "%s certificate, or pin it with thumbprint=",
                 url, why, who);
        return -VSL_ETLS;
    case CURLE_SSL_CONNECT_ERROR:
        snprintf(err, errlen, "%s: TLS handshake failed (%s)", url, why);
        return -VSL_ETLS;
    case CURLE_OPERATION_TIMEDOUT:
        snprintf(err, errlen, "%s: timed out (%s)", url, why);
        return -VSL_ENET;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
        snprintf(err, errlen, "%s: cannot connect (%s)", url, why);
        return -VSL_ENET;
    default:
        snprintf(err, errlen, "%s: request failed (%s)", url, why);
        return -VSL_ENET;
    }
}

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;

static void curl_init(void)
{
    curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

int vsl_curl_new(struct vsl_tls *t, long timeout_s, const char *ca_file, int insecure,
                 const char *thumbprint, CURL **out)
{
    CURL *h;

    *out = NULL;
    /* Once per process, and not twice at once: the pollers make their clients in their own
     * threads. */
    pthread_once(&curl_once, curl_init);
    if (curl_init_rc != CURLE_OK)
        return -ENOMEM;
    h = curl_easy_init();
    if (!h)
        return -ENOMEM;
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_COOKIEFILE, ""); /* in-memory cookie engine: the session */
    curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(h, CURLOPT_USERAGENT, "vslint/0.1");
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 15L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, timeout_s > 0 ? timeout_s : 60L);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
    if (vsl_tls_setup(h, t, ca_file, insecure, thumbprint) < 0) {
        curl_easy_cleanup(h);
        return -ENOTSUP;
    }
    *out = h;
    return 0;
}

/* "YYYY-MM-DD HH:MM:SS UTC" of an ASN.1 time, or "?" when OpenSSL cannot read it. */
static void cert_time(const ASN1_TIME *t, char *out, size_t len)
{
    struct tm tm;

    if (!t || !ASN1_TIME_to_tm(t, &tm) || !strftime(out, len, "%Y-%m-%d %H:%M:%S UTC", &tm))
        snprintf(out, len, "?");
}

static void cert_name(const X509_NAME *n, char *out, size_t len)
{
    BIO *b = BIO_new(BIO_s_mem());
    int got = 0;

    out[0] = '\0';
    if (b && X509_NAME_print_ex(b, n, 0, XN_FLAG_RFC2253) >= 0)
        got = BIO_read(b, out, (int)len - 1);
    out[got > 0 ? got : 0] = '\0';
    BIO_free(b);
}

/* The leaf of libcurl's certificate chain ("Cert:" is its PEM) into *out. */
static int cert_from_chain(const struct curl_certinfo *ci, struct vsl_cert *out)
{
    const char *pem = NULL;
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned n = 0;

    if (!ci || ci->num_of_certs < 1)
        return -VSL_EPROTO;
    for (const struct curl_slist *l = ci->certinfo[0]; l && !pem; l = l->next)
        if (!strncmp(l->data, "Cert:", 5))
            pem = l->data + 5;
    if (!pem)
        return -VSL_EPROTO;
    BIO *b = BIO_new_mem_buf(pem, -1);
    X509 *x = b ? PEM_read_bio_X509(b, NULL, NULL, NULL) : NULL;
    BIO_free(b);
    if (!x)
        return -VSL_EPROTO;
    cert_name(X509_get_subject_name(x), out->subject, sizeof(out->subject));
    cert_name(X509_get_issuer_name(x), out->issuer, sizeof(out->issuer));
    cert_time(X509_get0_notBefore(x), out->not_before, sizeof(out->not_before));
    cert_time(X509_get0_notAfter(x), out->not_after, sizeof(out->not_after));
    out->expired = X509_cmp_current_time(X509_get0_notAfter(x)) < 0;
    out->not_yet_valid = X509_cmp_current_time(X509_get0_notBefore(x)) > 0;
    out->self_signed = X509_self_signed(x, 0) == 1;
    if (X509_digest(x, EVP_sha256(), md, &n))
        hex_fingerprint(md, n, out->sha256, sizeof(out->sha256));
    X509_free(x);
    return 0;
}

int vsl_tls_peer_cert(const char *url, long timeout_s, const char *who, struct vsl_cert *out,
                      char *err, size_t errlen)
{
    struct vsl_tls t = {0};
    CURL *h = NULL;
    struct curl_certinfo *ci = NULL;
    int r;

    memset(out, 0, sizeof(*out));
    if (strncasecmp(url, "https://", 8))
        return -ENOENT;
    /* Verification off: this is the look at the certificate before any trust is applied; the
     * caller's real client applies the configured trust. Nothing is sent but the handshake. */
    r = vsl_curl_new(&t, timeout_s, NULL, 1, NULL, &h);
    if (r < 0) {
        snprintf(err, errlen, "%s: %s", url, vsl_strerror(r));
        return r;
    }
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_CONNECT_ONLY, 1L);
    curl_easy_setopt(h, CURLOPT_CERTINFO, 1L);
    CURLcode cc = curl_easy_perform(h);
    if (cc != CURLE_OK) {
        r = vsl_tls_transfer_error(h, &t, cc, NULL, url, who, err, errlen);
        goto out;
    }
    if (curl_easy_getinfo(h, CURLINFO_CERTINFO, &ci) != CURLE_OK || cert_from_chain(ci, out) < 0) {
        snprintf(err, errlen, "%s: the server presented no certificate libcurl could read", url);
        r = -VSL_EPROTO;
    }
out:
    curl_easy_cleanup(h);
    return r;
}
