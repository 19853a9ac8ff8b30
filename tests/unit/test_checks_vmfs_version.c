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

#define NOW  ((int64_t)1750000000)
#define N(a) (sizeof(a) / sizeof((a)[0]))
#define NONE (-1)

extern const struct check chk_vmfs_version;

static const struct row {
    const char *name, *type;
    int vmfs_major;
    int want;   /* severity with min_version 6 (the default), or NONE */
    int want_5; /* with min_version 5 */
} rows[] = {
    {"vmfs6", "VMFS", 6, NONE, NONE},
    {"vmfs5", "VMFS", 5, SEV_WARNING, NONE},
    {"vmfs3", "VMFS", 3, SEV_CRITICAL, SEV_CRITICAL},
    /* A version older still is no more supported than VMFS3. */
    {"vmfs2", "VMFS", 2, SEV_CRITICAL, SEV_CRITICAL},
    /* A later one passes. */
    {"vmfs7", "VMFS", 7, NONE, NONE},
    /* Unknown: vCenter did not say (0 is what a datastore without VMFS info stores). */
    {"vmfs-unknown", "VMFS", EST_UNKNOWN, NONE, NONE},
    {"vmfs-zero", "VMFS", 0, NONE, NONE},
    /* No VMFS version to have. */
    {"nfs", "NFS", 0, NONE, NONE},
    {"nfs41", "NFS41", 0, NONE, NONE},
    {"vsan", "vsan", 0, NONE, NONE},
    {"vvol", "VVOL", 0, NONE, NONE},
    /* A type that says VMFS only in another spelling is not guessed at. */
    {"type-unknown", NULL, 5, NONE, NONE},
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
                                       .pod = EST_NONE};
    }
    e->datastores = ds;
    e->n_datastores = N(rows);
}

static const struct chk_finding *find(const struct chk_results *r, const char *name)
{
    for (size_t i = 0; i < r->n; i++)
        if (!strcmp(r->items[i].object_name, name))
            return &r->items[i];
    return NULL;
}

static void check_table(double min_version)
{
    struct est_datastore ds[N(rows)];
    struct estate e;
    struct chk_settings s;
    struct chk_results r = {0};

    build(&e, ds);
    chk_settings_default(&chk_vmfs_version, &s);
    s.params[0] = min_version;
    assert_int_equal(chk_run_one(&chk_vmfs_version, &s, &e, NOW, &r), 0);
    for (size_t i = 0; i < N(rows); i++) {
        int want = min_version == 6 ? rows[i].want : rows[i].want_5;
        const struct chk_finding *f = find(&r, rows[i].name);
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

static void test_default(void **state)
{
    check_table(6);
}

static void test_min_version_5(void **state)
{
    check_table(5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default),
        cmocka_unit_test(test_min_version_5),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
