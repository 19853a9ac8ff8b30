/* `vslint record --anonymize`: two passes over a capture, the first learning the names the
 * estate owns (and the API's own words, which stay), the second replacing names, WWNs, IQNs,
 * MAC and IP addresses in the text of every request and answer, never in markup or keys. */
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

/* Longer values are free text, not names: not learned (they are still searched for names). */
#define MAX_NAME 1024
/* Names shorter than this are replaced only where they are a whole value or a part of a
 * datastore path ("[db]", "[ds] db/db.vmx"): "db" inside a sentence is more likely a word
 * than the VM. */
#define MIN_INTEXT 3
/* XML inside XML text (esxcli's answers) is walked as XML down to this many levels. */
#define MAX_LEVEL 3
#define MAX_DEPTH 64

/* Token kinds, by priority: a string learned as two kinds (an iSCSI alias that is also the
 * host's name) takes the first one's. */
static const char *const kinds[] = {
    "vcenter", "host",   "vm",   "ds",      "pod",  "cluster", "dc",   "rp",
    "vapp",    "dvs",    "pg",   "vswitch", "net",  "pool",    "lun",  "fs",
    "share",   "nas",    "sr",   "array",   "nfs",  "vmfs",    "snap", "alarm",
    "alias",   "folder", "user", "path",    "serial", "uuid", "text", "name", "dom"};
#define N_KINDS  (sizeof(kinds) / sizeof(kinds[0]))
#define KIND_DOM ((int)N_KINDS - 1)

static int kind_index(const char *kind)
{
    for (size_t i = 0; i < N_KINDS; i++)
        if (!strcmp(kinds[i], kind))
            return (int)i;
    return KIND_DOM - 1; /* "name" */
}

struct learned {
    char *s;      /* owned, decoded, case kept */
    int kind;     /* index in kinds[] */
    int compound; /* a DNS name: its token is its first label's and its domain's, joined */
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
    const char **kept; /* owned array of names[].s: the names kept as they are */
    size_t n_kept;
    char **vocab; /* owned, lower case: the API's words, which no name may replace */
    size_t n_vocab, cap_vocab;
    uint64_t *wwns;
    size_t n_wwns, cap_wwns;
    char **vmfs_uuids; /* owned, lower case: the VMFS volumes' UUIDs (vmfs.uuid) */
    size_t n_vmfs_uuids, cap_vmfs_uuids;
    /* Sealed: keys[i] (lower case) -> vals[i] through map, whose entries point at them. */
    char **keys, **vals; /* owned */
    size_t n_keys, cap_keys, cap_vals, maxkey;
    struct vsl_keymap map;
    unsigned char pairs[65536 / 8];         /* the first two bytes of some key */
    unsigned char lens[(MAX_NAME + 8) / 8]; /* the lengths of the keys */
    /* Filled while applying, so the same IQN, MAC or address always gets the same token. */
    char **iqns; /* owned */
    size_t n_iqns, cap_iqns;
    uint64_t *macs;
    size_t n_macs, cap_macs;
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
    free(a->kept);
    free_strv(a->vocab, a->n_vocab);
    free(a->wwns);
    free_strv(a->vmfs_uuids, a->n_vmfs_uuids);
    free_strv(a->keys, a->n_keys);
    free_strv(a->vals, a->n_keys);
    vsl_keymap_free(&a->map);
    free_strv(a->iqns, a->n_iqns);
    free(a->macs);
    free(a->ips);
    free(a->ip6s);
    free(a);
}

void vsl_anon_stats(const struct vsl_anon *a, struct vsl_anon_stats *s)
{
    *s = a->stats;
}

