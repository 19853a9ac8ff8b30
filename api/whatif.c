/* POST /api/v1/gate and GET /api/v1/placement: the what-if questions of provisioning
 * pipelines, answered by checks/whatif.c over the stored snapshots (shared by every such
 * request, api/estates.c) with the running configuration's thresholds and waivers. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/api-private.h"
#include "checks/whatif.h"
#include "db/findings.h"
#include "util/err.h"

#define PLACEMENT_DEFAULT_LIMIT 10
/* Rejected datastores listed with their reasons unless asked otherwise: every one of an
 * estate of up to this many datastores, as before there was a bound; the rest are counted by
 * reason (rejected_by_reason). */
#define PLACEMENT_DEFAULT_REJECTED 100
#define PLACEMENT_MAX_REJECTED     1000000

/* The shared snapshot of every vCenter (a reference), and the sites of those in scope. */
struct sites {
    struct api_snap *snap;
    struct chk_site *s; /* borrow snap's estates */
    size_t n;
};

static void sites_free(struct api_req *r, struct sites *x)
{
    free(x->s);
    api_snap_put(r, x->snap);
}

/* The snapshots of the configured vCenters (vcenter's only, when given), shared with every
 * other what-if request: read, never changed (checks/whatif.c overlays the proposal). 0, or
 * -1 with the answer queued in *ret. */
static int load_sites(struct api_req *r, const char *vcenter, struct sites *x,
                      enum MHD_Result *ret)
{
    const char *what;
    size_t matched = 0;
    struct db *db;
    int rc;

    memset(x, 0, sizeof(*x));
    rc = api_snap_get(r, &x->snap, &what);
    db = api_db(r);
    if (rc == 0 && !(x->s = calloc(x->snap->n + 1, sizeof(*x->s))))
        rc = -ENOMEM;
    for (size_t i = 0; rc == 0 && i < x->snap->n; i++) {
        const struct api_snap_site *site = &x->snap->sites[i];
        if (vcenter && strcmp(vcenter, site->name))
            continue;
        matched++;
        if (!site->estate)
            continue;
        int64_t confirmed = 0;
        /* Rounds that changed nothing confirm the snapshot without making a new one: its age
         * is the last confirmation's. */
        if (!db || db_snapshot_time(db, site->name, &confirmed) < 0 ||
            confirmed <= site->estate->polled_ms)
            confirmed = 0;
        x->s[x->n++] = (struct chk_site){site->estate, 2 * (int64_t)site->interval_s,
                                         site->base_ok ? &site->base : NULL, confirmed,
                                         site->base_ok ? site->base_luns : NULL,
                                         site->ds_vms};
    }
    if (rc < 0) {
        *ret = api_db_error(r, what, rc);
    } else if (vcenter && !matched) {
        *ret = api_respond_error(r, MHD_HTTP_NOT_FOUND, "not_found",
                                 "no vCenter %s is configured", vcenter);
    } else if (x->n == 0) {
        if (vcenter)
            *ret = api_respond_error(r, MHD_HTTP_SERVICE_UNAVAILABLE, "no_snapshot",
                                     "vCenter %s has no snapshot yet: it was never polled "
                                     "successfully",
                                     vcenter);
        else
            *ret = api_respond_error(r, MHD_HTTP_SERVICE_UNAVAILABLE, "no_snapshot",
                                     "no vCenter has a snapshot yet: none was ever polled "
                                     "successfully");
    } else {
        return 0;
    }
    sites_free(r, x);
    return -1;
}

/* The site rules are not judged on a what-if (it overlays the proposal on an estate in
 * memory; the rules read the stored views): the answer names them rather than pass for their
 * verdict, as `vslint gate` does. */
static void not_evaluated(struct api_req *r, json_t *ans)
{
    json_t *site = NULL, *errors = NULL, *c, *ids = json_array();
    size_t i;

    if (ids && api_site_rules(r, &site, &errors) == 0)
        json_array_foreach(site, i, c)
            json_array_append(ids, json_object_get(c, "id"));
    if (json_array_size(ids))
        json_object_set(ans, "site_rules_not_evaluated", ids);
    json_decref(ids);
    json_decref(site);
    json_decref(errors);
}

/* The engine's answer, or its error as JSON: never an "allowed" with an error. */
static enum MHD_Result answer(struct api_req *r, int rc, json_t *ans, const char *err)
{
    if (rc >= 0 && json_is_object(ans))
        not_evaluated(r, ans);
    if (rc == -VSL_ENOTFOUND)
        return api_respond_error(r, MHD_HTTP_NOT_FOUND, "not_found", "%s", err);
    if (rc == -EINVAL)
        return api_respond_error(r, MHD_HTTP_BAD_REQUEST, "ambiguous_name", "%s", err);
    if (rc < 0)
        return api_db_error(r, err[0] ? err : "judging the proposal", rc);
    return api_respond_json(r, MHD_HTTP_OK, ans);
}

