/* The one spelling of a time that vslint hands out: ISO-8601 UTC to the second
 * ("2026-11-29T19:22:45Z"), in the store's rows, the API's answers, evidence and the CLI's
 * text. Each caller says what an unknown time is in its own output (NULL, "", "?", JSON null):
 * this only formats. */
#ifndef VSL_ISOTIME_H
#define VSL_ISOTIME_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* Unix milliseconds into buf; buf, or NULL when the time cannot be broken down or does not
 * fit (buf is then not a string to print). */
static inline const char *vsl_iso_time(int64_t ms, char *buf, size_t size)
{
    const time_t t = (time_t)(ms / 1000);
    struct tm tm;

    if (!gmtime_r(&t, &tm) || strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        return NULL;
    return buf;
}

#endif
