/* `vslint record --anonymize`: two passes over a capture's answers, the first learning the
 * names and WWNs (and every other value, to know which names are also API words), the second
 * replacing them, IQNs and IPv4 addresses in every request and answer alike. */
#define _GNU_SOURCE /* memmem */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "util/anon.h"
#include "util/buf.h"
#include "util/keymap.h"

struct learned {
    char *s;          /* owned, unescaped */
    const char *kind; /* static: "host", "vm", ... */
};

struct ip_node {
    int parent;       /* index of the parent node, -1 for an address's first octet */
    int orig, mapped; /* the octet and what it became */
    int children;     /* how many octets under it were mapped so far */
};

/* An IPv6 address's first 64 bits (parent -1) or its interface id under one of them. */
struct ip6_node {
    int parent;
    uint64_t orig, mapped;
    uint64_t children; /* how many interface ids under this prefix were mapped so far */
};

struct vsl_anon {
    struct learned *names; /* owned, the first pass's names */
    size_t n_names, cap_names;
    char **others; /* owned strings: every other text value the answers hold */
    size_t n_others, cap_others;
    uint64_t *wwns;
    size_t n_wwns, cap_wwns;
    /* Sealed: keys[i] -> vals[i] through map, whose entries point at them. */
    char **keys, **vals; /* owned */
    size_t n_keys, cap_keys, cap_vals, maxkey;
    struct vsl_keymap map;
    unsigned char pairs[65536 / 8]; /* the first two bytes of some key */
    /* Filled while applying, so the same IQN or address always gets the same token. */
    char **iqns; /* owned */
    size_t n_iqns, cap_iqns;
    struct ip_node *ips;
    size_t n_ips, cap_ips;
    int roots;
    struct ip6_node *ip6s;
    size_t n_ip6s, cap_ip6s;
    uint64_t prefixes6; /* how many IPv6 /64s were mapped so far */
    struct vsl_anon_stats stats;
};

int vsl_anon_new(struct vsl_anon **out)
{
    *out = calloc(1, sizeof(**out));
    return *out ? 0 : -ENOMEM;
}

static void free_strv(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

void vsl_anon_free(struct vsl_anon *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->n_names; i++)
        free(a->names[i].s);
    free(a->names);
    free_strv(a->others, a->n_others);
    free(a->wwns);
    free_strv(a->keys, a->n_keys);
    free_strv(a->vals, a->n_keys);
    vsl_keymap_free(&a->map);
    free_strv(a->iqns, a->n_iqns);
    free(a->ips);
    free(a->ip6s);
    free(a);
}

void vsl_anon_stats(const struct vsl_anon *a, struct vsl_anon_stats *s)
{
    *s = a->stats;
}

static int push_str(char ***v, size_t *n, size_t *cap, const char *s, size_t len)
{
    int r = vsl_grow(v, cap, *n, sizeof(char *), 64);
    if (r < 0)
        return r;
    if (!((*v)[*n] = strndup(s, len)))
        return -ENOMEM;
    (*n)++;
    return 0;
}

/* The text at s (len bytes) with XML's entities decoded, into a new string. */
static char *xml_unescape(const char *s, size_t len)
{
    static const struct {
        const char *ent;
        char c;
    } ents[] = {{"&amp;", '&'},   {"&lt;", '<'},   {"&gt;", '>'}, {"&quot;", '"'},
                {"&apos;", '\''}, {"&#39;", '\''}, {"&#34;", '"'}};
    char *out = malloc(len + 1);
    size_t o = 0;

    if (!out)
        return NULL;
    for (size_t i = 0; i < len;) {
        size_t k;
        for (k = 0; k < sizeof(ents) / sizeof(ents[0]); k++) {
            size_t n = strlen(ents[k].ent);
            if (len - i >= n && !memcmp(s + i, ents[k].ent, n)) {
                out[o++] = ents[k].c;
                i += n;
                break;
            }
        }
        if (k == sizeof(ents) / sizeof(ents[0]))
            out[o++] = s[i++];
    }
    out[o] = '\0';
    return out;
}

