/* Fuzz target for the what-if gate's input: a POST /api/v1/gate body (first byte even) read by
 * chk_proposal_from_json() and, when it is a proposal, judged over a small estate; or a
 * disks_gb list (first byte odd) read by chk_proposal_disks(). Either refuses with a message
 * or holds the promises of checks/whatif.h. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "checks/whatif.h"
#include "util/err.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define GIB ((int64_t)1 << 30)

static void need(int ok)
{
    if (!ok)
        abort(); /* a promise of checks/whatif.h is broken */
}

static struct est_datastore ds[] = {
    {.moref = "d1", .name = "ds-a", .type = "VMFS", .capacity = 600 * GIB,
     .free_space = 192 * GIB, .uncommitted = EST_UNKNOWN, .accessible = 1, .pod = EST_NONE},
    {.moref = "d2", .name = "ds-b", .type = "NFS", .capacity = 600 * GIB,
     .free_space = 300 * GIB, .uncommitted = 594 * GIB, .accessible = 1, .pod = 0},
    {.moref = "d3", .name = "ds-c", .type = "VMFS", .capacity = 0, .free_space = EST_UNKNOWN,
     .uncommitted = EST_UNKNOWN, .accessible = 0, .pod = 0},
};
static struct est_pod pods[] = {
    {.moref = "p1", .name = "pod-a", .capacity = 1200 * GIB, .free_space = 300 * GIB}};
static struct est_disk disks[] = {
    {.key = 1, .datastore = 0, .capacity_bytes = GIB, .format = "thin", .controller = EST_NONE}};
static struct est_vm vms[] = {{.moref = "v1", .name = "vm-a", .power_state = "poweredOn",
                               .host = EST_NONE, .config_datastore = 0, .disks = disks,
                               .n_disks = 1}};
static struct estate est = {.vcenter = "vc", .polled_ms = 1700000000000, .datastores = ds,
                            .n_datastores = 3, .pods = pods, .n_pods = 1, .vms = vms,
                            .n_vms = 1};

static void judge(const struct chk_proposal *p)
{
    struct chk_config cfg;
    struct chk_site site = {.estate = &est, .max_age_s = 600};
    json_t *ans = NULL;
    char err[1024] = "";

    if (chk_config_init(&cfg) < 0)
        return;
    int rc = chk_gate(&cfg, &site, 1, p, 1700000100, &ans, err, sizeof(err));
    need(rc == 0 ? json_is_boolean(json_object_get(ans, "allowed"))
                 : (rc == -VSL_ENOTFOUND || rc == -EINVAL || rc == -ENOMEM) && err[0] && !ans);
    /* A denial always says why; an allowed proposal has no reason. */
    if (ans)
        need(json_is_true(json_object_get(ans, "allowed")) ==
             (json_array_size(json_object_get(ans, "reasons")) == 0));
    json_decref(ans);
    chk_config_free(&cfg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct chk_proposal p;
    char err[1024] = "";

    if (size < 1)
        return 0;
    if (data[0] & 1) {
        char *list = malloc(size);
        if (!list)
            return 0;
        memcpy(list, data + 1, size - 1);
        list[size - 1] = '\0';
        chk_proposal_init(&p);
        int rc = chk_proposal_disks(&p, list, err, sizeof(err));
        need(rc == 0 || (rc == -EINVAL && err[0]));
        for (size_t i = 0; rc == 0 && i < p.n_disks; i++)
            need(p.disk_bytes[i] > 0 && p.disk_bytes[i] <= (int64_t)CHK_GATE_MAX_GB * GIB);
        free(list);
        return 0;
    }
    json_t *body = json_loadb((const char *)data + 1, size - 1, JSON_REJECT_DUPLICATES, NULL);
    if (!body)
        return 0;
    int rc = chk_proposal_from_json(body, &p, err, sizeof(err));
    need(rc == 0 || (rc == -EINVAL && err[0]));
    if (rc == 0) {
        need(p.vms >= 1 && p.vms <= CHK_GATE_MAX_VMS && p.n_disks >= 1 &&
             !p.datastore != !p.datastore_cluster && !(p.ft && p.shared_bus));
        /* What vslint gate --server sends is read back the same. */
        struct chk_proposal q;
        json_t *again = chk_proposal_json(&p);
        if (again) {
            need(chk_proposal_from_json(again, &q, err, sizeof(err)) == 0 && q.vms == p.vms &&
                 q.n_disks == p.n_disks && q.format == p.format && q.fail_on == p.fail_on);
            json_decref(again);
        }
        judge(&p);
    }
    json_decref(body);
    return 0;
}
