/* Severities by name, and the evaluation's storage (see model/finding.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/finding.h"

static const char *const severity_names[] = {"info", "warning", "critical"};

const char *vsl_severity_name(enum vsl_severity s)
{
    return (unsigned)s < 3 ? severity_names[s] : "unknown";
}

int vsl_severity_parse(const char *s, enum vsl_severity *out)
{
    for (int i = 0; i < 3; i++) {
        if (!strcmp(s, severity_names[i])) {
            *out = (enum vsl_severity)i;
            return 0;
        }
    }
    return -EINVAL;
}

void evaluation_free(struct evaluation *ev)
{
    if (!ev)
        return;
    free(ev->owned);
    memset(ev, 0, sizeof(*ev));
}