static int add_name(struct vsl_anon *a, char *s, const char *kind)
{
    int r = vsl_grow(&a->names, &a->cap_names, a->n_names, sizeof(*a->names), 64);
    if (r < 0) {
        free(s);
        return r;
    }
    a->names[a->n_names++] = (struct learned){.s = s, .kind = kind};
    return 0;
}

static int add_wwn(struct vsl_anon *a, uint64_t v)
{
    int r = vsl_grow(&a->wwns, &a->cap_wwns, a->n_wwns, sizeof(*a->wwns), 16);
    if (r == 0)
        a->wwns[a->n_wwns++] = v;
    return r;
}

/* The token kind of a managed object type's names. */
static const char *kind_of(const char *type, size_t len)
{
    static const struct {
        const char *type, *kind;
    } kinds[] = {
        {"HostSystem", "host"},
        {"VirtualMachine", "vm"},
        {"Datastore", "ds"},
        {"StoragePod", "pod"},
        {"ClusterComputeResource", "cluster"},
        {"ComputeResource", "cluster"},
        {"Datacenter", "dc"},
        {"Folder", "folder"},
        {"ResourcePool", "rp"},
        {"VirtualApp", "vapp"},
        {"VmwareDistributedVirtualSwitch", "dvs"},
        {"DistributedVirtualSwitch", "dvs"},
        {"DistributedVirtualPortgroup", "pg"},
        {"Network", "net"},
    };
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
        if (strlen(kinds[i].type) == len && !memcmp(kinds[i].type, type, len))
            return kinds[i].kind;
    return "name";
}

/* Element text that holds a name or an address, never an API word: not a stop-list source. */
static int names_element(const char *el, size_t n)
{
    static const char *const els[] = {"name",     "displayName", "hostName",   "remoteHost",
                                      "fileName", "vmPathName",  "remotePath", "val"};
    for (size_t i = 0; i < sizeof(els) / sizeof(els[0]); i++)
        if (strlen(els[i]) == n && !memcmp(els[i], el, n))
            return 1;
    return 0;
}

static int learn_xml(struct vsl_anon *a, const char *s, size_t len)
{
    const char *end = s + len, *p = s;
    const char *el = NULL, *obj_type = NULL;
    size_t el_len = 0, obj_len = 0;
    int prop_is_name = 0, r = 0;

    while (p < end && r == 0) {
        const char *lt = memchr(p, '<', (size_t)(end - p));
        if (!lt)
            break;
        /* Text between the last open tag and this '<'. */
        if (el && lt > p) {
            size_t n = (size_t)(lt - p);
            if (el_len == 4 && !memcmp(el, "name", 4) && n == 4 && !memcmp(p, "name", 4)) {
                prop_is_name = 1;
            } else if (el_len == 4 && !memcmp(el, "name", 4)) {
                prop_is_name = 0;
            } else if (el_len == 3 && !memcmp(el, "val", 3) && prop_is_name) {
                char *u = xml_unescape(p, n);
                r = u ? add_name(a, u, kind_of(obj_type, obj_len)) : -ENOMEM;
                prop_is_name = 0;
            } else if (el_len > 13 && !memcmp(el + el_len - 13, "WorldWideName", 13)) {
                char *e = NULL;
                char num[32];
                snprintf(num, sizeof(num), "%.*s", (int)(n < 31 ? n : 31), p);
                long long v = strtoll(num, &e, 10);
                if (e && !*e && e != num)
                    r = add_wwn(a, (uint64_t)v);
            } else if (!names_element(el, el_len) && n < 256) {
                char *u = xml_unescape(p, n);
                r = u ? push_str(&a->others, &a->n_others, &a->cap_others, u, strlen(u)) : -ENOMEM;
                free(u);
            }
        }
        const char *gt = memchr(lt, '>', (size_t)(end - lt));
        if (!gt)
            break;
        el = NULL;
        if (lt[1] != '/' && lt[1] != '?' && lt[1] != '!' && gt[-1] != '/') {
            const char *q = lt + 1, *name = q;
            while (q < gt && *q != ' ' && *q != '\t' && *q != '\n')
                if (*q++ == ':')
                    name = q;
            el = name;
            el_len = (size_t)(q - name);
            if (el_len == 3 && !memcmp(el, "obj", 3)) {
                const char *t = memmem(lt, (size_t)(gt - lt), "type=\"", 6);
                if (t) {
                    obj_type = t + 6;
                    const char *qe = memchr(obj_type, '"', (size_t)(gt - obj_type));
                    obj_len = qe ? (size_t)(qe - obj_type) : 0;
                }
            }
        }
        p = gt + 1;
    }
    return r;
}

