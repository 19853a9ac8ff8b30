/* Helpers the unit tests share (testlib.h): running a check and reading its findings, a
 * temporary database filled through a snapshot sink, decoded rows as text, and captured
 * simulator answers decoded. Failures end the running cmocka test. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib.h"
#include "util/buf.h"
#include "util/err.h"
#include "vsphere/xml.h"

/* ---- checks ---- */

struct est_hba tl_hbas[TL_N_HBAS] = {
    [TL_RAID0] = {"vmhba0", "HostParallelScsiHba", "pvscsi", NULL},
    [TL_FC2] = {"vmhba2", "HostFibreChannelHba", "qlnativefc", NULL},
    [TL_FC3] = {"vmhba3", "HostFibreChannelHba", "qlnativefc", NULL},
    [TL_SAS4] = {"vmhba4", "HostSerialAttachedHba", "lsi_msgpt3", NULL},
    [TL_NVME5] = {"vmhba5", "HostPcieHba", "nvme_pcie", NULL},
    [TL_RDMA6] = {"vmhba6", "HostRdmaHba", "nvmerdma", NULL},
    [TL_RDMA7] = {"vmhba7", "HostRdmaHba", "nvmerdma", NULL},
    [TL_SAS8] = {"vmhba8", "HostSerialAttachedHba", "lsi_msgpt3", NULL},
    [TL_LPFC10] = {"vmhba10", "HostFibreChannelHba", "lpfc", NULL},
    [TL_LPFC11] = {"vmhba11", "HostFibreChannelHba", "lpfc", NULL},
    [TL_SWISCSI] = {"vmhba64", "HostInternetScsiHba", "iscsi_vmk", NULL},
    [TL_HWISCSI] = {"vmhba65", "HostInternetScsiHba", "bnx2i", NULL},
};

struct est_path tl_paths_fc[2] = {TL_PATH("vmhba2", TL_FC2, 0, "active"),
                                  TL_PATH("vmhba3", TL_FC3, 0, "active")};
struct est_path tl_paths_sas[2] = {TL_PATH("vmhba4", TL_SAS4, 0, "active"),
                                   TL_PATH("vmhba8", TL_SAS8, 0, "active")};

struct chk_results tl_run(const struct check *c, const struct chk_settings *s,
                          const struct estate *e, int64_t now)
{
    struct chk_results r = {0};
    assert_int_equal(chk_run_one(c, s, e, now, &r), 0);
    return r;
}

