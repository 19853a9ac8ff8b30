/* `vslint gate`: the what-if question of a provisioning pipeline, answered here (poll, or the
 * database with --offline, then checks/whatif.c) or by a running daemon (--server, POST
 * /api/v1/gate over libcurl); exit 0 allowed, 1 denied, 2 error. */
#include <curl/curl.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checks/whatif.h"
#include "daemon/cli.h"
#include "daemon/config.h"
#include "daemon/evaluate.h"
#include "daemon/poll.h"
#include "daemon/report.h"
#include "db/findings.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/parse.h"
#include "util/log.h"

#define ANSWER_MAX (16 << 20) /* a daemon's answer */
/* 503 with Retry-After (the daemon's queue full, or stopping): asked at most this often, each
 * wait the header's, at most GATE_RETRY_MAX_S (a pipeline step bounded to about 40 s). */
#define GATE_TRIES 5
#define GATE_RETRY_MAX_S 10

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
    va_list ap;

    fputs("vslint: error: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return VSL_EXIT_FAIL;
}

/* The proposal of the command line. 0, or the exit status once the problem is said. */
static int proposal_of(const struct vsl_args *a, struct chk_proposal *p)
{
    char err[256];
    long n;

    chk_proposal_init(p);
    if (!a->datastore == !a->datastore_cluster)
        return fail("give --datastore NAME or --datastore-cluster NAME (one of them)");
    if (!a->disk_gb)
        return fail("--disk-gb G[,G...] is required: each new VM's disks in GiB");
    if (a->ft && a->shared_bus)
        return fail("--ft and --shared-bus: a VM is either protected by Fault Tolerance or "
                    "clustered on a shared bus, not both");
    if (a->fail_on && !strcmp(a->fail_on, "never"))
        return fail("--fail-on must be info, warning or critical for gate, not never");
    if (a->server && a->offline)
        return fail("--offline and --server: the daemon judges its own snapshots");
    if (a->token_file && !a->server)
        return fail("--token-file is for --server");
    p->datastore = a->datastore;
    p->datastore_cluster = a->datastore_cluster;
    p->vcenter = a->vcenter;
    p->ft = a->ft;
    p->shared_bus = a->shared_bus;
    p->allow_stale = a->allow_stale;
    if (a->vms) {
        if (vsl_parse_whole(a->vms, 1, CHK_GATE_MAX_VMS, &n) < 0)
            return fail("--vms must be a whole number from 1 to %d, not '%s'", CHK_GATE_MAX_VMS,
                        a->vms);
        p->vms = (int)n;
    }
    if (a->max_age) {
        if (vsl_parse_whole(a->max_age, 1, 366L * 86400, &n) < 0)
            return fail("--max-age must be a whole number of seconds from 1 to %ld, not '%s'",
                        366L * 86400, a->max_age);
        p->max_age_s = n;
    }
    if (chk_proposal_disks(p, a->disk_gb, err, sizeof(err)) < 0)
        return fail("--disk-gb: %s", strchr(err, ':') ? strchr(err, ':') + 2 : err);
    if (a->disk_format)
        chk_disk_format_parse(a->disk_format, &p->format); /* parse_args() checked it */
    if (a->fail_on)
        vsl_severity_parse(a->fail_on, &p->fail_on);
    return 0;
}

/* ---- asking a daemon ----------------------------------------------------------------------- */

static size_t collect(char *data, size_t size, size_t n, void *cls)
{
    return vsl_buf_add(cls, data, size * n) < 0 ? 0 : size * n;
}

