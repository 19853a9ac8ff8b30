/* `vslint config-check --connect`: per vCenter and array, the certificate and the trust, the login,
 * what the account sees, and each read vslint makes tried once, every failure one problem line. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "arrays/unity.h"
#include "daemon/probe.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/tls.h"
#include "vsphere/alarms.h"
#include "vsphere/collect.h"
#include "vsphere/session.h"
#include "vsphere/updates.h"
#include "vsphere/xml.h"

/* The privilege each per-host or vCenter read needs when vCenter's fault does not name it
 * (docs/vcenter-role.md, "The role"). */
static const struct {
    const char *what, *privilege;
} needs[] = {
    {"esxcli", "Host.Config.Settings"},
    {"iscsi-bindings", "Host.Config.Storage"},
    {"options", "System.Read"},
    {"alarms", "System.View"},
};

/* What the per-host reads of one sampled host gave. */
struct probe_host {
    char *moref, *name, *state; /* owned; name and state NULL until the host's row came */
    long options, iscsi_hbas, bindings, nmp_devices, satp_rules;
    char *gap[3]; /* owned: why "options", "iscsi-bindings", "esxcli" were not read, or NULL */
};

static const char *const host_reads[3] = {"options", "iscsi-bindings", "esxcli"};

/* One source's probe: the sink's counts and the report being built. */
struct probe {
    const struct vsl_vcenter_conf *conf;
    struct probe_host *hosts; /* owned, n_hosts: the sample */
    size_t n_hosts;
    long alarms, perf_counters, pools, luns, ports;
    long array_other; /* an array's portals, NAS servers, file systems...: read, not shown */
    int alarm_manager;
    char *alarms_gap;  /* owned */
    json_t *src;       /* borrowed: this source's object in the report */
    json_t *problems;  /* borrowed: the report's problem list */
    int status;        /* VSL_PROBE_ */
    int max_hosts;     /* --hosts */
    int incomplete;    /* a part of the report could not be built (out of memory) */
};

/* s as a JSON string that jansson takes: a byte that is not UTF-8 (a Latin-1 name in the
 * configuration, a fault text cut in the middle of a character) becomes '?' rather than the
 * whole value, and with it the problem, being dropped. NULL for NULL (a JSON null); NULL
 * only then or out of memory otherwise. */
static json_t *jtext(const char *s)
{
    if (!s)
        return json_null();
    json_t *v = json_string(s);
    if (v)
        return v;
    char *fixed = strdup(s); /* owned */
    if (!fixed)
        return NULL;
    vsl_utf8_fix(fixed);
    v = json_string(fixed);
    free(fixed);
    return v;
}

/* Sets key of o to v (taken); a value that could not be built (only out of memory, as jtext()
 * mends the text) makes the report incomplete, which the status and the text summary say. */
static void put(struct probe *p, json_t *o, const char *key, json_t *v)
{
    if (!v || json_object_set_new(o, key, v) < 0)
        p->incomplete = 1;
}

static void set_status(struct probe *p, int status)
{
    if (status > p->status)
        p->status = status;
}

/* One problem: where, what, why, and what to do; privilege is the one missing, or NULL. */
static void problem(struct probe *p, int status, const char *object, const char *what,
                    const char *cause, const char *privilege, const char *fix)
{
    json_t *o = json_pack("{s:s, s:o, s:o, s:s, s:o, s:o, s:o}", "kind",
                          p->conf->type ? "array" : "vcenter", "source", jtext(p->conf->name),
                          "object", jtext(object), "what", what, "cause", jtext(cause),
                          "privilege", jtext(privilege), "fix", jtext(fix));
    if (!o || json_array_append_new(p->problems, o) < 0)
        p->incomplete = 1;
    set_status(p, status);
}

static struct probe_host *find_host(struct probe *p, const char *moref)
{
    for (size_t i = 0; moref && i < p->n_hosts; i++)
        if (!strcmp(p->hosts[i].moref, moref))
            return &p->hosts[i];
    return NULL;
}

static int dup_into(char **dst, const char *s)
{
    free(*dst);
    *dst = s ? strdup(s) : NULL;
    return s && !*dst ? -ENOMEM : 0;
}

/* The sink: counts, per sampled host and per source; nothing is kept but why a read failed. */
static int on_host(void *ctx, const struct vim_host *h)
{
    struct probe_host *ph = find_host(ctx, h->moref);
    if (!ph)
        return 0;
    int r = dup_into(&ph->name, h->name);
    return r < 0 ? r : dup_into(&ph->state, h->connection_state);
}