enum MHD_Result api_h_gate(struct api_req *r)
{
    struct chk_proposal p;
    struct sites x;
    json_error_t je;
    json_t *body, *ans = NULL;
    enum MHD_Result ret;
    char err[1024] = "";
    int rc;

    if (api_args_allowed(r, NULL) < 0)
        return api_fail(r);
    if (r->body.len == 0)
        return api_respond_error(r, MHD_HTTP_BAD_REQUEST, "bad_request",
                                 "the body must be the proposal as a JSON object, e.g. "
                                 "{\"datastore\":\"ds1\",\"disks_gb\":[40]}");
    body = json_loadb(r->body.data, r->body.len, JSON_REJECT_DUPLICATES, &je);
    if (!body)
        return api_respond_error(r, MHD_HTTP_BAD_REQUEST, "bad_request",
                                 "the body is not JSON: %s (line %d, column %d)", je.text,
                                 je.line, je.column);
    /* p borrows body's strings until the answer is made. */
    if (chk_proposal_from_json(body, &p, err, sizeof(err)) < 0) {
        json_decref(body);
        return api_respond_error(r, MHD_HTTP_BAD_REQUEST, "bad_request", "%s", err);
    }
    if (load_sites(r, p.vcenter, &x, &ret) < 0) {
        json_decref(body);
        return ret;
    }
    rc = chk_gate(&x.snap->cfg, x.s, x.n, &p, time(NULL), &ans, err, sizeof(err));
    sites_free(r, &x);
    json_decref(body);
    return answer(r, rc, ans, err);
}

enum MHD_Result api_h_placement(struct api_req *r)
{
    static const char *const names[] = {"disks_gb", "vms",     "disk_format", "cluster",
                                        "datastore_cluster", "vcenter", "fail_on", "limit",
                                        "allow_stale", "max_age_s", "ft", "shared_bus",
                                        "rejected_limit", NULL};
    struct chk_proposal p;
    struct sites x;
    json_t *ans = NULL;
    enum MHD_Result ret;
    const char *v;
    char err[1024] = "";
    long vms = 1, max_age = 0, limit = PLACEMENT_DEFAULT_LIMIT;
    long rejected = PLACEMENT_DEFAULT_REJECTED;
    int rc;

    chk_proposal_init(&p);
    if (api_args_allowed(r, names) < 0 ||
        api_arg_whole(r, "vms", 1, CHK_GATE_MAX_VMS, 0, &vms) < 0 ||
        api_arg_whole(r, "max_age_s", 1, 366L * 86400, 0, &max_age) < 0 ||
        api_arg_whole(r, "limit", 1, API_MAX_PAGE, 0, &limit) < 0 ||
        api_arg_whole(r, "rejected_limit", 0, PLACEMENT_MAX_REJECTED, 1, &rejected) < 0)
        return api_fail(r);
    if (!(v = api_arg(r, "disks_gb")))
        return api_bad(r, "disks_gb", "required: each new VM's disks in GiB, e.g. 100,20"),
               api_fail(r);
    if (chk_proposal_disks(&p, v, err, sizeof(err)) < 0)
        return api_bad(r, "disks_gb", "%s", strchr(err, ':') + 2), api_fail(r);
    if ((v = api_arg(r, "disk_format")) && chk_disk_format_parse(v, &p.format) < 0)
        return api_bad(r, "disk_format", "'%s' is not one of thin, lazy, eager", v), api_fail(r);
    if ((v = api_arg(r, "fail_on")) && vsl_severity_parse(v, &p.fail_on) < 0)
        return api_bad(r, "fail_on", "'%s' is not one of info, warning, critical", v),
               api_fail(r);
    static const char *const flags[] = {"allow_stale", "ft", "shared_bus"};
    int *flag_of[] = {&p.allow_stale, &p.ft, &p.shared_bus};
    for (size_t i = 0; i < 3; i++) {
        if (!(v = api_arg(r, flags[i])))
            continue;
        if (strcmp(v, "true") && strcmp(v, "false"))
            return api_bad(r, flags[i], "'%s' is not true or false", v), api_fail(r);
        *flag_of[i] = !strcmp(v, "true");
    }
    if (p.ft && p.shared_bus)
        return api_bad(r, "shared_bus", "a VM is either protected by Fault Tolerance or "
                                        "clustered on a shared bus, not both"),
               api_fail(r);
    p.vms = (int)vms;
    p.max_age_s = max_age;
    p.vcenter = api_arg(r, "vcenter");
    p.datastore_cluster = api_arg(r, "datastore_cluster");
    if (load_sites(r, p.vcenter, &x, &ret) < 0)
        return ret;
    rc = chk_placement(&x.snap->cfg, x.s, x.n, &p, api_arg(r, "cluster"), (int)limit,
                       rejected < 0 ? SIZE_MAX : (size_t)rejected, time(NULL), &ans, err,
                       sizeof(err));
    sites_free(r, &x);
    return answer(r, rc, ans, err);
}
