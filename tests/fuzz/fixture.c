/* The fixture of the fuzz targets that talk to the HTTP API (fuzz_query, fuzz_api): a database
 * filled once from the captured vCenter answers in tests/unit/data/ and the checks' findings
 * (two vCenters, findings of every status), and a real server (api_start) on a loopback port. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "checks/engine.h"
#include "db/findings.h"
#include "util/buf.h"
#include "util/err.h"
#include "vsphere/decode.h"
#include "vsphere/session.h"
#include "fixture.h"

#define DATA  SOURCE_ROOT "/tests/unit/data/"

struct fuzz_fx fx;

static void fatal_setup(const char *what, const char *why)
{
    fprintf(stderr, "fuzz: setup: %s: %s\n", what, why ? why : "failed");
    abort();
}

/* ---- setup: a database with two vCenters' inventory and findings of every status ----------- */

struct feed {
    struct vim_decoder d;
    int (*decode)(struct vim_decoder *, const char *, struct vim_node *);
};

static int on_elem(void *ctx, struct vim_node *n)
{
    struct feed *f = ctx;
    const char *moref = vim_path_text(n, "obj");

    if (!vim_name_is(n, "objects") || !moref)
        return 0;
    int r = f->decode(&f->d, moref, n);
    return r < 0 ? r : 1;
}

static void load_file(struct vim_sink *sink, const char *name,
                      int (*decode)(struct vim_decoder *, const char *, struct vim_node *))
{
    struct feed f = {.d = {.sink = sink}, .decode = decode};
    struct vim_xml *x = NULL;
    char path[512], *text = NULL;
    int r;

    snprintf(path, sizeof(path), DATA "%s", name);
    if ((r = vsl_read_file(path, 64u << 20, &text)) < 0)
        fatal_setup(path, vsl_strerror(r));
    if (vim_xml_parse_all(text, strlen(text), 5, on_elem, &f, &x) < 0)
        fatal_setup(path, vim_xml_error(x));
    vim_xml_free(x);
    vim_decoder_free(&f.d);
    free(text);
}

static void fill_vcenter(const char *vcenter)
{
    struct db_snapshot *snap = NULL;
    struct vim_sink sink;
    struct estate *e = NULL;
    struct chk_config cfg;
    struct chk_results res = {0};
    char err[512] = "";
    int r;

    if ((r = db_snapshot_begin(fx.db, vcenter, "https://vc.example/sdk", &snap, &sink)) < 0)
        fatal_setup("db_snapshot_begin", vsl_strerror(r));
    load_file(&sink, "storage_pod.xml", vim_decode_storage_pod);
    load_file(&sink, "datastore.xml", vim_decode_datastore);
    load_file(&sink, "dvswitch.xml", vim_decode_dvswitch);
    load_file(&sink, "host.xml", vim_decode_host);
    load_file(&sink, "vm.xml", vim_decode_vm);
    if ((r = db_snapshot_commit(snap, T1 - 1000, T1, NULL)) < 0)
        fatal_setup("db_snapshot_commit", vsl_strerror(r));

    if (chk_config_init(&cfg) < 0)
        fatal_setup("chk_config_init", NULL);
    /* One waiver, so some findings are "waived". */
    cfg.waivers = calloc(1, sizeof(*cfg.waivers));
    if (!cfg.waivers)
        fatal_setup("calloc", NULL);
    cfg.n_waivers = 1;
    cfg.waivers[0] = (struct chk_waiver){.check = strdup("datastore-size"),
                                         .object = strdup("*"),
                                         .reason = strdup("fuzz"),
                                         .expires_text = strdup("2099-12-31"),
                                         .expires = 4102444799LL};
    if ((r = db_estate_load(fx.db, vcenter, &e)) < 0)
        fatal_setup("db_estate_load", vsl_strerror(r));
    if ((r = chk_run_all(&cfg, e, T1 / 1000, &res, err, sizeof(err))) < 0)
        fatal_setup("chk_run_all", err);
    if (res.n < 4)
        fatal_setup("chk_run_all", "too few findings in the captured estate");
    /* Recorded twice, the second time without half of them: those are "resolved". */
    struct evaluation ev;
    if (chk_evaluation(&res, &ev) < 0)
        fatal_setup("chk_evaluation", NULL);
    if ((r = db_findings_record(fx.db, vcenter, &ev, T1)) < 0)
        fatal_setup("db_findings_record", vsl_strerror(r));
    ev.n_findings /= 2;
    r = db_findings_record(fx.db, vcenter, &ev, T2);
    evaluation_free(&ev);
    if (r < 0)
        fatal_setup("db_findings_record", vsl_strerror(r));
    chk_results_free(&res);
    est_free(e);
    chk_config_free(&cfg);
}

static int hook_status(void *ctx, struct api_vcenter_status **out, size_t *n)
{
    static const char *const names[] = {"vc1", "vc2"};

    *out = calloc(2, sizeof(**out));
    if (!*out)
        return -ENOMEM;
    for (size_t i = 0; i < 2; i++) {
        snprintf((*out)[i].name, sizeof((*out)[i].name), "%s", names[i]);
        snprintf((*out)[i].url, sizeof((*out)[i].url), "https://%s.example/sdk", names[i]);
        (*out)[i].polled_once = 1;
        (*out)[i].last_ok = i == 0;
        (*out)[i].last_finished_ms = (*out)[i].last_started_ms = T2;
        (*out)[i].last_success_ms = T1;
        snprintf((*out)[i].error, sizeof((*out)[i].error), "%s", i ? "connection refused" : "");
    }
    *n = 2;
    return 0;
}

static int hook_poll_now(void *ctx, const char *vcenter)
{
    return !vcenter || !strcmp(vcenter, "vc1") || !strcmp(vcenter, "vc2") ? 0 : -VSL_ENOTFOUND;
}

static void teardown(void)
{
    static const char *const suffixes[] = {"", "-wal", "-shm", "-journal"};
    char p[160];

    api_stop(fx.srv);
    db_close(fx.db);
    for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
        snprintf(p, sizeof(p), "%s%s", fx.path, suffixes[i]);
        unlink(p);
    }
    rmdir(fx.dir);
}

void fuzz_setup(const char *tag, int stmt_cache)
{
    static const struct api_hooks hooks = {.status = hook_status, .poll_now = hook_poll_now};
    char *msg = NULL, err[512] = "";
    int r;

    snprintf(fx.dir, sizeof(fx.dir), "/tmp/vslint-fuzz-%.16s-XXXXXX", tag);
    if (!mkdtemp(fx.dir))
        fatal_setup("mkdtemp", strerror(errno));
    snprintf(fx.path, sizeof(fx.path), "%s/vslint.db", fx.dir);
    if (db_open(fx.path, &fx.db, &msg) < 0)
        fatal_setup("db_open", msg);
    if (stmt_cache > 0)
        db_stmt_cache_size(fx.db, stmt_cache);
    atexit(teardown);
    fill_vcenter("vc1");
    fill_vcenter("vc2");

    const struct api_opts o = {.listen = "127.0.0.1:0",
                               .db_path = fx.path,
                               .token = TOKEN,
                               .max_connections = 16,
                               .timeout_s = 10,
                               .threads = 2,
                               .stmt_cache = stmt_cache};
    if ((r = api_start(&o, &hooks, &fx.srv, err, sizeof(err))) < 0)
        fatal_setup("api_start", err);
    if ((r = api_port(fx.srv)) <= 0)
        fatal_setup("api_port", NULL);
    fx.port = (unsigned short)r;
    fx.ready = 1;
}

int fuzz_send_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}
