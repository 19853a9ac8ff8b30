/* `vslint db backup` and `vslint db check`: the database's care, while `vslint serve` runs
 * (docs/operations.md). Both read the database without changing it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/cli.h"
#include "daemon/config.h"
#include "db/db.h"
#include "util/err.h"
#include "util/isotime.h"
#include "util/log.h"

static void describe(const char *what, const char *path, const struct db_file_info *in)
{
    char when[32] = "never";

    if (in->last_poll_ms > 0)
        vsl_iso_time(in->last_poll_ms, when, sizeof(when));
    printf("%s %s: schema version %d (this vslint: %d), integrity %s, %lld bytes, %lld polls, "
           "%lld open findings, last successful poll %s\n",
           what, path, in->schema, db_schema_version(), in->integrity, in->bytes, in->polls,
           in->open_findings, when);
}

int cmd_db(const struct vsl_args *a)
{
    struct vsl_config *cfg = NULL;
    struct db_file_info info;
    char *err = NULL;
    int rc = VSL_EXIT_FAIL;
    const char *verb = a->n_operands > 0 ? a->operands[0] : "";

    log_init(a->verbose, LOG_TO_STDERR);
    if (strcmp(verb, "backup") && strcmp(verb, "check")) {
        log_warnx("db: say what to do: vslint db backup -c FILE OUT, or vslint db check -c FILE "
                  "(vslint help db)");
        return VSL_EXIT_FAIL;
    }
    if (!strcmp(verb, "backup") ? a->n_operands != 2 : a->n_operands != 1) {
        log_warnx(!strcmp(verb, "backup") ? "db backup: name one file to write: vslint db backup "
                                            "-c FILE OUT"
                                          : "db check takes no operand: vslint db check -c FILE");
        return VSL_EXIT_FAIL;
    }
    if (vsl_cli_load_config(a->config, &cfg, VSL_CONFIG_COMMAND) < 0)
        return VSL_EXIT_FAIL;
    if (!strcmp(verb, "check")) {
        if (db_check_file(cfg->db_path, &info, &err) < 0) {
            log_warnx("cannot check database %s: %s", cfg->db_path, err ? err : "unknown error");
            goto out;
        }
        describe("database", cfg->db_path, &info);
        /* A database that fails the check is a finding of this command, not a failed run. */
        rc = strcmp(info.integrity, "ok") ? VSL_EXIT_FINDINGS : VSL_EXIT_OK;
        if (rc != VSL_EXIT_OK)
            printf("the database is damaged: stop vslint, restore the last good backup "
                   "(docs/operations.md), start vslint\n");
        goto out;
    }
    if (db_backup(cfg->db_path, a->operands[1], &info, &err) < 0) {
        log_warnx("backup failed, %s left as it was: %s", a->operands[1],
                  err ? err : "unknown error");
        goto out;
    }
    describe("backup", a->operands[1], &info);
    rc = VSL_EXIT_OK;
out:
    free(err);
    vsl_config_free(cfg);
    return rc;
}
