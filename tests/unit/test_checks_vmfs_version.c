/* Unit tests for vmfs-version: each table row is one hand-built datastore (type, VMFS major
 * version) and the severity it must raise, with the default and a configured min_version. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "checks/check.h"
#include "checks/engine.h"
#include "model/estate.h"
#include "testlib.h"

#define NOW ((int64_t)1750000000)

extern const struct check chk_vmfs_version;

static const struct row {
    const char *name, *type;
    int vmfs_major;
    int local;  /* vmfs.local: 1, 0, or EST_UNKNOWN */
    int want;   /* severity with min_version 6 (the default), or NONE */
    int want_5; /* with min_version 5 */
} rows[] = {
    {"vmfs6", "VMFS", 6, 0, NONE, NONE},
    {"vmfs5", "VMFS", 5, 0, SEV_WARNING, NONE},
    {"vmfs3", "VMFS", 3, 0, SEV_CRITICAL, SEV_CRITICAL},
    /* A version older still is no more supported than VMFS3. */
    {"vmfs2", "VMFS", 2, 0, SEV_CRITICAL, SEV_CRITICAL},
    /* A later one passes. */
    {"vmfs7", "VMFS", 7, 0, NONE, NONE},
    /* Unknown: vCenter did not say (0 is what a datastore without VMFS info stores). */
    {"vmfs-unknown", "VMFS", EST_UNKNOWN, 0, NONE, NONE},
    {"vmfs-zero", "VMFS", 0, 0, NONE, NONE},
    /* No VMFS version to have. */
    {"nfs", "NFS", 0, 0, NONE, NONE},
    {"nfs41", "NFS41", 0, 0, NONE, NONE},
    {"vsan", "vsan", 0, 0, NONE, NONE},
    {"vvol", "VVOL", 0, 0, NONE, NONE},
    /* A local VMFS5 boot datastore: no thin LUN to reclaim, and the fix is reformatting the
     * boot disk: not judged. A local VMFS3 one is as unsupported as any. A VMFS5 volume whose
     * locality is unknown is judged as shared. */
    {"local-vmfs5", "VMFS", 5, 1, NONE, NONE},
    {"local-vmfs3", "VMFS", 3, 1, SEV_CRITICAL, SEV_CRITICAL},
    {"local-unknown-vmfs5", "VMFS", 5, EST_UNKNOWN, SEV_WARNING, NONE},
    /* A type that says VMFS only in another spelling is not guessed at. */
    {"type-unknown", NULL, 5, 0, NONE, NONE},
};

static void build(struct estate *e, struct est_datastore *ds)
{
    memset(e, 0, sizeof(*e));
    e->vcenter = "vc";
    for (size_t i = 0; i < N(rows); i++) {
        ds[i] = (struct est_datastore){.moref = rows[i].name,
                                       .name = rows[i].name,
                                       .type = rows[i].type,
                                       .capacity = 600LL << 30,
                                       .free_space = 300LL << 30,
                                       .accessible = 1,
                                       .vmfs_major = rows[i].vmfs_major,
                                       .vmfs_local = rows[i].local,
                                       .pod = EST_NONE};
    }
    e->datastores = ds;
    e->n_datastores = N(rows);
}

static void check_table(double min_version)
{
    struct est_datastore ds[N(rows)];
    struct estate e;

    build(&e, ds);
    struct chk_results r = tl_run_with(&chk_vmfs_version, "min_version", min_version, &e, NOW);
    for (size_t i = 0; i < N(rows); i++) {
        int want = min_version == 6 ? rows[i].want : rows[i].want_5;
        const struct chk_finding *f = tl_find(&r, rows[i].name, NULL);
        if (want == NONE) {
            if (f)
                fail_msg("%s (min_version %g) flagged: %s", rows[i].name, min_version, f->message);
            continue;
        }
        if (!f)
            fail_msg("%s (min_version %g) not flagged", rows[i].name, min_version);
        assert_int_equal(f->severity, want);
        assert_string_equal(f->object_type, "datastore");
        assert_null(f->detail);
        assert_int_equal(json_integer_value(json_object_get(f->evidence, "vmfs_major")),
                         rows[i].vmfs_major);
        assert_int_equal(json_is_true(json_object_get(f->evidence, "supported")),
                         rows[i].vmfs_major > 3);
        assert_true(json_is_false(json_object_get(f->evidence, "automatic_unmap")));
        char want_start[64];
        snprintf(want_start, sizeof(want_start), "%s is VMFS%d: ", rows[i].name,
                 rows[i].vmfs_major);
        assert_true(!strncmp(f->message, want_start, strlen(want_start)));
        assert_non_null(
            strstr(f->message, rows[i].vmfs_major <= 3 ? "no longer supports" : "automatic UNMAP"));
    }
    chk_results_free(&r);
}

TEST(test_default)
{
    check_table(6);
}

TEST(test_min_version_5)
{
    check_table(5);
}

int main(void)
{
    return tl_main();
}
