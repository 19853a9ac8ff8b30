/* Unit tests for checks/registry.c: every check of the catalogue (checks/checks.def) carries
 * what `vslint checks` and its findings show a user, has an id configurations can name, cites
 * a seed section that exists, quotes the seed word for word, and accepts its own parameter
 * defaults. */
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

/* Skips the test called name, saying so, when the seeds are not beside the repository (they
 * are in CI): a test that needs them is never passed silently without them. */
#define need_seeds(name)                                                                       \
    do {                                                                                       \
        FILE *probe_ = fopen(SEEDS "README.md", "r");                                          \
        if (!probe_) {                                                                         \
            fprintf(stderr, "%s: no %sREADME.md: skipped\n", name, SEEDS);                     \
            skip();                                                                            \
        }                                                                                      \
        fclose(probe_);                                                                        \
    } while (0)

/* Each "NNN_hex.txt §a.b.c" of a reference names a seed file in ../shared/seeds/ that has that
 * section. The seeds sit beside the repository, not in it: without them this test is skipped
 * (say so), never passed silently. */
static void test_references_exist(void **state)
{
    need_seeds(__func__);
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

/* The seeds' text as the quotes are compared with it: every run of whitespace (and of the
 * list bullets, U+F0B7, that the PDF extraction left in 000) is one space, none at either end;
 * typographic quote marks and apostrophes are plain ones, dashes are hyphens. A quote may be
 * written plainly where the seed is typographic, never in other words. Returns a string the
 * caller frees, or NULL when memory runs out. */
static char *fold(const char *s)
{
    static const struct {
        const char *from, *to;
    } subst[] = {
        {"\xe2\x80\x98", "'"},  {"\xe2\x80\x99", "'"}, {"\xe2\x80\x9a", "'"},
        {"\xe2\x80\xb2", "'"},  {"\xe2\x80\x9c", "\""}, {"\xe2\x80\x9d", "\""},
        {"\xe2\x80\x9e", "\""}, {"\xe2\x80\xb3", "\""}, {"\xe2\x80\x90", "-"},
        {"\xe2\x80\x91", "-"},  {"\xe2\x80\x93", "-"}, {"\xe2\x80\x94", "-"},
        {"\xe2\x88\x92", "-"},  {"\xc2\xa0", " "},      {"\xef\x82\xb7", " "},
    };
    size_t n = strlen(s), o = 0;
    char *out = malloc(n + 1);
    int space = 1; /* at the start: drop leading whitespace */

    if (!out)
        return NULL;
    while (*s) {
        const char *to = NULL;
        size_t len = 1;
        for (size_t k = 0; k < sizeof(subst) / sizeof(subst[0]); k++) {
            size_t l = strlen(subst[k].from);
            if (!strncmp(s, subst[k].from, l)) {
                to = subst[k].to;
                len = l;
                break;
            }
        }
        char c = to ? to[0] : *s;
        s += len;
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
            if (!space)
                out[o++] = ' ';
            space = 1;
            continue;
        }
        out[o++] = c;
        space = 0;
    }
    while (o && out[o - 1] == ' ')
        o--;
    out[o] = '\0';
    return out;
}

/* A line of a numbered seed that opens a numbered section: digits and dots, a dot among them
 * ("3.7.2"; the page numbers between the sections have none). */
static int section_line(const char *line)
{
    return *line && strspn(line, "0123456789.") == strlen(line) && strchr(line, '.');
}

/* Whether quote (folded) is in section sec of seed text (lines of it, not yet folded): for
 * "§N.N", between a line that is N.N and the next numbered section line (the table of contents
 * holds the numbers too: any of their stretches may hold the quote); for a title, anywhere
 * after a line that is the title. */