/* "50:06:01:60:C7:E0:1E:49" or 16 hex digits -> v; 0 when it is neither. */
static int parse_wwn(const char *s, size_t len, uint64_t *v)
{
    int digits = 0;

    *v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == ':')
            continue;
        if (!isxdigit((unsigned char)s[i]) || digits == 16)
            return 0;
        *v = *v << 4 |
             (uint64_t)(isdigit((unsigned char)s[i]) ? s[i] - '0'
                                                     : tolower((unsigned char)s[i]) - 'a' + 10);
        digits++;
    }
    return digits == 16;
}

static int learn_json(struct vsl_anon *a, const char *path, const json_t *j)
{
    const char *key;
    json_t *v;
    size_t i;
    int r = 0;

    if (json_is_array(j)) {
        json_array_foreach(j, i, v) if ((r = learn_json(a, path, v)) < 0) return r;
        return 0;
    }
    if (!json_is_object(j))
        return 0;
    json_object_foreach((json_t *)j, key, v)
    {
        if (json_is_string(v)) {
            const char *s = json_string_value(v);
            size_t n = json_string_length(v);
            if (!strcmp(key, "name")) {
                char *copy = strndup(s, n);
                const char *kind = strstr(path, "/pool")  ? "pool"
                                   : strstr(path, "/lun") ? "lun"
                                                          : "name";
                r = copy ? add_name(a, copy, kind) : -ENOMEM;
            } else if (!strcmp(key, "wwn") && strstr(path, "fcPort")) {
                /* node:port, 16 bytes, or one WWN of 8. */
                uint64_t w;
                if (n == 47 && parse_wwn(s, 23, &w) && (r = add_wwn(a, w)) == 0 &&
                    parse_wwn(s + 24, 23, &w))
                    r = add_wwn(a, w);
                else if (parse_wwn(s, n, &w))
                    r = add_wwn(a, w);
            } else if (n < 256) {
                r = push_str(&a->others, &a->n_others, &a->cap_others, s, n);
            }
        } else {
            r = learn_json(a, path, v);
        }
        if (r < 0)
            return r;
    }
    return 0;
}

int vsl_anon_learn(struct vsl_anon *a, int json, const char *path, const char *body, size_t len)
{
    if (!json)
        return learn_xml(a, body, len);
    json_t *j = json_loadb(body, len, 0, NULL);
    if (!j)
        return 0; /* not JSON (an error page): nothing to learn, it is still replaced in */
    int r = learn_json(a, path, j);
    json_decref(j);
    return r;
}

int vsl_anon_name(struct vsl_anon *a, const char *name, const char *kind)
{
    char *copy = strdup(name);
    return copy ? add_name(a, copy, kind) : -ENOMEM;
}

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

static int cmp_learned(const void *x, const void *y)
{
    return strcmp(((const struct learned *)x)->s, ((const struct learned *)y)->s);
}

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

