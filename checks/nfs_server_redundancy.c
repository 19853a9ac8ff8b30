/* Check nfs-server-redundancy: a cluster whose NFS datastores all come from one NAS server
 * address, where the guide recommends two NAS servers, one on each storage processor (000 §3.8).
 * One finding per cluster. */
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
    if (!s->datastores && !(s->datastores = json_array()))
        return -ENOMEM;
    if (json_array_append_new(s->datastores,
                              json_pack("{s:s, s:s, s:s?}", "name", d->name, "moref", d->moref,
                                        "remote_host", d->nas_remote_host)))
        return -ENOMEM;
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

    if ((double)n < min_ds || s->servers != 1 || s->unknown)
        return 0;
    for (size_t k = 0; k < n && k < 3; k++) {
        size_t len = strlen(list);
        snprintf(list + len, sizeof(list) - len, "%s%s", k ? ", " : "",
                 json_string_value(json_object_get(json_array_get(s->datastores, k), "name")));
    }
    snprintf(msg, sizeof(msg),
             "cluster %s mounts %zu NFS datastore(s) (%s%s), all from one NAS server, %s: the "
             "guide recommends two NAS servers, one on each storage processor, for "
             "availability and performance",
             name, n, list, n > 3 ? ", ..." : "", s->server);
    json_t *ev = json_pack("{s:s, s:O, s:i, s:f}", "nas_server", s->server, "datastores",
                           s->datastores, "nas_servers", 1, "min_datastores", min_ds);
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
    for (size_t c = 0; set && c < e->n_entities; c++)
        json_decref(set[c].datastores);
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
        "Not judged: clusters with a datastore whose server vCenter did not report, hosts "
        "outside a cluster, and two addresses of one NAS server (a name and an IP), which look "
        "like two servers: vCenter cannot tell them apart, so the check errs on the side of "
        "silence.",
    .reference = "000_5bd48962a767ee9e.txt §3.8 (VMware NFS datastores: two NAS servers, one on "
                 "each SP)",
    .sources = sources,
    .own =
        "vslint judges per cluster of hosts that mounts at least min_datastores (2) NFS "
        "datastores, and only what vCenter shows, each datastore's server address: all of them on "
        "one address is the finding. The warning severity is vslint's.",
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
