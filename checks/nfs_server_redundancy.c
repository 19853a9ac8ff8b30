/* Check nfs-server-redundancy: a cluster whose NFS datastores all come from one NAS server
 * address, or (with the array known) from NAS servers all placed on one storage processor, where
 * the guide recommends two NAS servers, one on each storage processor (000 §3.8). One finding
 * per cluster. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "checks/check.h"

static const struct chk_param params[] = {
    {"min_datastores", 2, 1, 100000, "datastores",
     "judge a cluster that mounts at least this many NFS datastores (one datastore is on one "
     "server whatever you do)"},
    {0},
};

static const char cluster_type[] = "ClusterComputeResource";

/* What one cluster mounts over NFS. */
struct nfs_set {
    json_t *datastores;  /* [{name, moref, remote_host}], NULL until the first */
    const char *server;  /* the first known remote host */
    int servers;         /* 0, 1, or 2 for "more than one" */
    int unknown;         /* datastores whose server vCenter did not report */
    size_t last_ds;      /* the last datastore added, so each counts once */
    /* The SPs the datastores' NAS servers are placed on, where a configured array serves
     * them (est_datastore.nas_home_sp): the first, 0, 1 or 2 ("more than one"), and the
     * datastores whose NAS server's home SP is not known. */
    const char *sp, *sp_array;
    int sps, sp_unknown;
    /* A datastore on a single-SP array (UnityVSA): no placement can be on both SPs, so the
     * cluster's SPs are not judged; the first such array, for the evidence. */
    const char *one_sp_array;
    json_t *nas_servers; /* ["unity1/nas-spa-1", ...], each once */
};

static int is_nfs(const struct est_datastore *d)
{
    return d->type && (!strcmp(d->type, "NFS") || !strcmp(d->type, "NFS41"));
}

/* The index into e->entities of host h's cluster, or EST_NONE (a standalone host, or a parent
 * the snapshot does not name). */
static size_t cluster_of(const struct estate *e, const struct est_host *h)
{
    const struct est_entity *en = h->parent ? est_entity(e, h->parent) : NULL;

    if (!en || !en->type || strcmp(en->type, cluster_type))
        return EST_NONE;
    return (size_t)(en - e->entities);
}

static int add(struct nfs_set *s, size_t ds_index, const struct est_datastore *d)
{
    if (s->last_ds == ds_index)
        return 0;
    s->last_ds = ds_index;
    char why[1024];
    if (!s->datastores && !(s->datastores = json_array()))
        return -ENOMEM;
    /* A datastore whose NAS server is in doubt says why it has none (chk_nas_doubt()); one
     * whose server is known but pool is not has nothing to say here. */
    if (json_array_append_new(s->datastores,
                              json_pack("{s:s, s:s, s:s?, s:s?, s:s?, s:s?, s:s?}", "name", d->name,
                                        "moref", d->moref, "remote_host", d->nas_remote_host,
                                        "array", d->nas_array, "nas_server", d->nas_server,
                                        "home_sp", d->nas_home_sp, "nas_server_unknown",
                                        d->nas_server ? NULL
                                                      : chk_nas_doubt(d, why, sizeof(why)))))
        return -ENOMEM;
    if (!d->nas_home_sp || d->nas_array_sps == 1) {
        s->sp_unknown++;
        if (d->nas_home_sp && !s->one_sp_array)
            s->one_sp_array = d->nas_array;
    } else {
        char name[512];
        /* SP A of two arrays is two failure domains: the pair (array, home SP) is compared. */
        if (!s->sp) {
            s->sp = d->nas_home_sp;
            s->sp_array = d->nas_array;
            s->sps = 1;
        } else if (strcmp(s->sp, d->nas_home_sp) || strcmp(s->sp_array, d->nas_array)) {
            s->sps = 2;
        }
        snprintf(name, sizeof(name), "%s/%s", d->nas_array, d->nas_server ? d->nas_server : "?");
        if (!(s->nas_servers = chk_ev_add_name(s->nas_servers, name)))
            return -ENOMEM;
    }
    /* Host names are case-insensitive; two spellings of one address (a name and its IP) are
     * taken as two servers, so the rule never reports what it cannot be sure of. */
    if (!d->nas_remote_host) {
        s->unknown++;
    } else if (!s->server) {
        s->server = d->nas_remote_host;
        s->servers = 1;
    } else if (strcasecmp(s->server, d->nas_remote_host)) {
        s->servers = 2;
    }
    return 0;
}