static int add_key(struct vsl_anon *a, const char *key, const char *val)
{
    size_t n = strlen(key);
    int r;

    /* The forms of one name that escaping leaves alike are one key. */
    if (a->n_keys && !strcmp(a->keys[a->n_keys - 1], key))
        return 0;
    if ((r = vsl_grow(&a->keys, &a->cap_keys, a->n_keys, sizeof(char *), 64)) < 0)
        return r;
    if ((r = vsl_grow(&a->vals, &a->cap_vals, a->n_keys, sizeof(char *), 64)) < 0)
        return r;
    a->keys[a->n_keys] = strdup(key);
    a->vals[a->n_keys] = strdup(val);
    if (!a->keys[a->n_keys] || !a->vals[a->n_keys]) {
        free(a->keys[a->n_keys]);
        free(a->vals[a->n_keys]);
        return -ENOMEM;
    }
    a->n_keys++;
    if (n > a->maxkey)
        a->maxkey = n;
    if (n >= 2)
        a->pairs[((unsigned char)key[0] << 8 | (unsigned char)key[1]) / 8] |=
            (unsigned char)(1u << (((unsigned char)key[0] << 8 | (unsigned char)key[1]) % 8));
    return 0;
}

/* s with XML's special characters written as f says: & < > " ' in that order. */
static int escape(struct vsl_buf *b, const char *s, const char *const f[5])
{
    static const char special[] = "&<>\"'";
    int r = 0;
    vsl_buf_reset(b);
    for (; *s && r == 0; s++) {
        const char *e = strchr(special, *s);
        r = e ? vsl_buf_addstr(b, f[e - special]) : vsl_buf_add(b, s, 1);
    }
    return r;
}

/* A name and the ways it is written in the answers: as it is, escaped once for XML text (the
 * quotes as entities or not), escaped twice (the esxcli answer is an XML document inside XML
 * text), and escaped for JSON. */
static int add_name_forms(struct vsl_anon *a, const char *name, const char *token)
{
    static const char *const forms[][5] = {
        {"&amp;", "&lt;", "&gt;", "\"", "'"},
        {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"},
        {"&amp;", "&lt;", "&gt;", "&#34;", "&#39;"},
        {"&amp;amp;", "&amp;lt;", "&amp;gt;", "\"", "'"},
        {"&amp;amp;", "&amp;lt;", "&amp;gt;", "&amp;quot;", "&amp;apos;"},
        {"&amp;amp;", "&amp;lt;", "&amp;gt;", "&amp;#34;", "&amp;#39;"},
    };
    struct vsl_buf b;
    int r = add_key(a, name, token);

    vsl_buf_init(&b, 1 << 16);
    for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]) && r == 0; i++) {
        r = escape(&b, name, forms[i]);
        if (r == 0 && b.len)
            r = add_key(a, b.data, token);
    }
    if (r == 0 && strpbrk(name, "\"\\")) {
        vsl_buf_reset(&b);
        r = vsl_buf_addjson(&b, name, strlen(name));
        if (r == 0 && b.len > 2) {
            b.data[b.len - 1] = '\0';
            r = add_key(a, b.data + 1, token);
        }
    }
    vsl_buf_free(&b);
    return r;
}

static int is_ipv4(const char *s, size_t len, int oct[4], size_t *used);
static int is_ipv6(const char *s, size_t len, uint64_t v[2], size_t *used);

/* Whether a learned name stays as it is: one that is too short, only digits, an address, an
 * IQN, a default folder or a word the answers use elsewhere cannot be replaced safely. */
static int keep_name(const struct vsl_anon *a, const char *s)
{
    static const char *const folders[] = {"vm",          "host",      "datastore", "network",
                                          "Datacenters", "Resources", NULL};
    size_t n = strlen(s), used;
    int oct[4];
    uint64_t v6[2];

    if (n < 2 || strspn(s, "0123456789") == n || !strncmp(s, "iqn.", 4))
        return 1;
    if (is_ipv4(s, n, oct, &used) && used == n)
        return 1; /* an address: the address mapping replaces it, the same everywhere */
    if (is_ipv6(s, n, v6, &used) && used == n)
        return 1;
    for (size_t i = 0; folders[i]; i++)
        if (!strcmp(folders[i], s))
            return 1;
    return a->n_others && bsearch(&s, a->others, a->n_others, sizeof(char *), cmp_str);
}

