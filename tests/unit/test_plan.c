/* Unit tests for the remediation plan (checks/plan.c): the findings of real checks over small
 * hand-built estates, and hand-written findings for the edges (waived, unverified, a
 * distributed switch, names that would break out of a quote or a comment), turned into esxcli
 * and PowerCLI scripts whose lines are asserted. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks/check.h"
#include "checks/engine.h"
#include "checks/plan.h"
#include "model/estate.h"
#include "testlib.h"

#define NOW ((int64_t)1750000000)

extern const struct check chk_multipath_policy, chk_space_reclaim, chk_datastore_free_space;

/* A finding as db_findings_query() gives it, from the engine's. */
static json_t *as_json(const struct chk_finding *f, const char *status)
{
    json_t *host = f->host_name ? json_pack("{s:s?, s:s}", "moref", f->host_moref, "name",
                                             f->host_name)
                                : json_null();
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:{s:s, s:s?, s:s}, s:o, s:s?, s:s, s:O, s:n}",
                     "fingerprint", f->fingerprint, "check", f->check->id, "severity",
                     vsl_severity_name(f->severity), "status", status, "vcenter", f->vcenter,
                     "object", "type", f->object_type, "moref", f->object_moref, "name",
                     f->object_name, "host", host, "detail", f->detail, "message", f->message,
                     "evidence", f->evidence, "unverified");
}

static void add_results(json_t *all, const struct chk_results *r)
{
    for (size_t i = 0; i < r->n; i++)
        assert_int_equal(json_array_append_new(all, as_json(&r->items[i], "open")), 0);
}

static char *plan_of(json_t *findings, enum chk_plan_format fmt)
{
    struct chk_plan_opts o = {.format = fmt, .generated_at = "2026-11-30T12:00:00Z"};
    char *text = NULL;
    size_t len = 0;

    assert_int_equal(chk_plan(findings, &o, &text, &len), 0);
    assert_non_null(text);
    assert_int_equal(strlen(text), len);
    return text;
}

/* Asserts that text holds line as a whole line (leading blanks ignored). */
static void has_line(const char *text, const char *line)
{
    for (const char *p = text; (p = strstr(p, line)); p++) {
        const char *start = p;
        while (start > text && start[-1] == ' ')
            start--;
        char end = p[strlen(line)];
        if ((start == text || start[-1] == '\n') && (end == '\n' || end == '\0'))
            return;
    }
    fail_msg("no line \"%s\" in:\n%s", line, text);
}

static size_t count(const char *text, const char *s)
{
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, s)); p += strlen(s))
        n++;
    return n;
}

#define FC(dev, t) TL_PATH(dev, TL_FC2, t, "active")

/* Two hosts: esx-b holds an MRU LUN and a Round Robin LUN at the default 1000 I/Os; both mount
 * a VMFS6 volume with automatic UNMAP off (its reclaim priority is set from esx-a, the first by
 * name); a datastore at 20 % free is a task. */
