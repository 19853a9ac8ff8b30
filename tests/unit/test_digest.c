/* Unit tests for the digest's writer (daemon/digest.c): given a model, the subject, and the
 * runway section read from the datastores' "runway" objects of the inventory JSON: the ten
 * shortest by days to the critical threshold, in order, in both parts; and what it says when
 * there is no estimate. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "testlib.h"

#include <stdlib.h>
#include <string.h>

#include "daemon/digest.h"

static const struct vsl_digest_style style = {
    .public_url = "https://vslint.example.com", .tz = "UTC", .prefix = "vslint",
    .min_severity = "warning"};

/* A model with one new critical finding and the datastores given as JSON. */
static json_t *model(const char *datastores_json)
{
    json_error_t e;
    json_t *ds = json_loads(datastores_json, 0, &e);
    assert_non_null(ds);
    json_t *f = json_pack("{s:s,s:s,s:s,s:s,s:{s:s,s:s,s:s},s:n,s:s}", "check",
                          "datastore-free-space", "title", "Datastore low on free space",
                          "severity", "critical", "vcenter", "lab", "object", "type", "Datastore",
                          "moref", "datastore-1", "name", "ds-a", "host", "message",
                          "ds-a has 8.0 % free");
    json_t *m = json_pack("{s:I,s:I,s:i,s:[],s:[O],s:[],s:[O],s:i,s:i,s:{s:i,s:i,s:i,s:i},s:[],"
                          "s:o,s:i,s:i}",
                          "from", (json_int_t)1795933800000LL, "to", (json_int_t)1796020200000LL,
                          "vcenters_total", 1, "vcenters", "new", f, "resolved", "open", f,
                          "open_total", 1, "waived", 0, "counts", "new", 1, "resolved", 0, "open",
                          1, "critical", 1, "waivers", "datastores", ds, "score", 80,
                          "previous_score", 83);
    json_decref(f);
    assert_non_null(m);
    return m;
}

static void render(json_t *m, char **subject, char **text, char **html)
{
    assert_int_equal(vsl_digest_render(m, &style, subject, text, html), 0);
    json_decref(m);
}

/* The text part's lines from the runway heading to the next blank line. */
static char *runway_text(const char *text)
{
    const char *p = strstr(text, "DATASTORES WITH THE SHORTEST RUNWAY\n");
    assert_non_null(p);
    p = strchr(p, '\n') + 1;
    const char *end = strstr(p, "\n\n");
    return strndup(p, end ? (size_t)(end - p) : strlen(p));
}

static char *runway_html(const char *html)
{
    const char *p = strstr(html, "<h2 id=\"runway\"");
    assert_non_null(p);
    const char *end = strstr(p + 1, "<h2 ");
    return strndup(p, end ? (size_t)(end - p) : strlen(p));
}

TEST(test_runway_shortest_ten_in_order)
{
    /* Twelve estimates (one never reaching critical: null), one datastore without any. */
    static const int days[] = {40, 3, -1, 17, 1, 90, 8, 25, 12, 60, 5, 33};
    char buf[8192] = "[{\"name\":\"ds-none\",\"vcenter\":\"lab\"}";
    for (size_t i = 0; i < N(days); i++) {
        char one[512];
        if (days[i] < 0)
            snprintf(one, sizeof(one),
                     ",{\"name\":\"ds-flat\",\"vcenter\":\"lab\",\"runway\":{\"days_to_warning\":"
                     "null,\"days_to_critical\":null,\"growth_gb_per_day\":0.0,\"history_days\":"
                     "30,\"reason\":\"not growing\"}}");
        else
            snprintf(one, sizeof(one),
                     ",{\"name\":\"ds-%d\",\"vcenter\":\"lab\",\"runway\":{\"days_to_warning\":%d,"
                     "\"days_to_critical\":%d,\"growth_gb_per_day\":%d.5,\"history_days\":21,"
                     "\"reason\":\"\"}}",
                     days[i], days[i] / 2, days[i], days[i]);
        strcat(buf, one);
    }
    strcat(buf, "]");
    char *subject, *text, *html;
    render(model(buf), &subject, &text, &html);

    static const char *const want[] = {"ds-1", "ds-3", "ds-5", "ds-8", "ds-12",
                                       "ds-17", "ds-25", "ds-33", "ds-40", "ds-60"};
    char *t = runway_text(text), *h = runway_html(html);
    const char *tp = t, *hp = h;
    for (size_t i = 0; i < N(want); i++) {
        char item[64], cell[64];
        snprintf(item, sizeof(item), "  * %s (lab): critical in ", want[i]);
        snprintf(cell, sizeof(cell), "<strong>%s</strong>", want[i]);
        const char *a = strstr(tp, item), *b = strstr(hp, cell);
        if (!a || !b)
            fail_msg("%s missing or out of order:\n%s\n%s", want[i], t, h);
        tp = a + 1;
        hp = b + 1;
    }
    /* The numbers: ds-12 reaches critical in 12 days, warning in 6, growing 12.5 GB a day. */
    assert_non_null(strstr(t, "  * ds-12 (lab): critical in 12 days, warning in 6 days; growing "
                              "12.5 GB/day\n      over 21 days\n"));
    assert_non_null(strstr(h, "<strong>ds-1</strong>"));
    assert_null(strstr(t, "ds-90"));
    assert_null(strstr(h, "ds-90"));
    assert_null(strstr(t, "ds-flat"));
    assert_null(strstr(t, "ds-none"));
    assert_null(strstr(t, "No runway estimates"));
    free(t);
    free(h);
    free(subject);
    free(text);
    free(html);
}

