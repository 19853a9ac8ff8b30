/* Logging for the daemon layer (OpenBSD log.c style): stderr in the foreground, syslog or the
 * systemd journal otherwise. Library code logs at debug at most; errors are logged once, where
 * they are handled. */
#ifndef VSL_LOG_H
#define VSL_LOG_H

#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <time.h>

#define VSL_PRINTF(a, b) __attribute__((format(printf, a, b)))

enum log_target {
    LOG_TO_STDERR = 0,
    LOG_TO_SYSLOG = 1,
    /* sd_journal_sendv with VSLINT_VCENTER=, VSLINT_CHECK=, PRIORITY= fields; syslog when
     * vslint was built without libsystemd or the journal does not take a line. */
    LOG_TO_JOURNAL = 2,
};

/* What a line is; each level has its syslog priority and stderr prefix in log.c. */
enum log_level {
    LOG_LEVEL_WARN,  /* an error, with ": strerror(errno)" appended */
    LOG_LEVEL_WARNX, /* an error */
    LOG_LEVEL_INFO,
    LOG_LEVEL_DEBUG, /* dropped unless log_init's debug is set */
    LOG_LEVEL_FATAL,
};

/* debug: 0 = info and above, 1 = debug too. */
void log_init(int debug, enum log_target to);
/* One line at level; what the names below call. */
void log_at(enum log_level level, const char *fmt, ...) VSL_PRINTF(2, 3);
#define log_warn(...)  log_at(LOG_LEVEL_WARN, __VA_ARGS__) /* appends ": strerror(errno)" */
#define log_warnx(...) log_at(LOG_LEVEL_WARNX, __VA_ARGS__)
#define log_info(...)  log_at(LOG_LEVEL_INFO, __VA_ARGS__)
#define log_debug(...) log_at(LOG_LEVEL_DEBUG, __VA_ARGS__)
/* Logs the line and exits with status 2. */
#define fatalx(...) (log_at(LOG_LEVEL_FATAL, __VA_ARGS__), exit(2))

/* What this thread's next lines are about, sent as VSLINT_VCENTER= and VSLINT_CHECK= to the
 * journal (a poller thread sets its vCenter once). The strings are borrowed: they must live
 * until cleared with NULL. */
void log_context_vcenter(const char *name);
void log_context_check(const char *id);
/* This thread's context as set above (NULL: none), for a thread that works on its behalf. */
const char *log_get_context_vcenter(void);
const char *log_get_context_check(void);

/* The journal fields of one line, "KEY=value" each, into fields[0..max) pointing into buf
 * (size bytes). Returns how many were written. Exposed for the unit test. */
size_t log_journal_fields(int priority, const char *msg, const char *vcenter, const char *check,
                          int errnum, char *buf, size_t size, const char **fields, size_t max);

/* A stopwatch for the debug lines that say what a step cost: wall time, and the CPU time of the
 * calling thread (steadier than wall on a busy machine). Read it from the thread that started it. */
struct vsl_watch {
    struct timespec wall, cpu;
};
void vsl_watch_start(struct vsl_watch *w);
/* Seconds since vsl_watch_start: wall time into *wall, this thread's CPU time into *cpu. */
void vsl_watch_read(const struct vsl_watch *w, double *wall, double *cpu);

#endif
