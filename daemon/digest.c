/* The digest: gathered from the database into one model, written as text and HTML from that
 * model, sent through libcurl's SMTP. The window of findings history it covers is recorded
 * only after the server accepted it, so nothing is lost to a refused delivery. */
#include <curl/curl.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "api/api.h"
#include "daemon/digest.h"
#include "daemon/mime.h"
#include "daemon/poll.h"
#include "daemon/report.h"
#include "daemon/schedule.h"
#include "db/digest.h"
#include "db/findings.h"
#include "db/pages.h"
#include "util/err.h"
#include "util/log.h"

#define MAX_MESSAGE (32 * 1024 * 1024)
#define TEXT_WIDTH  78
#define DAY_MS      86400000LL

/* ---- gathering ------------------------------------------------------------------------------ */

/* The findings of f, at most VSL_DIGEST_MAX_LISTED, and how many matched in all. */
static int findings(struct db *db, struct db_findings_filter *f, json_t **list, int64_t *total)
{
    char *next = NULL;
    int r;

    f->limit = VSL_DIGEST_MAX_LISTED;
    r = db_findings_query(db, f, list, total, &next);
    free(next);
    return r;
}

/* One line on what is wrong with a vCenter's polling, or "" when nothing is. */
static void vcenter_problem(const struct vsl_vcenter_conf *vc, const struct db_vcenter_state *s,
                            int64_t now_ms, const char *tz, char *out, size_t size)
{
    char t[64];
    int64_t stale_ms = (int64_t)(vc->interval_s * 3 > 3600 ? vc->interval_s * 3 : 3600) * 1000;

    out[0] = '\0';
    if (!s->last_finished_ms)
        snprintf(out, size, "never polled");
    else if (!s->last_ok)
        snprintf(out, size, "last poll failed at %s: %s", vsl_sched_format(tz, s->last_finished_ms, t, sizeof(t)),
                 s->error[0] ? s->error : "unknown error");
    else if (now_ms - s->last_success_ms > stale_ms)
        snprintf(out, size, "stale: last successful poll %s",
                 vsl_sched_format(tz, s->last_success_ms, t, sizeof(t)));
}

static int gather_vcenters(struct db *db, const struct vsl_config *cfg, int64_t now_ms,
                           json_t *model)
{
    json_t *list = json_array();

    if (!list || json_object_set_new(model, "vcenters", list) < 0)
        return -ENOMEM;
    for (size_t i = 0; i < cfg->n_vcenters; i++) {
        struct db_vcenter_state s;
        char problem[1200];
        int r = db_vcenter_state(db, cfg->vcenters[i].name, &s);
        if (r < 0)
            return r;
        vcenter_problem(&cfg->vcenters[i], &s, now_ms, cfg->digest.timezone, problem,
                        sizeof(problem));
        vsl_utf8_fix(problem);
        if (problem[0] &&
            json_array_append_new(list, json_pack("{s:s,s:s}", "name", cfg->vcenters[i].name,
                                                  "problem", problem)) < 0)
            return -ENOMEM;
    }
    return json_object_set_new(model, "vcenters_total", json_integer((json_int_t)cfg->n_vcenters));
}

/* Waivers whose last day ends within VSL_DIGEST_WAIVER_DAYS of now, soonest first. */
static int gather_waivers(const struct vsl_config *cfg, int64_t now_ms, json_t *model)
{
    json_t *list = json_array();
    int64_t now = now_ms / 1000;

    if (!list || json_object_set_new(model, "waivers", list) < 0)
        return -ENOMEM;
    for (size_t i = 0; i < cfg->checks.n_waivers; i++) {
        const struct chk_waiver *w = &cfg->checks.waivers[i];
        if (w->expires < now || w->expires > now + VSL_DIGEST_WAIVER_DAYS * 86400LL)
            continue;
        json_int_t days = (json_int_t)((w->expires - now) / 86400);
        json_t *o = json_pack("{s:s,s:s,s:s?,s:s,s:s,s:I}", "check", w->check, "object", w->object,
                              "vcenter", w->vcenter, "reason", w->reason, "expires",
                              w->expires_text, "days", days);
        size_t at = json_array_size(list);
        while (at > 0 && strcmp(json_string_value(json_object_get(json_array_get(list, at - 1),
                                                                  "expires")),
                                w->expires_text) > 0)
            at--;
        if (!o || json_array_insert_new(list, at, o) < 0)
            return -ENOMEM;
    }
    return 0;
}

