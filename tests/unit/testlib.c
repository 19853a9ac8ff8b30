/* Helpers the unit tests share (testlib.h): running a check and reading its findings, a
 * temporary database filled through a snapshot sink, and captured simulator answers decoded.
 * Failures end the running cmocka test. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib.h"
#include "util/buf.h"
#include "util/err.h"
#include "vsphere/xml.h"

/* ---- checks ---- */

struct chk_results tl_run(const struct check *c, const struct chk_settings *s,
                          const struct estate *e, int64_t now)
{
    struct chk_results r = {0};
    assert_int_equal(chk_run_one(c, s, e, now, &r), 0);
    return r;
}

const struct chk_finding *tl_find(const struct chk_results *r, const char *name, const char *detail)
{
    const struct chk_finding *hit = NULL;

    for (size_t i = 0; i < r->n; i++) {
        const struct chk_finding *f = &r->items[i];
        const int part = f->host_name && !f->object_moref;
        char full[512];
        /* A part of a host (a LUN, a vmknic, an adapter) is named "HOST PART" in the tables. */
        snprintf(full, sizeof(full), "%s%s%s", part ? f->host_name : "", part ? " " : "",
                 f->object_name);
        if (strcmp(full, name) || (detail && (!f->detail || strcmp(f->detail, detail))))
            continue;
        if (hit)
            fail_msg("two findings on %s", name);
        hit = f;
    }
    return hit;
}

void tl_want(const struct chk_results *r, const char *name, int want)
{
    const struct chk_finding *f = tl_find(r, name, NULL);

    if (want == NONE) {
        if (f)
            fail_msg("%s flagged %s (%s), want no finding", name, vsl_severity_name(f->severity),
                     f->message);
        return;
    }
    if (!f)
        fail_msg("%s not flagged, want %s", name, vsl_severity_name((enum vsl_severity)want));
    if ((int)f->severity != want)
        fail_msg("%s flagged %s, want %s (%s)", name, vsl_severity_name(f->severity),
                 vsl_severity_name((enum vsl_severity)want), f->message);
    assert_non_null(f->message);
    assert_true(f->message[0] != '\0');
}

double tl_ev_num(const struct chk_finding *f, const char *key)
{
    json_t *v = json_object_get(f->evidence, key);
    if (!json_is_number(v))
        fail_msg("%s: evidence has no number %s", f->object_name, key);
    return json_number_value(v);
}

json_int_t tl_ev_int(const struct chk_finding *f, const char *key)
{
    json_t *v = json_object_get(f->evidence, key);
    if (!json_is_integer(v))
        fail_msg("%s: evidence has no integer %s", f->object_name, key);
    return json_integer_value(v);
}

int tl_ev_bool(const struct chk_finding *f, const char *key)
{
    json_t *v = json_object_get(f->evidence, key);
    if (!json_is_boolean(v))
        fail_msg("%s: evidence has no boolean %s", f->object_name, key);
    return json_is_true(v);
}

const char *tl_ev_str(const struct chk_finding *f, const char *key)
{
    json_t *v = json_object_get(f->evidence, key);
    if (!json_is_string(v))
        fail_msg("%s: evidence has no string %s", f->object_name, key);
    return json_string_value(v);
}

void tl_set_param(const struct check *c, struct chk_settings *s, const char *name, double value)
{
    for (size_t i = 0; c->params && c->params[i].name; i++) {
        if (!strcmp(c->params[i].name, name)) {
            s->params[i] = value;
            return;
        }
    }
    fail_msg("%s has no parameter %s", c->id, name);
}

struct chk_settings tl_with_param(const struct check *c, const char *name, double value)
{
    struct chk_settings s;
    chk_settings_default(c, &s);
    tl_set_param(c, &s, name, value);
    return s;
}

/* ---- the database ---- */

static int dbfile_setup(void **state, int open)
{
    struct tl_dbfile *fx = calloc(1, sizeof(*fx));
    char *err = NULL;

    if (!fx)
        return -1;
    snprintf(fx->dir, sizeof(fx->dir), "/tmp/vslint-test-XXXXXX");
    if (!mkdtemp(fx->dir)) {
        free(fx);
        return -1;
    }
    snprintf(fx->path, sizeof(fx->path), "%s/vslint.db", fx->dir);
    if (open && db_open(fx->path, &fx->db, &err) < 0) {
        fprintf(stderr, "db_open: %s\n", err ? err : "?");
        free(err);
        rmdir(fx->dir);
        free(fx);
        return -1;
    }
    *state = fx;
    return 0;
}

int tl_db_setup(void **state)
{
    return dbfile_setup(state, 0);
}

int tl_db_setup_open(void **state)
{
    return dbfile_setup(state, 1);
}

int tl_db_teardown(void **state)
{
    static const char *const suffixes[] = {"", "-wal", "-shm", "-journal"};
    struct tl_dbfile *fx = *state;
    char p[160];

    db_close(fx->db);
    for (size_t i = 0; i < N(suffixes); i++) {
        snprintf(p, sizeof(p), "%s%s", fx->path, suffixes[i]);
        unlink(p);
    }
    rmdir(fx->dir);
    free(fx);
    return 0;
}

void tl_snapshot(struct db *db, const char *vc, tl_fill_fn *fill, const void *arg,
                 int64_t started_ms, int64_t finished_ms, int64_t counts[DB_NKINDS])
{
    struct db_snapshot *snap = NULL;
    struct vim_sink sink;

    assert_int_equal(db_snapshot_begin(db, vc, "https://vc.example/sdk", &snap, &sink), 0);
    fill(&sink, arg);
    assert_int_equal(db_snapshot_commit(snap, started_ms, finished_ms, counts), 0);
}

/* ---- captured simulator answers ---- */

int tl_feed_objects(void *ctx, xmlNode *node)
{
    struct tl_feed *f = ctx;

    if (!vim_name_is(node, "objects"))
        return 0;
    int r = f->decode(&f->d, vim_path_text(node, "obj"), node);
    return r < 0 ? r : 1;
}

char *tl_data_read(const char *name)
{
    char *s = NULL, path[512];

    snprintf(path, sizeof(path), SOURCE_ROOT "/tests/unit/data/%s", name);
    int r = vsl_read_file(path, 64u << 20, &s);
    if (r < 0)
        fail_msg("cannot read %s: %s", path, vsl_strerror(r));
    return s;
}

void tl_data_decode(struct vim_sink *sink, const char *name, vim_decode_fn *decode)
{
    struct tl_feed f = {.d = {.sink = sink}, .decode = decode};
    struct vim_xml *x = NULL;
    char *text = tl_data_read(name);

    if (vim_xml_parse_all(text, strlen(text), 5, tl_feed_objects, &f, &x) < 0)
        fail_msg("%s: %s", name, vim_xml_error(x));
    vim_xml_free(x);
    vim_decoder_free(&f.d);
    free(text);
}