#define COUNT_HOST(fn, type, field)                                                                \
    static int fn(void *ctx, const struct type *row)                                               \
    {                                                                                              \
        struct probe_host *ph = find_host(ctx, row->host);                                         \
        if (ph)                                                                                    \
            ph->field++;                                                                           \
        return 0;                                                                                  \
    }
COUNT_HOST(on_option, vim_host_option, options)
COUNT_HOST(on_iscsi_hba, vim_iscsi_hba, iscsi_hbas)
COUNT_HOST(on_binding, vim_iscsi_binding, bindings)
COUNT_HOST(on_nmp_device, vim_nmp_device, nmp_devices)
COUNT_HOST(on_satp_rule, vim_satp_rule, satp_rules)

#define COUNT(fn, type, field)                                                                     \
    static int fn(void *ctx, const struct type *row)                                               \
    {                                                                                              \
        (void)row;                                                                                 \
        ((struct probe *)ctx)->field++;                                                            \
        return 0;                                                                                  \
    }
COUNT(on_alarm, vim_alarm, alarms)
COUNT(on_perf_counter, vim_perf_counter, perf_counters)
COUNT(on_alarm_manager, vim_alarm_manager, alarm_manager)
COUNT(on_pool, vim_array_pool, pools)
COUNT(on_lun, vim_array_lun, luns)
COUNT(on_port, vim_array_port, ports)
/* arr_collect() calls every array callback it reads a type for: none may be NULL. */
COUNT(on_portal, vim_array_portal, array_other)
COUNT(on_nas_server, vim_array_nas_server, array_other)
COUNT(on_file_interface, vim_array_file_interface, array_other)
COUNT(on_filesystem, vim_array_filesystem, array_other)
COUNT(on_nfs_share, vim_array_nfs_share, array_other)
COUNT(on_vvol_pool, vim_array_vvol_pool, array_other)

static int on_gap(void *ctx, const struct vim_gap *g)
{
    struct probe *p = ctx;
    struct probe_host *ph = find_host(p, g->object);

    if (!strcmp(g->what, "alarms"))
        return dup_into(&p->alarms_gap, g->error);
    for (size_t i = 0; ph && i < 3; i++)
        if (!strcmp(g->what, host_reads[i]))
            return ph->gap[i] ? 0 : dup_into(&ph->gap[i], g->error);
    return 0;
}

static const struct vim_sink sink_template = {
    .host = on_host,
    .host_option = on_option,
    .iscsi_hba = on_iscsi_hba,
    .iscsi_binding = on_binding,
    .nmp_device = on_nmp_device,
    .satp_rule = on_satp_rule,
    .gap = on_gap,
    .alarm_manager = on_alarm_manager,
    .alarm = on_alarm,
    .perf_counter = on_perf_counter,
    .array_pool = on_pool,
    .array_lun = on_lun,
    .array_port = on_port,
    .array_portal = on_portal,
    .array_nas_server = on_nas_server,
    .array_file_interface = on_file_interface,
    .array_filesystem = on_filesystem,
    .array_nfs_share = on_nfs_share,
    .array_vvol_pool = on_vvol_pool,
};

/* The privilege a failed read lacks: the one vCenter's NoPermission fault named, else, for a
 * NoPermission fault without one, the table's. */
static const char *missing_privilege(const char *what, const char *error, char *buf, size_t len)
{
    if (vsl_error_privileges(error, buf, len))
        return buf;
    if (!strstr(error, "NoPermission"))
        return NULL;
    for (size_t i = 0; i < sizeof(needs) / sizeof(needs[0]); i++)
        if (!strcmp(needs[i].what, what))
            return needs[i].privilege;
    return NULL;
}

/* A read that failed: one problem line naming the privilege when that is the cause. */
static void read_failed(struct probe *p, const char *object, const char *what, const char *error,
                        const char *state)
{
    char priv[96], fix[512];
    const char *pv = missing_privilege(what, error, priv, sizeof(priv));

    if (pv)
        snprintf(fix, sizeof(fix),
                 "give the role of user %s the privilege %s, assigned at the vCenter's root "
                 "folder with propagation (docs/vcenter-role.md)",
                 p->conf->user, pv);
    else if (state && strcmp(state, "connected"))
        snprintf(fix, sizeof(fix),
                 "the host is %s in vCenter: reconnect it (vCenter cannot read a host it is not "
                 "connected to)",
                 state);
    else
        snprintf(fix, sizeof(fix),
                 "the error is vCenter's own; docs/vcenter-role.md says what each read needs");
    problem(p, VSL_PROBE_UNREADABLE, object, what, error, pv, fix);
}

