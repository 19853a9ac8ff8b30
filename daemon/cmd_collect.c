/* `vslint collect` and `vslint config-check`: poll each vCenter once, print what was stored;
 * validate a configuration. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/cli.h"
#include "daemon/config.h"
#include "daemon/poll.h"
#include "db/db.h"
#include "util/err.h"
#include "util/log.h"

int cmd_collect(const struct vsl_args *a)
{
    const char *only = a->vcenter;
    struct vsl_config *cfg = NULL;
    struct db *db = NULL;
    int failed = 0, polled = 0;

    if (vsl_cli_open(a, 0, &cfg, &db) < 0)
        return VSL_EXIT_FAIL;
    for (size_t i = 0; i < cfg->n_vcenters; i++) {
        const struct vsl_vcenter_conf *vc = &cfg->vcenters[i];
        struct vsl_poll_result res;

        if (only && strcmp(only, vc->name))
            continue;
        polled++;
        if (vsl_poll(db, vc, &res) < 0) {
            log_warnx("vcenter %s: poll failed: %s", vc->name, res.error);
            failed++;
            continue;
        }
        printf("vcenter %s: stored in %.2f s:", vc->name, res.duration_ms / 1000.0);
        for (int k = 0; k < DB_NKINDS; k++)
            printf("%s %lld %s", k ? "," : "", (long long)res.counts[k], db_kind_name(k));
        printf("\n");
        log_debug("vcenter %s: %lld requests, %lld bytes on the wire, %lld bytes of XML", vc->name,
                  (long long)res.requests, (long long)res.bytes_wire, (long long)res.bytes_xml);
    }
    if (only && polled == 0) {
        log_warnx("no [vcenter %s] in %s", only, cfg->path);
        failed++;
    }
    db_close(db);
    vsl_config_free(cfg);
    return failed ? VSL_EXIT_FAIL : VSL_EXIT_OK;
}

int cmd_config_check(const struct vsl_args *a)
{
    struct vsl_config *cfg = NULL;
    int bad = 0;

    if (vsl_cli_load_config(a->config, &cfg, 1) < 0)
        return VSL_EXIT_FAIL;
    for (size_t i = 0; i < cfg->n_vcenters; i++) {
        char *pw = NULL, err[512];
        if (vsl_config_password(&cfg->vcenters[i], &pw, err, sizeof(err)) < 0) {
            fprintf(stderr, "%s:%d: [vcenter %s]: %s\n", cfg->path, cfg->vcenters[i].line,
                    cfg->vcenters[i].name, err);
            bad++;
        }
        vsl_config_wipe(pw);
    }
    vsl_config_free(cfg);
    if (bad)
        return VSL_EXIT_FAIL;
    printf("configuration OK\n");
    return VSL_EXIT_OK;
}