TEST(test_plan_from_real_findings)
{
    static struct est_path paths[] = {FC("vmhba2", 0), FC("vmhba2", 1)};
    struct est_lun luns[] = {
        {.canonical_name = "naa.600000000000000000000000000000a1", .vendor = "DGC", .model = "VRAID",
         .local = 0, .psp = "VMW_PSP_MRU", .satp = "VMW_SATP_ALUA", .multipath_plugin = "NMP",
         .iops_limit = EST_UNKNOWN, .paths = paths, .n_paths = 2},
        {.canonical_name = "naa.600000000000000000000000000000a2", .vendor = "DGC", .model = "VRAID",
         .local = 0, .psp = "VMW_PSP_RR", .satp = "VMW_SATP_ALUA", .multipath_plugin = "NMP",
         .iops_limit = 1000, .psp_config = "{policy=rr,iops=1000}", .paths = paths, .n_paths = 2},
    };
    struct est_host hosts[] = {
        {.moref = "host-9", .name = "esx-b", .connection_state = "connected",
         .enable_block_delete = 1, .hbas = tl_hbas, .n_hbas = N(tl_hbas), .luns = luns,
         .n_luns = N(luns)},
        {.moref = "host-10", .name = "esx-a", .connection_state = "connected",
         .enable_block_delete = 1},
    };
    struct est_mount mounts[] = {{.host = 0, .mounted = 1, .accessible = 1},
                                 {.host = 1, .mounted = 1, .accessible = 1}};
    struct est_extent ext = {.disk_name = "naa.600000000000000000000000000000a2", .partition = 1};
    struct est_datastore ds[] = {
        {.moref = "datastore-1", .name = "ds-unmap-off", .type = "VMFS", .capacity = 600LL << 30,
         .free_space = 300LL << 30, .uncommitted = 0, .accessible = 1, .vmfs_major = 6,
         .vmfs_local = 0, .unmap_priority = "none", .pod = EST_NONE, .extents = &ext,
         .n_extents = 1, .mounts = mounts, .n_mounts = 2},
        {.moref = "datastore-2", .name = "ds-full", .type = "NFS", .capacity = 600LL << 30,
         .free_space = 120LL << 30, .uncommitted = 0, .accessible = 1, .pod = EST_NONE},
    };
    struct estate e = {.vcenter = "vc", .hosts = hosts, .n_hosts = N(hosts), .datastores = ds,
                       .n_datastores = N(ds)};
    json_t *all = json_array();
    const struct check *checks[] = {&chk_multipath_policy, &chk_space_reclaim,
                                    &chk_datastore_free_space};

    for (size_t i = 0; i < N(checks); i++) {
        struct chk_results r = tl_run(checks[i], NULL, &e, NOW);
        add_results(all, &r);
        chk_results_free(&r);
    }
    assert_int_equal(json_array_size(all), 4);

    char *text = plan_of(all, CHK_PLAN_ESXCLI);
    has_line(text, "# the plan twice is safe. Steps: 4 on 2 host(s); tasks for a person: 1.");
    /* Hosts by name: esx-a first, with the volume's step. */
    const char *a = strstr(text, "# ==== Host esx-a (vCenter vc): 1 step(s) ====");
    const char *b = strstr(text, "# ==== Host esx-b (vCenter vc): 3 step(s) ====");
    assert_non_null(a);
    assert_non_null(b);
    assert_true(a < b);
    has_line(text, "esxcli storage vmfs reclaim config set --volume-label=ds-unmap-off "
                   "--reclaim-priority=low");
    assert_true(strstr(text, "--volume-label=ds-unmap-off --reclaim") < b);
    /* The policy before its IOPS limit; the LUN already on Round Robin only gets the limit. */
    const char *psp = strstr(text, "esxcli storage nmp device set "
                                   "--device=naa.600000000000000000000000000000a1 "
                                   "--psp=VMW_PSP_RR");
    const char *iops = strstr(text, "esxcli storage nmp psp roundrobin deviceconfig set "
                                    "--device=naa.600000000000000000000000000000a1 --type=iops "
                                    "--iops=1");
    assert_non_null(psp);
    assert_non_null(iops);
    assert_true(psp < iops);
    assert_int_equal(count(text, "device set --device=naa.600000000000000000000000000000a2"), 0);
    has_line(text, "esxcli storage nmp psp roundrobin deviceconfig set "
                   "--device=naa.600000000000000000000000000000a2 --type=iops --iops=1");
    /* Each change is read first. */
    has_line(text, "current=$(esxcli --formatter=keyvalue storage nmp device list "
                   "--device=naa.600000000000000000000000000000a1 | vsl_kv "
                   "Device=naa.600000000000000000000000000000a1 PathSelectionPolicy)");
    has_line(text, "if [ \"$current\" = 'Iops 1' ]; then");
    assert_int_equal(count(text, "\n    vsl_do "), 4);
    assert_int_equal(count(text, "\n    vsl_ok "), 4);
    /* The finding each step fixes, and its source. */
    assert_int_equal(count(text, "# Fixes multipath-policy finding "), 3);
    assert_int_equal(count(text, "#   Source: 000_5bd48962a767ee9e.txt §3.3; "
                                 "001_7ad49caae9099bf2.txt; 004_f5959e3b697954a0.txt"),
                     3);
    /* The full datastore is a task, in a comment. */
    const char *tasks = strstr(text, "# ==== Tasks for a person (1)");
    assert_non_null(tasks);
    assert_non_null(strstr(tasks, "\n# 1. [warning] datastore-free-space: datastore ds-full"));
    assert_null(strstr(text, "ds-full'"));
    free(text);

    text = plan_of(all, CHK_PLAN_POWERCLI);
    has_line(text, "$vmhost = Get-VMHost -Name 'esx-a' -ErrorAction SilentlyContinue");
    has_line(text, "$null = $esxcli.storage.nmp.device.set.Invoke(@{device = "
                   "'naa.600000000000000000000000000000a1'; psp = 'VMW_PSP_RR'})");
    has_line(text, "$null = $esxcli.storage.nmp.psp.roundrobin.deviceconfig.set.Invoke(@{device "
                   "= 'naa.600000000000000000000000000000a2'; type = 'iops'; iops = 1})");
    has_line(text, "$null = $esxcli.storage.vmfs.reclaim.config.set.Invoke(@{volumelabel = "
                   "'ds-unmap-off'; reclaimpriority = 'low'})");
    assert_int_equal(count(text, "Get-EsxCli -VMHost $vmhost -V2"), 2);
    assert_int_equal(count(text, "    } catch {\n"), 4);
    free(text);
    json_decref(all);
}