/* How the configured trust judges the certificate, said before the connection tries it. */
static const char *trust_mode(const struct vsl_vcenter_conf *conf, int has_cert)
{
    if (!has_cert)
        return "none: url= is http://, no TLS";
    if (conf->thumbprint)
        return "thumbprint";
    if (conf->insecure)
        return "insecure";
    return conf->ca_file ? "ca_file" : "system";
}

/* The certificate the server presents, looked at before any trust is applied, and the trust
 * configured. Returns 0, or a negative error once the problem is reported (no TLS connection
 * at all). */
static int probe_certificate(struct probe *p, struct vsl_cert *cert, int *has_cert)
{
    const struct vsl_vcenter_conf *conf = p->conf;
    char err[1024];
    int r = vsl_tls_peer_cert(conf->url, conf->timeout_s, conf->type ? "array" : "vCenter", cert,
                              err, sizeof(err));

    *has_cert = r == 0;
    if (r == -ENOENT) {
        json_object_set_new(p->src, "certificate", json_null());
        json_object_set_new(p->src, "trust", json_string(trust_mode(conf, 0)));
        return 0;
    }
    if (r < 0) {
        problem(p, VSL_PROBE_UNREACHABLE, NULL, "connect", err, NULL,
                "check url = and that its address and port can be reached from this machine "
                "(a firewall, a proxy); timeout = sets how long vslint waits");
        return r;
    }
    put(p, p->src, "certificate",
                        json_pack("{s:o, s:o, s:s, s:s, s:s, s:b, s:b, s:b}", "subject",
                                  jtext(cert->subject), "issuer", jtext(cert->issuer), "not_before",
                                  cert->not_before, "not_after", cert->not_after, "sha256",
                                  cert->sha256, "self_signed", cert->self_signed, "expired",
                                  cert->expired, "not_yet_valid", cert->not_yet_valid));
    json_object_set_new(p->src, "trust", json_string(trust_mode(conf, 1)));
    return 0;
}

/* Whether the configured trust accepted the server, from the first request's result r: true only
 * once a TLS request got an answer under ca_file =, the system's store or a pin; false when the
 * trust refused the certificate; null (not decided) for http://, insecure = true (nothing was
 * judged) and when no answer came (a timeout says nothing about the certificate). */
static void set_verified(struct probe *p, int r, int has_cert)
{
    const char *mode = trust_mode(p->conf, has_cert);
    json_t *v = !has_cert || !strcmp(mode, "insecure") || r == -VSL_ENET ? json_null()
                                                                         : json_boolean(r != -VSL_ETLS);

    json_object_set_new(p->src, "verified", v);
}

/* The client could not be made: only a pin libcurl cannot set up does that, or memory. */
static void client_failed(struct probe *p, int r)
{
    problem(p, VSL_PROBE_UNREACHABLE, NULL, "tls", vsl_strerror(r), NULL,
            r == -ENOTSUP ? "thumbprint = needs libcurl built with OpenSSL (libcurl4-openssl)"
                          : "see the error");
}

/* The first request with the configured trust failed (r): the problem, with the fix the
 * certificate read before suggests. */
static void connect_failed(struct probe *p, int r, const char *error, const struct vsl_cert *cert,
                           int has_cert)
{
    char fix[768];

    if (r == -VSL_ETLS && has_cert) {
        /* libcurl's words for a certificate whose names do not include url ='s host (the
         * OpenSSL back end: "...no alternative certificate subject name matches target host
         * name..." or "...subject name ... does not match target host name..."). */
        int name_mismatch = error && strstr(error, "subject name") && strstr(error, "target host");
        if (name_mismatch)
            snprintf(fix, sizeof(fix),
                     "the certificate (%s) is not for the host in url =: put the name it was "
                     "issued for in url =, or, if it is the right one, pin it: thumbprint = %s",
                     cert->subject, cert->sha256);
        else if (cert->expired || cert->not_yet_valid)
            snprintf(fix, sizeof(fix),
                     "renew the certificate (it is valid from %s to %s), or, if it is the right "
                     "one, pin it: thumbprint = %s",
                     cert->not_before, cert->not_after, cert->sha256);
        else
            snprintf(fix, sizeof(fix),
                     "if this is the right certificate%s, pin it: thumbprint = %s; or set "
                     "ca_file = to the CA that signed it",
                     cert->self_signed ? " (it is self-signed)" : "", cert->sha256);
        problem(p, VSL_PROBE_UNREACHABLE, NULL, "tls", error, NULL, fix);
        return;
    }
    problem(p, VSL_PROBE_UNREACHABLE, NULL, "connect", error, NULL,
            r == -VSL_ENET ? "check url = and that its address and port can be reached from "
                             "this machine; timeout = sets how long vslint waits"
                           : "check that url = is the vCenter's SDK address "
                             "(https://HOST/sdk)");
}

