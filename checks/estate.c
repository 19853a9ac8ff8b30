/* The estate's memory and lookups: a chunked bump allocator that owns every string and array
 * of an estate, so a 20,000-VM snapshot is a few hundred allocations and one est_free(). */
#include <assert.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "checks/estate-arena.h"
#include "checks/estate.h"

/* Chunks start small, so the estate of a test or a small site costs a few KiB, and double up
 * to a cap, so a large one needs few of them. */
#define CHUNK_FIRST ((size_t)4096)
#define CHUNK_MAX   ((size_t)256 * 1024)

struct chunk {
    struct chunk *next;
    size_t used, size;  /* bytes of data */
    max_align_t data[]; /* the element type only gives data the strictest alignment */
};

struct arena {
    struct chunk *head; /* the chunk being filled; the others are full or dedicated */
    size_t next_size;
    int failed;
};

static struct chunk *chunk_new(size_t size)
{
    struct chunk *c;

    if (size > SIZE_MAX - sizeof(*c))
        return NULL;
    /* calloc: what est_alloc hands out is zeroed, and bump memory is never handed out twice. */
    c = calloc(1, sizeof(*c) + size);
    if (c)
        c->size = size;
    return c;
}

void *est_alloc(struct estate *e, size_t n)
{
    const size_t align = alignof(max_align_t);
    struct arena *a;
    struct chunk *c;
    void *p;

    assert(e && e->arena);
    a = e->arena;
    if (n == 0)
        return NULL;
    if (n > SIZE_MAX - align) {
        a->failed = 1;
        return NULL;
    }
    n = (n + align - 1) & ~(align - 1);
    c = a->head;
    if (c && c->size - c->used >= n) {
        p = (char *)c->data + c->used;
        c->used += n;
        return p;
    }
    if (n > a->next_size / 4) {
        /* A large array (20,000 VMs) gets a chunk of its own, linked behind the current one so
         * the room left in that one is not wasted. */
        c = chunk_new(n);
        if (!c) {
            a->failed = 1;
            return NULL;
        }
        c->used = n;
        if (a->head) {
            c->next = a->head->next;
            a->head->next = c;
        } else {
            a->head = c;
        }
        return c->data;
    }
    c = chunk_new(a->next_size);
    if (!c) {
        a->failed = 1;
        return NULL;
    }
    if (a->next_size < CHUNK_MAX)
        a->next_size *= 2;
    c->next = a->head;
    a->head = c;
    c->used = n;
    return c->data;
}