static int quote_in_section(char *const *lines, size_t n, const char *sec, const char *quote)
{
    int numbered = !strncmp(sec, "§", strlen("§"));
    const char *name = numbered ? sec + strlen("§") : sec;
    int found = 0;

    for (size_t i = 0; i < n && !found; i++) {
        char *head = fold(lines[i]);
        int opens = head && !strcmp(head, name);
        free(head);
        if (!opens)
            continue;
        struct vsl_buf b;
        vsl_buf_init(&b, (size_t)1 << 24);
        for (size_t k = i + 1; k < n && !(numbered && section_line(lines[k])); k++)
            if (vsl_buf_addstr(&b, lines[k]) < 0 || vsl_buf_addstr(&b, "\n") < 0)
                fail_msg("out of memory");
        char *text = fold(b.data ? b.data : "");
        assert_non_null(text);
        found = strstr(text, quote) != NULL;
        free(text);
        vsl_buf_free(&b);
    }
    return found;
}

/* Every check's sources quote their seed word for word, in the section they name, and name a
 * seed the check's reference names; what a check adds is in its own text (`own`), so a quote
 * can never drift from its source into a paraphrase. Skipped, saying so, without the seeds. */
static void test_quotes_verbatim(void **state)
{
    need_seeds(__func__);
    for (size_t i = 0; i < chk_registry_len; i++) {
        const struct check *c = chk_registry[i];
        size_t n = 0;

        if (!longer(c->own, 40))
            fail_msg("%s: no `own` (what vslint adds to its sources, and why)", c->id);
        /* host-coverage is no practice of the seeds: it reports what could not be verified. */
        if ((!c->sources || !c->sources[0].document) && strcmp(c->id, "host-coverage") != 0)
            fail_msg("%s: no sources: quote the seed it rests on", c->id);
        for (; c->sources && c->sources[n].document; n++) {
            const struct chk_source *src = &c->sources[n];
            char path[512], *text = NULL, *quote = fold(src->quote);
            char **lines = NULL;
            size_t nl = 0;

            assert_non_null(quote);
            if (!src->section || !*src->section || strlen(quote) < 20)
                fail_msg("%s: source %zu (%s) has no section or no quote", c->id, n,
                         src->document);
            if (!strstr(c->reference, src->document))
                fail_msg("%s: quotes %s, which its reference '%s' does not name", c->id,
                         src->document, c->reference);
            snprintf(path, sizeof(path), "%s%s", SEEDS, src->document);
            if (vsl_read_file(path, (size_t)1 << 24, &text) < 0)
                fail_msg("%s: source %s is not in %s", c->id, src->document, SEEDS);
            for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
                char **grown = realloc(lines, (nl + 1) * sizeof(*lines));
                assert_non_null(grown);
                lines = grown;
                lines[nl++] = line;
            }
            if (!quote_in_section(lines, nl, src->section, quote))
                fail_msg("%s: %s %s does not say, word for word: \"%s\"", c->id, src->document,
                         src->section, src->quote);
            free(lines);
            free(text);
            free(quote);
        }
    }
}

/* The fold the quote test compares with: typography and spacing fold, words never do. */
static void test_fold(void **state)
{
    static const struct {
        const char *in, *want;
    } rows[] = {
        {"  a \n\n b\t c  ", "a b c"},
        {"the \xe2\x80\x9c" "overcommitment\xe2\x80\x9d is", "the \"overcommitment\" is"},
        {"HBA\xe2\x80\x99s 1\xe2\x80\x93" "2", "HBA's 1-2"},
        {"datastores \xef\x82\xb7 \xef\x82\xb7 Reclaiming", "datastores Reclaiming"},
        {"500-750GB", "500-750GB"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char *got = fold(rows[i].in);
        assert_non_null(got);
        assert_string_equal(got, rows[i].want);
        free(got);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ids),
        cmocka_unit_test(test_texts_and_parameters),
        cmocka_unit_test(test_references_exist),
        cmocka_unit_test(test_fold),
        cmocka_unit_test(test_quotes_verbatim),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
