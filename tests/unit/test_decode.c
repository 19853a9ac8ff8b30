/* Unit tests for the SOAP decoders, fed with responses captured from the simulator's
 * `violations` scenario (tests/unit/data/, made by capture.py). Each assertion is a fact the
 * scenario plants (tests/sim/scenario_violations.go), found in the rows the decoders emit. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

#include "util/buf.h"
#include "util/err.h"
#include "vsphere/decode.h"
#include "vsphere/session.h"
#include "vsphere/soap.h"
#include "vsphere/xml.h"

#define DATA SOURCE_ROOT "/tests/unit/data/"

static struct vsl_buf rows; /* one line per emitted row */

static void row(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void row(const char *fmt, ...)
{
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    assert_int_equal(vsl_buf_printf(&rows, "%s\n", line), 0);
}

#define S(x) ((x) ? (x) : "-")

static int r_ds(void *c, const struct vim_datastore *d)
{
    row("datastore %s name=%s type=%s capacity=%lld free=%lld uncommitted=%lld vmfs=%d vms=%d "
        "parent=%s",
        d->moref, d->name, S(d->type), (long long)d->capacity, (long long)d->free_space,
        (long long)d->uncommitted, d->vmfs_major, d->vm_count, S(d->parent));
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
    row("vm %s name=%s hw=%s template=%d power=%s ft=%s", v->moref, v->name, S(v->hw_version),
        v->template, S(v->power_state), S(v->ft_state));
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
static int r_hba(void *c, const struct vim_iscsi_hba *h)
{
    row("iscsi host=%s device=%s", h->host, h->device);
    return 0;
}
static int r_iopt(void *c, const struct vim_iscsi_option *o)
{
    row("iscsi-option host=%s hba=%s target=%s key=%s value=%s inherited=%d", o->host, o->hba,
        S(o->target), o->key, S(o->value), o->inherited);
    return 0;
}
static int r_lun(void *c, const struct vim_lun *l)
{
    row("lun host=%s name=%s local=%d psp=%s", l->host, l->canonical_name, l->local, S(l->psp));
    return 0;
}
static int r_path(void *c, const struct vim_lun_path *p)
{
    row("path host=%s lun=%s state=%s", p->host, p->lun, S(p->state));
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

static struct vim_sink sink = {
    .datastore = r_ds, .storage_pod = r_pod, .vm = r_vm, .controller = r_ctl, .vdisk = r_disk,
    .snapshot = r_snap, .host = r_host, .vnic = r_vnic, .vswitch = r_vswitch, .dvswitch = r_dvs,
    .iscsi_hba = r_hba, .iscsi_option = r_iopt, .lun = r_lun, .lun_path = r_path,
    .nmp_device = r_nmp, .satp_rule = r_satp,
};

struct feed {
    struct vim_decoder d;
    int (*decode)(struct vim_decoder *, const char *, xmlNode *);
};

static int on_elem(void *ctx, xmlNode *n)
{
    struct feed *f = ctx;
    if (!vim_name_is(n, "objects"))
        return 0;
    int r = f->decode(&f->d, vim_path_text(n, "obj"), n);
    return r < 0 ? r : 1;
}

static char *slurp(const char *name)
{
    char *s = NULL, path[512];
    snprintf(path, sizeof(path), DATA "%s", name);
    int r = vsl_read_file(path, 64u << 20, &s);
    if (r < 0)
        fail_msg("cannot read %s: %s", path, vsl_strerror(r));
    return s;
}

/* Decodes a captured RetrievePropertiesEx answer into rows. */
static void decode_file(const char *name, int (*decode)(struct vim_decoder *, const char *, xmlNode *))
{
    struct feed f = {.d = {.sink = &sink}, .decode = decode};
    struct vim_xml *x = NULL;
    char *text = slurp(name);
    int r = vim_xml_parse_all(text, strlen(text), 5, on_elem, &f, &x);
    if (r < 0)
        fail_msg("%s: %s", name, vim_xml_error(x));
    vim_xml_free(x);
    vim_decoder_free(&f.d);
    free(text);
}

/* Asserts a row starting with prefix exists and contains every fragment. */
static void want_row(const char *prefix, ...)
{
    va_list ap;
    const char *p = rows.data;
    while (p && (p = strstr(p, prefix))) {
        if (p != rows.data && p[-1] != '\n') {
            p++;
            continue;
        }
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        char line[2048];
        snprintf(line, sizeof(line), "%.*s", (int)len, p);
        int ok = 1;
        const char *frag;
        va_start(ap, prefix);
        while ((frag = va_arg(ap, const char *)))
            if (!strstr(line, frag))
                ok = 0;
        va_end(ap);
        if (ok)
            return;
        p += len;
    }
    fail_msg("no row '%s ...' with the wanted values", prefix);
}

/* The moref of the host or VM row whose name is name. */
static const char *moref_of(const char *kind, const char *name)
{
    static char buf[8][128];
    static int slot;
    char needle[256];
    snprintf(needle, sizeof(needle), " name=%s", name);
    for (const char *p = rows.data; p && *p;) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        if (!strncmp(p, kind, strlen(kind)) && p[strlen(kind)] == ' ') {
            const char *n = strstr(p, needle);
            if (n && n < p + len && (n[strlen(needle)] == ' ' || n[strlen(needle)] == '\n')) {
                char *b = buf[slot++ % 8];
                sscanf(p + strlen(kind) + 1, "%127s", b);
                return b;
            }
        }
        p = eol ? eol + 1 : NULL;
    }
    fail_msg("no %s named %s", kind, name);
    return NULL;
}

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
    static char buf[16][256];
    static int slot;
    char *b = buf[slot++ % 16];
    va_list ap;
    va_start(ap, f);
    vsnprintf(b, 256, f, ap);
    va_end(ap);
    return b;
}

#define GIB 1073741824LL

static void test_datastores(void **state)
{
    vsl_buf_reset(&rows);
    decode_file("datastore.xml", vim_decode_datastore);
    decode_file("storage_pod.xml", vim_decode_storage_pod);
    want_row("datastore ", "name=ds-free-warn ", "type=VMFS", fmt("capacity=%lld ", 600 * GIB),
             fmt("free=%lld ", 600 * GIB / 5), "vmfs=6", NULL);
    want_row("datastore ", "name=ds-size-huge ", fmt("capacity=%lld ", 70 * 1024 * GIB), NULL);
    want_row("datastore ", "name=ds-overcommit ", fmt("uncommitted=%lld ", 700 * GIB), NULL);
    want_row("datastore ", "name=ds-vmfs5 ", "vmfs=5", NULL);
    want_row("datastore ", "name=ds-crowded ", "vms=30 ", NULL);
    want_row("pod ", "name=pod-free-low ", fmt("capacity=%lld ", 1200 * GIB), NULL);
}

static void test_hosts(void **state)
{
    vsl_buf_reset(&rows);
    decode_file("host.xml", vim_decode_host);
    decode_file("dvswitch.xml", vim_decode_dvswitch);
    const char *a = moref_of("host", "esx-iscsi-a");
    const char *b = moref_of("host", "esx-iscsi-b");
    const char *san = moref_of("host", "esx-san-1");
    want_row(fmt("vnic host=%s device=vmk1 ", a), "mtu=1500", NULL);
    want_row(fmt("vswitch host=%s name=vSwitch-iscsi ", b), "mtu=1500", NULL);
    want_row(fmt("vnic host=%s device=vmk1 ", moref_of("host", "esx-iscsi-dvs")), "mtu=9000",
             "dvs=yes", NULL);
    want_row("dvs ", "name=dvs-iscsi ", "max_mtu=1500", NULL);
    want_row(fmt("iscsi host=%s device=vmhba64", a), NULL);
    /* Adapter-level DelayedAck on esx-iscsi-a, inherited by its targets. */
    want_row(fmt("iscsi-option host=%s hba=vmhba64 target=- key=DelayedAck ", a), "value=true",
             "inherited=0", NULL);
    want_row(fmt("iscsi-option host=%s hba=vmhba64 target=10.", a), "key=DelayedAck",
             "value=true", "inherited=1", NULL);
    /* esx-iscsi-b: adapter off, one send target explicitly on. */
    want_row(fmt("iscsi-option host=%s hba=vmhba64 target=- key=DelayedAck ", b), "value=false",
             NULL);
    want_row(fmt("iscsi-option host=%s hba=vmhba64 target=10.0.0.20:3260 key=DelayedAck ", b),
             "value=true", "inherited=0", NULL);
    want_row(fmt("lun host=%s name=naa.60060160a0b0000000000000000000a1 ", san), "local=0",
             "psp=VMW_PSP_MRU", NULL);
    want_row(fmt("lun host=%s name=sym.000192601234533031323334 ", san), NULL);
    want_row(fmt("path host=%s lun=naa.60060160a0b0000000000000000000a5 ", san), "state=dead",
             NULL);
}

static void test_vms(void **state)
{
    vsl_buf_reset(&rows);
    decode_file("vm.xml", vim_decode_vm);
    const char *ft = moref_of("vm", "vm-ft-lazy");
    want_row(fmt("vm %s ", ft), "ft=running", NULL);
    want_row(fmt("disk vm=%s ", ft), "format=lazyzeroedthick", NULL);
    want_row(fmt("disk vm=%s ", moref_of("vm", "vm-ft-eager")), "format=eagerzeroedthick", NULL);
    const char *mscs = moref_of("vm", "vm-mscs-thin");
    want_row(fmt("controller vm=%s ", mscs), "shared=physicalSharing", NULL);
    want_row(fmt("disk vm=%s ", mscs), "format=thin", NULL);
    want_row(fmt("vm %s ", moref_of("vm", "vm-reclaim-old")), "hw=vmx-10", NULL);
    want_row(fmt("controller vm=%s ", moref_of("vm", "vm-many-disks-lsi")),
             "type=VirtualLsiLogicController", NULL);
    want_row(fmt("disk vm=%s ", moref_of("vm", "vm-big-lsi")),
             fmt("capacity=%lld ", 800 * GIB), NULL);
    want_row(fmt("snapshot vm=%s ", moref_of("vm", "vm-snap-chain")), "depth=4", NULL);
    want_row(fmt("vm %s ", moref_of("vm", "tmpl-busy-01")), "template=1", NULL);
}

static void test_esxcli(void **state)
{
    vsl_buf_reset(&rows);
    char *doc = slurp("esxcli-nmp.xml");
    assert_int_equal(vim_decode_nmp_devices(&sink, "host-x", doc, strlen(doc)), 0);
    free(doc);
    want_row("nmp host=host-x device=naa.60060160a0b0000000000000000000a2 ", "iops=1000", NULL);
    want_row("nmp host=host-x device=naa.60060160a0b0000000000000000000a3 ", "iops=1", NULL);
}

/* esx-san-1's claim rules (scenario_violations.go, satp-claim-rule): its two user rules, then
 * the system rules, every one; fields esxcli leaves empty are NULL ("any", "none"). */
static void test_esxcli_satp_rules(void **state)
{
    static const char want[] =
        "satp host=host-x satp=VMW_SATP_ALUA vendor=DGC model=- psp=VMW_PSP_RR options=- "
        "group=user\n"
        "satp host=host-x satp=VMW_SATP_SYMM vendor=EMC model=SYMMETRIX psp=VMW_PSP_RR "
        "options=iops=1 group=user\n"
        "satp host=host-x satp=VMW_SATP_ALUA vendor=- model=- psp=VMW_PSP_MRU options=- "
        "group=system\n"
        "satp host=host-x satp=VMW_SATP_ALUA vendor=PURE model=FlashArray psp=VMW_PSP_RR "
        "options=iops=1 group=system\n"
        "satp host=host-x satp=VMW_SATP_ALUA_CX vendor=DGC model=- psp=- options=- "
        "group=system\n"
        "satp host=host-x satp=VMW_SATP_CX vendor=DGC model=- psp=- options=- group=system\n"
        "satp host=host-x satp=VMW_SATP_SYMM vendor=EMC model=SYMMETRIX psp=- options=- "
        "group=system\n"
        "satp host=host-x satp=VMW_SATP_DEFAULT_AA vendor=IBM model=^2810XIV* psp=VMW_PSP_RR "
        "options=- group=system\n"
        "satp host=host-x satp=VMW_SATP_DEFAULT_AA vendor=- model=- psp=- options=- "
        "group=system\n"
        "satp host=host-x satp=VMW_SATP_LOCAL vendor=- model=- psp=- options=- group=system\n";
    /* Blank fields are "any" too; a rule without a SATP name is no rule; a document that
     * does not parse is an error the collector turns into an esxcli gap. */
    static const char odd[] =
        "<obj xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" "
        "xsi:type=\"ArrayOfDataObject\"><DataObject><Name>VMW_SATP_X</Name><Vendor>  </Vendor>"
        "<PSPOptions>iops=1</PSPOptions></DataObject><DataObject><Name></Name>"
        "<DefaultPSP>VMW_PSP_RR</DefaultPSP></DataObject><DataObject/></obj>";
    char *doc = slurp("esxcli-satp-rules.xml");

    vsl_buf_reset(&rows);
    assert_int_equal(vim_decode_satp_rules(&sink, "host-x", doc, strlen(doc)), 0);
    assert_non_null(rows.data);
    assert_string_equal(rows.data, want);

    vsl_buf_reset(&rows);
    assert_int_equal(vim_decode_satp_rules(&sink, "host-y", odd, sizeof(odd) - 1), 0);
    assert_string_equal(rows.data, "satp host=host-y satp=VMW_SATP_X vendor=- model=- psp=- "
                                   "options=iops=1 group=-\n");

    vsl_buf_reset(&rows);
    assert_int_equal(vim_decode_satp_rules(&sink, "host-z", doc, strlen(doc) / 2), -VSL_EXML);
    free(doc);
}

static int r_hopt(void *c, const struct vim_host_option *o)
{
    row("option host=%s key=%s value=%s", o->host, o->key, S(o->value));
    return 0;
}
static int r_bind(void *c, const struct vim_iscsi_binding *b)
{
    row("binding host=%s hba=%s vnic=%s", b->host, b->hba, b->vnic);
    return 0;
}

/* The per-host follow-up answers: QueryOptions and QueryBoundVnics on esx-iscsi-a. */
static void test_host_followups(void **state)
{
    struct vim_sink s = {.host_option = r_hopt, .iscsi_binding = r_bind};
    struct vim_xml *x = NULL;
    char *text;

    vsl_buf_reset(&rows);
    text = slurp("query-options.xml");
    assert_int_equal(vim_xml_parse_all(text, strlen(text), 0, NULL, NULL, &x), 0);
    assert_int_equal(vim_decode_options(&s, "host-a", vim_response(x)), 0);
    vim_xml_free(x);
    free(text);
    text = slurp("bound-vnics.xml");
    assert_int_equal(vim_xml_parse_all(text, strlen(text), 0, NULL, NULL, &x), 0);
    assert_int_equal(vim_decode_bound_vnics(&s, "host-a", "vmhba64", vim_response(x)), 0);
    vim_xml_free(x);
    free(text);
    want_row("option host=host-a key=VMFS3.EnableBlockDelete ", "value=1", NULL);
    want_row("binding host=host-a hba=vmhba64 vnic=vmk1", NULL);
}

static void test_rr_iops(void **state)
{
    static const struct {
        const char *in;
        int want;
    } t[] = {
        {"{policy=rr,iops=1,bytes=10485760,useANO=0; lastPathIndex=1: NumIOsPending=0}", 1},
        {"{policy=rr,iops=1000,bytes=10485760,useANO=0;}", 1000},
        {"{policy=rr,bytes=10485760,useANO=0;}", VIM_UNKNOWN},
        {"{policy=rr,maxiops=5,iops=10}", 10}, /* "maxiops=" is another field */
        {"{policy=rr,iops=}", VIM_UNKNOWN},
        {"", VIM_UNKNOWN},
        {NULL, VIM_UNKNOWN},
    };
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
        assert_int_equal(vim_parse_rr_iops(t[i].in), t[i].want);
}

/* A response cut short, or broken in the middle, is an error with a line number; the rows
 * of objects before the break have already been handed over (the caller rolls back). */
static void test_malformed(void **state)
{
    char *text = slurp("datastore.xml");
    size_t len = strlen(text);
    struct feed f = {.d = {.sink = &sink}, .decode = vim_decode_datastore};
    struct vim_xml *x = NULL;

    assert_int_equal(vim_xml_parse_all(text, len / 2, 5, on_elem, &f, &x), -VSL_EXML);
    assert_non_null(strstr(vim_xml_error(x), "line "));
    vim_xml_free(x);

    char *bad = strdup(text);
    char *p = strstr(bad, "<propSet>");
    assert_non_null(p);
    memcpy(p, "<propSet<", 9);
    assert_int_equal(vim_xml_parse_all(bad, len, 5, on_elem, &f, &x), -VSL_EXML);
    vim_xml_free(x);
    vim_decoder_free(&f.d);
    free(bad);
    free(text);
}

/* xsi:type is matched by namespace URI: a server using another prefix decodes the same. */
static void test_xsi_prefix(void **state)
{
    static const char doc[] =
        "<r xmlns:q=\"http://www.w3.org/2001/XMLSchema-instance\" xmlns:z=\"urn:other\">"
        "<a q:type=\"vim25:HostInternetScsiHba\"/><b z:type=\"HostInternetScsiHba\"/></r>";
    struct vim_xml *x = NULL;
    char buf[64];
    assert_int_equal(vim_xml_parse_all(doc, sizeof(doc) - 1, 0, NULL, NULL, &x), 0);
    xmlNode *root = xmlDocGetRootElement(vim_xml_doc(x));
    assert_string_equal(vim_xsi_type(vim_child(root, "a"), buf, sizeof(buf)),
                        "HostInternetScsiHba");
    assert_null(vim_xsi_type(vim_child(root, "b"), buf, sizeof(buf)));
    vim_xml_free(x);
}

static void test_time(void **state)
{
    int64_t t;
    assert_int_equal(vim_parse_time("2026-11-29T19:14:44.737532903Z", &t), 0);
    assert_int_equal(t, 1795979684);
    assert_int_equal(vim_parse_time("2026-11-29T21:14:44+02:00", &t), 0);
    assert_int_equal(t, 1795979684);
    assert_int_equal(vim_parse_time("yesterday", &t), -EINVAL);
}

static int setup(void **state)
{
    vsl_buf_init(&rows, 64u << 20);
    return 0;
}

static int teardown(void **state)
{
    vsl_buf_free(&rows);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_datastores), cmocka_unit_test(test_hosts),
        cmocka_unit_test(test_vms),        cmocka_unit_test(test_esxcli),
        cmocka_unit_test(test_esxcli_satp_rules),
        cmocka_unit_test(test_rr_iops),    cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_host_followups),
        cmocka_unit_test(test_xsi_prefix), cmocka_unit_test(test_time),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
