/* Placement in-process at scale (issue 23's review): chk_placement() over a built estate of
 * DATASTORES datastores and VMS VMs (one disk each, spread evenly), one array pool behind every
 * datastore at POOL_FREE % free (-1: no pool), a 40 GiB lazy VM, every rejection listed; the
 * site's base run, LUN index and VMs-by-datastore made once, as the API shares them. Prints
 * each run's wall and CPU time and their medians (the CPU time tells more on a busy machine).
 *
 *   bench-placement [DATASTORES 4000] [VMS 100000] [POOL_FREE 20] [RUNS 3] */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "checks/whatif.h"

#define GIB ((int64_t)1 << 30)

static double clock_s(clockid_t clock)
{
    struct timespec ts;

    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

static char *name_of(const char *prefix, size_t i)
{
    char s[32];

    snprintf(s, sizeof(s), "%s%zu", prefix, i);
    return strdup(s);
}

int main(int argc, char **argv)
{
    size_t n_ds = argc > 1 ? strtoul(argv[1], NULL, 10) : 4000;
    size_t n_vms = argc > 2 ? strtoul(argv[2], NULL, 10) : 100000;
    double pool_free = argc > 3 ? strtod(argv[3], NULL) : 20;
    int runs = argc > 4 ? (int)strtol(argv[4], NULL, 10) : 3;
    int64_t now = (int64_t)time(NULL);
    struct est_datastore *ds = calloc(n_ds, sizeof(*ds));
    struct est_vm *vms = calloc(n_vms, sizeof(*vms));
    struct est_disk *disks = calloc(n_vms, sizeof(*disks));
    size_t *vm_ds = calloc(n_vms, sizeof(*vm_ds)), *backs = calloc(n_ds, sizeof(*backs));
    size_t zero = 0;
    int thin = 1;
    double *t = calloc((size_t)runs, sizeof(*t)), *cpu = calloc((size_t)runs, sizeof(*cpu));

    if (!ds || !vms || !disks || !vm_ds || !backs || !t || !cpu || n_ds == 0 || runs < 1)
        return 1;
    struct est_pool pool = {.array = "unity1", .array_type = "unity", .id = "pool_1",
                            .name = "pool-a", .size_total = 100000 * GIB,
                            .size_free = (int64_t)(100000 * GIB * (pool_free / 100)),
                            .size_subscribed = EST_UNKNOWN, .snap_size_used = EST_UNKNOWN,
                            .alert_threshold = 70, .health = 5, .datastores = backs,
                            .n_datastores = n_ds};
    pool.size_used = pool.size_total - pool.size_free;
    for (size_t i = 0; i < n_ds; i++) {
        ds[i] = (struct est_datastore){.moref = name_of("datastore-", i),
                                       .name = name_of("ds-", i),
                                       .type = "VMFS",
                                       .capacity = 4096 * GIB,
                                       .free_space = 2048 * GIB,
                                       .uncommitted = EST_UNKNOWN,
                                       .accessible = 1,
                                       .vmfs_major = 6,
                                       .pod = EST_NONE};
        if (pool_free >= 0) {
            ds[i].pools = &zero;
            ds[i].pool_thin = &thin;
            ds[i].n_pools = 1;
        }
        backs[i] = i;
    }
    for (size_t i = 0; i < n_vms; i++) {
        vm_ds[i] = i % n_ds;
        disks[i] = (struct est_disk){.key = 2000, .label = "Hard disk 1", .datastore = vm_ds[i],
                                     .capacity_bytes = 40 * GIB, .format = "thin",
                                     .controller = EST_NONE};
        vms[i] = (struct est_vm){.moref = name_of("vm-", i), .name = name_of("vm", i),
                                 .power_state = "poweredOn", .ft_state = "notConfigured",
                                 .hw_version = 19, .host = EST_NONE,
                                 .config_datastore = vm_ds[i], .datastores = &vm_ds[i],
                                 .n_datastores = 1, .disks = &disks[i], .n_disks = 1};
    }
    struct estate e = {.vcenter = "vc", .polled_ms = (now - 60) * 1000, .datastores = ds,
                       .n_datastores = n_ds, .pools = pool_free >= 0 ? &pool : NULL,
                       .n_pools = pool_free >= 0, .vms = vms, .n_vms = n_vms};
    struct chk_config cfg;
    struct chk_results base = {0};
    struct chk_lun_index *luns = NULL;
    struct chk_ds_vms *ds_vms = NULL;
    struct chk_proposal p;
    char err[512] = "";

    if (chk_config_init(&cfg) < 0 || chk_run_all(&cfg, &e, now, &base, err, sizeof(err)) < 0 ||
        (chk_site_base_trim(&base), chk_lun_index_make(&e, &base, &luns)) < 0 ||
        chk_ds_vms_make(&e, &ds_vms) < 0) {
        fprintf(stderr, "bench-placement: cannot make the site: %s\n", err);
        return 1;
    }
    struct chk_site site = {.estate = &e, .max_age_s = 600, .base = &base, .base_luns = luns,
                            .ds_vms = ds_vms};
    chk_proposal_init(&p);
    if (chk_proposal_disks(&p, "40", err, sizeof(err)) < 0)
        return 1;
    for (int r = 0; r < runs; r++) {
        json_t *ans = NULL;
        double t0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
        if (chk_placement(&cfg, &site, 1, &p, NULL, 10, SIZE_MAX, now, &ans, err,
                          sizeof(err)) < 0) {
            fprintf(stderr, "bench-placement: %s\n", err);
            return 1;
        }
        t[r] = clock_s(CLOCK_MONOTONIC) - t0;
        cpu[r] = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
        printf("run %d: %.3f s, CPU %.3f s, %lld rejected, %zu candidates\n", r + 1, t[r], cpu[r],
               (long long)json_integer_value(json_object_get(ans, "total_rejected")),
               json_array_size(json_object_get(ans, "candidates")));
        json_decref(ans);
    }
    qsort(t, (size_t)runs, sizeof(*t), by_double);
    qsort(cpu, (size_t)runs, sizeof(*cpu), by_double);
    printf("placement over %zu datastores, %zu VMs, pool %s: median %.3f s, CPU %.3f s, of %d "
           "runs\n",
           n_ds, n_vms, pool_free >= 0 ? "behind every datastore" : "none", t[runs / 2],
           cpu[runs / 2], runs);
    return 0;
}
