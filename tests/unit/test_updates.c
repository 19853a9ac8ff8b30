/* Unit tests for incremental polling: the UpdateSet of a WaitForUpdatesEx answer decoded into
 * changed objects (tests/unit/data/update-set.xml, in the simulator's spelling), and one
 * object's rows replaced in the store without touching the others (db/update.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/inventory_text.h"
#include "db/db.h"
#include "db/update.h"
#include "util/err.h"
#include "vsphere/soap.h"
#include "vsphere/updates.h"
#include "vsphere/xml.h"

#include "testlib.h"

/* "kind type moref" of change i. */
static const char *change(const struct vim_changes *cs, size_t i)
{
    static char buf[256];
    snprintf(buf, sizeof(buf), "%s %s %s", vim_change_kind_name(cs->v[i].kind), cs->v[i].type,
             cs->v[i].moref);
    return buf;
}

/* What the answer says changed, one entry per object in order of first appearance: the VM
 * that entered and was then modified is an "enter"; the one that left and came back too. */
static void want_changes(const struct vim_changes *cs)
{
    assert_int_equal(cs->n, 5);
    assert_string_equal(change(cs, 0), "modify VirtualMachine vm-61");
    assert_string_equal(change(cs, 1), "enter VirtualMachine vm-99");
    assert_string_equal(change(cs, 2), "leave HostSystem host-21");
    assert_string_equal(change(cs, 3), "modify Datastore datastore-14");
    assert_string_equal(change(cs, 4), "enter VirtualMachine vm-70");
}

/* update-set.xml parsed with ObjectUpdates streamed to fn at depth 6 (none: fn NULL), then
 * decoded whole into cs: version 7, truncated. */
static void parse_update_set(vim_xml_emit_fn fn, struct vim_changes *streamed,
                             struct vim_changes *cs)
{
    char *text = tl_data_read("update-set.xml"), *version = NULL;
    struct vim_xml *x = NULL;
    int truncated = 0;

    assert_int_equal(vim_xml_parse_all(text, strlen(text), fn ? 6 : 0, fn, streamed, &x), 0);
    assert_int_equal(vim_decode_update_set(vim_response(x), cs, &version, &truncated), 0);
    assert_string_equal(version, "7");
    assert_int_equal(truncated, 1);
    free(version);
    vim_xml_free(x);
    free(text);
}

TEST(update_set_whole)
{
    struct vim_changes cs = {0};

    parse_update_set(NULL, NULL, &cs);
    want_changes(&cs);
    vim_changes_free(&cs);
}

/* As vim_watch_wait() reads it: each ObjectUpdate streamed at depth 6 and freed, the version
 * and the truncated flag read from what is left. */
static int on_update(void *ctx, struct vim_node *n)
{
    if (!vim_name_is(n, "objectSet"))
        return 0;
    int r = vim_decode_object_update(ctx, n);
    return r < 0 ? r : 1;
}

TEST(update_set_streamed)
{
    struct vim_changes cs = {0}, rest = {0};

    parse_update_set(on_update, &cs, &rest);
    want_changes(&cs);
    assert_int_equal(rest.n, 0); /* the objectSets were consumed as they streamed */
    vim_changes_free(&cs);
}

/* maxWaitSeconds ran out: no returnval, no version, nothing changed. */
TEST(update_set_timeout)
{
    static const char doc[] =
        "<soapenv:Envelope xmlns:soapenv=\"http://schemas.xmlsoap.org/soap/envelope/\">"
        "<soapenv:Body><WaitForUpdatesExResponse xmlns=\"urn:vim25\"></WaitForUpdatesExResponse>"
        "</soapenv:Body></soapenv:Envelope>";
    struct vim_changes cs = {0};
    struct vim_xml *x = NULL;
    char *version = (char *)"unset";
    int truncated = 1;

    assert_int_equal(vim_xml_parse_all(doc, sizeof(doc) - 1, 0, NULL, NULL, &x), 0);
    assert_int_equal(vim_decode_update_set(vim_response(x), &cs, &version, &truncated), 0);
    assert_null(version);
    assert_int_equal(truncated, 0);
    assert_int_equal(cs.n, 0);
    vim_xml_free(x);
}

/* An ObjectUpdate of a kind we do not know, or without its object, is a protocol error. */
/* The hosts due for their per-host reads: every host in the view, as "modify", except those
 * the round already names (changed, entered or left: each stays as it is). */