/* url = http://: the login would send the password across the network in clear, so the probe
 * does not make it. A problem of its own, and the source is not logged in to (exit 2). */
static void plain_http(struct probe *p)
{
    problem(p, VSL_PROBE_UNREACHABLE, NULL, "login",
            "url = is http://: the password would cross the network in clear, so the probe did "
            "not log in",
            NULL,
            p->conf->type ? "use https:// (Unisphere answers on https://ARRAY)"
                          : "use https:// (vCenter answers on https://HOST/sdk)");
}

/* Logs in with the configured account. 0, or a negative error once the problem is reported. */
static int probe_login(struct probe *p, struct vim_client *vc, struct arr_client *ac)
{
    const struct vsl_vcenter_conf *conf = p->conf;
    char *password = NULL, err[1024];
    int r = vsl_config_password(conf, &password, err, sizeof(err));

    if (r < 0) {
        problem(p, VSL_PROBE_UNREACHABLE, NULL, "login", err, NULL,
                "make the password readable: password_file = or password_env =");
        return r;
    }
    r = vc ? vim_login(vc, conf->user, password) : arr_login(ac, conf->user, password);
    vsl_config_wipe(password);
    /* No answer to the login at all is the connection's problem (the caller's to report). */
    if (r == -VSL_ETLS || r == -VSL_ENET)
        return r;
    const char *error = r < 0 ? (vc ? vim_client_error(vc) : arr_client_error(ac)) : NULL;
    /* Only the server's no to the user and password is a refusal; any other failure is an
     * answer vslint could not use, and the text says which. */
    put(p, p->src, "login",
        r < 0 ? json_pack("{s:o, s:b, s:b, s:o}", "user", jtext(conf->user), "ok", 0, "refused",
                          r == -VSL_ELOGIN, "error", jtext(error))
              : json_pack("{s:o, s:b}", "user", jtext(conf->user), "ok", 1));
    if (r < 0)
        problem(p, VSL_PROBE_UNREACHABLE, NULL, "login", error, NULL,
                r == -VSL_ELOGIN ? "check user = and the password its password_file = or "
                                   "password_env = holds; a locked or expired account is "
                                   "refused the same way"
                                 : "see the error: the server answered the login but not as "
                                   "expected");
    return r;
}

/* Counting views: one per type of the inventory, each object's name read (the cheapest
 * property), the hosts' morefs kept for the sample. */
struct counter {
    long n;
    struct vim_changes *hosts; /* NULL: not the hosts' view */
};

static int count_object(void *ctx, const char *moref, struct vim_node *objects)
{
    struct counter *cn = ctx;
    (void)objects;
    cn->n++;
    return cn->hosts ? vim_changes_add(cn->hosts, "HostSystem", moref, VIM_CHANGE_ENTER) : 0;
}

static const struct {
    const char *type, *key;
} visible[] = {
    {"Datacenter", "datacenters"},
    {"ClusterComputeResource", "clusters"},
    {"HostSystem", "hosts"},
    {"Datastore", "datastores"},
    {"VirtualMachine", "vms"},
};

/* Counts what the account sees; the hosts' morefs into *hosts. 0, or a fatal read error. */
static int probe_visible(struct probe *p, struct vim_client *c, struct vim_changes *hosts)
{
    static const char *const name_path[] = {"name", NULL};
    json_t *counts = json_object();
    int r = 0;

    json_object_set_new(p->src, "visible", counts);
    for (size_t i = 0; i < sizeof(visible) / sizeof(visible[0]) && r == 0; i++) {
        struct counter cn = {.hosts = !strcmp(visible[i].type, "HostSystem") ? hosts : NULL};
        char *view = NULL;
        r = vim_create_view(c, visible[i].type, &view);
        if (r == 0)
            r = vim_retrieve_view(c, view, visible[i].type, name_path, count_object, &cn);
        if (view)
            vim_destroy_view(c, view);
        free(view);
        if (r == 0) {
            json_object_set_new(counts, visible[i].key, json_integer(cn.n));
        } else if (!vim_poll_fatal(r)) {
            json_object_set_new(counts, visible[i].key, json_null());
            read_failed(p, NULL, visible[i].key, vim_gap_error(c), NULL);
            r = 0;
        }
    }
    return r;
}