struct chk_results tl_run_with(const struct check *c, const char *name, double value,
                               const struct estate *e, int64_t now)
{
    struct chk_settings s = tl_with_param(c, name, value);
    return tl_run(c, &s, e, now);
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

const char *tl_ev_item(const struct chk_finding *f, const char *key, size_t i, const char *field)
{
    json_t *v = json_array_get(json_object_get(f->evidence, key), i);

    return json_string_value(field ? json_object_get(v, field) : v);
}

void tl_want_table(const struct chk_results *r, const struct tl_want_row *want, size_t n,
                   const char *type, const char *ev_key)
{
    size_t flagged = 0;

    for (size_t i = 0; i < n; i++) {
        tl_want(r, want[i].name, want[i].sev);
        if (want[i].sev == NONE)
            continue;
        flagged++;
        const struct chk_finding *f = tl_find(r, want[i].name, NULL);
        if (type)
            assert_string_equal(f->object_type, type);
        if (ev_key && want[i].ev)
            assert_string_equal(tl_ev_str(f, ev_key), want[i].ev);
    }
    assert_int_equal(r->n, flagged);
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

size_t tl_want_each_in(const struct chk_results *r, const void *rows, size_t n, size_t size,
                       size_t name_offset, size_t want_offset)
{
    size_t wanted = 0;

    for (size_t i = 0; i < n; i++) {
        const char *row = (const char *)rows + i * size;
        const int want = *(const int *)(row + want_offset);
        tl_want(r, *(const char *const *)(row + name_offset), want);
        wanted += want != NONE;
    }
    return wanted;
}

void tl_want_unverified(const struct chk_results *r, const char *moref)
{
    for (size_t i = 0; i < r->n_unverified; i++)
        if (r->unverified[i].moref && !strcmp(r->unverified[i].moref, moref))
            return;
    fail_msg("%s is not kept unverified", moref);
}

struct chk_settings tl_with_param(const struct check *c, const char *name, double value)
{
    struct chk_settings s;
    chk_settings_default(c, &s);
    tl_set_param(c, &s, name, value);
    return s;
}

const void *tl_find_in(const void *a, size_t n, size_t size, size_t offset, const char *key,
                       const char *what)
{
    for (size_t i = 0; i < n; i++) {
        const char *item = (const char *)a + i * size;
        const char *value = *(const char *const *)(item + offset);
        if (value && !strcmp(value, key))
            return item;
    }
    fail_msg("no %s %s", what, key);
    return NULL;
}

void tl_row(struct vsl_buf *rows, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = vsl_buf_vprintf(rows, fmt, ap);
    va_end(ap);
    assert_int_equal(r, 0);
    assert_int_equal(vsl_buf_addstr(rows, "\n"), 0);
}

/* ---- tests that register themselves ---- */

#define TL_MAX_TESTS 64

static struct tl_test {
    struct CMUnitTest test;
    int line;
} tl_tests[TL_MAX_TESTS];
static size_t tl_n_tests;

void tl_register(const char *name, void (*test)(void **state), int (*setup)(void **state),
                 int (*teardown)(void **state), int line)
{
    /* Before main(): no cmocka test to fail yet. */
    if (tl_n_tests == TL_MAX_TESTS) {
        fprintf(stderr, "testlib: more than %d tests in one file\n", TL_MAX_TESTS);
        abort();
    }
    tl_tests[tl_n_tests++] = (struct tl_test){
        {.name = name, .test_func = test, .setup_func = setup, .teardown_func = teardown}, line};
}

static int by_line(const void *a, const void *b)
{
    const struct tl_test *x = a, *y = b;
    return (x->line > y->line) - (x->line < y->line);
}

int tl_main(void)
{
    struct CMUnitTest tests[TL_MAX_TESTS];

    /* Constructors run in an order the linker chooses: the file's order is the line's. */
    qsort(tl_tests, tl_n_tests, sizeof(tl_tests[0]), by_line);
    for (size_t i = 0; i < tl_n_tests; i++)
        tests[i] = tl_tests[i].test;
    /* The group's name as cmocka_run_group_tests(tests, ...) gives it. */
    return _cmocka_run_group_tests("tests", tests, tl_n_tests, NULL, NULL);
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

const struct vim_datastore tl_ds_nfs01 = {.moref = "datastore-2",
                                          .name = "nfs01",
                                          .type = "NFS",
                                          .url = "ds:///nfs/2/",
                                          .parent = "group-s4",
                                          .capacity = 1024LL << 30,
                                          .free_space = 800LL << 30,
                                          .uncommitted = 10LL << 30,
                                          .accessible = 0,
                                          .maintenance_mode = "normal",
                                          .vmfs_major = 0,
                                          .nas_remote_host = "filer01",
                                          .vm_count = 0,
                                          .vmfs_local = VIM_UNKNOWN,
                                          .vmfs_ssd = VIM_UNKNOWN};

void tl_fill_host10_san(const struct vim_sink *s)
{
    void *c = s->ctx;

    const struct vim_iscsi_option o_hba = {"host-10",    "vmhba64", NULL, NULL,
                                           "DelayedAck", "false",   0,    NULL};
    const struct vim_iscsi_option o_t1 = {"host-10",    "vmhba64", "send", "10.0.0.1:3260",
                                          "DelayedAck", "false",   1,      NULL};
    const struct vim_iscsi_option o_t2 = {"host-10",    "vmhba64", "static", "10.0.0.2:3260",
                                          "DelayedAck", "true",    0,
                                          "iqn.2001-05.com.array:tgt1"};
    assert_int_equal(s->iscsi_option(c, &o_hba), 0);
    assert_int_equal(s->iscsi_option(c, &o_t1), 0);
    assert_int_equal(s->iscsi_option(c, &o_t2), 0);
    const struct vim_lun_path p1 = {"host-10", "naa.600a0001", "vmhba64:C0:T0:L1", "active",
                                    "vmhba64", NULL, NULL, NULL};
    const struct vim_lun_path p2 = {"host-10", "naa.600a0001", "vmhba64:C1:T0:L1", "dead",
                                    "vmhba64", NULL, NULL, NULL};
    const struct vim_lun_path p3 = {"host-10", "naa.600a0002", "vmhba64:C0:T0:L2", "active",
                                    "vmhba64", NULL, NULL, NULL};
    assert_int_equal(s->lun_path(c, &p1), 0);
    assert_int_equal(s->lun_path(c, &p2), 0);
    assert_int_equal(s->lun_path(c, &p3), 0);
    const struct vim_nmp_device n1 = {"host-10", "naa.600a0001", "VMW_PSP_RR",
                                      "{policy=rr,iops=1,bytes=10485760,useANO=0;}", 1};
    const struct vim_nmp_device n2 = {"host-10", "naa.600a0002", "VMW_PSP_MRU", NULL, VIM_UNKNOWN};
    assert_int_equal(s->nmp_device(c, &n1), 0);
    assert_int_equal(s->nmp_device(c, &n2), 0);
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

int64_t tl_db_count(const char *path, const char *sql)
{
    sqlite3 *h = NULL;
    sqlite3_stmt *st = NULL;
    int64_t n = -1;

    assert_int_equal(sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK);
    if (sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(h);
    return n;
}

/* ---- decoded rows as text ---- */

#define row(...) tl_row(c, __VA_ARGS__)
#define S(x) ((x) ? (x) : "-")

static int r_ds(void *c, const struct vim_datastore *d)
{
    row("datastore %s name=%s type=%s capacity=%lld free=%lld uncommitted=%lld vmfs=%d vms=%d "
        "parent=%s version=%s local=%d ssd=%d unmap=%s",
        d->moref, d->name, S(d->type), (long long)d->capacity, (long long)d->free_space,
        (long long)d->uncommitted, d->vmfs_major, d->vm_count, S(d->parent), S(d->vmfs_version),
        d->vmfs_local, d->vmfs_ssd, S(d->unmap_priority));
    return 0;
}
static int r_extent(void *c, const struct vim_datastore_extent *x)
{
    row("extent ds=%s pos=%d disk=%s partition=%d", x->datastore, x->position, S(x->disk_name),
        x->partition);
    return 0;
}
static int r_mount(void *c, const struct vim_datastore_host *m)
{
    row("mount ds=%s host=%s mounted=%d accessible=%d mode=%s", m->datastore, m->host, m->mounted,
        m->accessible, S(m->access_mode));
    return 0;
}
static int r_pod(void *c, const struct vim_storage_pod *p)
{
    row("pod %s name=%s capacity=%lld free=%lld", p->moref, p->name, (long long)p->capacity,
        (long long)p->free_space);
    return 0;
}
static int r_vm(void *c, const struct vim_vm *v)
{
    row("vm %s name=%s hw=%s template=%d power=%s ft=%s path=%s", v->moref, v->name,
        S(v->hw_version), v->template, S(v->power_state), S(v->ft_state), S(v->vm_path_name));
    return 0;
}
static int r_vmds(void *c, const struct vim_vm_datastore *v)
{
    row("vmds vm=%s ds=%s", v->vm, v->datastore);
    return 0;
}
static int r_ctl(void *c, const struct vim_controller *x)
{
    row("controller vm=%s key=%d type=%s shared=%s", x->vm, x->key, x->type, S(x->shared_bus));
    return 0;
}
static int r_disk(void *c, const struct vim_vdisk *x)
{
    row("disk vm=%s key=%d capacity=%lld format=%s controller=%d", x->vm, x->key,
        (long long)x->capacity_bytes, x->format, x->controller_key);
    return 0;
}
static int r_snap(void *c, const struct vim_snapshot *s)
{
    row("snapshot vm=%s name=%s depth=%d created=%lld", s->vm, S(s->name), s->depth,
        (long long)s->created);
    return 0;
}
static int r_host(void *c, const struct vim_host *h)
{
    row("host %s name=%s", h->moref, h->name);
    return 0;
}
static int r_vnic(void *c, const struct vim_vnic *v)
{
    row("vnic host=%s device=%s mtu=%d portgroup=%s dvs=%s", v->host, v->device, v->mtu,
        S(v->portgroup), v->dvs_uuid ? "yes" : "no");
    return 0;
}
static int r_vswitch(void *c, const struct vim_vswitch *v)
{
    row("vswitch host=%s name=%s mtu=%d", v->host, v->name, v->mtu);
    return 0;
}
static int r_dvs(void *c, const struct vim_dvswitch *d)
{
    row("dvs %s name=%s max_mtu=%d", d->moref, d->name, d->max_mtu);
    return 0;
}
static int r_any_hba(void *c, const struct vim_hba *h)
{
    row("hba host=%s device=%s type=%s driver=%s", h->host, h->device, S(h->type), S(h->driver));
    return 0;
}
static int r_target(void *c, const struct vim_iscsi_target *t)
{
    row("target host=%s hba=%s kind=%s address=%s:%d iqn=%s method=%s parent=%s", t->host, t->hba,
        t->kind, t->address, t->port, S(t->iscsi_name), S(t->discovery_method), S(t->parent));
    return 0;
}
static int r_hba(void *c, const struct vim_iscsi_hba *h)
{
    row("iscsi host=%s device=%s", h->host, h->device);
    return 0;
}
static int r_iopt(void *c, const struct vim_iscsi_option *o)
{
    row("iscsi-option host=%s hba=%s target=%s key=%s value=%s inherited=%d iqn=%s", o->host,
        o->hba, S(o->target), o->key, S(o->value), o->inherited, S(o->target_iqn));
    return 0;
}
static int r_lun(void *c, const struct vim_lun *l)
{
    row("lun host=%s name=%s local=%d psp=%s satp=%s type=%s plugin=%s", l->host,
        l->canonical_name, l->local, S(l->psp), S(l->satp), S(l->policy_type),
        S(l->multipath_plugin));
    return 0;
}
static int r_path(void *c, const struct vim_lun_path *p)
{
    row("path host=%s lun=%s state=%s adapter=%s name=%s", p->host, p->lun, S(p->state),
        S(p->adapter), p->name);
    return 0;
}
static int r_nmp(void *c, const struct vim_nmp_device *n)
{
    row("nmp host=%s device=%s iops=%d", n->host, n->device, n->iops);
    return 0;
}
static int r_satp(void *c, const struct vim_satp_rule *r)
{
    row("satp host=%s satp=%s vendor=%s model=%s psp=%s options=%s group=%s", r->host, r->satp,
        S(r->vendor), S(r->model), S(r->psp), S(r->psp_options), S(r->rule_group));
    return 0;
}
static int r_entity(void *c, const struct vim_entity *e)
{
    row("entity %s name=%s parent=%s", e->type, S(e->name), S(e->parent));
    return 0;
}
static int r_alarm(void *c, const struct vim_alarm *a)
{
    row("alarm %s enabled=%d system=%s on=%s", S(a->name), a->enabled, S(a->system_name),
        S(a->entity_type));
    return 0;
}
static int r_metric(void *c, const struct vim_alarm_metric *m)
{
    row("metric pos=%d type=%s counter=%d op=%s yellow=%d red=%d", m->pos, S(m->object_type),
        m->counter_id, S(m->op), m->yellow, m->red);
    return 0;
}
static int r_counter(void *c, const struct vim_perf_counter *p)
{
    row("counter %d %s unit=%s", p->key, p->name, S(p->unit));
    return 0;
}

struct vim_sink tl_text_sink(struct vsl_buf *rows)
{
    return (struct vim_sink){
        .ctx = rows,
        .datastore = r_ds, .datastore_extent = r_extent, .datastore_host = r_mount,
        .vm_datastore = r_vmds, .hba = r_any_hba, .iscsi_target = r_target,
        .storage_pod = r_pod, .vm = r_vm, .controller = r_ctl, .vdisk = r_disk,
        .snapshot = r_snap, .host = r_host, .vnic = r_vnic, .vswitch = r_vswitch, .dvswitch = r_dvs,
        .iscsi_hba = r_hba, .iscsi_option = r_iopt, .lun = r_lun, .lun_path = r_path,
        .nmp_device = r_nmp, .satp_rule = r_satp,
        .entity = r_entity, .alarm = r_alarm, .alarm_metric = r_metric, .perf_counter = r_counter,
    };
}

#undef row
#undef S

/* ---- captured simulator answers ---- */

int tl_feed_objects(void *ctx, struct vim_node *node)
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