struct kind_count {
    const char *kind;
    int n;
};

int vsl_anon_seal(struct vsl_anon *a)
{
    struct kind_count counts[16] = {{NULL, 0}};
    char token[96];
    int r = 0;

    if (a->n_others)
        qsort(a->others, a->n_others, sizeof(char *), cmp_str);
    if (a->n_names)
        qsort(a->names, a->n_names, sizeof(*a->names), cmp_learned);
    for (size_t i = 0; i < a->n_names && r == 0; i++) {
        if (i > 0 && !strcmp(a->names[i].s, a->names[i - 1].s))
            continue;
        if (keep_name(a, a->names[i].s)) {
            a->stats.kept_names++;
            continue;
        }
        size_t k = 0;
        while (k < 15 && counts[k].kind && strcmp(counts[k].kind, a->names[i].kind))
            k++;
        counts[k].kind = a->names[i].kind;
        snprintf(token, sizeof(token), "anon-%s-%d", a->names[i].kind, ++counts[k].n);
        r = add_name_forms(a, a->names[i].s, token);
        a->stats.names++;
    }
    if (a->n_wwns)
        qsort(a->wwns, a->n_wwns, sizeof(*a->wwns), cmp_u64);
    for (size_t i = 0, n = 0; i < a->n_wwns && r == 0; i++) {
        if (i > 0 && a->wwns[i] == a->wwns[i - 1])
            continue;
        uint64_t v = a->wwns[i];
        /* The first four bytes say the NAA type, the vendor and, for CLARiiON, VNX and Unity
         * ports, the storage processor (multipath-redundancy reads it): kept. The serial
         * number is in the rest. */
        uint64_t w = (v & 0xFFFFFFFF00000000ull) | (0xA0A00000ull + ++n);
        char from[64], to[64];
        a->stats.wwns++;
        snprintf(from, sizeof(from), "%" PRId64, (int64_t)v);
        snprintf(to, sizeof(to), "%" PRId64, (int64_t)w);
        r = add_key(a, from, to);
        for (int form = 0; form < 4 && r == 0; form++) {
            const int upper = form & 1, colons = form & 2;
            size_t f = 0, t = 0;
            for (int sh = 60; sh >= 0; sh -= 4) {
                const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
                from[f++] = digits[(v >> sh) & 15];
                to[t++] = digits[(w >> sh) & 15];
                if (colons && sh % 8 == 0 && sh) {
                    from[f++] = ':';
                    to[t++] = ':';
                }
            }
            from[f] = to[t] = '\0';
            r = add_key(a, from, to);
        }
    }
    for (size_t i = 0; i < a->n_keys && r == 0; i++)
        r = vsl_keymap_add(&a->map, a->keys[i], i);
    vsl_keymap_sort(&a->map);
    return r;
}

/* An IPv4 address at s: four decimal octets of at most 3 digits, each <= 255, not followed
 * by a digit or by ".digit". *used: its length. */
static int is_ipv4(const char *s, size_t len, int oct[4], size_t *used)
{
    size_t i = 0;

    for (int k = 0; k < 4; k++) {
        int v = 0, d = 0;
        while (i < len && isdigit((unsigned char)s[i]) && d < 4)
            v = v * 10 + (s[i++] - '0'), d++;
        if (d == 0 || d > 3 || v > 255)
            return 0;
        oct[k] = v;
        if (k < 3) {
            if (i >= len || s[i] != '.')
                return 0;
            i++;
        }
    }
    if (i < len && (isdigit((unsigned char)s[i]) ||
                    (s[i] == '.' && i + 1 < len && isdigit((unsigned char)s[i + 1]))))
        return 0;
    *used = i;
    return 1;
}