/* POSTs p to the daemon at a->server. 0 with *answer, or the exit status once said. */
static int ask_server(const struct vsl_args *a, const struct chk_proposal *p, json_t **answer)
{
    json_t *req = chk_proposal_json(p), *doc = NULL;
    char *body = req ? json_dumps(req, JSON_COMPACT) : NULL, *token = NULL, *auth = NULL;
    char url[2048], cerr[CURL_ERROR_SIZE] = "";
    struct curl_slist *h = NULL;
    struct vsl_buf resp;
    CURL *c = NULL;
    long status = 0;
    int rc = VSL_EXIT_FAIL, r;
    size_t ulen = strlen(a->server);

    vsl_buf_init(&resp, ANSWER_MAX);
    json_decref(req);
    if (!body)
        goto out;
    while (ulen && a->server[ulen - 1] == '/')
        ulen--;
    if (strncmp(a->server, "http://", 7) && strncmp(a->server, "https://", 8)) {
        rc = fail("--server must be an http:// or https:// URL, not '%s'", a->server);
        goto out;
    }
    snprintf(url, sizeof(url), "%.*s/api/v1/gate", (int)ulen, a->server);
    if (a->token_file) {
        if ((r = vsl_read_file(a->token_file, 4096, &token)) < 0) {
            rc = fail("--token-file %s: cannot read: %s", a->token_file, vsl_strerror(r));
            goto out;
        }
        size_t tl = strlen(token);
        auth = malloc(tl + 32);
        if (!auth)
            goto out;
        snprintf(auth, tl + 32, "Authorization: Bearer %s", token);
        h = curl_slist_append(h, auth);
    }
    h = curl_slist_append(h, "Content-Type: application/json");
    h = curl_slist_append(h, "Accept: application/json");
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK || !(c = curl_easy_init()) || !h)
        goto out;
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &resp);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 120L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    /* A daemon whose placement, gate and plan queue is full (or that is stopping) answers
     * 503 with Retry-After: waited for, a few times, as a pipeline would want, and said on
     * stderr so that a slow gate is not a mystery; then the error as any other. */
    for (int attempt = 1;; attempt++) {
        curl_off_t wait_s = 0;
        vsl_buf_reset(&resp);
        json_decref(doc);
        doc = NULL;
        if (curl_easy_perform(c) != CURLE_OK) {
            rc = fail("cannot ask %s: %s", url, cerr[0] ? cerr : "the request failed");
            goto out;
        }
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
        doc = resp.data ? json_loadb(resp.data, resp.len, 0, NULL) : NULL;
        if (status != 503 || attempt == GATE_TRIES ||
            curl_easy_getinfo(c, CURLINFO_RETRY_AFTER, &wait_s) != CURLE_OK || wait_s <= 0)
            break;
        if (wait_s > GATE_RETRY_MAX_S)
            wait_s = GATE_RETRY_MAX_S;
        const char *msg = json_string_value(json_object_get(json_object_get(doc, "error"),
                                                            "message"));
        fprintf(stderr, "vslint: %s answered 503: %s; trying again in %d s (try %d of %d)\n", url,
                msg ? msg : "(no JSON error)", (int)wait_s, attempt + 1, GATE_TRIES);
        sleep((unsigned)wait_s);
    }
    if (status != 200) {
        const char *msg = json_string_value(json_object_get(json_object_get(doc, "error"),
                                                            "message"));
        rc = fail("%s answered %ld: %s", url, status, msg ? msg : "(no JSON error)");
        goto out;
    }
    if (!json_is_boolean(json_object_get(doc, "allowed"))) {
        rc = fail("%s answered 200 without a gate answer", url);
        goto out;
    }
    *answer = doc;
    doc = NULL;
    rc = 0;
out:
    if (rc == VSL_EXIT_FAIL && !status && !cerr[0] && !body)
        fail("out of memory");
    if (c)
        curl_easy_cleanup(c);
    curl_slist_free_all(h);
    if (auth) {
        explicit_bzero(auth, strlen(auth));
        free(auth);
    }
    vsl_config_wipe(token);
    free(body);
    json_decref(doc);
    vsl_buf_free(&resp);
    return rc;
}

/* ---- answering here ------------------------------------------------------------------------ */

static void not_evaluated(const struct vsl_config *cfg, json_t *answer);

