/* vsl_strerror(): one place that names every error code of the project.
 * errno values fall through to strerror(). */
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