static int is_netmask(const int oct[4])
{
    uint32_t v =
        (uint32_t)oct[0] << 24 | (uint32_t)oct[1] << 16 | (uint32_t)oct[2] << 8 | (uint32_t)oct[3];
    return (~v & (~v + 1)) == 0; /* ones, then zeros (0.0.0.0 too) */
}

/* The octet under parent that orig becomes, made on first sight: first octets count from 10,
 * the others from 1 under their parent, so prefixes map to prefixes. */
static int ip_map(struct vsl_anon *a, int parent, int orig, int *node)
{
    for (size_t i = 0; i < a->n_ips; i++)
        if (a->ips[i].parent == parent && a->ips[i].orig == orig) {
            *node = (int)i;
            return 0;
        }
    int r = vsl_grow(&a->ips, &a->cap_ips, a->n_ips, sizeof(*a->ips), 64);
    if (r < 0)
        return r;
    int *count = parent < 0 ? &a->roots : &a->ips[parent].children;
    int mapped = parent < 0 ? 10 + (*count)++ : 1 + (*count)++;
    a->ips[a->n_ips] = (struct ip_node){.parent = parent, .orig = orig, .mapped = mapped % 256};
    *node = (int)a->n_ips++;
    return 0;
}

static int put_ip(struct vsl_anon *a, const int oct[4], struct vsl_buf *out)
{
    int node = -1, m[4], r = 0;

    for (int k = 0; k < 4 && r == 0; k++) {
        r = ip_map(a, node, oct[k], &node);
        if (r == 0)
            m[k] = a->ips[node].mapped;
    }
    return r ? r : vsl_buf_printf(out, "%d.%d.%d.%d", m[0], m[1], m[2], m[3]);
}

/* An IPv6 address at s, full or with one "::": groups of one to four hex digits, eight of them
 * without "::", at most seven with it. Not one: a longer run of colon-separated hex (the caller
 * starts only after a character that is neither ':' nor '.'), eight groups of exactly two digits
 * and no "::" (a WWN written as colon hex, replaced as a WWN when learned), fewer than eight
 * groups without "::" (times 12:30:45, MAC addresses), a group or word running on after it. A
 * %zone or /prefix after it is left to the caller. v: the 128 bits; *used: its length. */
static int is_ipv6(const char *s, size_t len, uint64_t v[2], size_t *used)
{
    uint16_t g[8];
    int n = 0, gap = -1, all_two = 1;
    size_t i = 0;

    if (len >= 2 && s[0] == ':' && s[1] == ':') {
        gap = 0;
        i = 2;
    }
    while (n < 8) {
        size_t d = 0;
        unsigned x = 0;
        while (i + d < len && d < 5 && isxdigit((unsigned char)s[i + d])) {
            char c = (char)tolower((unsigned char)s[i + d]);
            x = x << 4 | (unsigned)(isdigit((unsigned char)c) ? c - '0' : c - 'a' + 10);
            d++;
        }
        if (d == 0 || d > 4) {
            if (d == 0 && gap == n && n > 0)
                break; /* "fe80::" ends with its gap */
            if (d == 0 && gap == 0 && n == 0)
                break; /* "::" */
            return 0;
        }
        all_two &= d == 2;
        g[n++] = (uint16_t)x;
        i += d;
        if (i + 1 < len && s[i] == ':' && s[i + 1] == ':') {
            if (gap >= 0)
                return 0; /* a second "::" */
            gap = n;
            i += 2;
        } else if (i + 1 < len && s[i] == ':' && isxdigit((unsigned char)s[i + 1]) && n < 8) {
            i++;
        } else {
            break;
        }
    }
    if (gap < 0 ? n != 8 || all_two : n > 7)
        return 0;
    if (i < len && (isalnum((unsigned char)s[i]) || s[i] == ':' ||
                    (s[i] == '.' && i + 1 < len && isdigit((unsigned char)s[i + 1]))))
        return 0; /* runs on: a longer word, more colon hex, an IPv4 tail (its octets are) */
    uint16_t full[8] = {0};
    int tail = gap < 0 ? 0 : n - gap;
    for (int k = 0; k < n; k++)
        full[gap < 0 || k < gap ? k : 8 - tail + (k - gap)] = g[k];
    v[0] = v[1] = 0;
    for (int k = 0; k < 8; k++)
        v[k / 4] = v[k / 4] << 16 | full[k];
    *used = i;
    return 1;
}