int vsl_digest_gather(struct db *db, const struct vsl_config *cfg, int64_t from_ms,
                      int64_t to_ms, int prev_score, json_t **out)
{
    const char *sev = cfg->digest.min_severity ? cfg->digest.min_severity : "warning";
    json_t *model = json_object(), *list = NULL, *counts = NULL;
    int64_t n_new = 0, n_resolved = 0, n_open = 0, n_crit = 0, n_waived = 0, objs[3];
    struct db_page page = {0};
    char *next = NULL;
    char **names = NULL;
    size_t n_names = 0;
    int score = -1, r;

    *out = NULL;
    if (!model)
        return -ENOMEM;
    json_object_set_new(model, "from", json_integer(from_ms));
    json_object_set_new(model, "to", json_integer(to_ms));
    r = gather_vcenters(db, cfg, to_ms, model);

    /* New: open (unwaived) findings first seen in the window. A finding that came back after
     * being fixed has a new first_seen, so it is new again. */
    struct db_findings_filter f = {.status = "open", .severity = sev,
                                   .window = DB_WINDOW_FIRST_SEEN, .window_from_ms = from_ms,
                                   .window_to_ms = to_ms};
    if (r == 0 && (r = findings(db, &f, &list, &n_new)) == 0)
        r = json_object_set_new(model, "new", list);
    /* Resolved: only what the history saw fixed; a disabled check's findings are not fixes,
     * and unverified ones are not resolved at all. */
    struct db_findings_filter fr = {.status = "resolved", .severity = sev, .resolution = "fixed",
                                    .window = DB_WINDOW_RESOLVED, .window_from_ms = from_ms,
                                    .window_to_ms = to_ms};
    if (r == 0 && (r = findings(db, &fr, &list, &n_resolved)) == 0)
        r = json_object_set_new(model, "resolved", list);
    struct db_findings_filter fo = {.status = "open", .severity = sev};
    if (r == 0 && (r = findings(db, &fo, &list, &n_open)) == 0)
        r = json_object_set_new(model, "open", list);
    struct db_findings_filter fc = {.status = "open", .severity = "critical", .limit = 1};
    if (r == 0 && (r = db_findings_query(db, &fc, &list, &n_crit, &next)) == 0)
        json_decref(list);
    free(next);
    next = NULL;
    struct db_findings_filter fw = {.status = "waived", .severity = sev, .limit = 1};
    if (r == 0 && (r = db_findings_query(db, &fw, &list, &n_waived, &next)) == 0)
        json_decref(list);
    free(next);
    next = NULL;
    if (r == 0)
        r = gather_waivers(cfg, to_ms, model);
    /* Every stored datastore, with its runway where the store has estimated one. */
    if (r == 0 && (r = db_inventory_page(db, DB_PAGE_DATASTORES, &page, &list, &objs[0], &next)) == 0)
        r = json_object_set_new(model, "datastores", list);
    free(next);
    if (r == 0)
        r = db_vcenter_names(db, &names, &n_names);
    if (r == 0 && n_names > 0)
        r = api_counts(db, NULL, &counts, objs, &score);
    for (size_t i = 0; i < n_names; i++)
        free(names[i]);
    free(names);
    json_decref(counts);
    if (r < 0) {
        json_decref(model);
        return r;
    }
    json_object_set_new(model, "open_total", json_integer(n_open));
    json_object_set_new(model, "waived", json_integer(n_waived));
    json_object_set_new(model, "counts",
                        json_pack("{s:I,s:I,s:I,s:I}", "new", (json_int_t)n_new, "resolved",
                                  (json_int_t)n_resolved, "open", (json_int_t)n_open,
                                  "critical", (json_int_t)n_crit));
    json_object_set_new(model, "score", score >= 0 ? json_integer(score) : json_null());
    json_object_set_new(model, "previous_score",
                        prev_score >= 0 ? json_integer(prev_score) : json_null());
    *out = model;
    return 0;
}

int vsl_digest_empty(const json_t *model)
{
    const json_t *c = json_object_get(model, "counts");

    return json_integer_value(json_object_get(c, "new")) == 0 &&
           json_integer_value(json_object_get(c, "resolved")) == 0 &&
           json_array_size(json_object_get(model, "vcenters")) == 0;
}

/* ---- writing -------------------------------------------------------------------------------- */

static const char *str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

static json_int_t num(const json_t *o, const char *key)
{
    return json_integer_value(json_object_get(o, key));
}

/* The dashboard's view filtered by the NULL-terminated key, value pairs (web/app.js reads them
 * from the fragment: #severity=critical&check=...), or "" when there is no public_url. */
static char *link(const struct vsl_digest_style *st, ...)
{
    struct vsl_buf b;
    va_list ap;
    const char *k;
    int r, n = 0;

    if (!st->public_url)
        return strdup("");
    vsl_buf_init(&b, 8192);
    r = vsl_buf_addstr(&b, st->public_url);
    if (r == 0 && st->public_url[strlen(st->public_url) - 1] != '/')
        r = vsl_buf_addstr(&b, "/");
    va_start(ap, st);
    while (r == 0 && (k = va_arg(ap, const char *))) {
        const char *v = va_arg(ap, const char *);
        if (!v || !*v)
            continue;
        r = vsl_buf_printf(&b, "%s%s=", n++ ? "&" : "#", k);
        if (r == 0)
            r = vsl_buf_addurl(&b, v);
    }
    va_end(ap);
    if (r < 0) {
        vsl_buf_free(&b);
        return NULL;
    }
    return vsl_buf_take(&b);
}

/* Characters (not bytes) of UTF-8 s[0..n). */
static size_t columns(const char *s, size_t n)
{
    size_t c = 0;

    for (size_t i = 0; i < n; i++)
        c += ((unsigned char)s[i] & 0xC0) != 0x80;
    return c;
}

/* Appends s[0..n) to the plain-text part with every control character written as a visible
 * escape (\n, \r, \t, \x1B, \u2028): names and messages come from vCenter, where anyone who
 * may name a VM could otherwise start a line of the mail with a fake section ("RESOLVED (12)")
 * or item. The HTML part escapes them its own way. *cols, if given, grows by the columns
 * written. */
static int add_text(struct vsl_buf *b, const char *s, size_t n, size_t *cols)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + n;
    size_t c = 0;
    int r = 0;

    while (r == 0 && p < end) {
        const unsigned char *q = p;
        size_t k = 0;
        while (q < end && !(k = vsl_control_len(q)))
            q++;
        r = vsl_buf_add(b, (const char *)p, (size_t)(q - p));
        c += columns((const char *)p, (size_t)(q - p));
        if (r < 0 || q >= end)
            break;
        char e[8];
        vsl_control_escape(q, k, e);
        r = vsl_buf_addstr(b, e);
        c += strlen(e);
        p = q + k;
    }
    if (cols)
        *cols += c;
    return r;
}

/* Appends text wrapped at TEXT_WIDTH columns: the first line after first (already counted as
 * first_col columns), the next ones indented by indent spaces. A word longer than a line is
 * left whole. Control characters, a newline's included, are written as escapes (add_text()):
 * every line the text makes starts with the indent. */