const char *est_strndup(struct estate *e, const char *s, size_t n)
{
    char *d;

    if (!s)
        return NULL;
    if (n == SIZE_MAX) {
        ((struct arena *)e->arena)->failed = 1;
        return NULL;
    }
    d = est_alloc(e, n + 1);
    if (!d)
        return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

const char *est_strdup(struct estate *e, const char *s)
{
    return s ? est_strndup(e, s, strlen(s)) : NULL;
}

int est_failed(const struct estate *e)
{
    return ((const struct arena *)e->arena)->failed;
}

struct estate *est_new(const char *vcenter)
{
    struct arena *a = calloc(1, sizeof(*a));
    struct estate tmp = {.arena = a};
    struct estate *e;

    assert(vcenter);
    if (!a)
        return NULL;
    a->next_size = CHUNK_FIRST;
    /* The estate itself lives in its arena: est_free() is then one walk over the chunks. */
    e = est_alloc(&tmp, sizeof(*e));
    if (!e) {
        est_free(&tmp);
        return NULL;
    }
    e->arena = a;
    e->vcenter = est_strdup(e, vcenter);
    if (!e->vcenter) {
        est_free(e);
        return NULL;
    }
    return e;
}

void est_free(struct estate *e)
{
    struct arena *a;
    struct chunk *c, *next;

    if (!e)
        return;
    a = e->arena; /* read before e, which may sit in one of the chunks, goes away */
    if (!a)
        return;
    for (c = a->head; c; c = next) {
        next = c->next;
        free(c);
    }
    free(a);
}

const struct est_option *est_option(const struct est_option *opts, size_t n, const char *key)
{
    size_t i;

    assert(key);
    /* An adapter or target has a handful of options: a scan beats building anything. */
    for (i = 0; i < n; i++) {
        if (opts[i].key && strcmp(opts[i].key, key) == 0)
            return &opts[i];
    }
    return NULL;
}

static const struct est_gap *find_gap(const struct est_gap *gaps, size_t n, const char *what)
{
    assert(what);
    for (size_t i = 0; i < n; i++)
        if (gaps[i].what && !strcmp(gaps[i].what, what))
            return &gaps[i];
    return NULL;
}

const struct est_gap *est_gap(const struct est_host *h, const char *what)
{
    return find_gap(h->gaps, h->n_gaps, what);
}

void est_trimmed(const char *s, char *out, size_t size)
{
    size_t n;

    assert(out && size > 0);
    out[0] = '\0';
    if (!s)
        return;
    while (*s == ' ')
        s++;
    n = strlen(s);
    while (n && s[n - 1] == ' ')
        n--;
    if (n >= size)
        n = size - 1;
    memcpy(out, s, n);
    out[n] = '\0';
}

static int entity_cmp(const void *key, const void *item)
{
    const struct est_entity *en = item;
    return strcmp(key, en->moref ? en->moref : "");
}

const struct est_entity *est_entity(const struct estate *e, const char *moref)
{
    if (!moref || e->n_entities == 0)
        return NULL;
    return bsearch(moref, e->entities, e->n_entities, sizeof(*e->entities), entity_cmp);
}

const struct est_gap *est_vcenter_gap(const struct estate *e, const char *what)
{
    return find_gap(e->gaps, e->n_gaps, what);
}

/* Adapter types as vCenter names them (HostHostBusAdapter's subtypes). A type missing here is
 * unknown, never assumed to be either. */
static const struct {
    const char *type;
    struct est_hba_kind kind;
} hba_kinds[] = {
    {"HostFibreChannelHba", {1, "fc"}},
    {"HostFibreChannelOverEthernetHba", {1, "fcoe"}},
    {"HostInternetScsiHba", {1, "iscsi"}},
    {"HostRdmaHba", {1, NULL}}, /* NVMe over RDMA */
    {"HostTcpHba", {1, NULL}},  /* NVMe over TCP */
    {"HostSerialAttachedHba", {0, "sas"}},
    {"HostParallelScsiHba", {0, "parallel"}},
    {"HostBlockHba", {0, NULL}},
    {"HostPcieHba", {0, NULL}}, /* local NVMe */
};

struct est_hba_kind est_hba_kind(const struct est_hba *a)
{
    for (size_t i = 0; a && a->type && i < sizeof(hba_kinds) / sizeof(hba_kinds[0]); i++)
        if (!strcmp(a->type, hba_kinds[i].type))
            return hba_kinds[i].kind;
    return (struct est_hba_kind){EST_UNKNOWN, NULL};
}

const struct est_hba *est_path_hba(const struct est_host *h, const struct est_path *p)
{
    return p->hba < h->n_hbas ? &h->hbas[p->hba] : NULL;
}

enum est_locality est_lun_locality(const struct est_host *h, const struct est_lun *l)
{
    size_t san = 0, local = 0;

    /* VMW_SATP_LOCAL claims the devices ESXi itself takes for local, whatever localDisk says. */
    if (l->satp && !strcmp(l->satp, "VMW_SATP_LOCAL"))
        return EST_LOC_LOCAL;
    if (l->local != EST_UNKNOWN)
        return l->local ? EST_LOC_LOCAL : EST_LOC_SAN;
    /* No localDisk answer (some controllers leave it out): the adapters decide, where they can.
     * One path through a local controller is a local disk; two through local SAS controllers
     * may be a shared SAS array, so that stays unknown. */
    for (size_t i = 0; i < l->n_paths; i++) {
        int kind = est_hba_kind(est_path_hba(h, &l->paths[i])).san;
        san += kind == 1;
        local += kind == 0;
    }
    if (l->n_paths == 1 && local == 1)
        return EST_LOC_LOCAL;
    if (l->n_paths > 0 && san == l->n_paths)
        return EST_LOC_SAN;
    return EST_LOC_UNKNOWN;
}

enum est_plugin est_lun_plugin(const struct est_lun *l)
{
    if (l->multipath_plugin) {
        if (!strcmp(l->multipath_plugin, "NMP"))
            return EST_PLUGIN_NMP;
        if (!strcmp(l->multipath_plugin, "HPP"))
            return EST_PLUGIN_HPP;
        return EST_PLUGIN_OTHER;
    }
    /* A snapshot taken before vslint read the plug-in topology: multipathInfo lists only NMP
     * and HPP devices, and only NMP has SATPs and VMW_PSP_ policies. */
    if (l->policy_type && !strcmp(l->policy_type, "HostMultipathInfoHppLogicalUnitPolicy"))
        return EST_PLUGIN_HPP;
    if (l->satp || (l->psp && !strncmp(l->psp, "VMW_PSP_", strlen("VMW_PSP_"))))
        return EST_PLUGIN_NMP;
    return EST_PLUGIN_UNKNOWN;
}

const struct est_lun *est_host_san_lun(const struct est_host *h, size_t *i)
{
    for (; *i < h->n_luns; (*i)++) {
        const struct est_lun *l = &h->luns[*i];
        if (l->canonical_name && est_lun_locality(h, l) == EST_LOC_SAN)
            return l;
    }
    return NULL;
}

const struct est_lun *est_next_san_lun(const struct estate *e, struct est_san_pos *pos,
                                       const struct est_host **host)
{
    for (; pos->host < e->n_hosts; pos->host++, pos->lun = 0) {
        const struct est_lun *l = est_host_san_lun(&e->hosts[pos->host], &pos->lun);
        if (l) {
            *host = &e->hosts[pos->host];
            pos->lun++; /* the next call starts after it */
            return l;
        }
    }
    return NULL;
}
