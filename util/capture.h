/* Captures a user can send back (`vslint record`): every request and answer of one read, in
 * order, with credentials, session cookies and tokens removed, written as a tar.gz archive. */
#ifndef VSL_CAPTURE_H
#define VSL_CAPTURE_H

#include <stddef.h>

/* One exchange as the transport saw it. Strings are borrowed for the call; the capture keeps
 * its own copies (the request already stripped of its password, see vsl_capture_add()). */
struct vsl_exchange {
    const char *source; /* "vcenter", "array1", ...: the label, never the configured name */
    const char *proto;  /* "soap" (a POST to /sdk), "get" (a file under /sdk), "rest" */
    const char *method; /* "GET", "POST", "DELETE" for rest and get; NULL for soap (read
                         * from the request's first element) */
    const char *url;    /* the whole URL; the archive keeps its path and query */
    const char *req;    /* the request body, or NULL */
    size_t req_len;
    const char *answer; /* the answer body (NULL: none) */
    size_t answer_len;
    long status;    /* the HTTP status (0: none came) */
    int incomplete; /* the answer was too big to record whole: the capture fails */
    const char *failure; /* NULL: the answer came whole; else how the transfer ended (see
                          * vsl_capture_outcome()), and answer holds what came before */
};

/* What the README says about where the capture came from. */
struct vsl_capture_about {
    const char *vcenter; /* the [vcenter NAME] recorded (left out when anonymized) */
    const char *url;     /* its URL (left out when anonymized) */
    const char *version; /* vslint's */
    int anonymize;
    const char *failed; /* NULL: every read ended well; else why one failed (secrets removed
                         * from it, and anonymized as the rest) */
    const char *const *array_urls; /* the configured arrays' URLs (n_arrays of them): when
                                    * anonymized, their hosts are replaced and then removed
                                    * wherever they show, even an array that never answered
                                    * (its host is then only in the failure's text) */
    size_t n_arrays;
};

struct vsl_capture;

/* A capture holds at most max_bytes of requests and answers (0: 2 GiB): a read bigger than
 * that makes vsl_capture_write() fail with a message saying so, not an archive cut short. */
int vsl_capture_new(size_t max_bytes, struct vsl_capture **out);
void vsl_capture_free(struct vsl_capture *c); /* NULL is a no-op; secrets are wiped */

/* Something that must not be in the archive wherever it appears: a password, a session
 * cookie's value, a CSRF token. The archive says "(removed)" in its place. Strings shorter
 * than 4 bytes are not searched for (they would match all over). Thread-safe. */
int vsl_capture_secret(struct vsl_capture *c, const char *s);

/* The account a capture logged in as, and its parts (the name before '@' or after '\\', the
 * domain): a user name says who administers the estate. Case-sensitive, as secrets are. */
int vsl_capture_user(struct vsl_capture *c, const char *user);

/* The values of the cookies the libcurl handle h holds (a session's), as secrets. */
int vsl_capture_cookies(struct vsl_capture *c, void *h);

/* Appends one exchange. A SOAP request's and answer's credential elements (the Login
 * password and user name, the session key of a UserSession) are replaced before the copy is
 * kept. Thread-safe: the pages of a read come from several connections at once. */
int vsl_capture_add(struct vsl_capture *c, const struct vsl_exchange *x);

/* Writes the archive to path (beside it first, then renamed into place): README.md,
 * manifest.tsv and one file per request and answer, every secret removed, and with
 * about->anonymize every name, IQN, WWN and address replaced (util/anon.c). 0, or a negative
 * error with the reason in err. */
int vsl_capture_write(struct vsl_capture *c, const char *path,
                      const struct vsl_capture_about *about, char *err, size_t errlen);

/* The number of exchanges held, and of those that got an HTTP status (a capture of a vCenter
 * that never answered holds nothing worth sending). */
size_t vsl_capture_count(const struct vsl_capture *c);
size_t vsl_capture_answered(const struct vsl_capture *c);

/* How a transfer of the libcurl handle h that ended with CURLcode cc went, in out (of size
 * bytes), for vsl_exchange.failure: NULL when cc is CURLE_OK; else "closed after N of M
 * bytes" (or "closed after N bytes" without a Content-Length), "timed out after N bytes",
 * "vslint stopped reading after N bytes" (stopped: vslint's own write callback refused the
 * answer, malformed or too big), or "no answer: CURL'S MESSAGE". got is the answer bytes
 * received. vcsim-replay ends its answer the same way. */
const char *vsl_capture_outcome(void *h, int cc, int stopped, size_t got, char *out, size_t size);

/* Removes the archive vsl_capture_write() is writing, if it is: for a signal handler, which
 * may call it at any moment (async-signal-safe: unlink alone). */
void vsl_capture_discard(struct vsl_capture *c);

/* Whether vsl_capture_write() put the archive in place: for the same signal handler, to say
 * which happened (async-signal-safe). The rename and this are one step for SIGINT, SIGTERM
 * and SIGHUP, which are blocked across it, so the handler never sees the archive in place
 * and this unset. */
int vsl_capture_written(const struct vsl_capture *c);

#endif