static int wrap(struct vsl_buf *b, size_t first_col, int indent, const char *text)
{
    size_t col = first_col;
    const char *p = text;
    int r = 0, started = 0;

    while (r == 0 && *p) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        size_t w = strcspn(p, " ");
        struct vsl_buf word;
        size_t wc = 0;
        vsl_buf_init(&word, 8 * w + 8); /* an escape is at most 6 bytes for 1 */
        r = add_text(&word, p, w, &wc);
        if (r == 0 && started && col + 1 + wc > TEXT_WIDTH) {
            r = vsl_buf_printf(b, "\n%*s", indent, "");
            col = (size_t)indent;
        } else if (r == 0 && started) {
            r = vsl_buf_addstr(b, " ");
            col++;
        }
        if (r == 0 && word.len)
            r = vsl_buf_add(b, word.data, word.len);
        vsl_buf_free(&word);
        col += wc;
        started = 1;
        p += w;
    }
    return r == 0 ? vsl_buf_addstr(b, "\n") : r;
}

/* Colours readable on a white and on a dark background alike: saturated mid-tones behind
 * white text for the severities, greys with alpha for rules and muted text. */
static const char *sev_colour(const char *sev)
{
    return !strcmp(sev, "critical") ? "#c62828" : !strcmp(sev, "warning") ? "#b45309" : "#1d6fb8";
}

/* Both parts are written by one walk over the model: a section is a title, an optional link
 * and either its items or a sentence saying there are none. */
struct out {
    struct vsl_buf text, html;
    const struct vsl_digest_style *st;
    int r;
};