static int judge_here(const struct vsl_args *a, const struct chk_proposal *p, json_t **answer)
{
    struct vsl_config *cfg = NULL;
    struct db *db = NULL;
    struct estate **es = NULL;
    struct chk_site *sites = NULL;
    size_t n = 0, matched = 0;
    char err[1024] = "";
    int rc = VSL_EXIT_FAIL, r;
    struct vsl_buf errors;

    vsl_buf_init(&errors, 1 << 20);
    if (vsl_cli_open(a, a->offline, &cfg, &db) < 0)
        goto out;
    es = calloc(cfg->n_vcenters + 1, sizeof(*es));
    sites = calloc(cfg->n_vcenters + 1, sizeof(*sites));
    if (!es || !sites) {
        rc = fail("out of memory");
        goto out;
    }
    /* The arrays first, as vslint check does: the pools behind the datastores count too (a
     * thick disk on a thin LUN takes pool space). One that cannot be polled is judged on its
     * last snapshot. */
    for (size_t i = 0; !a->offline && i < cfg->n_arrays; i++) {
        struct vsl_poll_result res;
        if (vsl_array_poll(db, &cfg->arrays[i], &res) < 0)
            log_warnx("array %s: poll failed: %s; judging its last snapshot", cfg->arrays[i].name,
                      res.error);
    }
    for (size_t i = 0; i < cfg->n_vcenters; i++) {
        const struct vsl_vcenter_conf *vc = &cfg->vcenters[i];
        if (a->vcenter && strcmp(a->vcenter, vc->name))
            continue;
        matched++;
        if (!a->offline) {
            struct vsl_poll_result res;
            /* A vCenter that cannot be polled is judged on its last snapshot: its age says
             * whether that may be trusted. */
            if (vsl_poll(db, vc, &res) < 0)
                log_warnx("vcenter %s: poll failed: %s; judging its last snapshot", vc->name,
                          res.error);
            else if (vsl_evaluate(db, cfg, vc->name, vsl_now_ms(), NULL, &errors) < 0)
                log_warnx("vcenter %s: the checks could not be recorded", vc->name);
        }
        r = db_estate_load(db, vc->name, &es[n]);
        if (r == 0)
            vsl_keep_configured_pools(es[n], cfg);
        if (r == -VSL_ENOTFOUND) {
            if (a->vcenter) {
                rc = fail("vCenter %s has no snapshot: it was never polled successfully",
                          vc->name);
                goto out;
            }
            continue;
        }
        if (r < 0) {
            rc = fail("vCenter %s: cannot load its snapshot: %s", vc->name, vsl_strerror(r));
            goto out;
        }
        sites[n] = (struct chk_site){es[n], 2 * (int64_t)vc->interval_s, NULL, 0, NULL, NULL};
        n++;
    }
    if (a->vcenter && !matched) {
        rc = fail("no [vcenter %s] in %s", a->vcenter, cfg->path);
        goto out;
    }
    if (n == 0) {
        rc = fail("no snapshot: no vCenter was ever polled successfully");
        goto out;
    }
    r = chk_gate(&cfg->checks, sites, n, p, vsl_now_ms() / 1000, answer, err, sizeof(err));
    if (r < 0) {
        rc = fail("%s", err[0] ? err : vsl_strerror(r));
        goto out;
    }
    not_evaluated(cfg, *answer);
    rc = 0;
out:
    for (size_t i = 0; es && i < n; i++)
        est_free(es[i]);
    free(es);
    free(sites);
    vsl_buf_free(&errors);
    db_close(db);
    vsl_config_free(cfg);
    return rc;
}

/* ---- the answer as text -------------------------------------------------------------------- */

static const char *size_of(const json_t *o, const char *key, char *buf, size_t size)
{
    return chk_size((int64_t)json_integer_value(json_object_get(o, key)), buf, size);
}

static void print_figures(FILE *f, const char *label, const json_t *fig)
{
    char a[32], b[32], c[32];
    const json_t *pod = json_object_get(fig, "datastore_cluster");

    if (json_object_get(fig, "datastore"))
        fprintf(f, "  %-7s %s free of %s (%.2f %%), %s uncommitted (%.2f %% provisioned), %d VMs\n",
                label, size_of(fig, "free_bytes", a, sizeof(a)),
                size_of(fig, "capacity_bytes", b, sizeof(b)),
                json_number_value(json_object_get(fig, "free_pct")),
                size_of(fig, "uncommitted_bytes", c, sizeof(c)),
                json_number_value(json_object_get(fig, "provisioned_pct")),
                (int)json_integer_value(json_object_get(fig, "vms")));
    if (pod)
        fprintf(f, "  %-7s datastore cluster %s: %s free of %s (%.2f %%)\n", label,
                json_string_value(json_object_get(pod, "name")),
                size_of(pod, "free_bytes", a, sizeof(a)), size_of(pod, "capacity_bytes", b, sizeof(b)),
                json_number_value(json_object_get(pod, "free_pct")));
}