TEST(watch_add_hosts)
{
    struct vim_watch w = {0};
    struct vim_changes cs = {0};
    static const char *const in_view[] = {"host-1", "host-2", "host-3", "host-4"};

    for (size_t i = 0; i < 4; i++)
        assert_int_equal(vim_changes_add(&w.hosts, "HostSystem", in_view[i], VIM_CHANGE_ENTER), 0);
    assert_int_equal(vim_changes_add(&cs, "HostSystem", "host-2", VIM_CHANGE_LEAVE), 0);
    assert_int_equal(vim_changes_add(&cs, "HostSystem", "host-3", VIM_CHANGE_ENTER), 0);
    assert_int_equal(vim_changes_add(&cs, "VirtualMachine", "host-4", VIM_CHANGE_MODIFY), 0);
    assert_int_equal(vim_watch_add_hosts(&w, &cs), 2);
    assert_int_equal(cs.n, 5);
    assert_string_equal(change(&cs, 0), "leave HostSystem host-2");
    assert_string_equal(change(&cs, 1), "enter HostSystem host-3");
    assert_string_equal(change(&cs, 3), "modify HostSystem host-1");
    assert_string_equal(change(&cs, 4), "modify HostSystem host-4");
    vim_changes_free(&cs);
    vim_changes_free(&w.hosts);
}

TEST(update_set_bad)
{
    static const char *const docs[] = {
        "<objectSet xmlns=\"urn:vim25\"><kind>vanish</kind><obj type=\"VirtualMachine\">vm-1"
        "</obj></objectSet>",
        "<objectSet xmlns=\"urn:vim25\"><kind>modify</kind></objectSet>",
        "<objectSet xmlns=\"urn:vim25\"><kind>modify</kind><obj>vm-1</obj></objectSet>",
    };
    for (size_t i = 0; i < N(docs); i++) {
        struct vim_changes cs = {0};
        struct vim_xml *x = NULL;
        assert_int_equal(vim_xml_parse_all(docs[i], strlen(docs[i]), 0, NULL, NULL, &x), 0);
        struct vim_node *root = vim_xml_root(x);
        assert_int_equal(vim_decode_object_update(&cs, root), -VSL_EPROTO);
        assert_int_equal(cs.n, 0);
        vim_xml_free(x);
    }
}

/* ---- replacing one object's rows ---- */

static void fill(const struct vim_sink *s, const void *arg)
{
    static const char *const vms[] = {"vm-1", "vm-2"};
    for (size_t i = 0; i < N(vms); i++) {
        struct vim_vm vm = {.moref = vms[i], .name = vms[i], .power_state = "poweredOn"};
        struct vim_vdisk d = {.vm = vms[i], .key = 2000, .label = "Hard disk 1",
                              .capacity_bytes = 1 << 30, .format = "thin"};
        struct vim_snapshot sn = {.vm = vms[i], .name = "before", .created = 1, .depth = 1};
        assert_int_equal(s->vm(s->ctx, &vm), 0);
        assert_int_equal(s->vdisk(s->ctx, &d), 0);
        assert_int_equal(s->snapshot(s->ctx, &sn), 0);
    }
    struct vim_host h = {.moref = "host-1", .name = "esx-1"};
    struct vim_lun l = {.host = "host-1", .key = "k1", .canonical_name = "naa.1"};
    struct vim_gap g = {.object = "host-1", .what = "esxcli", .error = "refused"};
    assert_int_equal(s->host(s->ctx, &h), 0);
    assert_int_equal(s->lun(s->ctx, &l), 0);
    assert_int_equal(s->gap(s->ctx, &g), 0);
}

static const char *db_path;

static int64_t count(const char *sql)
{
    return tl_db_count(db_path, sql);
}