static void t_add(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void h_add(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add(struct out *o, struct vsl_buf *b, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

static void add(struct out *o, struct vsl_buf *b, const char *fmt, va_list ap)
{
    if (o->r == 0)
        o->r = vsl_buf_vprintf(b, fmt, ap);
}

static void t_add(struct out *o, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    add(o, &o->text, fmt, ap);
    va_end(ap);
}

static void h_add(struct out *o, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    add(o, &o->html, fmt, ap);
    va_end(ap);
}

/* A name or other text from outside, control characters escaped (add_text()). */
static void t_str(struct out *o, const char *s)
{
    if (!o->r)
        o->r = add_text(&o->text, s, strlen(s), NULL);
}

static void t_wrap(struct out *o, size_t first_col, int indent, const char *s)
{
    if (!o->r)
        o->r = wrap(&o->text, first_col, indent, s);
}

static void h_esc(struct out *o, const char *s)
{
    if (!o->r)
        o->r = vsl_buf_addxml(&o->html, s);
}

static void section(struct out *o, const char *id, const char *title, json_int_t count,
                    const char *url)
{
    char upper[128];
    size_t i;

    for (i = 0; title[i] && i + 1 < sizeof(upper); i++)
        upper[i] = (char)(title[i] >= 'a' && title[i] <= 'z' ? title[i] - 32 : title[i]);
    upper[i] = '\0';
    if (count >= 0)
        t_add(o, "\n%s (%lld)\n", upper, (long long)count);
    else
        t_add(o, "\n%s\n", upper);
    h_add(o, "<h2 id=\"%s\" style=\"font-size:17px;margin:26px 0 8px 0;\">", id);
    h_esc(o, title);
    if (count >= 0)
        h_add(o, " (%lld)", (long long)count);
    h_add(o, "</h2>\n");
    if (url && *url) {
        t_add(o, "  %s\n", url);
        h_add(o, "<p style=\"margin:0 0 8px 0;font-size:13px;\"><a href=\"");
        h_esc(o, url);
        h_add(o, "\" style=\"color:#2f7ed8;\">Open in the dashboard</a></p>\n");
    }
}

static void none(struct out *o, const char *sentence)
{
    t_add(o, "  ");
    t_str(o, sentence);
    t_add(o, "\n");
    h_add(o, "<p style=\"margin:4px 0;opacity:0.8;\">");
    h_esc(o, sentence);
    h_add(o, "</p>\n");
}

static const char TABLE[] = "<table role=\"presentation\" cellpadding=\"0\" cellspacing=\"0\" "
                            "style=\"border-collapse:collapse;width:100%%;font-size:14px;\">\n";
static const char TD[] = "<td style=\"padding:6px 8px;border-bottom:1px solid rgba(128,128,128,0.35);"
                         "vertical-align:top;overflow-wrap:anywhere;word-break:break-word;\">";
/* Severity and check: whole words (a check id breaks only at its hyphens). */
static const char TD_WORD[] = "<td style=\"padding:6px 8px;border-bottom:1px solid "
                              "rgba(128,128,128,0.35);vertical-align:top;\">";

static void badge(struct out *o, const char *sev)
{
    h_add(o, "<span style=\"display:inline-block;padding:1px 6px;border-radius:3px;"
             "background:%s;color:#ffffff;font-size:12px;font-weight:bold;\">%s</span>",
          sev_colour(sev), sev);
}

/* One finding as a table row and a text item. with_check: the check is its own column (new
 * and resolved); without, the rows sit under their check's heading (open). */
static void finding_row(struct out *o, const json_t *f, int with_check)
{
    char name[1024];
    const char *sev = str(f, "severity"), *check = str(f, "check"), *vc = str(f, "vcenter");
    char *url = link(o->st, "check", check, "vcenter", vc, "object", str(json_object_get(f, "object"), "name"),
                     (const char *)NULL);

    vsl_finding_object_name(f, name, sizeof(name));
    char line[2048];
    if (with_check) {
        snprintf(line, sizeof(line), "* [%s] %s: %s (%s)", sev, check, name, vc);
        t_add(o, "  ");
        t_wrap(o, 2, 4, line);
        t_add(o, "      ");
        t_wrap(o, 6, 6, str(f, "message"));
    } else {
        t_add(o, "    * ");
        t_str(o, name);
        t_add(o, " (");
        t_str(o, vc);
        t_add(o, "): ");
        t_wrap(o, 4 + 2 + columns(name, strlen(name)) + strlen(vc) + 5, 8, str(f, "message"));
    }
    h_add(o, "<tr>%s", TD_WORD);
    badge(o, sev);
    h_add(o, "</td>");
    if (with_check) {
        h_add(o, "%s<code>", TD_WORD);
        h_esc(o, check);
        h_add(o, "</code></td>");
    }
    h_add(o, "%s<strong>", TD);
    if (url && *url) {
        h_add(o, "<a href=\"");
        h_esc(o, url);
        h_add(o, "\" style=\"color:inherit;\">");
    }
    h_esc(o, name);
    if (url && *url)
        h_add(o, "</a>");
    h_add(o, "</strong><br><span style=\"font-size:12px;opacity:0.75;\">");
    h_esc(o, vc);
    h_add(o, "</span></td>%s", TD);
    h_esc(o, str(f, "message"));
    h_add(o, "</td></tr>\n");
    if (!url && !o->r)
        o->r = -ENOMEM;
    free(url);
}

static void more(struct out *o, json_int_t total, size_t listed)
{
    char s[128];

    if ((size_t)total <= listed)
        return;
    snprintf(s, sizeof(s), "... and %lld more (see the dashboard).", (long long)(total - (json_int_t)listed));
    none(o, s);
}

static void findings_section(struct out *o, const json_t *m, const char *key, const char *id,
                             const char *title, const char *url, const char *empty)
{
    const json_t *list = json_object_get(m, key), *f;
    json_int_t total = num(json_object_get(m, "counts"), key);
    size_t i;

    section(o, id, title, total, url);
    if (!json_array_size(list)) {
        none(o, empty);
        return;
    }
    h_add(o, TABLE);
    json_array_foreach(list, i, f)
        finding_row(o, f, 1);
    h_add(o, "</table>\n");
    more(o, total, json_array_size(list));
}

/* Open findings by severity, then check (with its title), each check's objects under it. */
static void open_section(struct out *o, const json_t *m)
{
    const json_t *list = json_object_get(m, "open"), *f;
    json_int_t total = num(m, "open_total"), waived = num(m, "waived");
    const char *sev_shown = "", *check_shown = "";
    char title[128], *url;
    size_t i;

    snprintf(title, sizeof(title), "Open findings, %s and above", o->st->min_severity);
    url = link(o->st, "severity", o->st->min_severity, (const char *)NULL);
    section(o, "open", title, total, url);
    free(url);
    if (!json_array_size(list))
        none(o, "No open finding.");
    else
        h_add(o, TABLE);
    json_array_foreach(list, i, f) {
        const char *sev = str(f, "severity"), *check = str(f, "check");
        if (strcmp(sev, sev_shown)) {
            char upper[16];
            size_t k;
            for (k = 0; sev[k] && k + 1 < sizeof(upper); k++)
                upper[k] = (char)(sev[k] >= 'a' && sev[k] <= 'z' ? sev[k] - 32 : sev[k]);
            upper[k] = '\0';
            t_add(o, "\n  %s\n", upper);
            sev_shown = sev;
            check_shown = "";
        }
        if (strcmp(check, check_shown)) {
            t_add(o, "  ");
            t_str(o, check);
            t_add(o, ": ");
            t_wrap(o, 4 + strlen(check), 4, str(f, "title"));
            h_add(o, "<tr><td colspan=\"3\" style=\"padding:12px 8px 4px 8px;font-weight:bold;"
                     "border-bottom:1px solid rgba(128,128,128,0.35);\"><code>");
            h_esc(o, check);
            h_add(o, "</code> ");
            h_esc(o, str(f, "title"));
            h_add(o, "</td></tr>\n");
            check_shown = check;
        }
        finding_row(o, f, 0);
    }
    if (json_array_size(list))
        h_add(o, "</table>\n");
    more(o, total, json_array_size(list));
    if (waived > 0) {
        char s[128];
        snprintf(s, sizeof(s), "%lld waived finding%s not listed (see the waivers in the "
                 "configuration).", (long long)waived, waived == 1 ? " is" : "s are");
        none(o, s);
    }
}

static void vcenters_section(struct out *o, const json_t *m)
{
    const json_t *list = json_object_get(m, "vcenters"), *v;
    size_t i;
    char s[128];

    section(o, "vcenters", "vCenters that failed to poll or are stale", (json_int_t)json_array_size(list),
            NULL);
    if (!json_array_size(list)) {
        snprintf(s, sizeof(s), "All %lld vCenter%s polled on time.", (long long)num(m, "vcenters_total"),
                 num(m, "vcenters_total") == 1 ? "" : "s");
        none(o, s);
        return;
    }
    h_add(o, TABLE);
    json_array_foreach(list, i, v) {
        t_add(o, "  * ");
        t_str(o, str(v, "name"));
        t_add(o, ": ");
        t_wrap(o, 6 + strlen(str(v, "name")), 6, str(v, "problem"));
        h_add(o, "<tr>%s<strong>", TD);
        h_esc(o, str(v, "name"));
        h_add(o, "</strong></td>%s", TD);
        h_esc(o, str(v, "problem"));
        h_add(o, "</td></tr>\n");
    }
    h_add(o, "</table>\n");
}

static void waivers_section(struct out *o, const json_t *m)
{
    const json_t *list = json_object_get(m, "waivers"), *w;
    size_t i;
    char s[256];

    section(o, "waivers", "Waivers expiring in the next 14 days", (json_int_t)json_array_size(list), NULL);
    if (!json_array_size(list)) {
        none(o, "No waiver expires in the next 14 days.");
        return;
    }
    h_add(o, TABLE);
    json_array_foreach(list, i, w) {
        json_int_t d = num(w, "days");
        const char *vc = str(w, "vcenter");
        snprintf(s, sizeof(s), "expires %s (%s)", str(w, "expires"),
                 d == 0 ? "last day today" : d == 1 ? "1 day left" : "");
        if (d > 1)
            snprintf(s, sizeof(s), "expires %s (%lld days left)", str(w, "expires"), (long long)d);
        t_add(o, "  * ");
        t_str(o, str(w, "check"));
        t_add(o, " on ");
        t_str(o, str(w, "object"));
        if (*vc) {
            t_add(o, " (");
            t_str(o, vc);
            t_add(o, ")");
        }
        t_add(o, ": %s\n      ", s);
        t_wrap(o, 6, 6, str(w, "reason"));
        h_add(o, "<tr>%s<code>", TD);
        h_esc(o, str(w, "check"));
        h_add(o, "</code></td>%s<strong>", TD);
        h_esc(o, str(w, "object"));
        h_add(o, "</strong>");
        if (*vc) {
            h_add(o, "<br><span style=\"font-size:12px;opacity:0.75;\">");
            h_esc(o, vc);
            h_add(o, "</span>");
        }
        h_add(o, "</td>%s", TD);
        h_esc(o, s);
        h_add(o, "</td>%s", TD);
        h_esc(o, str(w, "reason"));
        h_add(o, "</td></tr>\n");
    }
    h_add(o, "</table>\n");
}

/* "12 days", or "n/a" for null (JSON never says infinite or negative: the reason does). */
static void days(const json_t *v, char *buf, size_t size)
{
    if (json_is_number(v))
        snprintf(buf, size, "%.0f day%s", json_number_value(v),
                 json_number_value(v) == 1 ? "" : "s");
    else
        snprintf(buf, size, "n/a");
}

static int by_days_to_critical(const void *a, const void *b)
{
    double x = json_number_value(json_object_get(json_object_get(*(json_t *const *)a, "runway"),
                                                 "days_to_critical"));
    double y = json_number_value(json_object_get(json_object_get(*(json_t *const *)b, "runway"),
                                                 "days_to_critical"));
    return x < y ? -1 : x > y;
}

static void runway_section(struct out *o, const json_t *m)
{
    const json_t *list = json_object_get(m, "datastores"), *ds;
    json_t *top[VSL_DIGEST_RUNWAY_TOP + 1];
    size_t i, n = 0, estimated = 0;

    /* The shortest VSL_DIGEST_RUNWAY_TOP by days to the critical threshold: an insertion into
     * a short sorted array, whatever the number of datastores. */
    const char *reason = NULL;
    json_array_foreach(list, i, ds) {
        const json_t *rw = json_object_get(ds, "runway");
        if (!json_is_object(rw))
            continue;
        if (!json_is_number(json_object_get(rw, "growth_gb_per_day"))) {
            if (!reason && json_is_string(json_object_get(rw, "reason")))
                reason = json_string_value(json_object_get(rw, "reason"));
            continue;
        }
        estimated++;
        if (!json_is_number(json_object_get(rw, "days_to_critical")))
            continue;
        top[n++] = (json_t *)ds;
        qsort(top, n, sizeof(top[0]), by_days_to_critical);
        if (n > VSL_DIGEST_RUNWAY_TOP)
            n = VSL_DIGEST_RUNWAY_TOP;
    }
    section(o, "runway", "Datastores with the shortest runway", -1, NULL);
    if (!estimated) {
        char s[512];
        snprintf(s, sizeof(s), "No runway estimates yet%s%s.", reason ? ": " : "",
                 reason ? reason : "");
        none(o, s);
        return;
    }
    if (!n) {
        char s[160];
        snprintf(s, sizeof(s), "None of the %zu datastore%s with an estimate is on course to "
                 "reach the critical threshold.", estimated, estimated == 1 ? "" : "s");
        none(o, s);
        return;
    }
    h_add(o, TABLE);
    h_add(o, "<tr><th align=\"left\" style=\"padding:4px 8px;\">Datastore</th>"
             "<th align=\"left\" style=\"padding:4px 8px;\">To critical</th>"
             "<th align=\"left\" style=\"padding:4px 8px;\">To warning</th>"
             "<th align=\"left\" style=\"padding:4px 8px;\">Growth</th></tr>\n");
    for (i = 0; i < n; i++) {
        const json_t *rw = json_object_get(top[i], "runway");
        char crit[32], warn[32], growth[64], line[512];
        const json_t *g = json_object_get(rw, "growth_gb_per_day");
        days(json_object_get(rw, "days_to_critical"), crit, sizeof(crit));
        days(json_object_get(rw, "days_to_warning"), warn, sizeof(warn));
        if (json_is_number(g))
            snprintf(growth, sizeof(growth), "%.1f GB/day over %.0f days", json_number_value(g),
                     json_number_value(json_object_get(rw, "history_days")));
        else
            snprintf(growth, sizeof(growth), "unknown");
        snprintf(line, sizeof(line), "critical in %s, warning in %s; growing %s", crit, warn,
                 growth);
        t_add(o, "  * ");
        t_str(o, str(top[i], "name"));
        t_add(o, " (");
        t_str(o, str(top[i], "vcenter"));
        t_add(o, "): ");
        t_wrap(o, 9 + strlen(str(top[i], "name")) + strlen(str(top[i], "vcenter")), 6, line);
        h_add(o, "<tr>%s<strong>", TD);
        h_esc(o, str(top[i], "name"));
        h_add(o, "</strong><br><span style=\"font-size:12px;opacity:0.75;\">");
        h_esc(o, str(top[i], "vcenter"));
        h_add(o, "</span></td>%s%s</td>%s%s</td>%s%s</td></tr>\n", TD, crit, TD, warn, TD,
              growth);
    }
    h_add(o, "</table>\n");
}

static void score_sentence(const json_t *m, char *buf, size_t size)
{
    const json_t *s = json_object_get(m, "score"), *p = json_object_get(m, "previous_score");

    if (!json_is_integer(s))
        snprintf(buf, size, "No score yet: no vCenter has been polled.");
    else if (!json_is_integer(p))
        snprintf(buf, size, "Score %lld of 100 (the first digest: no change to report).",
                 (long long)json_integer_value(s));
    else {
        json_int_t d = json_integer_value(s) - json_integer_value(p);
        if (d == 0)
            snprintf(buf, size, "Score %lld of 100, unchanged since the previous digest.",
                     (long long)json_integer_value(s));
        else
            snprintf(buf, size, "Score %lld of 100, %s %lld since the previous digest (%lld).",
                     (long long)json_integer_value(s), d > 0 ? "up" : "down",
                     (long long)(d > 0 ? d : -d), (long long)json_integer_value(p));
    }
}

int vsl_digest_render(const json_t *model, const struct vsl_digest_style *st, char **subject,
                      char **text, char **html)
{
    const json_t *c = json_object_get(model, "counts");
    struct out o = {.st = st};
    char subj[512], from[64], to[64], window[200], score[160], *url;
    int64_t from_ms = num(model, "from"), to_ms = num(model, "to");

    *subject = *text = *html = NULL;
    snprintf(subj, sizeof(subj), "%s: %lld new, %lld resolved, %lld open (%lld critical)",
             st->prefix ? st->prefix : "vslint", (long long)num(c, "new"),
             (long long)num(c, "resolved"), (long long)num(c, "open"),
             (long long)num(c, "critical"));
    vsl_sched_format(st->tz, to_ms, to, sizeof(to));
    if (from_ms > 0)
        snprintf(window, sizeof(window), "Since the previous digest: %s to %s.",
                 vsl_sched_format(st->tz, from_ms, from, sizeof(from)), to);
    else
        snprintf(window, sizeof(window), "The first digest: all history up to %s.", to);
    score_sentence(model, score, sizeof(score));
    vsl_buf_init(&o.text, MAX_MESSAGE / 4);
    vsl_buf_init(&o.html, MAX_MESSAGE / 2);

    t_wrap(&o, 0, 0, subj);
    t_wrap(&o, 0, 0, window);
    t_wrap(&o, 0, 0, score);
    url = link(st, "status", "open", (const char *)NULL);
    if (url && *url)
        t_add(&o, "Dashboard: %s\n", url);

    h_add(&o, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
              "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
              "<meta name=\"color-scheme\" content=\"light dark\">\n"
              "<meta name=\"supported-color-schemes\" content=\"light dark\">\n<title>");
    h_esc(&o, subj);
    h_add(&o, "</title></head>\n<body style=\"margin:0;padding:16px;font-family:-apple-system,"
              "'Segoe UI',Roboto,Helvetica,Arial,sans-serif;line-height:1.4;\">\n"
              "<div style=\"max-width:900px;margin:0 auto;\">\n"
              "<h1 style=\"font-size:20px;margin:0 0 6px 0;\">");
    h_esc(&o, subj);
    h_add(&o, "</h1>\n<p style=\"margin:0 0 4px 0;opacity:0.8;\">");
    h_esc(&o, window);
    h_add(&o, "</p>\n<p style=\"margin:0 0 4px 0;\">");
    h_esc(&o, score);
    h_add(&o, "</p>\n");
    if (url && *url) {
        h_add(&o, "<p style=\"margin:0;\"><a href=\"");
        h_esc(&o, url);
        h_add(&o, "\" style=\"color:#2f7ed8;\">Open the dashboard</a></p>\n");
    }
    free(url);

    vcenters_section(&o, model);
    url = link(st, "status", "new", (const char *)NULL);
    findings_section(&o, model, "new", "new", "New since the previous digest", url,
                     "Nothing new.");
    free(url);
    url = link(st, "status", "resolved", (const char *)NULL);
    findings_section(&o, model, "resolved", "resolved", "Resolved since the previous digest", url,
                     "Nothing was fixed.");
    free(url);
    open_section(&o, model);
    waivers_section(&o, model);
    runway_section(&o, model);
    section(&o, "score", "Score", -1, NULL);
    none(&o, score);
    t_add(&o, "\n-- \nvslint, %s\n", to);
    h_add(&o, "<p style=\"margin:24px 0 0 0;font-size:12px;opacity:0.7;\">vslint, %s</p>\n"
              "</div>\n</body></html>\n", to);

    if (o.r < 0) {
        vsl_buf_free(&o.text);
        vsl_buf_free(&o.html);
        return o.r;
    }
    *subject = strdup(subj);
    *text = vsl_buf_take(&o.text);
    *html = vsl_buf_take(&o.html);
    vsl_buf_free(&o.text);
    vsl_buf_free(&o.html);
    if (!*subject || !*text || !*html) {
        free(*subject);
        free(*text);
        free(*html);
        *subject = *text = *html = NULL;
        return -ENOMEM;
    }
    return 0;
}

int vsl_digest_message(const json_t *model, const struct vsl_digest_style *st, const char *from,
                       const char *to, int64_t now_ms, const char *message_id,
                       struct vsl_buf *out)
{
    char *subject, *text, *html, date[64], boundary[96];
    int r = vsl_digest_render(model, st, &subject, &text, &html);

    if (r < 0)
        return r;
    /* "=_" cannot occur in quoted-printable, so the boundary never appears in a body. */
    snprintf(boundary, sizeof(boundary), "=_vslint_%lld_%zu", (long long)now_ms,
             strlen(text) + strlen(html));
    if (!vsl_mime_date(now_ms, date, sizeof(date)))
        r = -EINVAL;
    if (r == 0)
        r = vsl_mime_header(out, "Date", date);
    if (r == 0)
        r = vsl_mime_header(out, "From", from);
    if (r == 0)
        r = vsl_mime_header(out, "To", to);
    if (r == 0)
        r = vsl_mime_header(out, "Message-ID", message_id);
    if (r == 0)
        r = vsl_mime_header(out, "Subject", subject);
    if (r == 0)
        r = vsl_buf_printf(out,
                           "MIME-Version: 1.0\r\n"
                           "Auto-Submitted: auto-generated\r\n"
                           "Content-Type: multipart/alternative;\r\n boundary=\"%s\"\r\n"
                           "\r\n"
                           "This is a message in MIME format: a plain text and an HTML part.\r\n"
                           "\r\n--%s\r\n"
                           "Content-Type: text/plain; charset=utf-8\r\n"
                           "Content-Transfer-Encoding: quoted-printable\r\n\r\n",
                           boundary, boundary);
    if (r == 0)
        r = vsl_mime_qp(out, text);
    if (r == 0)
        r = vsl_buf_printf(out,
                           "\r\n--%s\r\n"
                           "Content-Type: text/html; charset=utf-8\r\n"
                           "Content-Transfer-Encoding: quoted-printable\r\n\r\n",
                           boundary);
    if (r == 0)
        r = vsl_mime_qp(out, html);
    if (r == 0)
        r = vsl_buf_printf(out, "\r\n--%s--\r\n", boundary);
    free(subject);
    free(text);
    free(html);
    return r;
}

/* ---- sending -------------------------------------------------------------------------------- */

struct upload {
    const char *data;
    size_t len, pos;
};

static size_t read_cb(char *buf, size_t size, size_t nmemb, void *arg)
{
    struct upload *u = arg;
    size_t n = size * nmemb;

    if (n > u->len - u->pos)
        n = u->len - u->pos;
    memcpy(buf, u->data + u->pos, n);
    u->pos += n;
    return n;
}

struct giveup {
    int (*wait)(void *ctx, int seconds);
    void *ctx;
    int asked; /* wait said to give up */
};

/* CURLOPT_XFERINFOFUNCTION: libcurl calls it about once a second even while nothing moves. */
static int xferinfo_cb(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
    struct giveup *g = arg;

    (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
    if (g->wait && g->wait(g->ctx, 0))
        g->asked = 1;
    return g->asked;
}

int vsl_digest_send(const struct vsl_digest_conf *d, const char *password, const char *message,
                    int (*wait)(void *ctx, int seconds), void *ctx, char *err, size_t errlen)
{
    struct giveup g = {.wait = wait, .ctx = ctx};
    struct upload up = {.data = message, .len = strlen(message)};
    struct curl_slist *rcpt = NULL;
    char errbuf[CURL_ERROR_SIZE] = "", addr[300], *copy = NULL, *save = NULL, *tok;
    CURLcode rc = CURLE_OUT_OF_MEMORY;
    CURL *c = curl_easy_init();
    int r = -ENOMEM;

    if (!c)
        goto out;
    copy = strdup(d->to);
    if (!copy)
        goto out;
    for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        tok += strspn(tok, " \t");
        tok[strcspn(tok, " \t")] = '\0';
        if (!*tok)
            continue;
        snprintf(addr, sizeof(addr), "<%s>", tok);
        struct curl_slist *n = curl_slist_append(rcpt, addr);
        if (!n)
            goto out;
        rcpt = n;
    }
    snprintf(addr, sizeof(addr), "<%s>", d->from);
    curl_easy_setopt(c, CURLOPT_URL, d->smtp_url);
    curl_easy_setopt(c, CURLOPT_MAIL_FROM, addr);
    curl_easy_setopt(c, CURLOPT_MAIL_RCPT, rcpt);
    curl_easy_setopt(c, CURLOPT_READFUNCTION, read_cb);
    curl_easy_setopt(c, CURLOPT_READDATA, &up);
    curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)up.len);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 30L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 300L);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, xferinfo_cb);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, &g);
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    /* smtp://: STARTTLS, required unless the configuration says optional, and always with a
     * password (the loader refuses that combination; a caller that skipped it still sends no
     * password in plain text); smtps:// is TLS from the first byte whatever this says. */
    curl_easy_setopt(c, CURLOPT_USE_SSL,
                     d->starttls_optional && !password && !d->user ? (long)CURLUSESSL_TRY
                                                                   : (long)CURLUSESSL_ALL);
    if (d->ca_file)
        curl_easy_setopt(c, CURLOPT_CAINFO, d->ca_file);
    if (d->insecure) {
        curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    if (d->user)
        curl_easy_setopt(c, CURLOPT_USERNAME, d->user);
    if (password)
        curl_easy_setopt(c, CURLOPT_PASSWORD, password);
    rc = curl_easy_perform(c);
    if (rc == CURLE_OK) {
        r = 0;
        goto out;
    }
    if (g.asked) {
        /* Cleaning the handle up says QUIT and waits for the answer the relay never gave
         * (up to CURLOPT_TIMEOUT): the connection is shut first, so that it fails at once. */
        curl_socket_t sock = CURL_SOCKET_BAD;
        if (curl_easy_getinfo(c, CURLINFO_ACTIVESOCKET, &sock) == CURLE_OK &&
            sock != CURL_SOCKET_BAD)
            shutdown(sock, SHUT_RDWR);
        snprintf(err, errlen, "abandoned: the daemon is stopping");
        r = -EINTR;
        goto out;
    }
    long code = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    if (code >= 400)
        snprintf(err, errlen, "%s (SMTP %ld)", errbuf[0] ? errbuf : curl_easy_strerror(rc), code);
    else
        snprintf(err, errlen, "%s", errbuf[0] ? errbuf : curl_easy_strerror(rc));
    r = rc == CURLE_USE_SSL_FAILED || rc == CURLE_SSL_CONNECT_ERROR ||
                rc == CURLE_PEER_FAILED_VERIFICATION
            ? -VSL_ETLS
            : rc == CURLE_LOGIN_DENIED ? -VSL_ELOGIN : -VSL_ENET;
out:
    if (r == -ENOMEM && rc == CURLE_OUT_OF_MEMORY)
        snprintf(err, errlen, "out of memory");
    /* The password was copied into the handle: gone with it. */
    curl_easy_cleanup(c);
    curl_slist_free_all(rcpt);
    free(copy);
    return r;
}

