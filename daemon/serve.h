/* `vslint serve`: the daemon. One poller thread per vCenter on its own interval with backoff,
 * the checks after every poll, and the HTTP API; SIGHUP reloads, SIGTERM stops cleanly. */
#ifndef VSL_SERVE_H
#define VSL_SERVE_H

/* Runs the daemon until SIGTERM or SIGINT; returns the process exit status. */
struct vsl_args;
int cmd_serve(const struct vsl_args *a);

/* The delay before retrying a vCenter after its failures-th consecutive failed poll: its
 * interval doubled per failure after the first, capped at the larger of its interval and
 * min(8 x interval, 1 hour). */
int vsl_backoff_s(int interval_s, int failures);

#endif
