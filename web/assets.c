/* Lookup of the embedded dashboard files by URL path. The table itself is generated at build
 * time (web/embed.py -> web_assets.c), so the binary serves the page with no files on disk. */
#include <string.h>

#include "web/assets.h"

const struct api_asset *api_asset_find(const char *path)
{
    if (!path)
        return NULL;
    /* A handful of files: a linear scan is cheaper than anything cleverer. */
    for (size_t i = 0; i < api_assets_len; i++)
        if (strcmp(api_assets[i].path, path) == 0)
            return &api_assets[i];
    return NULL;
}
