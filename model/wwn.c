/* The name vSphere gives a SAN device, from the WWN an array reports for its LUN: the join
 * between an array's LUNs and a vCenter's datastore extents. */
#include <ctype.h>
#include <stddef.h>

#include "model/inventory.h"

int est_naa_from_wwn(const char *wwn, char *out, size_t size)
{
    size_t n = 0, o = 4;

    if (!wwn || size < 4 + 32 + 1)
        return -1;
    out[0] = 'n', out[1] = 'a', out[2] = 'a', out[3] = '.';
    for (const char *p = wwn; *p; p++) {
        if (*p == ':' && n % 2 == 0 && n > 0 && p[-1] != ':' && p[1])
            continue; /* colons only between bytes, one each */
        if (!isxdigit((unsigned char)*p) || n == 32)
            return -1;
        out[o++] = (char)tolower((unsigned char)*p);
        n++;
    }
    /* NAA 6 (registered extended, what Unity presents) is 16 bytes; NAA 5 is 8. */
    if (n != 32 && n != 16)
        return -1;
    out[o] = '\0';
    return 0;
}