/* The node for orig under parent (-1: a /64), made on first sight: /64s become
 * 2001:db8:N::/64 counting from 1 (fe80::/64 stays, as every link's is the same), interface
 * ids count from 1 under their /64, so two addresses in one /64 still are. */
static int ip6_map(struct vsl_anon *a, int parent, uint64_t orig, int *node)
{
    for (size_t i = 0; i < a->n_ip6s; i++)
        if (a->ip6s[i].parent == parent && a->ip6s[i].orig == orig) {
            *node = (int)i;
            return 0;
        }
    int r = vsl_grow(&a->ip6s, &a->cap_ip6s, a->n_ip6s, sizeof(*a->ip6s), 64);
    if (r < 0)
        return r;
    uint64_t mapped;
    if (parent >= 0) {
        mapped = ++a->ip6s[parent].children;
        a->stats.addresses6++;
    } else if (orig == 0xfe80000000000000ull) {
        mapped = orig;
    } else {
        mapped = 0x20010db800000000ull | ++a->prefixes6;
    }
    a->ip6s[a->n_ip6s] = (struct ip6_node){.parent = parent, .orig = orig, .mapped = mapped};
    *node = (int)a->n_ip6s++;
    return 0;
}

/* v in RFC 5952's form: lower case, no leading zeros, the longest run of two or more zero
 * groups (the first of equal ones) as "::". */
static int put_ip6_text(const uint64_t v[2], struct vsl_buf *out)
{
    unsigned g[8];
    int best = -1, best_n = 1, r = 0;

    for (int k = 0; k < 8; k++)
        g[k] = (unsigned)(v[k / 4] >> (48 - 16 * (k % 4)) & 0xFFFF);
    for (int k = 0; k < 8;) {
        int n = 0;
        while (k + n < 8 && g[k + n] == 0)
            n++;
        if (n > best_n)
            best = k, best_n = n;
        k += n ? n : 1;
    }
    for (int k = 0; k < 8 && r == 0; k++) {
        if (k == best) {
            r = vsl_buf_addstr(out, "::");
            k += best_n - 1;
            continue;
        }
        r = vsl_buf_printf(out, "%s%x", k > 0 && k != best + best_n ? ":" : "", g[k]);
    }
    return r;
}

/* The unspecified address and the loopback stay: every machine has them. */
static int put_ip6(struct vsl_anon *a, const uint64_t v[2], struct vsl_buf *out)
{
    int prefix = -1, iid = -1, r;

    if (v[0] == 0 && v[1] <= 1)
        return put_ip6_text(v, out);
    if ((r = ip6_map(a, -1, v[0], &prefix)) < 0 || (r = ip6_map(a, prefix, v[1], &iid)) < 0)
        return r;
    const uint64_t m[2] = {a->ip6s[prefix].mapped, a->ip6s[iid].mapped};
    return put_ip6_text(m, out);
}

static int put_iqn(struct vsl_anon *a, const char *s, size_t n, struct vsl_buf *out)
{
    size_t i;
    int r = 0;

    for (i = 0; i < a->n_iqns; i++)
        if (strlen(a->iqns[i]) == n && !memcmp(a->iqns[i], s, n))
            break;
    if (i == a->n_iqns) {
        r = push_str(&a->iqns, &a->n_iqns, &a->cap_iqns, s, n);
        a->stats.iqns = a->n_iqns;
    }
    return r ? r : vsl_buf_printf(out, "iqn.2000-01.org.example:anon-%zu", i + 1);
}

