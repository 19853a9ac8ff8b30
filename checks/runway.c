/* The capacity runway estimate: a Theil-Sen slope over the current series of a datastore's
 * capacity history, and the days left before its free space crosses the free-space thresholds. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks/runway.h"

/* A capacity that moves by more than this share is a grown or shrunk datastore: a new series.
 * Below it, what vCenter reports for one volume can wobble (NFS exports, vSAN). */
#define RESIZE_SHARE 0.001
/* Further away than this is no forecast anyone plans by. */
#define MAX_DAYS 36500.0

static void swap(double *a, double *b)
{
    double t = *a;
    *a = *b;
    *b = t;
}

/* Moves the k-th smallest of a[0..n) to a[k], the smaller ones before it (Hoare's select, median
 * of three pivots): O(n), where sorting every slope of every datastore would not be. */
static void select_kth(double *a, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;

    while (hi > lo) {
        size_t mid = lo + (hi - lo) / 2;
        if (a[mid] < a[lo])
            swap(&a[mid], &a[lo]);
        if (a[hi] < a[lo])
            swap(&a[hi], &a[lo]);
        if (a[hi] < a[mid])
            swap(&a[hi], &a[mid]);
        double pivot = a[mid];
        size_t i = lo, j = hi;
        while (i <= j) {
            while (a[i] < pivot)
                i++;
            while (a[j] > pivot)
                j--;
            if (i <= j) {
                swap(&a[i], &a[j]);
                i++;
                if (j == 0)
                    break;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return;
    }
}

/* The median of a[0..n), n > 0; reorders a. */
static double median(double *a, size_t n)
{
    size_t k = n / 2;
    double hi, lo;

    select_kth(a, n, k);
    hi = a[k];
    if (n % 2)
        return hi;
    lo = a[0];
    for (size_t i = 1; i < k; i++)
        lo = a[i] > lo ? a[i] : lo;
    return (lo + hi) / 2;
}

static int same_capacity(int64_t a, int64_t b)
{
    return fabs((double)a - (double)b) <= RESIZE_SHARE * (double)b;
}

static void no_figures(struct chk_runway *out, const char *reason)
{
    out->has_growth = out->has_warning = out->has_critical = 0;
    snprintf(out->reason, sizeof(out->reason), "%s", reason);
}

/* Days from free space free_now at growth bytes a day until it is below pct of capacity. */
static int days_to(struct chk_runway *out, int64_t capacity, int64_t free_now, double pct,
                   int64_t *days)
{
    double threshold = pct / 100.0 * (double)capacity;

    /* As datastore-free-space judges it: free * 100 < pct * capacity. */
    if ((double)free_now * 100.0 < pct * (double)capacity) {
        *days = 0;
        return 1;
    }
    if (!out->has_growth) {
        return 0;
    }
    if (out->growth_bytes_per_day <= 0) {
        snprintf(out->reason, sizeof(out->reason), "not growing");
        return 0;
    }
    double d = floor(((double)free_now - threshold) / out->growth_bytes_per_day);
    if (!(d <= MAX_DAYS)) {
        snprintf(out->reason, sizeof(out->reason), "more than 100 years away");
        return 0;
    }
    *days = (int64_t)d;
    return 1;
}

int chk_runway_estimate(const struct est_capacity_point *pts, size_t n, int64_t now_ms,
                        double window_days, double warn_pct, double crit_pct,
                        struct chk_runway *out)
{
    size_t s, first, m = 0;
    double *slopes = NULL;
    struct {
        double t, f;
        size_t slice;
    } use[CHK_RUNWAY_MAX_POINTS];
    int r = 0;

    memset(out, 0, sizeof(*out));
    if (n == 0) {
        no_figures(out, "no capacity history yet");
        return 0;
    }
    const struct est_capacity_point *last = &pts[n - 1];

    /* The current series: the run of points with the latest capacity. */
    for (s = n - 1; s > 0 && same_capacity(pts[s - 1].capacity, last->capacity); s--)
        ;
    out->series_start_ms = pts[s].t_ms;
    const double window_start = (double)now_ms - window_days * CHK_DAY_MS;
    for (first = s; first < n - 1 && (double)pts[first].t_ms < window_start; first++)
        ;
    const double span_ms = (double)(last->t_ms - pts[first].t_ms);
    out->history_days = span_ms / CHK_DAY_MS;

    if (out->history_days < CHK_RUNWAY_MIN_DAYS) {
        char why[96];
        if (s > 0)
            snprintf(why, sizeof(why), "capacity changed %.1f days ago",
                     (double)(now_ms - pts[s].t_ms) / CHK_DAY_MS);
        else
            snprintf(why, sizeof(why), "less than %g days of history", CHK_RUNWAY_MIN_DAYS);
        no_figures(out, why);
    } else {
        /* At most CHK_RUNWAY_MAX_POINTS, one per equal slice of the span (the latest of each):
         * the last day's dense polls weigh no more than any other day. */
        for (size_t i = first; i < n; i++) {
            size_t slice = (size_t)((double)(pts[i].t_ms - pts[first].t_ms) *
                                    (CHK_RUNWAY_MAX_POINTS - 1) / span_ms);
            if (m > 0 && use[m - 1].slice == slice)
                m--;
            use[m].t = (double)pts[i].t_ms;
            use[m].f = (double)pts[i].free_space;
            use[m].slice = slice;
            m++;
        }
        out->points = m;
        size_t k = 0;
        slopes = malloc(m * (m - 1) / 2 * sizeof(*slopes));
        if (!slopes) {
            no_figures(out, "out of memory");
            return -ENOMEM;
        }
        for (size_t i = 0; i < m; i++)
            for (size_t j = i + 1; j < m; j++)
                if (use[j].t > use[i].t)
                    slopes[k++] = (use[j].f - use[i].f) / (use[j].t - use[i].t);
        /* Free space falls as the datastore fills: growth is minus its slope. */
        out->has_growth = 1;
        out->growth_bytes_per_day = -median(slopes, k) * CHK_DAY_MS;
        if (out->growth_bytes_per_day == 0)
            out->growth_bytes_per_day = 0; /* no "-0" */
        free(slopes);
    }
    out->has_warning = days_to(out, last->capacity, last->free_space, warn_pct,
                               &out->days_to_warning);
    out->has_critical = days_to(out, last->capacity, last->free_space, crit_pct,
                                &out->days_to_critical);
    if (out->has_growth && out->has_warning && out->has_critical)
        out->reason[0] = '\0';
    return r;
}

void chk_runway_settings(const struct chk_config *cfg, struct chk_runway_settings *out)
{
    out->warn_free_pct = chk_config_param(cfg, "datastore-free-space", "warn_free_pct");
    out->crit_free_pct = chk_config_param(cfg, "datastore-free-space", "crit_free_pct");
    out->window_days = chk_config_param(cfg, "datastore-runway", "window_days");
}

/* x rounded to the given decimals, as a JSON real. */
static json_t *rounded(double x, double scale)
{
    return json_real(round(x * scale) / scale);
}

json_t *chk_runway_json(const struct chk_runway *r)
{
    json_t *o = json_object();

    if (!o)
        return NULL;
    if (json_object_set_new(o, "days_to_warning",
                            r->has_warning ? json_integer(r->days_to_warning) : json_null()) ||
        json_object_set_new(o, "days_to_critical",
                            r->has_critical ? json_integer(r->days_to_critical) : json_null()) ||
        json_object_set_new(o, "growth_gb_per_day",
                            r->has_growth ? rounded(r->growth_bytes_per_day / CHK_GIB, 1000)
                                          : json_null()) ||
        json_object_set_new(o, "history_days", rounded(r->history_days, 10)) ||
        ((!r->has_growth || !r->has_warning || !r->has_critical) &&
         json_object_set_new(o, "reason", json_string(r->reason[0] ? r->reason : "unknown")))) {
        json_decref(o);
        return NULL;
    }
    return o;
}
