/* /api/v1/history: per day of the last `days` (default 30), the score and the open findings by
 * severity at the day's end, and per vCenter its polls of each day (count, failures, mean and
 * longest duration), for the dashboard's charts. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/api-private.h"
#include "db/history.h"
#include "util/err.h"

#define MAX_DAYS 366

static json_t *day_json(const struct db_history_day *d, char *date, size_t size)
{
    char end[32];
    time_t t = (time_t)(d->end_ms / 1000);
    struct tm tm;

    gmtime_r(&t, &tm);
    strftime(date, size, "%Y-%m-%d", &tm);
    json_t *o = json_pack("{s:s,s:s,s:o,s:I,s:{s:I,s:I,s:I},s:I,s:I}", "date", date, "end",
                          api_iso_time(d->end_ms, end, sizeof(end)), "score",
                          d->vcenters ? json_integer(api_score(d->critical, d->warning, d->info,
                                                               d->objects))
                                      : json_null(),
                          "objects", (json_int_t)d->objects, "findings", "critical",
                          (json_int_t)d->critical, "warning", (json_int_t)d->warning, "info",
                          (json_int_t)d->info, "new", (json_int_t)d->opened, "resolved",
                          (json_int_t)d->fixed);
    return o;
}

/* [{"vcenter","days":[{"date",...}]}] out of db_history_polls()'s flat rows. */
static json_t *polls_json(json_t *rows, json_t *days)
{
    json_t *out = json_array(), *cur = NULL, *row;
    const char *name = NULL;
    size_t i;

    json_array_foreach(rows, i, row) {
        const char *vc = json_string_value(json_object_get(row, "vcenter"));
        json_int_t day = json_integer_value(json_object_get(row, "day"));
        if (!name || strcmp(name, vc)) {
            cur = json_array();
            json_array_append_new(out, json_pack("{s:s,s:o}", "vcenter", vc, "days", cur));
            name = vc;
        }
        json_t *d = json_deep_copy(row);
        json_object_del(d, "vcenter");
        json_object_del(d, "day");
        json_object_set(d, "date", json_object_get(json_array_get(days, (size_t)day), "date"));
        json_array_append_new(cur, d);
    }
    return out;
}

enum MHD_Result api_h_history(struct api_req *r)
{
    static const char *const names[] = {"days", "vcenter", NULL};
    struct db_history_day *days = NULL;
    const char *vcenter;
    json_t *list = NULL, *rows = NULL, *body;
    struct timespec ts;
    struct db *db;
    long n = 30;
    int rc;

    if (api_args_allowed(r, names) < 0)
        return api_fail(r);
    if (api_arg_whole(r, "days", 1, MAX_DAYS, 0, &n) < 0)
        return api_fail(r);
    vcenter = api_arg(r, "vcenter");
    if (!(db = api_db(r)))
        return api_db_unavailable(r);
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    days = calloc((size_t)n, sizeof(*days));
    if (!days)
        return api_db_error(r, "reading the history", -ENOMEM);
    rc = db_history_days(db, vcenter, now, (size_t)n, days);
    if (rc == 0)
        rc = db_history_polls(db, vcenter, now, (size_t)n, &rows);
    if (rc < 0) {
        free(days);
        return api_db_error(r, "reading the history", rc);
    }
    list = json_array();
    for (long i = 0; i < n; i++) {
        char date[16];
        json_array_append_new(list, day_json(&days[i], date, sizeof(date)));
    }
    free(days);
    body = json_pack("{s:o,s:o}", "days", list, "polls", polls_json(rows, list));
    json_decref(rows);
    return api_respond_json_etag(r, body);
}
