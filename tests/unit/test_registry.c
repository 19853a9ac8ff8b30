/* Unit tests for checks/registry.c: every check of the catalogue (checks/checks.def) carries
 * what `vslint checks` and its findings show a user, has an id configurations can name, cites
 * a seed section that exists, and accepts its own parameter defaults. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks/check.h"
#include "checks/engine.h"
#include "util/buf.h"

#define SEEDS SOURCE_ROOT "/../shared/seeds/"

static int longer(const char *s, size_t n)
{
    return s && strlen(s) > n;
}

/* lower-case letters and digits in words joined by single hyphens: "datastore-free-space" */
static int kebab(const char *id)
{
    int prev_hyphen = 1;

    if (!id || !*id)
        return 0;
    for (const char *p = id; *p; p++) {
        if (*p == '-') {
            if (prev_hyphen)
                return 0;
            prev_hyphen = 1;
        } else if (islower((unsigned char)*p) || isdigit((unsigned char)*p)) {
            prev_hyphen = 0;
        } else {
            return 0;
        }
    }
    return !prev_hyphen;
}

static void test_ids(void **state)
{
    assert_true(chk_registry_len > 0);
    for (size_t i = 0; i < chk_registry_len; i++) {
        const struct check *c = chk_registry[i];
        if (!kebab(c->id))
            fail_msg("check %zu: id '%s' is not kebab-case", i, c->id ? c->id : "(null)");
        for (size_t k = 0; k < i; k++)
            if (!strcmp(chk_registry[k]->id, c->id))
                fail_msg("id %s is in the registry twice", c->id);
        if (chk_find(c->id) != c)
            fail_msg("%s: chk_find() does not find it", c->id);
    }
    assert_null(chk_find("no-such-check"));
}

/* Every text a user reads is there, and every threshold's default is inside its range. */
static void test_texts_and_parameters(void **state)
{
    for (size_t i = 0; i < chk_registry_len; i++) {
        const struct check *c = chk_registry[i];
        size_t n = 0;

        if (!longer(c->title, 5) || !longer(c->rationale, 40) || !longer(c->remediation, 20) ||
            !longer(c->reference, 5))
            fail_msg("%s: title, rationale, reference or remediation missing or too short",
                     c->id);
        if (c->severity != SEV_INFO && c->severity != SEV_WARNING && c->severity != SEV_CRITICAL)
            fail_msg("%s: default severity %d is none of info, warning, critical", c->id,
                     (int)c->severity);
        if (!c->run)
            fail_msg("%s: no run()", c->id);
        for (; c->params && c->params[n].name; n++) {
            const struct chk_param *p = &c->params[n];
            if (!(p->min <= p->dflt && p->dflt <= p->max) || !p->unit || !longer(p->help, 10))
                fail_msg("%s: parameter %s: default %g outside %g..%g, or no unit or help",
                         c->id, p->name, p->dflt, p->min, p->max);
            for (size_t k = 0; k < n; k++)
                if (!strcmp(c->params[k].name, p->name))
                    fail_msg("%s: parameter %s twice", c->id, p->name);
        }
        /* The engine and the configuration keep CHK_MAX_PARAMS values per check. */
        if (n > CHK_MAX_PARAMS)
            fail_msg("%s: %zu parameters, at most %d", c->id, n, CHK_MAX_PARAMS);
    }
}

/* Each "NNN_hex.txt §a.b.c" of a reference names a seed file in ../shared/seeds/ that has that
 * section. The seeds sit beside the repository, not in it: without them this test is skipped
 * (say so), never passed silently. */
static void test_references_exist(void **state)
{
    FILE *probe = fopen(SEEDS "README.md", "r");

    if (!probe) {
        fprintf(stderr, "test_references_exist: no %sREADME.md: skipped\n", SEEDS);
        skip();
    }
    fclose(probe);
    for (size_t i = 0; i < chk_registry_len; i++) {
        const struct check *c = chk_registry[i];
        size_t files = 0;
        char seed[64] = "";
        for (const char *p = c->reference; *p; p++) {
            /* a seed file: three digits, '_', sixteen hex digits, ".txt" */
            if (isdigit((unsigned char)p[0]) && isdigit((unsigned char)p[1]) &&
                isdigit((unsigned char)p[2]) && p[3] == '_' && strncmp(p + 20, ".txt", 4) == 0) {
                char path[512];
                snprintf(seed, sizeof(seed), "%.24s", p);
                snprintf(path, sizeof(path), "%s%s", SEEDS, seed);
                FILE *f = fopen(path, "r");
                if (!f)
                    fail_msg("%s: reference names %s, which is not in %s", c->id, seed, SEEDS);
                fclose(f);
                files++;
                p += 23;
                continue;
            }
            /* a section of the last file named: "§3.5.1" must open a line of that seed */
            if (!strncmp(p, "§", strlen("§")) && seed[0]) {
                char sec[32], path[512], line[4096];
                int found = 0;
                p += strlen("§");
                size_t n = strspn(p, "0123456789.");
                snprintf(sec, sizeof(sec), "%.*s", (int)n, p);
                while (n && sec[n - 1] == '.')
                    sec[--n] = '\0';
                snprintf(path, sizeof(path), "%s%s", SEEDS, seed);
                FILE *f = fopen(path, "r");
                while (f && !found && fgets(line, sizeof(line), f)) {
                    line[strcspn(line, "\r\n")] = '\0';
                    found = !strcmp(line, sec) || (!strncmp(line, sec, n) && line[n] == ' ');
                }
                if (f)
                    fclose(f);
                if (!found)
                    fail_msg("%s: %s has no section %s", c->id, seed, sec);
            }
        }
        if (files == 0)
            fail_msg("%s: reference '%s' names no seed file", c->id, c->reference);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ids),
        cmocka_unit_test(test_texts_and_parameters),
        cmocka_unit_test(test_references_exist),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
