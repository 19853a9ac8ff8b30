/* Logging: stderr in the foreground, syslog (and so the journal) when daemonised.
 * Every function preserves errno so callers can log and still inspect it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "util/log.h"

static int log_debug_on;
static int log_syslog;

void log_init(int debug, int to_syslog)
{
    log_debug_on = debug;
    log_syslog = to_syslog;
    if (to_syslog)
        openlog("vslint", LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

static void vlog(int pri, const char *prefix, const char *fmt, va_list ap, const char *suffix)
{
    int saved = errno;
    char msg[2048];

    vsnprintf(msg, sizeof(msg), fmt, ap);
    if (log_syslog) {
        if (suffix)
            syslog(pri, "%s: %s", msg, suffix);
        else
            syslog(pri, "%s", msg);
    } else {
        if (suffix)
            fprintf(stderr, "vslint: %s%s: %s\n", prefix, msg, suffix);
        else
            fprintf(stderr, "vslint: %s%s\n", prefix, msg);
        fflush(stderr);
    }
    errno = saved;
}

void log_warn(const char *fmt, ...)
{
    va_list ap;
    const char *e = strerror(errno);

    va_start(ap, fmt);
    vlog(LOG_ERR, "error: ", fmt, ap, e);
    va_end(ap);
}

void log_warnx(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vlog(LOG_ERR, "error: ", fmt, ap, NULL);
    va_end(ap);
}

void log_info(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vlog(LOG_INFO, "", fmt, ap, NULL);
    va_end(ap);
}

void log_debug(const char *fmt, ...)
{
    va_list ap;

    if (!log_debug_on)
        return;
    va_start(ap, fmt);
    vlog(LOG_DEBUG, "debug: ", fmt, ap, NULL);
    va_end(ap);
}

void fatalx(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vlog(LOG_CRIT, "fatal: ", fmt, ap, NULL);
    va_end(ap);
    exit(2);
}