/* Groups the NFS datastores by the clusters of the hosts that mount them (a datastore mounted
 * in two clusters counts in both). set has one entry per entity. */
static int group(const struct estate *e, struct nfs_set *set, const size_t *host_cluster)
{
    for (size_t i = 0; i < e->n_datastores; i++) {
        const struct est_datastore *d = &e->datastores[i];
        for (size_t m = 0; is_nfs(d) && m < d->n_mounts; m++) {
            const struct est_mount *mt = &d->mounts[m];
            size_t c = mt->host < e->n_hosts ? host_cluster[mt->host] : EST_NONE;
            if (c == EST_NONE || mt->mounted == 0)
                continue;
            int r = add(&set[c], i, d);
            if (r < 0)
                return r;
        }
    }
    return 0;
}

static int judge(struct chk_ctx *ctx, const struct est_entity *cl, struct nfs_set *s,
                 double min_ds)
{
    size_t n = json_array_size(s->datastores);
    const char *name = cl->name ? cl->name : cl->moref;
    char msg[1024], list[512] = "";

    /* One address is one NAS server whatever the array says; several addresses are several
     * servers, and with the array known they must be placed on both SPs too. */
    int one_sp = s->servers == 2 && !s->unknown && !s->sp_unknown && s->sps == 1;
    if ((double)n < min_ds || s->unknown || (s->servers != 1 && !one_sp))
        return 0;
    for (size_t k = 0; k < n && k < 3; k++) {
        size_t len = strlen(list);
        snprintf(list + len, sizeof(list) - len, "%s%s", k ? ", " : "",
                 json_string_value(json_object_get(json_array_get(s->datastores, k), "name")));
    }
    const char *how = NULL, *sp = s->sp ? est_sp_name(s->sp, &how) : NULL;
    if (one_sp) {
        char servers[512] = "";
        size_t k;
        json_t *x;
        json_array_foreach(s->nas_servers, k, x)
        {
            size_t len = strlen(servers);
            snprintf(servers + len, sizeof(servers) - len, "%s%s", k ? ", " : "",
                     json_string_value(x));
        }
        snprintf(msg, sizeof(msg),
                 "cluster %s mounts %zu NFS datastore(s) (%s%s) from NAS servers %s, all "
                 "placed on %s (homeSP %s): the guide recommends two NAS servers, one on each "
                 "storage processor, for availability and performance",
                 name, n, list, n > 3 ? ", ..." : "", servers, sp ? sp : s->sp, s->sp);
    } else {
        snprintf(msg, sizeof(msg),
                 "cluster %s mounts %zu NFS datastore(s) (%s%s), all from one NAS server, %s: "
                 "the guide recommends two NAS servers, one on each storage processor, for "
                 "availability and performance",
                 name, n, list, n > 3 ? ", ..." : "", s->server);
    }
    char one_sp_why[256] = "";
    if (s->one_sp_array)
        snprintf(one_sp_why, sizeof(one_sp_why),
                 "array %s has one storage processor: the NAS servers' home SPs are not judged",
                 s->one_sp_array);
    json_t *ev = json_pack("{s:s?, s:O, s:i, s:f, s:s?, s:s?, s:O?, s:s, s:s?}", "nas_server",
                           one_sp ? NULL : s->server, "datastores", s->datastores, "nas_servers",
                           one_sp ? (int)json_array_size(s->nas_servers) : 1, "min_datastores",
                           min_ds, "home_sp_id", s->sps == 1 && !s->sp_unknown ? s->sp : NULL,
                           "home_sp", s->sps == 1 && !s->sp_unknown ? sp : NULL,
                           "array_nas_servers", s->nas_servers, "judged_by",
                           one_sp ? "the NAS servers' home SPs (the array's nasServer.homeSP)"
                                  : "the datastores' server address (nas.remoteHost)",
                           "storage_processors_unknown", one_sp_why[0] ? one_sp_why : NULL);
    return chk_emit_object(ctx, "cluster", cl->moref, name, SEV_WARNING, msg, ev);
}