/* ---- hand-written findings: what is planned, and how ---- */

static json_t *finding(const char *check, const char *status, const char *type, const char *name,
                       const char *host, const char *evidence)
{
    json_error_t err;
    json_t *ev = json_loads(evidence, 0, &err);

    if (!ev)
        fail_msg("evidence %s: %s", evidence, err.text);
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:{s:s, s:n, s:s}, s:o, s:s, s:o, s:n}",
                     "fingerprint", "00000000000000aa", "check", check, "severity", "warning",
                     "status", status, "vcenter", "vc", "object", "type", type, "moref", "name",
                     name, "host",
                     host ? json_pack("{s:s, s:s}", "moref", "host-1", "name", host) : json_null(),
                     "message", "the message", "evidence", ev, "unverified");
}

static const struct plan_row {
    const char *what, *check, *status, *type, *name, *host, *evidence;
    const char *want_line; /* a line of the esxcli plan, or NULL: a task */
} rows[] = {
    {"delayed ack on the adapter", "iscsi-delayed-ack", "open", "iscsi_hba", "vmhba64", "esx",
     "{\"adapter\": \"vmhba64\"}",
     "esxcli iscsi adapter param set --adapter=vmhba64 --key=DelayedAck --value=false"},
    {"a send target and a static target it found", "iscsi-delayed-ack", "open", "iscsi_target",
     "vmhba64 10.0.0.20:3260", "esx",
     "{\"adapter\": \"vmhba64\", \"target\": \"10.0.0.20:3260\", \"targets\": ["
     "{\"kind\": \"static\", \"iscsi_name\": \"iqn.2001-05.com.array:vol1\"},"
     "{\"kind\": \"send\"}]}",
     "esxcli iscsi adapter target portal param set --adapter=vmhba64 --address=10.0.0.20:3260 "
     "--name=iqn.2001-05.com.array:vol1 --key=DelayedAck --value=false"},
    {"a static target without an IQN", "iscsi-delayed-ack", "open", "iscsi_target",
     "vmhba64 10.0.0.21:3260", "esx",
     "{\"adapter\": \"vmhba64\", \"target\": \"10.0.0.21:3260\", \"targets\": ["
     "{\"kind\": \"static\"}]}",
     NULL},
    {"a vmknic on a vSwitch", "iscsi-jumbo-frames", "open", "vmknic", "vmk1", "esx",
     "{\"vmknic\": \"vmk1\", \"vmknic_mtu\": 1500, \"required_mtu\": 9000, \"switch_type\": "
     "\"vswitch\", \"switch_name\": \"vSwitch1\", \"switch_mtu\": 1500, "
     "\"vmknic_below_required\": true}",
     "esxcli network ip interface set --interface-name=vmk1 --mtu=9000"},
    {"a vmknic on a distributed switch below 9000", "iscsi-jumbo-frames", "open", "vmknic",
     "vmk2", "esx",
     "{\"vmknic\": \"vmk2\", \"vmknic_mtu\": 9000, \"required_mtu\": 9000, \"switch_type\": "
     "\"dvs\", \"switch_name\": \"dvs-1\", \"switch_mtu\": 1500, "
     "\"vmknic_below_required\": false}",
     NULL},
    {"a vmknic on a distributed switch at 9000", "iscsi-jumbo-frames", "open", "vmknic", "vmk3",
     "esx",
     "{\"vmknic\": \"vmk3\", \"vmknic_mtu\": 1500, \"required_mtu\": 9000, \"switch_type\": "
     "\"dvs\", \"switch_name\": \"dvs-2\", \"switch_mtu\": 9000, "
     "\"vmknic_below_required\": true}",
     "esxcli network ip interface set --interface-name=vmk3 --mtu=9000"},
    {"EnableBlockDelete", "space-reclaim", "open", "host", "esx", "esx",
     "{\"enable_block_delete\": 0}",
     "esxcli system settings advanced set --option=/VMFS3/EnableBlockDelete --int-value=1"},
    {"a VM's hardware version", "space-reclaim", "open", "vm", "vm-old", NULL,
     "{\"hw_version\": 10}", NULL},
    {"a VMFS6 volume no host mounts", "space-reclaim", "open", "datastore", "ds-orphan", NULL,
     "{\"unmap_priority\": \"none\", \"mounted_by\": []}", NULL},
    {"a claim rule without a vendor", "satp-claim-rule", "open", "host", "esx", "esx",
     "{\"satp\": \"VMW_SATP_DEFAULT_AA\", \"models\": [\"\"], \"recommended_iops\": 1}",
     "esxcli storage nmp satp rule add -s VMW_SATP_DEFAULT_AA -P VMW_PSP_RR -O iops=1"},
    {"a claim rule with an IOPS limit of 10", "satp-claim-rule", "open", "host", "esx", "esx",
     "{\"satp\": \"VMW_SATP_SYMM\", \"vendor\": \"EMC\", \"models\": [\"SYMMETRIX\"], "
     "\"recommended_iops\": 10}",
     "esxcli storage nmp satp rule add -s VMW_SATP_SYMM -V EMC -M SYMMETRIX -P VMW_PSP_RR -O "
     "iops=10"},
    {"snapshots", "snapshots", "open", "vm", "vm-snap", NULL, "{}", NULL},
    {"a check vslint no longer has", "old-check", "open", "host", "esx", "esx", "{}", NULL},
};

