/* `vslint inventory`'s text: the inventory JSON document (db_inventory_json, shape in
 * docs/inventory.md) as tables for a terminal, one vCenter after another. */
#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "daemon/inventory_text.h"
#include "util/buf.h"
#include "util/isotime.h"

/* --- text ------------------------------------------------------------------------------- */

#define LINE_MAX_COLS 119

/* Prints one line, cut to fit LINE_MAX_COLS columns (at a UTF-8 character boundary), so no
 * server-supplied name can wrap an administrator's terminal table. */
static void line(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line(FILE *f, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if (n > LINE_MAX_COLS) {
        n = LINE_MAX_COLS;
        while (n > 0 && ((unsigned char)buf[n] & 0xC0) == 0x80)
            n--;
    }
    while (n > 0 && buf[n - 1] == ' ')
        n--;
    fprintf(f, "%.*s\n", n, buf);
}

static const char *str(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "-";
}

/* The name at k cut to cols terminal columns and padded to them, into buf: what %-32.32s does
 * for ASCII, by columns rather than bytes, so that a name with multibyte characters neither
 * shifts the columns after it nor is cut inside a character. */
static const char *cell(char *buf, size_t size, const json_t *o, const char *k, size_t cols)
{
    const char *s = str(o, k);
    size_t width, n = vsl_utf8_fit(s, cols, &width);

    if (n + (cols - width) + 1 > size)
        n = width = 0; /* not reached with the buffers below: cols * 4 + 1 bytes */
    memcpy(buf, s, n);
    memset(buf + n, ' ', cols - width);
    buf[n + cols - width] = '\0';
    return buf;
}

static double gib(const json_t *o, const char *k)
{
    return (double)json_integer_value(json_object_get(o, k)) / (1024.0 * 1024.0 * 1024.0);
}

static void text_header(const json_t *vc, FILE *f)
{
    const json_t *p = json_object_get(vc, "last_poll");
    const char *kind;
    char when[32];

    line(f, "vCenter %s  %s", str(vc, "name"), str(vc, "url"));
    if (!json_is_object(p)) {
        line(f, "  last poll: never");
        return;
    }
    if (!vsl_iso_time(json_integer_value(json_object_get(p, "started_ms")), when, sizeof(when)))
        snprintf(when, sizeof(when), "?");
    /* A round of incremental polling re-reads only what changed: its duration is not that of
     * reading the estate, so say which it was. */
    kind = !strcmp(str(p, "mode"), "incremental") ? " (incremental round)" : "";
    if (json_is_true(json_object_get(p, "ok")))
        line(f, "  last poll: %s%s, took %.1f s, ok", when, kind,
             (double)json_integer_value(json_object_get(p, "duration_ms")) / 1000.0);
    else
        line(f, "  last poll: %s%s, took %.1f s, FAILED: %s", when, kind,
             (double)json_integer_value(json_object_get(p, "duration_ms")) / 1000.0,
             str(p, "error"));
}

static void text_datastores(const json_t *vc, FILE *f)
{
    const json_t *list = json_object_get(vc, "datastores"), *d;
    size_t i;

    line(f, "  Datastores (%zu)", json_array_size(list));
    if (json_array_size(list) == 0)
        return;
    line(f, "    %-32s %-6s %10s %10s %7s %5s  %s", "NAME", "TYPE", "CAP GiB", "FREE GiB", "FREE %",
         "VMs", "POD");
    json_array_foreach(list, i, d)
    {
        json_int_t cap = json_integer_value(json_object_get(d, "capacity"));
        json_int_t free_b = json_integer_value(json_object_get(d, "free_space"));
        char pct[16] = "-", name[32 * 4 + 1];

        if (cap > 0 && json_is_integer(json_object_get(d, "free_space")))
            snprintf(pct, sizeof(pct), "%.1f", 100.0 * (double)free_b / (double)cap);
        line(f, "    %s %-6.6s %10.1f %10.1f %7s %5lld  %s%s", cell(name, sizeof(name), d, "name", 32),
             str(d, "type"),
             gib(d, "capacity"), gib(d, "free_space"), pct,
             (long long)json_integer_value(json_object_get(d, "vm_count")), str(d, "storage_pod"),
             json_is_false(json_object_get(d, "accessible")) ? "  INACCESSIBLE" : "");
    }
}

/* Finds the option named key in an array of {"key","value","inherited"}. */
static const json_t *find_option(const json_t *options, const char *key)
{
    const json_t *o;
    size_t i;

    json_array_foreach(options, i, o)
    {
        if (strcmp(str(o, "key"), key) == 0)
            return o;
    }
    return NULL;
}

static void delayed_ack(const json_t *options, char *buf, size_t size)
{
    const json_t *o = find_option(options, "DelayedAck");

    if (!o)
        snprintf(buf, size, "unknown");
    else
        snprintf(buf, size, "%s%s", str(o, "value"),
                 json_is_true(json_object_get(o, "inherited")) ? " (inherited)" : "");
}

static void text_vnics(const json_t *h, const json_t *dvs_by_uuid, FILE *f)
{
    const json_t *vnics = json_object_get(h, "vnics"), *n, *s;
    size_t i;

    json_array_foreach(json_object_get(h, "vswitches"), i, s)
    {
        char name[24 * 4 + 1];
        line(f, "      vSwitch %s MTU %lld", cell(name, sizeof(name), s, "name", 24),
             (long long)json_integer_value(json_object_get(s, "mtu")));
    }
    json_array_foreach(vnics, i, n)
    {
        char mtu[16] = "?";
        const json_t *dvs_uuid = json_object_get(n, "dvs_uuid");

        if (json_is_integer(json_object_get(n, "mtu")))
            snprintf(mtu, sizeof(mtu), "%lld",
                     (long long)json_integer_value(json_object_get(n, "mtu")));
        if (json_is_string(dvs_uuid)) {
            const char *dvs =
                str(json_object_get(dvs_by_uuid, json_string_value(dvs_uuid)), "name");
            line(f, "      vmknic %-8.8s MTU %-5s DVS %s / %s  %s", str(n, "device"), mtu,
                 strcmp(dvs, "-") ? dvs : json_string_value(dvs_uuid), str(n, "dvs_portgroup"),
                 str(n, "ip"));
        } else {
            line(f, "      vmknic %-8.8s MTU %-5s %s / %s  %s", str(n, "device"), mtu,
                 str(n, "portgroup"), str(n, "vswitch"), str(n, "ip"));
        }
    }
}

static void text_iscsi(const json_t *h, FILE *f)
{
    const json_t *hba, *t, *v;
    char ack[64];
    size_t i, j, k;

    json_array_foreach(json_object_get(h, "iscsi_hbas"), i, hba)
    {
        char bound[256] = "";
        size_t len = 0;

        json_array_foreach(json_object_get(hba, "bound_vnics"), k, v)
        {
            int w = snprintf(bound + len, sizeof(bound) - len, "%s%s", k ? "," : "",
                             json_string_value(v) ? json_string_value(v) : "?");
            if (w < 0 || (size_t)w >= sizeof(bound) - len)
                break;
            len += (size_t)w;
        }
        delayed_ack(json_object_get(hba, "options"), ack, sizeof(ack));
        line(f, "      iSCSI %-9s %s  bound: %s  DelayedAck %s", str(hba, "device"),
             str(hba, "iscsi_name"), len ? bound : "none", ack);
        json_array_foreach(json_object_get(hba, "targets"), j, t)
        {
            delayed_ack(json_object_get(t, "options"), ack, sizeof(ack));
            line(f, "        target %-6s %s:%lld  %s  DelayedAck %s", str(t, "kind"),
                 str(t, "address"), (long long)json_integer_value(json_object_get(t, "port")),
                 json_is_string(json_object_get(t, "iscsi_name")) ? str(t, "iscsi_name") : "", ack);
        }
    }
}

static void text_luns(const json_t *h, FILE *f)
{
    const json_t *luns = json_object_get(h, "luns"), *l, *p;
    size_t i, j;

    if (json_array_size(luns) == 0)
        return;
    line(f, "      %-40s %-14s %-8s %s", "LUN", "POLICY", "IOPS", "PATHS");
    json_array_foreach(luns, i, l)
    {
        char iops[24] = "unknown", dead[128] = "";
        size_t active = 0, dlen = 0;

        if (json_is_integer(json_object_get(l, "iops_limit")))
            snprintf(iops, sizeof(iops), "%lld",
                     (long long)json_integer_value(json_object_get(l, "iops_limit")));
        json_array_foreach(json_object_get(l, "paths"), j, p)
        {
            if (strcmp(str(p, "state"), "active") == 0)
                active++;
            else if (strcmp(str(p, "state"), "dead") == 0) {
                int w = snprintf(dead + dlen, sizeof(dead) - dlen, "%s%s",
                                 dlen ? "," : ", dead: ", str(p, "name"));
                if (w > 0 && (size_t)w < sizeof(dead) - dlen)
                    dlen += (size_t)w;
            }
        }
        line(f, "      %-40.40s %-14.14s %-8s %zu/%zu active%s%s", str(l, "canonical_name"),
             str(l, "policy"), iops, active, json_array_size(json_object_get(l, "paths")), dead,
             json_is_true(json_object_get(l, "local")) ? "  (local)" : "");
    }
}

/* The user's claim rules in full; the system rules (dozens, the same on every host of a
 * release) only counted. */
static void text_satp_rules(const json_t *h, FILE *f)
{
    const json_t *rules = json_object_get(h, "satp_rules"), *r;
    size_t i, system = 0;

    if (json_array_size(rules) == 0)
        return;
    json_array_foreach(rules, i, r)
    {
        if (strcmp(str(r, "rule_group"), "system") == 0) {
            system++;
            continue;
        }
        line(f, "      claim rule (%s): %s vendor %s model %s -> %s %s", str(r, "rule_group"),
             str(r, "satp"), str(r, "vendor"), str(r, "model"), str(r, "psp"),
             str(r, "psp_options"));
    }
    line(f, "      %zu system claim rules", system);
}

/* The objects of list by their string member key ({"UUID": {...}}), or with member, that member
 * of each ({"MOREF": "NAME"}): how one table looks up what another names by an id. Objects
 * without the key are left out; NULL when out of memory (then nothing is found). */
static json_t *index_by(const json_t *list, const char *key, const char *member)
{
    json_t *idx = json_object();
    const json_t *o;
    size_t i;

    json_array_foreach(list, i, o)
    {
        const char *k = json_string_value(json_object_get(o, key));
        if (k && idx)
            json_object_set_nocheck(idx, k, member ? json_object_get(o, member) : (json_t *)o);
    }
    return idx;
}

static void text_hosts(const json_t *vc, FILE *f)
{
    const json_t *hosts = json_object_get(vc, "hosts"), *h, *g;
    /* vmknics name their DVS by uuid; an administrator knows it by name. */
    json_t *dvs_by_uuid = index_by(json_object_get(vc, "dvswitches"), "uuid", NULL);
    size_t i, j;

    line(f, "  Hosts (%zu)", json_array_size(hosts));
    json_array_foreach(hosts, i, h)
    {
        line(f, "    %s  (%s, in %s)", str(h, "name"), str(h, "connection_state"),
             str(h, "parent"));
        text_vnics(h, dvs_by_uuid, f);
        text_iscsi(h, f);
        text_luns(h, f);
        text_satp_rules(h, f);
        json_array_foreach(json_object_get(h, "gaps"), j, g)
        {
            line(f, "      not read: %s: %s", str(g, "what"), str(g, "error"));
        }
    }
    json_decref(dvs_by_uuid);
}

static void text_vms(const json_t *vc, FILE *f)
{
    const json_t *vms = json_object_get(vc, "vms"), *m, *c, *d;
    json_t *ds_names = index_by(json_object_get(vc, "datastores"), "moref", "name");
    size_t i, j;

    line(f, "  VMs (%zu)", json_array_size(vms));
    json_array_foreach(vms, i, m)
    {
        char ctl[160] = "";
        size_t len = 0;

        json_array_foreach(json_object_get(m, "controllers"), j, c)
        {
            int w = snprintf(ctl + len, sizeof(ctl) - len, "%s%s", len ? ", " : "", str(c, "type"));
            if (w < 0 || (size_t)w >= sizeof(ctl) - len)
                break;
            len += (size_t)w;
        }
        char name[32 * 4 + 1], label[20 * 4 + 1];
        line(f, "    %s %-11s %-7s %s%s", cell(name, sizeof(name), m, "name", 32), str(m, "power_state"),
             str(m, "hw_version"), len ? ctl : "no controllers",
             json_is_true(json_object_get(m, "template")) ? "  (template)" : "");
        json_array_foreach(json_object_get(m, "disks"), j, d)
        {
            const char *ds = json_string_value(json_object_get(d, "datastore"));
            const char *dsname = ds ? json_string_value(json_object_get(ds_names, ds)) : NULL;

            line(f, "      %s %9.1f GiB  %-16s %s", cell(label, sizeof(label), d, "label", 20),
                 gib(d, "capacity_bytes"),
                 str(d, "format"), dsname ? dsname : (ds ? ds : "-"));
        }
    }
    json_decref(ds_names);
}

/* A threshold in hundredths of a percent, as "75 %", or "-" when unset. */
static const char *hundredths(const json_t *v, char *buf, size_t size)
{
    if (!json_is_integer(v))
        return "-";
    snprintf(buf, size, "%g %%", (double)json_integer_value(v) / 100.0);
    return buf;
}

/* The alarms with a datastore condition (a vCenter has a hundred others), one line per
 * condition; the rest only counted. */
static void text_alarms(const json_t *vc, FILE *f)
{
    const json_t *alarms = json_object_get(vc, "alarms"), *a, *m;
    size_t i, j;

    if (json_array_size(json_object_get(vc, "alarm_managers")) == 0) {
        line(f, "  Alarms: not read");
        return;
    }
    line(f, "  Alarms (%zu), those with a datastore condition:", json_array_size(alarms));
    json_array_foreach(alarms, i, a)
    {
        json_array_foreach(json_object_get(a, "metrics"), j, m)
        {
            char y[32], r[32];
            if (strcmp(str(m, "object_type"), "Datastore") != 0)
                continue;
            char name[32 * 4 + 1];
            line(f, "    %s %-8s on %s: %s %s yellow %s red %s", cell(name, sizeof(name), a, "name", 32),
                 json_is_true(json_object_get(a, "enabled")) ? "enabled" : "DISABLED",
                 json_is_string(json_object_get(a, "entity_name")) ? str(a, "entity_name")
                                                                   : str(a, "entity"),
                 str(m, "counter"), str(m, "operator"),
                 hundredths(json_object_get(m, "yellow"), y, sizeof(y)),
                 hundredths(json_object_get(m, "red"), r, sizeof(r)));
        }
    }
}

int vsl_inventory_text(const json_t *inv, FILE *f)
{
    const json_t *vc, *g;
    size_t i, j;

    assert(inv && f);
    if (!json_is_array(json_object_get(inv, "vcenters")))
        return -EINVAL;
    json_array_foreach(json_object_get(inv, "vcenters"), i, vc)
    {
        if (i)
            line(f, "%s", "");
        text_header(vc, f);
        json_array_foreach(json_object_get(vc, "gaps"), j, g)
        {
            const char *obj = json_string_value(json_object_get(g, "object"));
            line(f, "  not read: %s%s%s: %s", obj && *obj ? obj : "", obj && *obj ? " " : "",
                 str(g, "what"), str(g, "error"));
        }
        text_datastores(vc, f);
        text_hosts(vc, f);
        text_vms(vc, f);
        text_alarms(vc, f);
    }
    if (fflush(f) != 0 || ferror(f)) {
        int e = errno;
        return e ? -e : -EIO;
    }
    return 0;
}
