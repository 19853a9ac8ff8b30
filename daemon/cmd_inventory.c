/* `vslint inventory`: print the stored inventory as text or JSON, straight from the database. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/cli.h"
#include "daemon/config.h"
#include "daemon/inventory_text.h"
#include "db/db.h"
#include "util/log.h"

int cmd_inventory(int argc, char **argv)
{
    static const struct option opts[] = {
        {"config", required_argument, NULL, 'c'},
        {"format", required_argument, NULL, 'f'},
        {"vcenter", required_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    const char *path = NULL, *format = "text", *only = NULL;
    struct vsl_config *cfg = NULL;
    struct db *db = NULL;
    json_t *inv = NULL;
    char *dberr = NULL;
    int c, rc = VSL_EXIT_FAIL;

    optind = 1;
    while ((c = getopt_long(argc, argv, "c:f:", opts, NULL)) != -1) {
        switch (c) {
        case 'c': path = optarg; break;
        case 'f': format = optarg; break;
        case 'V': only = optarg; break;
        default: vsl_usage("inventory", stderr); return VSL_EXIT_FAIL;
        }
    }
    log_init(0, 0);
    if (strcmp(format, "text") && strcmp(format, "json")) {
        log_warnx("--format must be text or json, not '%s'", format);
        return VSL_EXIT_FAIL;
    }
    if (vsl_cli_load_config(path, &cfg, 1) < 0)
        return VSL_EXIT_FAIL;
    if (db_open(cfg->db_path, &db, &dberr) < 0) {
        log_warnx("cannot open database %s: %s", cfg->db_path, dberr ? dberr : "unknown error");
        free(dberr);
        goto out;
    }
    if (db_inventory_json(db, only, &inv) < 0) {
        log_warnx("cannot read the inventory from %s", cfg->db_path);
        goto out;
    }
    if (!strcmp(format, "json")) {
        if (json_dumpf(inv, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) < 0)
            goto out;
        fputc('\n', stdout);
    } else if (vsl_inventory_text(inv, stdout) < 0) {
        goto out;
    }
    rc = fflush(stdout) == 0 ? VSL_EXIT_OK : VSL_EXIT_FAIL;
out:
    json_decref(inv);
    db_close(db);
    vsl_config_free(cfg);
    return rc;
}
