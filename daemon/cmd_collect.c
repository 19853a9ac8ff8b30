/* `vslint collect` and `vslint config-check`: poll each vCenter and array once, print what was stored;
 * validate a configuration (and with --connect, try each source: daemon/probe.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/cli.h"
#include "daemon/config.h"
#include "daemon/site.h"
#include "daemon/poll.h"
#include "daemon/probe.h"
#include "db/db.h"
#include "util/err.h"
#include "util/log.h"
#include "util/parse.h"

int cmd_collect(const struct vsl_args *a)
{
    const char *only = a->vcenter;
    struct vsl_config *cfg = NULL;
    struct db *db = NULL;
    int failed = 0, polled = 0;

    if (vsl_cli_open(a, 0, &cfg, &db) < 0)
        return VSL_EXIT_FAIL;
    for (size_t i = 0; i < vsl_config_nsources(cfg); i++) {
        const struct vsl_vcenter_conf *vc = vsl_config_source(cfg, i);
        const char *what = vc->type ? "array" : "vcenter";
        struct vsl_poll_result res;

        if (only && strcmp(only, vc->name))
            continue;
        polled++;
        if ((vc->type ? vsl_array_poll(db, vc, &res) : vsl_poll(db, vc, &res)) < 0) {
            log_warnx("%s %s: poll failed: %s", what, vc->name, res.error);
            failed++;
            continue;
        }
        printf("%s %s: stored in %.2f s:", what, vc->name, res.duration_ms / 1000.0);
        /* An array's kinds for an array, a vCenter's for a vCenter. */
        const int from = vc->type ? DB_ARRAY_POOL : 0, to = vc->type ? DB_NKINDS : DB_ARRAY_POOL;
        for (int k = from; k < to; k++)
            printf("%s %lld %s", k > from ? "," : "", (long long)res.counts[k], db_kind_name(k));
        printf("\n");
        log_debug("vcenter %s: %lld requests, %lld bytes on the wire, %lld bytes of XML", vc->name,
                  (long long)res.requests, (long long)res.bytes_wire, (long long)res.bytes_xml);
    }
    if (only && polled == 0) {
        log_warnx("no [vcenter %s] or [array %s] in %s", only, only, cfg->path);
        failed++;
    }
    db_close(db);
    vsl_config_free(cfg);
    return failed ? VSL_EXIT_FAIL : VSL_EXIT_OK;
}

int cmd_config_check(const struct vsl_args *a)
{
    struct vsl_config *cfg = NULL;
    long hosts = 10;
    int bad = 0;

    if (!a->connect && (a->vcenter || a->hosts || strcmp(a->format, "text"))) {
        fprintf(stderr, "vslint: error: --vcenter, --hosts and --format are options of "
                        "config-check --connect\n");
        return VSL_EXIT_FAIL;
    }
    if (a->hosts && vsl_parse_whole(a->hosts, 0, 100000, &hosts) < 0) {
        fprintf(stderr, "vslint: error: --hosts must be a whole number from 0 to 100000, not "
                        "'%s'\n",
                a->hosts);
        return VSL_EXIT_FAIL;
    }
    if (vsl_cli_load_config(a->config, &cfg, VSL_CONFIG_CHECK) < 0)
        return VSL_EXIT_FAIL;
    for (size_t i = 0; i < vsl_config_nsources(cfg); i++) {
        const struct vsl_vcenter_conf *vc = vsl_config_source(cfg, i);
        char *pw = NULL, err[512];
        if (vsl_config_password(vc, &pw, err, sizeof(err)) < 0) {
            fprintf(stderr, "%s:%d: [%s %s]: %s\n", cfg->path, vc->line,
                    vc->type ? "array" : "vcenter", vc->name, err);
            bad++;
        }
        vsl_config_wipe(pw);
    }
    /* The site rules: each file's header and id, then each query prepared against the views. */
    bad += vsl_rules_print_errors(&cfg->rules, stderr);
    /* Preparing the rules opens the database; the probe opens none (a damaged database must
     * not stop the sources being tried), so under --connect the rules are only parsed. */
    if (!a->connect)
        bad += vsl_rules_prepare_all(cfg, &cfg->rules, stderr);
    if (bad) {
        vsl_config_free(cfg);
        return VSL_EXIT_FAIL;
    }
    if (!a->connect) {
        vsl_config_free(cfg);
        printf("configuration OK\n");
        return VSL_EXIT_OK;
    }
    int json = !strcmp(a->format, "json");
    if (!json)
        printf("configuration OK\n");
    /* Its own statuses, which are the command's: 0 read, 1 unreadable, 2 unreachable. */
    int r = vsl_probe(cfg, a->vcenter, (int)hosts, json, stdout);
    if (r == -VSL_ENOTFOUND) {
        fprintf(stderr, "vslint: error: no [vcenter %s] or [array %s] in %s\n", a->vcenter,
                a->vcenter, cfg->path);
        r = VSL_EXIT_FAIL;
    } else if (r < 0) {
        fprintf(stderr, "vslint: error: the probe: %s\n", vsl_strerror(r));
        r = VSL_EXIT_FAIL;
    }
    vsl_config_free(cfg);
    return r;
}
