/* Unit tests for checks/registry.c: every check of the catalogue carries what `vslint checks`
 * and its findings show a user, and accepts its own parameter defaults. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "checks/check.h"
#include "checks/engine.h"

static int longer(const char *s, size_t n)
{
    return s && strlen(s) > n;
}

/* Found by its id; a title, a rationale, the seed file it comes from and a remediation; each
 * parameter's default within its range, with a unit. */
static void test_catalogue_complete(void **state)
{
    assert_true(chk_registry_len > 0);
    for (size_t i = 0; i < chk_registry_len; i++) {
        const struct check *c = chk_registry[i];
        size_t n = 0;

        if (chk_find(c->id) != c)
            fail_msg("%s: chk_find() does not find it", c->id);
        if (!longer(c->title, 5) || !longer(c->rationale, 40) || !longer(c->remediation, 20))
            fail_msg("%s: title, rationale or remediation missing or too short", c->id);
        if (!c->reference || !strstr(c->reference, "_") || !strstr(c->reference, ".txt"))
            fail_msg("%s: reference %s names no seed file", c->id,
                     c->reference ? c->reference : "(none)");
        for (; c->params && c->params[n].name; n++) {
            const struct chk_param *p = &c->params[n];
            if (!(p->min <= p->dflt && p->dflt <= p->max) || !p->unit)
                fail_msg("%s: parameter %s: default %g outside %g..%g, or no unit", c->id, p->name,
                         p->dflt, p->min, p->max);
        }
        assert_true(n <= CHK_MAX_PARAMS);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_catalogue_complete),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