static int run(struct chk_ctx *ctx, const struct estate *e)
{
    double min_ds = chk_param(ctx, "min_datastores");
    size_t *host_cluster = malloc((e->n_hosts ? e->n_hosts : 1) * sizeof(*host_cluster));
    struct nfs_set *set = calloc(e->n_entities ? e->n_entities : 1, sizeof(*set));
    int r = 0;

    if (!host_cluster || !set) {
        r = -ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < e->n_hosts; i++)
        host_cluster[i] = cluster_of(e, &e->hosts[i]);
    for (size_t c = 0; c < e->n_entities; c++)
        set[c].last_ds = EST_NONE;
    r = group(e, set, host_cluster);
    for (size_t c = 0; r == 0 && c < e->n_entities; c++)
        if (set[c].datastores)
            r = judge(ctx, &e->entities[c], &set[c], min_ds);
out:
    for (size_t c = 0; set && c < e->n_entities; c++) {
        json_decref(set[c].datastores);
        json_decref(set[c].nas_servers);
    }
    free(set);
    free(host_cluster);
    return r;
}

/* The seeds' words this check rests on, verbatim (tests/unit/test_registry.c). */
static const struct chk_source sources[] = {
    {"000_5bd48962a767ee9e.txt", "§3.8",
     "Additionally, creating two NAS servers (one on each SP) on the Dell EMC Unity platform where "
     "NFS Datastores are served is recommended for both availability and increased performance."},
    {0},
};

const struct check chk_nfs_server_redundancy = {
    .id = "nfs-server-redundancy",
    .title = "A cluster's NFS datastores come from more than one NAS server",
    .severity = SEV_WARNING,
    .rationale =
        "The guide recommends serving NFS datastores from two NAS servers, one on each storage "
        "processor, for availability and for performance: with every datastore of a cluster on "
        "one NAS server, one storage processor carries all of the cluster's NFS I/O and a "
        "failure or failover of that server takes every NFS datastore of the cluster with it. "
        "A cluster is judged when it mounts at least min_datastores NFS (v3 or 4.1) datastores "
        "(2 by default: a single datastore lives on one server whatever you do); it is reported "
        "when all of them name the same server address (nas.remoteHost, compared without "
        "regard to case). A datastore counts in every cluster one of whose hosts mounts it. "
        "With a Unity configured ([array NAME]), each datastore is matched to the NAS server "
        "one of whose interfaces has its address (Unity fileInterface.ipAddress -> "
        "nasServer.homeSP; IPv6 spelling and case aside), leaving out servers that say they are "
        "replication destinations; of several at one address, the one exporting the share that "
        "holds its path (the longest), else the only one on an array holding a LUN of the "
        "vCenter's datastores; otherwise the datastore's evidence "
        "says why it has none (nas_server_unknown): a cluster whose datastores come from "
        "several NAS servers that are "
        "all placed on one storage processor is reported too, naming that SP; the SP judged "
        "is the home SP (where the server is placed), not the one it runs on after a "
        "failover; SP A of two arrays are two storage processors. "
        "Not judged by SP: a NAS server on an array whose ports are all on one storage "
        "processor (UnityVSA), where no second SP exists. "
        "Not judged: clusters with a datastore whose server vCenter did not report, hosts "
        "outside a cluster, several addresses of which one is on no configured array or its NAS "
        "server is in doubt (their SPs are unknown), and two addresses of one NAS server (a name and an IP), which look "
        "like two servers: vCenter cannot tell them apart, so the check errs on the side of "
        "silence.",
    .reference = "000_5bd48962a767ee9e.txt §3.8 (VMware NFS datastores: two NAS servers, one on "
                 "each SP)",
    .sources = sources,
    .own =
        "vslint judges per cluster of hosts that mounts at least min_datastores (2) NFS "
        "datastores: all of them on one server address (what vCenter shows) is the finding, "
        "and, with a Unity configured, several NAS servers whose home SPs (nasServer.homeSP) "
        "are all one SP. The warning severity is vslint's.",
    .remediation =
        "On the array, create a second NAS server on the other storage processor (Unisphere: "
        "Storage > File > NAS Servers > Add, SP B) and a VMware NFS datastore on it (Storage > "
        "VMware > Datastores), mount it on every host of the cluster (esxcli storage nfs add "
        "--host=<second-nas-server> --share=/<export> --volume-name=<datastore>, or PowerCLI "
        "New-Datastore -Nfs -VMHost <host> -Name <datastore> -NfsHost <second-nas-server> -Path "
        "/<export>), and move about half of the VMs there with Storage vMotion (Move-VM -VM "
        "<vm> -Datastore <datastore>).",
    .params = params,
    .run = run,
};
