/* A background thread that its owner asks to stop with a flag: set under the owner's mutex,
 * with a broadcast on the owner's condition variable that the thread waits on. The digest
 * thread and the SOAP prefetch share this lifecycle. */
#ifndef VSL_WORKER_H
#define VSL_WORKER_H

#include <errno.h>
#include <pthread.h>

struct vsl_worker {
    pthread_t tid;
    int running; /* started and not yet joined; only the owner's thread touches it */
    int stop;    /* under the owner's mutex: the thread is to end */
};

/* Clears stop and runs fn(arg) in a new thread. -EAGAIN when no thread could be made. */
static inline int vsl_worker_start(struct vsl_worker *w, void *(*fn)(void *), void *arg)
{
    w->stop = 0; /* no thread reads it yet: pthread_create publishes it */
    if (pthread_create(&w->tid, NULL, fn, arg) != 0)
        return -EAGAIN;
    w->running = 1;
    return 0;
}

/* Waits for a started thread to end by itself; nothing when none runs. */
static inline void vsl_worker_join(struct vsl_worker *w)
{
    if (!w->running)
        return;
    pthread_join(w->tid, NULL);
    w->running = 0;
}

/* Sets stop under mu, wakes the thread through cv and waits for it to end. */
static inline void vsl_worker_stop(struct vsl_worker *w, pthread_mutex_t *mu, pthread_cond_t *cv)
{
    if (!w->running)
        return;
    pthread_mutex_lock(mu);
    w->stop = 1;
    pthread_cond_broadcast(cv);
    pthread_mutex_unlock(mu);
    vsl_worker_join(w);
}

#endif
