/* /api/v1/inventory/datastores/history: one datastore's (or datastore cluster's) capacity
 * history, the runway the last evaluation estimated, the free-space thresholds in bytes and the
 * projection at the measured rate, for the dashboard's capacity chart. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "api/api-private.h"
#include "db/capacity.h"
#include "util/err.h"

#define DAY_MS        86400000.0
#define HORIZON_DAYS  30.0  /* how far a projection reaches when no threshold is in sight */
#define MAX_HORIZON   365.0 /* and at most */

/* Adds "thresholds" (bytes of free space at the warning and critical lines, for the latest
 * capacity) and "projection" (free space now and at the horizon, at the measured rate; empty
 * when there is no rate) to the series o. */
static int project(json_t *o)
{
    json_t *pts = json_object_get(o, "points"), *rw = json_object_get(o, "runway");
    json_t *last = json_array_get(pts, json_array_size(pts) - 1);
    json_t *proj = json_array(), *thr = json_object();
    double cap = (double)json_integer_value(json_object_get(last, "capacity"));
    double free_now = (double)json_integer_value(json_object_get(last, "free_space"));
    double growth = json_number_value(json_object_get(rw, "growth_gb_per_day")) * 1073741824.0;
    double warn = json_number_value(json_object_get(o, "warn_free_pct"));
    double crit = json_number_value(json_object_get(o, "crit_free_pct"));
    int r = proj && thr ? 0 : -ENOMEM;

    if (r == 0 && last && json_is_number(json_object_get(o, "crit_free_pct")))
        r = json_object_set_new(thr, "warning_bytes", json_integer((json_int_t)(warn / 100 * cap))) ||
                    json_object_set_new(thr, "critical_bytes",
                                        json_integer((json_int_t)(crit / 100 * cap)))
                ? -ENOMEM
                : 0;
    if (r == 0 && last && json_is_number(json_object_get(rw, "growth_gb_per_day")) &&
        growth > 0) {
        /* To a little past the critical line when it is in sight, else a month ahead. */
        double days = (free_now - crit / 100 * cap) / growth * 1.1;
        days = days > 1 && days < MAX_HORIZON ? days : days >= MAX_HORIZON ? MAX_HORIZON
                                                                               : HORIZON_DAYS;
        const char *t = json_string_value(json_object_get(last, "t"));
        int64_t t0 = 0;
        struct tm tm;
        memset(&tm, 0, sizeof(tm));
        if (t && sscanf(t, "%d-%d-%dT%d:%d:%dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                        &tm.tm_min, &tm.tm_sec) == 6) {
            tm.tm_year -= 1900;
            tm.tm_mon -= 1;
            t0 = (int64_t)timegm(&tm) * 1000;
        }
        double free_end = fmax(0, free_now - growth * days);
        int64_t t1 = t0 + (int64_t)(days * DAY_MS);
        char a[32], b[32];
        if (t0 && (json_array_append_new(proj, json_pack("{s:s,s:I}", "t",
                                                         api_iso_time(t0, a, sizeof(a)),
                                                         "free_space", (json_int_t)free_now)) ||
                   json_array_append_new(proj, json_pack("{s:s,s:I}", "t",
                                                         api_iso_time(t1, b, sizeof(b)),
                                                         "free_space", (json_int_t)free_end))))
            r = -ENOMEM;
    }
    if (r == 0 && (json_object_set(o, "thresholds", thr) || json_object_set(o, "projection", proj)))
        r = -ENOMEM;
    json_decref(proj);
    json_decref(thr);
    return r;
}

enum MHD_Result api_h_capacity(struct api_req *r)
{
    static const char *const names[] = {"vcenter", "datastore", "moref", NULL};
    const char *vcenter, *name, *moref;
    json_t *o = NULL;
    struct db *db;
    int rc;

    if (api_args_allowed(r, names) < 0)
        return api_fail(r);
    vcenter = api_arg(r, "vcenter");
    name = api_arg(r, "datastore");
    moref = api_arg(r, "moref");
    if (!vcenter)
        return api_bad(r, "vcenter", "required: the vCenter the datastore is in"), api_fail(r);
    if (!name && !moref)
        return api_bad(r, "datastore", "required (a datastore's or datastore cluster's name), "
                                       "or moref"),
               api_fail(r);
    if (!(db = api_db(r)))
        return api_db_error(r, "opening the database", -VSL_EDB);
    rc = db_capacity_series(db, vcenter, moref, moref ? NULL : name, &o);
    if (rc == -VSL_ENOTFOUND)
        return api_respond_error(r, MHD_HTTP_NOT_FOUND, "not_found",
                                 "vcenter %s has no datastore or datastore cluster %s", vcenter,
                                 moref ? moref : name);
    if (rc == -EEXIST)
        return api_bad(r, "datastore", "several datastores of vcenter %s are called %s: name one "
                                       "by moref",
                       vcenter, name),
               api_fail(r);
    if (rc == 0)
        rc = project(o);
    if (rc < 0) {
        json_decref(o);
        return api_db_error(r, "reading the capacity history", rc);
    }
    return api_respond_json_etag(r, o);
}