/* The per-host reads of at most max hosts, spread evenly over the list vCenter gave. */
static int probe_hosts(struct probe *p, struct vim_client *c, const struct vim_changes *all,
                       int max, struct vim_sink *sink)
{
    struct vim_changes sample = {0};
    size_t n = all->n < (size_t)max ? all->n : (size_t)max;
    int r = 0;

    p->hosts = calloc(n ? n : 1, sizeof(*p->hosts));
    if (!p->hosts)
        return -ENOMEM;
    for (size_t i = 0; i < n && r == 0; i++) {
        const char *moref = all->v[i * all->n / n].moref;
        p->hosts[i].moref = strdup(moref);
        if (!p->hosts[i].moref)
            r = -ENOMEM;
        else if ((r = vim_changes_add(&sample, "HostSystem", moref, VIM_CHANGE_ENTER)) == 0)
            p->n_hosts = i + 1;
    }
    /* A moref left without its host: freed here, not counted, so find_host() never meets it. */
    if (r < 0 && p->hosts[p->n_hosts].moref) {
        free(p->hosts[p->n_hosts].moref);
        p->hosts[p->n_hosts].moref = NULL;
    }
    if (r == 0 && n > 0)
        r = vim_collect_changes(c, &sample, sink);
    vim_changes_free(&sample);
    if (r < 0)
        return r;

    json_t *list = json_array();
    put(p, p->src, "hosts", json_pack("{s:I, s:I, s:o}", "visible", (json_int_t)all->n,
                                                   "sampled", (json_int_t)n, "sample", list));
    for (size_t i = 0; i < p->n_hosts; i++) {
        struct probe_host *h = &p->hosts[i];
        const char *name = h->name ? h->name : h->moref;
        json_t *o = json_pack("{s:o, s:o, s:o}", "name", jtext(name), "moref", jtext(h->moref),
                              "connection_state", jtext(h->state));
        if (!o) {
            p->incomplete = 1;
            continue;
        }
        if (!h->name) {
            /* vCenter listed the host but answered none of its properties (each in the
             * answer's missingSet): an account that may not read it, as a No access role on the
             * host gives, or a host removed since it was counted. No per-host read was made. */
            problem(p, VSL_PROBE_UNREADABLE, h->moref, "host",
                    "vCenter answered none of the host's properties (missingSet)", "System.Read",
                    "give the account System.Read on the host: a role of its own on the host "
                    "or a folder above it (No access) hides it from vslint; see \"Where the role "
                    "is assigned\" in docs/vcenter-role.md");
            json_object_set_new(o, "read", json_false());
            json_array_append_new(list, o);
            continue;
        }
        long counts[3] = {h->options, h->bindings, h->nmp_devices};
        /* Asked at all: every host is asked its options; the bindings only of a host with an
         * iSCSI adapter; esxcli only of one with SAN LUNs, and once asked the claim rules
         * always list the system's. */
        int asked[3] = {1, h->iscsi_hbas > 0, h->satp_rules > 0};
        for (size_t k = 0; k < 3; k++) {
            json_t *read;
            if (h->gap[k]) {
                read = json_pack("{s:b, s:o}", "read", 0, "error", jtext(h->gap[k]));
                read_failed(p, name, host_reads[k], h->gap[k], h->state);
            } else {
                read = asked[k] ? json_pack("{s:b, s:I}", "read", 1, "rows", (json_int_t)counts[k])
                                : json_pack("{s:b, s:n}", "read", 0, "error");
                if (k == 2 && asked[k])
                    json_object_set_new(read, "claim_rules", json_integer(h->satp_rules));
            }
            json_object_set_new(o, host_reads[k], read);
        }
        json_array_append_new(list, o);
    }
    return 0;
}

static void probe_alarms(struct probe *p)
{
    if (p->alarms_gap)
        read_failed(p, NULL, "alarms", p->alarms_gap, NULL);
    put(p, p->src, "alarms",
                        json_pack("{s:b, s:I, s:I, s:o}", "read", !p->alarms_gap && p->alarm_manager,
                                  "alarms", (json_int_t)p->alarms, "perf_counters",
                                  (json_int_t)p->perf_counters, "error", jtext(p->alarms_gap)));
}

/* What a read that ended the probe of a source (session lost, network, timeout) leaves. */
static void read_ended(struct probe *p, const char *what, const char *error)
{
    problem(p, VSL_PROBE_UNREADABLE, NULL, what, error, NULL,
            "the connection failed in the middle of the reads: run the probe again; a timeout "
            "means a slow vCenter (raise timeout =)");
}

