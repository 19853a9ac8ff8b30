/* Project-wide error codes and vsl_strerror().
 * Functions return 0 or a negative code: -errno values, or the VSL_E* codes above the errno range. */
#ifndef VSL_ERR_H
#define VSL_ERR_H

#include <stddef.h>

enum vsl_err {
    VSL_EBASE = 1000,
    VSL_ENET,      /* could not connect, timed out, connection dropped */
    VSL_ETLS,      /* TLS handshake or certificate verification failed */
    VSL_EHTTP,     /* unexpected HTTP status */
    VSL_EXML,      /* malformed or truncated XML */
    VSL_EFAULT,    /* SOAP fault returned by the server */
    VSL_ELOGIN,    /* the server rejected the user name or password */
    VSL_ENOAUTH,   /* the session is no longer authenticated */
    VSL_ETOOBIG,   /* remote input exceeded a hard limit */
    VSL_ECONFIG,   /* bad configuration */
    VSL_EDB,       /* SQLite error */
    VSL_EPROTO,    /* the server answered with something we do not understand */
    VSL_ENOTFOUND, /* no such object */
    VSL_ERETRY,    /* a paged read may have lost a page: run the poll again */
    VSL_EVERSION,  /* the property collector version is no longer valid: read everything */
    VSL_EMAX
};

/* Returns a static string describing err (negative or positive). Never NULL. */
const char *vsl_strerror(int err);

/* The privileges an error line names, as vsphere/soap.c's fault_error() writes them
 * ("[URL: ]Type fault (needs P[, P]...): message"), copied into buf. NULL when the line names
 * none, the list is cut short, or it does not fit len. Only the first " fault" counts: what
 * follows it is vCenter's message, which may hold the same words. */
const char *vsl_error_privileges(const char *error, char *buf, size_t len);

#endif