TEST(test_each_finding_alone)
{
    for (size_t i = 0; i < N(rows); i++) {
        const struct plan_row *r = &rows[i];
        json_t *all = json_array();
        json_array_append_new(all, finding(r->check, r->status, r->type, r->name, r->host,
                                           r->evidence));
        char *text = plan_of(all, CHK_PLAN_ESXCLI);
        if (r->want_line) {
            has_line(text, r->want_line);
            assert_non_null(strstr(text, "tasks for a person: 0."));
        } else {
            if (!strstr(text, "Steps: 0 on 0 host(s); tasks for a person: 1."))
                fail_msg("%s: not a task:\n%s", r->what, text);
            assert_int_equal(count(text, "\n    vsl_do "), 0);
        }
        free(text);
        json_decref(all);
    }
}

TEST(test_send_target_before_static_targets)
{
    json_t *all = json_array();
    json_array_append_new(all, finding("iscsi-delayed-ack", "open", "iscsi_target", "t", "esx",
                                       rows[1].evidence));
    char *text = plan_of(all, CHK_PLAN_ESXCLI);
    const char *send = strstr(text, "esxcli iscsi adapter discovery sendtarget param set "
                                    "--adapter=vmhba64 --address=10.0.0.20:3260 "
                                    "--key=DelayedAck --value=false");
    const char *stat = strstr(text, "esxcli iscsi adapter target portal param set");
    assert_non_null(send);
    assert_non_null(stat);
    assert_true(send < stat);
    free(text);
    json_decref(all);
}

TEST(test_waived_and_unverified_are_not_planned)
{
    json_t *all = json_array();
    json_t *unverified = finding("space-reclaim", "open", "host", "esx-u", "esx-u", "{}");
    json_object_set_new(unverified, "unverified",
                        json_pack("{s:s, s:s}", "since", "2026-11-30T00:00:00Z", "reason", "r"));
    json_array_append_new(all, unverified);
    json_array_append_new(all, finding("space-reclaim", "waived", "host", "esx-w", "esx-w", "{}"));
    json_array_append_new(all, finding("snapshots", "resolved", "vm", "vm-gone", NULL, "{}"));
    char *text = plan_of(all, CHK_PLAN_ESXCLI);
    has_line(text, "# the plan twice is safe. Steps: 0 on 0 host(s); tasks for a person: 0.");
    has_line(text, "# Not planned: 1 waived finding(s) and 1 unverified one(s) (the last poll");
    assert_null(strstr(text, "esx-u"));
    assert_null(strstr(text, "vm-gone"));
    free(text);
    json_decref(all);
}