static void probe_vcenter(struct probe *p, struct vim_sink *sink)
{
    const struct vsl_vcenter_conf *conf = p->conf;
    struct vim_opts opts = {.url = conf->url,
                            .ca_file = conf->ca_file,
                            .insecure = conf->insecure,
                            .thumbprint = conf->thumbprint,
                            .timeout_s = conf->timeout_s,
                            .max_objects = conf->max_objects};
    struct vim_client *c = NULL;
    struct vim_changes hosts = {0};
    struct vsl_cert cert;
    int has_cert = 0;

    if (probe_certificate(p, &cert, &has_cert) < 0)
        goto out;
    int r = vim_client_new(&opts, &c);
    if (r < 0) {
        client_failed(p, r);
        goto out;
    }
    r = vim_connect(c);
    set_verified(p, r, has_cert);
    if (r < 0) {
        connect_failed(p, r, vim_client_error(c), &cert, has_cert);
        goto out;
    }
    put(p, p->src, "product",
        json_pack("{s:o, s:o, s:o, s:o}", "name", jtext(c->about), "version", jtext(c->version),
                  "build", jtext(c->build), "api_version", jtext(c->api_version)));
    if (!has_cert) {
        plain_http(p);
        goto out;
    }
    r = probe_login(p, c, NULL);
    if (r == -VSL_ENET || r == -VSL_ETLS)
        connect_failed(p, r, vim_client_error(c), &cert, has_cert);
    if (r < 0)
        goto out;
    r = probe_visible(p, c, &hosts);
    if (r < 0) {
        read_ended(p, "inventory", vim_client_error(c));
        goto logout;
    }
    /* No host list (its view refused): that is said already, and there is nothing to sample. */
    if (json_is_integer(json_object_get(json_object_get(p->src, "visible"), "hosts")))
        r = probe_hosts(p, c, &hosts, p->max_hosts, sink);
    /* Only a failure that ends a poll (session, network, memory) ends the probe; a read the
     * hosts' collect was refused (a fault, an object gone) is a problem, and the alarms are
     * still tried. */
    if (r < 0 && vim_poll_fatal(r)) {
        read_ended(p, "hosts", vim_client_error(c));
        goto logout;
    }
    if (r < 0)
        read_failed(p, NULL, "hosts", vim_gap_error(c), NULL);
    r = vim_collect_alarms(c, sink);
    if (r < 0)
        read_ended(p, "alarms", vim_client_error(c));
    else
        probe_alarms(p);
logout:
    vim_logout(c);
out:
    vim_changes_free(&hosts);
    vim_client_free(c);
}

static void probe_array(struct probe *p, const struct vim_sink *sink)
{
    const struct vsl_vcenter_conf *conf = p->conf;
    struct arr_opts opts = {.url = conf->url,
                            .ca_file = conf->ca_file,
                            .insecure = conf->insecure,
                            .thumbprint = conf->thumbprint,
                            .timeout_s = conf->timeout_s};
    struct arr_client *c = NULL;
    struct vsl_cert cert;
    int has_cert = 0;

    if (probe_certificate(p, &cert, &has_cert) < 0)
        goto out;
    int r = arr_client_new(&opts, &c);
    if (r < 0) {
        client_failed(p, r);
        goto out;
    }
    if (!has_cert) {
        set_verified(p, 0, has_cert);
        plain_http(p);
        goto out;
    }
    /* The login is the array's first request: a certificate the trust refuses fails it. */
    r = probe_login(p, NULL, c);
    set_verified(p, r, has_cert);
    if (r == -VSL_ENET || r == -VSL_ETLS)
        connect_failed(p, r, arr_client_error(c), &cert, has_cert);
    if (r < 0)
        goto out;
    r = arr_collect(c, sink);
    if (r < 0)
        problem(p, VSL_PROBE_UNREADABLE, NULL, "array", arr_client_error(c), NULL,
                "see the error: a Unisphere account with the Operator role reads pools, LUNs "
                "and ports (docs/vcenter-role.md, \"The Unity account\")");
    else
        put(p, p->src, "read",
                            json_pack("{s:I, s:I, s:I}", "pools", (json_int_t)p->pools, "luns",
                                      (json_int_t)p->luns, "ports", (json_int_t)p->ports));
    /* After a read that timed out or lost the connection, the logout would wait timeout =
     * again for nothing: the array expires the session itself. */
    if (r != -VSL_ENET)
        arr_logout(c);
out:
    arr_client_free(c);
}

