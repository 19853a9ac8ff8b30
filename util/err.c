/* vsl_strerror(): one place that names every error code of the project.
 * errno values fall through to strerror(). */
#include <stdio.h>
#include <string.h>

#include "util/err.h"

static const char *const messages[] = {
    [VSL_ENET - VSL_EBASE] = "network error",
    [VSL_ETLS - VSL_EBASE] = "TLS error",
    [VSL_EHTTP - VSL_EBASE] = "unexpected HTTP status",
    [VSL_EXML - VSL_EBASE] = "malformed XML",
    [VSL_EFAULT - VSL_EBASE] = "SOAP fault",
    [VSL_ELOGIN - VSL_EBASE] = "login rejected",
    [VSL_ENOAUTH - VSL_EBASE] = "not authenticated",
    [VSL_ETOOBIG - VSL_EBASE] = "input exceeds limit",
    [VSL_ECONFIG - VSL_EBASE] = "configuration error",
    [VSL_EDB - VSL_EBASE] = "database error",
    [VSL_EPROTO - VSL_EBASE] = "protocol error",
    [VSL_ENOTFOUND - VSL_EBASE] = "not found",
    [VSL_ERETRY - VSL_EBASE] = "interrupted read, to be retried",
    [VSL_EVERSION - VSL_EBASE] = "the collector version is no longer valid",
};

const char *vsl_strerror(int err)
{
    if (err < 0)
        err = -err;
    if (err > VSL_EBASE && err < VSL_EMAX && messages[err - VSL_EBASE])
        return messages[err - VSL_EBASE];
    if (err == 0)
        return "success";
    return strerror(err);
}

const char *vsl_error_privileges(const char *error, char *buf, size_t len)
{
    static const char id_chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                   "0123456789._";
    static const char needs[] = " fault (needs ";
    const char *at = error ? strstr(error, " fault") : NULL;
    const char *type = at;
    size_t n = 0;

    if (!at)
        return NULL;
    /* The fault's type comes right before, at the start of the line or after "URL: " (a URL
     * holds no space): a message quoted further on, a host's own text, cannot pass for one. */
    while (type > error && strchr(id_chars, type[-1]))
        type--;
    if (type == at)
        return NULL;
    if (type > error && (type - error < 2 || type[-1] != ' ' || type[-2] != ':' ||
                         memchr(error, ' ', (size_t)(type - error - 1))))
        return NULL;
    if (strncmp(at, needs, strlen(needs)))
        return NULL;
    at += strlen(needs);
    for (;;) {
        size_t id = strspn(at + n, id_chars);
        if (id == 0)
            return NULL;
        n += id;
        if (strncmp(at + n, ", ", 2))
            break;
        n += 2;
    }
    if (at[n] != ')' || n >= len)
        return NULL;
    snprintf(buf, len, "%.*s", (int)n, at);
    return buf;
}