/* Two vmknics on one vSwitch: one vSwitch step, which names both findings. */
TEST(test_one_step_per_setting)
{
    json_t *all = json_array();
    for (int i = 1; i <= 2; i++) {
        char ev[512];
        snprintf(ev, sizeof(ev),
                 "{\"vmknic\": \"vmk%d\", \"vmknic_mtu\": 9000, \"required_mtu\": 9000, "
                 "\"switch_type\": \"vswitch\", \"switch_name\": \"vSwitch1\", \"switch_mtu\": "
                 "1500, \"vmknic_below_required\": false}",
                 i);
        json_array_append_new(all, finding("iscsi-jumbo-frames", "open", "vmknic", "vmk", "esx",
                                           ev));
    }
    char *text = plan_of(all, CHK_PLAN_ESXCLI);
    assert_int_equal(count(text, "esxcli network vswitch standard set --vswitch-name=vSwitch1 "
                                 "--mtu=9000"),
                     1);
    assert_int_equal(count(text, "# Fixes iscsi-jumbo-frames finding"), 2);
    assert_int_equal(count(text, "esxcli network ip interface set"), 0);
    free(text);
    json_decref(all);
}

/* A name from vCenter never ends a comment or a quote: a newline in a comment becomes a blank,
 * a quote is escaped as sh and PowerShell want (PowerShell also takes U+2019 for a quote). */
TEST(test_names_stay_in_their_quotes)
{
    static const char name[] = "ds 'Q3' \xe2\x80\x99x\n$(reboot)";
    json_t *all = json_array();
    json_t *f = finding("space-reclaim", "open", "datastore", name, NULL,
                        "{\"unmap_priority\": \"none\", \"mounted_by\": [\"esx\\nrm -rf /\"]}");
    json_object_set_new(f, "message", json_string("line one\nreboot"));
    json_array_append_new(all, f);

    char *text = plan_of(all, CHK_PLAN_ESXCLI);
    has_line(text, "esxcli storage vmfs reclaim config set --volume-label='ds '\\''Q3'\\'' "
                   "\xe2\x80\x99x\n$(reboot)' --reclaim-priority=low");
    has_line(text, "# ==== Host esx rm -rf / (vCenter vc): 1 step(s) ====");
    has_line(text, "#   line one reboot");
    /* The message's newline became a blank: no line starts with its second line. */
    assert_null(strstr(text, "\nreboot"));
    free(text);

    text = plan_of(all, CHK_PLAN_POWERCLI);
    has_line(text, "$rec = @($esxcli.storage.vmfs.reclaim.config.get.Invoke(@{volumelabel = 'ds "
                   "''Q3'' \xe2\x80\x99\xe2\x80\x99x\n$(reboot)'}))");
    free(text);
    json_decref(all);
}

TEST(test_an_empty_plan)
{
    json_t *all = json_array();
    char *text = plan_of(all, CHK_PLAN_ESXCLI);
    has_line(text, "# the plan twice is safe. Steps: 0 on 0 host(s); tasks for a person: 0.");
    has_line(text, "        echo 'vslint plan: name the host to run on; hosts with steps:'");
    free(text);
    text = plan_of(all, CHK_PLAN_POWERCLI);
    has_line(text, "if ($failed -gt 0) { exit 1 }");
    free(text);
    json_decref(all);
}

TEST(test_format_names)
{
    enum chk_plan_format f;
    assert_int_equal(chk_plan_format_parse("esxcli", &f), 0);
    assert_int_equal(f, CHK_PLAN_ESXCLI);
    assert_int_equal(chk_plan_format_parse("powercli", &f), 0);
    assert_int_equal(f, CHK_PLAN_POWERCLI);
    assert_int_not_equal(chk_plan_format_parse("bash", &f), 0);
    assert_int_not_equal(chk_plan_format_parse(NULL, &f), 0);
}

int main(void)
{
    return tl_main();
}
