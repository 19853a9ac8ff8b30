/* Logging: stderr in the foreground, syslog or the journal (with structured fields) when run as
 * a service. Every function preserves errno so callers can log and still inspect it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <sys/uio.h>
#include <unistd.h>

#ifdef VSL_HAVE_JOURNAL
#include <systemd/sd-journal.h>
#endif

#include "util/log.h"

/* Where libsystemd's sd_journal_send() writes (its native protocol socket). */
#define JOURNAL_SOCKET "/run/systemd/journal/socket"

static int log_debug_on;
static enum log_target log_to;
static _Thread_local const char *ctx_vcenter;
static _Thread_local const char *ctx_check;

void log_init(int debug, enum log_target to)
{
    log_debug_on = debug;
#ifndef VSL_HAVE_JOURNAL
    if (to == LOG_TO_JOURNAL)
        to = LOG_TO_SYSLOG; /* built without libsystemd: journald reads syslog(3) too */
#endif
#ifdef VSL_HAVE_JOURNAL
    /* No journald (a container, a chroot, a machine without systemd): every line sent there,
     * and to syslog(3) behind it, would be lost without a word. stderr is kept instead. */
    if (to == LOG_TO_JOURNAL && access(JOURNAL_SOCKET, W_OK) < 0) {
        fprintf(stderr, "vslint: no journal at %s (%s): logging to stderr\n", JOURNAL_SOCKET,
                strerror(errno));
        to = LOG_TO_STDERR;
    }
#endif
    log_to = to;
    /* Also the journal's fallback, should a line not go through. */
    if (to != LOG_TO_STDERR)
        openlog("vslint", LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

void log_context_vcenter(const char *name)
{
    ctx_vcenter = name;
}

void log_context_check(const char *id)
{
    ctx_check = id;
}

const char *log_get_context_vcenter(void)
{
    return ctx_vcenter;
}

const char *log_get_context_check(void)
{
    return ctx_check;
}

/* Appends "KEY=value" to buf at *used; NULL when it does not fit. */
static const char *field(char *buf, size_t size, size_t *used, const char *key, const char *value)
{
    int n = snprintf(buf + *used, size - *used, "%s=%s", key, value);

    if (n < 0 || (size_t)n >= size - *used)
        return NULL;
    const char *f = buf + *used;
    *used += (size_t)n + 1;
    return f;
}

size_t log_journal_fields(int priority, const char *msg, const char *vcenter, const char *check,
                          int errnum, char *buf, size_t size, const char **fields, size_t max)
{
    char num[16];
    size_t used = 0, n = 0;
    const char *f;

    struct {
        const char *key, *value;
    } kv[] = {
        {"MESSAGE", msg},
        {"PRIORITY", num},
        {"SYSLOG_IDENTIFIER", "vslint"},
        {"SYSLOG_FACILITY", "3"}, /* LOG_DAEMON >> 3, as syslog(3) would have sent it */
        {"VSLINT_VCENTER", vcenter},
        {"VSLINT_CHECK", check},
        {"ERRNO", NULL},
    };
    char errbuf[16];
    snprintf(num, sizeof(num), "%d", priority);
    if (errnum) {
        snprintf(errbuf, sizeof(errbuf), "%d", errnum);
        kv[6].value = errbuf;
    }
    for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]) && n < max; i++) {
        if (!kv[i].value || !*kv[i].value)
            continue;
        if (!(f = field(buf, size, &used, kv[i].key, kv[i].value)))
            break;
        fields[n++] = f;
    }
    return n;
}

/* One line to the journal; -1 when it was not taken (then syslog gets it). */
static int to_journal(int pri, const char *msg, int errnum)
{
#ifdef VSL_HAVE_JOURNAL
    char buf[4096];
    const char *fields[8];
    struct iovec iov[8];
    size_t n = log_journal_fields(pri, msg, ctx_vcenter, ctx_check, errnum, buf, sizeof(buf),
                                  fields, 8);

    for (size_t i = 0; i < n; i++) {
        iov[i].iov_base = (void *)fields[i];
        iov[i].iov_len = strlen(fields[i]);
    }
    return n && sd_journal_sendv(iov, (int)n) >= 0 ? 0 : -1;
#else
    (void)pri, (void)msg, (void)errnum;
    return -1;
#endif
}

static void vlog(int pri, const char *prefix, const char *fmt, va_list ap, int errnum)
{
    int saved = errno;
    char msg[2048];
    int n = vsnprintf(msg, sizeof(msg), fmt, ap);

    if (errnum && n >= 0 && (size_t)n < sizeof(msg))
        snprintf(msg + n, sizeof(msg) - (size_t)n, ": %s", strerror(errnum));
    if (log_to == LOG_TO_STDERR) {
        fprintf(stderr, "vslint: %s%s\n", prefix, msg);
        fflush(stderr);
    } else if (log_to == LOG_TO_SYSLOG || to_journal(pri, msg, errnum) < 0) {
        syslog(pri, "%s", msg);
    }
    errno = saved;
}

void log_at(enum log_level level, const char *fmt, ...)
{
    static const struct {
        int pri;
        const char *prefix;
    } levels[] = {
        [LOG_LEVEL_WARN] = {LOG_ERR, "error: "},   [LOG_LEVEL_WARNX] = {LOG_ERR, "error: "},
        [LOG_LEVEL_INFO] = {LOG_INFO, ""},         [LOG_LEVEL_DEBUG] = {LOG_DEBUG, "debug: "},
        [LOG_LEVEL_FATAL] = {LOG_CRIT, "fatal: "},
    };
    int e = level == LOG_LEVEL_WARN ? errno : 0;
    va_list ap;

    if (level == LOG_LEVEL_DEBUG && !log_debug_on)
        return;
    va_start(ap, fmt);
    vlog(levels[level].pri, levels[level].prefix, fmt, ap, e);
    va_end(ap);
}

void vsl_watch_start(struct vsl_watch *w)
{
    clock_gettime(CLOCK_MONOTONIC, &w->wall);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &w->cpu);
}

static double since(clockid_t clock, const struct timespec *t0)
{
    struct timespec t;

    clock_gettime(clock, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

void vsl_watch_read(const struct vsl_watch *w, double *wall, double *cpu)
{
    *wall = since(CLOCK_MONOTONIC, &w->wall);
    *cpu = since(CLOCK_THREAD_CPUTIME_ID, &w->cpu);
}