static void assert_runway_says(const char *datastores, const char *sentence)
{
    char *subject, *text, *html;
    render(model(datastores), &subject, &text, &html);
    char *t = runway_text(text), *h = runway_html(html);
    char want[512];
    snprintf(want, sizeof(want), "  %s", sentence);
    assert_string_equal(t, want);
    snprintf(want, sizeof(want), ">%s</p>", sentence);
    assert_non_null(strstr(h, want));
    free(t);
    free(h);
    free(subject);
    free(text);
    free(html);
}

TEST(test_runway_without_estimates)
{
    assert_runway_says("[{\"name\":\"ds-a\",\"vcenter\":\"lab\"}]", "No runway estimates yet.");
    assert_runway_says("[]", "No runway estimates yet.");
    assert_runway_says("[{\"name\":\"ds-a\",\"vcenter\":\"lab\",\"runway\":{\"days_to_warning\":"
                       "null,\"days_to_critical\":null,\"growth_gb_per_day\":null,"
                       "\"history_days\":1.5,\"reason\":\"less than 3 days of history\"}}]",
                       "No runway estimates yet: less than 3 days of history.");
    assert_runway_says("[{\"name\":\"ds-a\",\"vcenter\":\"lab\",\"runway\":{\"days_to_warning\":"
                       "null,\"days_to_critical\":null,\"growth_gb_per_day\":-0.5,"
                       "\"history_days\":30,\"reason\":\"shrinking\"}}]",
                       "None of the 1 datastore with an estimate is on course to reach the "
                       "critical threshold.");
}

TEST(test_subject_score_and_parts)
{
    char *subject, *text, *html;
    render(model("[]"), &subject, &text, &html);
    assert_string_equal(subject, "vslint: 1 new, 0 resolved, 1 open (1 critical)");
    assert_non_null(strstr(text, "Score 80 of 100, down 3 since the previous digest (83)."));
    assert_non_null(strstr(html, "Score 80 of 100, down 3 since the previous digest (83)."));
    assert_non_null(strstr(text, "  * [critical] datastore-free-space: ds-a (lab)\n"
                                 "      ds-a has 8.0 % free\n"));
    assert_non_null(strstr(html, "<a href=\"https://vslint.example.com/#check=datastore-free-space"
                                 "&amp;vcenter=lab&amp;object=ds-a\""));
    assert_non_null(strstr(html, "<meta name=\"color-scheme\" content=\"light dark\">"));
    assert_null(strstr(html, "<script"));
    assert_null(strstr(html, "src="));
    for (const char *p = text; *p;) {
        size_t n = strcspn(p, "\n");
        assert_true(n <= 80);
        p += n + (p[n] != 0);
    }
    free(subject);
    free(text);
    free(html);
}

/* A name from vCenter with newlines, a carriage return and an escape sequence: every line of
 * the plain text still starts with what vslint wrote (a heading, an indented item), the name
 * shows its control characters escaped, and the subject is one line of counts. */
TEST(test_names_cannot_start_a_line)
{
    static const char forged[] =
        "web01\n\nRESOLVED (12)\n  * [critical] datastore-free-space: ALL FIXED\r\x1b[2J"
        "\xc2\x85\xe2\x80\xa8" "end";
    char *subject, *text, *html;
    json_t *m = model("[{\"name\":\"ds\\n\\nSCORE\",\"vcenter\":\"lab\",\"runway\":"
                      "{\"growth_gb_per_day\":2.5,\"history_days\":30,\"days_to_critical\":3,"
                      "\"days_to_warning\":1}}]");
    json_t *f = json_array_get(json_object_get(m, "new"), 0);
    json_object_set_new(json_object_get(f, "object"), "name", json_string(forged));
    json_object_set_new(f, "message", json_string("ds-a\nRESOLVED (3) has 8.0 % free"));
    render(m, &subject, &text, &html);
    for (const char *p = text; *p;) {
        size_t n = strcspn(p, "\n");
        if (n && *p != ' ')
            assert_true(!strncmp(p, "vslint", 6) || !strncmp(p, "Since", 5) ||
                        !strncmp(p, "Dashboard: ", 11) || !strncmp(p, "Score ", 6) ||
                        !strncmp(p, "NEW SINCE", 9) || !strncmp(p, "RESOLVED SINCE", 14) ||
                        !strncmp(p, "OPEN FINDINGS", 13) || !strncmp(p, "VCENTERS", 8) ||
                        !strncmp(p, "WAIVERS", 7) || !strncmp(p, "DATASTORES WITH", 15) ||
                        !strncmp(p, "SCORE\n", 6) || !strncmp(p, "-- \n", 4));
        for (size_t i = 0; i < n; i++)
            assert_true((unsigned char)p[i] >= 0x20 && p[i] != 0x7f);
        p += n + (p[n] != 0);
    }
    static const char escaped[] =
        "web01\\n\\nRESOLVED (12)\\n  * [critical] datastore-free-space: ALL FIXED\\r"
        "\\x1B[2J\\u0085\\u2028end";
    assert_non_null(strstr(text, "  * [critical] datastore-free-space: web01\\n\\nRESOLVED"));
    assert_non_null(strstr(text, escaped));
    assert_non_null(strstr(text, "    * web01\\n\\nRESOLVED (12)"));
    assert_non_null(strstr(text, "ds-a\\nRESOLVED (3) has 8.0 % free"));
    assert_non_null(strstr(text, "  * ds\\n\\nSCORE (lab): "));
    assert_null(strchr(subject, '\n'));
    assert_string_equal(subject, "vslint: 1 new, 0 resolved, 1 open (1 critical)");
    free(subject);
    free(text);
    free(html);
}

int main(void)
{
    return tl_main();
}
