/* The shared fixture of the fuzz targets that talk to the HTTP API (tests/fuzz/fixture.c). */
#ifndef FUZZ_FIXTURE_H
#define FUZZ_FIXTURE_H

#include <stddef.h>

#include "api/api.h"
#include "db/db.h"

#define DATA  SOURCE_ROOT "/tests/unit/data/"
#define TOKEN "fuzz-token-0123456789"
#define T1    1795970565000LL /* 2026-11-29T16:42:45Z */
#define T2    (T1 + 86400000LL)

struct fuzz_fx {
    int ready; /* 1 set up, -1 setup failed */
    char dir[64], path[128];
    struct db *db;
    struct api_server *srv;
    unsigned short port;
};
extern struct fuzz_fx fx;

/* Fills the database (in /tmp/vslint-fuzz-TAG-*, removed at exit) and starts the server, its
 * HTTP threads' statement caches (and fx.db's) of stmt_cache entries (0: the default); aborts
 * on failure. */
void fuzz_setup(const char *tag, int stmt_cache);
/* Sends all of p; 0, or -1 when the peer closed. */
int fuzz_send_all(int fd, const char *p, size_t n);

#endif