static void probe_free(struct probe *p)
{
    for (size_t i = 0; i < p->n_hosts; i++) {
        free(p->hosts[i].moref);
        free(p->hosts[i].name);
        free(p->hosts[i].state);
        for (size_t k = 0; k < 3; k++)
            free(p->hosts[i].gap[k]);
    }
    free(p->hosts);
    free(p->alarms_gap);
}

/* The text report, written from the JSON one so that both say the same. */
static const char *str(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

static long long num(const json_t *o, const char *key)
{
    return json_integer_value(json_object_get(o, key));
}

static void print_trust(FILE *out, const json_t *src)
{
    const char *mode = str(src, "trust");
    const json_t *verified = json_object_get(src, "verified");
    int ok = json_is_true(verified);

    if (!mode)
        return;
    if (strcmp(mode, "insecure") && json_is_null(verified)) {
        fprintf(out, "  trust: not decided (no answer)\n");
        return;
    }
    if (!strcmp(mode, "thumbprint"))
        fprintf(out, "  trust: thumbprint = pinned: %s\n",
                ok ? "the certificate is the pinned one (its dates and issuer are not checked)"
                   : "the certificate is NOT the pinned one");
    else if (!strcmp(mode, "insecure"))
        fprintf(out, "  trust: NOT VERIFIED (insecure = true): anyone in the path can pose as "
                     "this server\n");
    else if (!strcmp(mode, "ca_file") || !strcmp(mode, "system"))
        fprintf(out, "  trust: %s %s\n", ok ? "verified with" : "NOT VERIFIED with",
                !strcmp(mode, "system") ? "the system's trust store" : "ca_file =");
    else
        fprintf(out, "  trust: %s\n", mode);
}

static void print_host(FILE *out, const json_t *h)
{
    static const char *const label[3] = {"options", "iSCSI bindings", "esxcli"};

    fprintf(out, "    %s:", str(h, "name"));
    for (size_t k = 0; k < 3; k++) {
        const json_t *rd = json_object_get(h, host_reads[k]);
        const char *sep = k ? ";" : "";
        if (json_is_true(json_object_get(rd, "read")) && k == 2)
            fprintf(out, "%s %s read (%lld devices, %lld claim rules)", sep, label[k],
                    num(rd, "rows"), num(rd, "claim_rules"));
        else if (json_is_true(json_object_get(rd, "read")))
            fprintf(out, "%s %s read (%lld)", sep, label[k], num(rd, "rows"));
        else if (str(rd, "error"))
            fprintf(out, "%s %s NOT READ", sep, label[k]);
        else
            fprintf(out, "%s %s not asked (%s)", sep, label[k],
                    k == 1 ? "no iSCSI adapter" : "no SAN LUN");
    }
    fprintf(out, "\n");
}

static void print_source(FILE *out, const json_t *src)
{
    const json_t *cert = json_object_get(src, "certificate");
    const json_t *login = json_object_get(src, "login");
    const json_t *product = json_object_get(src, "product");
    const json_t *vis = json_object_get(src, "visible");
    const json_t *hosts = json_object_get(src, "hosts");
    const json_t *alarms = json_object_get(src, "alarms");
    const json_t *read = json_object_get(src, "read");

    fprintf(out, "%s %s: %s\n", str(src, "kind"), str(src, "name"), str(src, "url"));
    if (json_is_object(cert)) {
        fprintf(out, "  certificate: %s\n", str(cert, "subject"));
        fprintf(out, "  issuer: %s%s\n", str(cert, "issuer"),
                json_is_true(json_object_get(cert, "self_signed")) ? " (self-signed)" : "");
        fprintf(out, "  valid: %s to %s%s\n", str(cert, "not_before"), str(cert, "not_after"),
                json_is_true(json_object_get(cert, "expired"))         ? " (EXPIRED)"
                : json_is_true(json_object_get(cert, "not_yet_valid")) ? " (NOT YET VALID)"
                                                                       : "");
        fprintf(out, "  thumbprint = %s\n", str(cert, "sha256"));
    } else if (json_object_get(src, "trust")) {
        fprintf(out, "  certificate: none (url = is http://: no TLS)\n");
    }
    if (str(src, "trust") && json_is_object(cert))
        print_trust(out, src);
    if (json_is_object(product))
        fprintf(out, "  product: %s (version %s, build %s), API %s\n", str(product, "name"),
                str(product, "version") ? str(product, "version") : "?",
                str(product, "build") ? str(product, "build") : "?",
                str(product, "api_version") ? str(product, "api_version") : "?");
    if (json_is_object(login) && json_is_true(json_object_get(login, "ok")))
        fprintf(out, "  login: %s: logged in\n", str(login, "user"));
    else if (json_is_true(json_object_get(login, "refused")))
        fprintf(out, "  login: %s: REFUSED\n", str(login, "user"));
    else if (json_is_object(login))
        fprintf(out, "  login: %s: no usable answer: %s\n", str(login, "user"),
                str(login, "error"));
    if (json_is_object(vis)) {
        fprintf(out, "  visible:");
        for (size_t i = 0; i < sizeof(visible) / sizeof(visible[0]); i++) {
            const json_t *v = json_object_get(vis, visible[i].key);
            if (json_is_integer(v))
                fprintf(out, "%s %lld %s", i ? "," : "", (long long)json_integer_value(v),
                        visible[i].key);
            else if (v)
                fprintf(out, "%s %s NOT READ", i ? "," : "", visible[i].key);
        }
        fprintf(out, "\n");
    }
    if (json_is_object(hosts)) {
        fprintf(out, "  hosts: per-host reads of %lld of %lld%s\n", num(hosts, "sampled"),
                num(hosts, "visible"),
                num(hosts, "sampled") < num(hosts, "visible") ? " (a sample: --hosts)" : "");
        const json_t *h;
        size_t i;
        json_array_foreach(json_object_get(hosts, "sample"), i, h)
            print_host(out, h);
    }
    if (json_is_object(alarms)) {
        if (json_is_true(json_object_get(alarms, "read")))
            fprintf(out, "  alarms: %lld alarms and %lld performance counters read\n",
                    num(alarms, "alarms"), num(alarms, "perf_counters"));
        else
            fprintf(out, "  alarms: NOT READ\n");
    }
    if (json_is_object(read))
        fprintf(out, "  read: %lld pools, %lld LUNs, %lld ports\n", num(read, "pools"),
                num(read, "luns"), num(read, "ports"));
}

static void print_problem(FILE *out, const json_t *pr)
{
    fprintf(out, "problem: %s %s: ", str(pr, "kind"), str(pr, "source"));
    if (str(pr, "object"))
        fprintf(out, "host %s: ", str(pr, "object"));
    fprintf(out, "%s: %s", str(pr, "what"), str(pr, "cause"));
    fprintf(out, "; fix: %s\n", str(pr, "fix"));
}

int vsl_probe(const struct vsl_config *cfg, const char *only, int max_hosts, int json, FILE *out)
{
    json_t *doc = json_object(), *sources = json_array(), *problems = json_array();
    int status = VSL_PROBE_OK, probed = 0;

    json_object_set_new(doc, "sources", sources);
    json_object_set_new(doc, "problems", problems);
    for (size_t i = 0; i < vsl_config_nsources(cfg); i++) {
        const struct vsl_vcenter_conf *conf = vsl_config_source(cfg, i);
        if (only && strcmp(only, conf->name))
            continue;
        probed++;
        struct probe p = {.conf = conf, .problems = problems, .max_hosts = max_hosts};
        struct vim_sink sink = sink_template;
        sink.ctx = &p;
        p.src = json_pack("{s:s, s:o, s:o}", "kind", conf->type ? "array" : "vcenter", "name",
                          jtext(conf->name), "url", jtext(conf->url));
        if (!p.src) {
            json_decref(doc);
            return -ENOMEM;
        }
        json_array_append_new(sources, p.src);
        if (conf->type)
            probe_array(&p, &sink);
        else
            probe_vcenter(&p, &sink);
        /* A part of the report missing is something not said: never an OK. */
        if (p.incomplete)
            set_status(&p, VSL_PROBE_UNREADABLE);
        json_object_set_new(p.src, "status", json_integer(p.status));
        if (p.incomplete)
            json_object_set_new(p.src, "incomplete", json_true());
        if (p.status > status)
            status = p.status;
        probe_free(&p);
    }
    if (only && probed == 0) {
        json_decref(doc);
        return -VSL_ENOTFOUND;
    }
    json_object_set_new(doc, "status", json_integer(status));
    if (json) {
        json_dumpf(doc, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        fprintf(out, "\n");
    } else {
        const json_t *v;
        size_t i;
        json_array_foreach(sources, i, v)
            print_source(out, v);
        json_array_foreach(problems, i, v)
            print_problem(out, v);
        /* From the status, not the list: a problem the list could not hold still counts. */
        size_t n = json_array_size(problems);
        if (status == VSL_PROBE_OK)
            fprintf(out, "everything readable\n");
        else if (n)
            fprintf(out, "%zu problem%s\n", n, n == 1 ? "" : "s");
        else
            fprintf(out, "problems not all reported (out of memory): run the probe again\n");
    }
    json_decref(doc);
    return status;
}
