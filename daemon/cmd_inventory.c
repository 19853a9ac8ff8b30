/* `vslint inventory`: print the stored inventory as text or JSON, straight from the database. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/cli.h"
#include "daemon/config.h"
#include "daemon/inventory_text.h"
#include "daemon/report.h"
#include "db/db.h"
#include "util/log.h"

int cmd_inventory(const struct vsl_args *a)
{
    struct vsl_config *cfg = NULL;
    struct db *db = NULL;
    json_t *inv = NULL;
    int rc = VSL_EXIT_FAIL;

    if (vsl_cli_open(a, 1, &cfg, &db) < 0)
        return VSL_EXIT_FAIL;
    if (db_inventory_json(db, a->vcenter, &inv) < 0) {
        log_warnx("cannot read the inventory from %s", cfg->db_path);
        goto out;
    }
    if (!strcmp(a->format, "json")) {
        if (vsl_json_print(stdout, inv) < 0)
            goto out;
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
