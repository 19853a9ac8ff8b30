/* /api/v1/inventory/{datastores,hosts,vms}: the stored inventory a page at a time, with the
 * same limit/cursor/next contract as the findings. */
#include <string.h>

#include "api/api-private.h"
#include "db/pages.h"

/* Indexed by enum db_page_kind; the router takes only these after /api/v1/inventory/. */
const char *const api_inventory_kinds[] = {
    [DB_PAGE_DATASTORES] = "datastores",
    [DB_PAGE_HOSTS] = "hosts",
    [DB_PAGE_VMS] = "vms",
    NULL,
};

struct inventory_query {
    enum db_page_kind kind;
    struct db_page page;
};

static int read_inventory(struct db *db, const void *query, json_t **items, int64_t *total,
                          char **next)
{
    const struct inventory_query *q = query;
    return db_inventory_page(db, q->kind, &q->page, items, total, next);
}

enum MHD_Result api_h_inventory(struct api_req *r)
{
    static const char *const names[] = {"vcenter", "limit", "cursor", "fields", NULL};
    struct inventory_query q = {.kind = DB_PAGE_DATASTORES};

    while (strcmp(api_inventory_kinds[q.kind], r->path_arg))
        q.kind++; /* the router let through only a kind of the list */
    q.page.vcenter = api_arg(r, "vcenter");
    q.page.cursor = api_arg(r, "cursor");
    if (api_args_allowed(r, names) < 0 || api_arg_limit(r, &q.page.limit) < 0)
        return api_fail(r);
    return api_page(r, "reading the inventory", api_inventory_kinds[q.kind], read_inventory, &q);
}