static void print_text(FILE *f, const json_t *ans)
{
    const json_t *prop = json_object_get(ans, "proposal"), *target = json_object_get(ans, "target");
    const json_t *x, *list;
    const char *ds = json_string_value(json_object_get(target, "datastore"));
    const char *placed = json_string_value(json_object_get(ans, "placed_on"));
    size_t i;

    fprintf(f, "%s: %d VM(s) with disks of",
            json_is_true(json_object_get(ans, "allowed")) ? "ALLOWED" : "DENIED",
            (int)json_integer_value(json_object_get(prop, "vms")));
    json_array_foreach(json_object_get(prop, "disks_gb"), i, x)
        fprintf(f, "%s%g", i ? ", " : " ", json_number_value(x));
    fprintf(f, " GB (%s) on %s %s", json_string_value(json_object_get(prop, "disk_format")),
            ds ? "datastore" : "datastore cluster",
            ds ? ds : json_string_value(json_object_get(target, "datastore_cluster")));
    if (!ds && placed)
        fprintf(f, " (placed on %s)", placed);
    fprintf(f, ", vCenter %s\n", json_string_value(json_object_get(ans, "vcenter")));
    list = json_object_get(ans, "reasons");
    json_array_foreach(list, i, x) {
        const char *check = json_string_value(json_object_get(x, "check"));
        fprintf(f, "  reason: %s (%s): %s\n",
                check ? check : json_string_value(json_object_get(x, "code")),
                json_string_value(json_object_get(x, "severity")),
                json_string_value(json_object_get(x, "message")));
    }
    json_array_foreach(json_object_get(ans, "waived"), i, x)
        fprintf(f, "  waived: %s: %s (waiver: %s, until %s)\n",
                json_string_value(json_object_get(x, "check")),
                json_string_value(json_object_get(x, "message")),
                json_string_value(json_object_get(x, "waiver_reason")),
                json_string_value(json_object_get(x, "waiver_expires")));
    json_array_foreach(json_object_get(ans, "site_rules_not_evaluated"), i, x)
        fprintf(f, "  not evaluated: site rule %s (site rules are not judged on a what-if)\n",
                json_string_value(x));
    print_figures(f, "before:", json_object_get(ans, "before"));
    print_figures(f, "after:", json_object_get(ans, "after"));
    if (json_is_number(json_object_get(ans, "headroom")))
        fprintf(f, "  headroom: %.2f %% (%s)\n",
                json_number_value(json_object_get(ans, "headroom")),
                json_string_value(json_object_get(ans, "limited_by"))
                    ? json_string_value(json_object_get(ans, "limited_by"))
                    : "no threshold applies");
    fprintf(f, "  snapshot: %lld s old (max_age %lld s)\n",
            (long long)json_integer_value(json_object_get(ans, "snapshot_age_s")),
            (long long)json_integer_value(json_object_get(ans, "max_age_s")));
}

/* The site rules are not judged on the what-if estate (the gate overlays the hypothetical VMs
 * on an estate in memory; the rules read the stored views): the answer says which, rather
 * than pass for their verdict. */
static void not_evaluated(const struct vsl_config *cfg, json_t *answer)
{
    json_t *ids = json_array();

    for (size_t i = 0; ids && i < cfg->rules.n; i++)
        json_array_append_new(ids, json_string(cfg->rules.rules[i].id));
    if (json_array_size(ids))
        json_object_set(answer, "site_rules_not_evaluated", ids);
    json_decref(ids);
}

int cmd_gate(const struct vsl_args *a)
{
    struct chk_proposal p;
    json_t *answer = NULL;
    int rc = proposal_of(a, &p);

    if (rc)
        return rc;
    if (a->server) {
        log_init(a->verbose, LOG_TO_STDERR);
        rc = ask_server(a, &p, &answer);
    } else {
        rc = judge_here(a, &p, &answer);
    }
    if (rc)
        return rc;
    if (!strcmp(a->format, "json")) {
        if (vsl_json_print(stdout, answer) < 0) {
            json_decref(answer);
            return fail("cannot write the answer");
        }
    } else {
        print_text(stdout, answer);
    }
    rc = json_is_true(json_object_get(answer, "allowed")) ? VSL_EXIT_OK : VSL_EXIT_FINDINGS;
    json_decref(answer);
    if (fflush(stdout) != 0)
        return fail("cannot write the answer");
    return rc;
}
