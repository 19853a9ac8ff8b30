/* The dashboard's files (web/), embedded into the binary at build time by web/embed.py, and a
 * lookup by URL path for the HTTP server: "/" is index.html, everything else is "/static/NAME". */
#ifndef WEB_ASSETS_H
#define WEB_ASSETS_H

#include <stddef.h>

struct api_asset {
    const char *path;          /* URL path: "/", "/static/app.js", ... */
    const char *content_type;  /* full Content-Type value, with charset for text */
    const unsigned char *data; /* the file's bytes; static, never freed */
    size_t len;
    const char *etag; /* strong ETag of the content, quotes included: "\"3f2a...\"" */
};

/* Every embedded file, in path order (generated: web_assets.c). */
extern const struct api_asset api_assets[];
extern const size_t api_assets_len;

/* The asset served at path (exact match, no query string), or NULL. */
const struct api_asset *api_asset_find(const char *path);

#endif