const char *vsl_anon_kept(const struct vsl_anon *a, size_t i)
{
    return i < a->n_kept ? a->kept[i] : NULL;
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

/* A character inside a word: a name matches only where none runs on before or after it.
 * Any byte of a UTF-8 sequence is one. '_' is not: a VM's disk is "vm-12_1.vmdk" (an id such
 * as Unity's "pool_1" is never searched, and the words of "VMW_SATP_LOCAL" are the API's). */
static int word(int c)
{
    return isalnum(c) || c >= 0x80;
}

static void lower(char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        s[i] = (char)tolower((unsigned char)s[i]);
}

/* Code point cp as UTF-8 at out (4 bytes room); its length, 0 for one that is not valid. */
static size_t utf8_put(unsigned long cp, char *out)
{
    if (cp == 0 || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
        return 0;
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | cp >> 12);
        out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | cp >> 18);
    out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* The XML text at s (len bytes) with its entity and character references decoded, into a
 * new string of *n bytes (never longer than len). One that is not understood stays as it is. */
static char *xml_decode(const char *s, size_t len, size_t *n)
{
    static const struct {
        const char *ent;
        char c;
    } ents[] = {{"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
    char *out = malloc(len + 1);
    size_t o = 0;

    if (!out)
        return NULL;
    for (size_t i = 0; i < len;) {
        size_t k, used = 0;
        if (s[i] != '&') {
            out[o++] = s[i++];
            continue;
        }
        for (k = 0; k < sizeof(ents) / sizeof(ents[0]); k++) {
            size_t m = strlen(ents[k].ent);
            if (len - i >= m && !memcmp(s + i, ents[k].ent, m)) {
                out[o++] = ents[k].c;
                used = m;
                break;
            }
        }
        if (!used && len - i > 3 && s[i + 1] == '#') {
            int hex = s[i + 2] == 'x' || s[i + 2] == 'X';
            size_t j = i + 2 + (size_t)hex;
            unsigned long cp = 0;
            while (j < len && j - i < 12 &&
                   (hex ? isxdigit((unsigned char)s[j]) : isdigit((unsigned char)s[j]))) {
                int c = tolower((unsigned char)s[j++]);
                cp = cp * (hex ? 16 : 10) + (unsigned long)(isdigit(c) ? c - '0' : c - 'a' + 10);
            }
            size_t w;
            if (j < len && s[j] == ';' && j > i + 2 + (size_t)hex && (w = utf8_put(cp, out + o)) &&
                w <= j + 1 - i) {
                o += w;
                used = j + 1 - i;
            }
        }
        if (used)
            i += used;
        else
            out[o++] = s[i++];
    }
    out[o] = '\0';
    *n = o;
    return out;
}

/* n bytes of text escaped for XML. Not vsl_buf_addxml(): that stops at a NUL, which no XML
 * holds but a broken answer may, and the rest of the text would be lost. */
static int xml_escape(struct vsl_buf *out, const char *s, size_t n)
{
    int r = 0;
    size_t from = 0;

    for (size_t i = 0; i < n && r == 0; i++) {
        const char *e = s[i] == '&'    ? "&amp;"
                        : s[i] == '<'  ? "&lt;"
                        : s[i] == '>'  ? "&gt;"
                        : s[i] == '\r' ? "&#13;"
                                       : NULL;
        if (!e)
            continue;
        r = vsl_buf_add(out, s + from, i - from);
        if (r == 0)
            r = vsl_buf_addstr(out, e);
        from = i + 1;
    }
    return r ? r : vsl_buf_add(out, s + from, n - from);
}

/* The JSON string body at s (between its quotes) decoded into a new string of *n bytes. */
static char *json_decode(const char *s, size_t len, size_t *n)
{
    char *out = malloc(len + 1);
    size_t o = 0;

    if (!out)
        return NULL;
    for (size_t i = 0; i < len;) {
        if (s[i] != '\\' || i + 1 == len) {
            out[o++] = s[i++];
            continue;
        }
        char c = s[i + 1];
        const char *map = strchr("\"\"\\\\//b\bf\fn\nr\rt\t", c);
        if (c && map && (map - "\"\"\\\\//b\bf\fn\nr\rt\t") % 2 == 0) {
            out[o++] = map[1];
            i += 2;
            continue;
        }
        unsigned long cp = 0;
        size_t used = 0;
        if (c == 'u' && len - i >= 6) {
            char hexs[5] = {0};
            memcpy(hexs, s + i + 2, 4);
            char *e;
            cp = strtoul(hexs, &e, 16);
            if (*e == '\0' && isxdigit((unsigned char)hexs[0]))
                used = 6;
            if (used && cp >= 0xD800 && cp < 0xDC00 && len - i >= 12 && s[i + 6] == '\\' &&
                s[i + 7] == 'u') {
                memcpy(hexs, s + i + 8, 4);
                unsigned long lo = strtoul(hexs, &e, 16);
                if (*e == '\0' && lo >= 0xDC00 && lo <= 0xDFFF) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    used = 12;
                }
            }
        }
        size_t w = used ? utf8_put(cp, out + o) : 0;
        if (w) {
            o += w;
            i += used;
        } else {
            out[o++] = s[i++];
        }
    }
    out[o] = '\0';
    *n = o;
    return out;
}

static int is_ipv4(const char *s, size_t len, int oct[4], size_t *used);
static int is_ipv6(const char *s, size_t len, uint64_t v[2], size_t *used);

static int is_address(const char *s, size_t n)
{
    int oct[4];
    uint64_t v6[2];
    size_t used;
    return (is_ipv4(s, n, oct, &used) && used == n) || (is_ipv6(s, n, v6, &used) && used == n);
}

/* ---- The first pass: what to replace, and what to keep. ---- */

/* Whether the n bytes at s are prefix followed by one or more digits; *used: how many. */
static int digits_after(const char *s, size_t n, const char *prefix, size_t *used)
{
    size_t k = strlen(prefix), i;

    if (n <= k || strncasecmp(s, prefix, k))
        return 0;
    for (i = k; i < n && isdigit((unsigned char)s[i]); i++)
        ;
    *used = i;
    return i > k;
}

/* A runtime name ESXi gives an adapter, a NIC or a path (vmhba64, vmnic0, vmk1,
 * vmhba64:C0:T0:L1): the same on every host, it identifies nothing, and the checks parse it
 * (multipath-redundancy reads a path's channel), so it is never a name to replace. */
static int runtime_name(const char *s, size_t n)
{
    size_t i;

    if (digits_after(s, n, "vmnic", &i) || digits_after(s, n, "vmk", &i))
        return i == n;
    if (!digits_after(s, n, "vmhba", &i))
        return 0;
    for (const char *part = "CTL"; i < n && *part; part++) {
        size_t used;
        if (s[i] != ':' || !digits_after(s + i + 1, n - i - 1, (char[]){*part, 0}, &used))
            return 0;
        i += 1 + used;
    }
    return i == n;
}

static int add_name(struct vsl_anon *a, const char *s, size_t n, int kind, int compound)
{
    int r;

    while (n && isspace((unsigned char)*s))
        s++, n--;
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    if (n == 0 || n > MAX_NAME || memchr(s, '\0', n) || runtime_name(s, n))
        return 0;
    if ((r = vsl_grow(&a->names, &a->cap_names, a->n_names, sizeof(*a->names), 64)) < 0)
        return r;
    char *copy = strndup(s, n);
    if (!copy)
        return -ENOMEM;
    a->names[a->n_names++] = (struct learned){.s = copy, .kind = kind, .compound = compound};
    return 0;
}

/* The vocabulary's last word in lower case (strndup stopped at a NUL, if the text held one). */
static void lower_last(struct vsl_anon *a)
{
    char *w = a->vocab[a->n_vocab - 1];
    lower(w, strlen(w));
}

/* A word of the API: kept wherever a learned name equals it. The value as a whole and each
 * of its words, so that "VMware ESXi 8.0" keeps "esxi" and "{policy=rr,iops=1}" keeps "iops". */
static int add_vocab(struct vsl_anon *a, const char *s, size_t n)
{
    int r = 0;

    if (n == 0 || n > 255)
        return 0;
    if ((r = push_str(&a->vocab, &a->n_vocab, &a->cap_vocab, s, n)) < 0)
        return r;
    lower_last(a);
    for (size_t i = 0; i < n && r == 0;) {
        size_t j = i;
        while (j < n && word((unsigned char)s[j]))
            j++;
        if (j - i >= 2 && j - i < n) {
            r = push_str(&a->vocab, &a->n_vocab, &a->cap_vocab, s + i, j - i);
            if (r == 0)
                lower_last(a);
        }
        i = j + 1;
    }
    return r;
}

/* A request's text (urn:vim25, a property path), whole: a name equal to it would change the
 * request, which the replay then would not know. Not the words inside it: a request may hold
 * the estate's own names (an inventory path), and a word of those would keep every name equal
 * to it. */
static int add_vocab_request(struct vsl_anon *a, const char *s, size_t n)
{
    int r = 0;

    while (n && isspace((unsigned char)*s))
        s++, n--;
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    if (n && n <= 255 && (r = push_str(&a->vocab, &a->n_vocab, &a->cap_vocab, s, n)) == 0)
        lower_last(a);
    return r;
}

/* A host name with its domain: at least two labels of letters, digits and '-', the last not
 * only digits. */
static int dns_name(const char *s, size_t n)
{
    size_t label = 0, dots = 0;
    int digits_only = 1;

    for (size_t i = 0; i < n; i++) {
        if (s[i] == '.') {
            if (label == 0)
                return 0;
            dots++, label = 0, digits_only = 1;
        } else if (isalnum((unsigned char)s[i]) || s[i] == '-' || s[i] == '_') {
            label++;
            digits_only &= isdigit((unsigned char)s[i]) != 0;
        } else {
            return 0;
        }
    }
    return dots > 0 && label > 0 && !digits_only;
}

/* A host's name as DNS writes it: esx01.corp.example is learned whole, as esx01 (the short
 * name, which aliases and labels repeat) and as corp.example (a domain), so that each form is
 * replaced the same way wherever it stands. An address is left to the address mapping. */
static int learn_host(struct vsl_anon *a, const char *s, size_t n, int kind)
{
    const char *colon = memchr(s, ':', n);
    int r;

    if (n && s[0] == '[')
        return 0; /* [IPv6]:port */
    if (colon) {
        size_t k = (size_t)(colon - s) + 1;
        while (k < n && isdigit((unsigned char)s[k]))
            k++;
        if (k == n)
            n = (size_t)(colon - s); /* host:port (an iSCSI target's address) */
    }
    while (n && s[n - 1] == '.')
        n--; /* the root's dot */
    if (n == 0 || is_address(s, n))
        return 0;
    if (!dns_name(s, n))
        return add_name(a, s, n, kind, 0);
    const char *dot = memchr(s, '.', n);
    size_t first = (size_t)(dot - s);
    if ((r = add_name(a, s, n, kind, 1)) < 0 || (r = add_name(a, s, first, kind, 0)) < 0)
        return r;
    return add_name(a, dot + 1, n - first - 1, KIND_DOM, 0);
}

/* The hosts of URLs (https://unity01.corp.example/api/...) and e-mail addresses in a value. */
static int learn_urls_mails(struct vsl_anon *a, const char *s, size_t n)
{
    int r = 0;

    for (const char *p = s, *end = s + n; r == 0 && p < end;) {
        const char *u = memmem(p, (size_t)(end - p), "://", 3);
        if (!u)
            break;
        const char *h = u + 3;
        size_t hl = 0;
        while (h + hl < end && !strchr(":/?#[]@ \t\r\n\"'<>", h[hl]))
            hl++;
        if (h + hl < end && h[hl] == '@') { /* user@host */
            h += hl + 1;
            hl = 0;
            while (h + hl < end && !strchr(":/?#[]@ \t\r\n\"'<>", h[hl]))
                hl++;
        }
        if (hl)
            r = learn_host(a, h, hl, kind_index("host"));
        p = h + hl;
    }
    for (const char *p = s, *end = s + n; r == 0 && p < end;) {
        const char *at = memchr(p, '@', (size_t)(end - p));
        if (!at)
            break;
        const char *l = at;
        while (l > s && (isalnum((unsigned char)l[-1]) || strchr("._%+-", l[-1])))
            l--;
        size_t dl = 0;
        while (at + 1 + dl < end &&
               (isalnum((unsigned char)at[1 + dl]) || at[1 + dl] == '.' || at[1 + dl] == '-'))
            dl++;
        while (dl && at[dl] == '.')
            dl--;
        if (l < at && dns_name(at + 1, dl)) {
            r = add_name(a, l, (size_t)(at - l), kind_index("user"), 0);
            if (r == 0)
                r = add_name(a, at + 1, dl, KIND_DOM, 0);
        }
        p = at + 1;
    }
    return r;
}

/* An NFS export's path: each component may be a name (/export/finance-prod). */
static int learn_path(struct vsl_anon *a, const char *s, size_t n)
{
    int r = 0;
    for (size_t i = 0; i < n && r == 0;) {
        size_t j = i;
        while (j < n && s[j] != '/')
            j++;
        r = add_name(a, s + i, j - i, kind_index("path"), 0);
        i = j + 1;
    }
    return r;
}

/* The length of a file's base name without the suffixes vSphere adds and the checks read
 * ("-000001" of a delta, "-flat", "-delta", "-sesparse", "-ctk", "-rdm", "-rdmp", "-aux",
 * "-Snapshot12", "_1" of a second disk), which stay after its token. */
static size_t stem_len(const char *s, size_t n)
{
    static const char *const words[] = {"-flat", "-delta", "-sesparse", "-ctk",
                                        "-rdmp", "-rdm",   "-aux",      NULL};
    for (int again = 1; again && n;) {
        size_t k = n;
        again = 0;
        while (k && isdigit((unsigned char)s[k - 1]))
            k--;
        if (k < n && k >= 2 &&
            ((s[k - 1] == '-' && n - k == 6) || s[k - 1] == '_' ||
             (k >= 10 && !strncasecmp(s + k - 9, "-snapshot", 9)))) {
            n = s[k - 1] == '_' || s[k - 1] == '-' ? k - 1 : k - 9;
            again = 1;
            continue;
        }
        for (size_t i = 0; words[i]; i++) {
            size_t m = strlen(words[i]);
            if (n > m && !strncasecmp(s + n - m, words[i], m)) {
                n -= m;
                again = 1;
                break;
            }
        }
    }
    return n;
}

/* A datastore path ("[ds] folder/sub/file-000001.vmdk", a CD-ROM's "[iso] images/x.iso"):
 * the datastore, each folder and each file's base name are the estate's names (a folder
 * or a file may be called otherwise than its VM). A file named as its folder is learned
 * whole (the first disk of a VM "web-000001" is "web-000001/web-000001.vmdk", a base disk);
 * any other file without the suffixes that say what it is, so they stay. */
static int learn_ds_path(struct vsl_anon *a, const char *s, size_t n)
{
    const char *close = memchr(s, ']', n);
    size_t prev = 0, prev_len = 0;
    int r;

    if (n < 3 || s[0] != '[' || !close)
        return 0;
    if ((r = add_name(a, s + 1, (size_t)(close - s) - 1, kind_index("ds"), 0)) < 0)
        return r;
    for (size_t i = (size_t)(close - s) + 1; i < n && r == 0;) {
        while (i < n && (s[i] == ' ' || s[i] == '/'))
            i++;
        size_t j = i;
        while (j < n && s[j] != '/')
            j++;
        if (j == i)
            break;
        size_t m = j - i;
        if (j == n) { /* the file: its extension stays */
            /* The last dot, by hand: GCC under -fsanitize fails the build on memrchr() here
             * (a -Wnonnull it infers through the inlining, wrongly). */
            size_t k = m;
            while (k > 0 && s[i + k - 1] != '.')
                k--;
            if (k > 1)
                m = k - 1;
            if (!(prev_len == m && !memcmp(s + prev, s + i, m)))
                m = stem_len(s + i, m);
        }
        r = add_name(a, s + i, m, kind_index("path"), 0);
        prev = i, prev_len = j - i;
        i = j;
    }
    return r;
}

/* A user's name (CORP\jdoe, jdoe@corp.example, jdoe): whole, and the account and its
 * domain on their own, since either may stand alone elsewhere. */
static int learn_user(struct vsl_anon *a, const char *s, size_t n)
{
    const char *bs = memchr(s, '\\', n);
    int r = add_name(a, s, n, kind_index("user"), 0);

    if (r == 0 && bs && bs > s && (size_t)(bs - s) + 1 < n) {
        r = add_name(a, bs + 1, n - (size_t)(bs - s) - 1, kind_index("user"), 0);
        if (r == 0)
            r = add_name(a, s, (size_t)(bs - s), KIND_DOM, 0);
    }
    return r;
}

static int add_wwn(struct vsl_anon *a, uint64_t v)
{
    int r = vsl_grow(&a->wwns, &a->cap_wwns, a->n_wwns, sizeof(*a->wwns), 16);
    if (r == 0)
        a->wwns[a->n_wwns++] = v;
    return r;
}

static int in_list(const char *const *list, const char *s, size_t n)
{
    for (size_t i = 0; list[i]; i++)
        if (strlen(list[i]) == n && !memcmp(list[i], s, n))
            return 1;
    return 0;
}

/* The token kind of a managed object type's names. */
static int kind_of(const char *type, size_t len)
{
    static const struct {
        const char *type, *kind;
    } types[] = {
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
        {"Alarm", "alarm"},
    };
    for (size_t i = 0; type && i < sizeof(types) / sizeof(types[0]); i++)
        if (strlen(types[i].type) == len && !memcmp(types[i].type, type, len))
            return kind_index(types[i].kind);
    return kind_index("name");
}

/* Elements whose text is one of the API's words (enumerations, types, product strings, the
 * esxcli fields vslint decodes), never a name, and never free text (a description, a display
 * name the user may rename, a performance counter's label: their words would keep every name
 * equal to one of them): a name equal to one of them is kept, since
 * replacing it would change the word in every place it stands and the decoding with it. */
static const char *const vocab_elements[] = {
    "type", "state", "pathState", "operationalState", "lunType", "deviceType", "accessMode",
    "securityType", "powerState", "connectionState", "faultToleranceState", "policy", "mode",
    "diskMode", "sharing", "compatibilityMode", "status", "overallStatus", "vendor", "model",
    "revision", "driver", "storageProtocol", "portType", "guestId", "version", "build", "apiType",
    "apiVersion", "fullName", "licenseProductName", "licenseProductVersion", "productLineId",
    "osType", "statsType", "rollupType", "scsiDiskType", "transport", "protocol", "discoveryMethod",
    "operator", "extensionKey", "systemName", "vStorageSupport", "unmapPriority",
    "scsiLevel", "dataOrigin", "pathSet",
    /* esxcli's fields (XML inside XML). */
    "PathSelectionPolicy", "StorageArrayType", "PathSelectionPolicyDeviceConfig",
    "StorageArrayTypeDeviceConfig", "Name", "DefaultPSP", "Vendor", "Model", "Driver",
    "Transport", "Options", "PSPOptions", "RuleGroup", "ClaimOptions", "Plugin", "WorkingPaths",
    NULL};

/* The parents of a <name> that is an API word: a property path, a multipathing plug-in
 * ("NMP", "PowerPath"), a product, a performance counter, a fault. */
static const char *const vocab_name_parents[] = {"propSet",
                                                 "changeSet",
                                                 "missingSet",
                                                 "HostPlugStoreTopologyPlugin",
                                                 "plugin",
                                                 "about",
                                                 "product",
                                                 "nameInfo",
                                                 "groupInfo",
                                                 "unitInfo",
                                                 "ElementDescription",
                                                 "field",
                                                 "fault",
                                                 "option",
                                                 "filterSpec",
                                                 "PropertySpec",
                                                 "ObjectSpec",
                                                 "selectSet",
                                                 "TraversalSpec",
                                                 "SelectionSpec",
                                                 "argument",
                                                 "namespace",
                                                 NULL};

struct xel {
    const char *name; /* borrowed from the walked text */
    size_t len;
    int moref; /* a ManagedObjectReference: its text is an id */
};

/* Where a walk over one XML document stands. */
struct xwalk {
    struct xel st[MAX_DEPTH];
    size_t depth;         /* may exceed MAX_DEPTH; deeper elements are unnamed */
    const char *obj_type; /* borrowed: the type of the objects' obj being read */
    size_t obj_len;
    char prop[128]; /* the property path of the propSet being read */
    int request;    /* 1: a request (every text an API word), 0: an answer, -1: not known */
    int level;      /* XML inside XML text: 0 for the document itself */
};

static const struct xel *xel_at(const struct xwalk *w, size_t up)
{
    static const struct xel none = {"", 0, 0};
    if (w->depth <= up || w->depth - up > MAX_DEPTH)
        return &none;
    return &w->st[w->depth - up - 1];
}

static int xel_is(const struct xel *e, const char *name)
{
    return e->len == strlen(name) && !memcmp(e->name, name, e->len);
}

static int walk_xml(struct vsl_anon *a, const char *s, size_t len, int level, struct vsl_buf *out);

/* What one text node of an answer teaches. */
static int learn_text(struct vsl_anon *a, struct xwalk *w, const char *d, size_t n)
{
    static const char *const vocab_props[] = {"runtime.connectionState",
                                              "runtime.powerState",
                                              "summary.runtime.faultToleranceState",
                                              "config.guestId",
                                              "config.version",
                                              "config.product.version",
                                              "info.systemName",
                                              "summary.type",
                                              "config.template",
                                              "info.enabled",
                                              NULL};
    static const char *const snapshot_lists[] = {"rootSnapshotList", "childSnapshotList", NULL};
    static const char *const host_elements[] = {"hostName",   "hostname", "address",
                                                "serverName", "fqdn",     NULL};
    const struct xel *el = xel_at(w, 0), *par = xel_at(w, 1);
    int r = 0;

    if (el->moref)
        return 0;
    if (w->request > 0)
        return add_vocab_request(a, d, n);
    if (xel_is(el, "name") && in_list(vocab_name_parents, par->name, par->len)) {
        if (xel_is(par, "propSet") || xel_is(par, "changeSet"))
            snprintf(w->prop, sizeof(w->prop), "%.*s", (int)(n < 127 ? n : 127), d);
        return add_vocab(a, d, n);
    }
    if (n > 2 && d[0] == '[' && memchr(d, ']', n)) /* a datastore path: its parts, not whole */
        return (r = learn_ds_path(a, d, n)) < 0 ? r : learn_urls_mails(a, d, n);
    if (xel_is(el, "val") && xel_is(par, "propSet")) {
        if (!strcmp(w->prop, "name")) {
            int k = kind_of(w->obj_type, w->obj_len);
            return k == kind_index("host") ? learn_host(a, d, n, k) : add_name(a, d, n, k, 0);
        }
        if (!strcmp(w->prop, "info.name"))
            return add_name(a, d, n, kind_index("alarm"), 0);
        if (!strcmp(w->prop, "about.instanceUuid") || !strcmp(w->prop, "content.about.instanceUuid"))
            return add_name(a, d, n, kind_index("uuid"), 0);
        if (in_list(vocab_props, w->prop, strlen(w->prop)))
            return add_vocab(a, d, n);
    }
    if (el->len > 13 && !memcmp(el->name + el->len - 13, "WorldWideName", 13)) {
        char num[32], *e = NULL;
        snprintf(num, sizeof(num), "%.*s", (int)(n < 31 ? n : 31), d);
        long long v = strtoll(num, &e, 10);
        return e && !*e && e != num ? add_wwn(a, (uint64_t)v) : 0;
    }
    if (in_list(vocab_elements, el->name, el->len))
        return add_vocab(a, d, n);
    if (xel_is(el, "name")) {
        const char *kind = xel_is(par, "vmfs")                            ? "vmfs"
                           : in_list(snapshot_lists, par->name, par->len) ? "snap"
                           : xel_is(par, "HostVirtualSwitch")             ? "vswitch"
                           : xel_is(par, "spec")                          ? "pg"
                                                                          : "name";
        r = add_name(a, d, n, kind_index(kind), 0);
    } else if (xel_is(el, "iScsiAlias") || xel_is(el, "alias")) {
        r = learn_host(a, d, n, kind_index("alias"));
    } else if (xel_is(el, "remoteHost") || xel_is(el, "remoteHostNames")) {
        r = learn_host(a, d, n, kind_index("nfs"));
    } else if (in_list(host_elements, el->name, el->len)) {
        r = learn_host(a, d, n, kind_index("host"));
    } else if (xel_is(el, "domainName") || xel_is(el, "searchDomain")) {
        r = is_address(d, n) ? 0 : add_name(a, d, n, KIND_DOM, 0);
    } else if (xel_is(el, "remotePath")) {
        r = learn_path(a, d, n);
    } else if (xel_is(el, "description") && in_list(snapshot_lists, par->name, par->len)) {
        r = add_name(a, d, n, kind_index("text"), 0);
    } else if (xel_is(el, "uuid") && xel_is(par, "vmfs") && n == 35) {
        r = push_str(&a->vmfs_uuids, &a->n_vmfs_uuids, &a->cap_vmfs_uuids, d, n);
        if (r == 0)
            lower(a->vmfs_uuids[a->n_vmfs_uuids - 1], n);
    } else if (xel_is(el, "displayName") || xel_is(el, "DeviceDisplayName")) {
        r = add_name(a, d, n, kind_index("lun"), 0); /* the user may rename a device */
    } else if (xel_is(el, "serialNumber") || xel_is(el, "SerialNumber")) {
        r = add_name(a, d, n, kind_index("serial"), 0);
    } else if (xel_is(el, "instanceUuid") && xel_is(par, "about")) {
        r = add_name(a, d, n, kind_index("uuid"), 0);
    } else if (xel_is(el, "chapName") || xel_is(el, "mutualChapName") || xel_is(el, "userName") ||
               xel_is(el, "user") || xel_is(el, "userId") ||
               (el->len > 4 && !memcmp(el->name + el->len - 4, "User", 4))) {
        r = learn_user(a, d, n);
    } else if (xel_is(el, "portgroup") || xel_is(el, "portgroupName")) {
        r = add_name(a, d, n, kind_index("pg"), 0);
    } else if (xel_is(el, "vswitchName") || xel_is(el, "switchName")) {
        r = add_name(a, d, n, kind_index("vswitch"), 0);
    }
    return r ? r : learn_urls_mails(a, d, n);
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

static int anon_text(struct vsl_anon *a, const char *d, size_t n, struct vsl_buf *out);

/* Whether decoded text is an XML document (esxcli's answers), not text that holds a '<'
 * (a datastore called "a <b> c"): it starts with markup and ends with it. */
static int xml_inside(const char *d, size_t n)
{
    size_t i = 0;
    while (i < n && isspace((unsigned char)d[i]))
        i++;
    while (n > i && isspace((unsigned char)d[n - 1]))
        n--;
    return n - i >= 3 && d[i] == '<' && d[n - 1] == '>';
}

/* One text node: learned from (out NULL) or written to out anonymized. Its references are
 * decoded first, so that a name is matched whatever way it was escaped and never inside an
 * entity; XML inside it (esxcli's answers) is walked as XML. Text that does not change is
 * copied as it was, byte for byte; text that does is escaped again. */
static int text_node(struct vsl_anon *a, struct xwalk *w, const char *raw, size_t len,
                     struct vsl_buf *out)
{
    struct vsl_buf tmp;
    size_t n;
    int r;

    if (xel_at(w, 0)->moref)
        return out ? vsl_buf_add(out, raw, len) : 0;
    char *d = xml_decode(raw, len, &n);
    if (!d)
        return -ENOMEM;
    const int inner = w->level + 1 < MAX_LEVEL && xml_inside(d, n);
    if (!out) {
        r = inner ? walk_xml(a, d, n, w->level + 1, NULL) : learn_text(a, w, d, n);
        free(d);
        return r;
    }
    vsl_buf_init(&tmp, (size_t)-1);
    r = inner ? walk_xml(a, d, n, w->level + 1, &tmp) : anon_text(a, d, n, &tmp);
    if (r == 0) {
        if (tmp.len == n && (n == 0 || !memcmp(tmp.data, d, n)))
            r = vsl_buf_add(out, raw, len);
        else
            r = xml_escape(out, tmp.data, tmp.len);
    }
    vsl_buf_free(&tmp);
    free(d);
    return r;
}

/* The value of the attribute called name in the start tag t (n bytes), or NULL. With name
 * "*:type" any attribute whose name ends in ":type" (xsi:type, whatever its prefix). */
static const char *tag_attr(const char *t, size_t n, const char *name, size_t *vl)
{
    const int any_prefix = name[0] == '*';
    const char *want = any_prefix ? name + 1 : name;
    size_t wl = strlen(want);

    for (size_t i = 1; i < n; i++) {
        if (t[i] != '"' && t[i] != '\'')
            continue;
        const char q = t[i];
        size_t j = i + 1;
        while (j < n && t[j] != q)
            j++;
        /* The attribute's name is before "=" before the quote. */
        size_t e = i;
        while (e > 0 && (t[e - 1] == '=' || isspace((unsigned char)t[e - 1])))
            e--;
        size_t b = e;
        while (b > 0 && !isspace((unsigned char)t[b - 1]))
            b--;
        const int match = any_prefix ? e - b > wl && !memcmp(t + e - wl, want, wl)
                                     : e - b == wl && !memcmp(t + b, want, wl);
        if (match && j < n) {
            *vl = j - i - 1;
            return t + i + 1;
        }
        i = j;
    }
    return NULL;
}

/* Whether the n bytes at s (not NUL-terminated) start with prefix. */
static int starts(const char *s, size_t n, const char *prefix)
{
    size_t k = strlen(prefix);
    return n >= k && !memcmp(s, prefix, k);
}

/* Walks the XML document s: markup is copied as it is (out non-NULL) and only text is
 * anonymized, or (out NULL) the text is learned from. */
static int walk_xml(struct vsl_anon *a, const char *s, size_t len, int level, struct vsl_buf *out)
{
    struct xwalk w = {.request = -1, .level = level};
    size_t i = 0;
    int r = 0;

    while (i < len && r == 0) {
        if (s[i] != '<') {
            const char *lt = memchr(s + i, '<', len - i);
            size_t j = lt ? (size_t)(lt - s) : len;
            r = text_node(a, &w, s + i, j - i, out);
            i = j;
            continue;
        }
        /* Markup: a comment, CDATA, a declaration or instruction, or a tag. */
        const char *end_mark = starts(s + i, len - i, "<!--")        ? "-->"
                               : starts(s + i, len - i, "<![CDATA[") ? "]]>"
                               : starts(s + i, len - i, "<?")        ? "?>"
                                                                     : NULL;
        size_t j;
        if (end_mark) {
            const char *e = memmem(s + i, len - i, end_mark, strlen(end_mark));
            j = e ? (size_t)(e - s) + strlen(end_mark) : len;
        } else {
            char q = 0;
            for (j = i + 1; j < len && (q || s[j] != '>'); j++)
                if (s[j] == '"' || s[j] == '\'')
                    q = q == s[j] ? 0 : q ? q : s[j];
            j = j < len ? j + 1 : len;
        }
        if (out && (r = vsl_buf_add(out, s + i, j - i)) < 0)
            break;
        const char *t = s + i;
        size_t tl = j - i;
        i = j;
        if (end_mark || tl < 3 || t[1] == '!')
            continue;
        if (t[1] == '/') {
            if (w.depth)
                w.depth--;
            continue;
        }
        const char *name = t + 1, *q = name;
        while (q < t + tl && !isspace((unsigned char)*q) && *q != '/' && *q != '>')
            if (*q++ == ':')
                name = q;
        size_t nl = (size_t)(q - name), vl = 0;
        const char *type = tag_attr(t, tl, "type", &vl);
        size_t xl = 0;
        const char *xtype = tag_attr(t, tl, "*:type", &xl);
        if (!out) {
            if (type && (r = add_vocab(a, type, vl)) < 0)
                break;
            if (xtype && (r = add_vocab(a, xtype, xl)) < 0)
                break;
        }
        /* The element in the Body says which: answers end in Response (or are faults). */
        if (w.request < 0 && level == 0 && xel_is(xel_at(&w, 0), "Body"))
            w.request = !(nl > 8 && !memcmp(name + nl - 8, "Response", 8)) &&
                        !(nl == 5 && !memcmp(name, "Fault", 5));
        if (nl == 3 && !memcmp(name, "obj", 3)) {
            w.obj_type = type;
            w.obj_len = type ? vl : 0;
        }
        if (t[tl - 2] == '/')
            continue; /* <empty/> */
        if (w.depth < MAX_DEPTH)
            w.st[w.depth] = (struct xel){
                .name = name,
                .len = nl,
                .moref = type != NULL ||
                         (xtype && xl == 22 && !memcmp(xtype, "ManagedObjectReference", 22)),
            };
        w.depth++;
    }
    return r;
}

/* The token kind of a Unity answer's names, from the type its path reads. */
static int rest_kind(const char *path)
{
    static const struct {
        const char *type, *kind;
    } types[] = {{"/pool/", "pool"},         {"/lun/", "lun"},
                 {"/filesystem/", "fs"},     {"/nfsShare/", "share"},
                 {"/cifsShare/", "share"},   {"/nasServer/", "nas"},
                 {"/fileInterface/", "nas"}, {"/storageResource/", "sr"},
                 {"/host/", "host"}};
    for (size_t i = 0; path && i < sizeof(types) / sizeof(types[0]); i++)
        if (strstr(path, types[i].type))
            return kind_index(types[i].kind);
    return kind_index("name");
}

static int learn_json(struct vsl_anon *a, const char *path, const json_t *j)
{
    static const char *const host_keys[] = {"hostName", "hostname",   "fqdn",
                                            "dnsName",  "serverName", NULL};
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
        if (!json_is_string(v)) {
            if ((r = learn_json(a, path, v)) < 0)
                return r;
            continue;
        }
        const char *s = json_string_value(v);
        size_t n = json_string_length(v);
        if (!strcmp(key, "id")) {
            continue; /* Unity's ids (pool_1, spa) are ids, as morefs are */
        } else if (!strcmp(key, "name")) {
            int k = rest_kind(path);
            r = k == kind_index("host") ? learn_host(a, s, n, k) : add_name(a, s, n, k, 0);
        } else if (in_list(host_keys, key, strlen(key))) {
            r = learn_host(a, s, n, kind_index("host"));
        } else if (!strcmp(key, "alias") || !strcmp(key, "iScsiAlias")) {
            r = learn_host(a, s, n, kind_index("alias"));
        } else if (!strcmp(key, "description")) {
            r = add_name(a, s, n, kind_index("text"), 0);
        } else if (!strcmp(key, "wwn") && path && strstr(path, "fcPort")) {
            /* node:port, 16 bytes, or one WWN of 8. */
            uint64_t w;
            if (n == 47 && parse_wwn(s, 23, &w) && (r = add_wwn(a, w)) == 0 &&
                parse_wwn(s + 24, 23, &w))
                r = add_wwn(a, w);
            else if (parse_wwn(s, n, &w))
                r = add_wwn(a, w);
        }
        if (r == 0)
            r = learn_urls_mails(a, s, n);
        if (r < 0)
            return r;
    }
    return 0;
}

int vsl_anon_learn(struct vsl_anon *a, int json, const char *path, const char *body, size_t len)
{
    /* The path's words are the API's (instances, fields, compact): a name that equals one is
     * kept, or the path the replay is asked for would not be the recorded one. */
    int r = path ? add_vocab(a, path, strlen(path)) : 0;

    if (r < 0)
        return r;
    if (!json)
        return walk_xml(a, body, len, 0, NULL);
    json_t *j = json_loadb(body, len, 0, NULL);
    if (!j)
        return 0; /* not JSON (an error page): nothing to learn, it is still replaced in */
    r = learn_json(a, path, j);
    json_decref(j);
    return r;
}

int vsl_anon_name(struct vsl_anon *a, const char *name, const char *kind)
{
    return learn_host(a, name, strlen(name), kind_index(kind));
}

size_t vsl_anon_blank_cut(int json, char *s, size_t len)
{
    size_t end = 0;
    int in_string = 0;

    for (size_t i = 0; i < len; i++) {
        if (!json) {
            if (s[i] == '>')
                end = i + 1;
        } else if (in_string) {
            if (s[i] == '\\')
                i++;
            else if (s[i] == '"')
                in_string = 0, end = i + 1;
        } else if (s[i] == '"') {
            in_string = 1;
        } else if (strchr("{}[],:", s[i]) && s[i]) {
            end = i + 1;
        }
    }
    if (end < len)
        memset(s + end, 'x', len - end);
    return len - end;
}

/* ---- Sealing: the table of replacements. ---- */

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

/* By the name in lower case (one name whatever its case), then by kind. */
static int cmp_learned(const void *x, const void *y)
{
    const struct learned *p = x, *q = y;
    int c = strcasecmp(p->s, q->s);
    return c ? c : p->kind - q->kind;
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
    lower(a->keys[a->n_keys], n);
    if ((r = vsl_keymap_add(&a->map, a->keys[a->n_keys], a->n_keys)) < 0) {
        free(a->keys[a->n_keys]);
        free(a->vals[a->n_keys]);
        return r;
    }
    a->n_keys++;
    /* Keys are names (at most MAX_NAME bytes) and WWNs: lens and maxkey bound the search. */
    if (n <= MAX_NAME) {
        a->maxkey = n > a->maxkey ? n : a->maxkey;
        a->lens[n / 8] |= (unsigned char)(1u << (n % 8));
    }
    if (n >= 2) {
        unsigned pair = (unsigned char)a->keys[a->n_keys - 1][0] << 8 |
                        (unsigned char)a->keys[a->n_keys - 1][1];
        a->pairs[pair / 8] |= (unsigned char)(1u << (pair % 8));
    }
    return 0;
}

/* Whether a learned name stays as it is (1), or is left to another mapping (2: an address,
 * an IQN): only digits, a LUN id (the join between a datastore and an array's LUN), a default
 * folder, or a word of the API (an enumeration's value, a type's name, a product's, a word
 * of a property path or of a request vslint sends): replacing it would change that word in
 * every place it stands. Case does not matter: names are matched whatever their case. */
static int keep_name(const struct vsl_anon *a, const char *s)
{
    static const char *const words[] = {
        "vm", "host", "datastore", "network", "datacenters", "resources", "localhost", "vmfs",
        "nfs", "nfs41", "vsan", "vvol", "nmp", "hpp", "powerpath",
        /* Booleans and the like, which any field may hold as its whole value. */
        "true", "false", "null", "none", "unknown", "on", "off", "yes", "no", "enabled", "disabled",
        NULL};
    size_t n = strlen(s);
    char *low;
    int keep = 0;

    if (is_address(s, n) || !strncasecmp(s, "iqn.", 4))
        return 2; /* replaced by the address or IQN mapping, the same everywhere */
    if (strspn(s, "0123456789") == n || !strncasecmp(s, "eui.", 4) || !strncasecmp(s, "naa.", 4) ||
        !strncasecmp(s, "t10.", 4))
        return 1;
    for (size_t i = 0; words[i]; i++)
        if (!strcasecmp(words[i], s))
            return 1;
    if (!a->n_vocab || !(low = strdup(s)))
        return 0;
    lower(low, n);
    keep = bsearch(&low, a->vocab, a->n_vocab, sizeof(char *), cmp_str) != NULL;
    free(low);
    return keep;
}

/* A serial number's token: the same length and the same kind of character in each place
 * (digit, upper or lower case letter, other), counting n in the digits (in the letters when
 * it has none), so that what reads a serial's shape still can. size > strlen(s). */
static void serial_token(char *out, size_t size, const char *s, int n)
{
    size_t len = strlen(s), digits = strspn(s, "0123456789") == len ? len : 0;
    unsigned v = (unsigned)n;

    for (size_t i = 0; i < len; i++)
        digits += isdigit((unsigned char)s[i]) != 0;
    snprintf(out, size, "%s", s);
    for (size_t i = len; i-- > 0;) {
        unsigned char c = (unsigned char)out[i];
        if (isdigit(c)) {
            out[i] = (char)('0' + v % 10);
            v /= 10;
        } else if (isalpha(c)) {
            out[i] = (char)((isupper(c) ? 'A' : 'a') + (digits ? 23 : v % 26)); /* X, or count */
            if (!digits)
                v /= 26;
        }
    }
}

/* The token of the name at s whose kind is k, the n-th of its kind. */
static void make_token(char *out, size_t size, const char *s, int k, int n)
{
    if (k == kind_index("serial") && strlen(s) < size)
        serial_token(out, size, s, n);
    else if (k == kind_index("uuid")) /* still a UUID, for what parses one */
        snprintf(out, size, "00000000-0000-4000-8000-%012d", n);
    else if (k == KIND_DOM)
        snprintf(out, size, "anon-dom-%d.example", n); /* RFC 2606's reserved TLD */
    else
        snprintf(out, size, "anon-%s-%d", kinds[k], n);
}

/* A DNS name's token: its first label's and its domain's, joined by a dot; a part that is
 * kept stays as it was. NULL when a part is neither. */
static int compound_token(struct vsl_anon *a, const char *s, char *out, size_t size)
{
    const char *dot = strchr(s, '.');
    char label[MAX_NAME + 1];
    const char *parts[2];

    snprintf(label, sizeof(label), "%.*s", (int)(dot - s), s);
    lower(label, strlen(label));
    const struct vsl_keymap_entry *h = vsl_keymap_get(&a->map, label);
    char *dom = strdup(dot + 1);
    if (!dom)
        return -ENOMEM;
    lower(dom, strlen(dom));
    const struct vsl_keymap_entry *d = vsl_keymap_get(&a->map, dom);
    parts[0] = h ? a->vals[h->val] : label;
    parts[1] = d ? a->vals[d->val] : dom;
    snprintf(out, size, "%s.%s", parts[0], parts[1]);
    free(dom);
    return h || d ? 1 : 0;
}

int vsl_anon_seal(struct vsl_anon *a)
{
    int counts[N_KINDS] = {0};
    char token[2 * MAX_NAME + 64];
    size_t *compounds = NULL, n_compounds = 0;
    int r = 0;

    if (a->n_vocab)
        qsort(a->vocab, a->n_vocab, sizeof(char *), cmp_str);
    if (a->n_names)
        qsort(a->names, a->n_names, sizeof(*a->names), cmp_learned);
    if (a->n_names && !(compounds = calloc(a->n_names, sizeof(*compounds))))
        return -ENOMEM;
    if (a->n_names && !(a->kept = calloc(a->n_names, sizeof(*a->kept)))) {
        free(compounds);
        return -ENOMEM;
    }
    /* Plain names first, then DNS names, whose tokens are made of theirs. */
    for (size_t i = 0; i < a->n_names && r == 0;) {
        size_t j = i;
        int compound = 0;
        while (j < a->n_names && !strcasecmp(a->names[j].s, a->names[i].s))
            compound |= a->names[j++].compound;
        const struct learned *l = &a->names[i];
        i = j;
        const int keep = keep_name(a, l->s);
        if (keep == 1) {
            a->kept[a->n_kept++] = l->s;
            a->stats.kept_names++;
        }
        if (keep)
            continue;
        if (compound) {
            compounds[n_compounds++] = (size_t)(l - a->names);
            continue;
        }
        make_token(token, sizeof(token), l->s, l->kind, ++counts[l->kind]);
        r = add_key(a, l->s, token);
        a->stats.names++;
    }
    vsl_keymap_sort(&a->map);
    for (size_t i = 0; i < n_compounds && r == 0; i++) {
        r = compound_token(a, a->names[compounds[i]].s, token, sizeof(token));
        if (r > 0) {
            r = add_key(a, a->names[compounds[i]].s, token);
            a->stats.names++;
        } else if (r == 0) {
            a->kept[a->n_kept++] = a->names[compounds[i]].s;
            a->stats.kept_names++;
        }
    }
    free(compounds);
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
        /* Hex with and without colons; the case is the text's (keys are matched in lower
         * case, tokens written in the case of what they replace). */
        for (int colons = 0; colons < 2 && r == 0; colons++) {
            size_t f = 0, t = 0;
            for (int sh = 60; sh >= 0; sh -= 4) {
                static const char digits[] = "0123456789abcdef";
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
    vsl_keymap_sort(&a->map);
    return r;
}

/* ---- The second pass. ---- */
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

static int hexval(char c)
{
    return isdigit((unsigned char)c) ? c - '0' : tolower((unsigned char)c) - 'a' + 10;
}

/* A MAC address at s: six bytes of two hex digits separated by ':' or by '-', not preceded by
 * the separator (more colon hex before it: a WWN, an IPv6 address) nor followed by it and a
 * digit or by a word. */
static int is_mac(const char *s, size_t len, char prev, uint64_t *v, size_t *used)
{
    const char sep = len > 2 ? s[2] : 0;

    if (len < 17 || (sep != ':' && sep != '-') || prev == sep)
        return 0;
    *v = 0;
    for (int k = 0; k < 6; k++) {
        const char *g = s + 3 * k;
        if (!isxdigit((unsigned char)g[0]) || !isxdigit((unsigned char)g[1]) ||
            (k < 5 && g[2] != sep))
            return 0;
        *v = *v << 8 | (uint64_t)(hexval(g[0]) << 4 | hexval(g[1]));
    }
    if (len > 17 && (word((unsigned char)s[17]) ||
                     (s[17] == sep && len > 18 && isxdigit((unsigned char)s[18]))))
        return 0;
    *used = 17;
    return 1;
}

/* The first three bytes (the vendor's OUI: which NIC, never whose) are kept, the other three
 * count the MACs seen, so the same MAC always becomes the same one, in its own form. */
static int put_mac(struct vsl_anon *a, const char *s, uint64_t v, struct vsl_buf *out)
{
    size_t i;
    int r, upper = 0;

    for (i = 0; i < a->n_macs && a->macs[i] != v; i++)
        ;
    if (i == a->n_macs) {
        if ((r = vsl_grow(&a->macs, &a->cap_macs, a->n_macs, sizeof(*a->macs), 64)) < 0)
            return r;
        a->macs[a->n_macs++] = v;
        a->stats.macs = a->n_macs;
    }
    uint64_t m = (v & 0xFFFFFF000000ull) | ((i + 1) & 0xFFFFFF);
    for (int k = 0; k < 17; k++)
        upper |= isupper((unsigned char)s[k]) != 0;
    const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    char text[18];
    for (int k = 0; k < 6; k++) {
        text[3 * k] = digits[m >> (44 - 8 * k) & 15];
        text[3 * k + 1] = digits[m >> (40 - 8 * k) & 15];
        text[3 * k + 2] = s[2];
    }
    return vsl_buf_add(out, text, 17);
}

/* A VMFS volume's UUID at s (5f3e1a2b-c3d4e5f6-7890-001b21aabbcc: a time, a random part and
 * the MAC of the host that formatted the volume), not running on into a word or more of it:
 * one learned from a vmfs.uuid, since other ids are written the same way (a simulated VVol
 * container's, which the array's id must still join). */
static int is_vmfs_uuid(const struct vsl_anon *a, const char *s, size_t len, uint64_t *mac)
{
    static const int groups[] = {8, 8, 4, 12};
    size_t i = 0;

    for (int g = 0; g < 4; g++) {
        for (int k = 0; k < groups[g]; k++, i++)
            if (i >= len || !isxdigit((unsigned char)s[i]))
                return 0;
        if (g < 3 && (i >= len || s[i++] != '-'))
            return 0;
    }
    if (i < len && (word((unsigned char)s[i]) || s[i] == '-'))
        return 0;
    size_t k;
    for (k = 0; k < a->n_vmfs_uuids && strncasecmp(a->vmfs_uuids[k], s, 35); k++)
        ;
    if (k == a->n_vmfs_uuids)
        return 0;
    *mac = 0;
    for (k = 23; k < 35; k++)
        *mac = *mac << 4 | (uint64_t)hexval(s[k]);
    return 1;
}

/* A VMFS UUID with its MAC mapped as MAC addresses are (the same host's the same way, in
 * the volume's uuid, its url and every path under /vmfs/volumes); the rest stays. */
static int put_vmfs_uuid(struct vsl_anon *a, const char *s, uint64_t mac, struct vsl_buf *out)
{
    char text[18], hex[12];
    struct vsl_buf tmp;
    int r;

    /* put_mac writes colon form from a colon-form original; its case is the original's. */
    for (int k = 0; k < 6; k++) {
        text[3 * k] = s[23 + 2 * k];
        text[3 * k + 1] = s[23 + 2 * k + 1];
        text[3 * k + 2] = ':';
    }
    vsl_buf_init(&tmp, 64);
    r = put_mac(a, text, mac, &tmp);
    if (r == 0 && tmp.len == 17) {
        for (int k = 0; k < 6; k++)
            hex[2 * k] = tmp.data[3 * k], hex[2 * k + 1] = tmp.data[3 * k + 1];
        r = vsl_buf_add(out, s, 23);
        if (r == 0)
            r = vsl_buf_add(out, hex, 12);
    }
    vsl_buf_free(&tmp);
    return r;
}

/* token in the case of the n bytes it replaces: upper case for a name written all in upper
 * case (ESX01), lower otherwise (esx01, Esx01), so that names which differed only between
 * all upper and lower case still do. */
static int put_token(struct vsl_buf *out, const char *orig, size_t n, const char *token)
{
    int has_upper = 0, has_lower = 0, r = 0;

    for (size_t i = 0; i < n; i++) {
        has_upper |= isupper((unsigned char)orig[i]) != 0;
        has_lower |= islower((unsigned char)orig[i]) != 0;
    }
    if (!has_upper || has_lower)
        return vsl_buf_addstr(out, token);
    for (const char *t = token; *t && r == 0; t++) {
        char c = (char)toupper((unsigned char)*t);
        r = vsl_buf_add(out, &c, 1);
    }
    return r;
}

/* Whether the m bytes at d + i are a part of a datastore path on their own: "[db]",
 * "[ds] db/db.vmx". Where a name shorter than MIN_INTEXT is replaced inside a longer text. */
static int path_part(const char *d, size_t n, size_t i, size_t m)
{
    const char before = i ? d[i - 1] : '/', after = i + m < n ? d[i + m] : '\0';
    return (before == '[' && after == ']') ||
           ((before == '/' || (before == ' ' && i >= 2 && d[i - 2] == ']')) &&
            (after == '/' || after == '.'));
}

/* The decoded text d (n bytes) with every learned name and WWN, IQN, MAC and IP address in it
 * replaced, appended to out. A name matches whatever its case, as a whole value at any
 * length, inside the text only from MIN_INTEXT bytes and where no word runs on before or
 * after it; the longest one wins. */
static int anon_text(struct vsl_anon *a, const char *d, size_t n, struct vsl_buf *out)
{
    size_t i = 0, copy_from = 0;
    int r = 0;
    char *low = malloc(n + 1);

    if (!low)
        return -ENOMEM;
    memcpy(low, d, n);
    lower(low, n);
    const struct vsl_keymap_entry *whole = n ? vsl_keymap_find(&a->map, low, n) : NULL;
    if (whole) {
        r = put_token(out, d, n, a->vals[whole->val]);
        free(low);
        return r;
    }
#define FLUSH()                                                                                    \
    do {                                                                                           \
        if (i > copy_from && (r = vsl_buf_add(out, d + copy_from, i - copy_from)) < 0)             \
            goto out;                                                                              \
    } while (0)
    while (i < n) {
        unsigned char c = (unsigned char)low[i];
        if (i > 0 && word((unsigned char)d[i - 1])) {
            i++;
            continue;
        }
        if (i + 1 < n) {
            unsigned pair = c << 8 | (unsigned char)low[i + 1];
            const struct vsl_keymap_entry *hit = NULL;
            size_t m = 0;
            if (a->pairs[pair / 8] >> (pair % 8) & 1) {
                size_t lim = n - i < a->maxkey ? n - i : a->maxkey;
                for (m = lim; m >= 2 && !hit; m--)
                    if ((a->lens[m / 8] >> (m % 8) & 1) &&
                        (i + m == n || !word((unsigned char)d[i + m])) &&
                        (m >= MIN_INTEXT || path_part(d, n, i, m)))
                        hit = vsl_keymap_find(&a->map, low + i, m);
                m++; /* the loop went one past the length that matched */
            }
            if (hit) {
                FLUSH();
                if ((r = put_token(out, d + i, m, a->vals[hit->val])) < 0)
                    goto out;
                i += m;
                copy_from = i;
                continue;
            }
        }
        if (n - i > 4 && !memcmp(low + i, "iqn.", 4)) {
            size_t m = 4;
            while (i + m < n && iqn_char(d[i + m]))
                m++;
            while (m > 4 && !isalnum((unsigned char)d[i + m - 1]))
                m--;
            FLUSH();
            if ((r = put_iqn(a, d + i, m, out)) < 0)
                goto out;
            i += m;
            copy_from = i;
            continue;
        }
        int oct[4];
        size_t used;
        if (isdigit(c) && (i == 0 || d[i - 1] != '.') && is_ipv4(d + i, n - i, oct, &used) &&
            !is_netmask(oct)) {
            FLUSH();
            if ((r = put_ip(a, oct, out)) < 0)
                goto out;
            i += used;
            copy_from = i;
            continue;
        }
        uint64_t mac;
        if (isxdigit(c) && is_vmfs_uuid(a, d + i, n - i, &mac)) {
            FLUSH();
            if ((r = put_vmfs_uuid(a, d + i, mac, out)) < 0)
                goto out;
            i += 35;
            copy_from = i;
            continue;
        }
        if (isxdigit(c) && is_mac(d + i, n - i, i ? d[i - 1] : 0, &mac, &used)) {
            FLUSH();
            if ((r = put_mac(a, d + i, mac, out)) < 0)
                goto out;
            i += used;
            copy_from = i;
            continue;
        }
        uint64_t v6[2];
        if ((isxdigit(c) || c == ':') && (i == 0 || (d[i - 1] != ':' && d[i - 1] != '.')) &&
            is_ipv6(d + i, n - i, v6, &used)) {
            FLUSH();
            if ((r = put_ip6(a, v6, out)) < 0)
                goto out;
            i += used;
            copy_from = i;
            continue;
        }
        i++;
    }
    FLUSH();
#undef FLUSH
out:
    free(low);
    return r;
}

/* s as a JSON string. Bytes that are not UTF-8 (an answer that was not valid JSON to begin
 * with) are written as they are, escaped where JSON says, rather than the exchange lost. */
static int put_json_string(struct vsl_buf *out, const char *s, size_t n)
{
    int r = vsl_buf_addjson(out, s, n); /* it writes nothing when it fails */

    if (r != -EILSEQ)
        return r;
    r = vsl_buf_add(out, "\"", 1);
    for (size_t i = 0; i < n && r == 0; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            r = vsl_buf_printf(out, "\\%c", c);
        else if (c < 0x20)
            r = vsl_buf_printf(out, "\\u%04X", c);
        else
            r = vsl_buf_add(out, s + i, 1);
    }
    return r ? r : vsl_buf_add(out, "\"", 1);
}

/* A JSON document: only string values change, never keys, and never an "id" (Unity's ids,
 * pool_1 or spa, are ids as morefs are). A string that does not change is copied as it was. */
static int apply_json(struct vsl_anon *a, const char *s, size_t len, struct vsl_buf *out)
{
    char key[64] = "";
    size_t i = 0, copy_from = 0;
    int r = 0;

    while (i < len && r == 0) {
        if (s[i] != '"') {
            i++;
            continue;
        }
        size_t j = i + 1;
        while (j < len && s[j] != '"')
            j += s[j] == '\\' ? 2 : 1;
        if (j >= len)
            break; /* unterminated: copied as it is */
        size_t k = j + 1;
        while (k < len && isspace((unsigned char)s[k]))
            k++;
        size_t n;
        char *d = json_decode(s + i + 1, j - i - 1, &n);
        if (!d)
            return -ENOMEM;
        if (k < len && s[k] == ':') {
            snprintf(key, sizeof(key), "%.*s", (int)(n < 63 ? n : 63), d);
        } else if (strcmp(key, "id")) {
            struct vsl_buf tmp;
            vsl_buf_init(&tmp, (size_t)-1);
            r = anon_text(a, d, n, &tmp);
            if (r == 0 && (tmp.len != n || (n && memcmp(tmp.data, d, n)))) {
                r = vsl_buf_add(out, s + copy_from, i - copy_from);
                if (r == 0)
                    r = put_json_string(out, tmp.len ? tmp.data : "", tmp.len);
                copy_from = j + 1;
            }
            vsl_buf_free(&tmp);
        }
        free(d);
        i = j + 1;
    }
    return r ? r : vsl_buf_add(out, s + copy_from, len - copy_from);
}

int vsl_anon_apply(struct vsl_anon *a, int json, const char *s, size_t len, struct vsl_buf *out)
{
    size_t lead = 0;
    int r;

    while (lead < len && isspace((unsigned char)s[lead]))
        lead++;
    if (!json)
        r = walk_xml(a, s, len, 0, out);
    else if (lead < len && (s[lead] == '{' || s[lead] == '['))
        r = apply_json(a, s, len, out);
    else
        r = anon_text(a, s, len, out); /* a path, an error page */
    if (r < 0)
        return r;
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