/* ---- one digest, start to finish ------------------------------------------------------------ */

int vsl_digest_run(struct db *db, const struct vsl_config *cfg, int64_t slot_ms, int64_t now_ms,
                   int attempts, int (*wait)(void *ctx, int seconds), void *ctx, int dry_run,
                   FILE *dry_out)
{
    const struct vsl_digest_conf *d = &cfg->digest;
    struct vsl_digest_style st = {.public_url = d->public_url, .tz = d->timezone,
                                  .prefix = d->subject, .min_severity = d->min_severity};
    struct db_digest last, rec = {0};
    struct vsl_buf msg;
    json_t *model = NULL;
    char *password = NULL, err[1024] = "";
    int r, prev_score = -1;

    vsl_buf_init(&msg, MAX_MESSAGE);
    r = db_digest_last(db, &last, NULL);
    if (r == 0) {
        rec.from_ms = last.to_ms;
        prev_score = last.score;
    } else if (r != -VSL_ENOTFOUND) {
        log_warnx("digest: cannot read the previous digest: %s", vsl_strerror(r));
        goto out;
    }
    /* A clock set back must not make a window end before it starts. */
    rec.to_ms = now_ms > rec.from_ms ? now_ms : rec.from_ms + 1;
    rec.slot_ms = slot_ms;
    r = vsl_digest_gather(db, cfg, rec.from_ms, rec.to_ms, prev_score, &model);
    if (r < 0) {
        log_warnx("digest: cannot read the findings: %s", vsl_strerror(r));
        goto out;
    }
    const json_t *c = json_object_get(model, "counts");
    rec.new_count = num(c, "new");
    rec.resolved_count = num(c, "resolved");
    rec.open_count = num(c, "open");
    rec.critical_count = num(c, "critical");
    rec.score = json_is_integer(json_object_get(model, "score"))
                    ? (int)json_integer_value(json_object_get(model, "score"))
                    : -1;
    r = vsl_mime_message_id(d->from, rec.to_ms, rec.message_id, sizeof(rec.message_id));
    if (r == 0)
        r = vsl_digest_message(model, &st, d->from, d->to, now_ms, rec.message_id, &msg);
    if (r < 0) {
        log_warnx("digest: cannot write the message: %s", vsl_strerror(r));
        goto out;
    }
    if (dry_run) {
        fwrite(msg.data, 1, msg.len, dry_out);
        goto out;
    }
    if (!d->send_when_empty && vsl_digest_empty(model)) {
        log_info("digest: nothing new, resolved or failing since the previous digest; "
                 "send_when_empty = false, so no mail");
        rec.message_id[0] = '\0';
        rec.sent_ms = now_ms;
        r = db_digest_record(db, &rec);
        goto out;
    }
    r = vsl_config_smtp_password(d, &password, err, sizeof(err));
    if (r < 0) {
        log_warnx("digest: %s", err);
        goto out;
    }
    int delay = d->retry_min_s;
    for (int n = 1;; n++) {
        r = vsl_digest_send(d, password, msg.data, wait, ctx, err, sizeof(err));
        if (r == 0)
            break;
        if (r == -EINTR) {
            log_warnx("digest: delivery to %s abandoned: stopping; the window stays unsent",
                      d->smtp_url);
            goto out;
        }
        if (attempts && n >= attempts) {
            log_warnx("digest: delivery to %s failed (attempt %d of %d): %s; giving up, the "
                      "window stays unsent", d->smtp_url, n, attempts, err);
            goto out;
        }
        log_warnx("digest: delivery to %s failed (attempt %d): %s; retrying in %d s",
                  d->smtp_url, n, err, delay);
        if (wait(ctx, delay)) {
            r = -EINTR;
            goto out;
        }
        int cap = d->retry_max_s > d->retry_min_s ? d->retry_max_s : d->retry_min_s;
        delay = delay > cap / 2 ? cap : delay * 2;
    }
    rec.sent_ms = vsl_now_ms();
    r = db_digest_record(db, &rec);
    if (r < 0)
        log_warnx("digest: sent, but cannot record it: %s (the next digest repeats its window)",
                  vsl_strerror(r));
    else
        log_info("digest: sent to %s: %lld new, %lld resolved, %lld open (%lld critical)", d->to,
                 (long long)rec.new_count, (long long)rec.resolved_count,
                 (long long)rec.open_count, (long long)rec.critical_count);
out:
    vsl_config_wipe(password);
    json_decref(model);
    vsl_buf_free(&msg);
    return r;
}

int vsl_digest_first_due(struct db *db, const struct vsl_digest_conf *d, int at, int64_t now_ms,
                         int64_t *due)
{
    struct db_digest last;
    int64_t last_slot, prev;
    int r = db_digest_last(db, &last, &last_slot);

    if (r < 0 && r != -VSL_ENOTFOUND)
        return r;
    if (r == 0 && vsl_sched_prev(d->timezone, at, now_ms, &prev) == 0 && last_slot < prev &&
        last.to_ms < prev) {
        char t[64];
        log_info("digest: the digest due at %s was not sent; sending it now",
                 vsl_sched_format(d->timezone, prev, t, sizeof(t)));
        *due = prev;
        return 0;
    }
    return vsl_sched_next(d->timezone, at, now_ms, due);
}
