/* The monotonic clock in milliseconds, for durations and deadlines (never for times shown). */
#ifndef VSL_CLOCK_H
#define VSL_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline int64_t vsl_mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#endif
