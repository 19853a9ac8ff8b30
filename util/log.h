/* Logging for the daemon layer (OpenBSD log.c style): stderr in the foreground, syslog otherwise.
 * Library code logs at debug at most; errors are logged once, where they are handled. */
#ifndef VSL_LOG_H
#define VSL_LOG_H

#include <stdarg.h>

#define VSL_PRINTF(a, b) __attribute__((format(printf, a, b)))

/* debug: 0 = info and above, 1 = debug too. to_syslog: 0 = stderr. */
void log_init(int debug, int to_syslog);
void log_warn(const char *fmt, ...) VSL_PRINTF(1, 2);  /* appends ": strerror(errno)" */
void log_warnx(const char *fmt, ...) VSL_PRINTF(1, 2);
void log_info(const char *fmt, ...) VSL_PRINTF(1, 2);
void log_debug(const char *fmt, ...) VSL_PRINTF(1, 2);
_Noreturn void fatalx(const char *fmt, ...) VSL_PRINTF(1, 2);

#endif
