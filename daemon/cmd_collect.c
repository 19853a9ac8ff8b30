/* `vslint collect` and `vslint config-check`: poll each vCenter once, print what was stored;
 * validate a configuration. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/cli.h"
#include "daemon/config.h"
#include "daemon/poll.h"
#include "db/db.h"
#include "util/err.h"
#include "util/log.h"

static const struct option collect_opts[] = {
    {"config", required_argument, NULL, 'c'},
    {"vcenter", required_argument, NULL, 'V'},
    {"verbose", no_argument, NULL, 'v'},
    {NULL, 0, NULL, 0},
};

int cmd_collect(int argc, char **argv)
{
    const char *path = NULL, *only = NULL;
    struct vsl_config *cfg = NULL;
    struct db *db = NULL;
    char *dberr = NULL;
    int verbose = 0, failed = 0, polled = 0, c;

    optind = 1;
    while ((c = getopt_long(argc, argv, "c:v", collect_opts, NULL)) != -1) {
        switch (c) {
        case 'c': path = optarg; break;
        case 'V': only = optarg; break;
        case 'v': verbose = 1; break;
        default: vsl_usage("collect", stderr); return VSL_EXIT_FAIL;
        }
    }
    log_init(verbose, 0);
    if (vsl_cli_load_config(path, &cfg, 1) < 0)
        return VSL_EXIT_FAIL;
    if (db_open(cfg->db_path, &db, &dberr) < 0) {
        log_warnx("cannot open database %s: %s", cfg->db_path, dberr ? dberr : "unknown error");
        free(dberr);
        vsl_config_free(cfg);
        return VSL_EXIT_FAIL;
    }
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

int cmd_config_check(int argc, char **argv)
{
    static const struct option opts[] = {
        {"config", required_argument, NULL, 'c'},
        {NULL, 0, NULL, 0},
    };
    const char *path = NULL;
    struct vsl_config *cfg = NULL;
    int c, bad = 0;

    optind = 1;
    while ((c = getopt_long(argc, argv, "c:", opts, NULL)) != -1) {
        if (c != 'c') {
            vsl_usage("config-check", stderr);
            return VSL_EXIT_FAIL;
        }
        path = optarg;
    }
    if (vsl_cli_load_config(path, &cfg, 1) < 0)
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
