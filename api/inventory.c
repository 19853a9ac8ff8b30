/* /api/v1/inventory/{datastores,hosts,vms}: the stored inventory a page at a time, with the
 * same limit/cursor/next contract as the findings. */
#include <errno.h>
#include <stdlib.h>

#include "api/api-private.h"
#include "db/pages.h"
#include "util/err.h"

static const char *const kind_names[] = {
    [DB_PAGE_DATASTORES] = "datastores",
    [DB_PAGE_HOSTS] = "hosts",
    [DB_PAGE_VMS] = "vms",
};

static enum MHD_Result inventory(struct api_req *r, enum db_page_kind kind)
{
    static const char *const names[] = {"vcenter", "limit", "cursor", NULL};
    struct db_page p = {0};
    json_t *items = NULL;
    int64_t total = 0;
    char *next = NULL;
    struct db *db;
    int rc;

    p.vcenter = api_arg(r, "vcenter");
    p.cursor = api_arg(r, "cursor");
    if (api_args_allowed(r, names) < 0 || api_arg_limit(r, &p.limit) < 0)
        return api_fail(r);
    if (!(db = api_db(r)))
        return api_db_error(r, "opening the database", -VSL_EDB);
    rc = db_inventory_page(db, kind, &p, &items, &total, &next);
    if (rc == -EINVAL)
        return api_bad(r, "cursor", "not a cursor this server issued"), api_fail(r);
    if (rc < 0)
        return api_db_error(r, "reading the inventory", rc);
    return api_respond_page(r, kind_names[kind], items, total, next);
}

enum MHD_Result api_h_datastores(struct api_req *r)
{
    return inventory(r, DB_PAGE_DATASTORES);
}

enum MHD_Result api_h_hosts(struct api_req *r)
{
    return inventory(r, DB_PAGE_HOSTS);
}

enum MHD_Result api_h_vms(struct api_req *r)
{
    return inventory(r, DB_PAGE_VMS);
}
