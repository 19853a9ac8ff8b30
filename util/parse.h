/* Small value parsers that more than one layer needs: the vSphere decoders read vCenter's
 * values with them, and the checks the values that vCenter passes on from a host. */
#ifndef VSL_PARSE_H
#define VSL_PARSE_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* 1 for "true" or "1", 0 for "false" or "0", dflt for anything else (or NULL). The words in
 * any case: vCenter's xsd:boolean is lower-case, but a host's advanced option value is the
 * host's own string, and "True" there means what it says. */
static inline int vsl_parse_bool(const char *s, int dflt)
{
    if (!s)
        return dflt;
    if (!strcasecmp(s, "true") || !strcmp(s, "1"))
        return 1;
    if (!strcasecmp(s, "false") || !strcmp(s, "0"))
        return 0;
    return dflt;
}

/* A whole decimal number from lo to hi, all of s (a command-line value): 0, or -EINVAL. */
static inline int vsl_parse_whole(const char *s, long lo, long hi, long *out)
{
    char *end;

    errno = 0;
    *out = strtol(s, &end, 10);
    return *s && !*end && !errno && *out >= lo && *out <= hi ? 0 : -EINVAL;
}

#endif