/* A character of an IQN after "iqn." (strchr would also match the NUL of its own string). */
static int iqn_char(char c)
{
    return isalnum((unsigned char)c) || (c && strchr(".:-_", c));
}

static int word(int c)
{
    return isalnum(c);
}

int vsl_anon_apply(struct vsl_anon *a, int json, const char *s, size_t len, struct vsl_buf *out)
{
    int in_tag = 0, r = 0;
    size_t i = 0, copy_from = 0;

#define FLUSH()                                                                                    \
    do {                                                                                           \
        if (i > copy_from && (r = vsl_buf_add(out, s + copy_from, i - copy_from)) < 0)             \
            return r;                                                                              \
    } while (0)
    while (i < len) {
        unsigned char c = (unsigned char)s[i];
        if (!json && (in_tag || c == '<')) {
            in_tag = c == '>' ? 0 : 1;
            i++;
            continue;
        }
        if (i > 0 && word((unsigned char)s[i - 1])) {
            i++;
            continue;
        }
        /* The longest known name or WWN starting here and ending at a word's end. */
        if (i + 1 < len && (a->pairs[(c << 8 | (unsigned char)s[i + 1]) / 8] >>
                            ((c << 8 | (unsigned char)s[i + 1]) % 8)) &
                               1) {
            size_t lim = len - i < a->maxkey ? len - i : a->maxkey;
            /* In XML a name ends before the next markup (a learned name may hold a '<'). */
            const char *lt = json ? NULL : memchr(s + i, '<', lim);
            if (lt)
                lim = (size_t)(lt - (s + i));
            const struct vsl_keymap_entry *hit = NULL;
            size_t n;
            for (n = lim; n >= 2 && !hit; n--) {
                if (i + n < len && word((unsigned char)s[i + n]))
                    continue;
                hit = vsl_keymap_find(&a->map, s + i, n);
            }
            if (hit) {
                FLUSH();
                r = vsl_buf_addstr(out, a->vals[hit->val]);
                if (r < 0)
                    return r;
                i += n + 1;
                copy_from = i;
                continue;
            }
        }
        if (len - i > 4 && !memcmp(s + i, "iqn.", 4)) {
            size_t n = 4;
            while (i + n < len && iqn_char(s[i + n]))
                n++;
            while (n > 4 && !isalnum((unsigned char)s[i + n - 1]))
                n--;
            FLUSH();
            if ((r = put_iqn(a, s + i, n, out)) < 0)
                return r;
            i += n;
            copy_from = i;
            continue;
        }
        int oct[4];
        size_t used;
        if (isdigit(c) && (i == 0 || s[i - 1] != '.') && is_ipv4(s + i, len - i, oct, &used) &&
            !is_netmask(oct)) {
            FLUSH();
            if ((r = put_ip(a, oct, out)) < 0)
                return r;
            i += used;
            copy_from = i;
            continue;
        }
        uint64_t v6[2];
        if ((isxdigit(c) || c == ':') && (i == 0 || (s[i - 1] != ':' && s[i - 1] != '.')) &&
            is_ipv6(s + i, len - i, v6, &used)) {
            FLUSH();
            if ((r = put_ip6(a, v6, out)) < 0)
                return r;
            i += used;
            copy_from = i;
            continue;
        }
        i++;
    }
    FLUSH();
#undef FLUSH
    /* Addresses: the distinct last-octet nodes are the distinct addresses. */
    size_t leaves = 0;
    for (size_t k = 0; k < a->n_ips; k++) {
        int depth = 0;
        for (int p = a->ips[k].parent; p >= 0; p = a->ips[p].parent)
            depth++;
        leaves += depth == 3;
    }
    a->stats.addresses = leaves;
    return 0;
}
