/* vslint digest: build the digest of what changed since the previous one and send it now (or
 * print it with --dry-run). The same code path as the daemon's nightly digest. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "daemon/cli.h"
#include "daemon/config.h"
#include "daemon/digest.h"
#include "daemon/poll.h"
#include "db/db.h"
#include "util/err.h"
#include "util/log.h"

static int sleep_s(void *ctx, int seconds)
{
    (void)ctx;
    sleep((unsigned)seconds);
    return 0;
}

int cmd_digest(const struct vsl_args *a)
{
    struct vsl_config *cfg = NULL;
    struct db *db = NULL;
    int r;

    if (vsl_cli_open(a, 0, &cfg, &db) < 0)
        return VSL_EXIT_FAIL;
    if (!cfg->digest.line) {
        fprintf(stderr, "vslint: error: %s has no [digest] section (smtp_url, from, to): "
                        "see vslint.conf(5)\n", cfg->path);
        r = -VSL_ECONFIG;
        goto out;
    }
    r = vsl_digest_run(db, cfg, 0, vsl_now_ms(), cfg->digest.attempts, sleep_s, NULL,
                       a->dry_run, stdout);
    if (a->dry_run && fflush(stdout) != 0)
        r = -VSL_EHTTP;
out:
    db_close(db);
    vsl_config_free(cfg);
    return r < 0 ? VSL_EXIT_FAIL : VSL_EXIT_OK;
}