TEST(update_replaces_one_object)
{
    struct tl_dbfile *f;
    struct db_snapshot *u = NULL;
    struct vim_sink sink;

    assert_int_equal(tl_db_setup_open(state), 0);
    f = *state;
    db_path = f->path;
    tl_snapshot(f->db, "vc1", fill, NULL, 1000, 2000, NULL);

    /* vm-1 re-read powered off and without its snapshot; host-1 gone. */
    assert_int_equal(db_update_begin(f->db, "vc1", &u, &sink), 0);
    assert_int_equal(db_update_forget(u, "VirtualMachine", "vm-1"), 0);
    assert_int_equal(db_update_forget(u, "HostSystem", "host-1"), 0);
    assert_int_equal(db_update_forget(u, "Folder", "group-1"), -EINVAL);
    struct vim_vm vm = {.moref = "vm-1", .name = "vm-1", .power_state = "poweredOff"};
    struct vim_vdisk d = {.vm = "vm-1", .key = 2000, .label = "Hard disk 1",
                          .capacity_bytes = 2LL << 30, .format = "thin"};
    assert_int_equal(sink.vm(sink.ctx, &vm), 0);
    assert_int_equal(sink.vdisk(sink.ctx, &d), 0);
    /* Readers see the old rows until the commit. */
    assert_int_equal(count("SELECT count(*) FROM snapshots"), 2);
    /* The update stages its rows without the write lock: another connection writes meanwhile
     * at once (not after the 5 s busy timeout, nor failing with "database is locked"). */
    struct db *other = NULL;
    char *msg = NULL;
    assert_int_equal(db_open(f->path, &other, &msg), 0);
    assert_int_equal(db_poll_failed(other, "vc2", NULL, 3000, 3001, "unreachable"), 0);
    db_close(other);
    assert_int_equal(count("SELECT count(*) FROM polls WHERE vcenter = 'vc2'"), 1);
    assert_int_equal(db_update_commit(u, &(struct db_round){.started_ms = 5000,
                                                             .finished_ms = 5040,
                                                             .version = "7"}),
                     0);

    assert_int_equal(count("SELECT count(*) FROM vms WHERE power_state = 'poweredOff'"), 1);
    assert_int_equal(count("SELECT count(*) FROM vms WHERE moref = 'vm-2' AND "
                                  "power_state = 'poweredOn'"), 1);
    assert_int_equal(count("SELECT count(*) FROM snapshots WHERE vm = 'vm-1'"), 0);
    assert_int_equal(count("SELECT count(*) FROM snapshots WHERE vm = 'vm-2'"), 1);
    assert_int_equal(count("SELECT capacity_bytes FROM vdisks WHERE vm = 'vm-1'"),
                     2L << 30);
    assert_int_equal(count("SELECT count(*) FROM hosts"), 0);
    assert_int_equal(count("SELECT count(*) FROM luns"), 0);
    assert_int_equal(count("SELECT count(*) FROM gaps"), 0);
    /* The round is in the history as an incremental poll of what it changed, and the
     * vCenter's last poll; the full read before it stays a full one. */
    assert_int_equal(count("SELECT count(*) FROM polls WHERE vcenter = 'vc1' AND mode = 'full'"
                           " AND version IS NULL AND finished_ms = 2000"),
                     1);
    assert_int_equal(count("SELECT count(*) FROM polls p JOIN vcenters v ON v.last_poll_id = p.id"
                           " WHERE p.vcenter = 'vc1' AND p.mode = 'incremental' AND p.ok = 1"
                           " AND p.version = '7' AND p.started_ms = 5000"
                           " AND p.finished_ms = 5040 AND p.counts_json ="
                           " '{\"changed\":{\"VirtualMachine\":1,\"HostSystem\":1}}'"
                           " AND v.last_success_ms = 5040 AND v.last_error IS NULL"),
                     1);
    /* `vslint inventory` says the last poll was a round: its 40 ms are not a full read's. */
    json_t *inv = NULL;
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(db_inventory_json(f->db, "vc1", &inv), 0);
    const json_t *lp =
        json_object_get(json_array_get(json_object_get(inv, "vcenters"), 0), "last_poll");
    assert_string_equal(json_string_value(json_object_get(lp, "mode")), "incremental");
    FILE *mf = open_memstream(&text, &len);
    assert_non_null(mf);
    assert_int_equal(vsl_inventory_text(inv, mf), 0);
    fclose(mf);
    if (!strstr(text, "last poll: 1970-01-01T00:00:05Z (incremental round), took 0.0 s, ok"))
        fail_msg("inventory text: %s", text);
    free(text);
    json_decref(inv);

    /* A round that failed is recorded as a failed incremental poll, and leaves the vCenter's
     * last poll and error alone: the full read that follows reports. */
    assert_int_equal(db_update_failed(f->db, "vc1",
                                      &(struct db_round){.started_ms = 6000, .finished_ms = 6001,
                                                         .version = "7"},
                                      "session lost"),
                     0);
    assert_int_equal(count("SELECT count(*) FROM polls WHERE mode = 'incremental' AND ok = 0"
                           " AND error = 'session lost' AND version = '7'"),
                     1);
    assert_int_equal(count("SELECT count(*) FROM vcenters v JOIN polls p ON p.id = v.last_poll_id"
                           " WHERE v.name = 'vc1' AND p.ok = 1 AND v.last_error IS NULL"),
                     1);
    assert_int_equal(tl_db_teardown(state), 0);
}

int main(void)
{
    return tl_main();
}
