/* The streaming parser behind every SOAP call, and the DOM helpers the decoders use.
 * libxml2 only tokenizes: our SAX callbacks build a compact read-only tree (struct vim_node) in
 * an arena, and give back an emitted object's memory as soon as its callback has consumed it:
 * no malloc per element, no free walk, no dictionary lookups of ours (libxml2's tree building,
 * xmlSAX2StartElementNs and its frees, was over half of a collect's CPU). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libxml/parser.h>
#include <libxml/SAX2.h>

#include "util/err.h"
#include "util/parse.h"
#include "vsphere/xml.h"


/* Properties of vSphere data objects that no decoder reads and that are most of a host's
 * bytes: each SAN LUN's durableName, alternateName and standardInquiry are byte arrays sent
 * as one <data> element per byte (about 90 elements a LUN), and its descriptor list repeats
 * its ids. Inside an emitted object they are never built into the tree, and the parser jumps
 * over them unread when they end in its buffer (jump_over(), which says when; else they are
 * tokenized and dropped): at 200 hosts with 512 LUN paths each, that is half of the hosts' elements. A
 * decoder that needs one of these must take it off this list (tests/unit/test_decode.c has a
 * case). */
static const char *const skipped[] = {"durableName", "alternateName", "standardInquiry",
                                      "descriptor"};

#define NSKIPPED (sizeof(skipped) / sizeof(skipped[0]))

/* The same for whole properties, by what their decoders read (vsphere/decode.c): in the value
 * of a property named here, the elements at depth 2 below <val> (the children of each array
 * item) are built only if listed, and with a parent named, the elements at depth 3 below that
 * parent likewise. A host's ScsiLun has some 30 children of which the decoder reads 7, a path
 * 11 of which it reads 5, a virtual device 10-20 of which it reads 9: building and freeing the
 * rest was most of a poll's CPU. Depths 1 (the array items) and beyond 3 are always built, and
 * so is anything in another namespace. A decoder that reads another child of these must add it
 * here (tests/unit/test_decode.c holds a case for every list). */
#define NKEEP_NAMES 10
#define DEVICES_PROP "config.hardware.device"

static const struct kept {
    const char *prop, *parent, *names[NKEEP_NAMES];
} kept[] = {
    {"config.storageDevice.scsiLun", NULL,
     {"key", "canonicalName", "displayName", "vendor", "model", "lunType", "localDisk",
      "protocolEndpoint"}},
    {"config.storageDevice.multipathInfo", NULL,
     {"lun", "path", "policy", "storageArrayTypePolicy"}},
    {"config.storageDevice.multipathInfo", "path",
     {"key", "name", "pathState", "state", "adapter", "transport"}},
    {"config.storageDevice.plugStoreTopology.device", NULL, {"key", "lun"}},
    {"config.storageDevice.plugStoreTopology.plugin", NULL, {"name", "device"}},
    {DEVICES_PROP, NULL,
     {"key", "deviceInfo", "backing", "capacityInBytes", "capacityInKB", "controllerKey",
      "unitNumber", "sharedBus", "busNumber"}},
    {DEVICES_PROP, "deviceInfo", {"label"}},
    {DEVICES_PROP, "backing",
     {"fileName", "datastore", "compatibilityMode", "thinProvisioned", "eagerlyScrub", "parent",
      "sharing"}},
};

#define NKEEP (sizeof(kept) / sizeof(kept[0]))

/* And whole items: of a VM's devices, decode_devices() reads the disks and the controllers
 * (xsi:type VirtualDisk or *Controller); its network cards, CD-ROMs, keyboard, video card and
 * the like, half of its devices, are left out. */
static int wanted_device(const char *type, size_t len)
{
    const char *colon = memchr(type, ':', len);

    if (colon) {
        len -= (size_t)(colon + 1 - type);
        type = colon + 1;
    }
    return (len == 11 && !memcmp(type, "VirtualDisk", 11)) ||
           (len > 10 && !memcmp(type + len - 10, "Controller", 10));
}

/* The tree's memory: blocks that each parse allocates from and gives back to a mark, so an
 * emitted object costs no malloc per element and no free walk. A block of BLOCK_SIZE that a
 * reset leaves behind stays in the chain and is reused by what comes next; a larger one (made
 * for a long text) is freed by the reset, so one big text does not stay held for the rest of the
 * parse, nor do texts of varying sizes pile up blocks that fit none of the next ones. */
#define BLOCK_SIZE (64u << 10)

/* The limits libxml2's own tree had (xmlParserMaxDepth, XML_MAX_TEXT_LENGTH) and that its
 * tokenizer does not apply to SAX callbacks: without them, 4 million nested elements or one
 * text of max_pending bytes (or any length, parsing a whole document) would all be built. */
#define MAX_DEPTH 256
#define MAX_TEXT  10000000 /* bytes: "10 MB" */

/* Under AddressSanitizer, what a reset gives back is poisoned until it is allocated again, so
 * a pointer into an object kept past its callback is reported where it is read. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define VSL_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(VSL_ASAN)
#define VSL_ASAN 1
#endif
#ifdef VSL_ASAN
#include <sanitizer/asan_interface.h>
#define POISON(p, n)   ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POISON(p, n)   ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

struct block {
    struct block *next;
    size_t size, used;
    char data[];
};

/* A place in the arena to go back to: what was allocated after it is given back. */
struct mark {
    struct block *block; /* NULL: before the first block */
    size_t used;
};

/* One open element: what start_element built, and what its end needs. */
struct frame {
    struct vim_node *node;
    struct vim_node *last; /* its last child, where the next one is linked */
    struct vim_node *prev; /* its previous sibling, to unlink it when a callback consumes it */
    struct mark mark;      /* the arena before it: given back with it */
    int had_child;         /* a child element started (built or left out) */
};

struct vim_xml {
    xmlParserCtxtPtr ctxt;
    int emit_depth;
    vim_xml_emit_fn fn;
    void *ctx;
    size_t pending, max_pending;
    int skip; /* depth inside a subtree left out of the tree (0: not in one) */
    /* The skipped names and urn:vim25 as the parser's dictionary holds them: libxml2 hands
     * names and namespace URIs over interned, so a pointer comparison tells them apart. */
    const xmlChar *skip_names[4], *vim_ns;
    const xmlChar *val_name, *devices_prop, *type_name, *xsi_ns;
    /* kept[] with its names interned the same way (a NULL prop, when the dictionary had no
     * room, matches no property: that one is then built whole). */
    struct kept_names {
        const xmlChar *prop, *parent, *names[NKEEP_NAMES];
    } keep[NKEEP];
    const struct kept_names *filter; /* the property whose <val> is open, or NULL */
    int filter_depth;                /* the depth of that <val> */
    /* The tree: blocks (owned, a chain from first), the open elements (owned, depth of them,
     * room for cap) and the root (in the arena; NULL until the first element). */
    struct block *first, *cur;
    struct frame *stack;
    int depth, cap;
    struct vim_node *root;
    /* The text being read: the open element's, at the end of cur (text_len bytes from
     * cur->data + text_at, NUL-terminated, the NUL not counted in cur->used); NULL when none. */
    struct vim_node *text_node;
    size_t text_at, text_len;
    int err; /* first error from a callback or a limit */
    char msg[512];
    int can_jump;       /* the loaded libxml2 is one jump_over() was written for */
    unsigned long jumps; /* the times jump_over() moved the parser (vim_xml_jumps()) */
};

/* Makes cur a block with room for need bytes: the next one in the chain when it is large
 * enough (what a reset left behind), else a new one put after cur. */
static int next_block(struct vim_xml *x, size_t need)
{
    struct block *b = x->cur ? x->cur->next : x->first;

    if (!b || b->size < need) {
        size_t size = need > BLOCK_SIZE ? need : BLOCK_SIZE;
        struct block *nb = malloc(sizeof(*nb) + size);
        if (!nb)
            return -ENOMEM;
        nb->size = size;
        nb->next = b;
        if (x->cur)
            x->cur->next = nb;
        else
            x->first = nb;
        b = nb;
    }
    b->used = 0;
    x->cur = b;
    return 0;
}

/* len bytes, aligned for a node; NULL when out of memory. */
static void *arena_alloc(struct vim_xml *x, size_t len)
{
    const size_t align = _Alignof(struct vim_node);

    if (x->cur) {
        size_t at = (x->cur->used + align - 1) & ~(align - 1);
        if (at <= x->cur->size && len <= x->cur->size - at) {
            x->cur->used = at + len;
            UNPOISON(x->cur->data + at, len);
            return x->cur->data + at;
        }
    }
    if (next_block(x, len) < 0)
        return NULL;
    x->cur->used = len;
    UNPOISON(x->cur->data, len);
    return x->cur->data;
}

static struct mark arena_mark(const struct vim_xml *x)
{
    return (struct mark){x->cur, x->cur ? x->cur->used : 0};
}

/* Gives back what was allocated after m: the blocks after m's larger than BLOCK_SIZE are
 * freed, the others kept for reuse (and poisoned under ASan). */
static void arena_reset(struct vim_xml *x, struct mark m)
{
    struct block **link = m.block ? &m.block->next : &x->first;

    x->cur = m.block;
    if (m.block) {
        m.block->used = m.used;
        POISON(m.block->data + m.used, m.block->size - m.used);
    }
    while (*link) {
        struct block *b = *link;
        if (b->size > BLOCK_SIZE) {
            *link = b->next;
            free(b);
            continue;
        }
        b->used = 0;
        POISON(b->data, b->size);
        link = &b->next;
    }
}

unsigned long vim_xml_jumps(const struct vim_xml *x)
{
    return x ? x->jumps : 0;
}

int vim_xml_can_jump(const struct vim_xml *x)
{
    return x ? x->can_jump : 0;
}

size_t vim_xml_arena_bytes(const struct vim_xml *x)
{
    size_t n = 0;

    for (const struct block *b = x ? x->first : NULL; b; b = b->next)
        n += sizeof(*b) + b->size;
    return n;
}

/* Frees b, a block larger than BLOCK_SIZE that held only the text being read (nothing else
 * points into it), and returns the block before it in the chain (NULL: it was the first). */
static struct block *drop_block(struct vim_xml *x, struct block *b)
{
    struct block *prev = NULL;

    for (struct block *p = x->first; p != b; p = p->next)
        prev = p;
    if (prev)
        prev->next = b->next;
    else
        x->first = b->next;
    free(b);
    return prev;
}

/* Memory ran out while building: the parse ends with that error. */
static void out_of_memory(struct vim_xml *x)
{
    if (!x->err) {
        x->err = -ENOMEM;
        snprintf(x->msg, sizeof(x->msg), "%s", vsl_strerror(x->err));
    }
    xmlStopParser(x->ctxt);
}

static int all_blank(const char *s)
{
    for (; *s; s++)
        if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r')
            return 0;
    return 1;
}

/* Ends the text being read: it keeps its NUL. Text that is only blanks, in an element that
 * has children, is the indentation before them and not the element's (as libxml2's
 * XML_PARSE_NOBLANKS did): its bytes are given back. */
static void end_text(struct vim_xml *x, int had_child)
{
    if (!x->text_node)
        return;
    if (had_child && all_blank(x->text_node->text)) {
        x->text_node->text = NULL;
        /* A long one moved to a block of its own: that block goes. */
        if (x->text_at == 0 && x->cur->size > BLOCK_SIZE) {
            x->cur = drop_block(x, x->cur);
        } else {
            x->cur->used = x->text_at;
            POISON(x->cur->data + x->text_at, x->cur->size - x->text_at);
        }
    } else {
        x->cur->used = x->text_at + x->text_len + 1;
    }
    x->text_node = NULL;
}

/* A limit of the input is passed: the parse ends with err and "line N: " what. */
static void over_limit(struct vim_xml *x, int err, const char *what)
{
    if (!x->err) {
        x->err = err;
        snprintf(x->msg, sizeof(x->msg), "line %d: %s", xmlSAX2GetLineNumber(x->ctxt), what);
    }
    xmlStopParser(x->ctxt);
}

/* The text of an element comes in pieces (around entities, across chunks, CDATA): each is
 * appended at the end of the arena, which nothing else touches until the element's first
 * child or its end, so the text stays one string. */
static void add_text(struct vim_xml *x, const xmlChar *ch, int len)
{
    struct frame *f = x->depth > 0 ? &x->stack[x->depth - 1] : NULL;

    if (x->err || x->skip > 0 || !f || !f->node || len <= 0)
        return;
    /* After a child element (built, left out, or consumed by a callback), text is not the
     * element's value: the decoders read leaves, and the text between emitted objects would
     * otherwise be allocated in their parent, above the next object's mark, for the whole
     * parse. */
    if (f->had_child)
        return;
    if (x->text_node != f->node) {
        char *t = arena_alloc(x, 1);
        if (!t)
            goto nomem;
        x->cur->used--; /* the NUL is counted when the text ends */
        *t = '\0';
        x->text_node = f->node;
        x->text_at = (size_t)(t - x->cur->data);
        x->text_len = 0;
        f->node->text = t;
    }
    size_t n = (size_t)len;
    if (n > MAX_TEXT - x->text_len) {
        /* -VSL_EXML as libxml2's tree had it ("huge text node"): a host's answer with one
         * (an esxcli one) is that host's gap, where -VSL_ETOOBIG would end the collect. */
        over_limit(x, -VSL_EXML, "a text longer than 10 MB");
        return;
    }
    if (x->cur->size - x->text_at - x->text_len - 1 < n) {
        /* Moved whole to a block with room, twice what it needs as a growing buffer does (an
         * esxcli answer is one long text); the old copy is given back. */
        const char *old = x->cur->data + x->text_at;
        struct block *from = x->cur;
        if (next_block(x, 2 * (x->text_len + n + 1)) < 0)
            goto nomem;
        UNPOISON(x->cur->data, x->text_len);
        memcpy(x->cur->data, old, x->text_len);
        from->used = x->text_at;
        if (x->text_at == 0 && from->size > BLOCK_SIZE)
            drop_block(x, from); /* held this text alone, from an earlier move */
        x->text_at = 0;
        f->node->text = x->cur->data;
    }
    char *at = x->cur->data + x->text_at + x->text_len;
    UNPOISON(at, n + 1);
    memcpy(at, ch, n);
    at[n] = '\0';
    x->text_len += n;
    x->cur->used = x->text_at + x->text_len;
    return;
nomem:
    out_of_memory(x);
}

static int skipped_name(const struct vim_xml *x, const xmlChar *localname, const xmlChar *uri)
{
    if (!uri || uri != x->vim_ns)
        return 0;
    for (size_t i = 0; i < NSKIPPED; i++)
        if (localname == x->skip_names[i])
            return 1;
    return 0;
}

/* The type attribute, xsi's (matched by namespace URI, any prefix) or the one in no namespace,
 * among libxml2's attributes, which come as (localname, prefix, URI, value, end); NULL if there
 * is none. Compared by content too: a name not interned must not drop every device. */
static const xmlChar **type_attr(const struct vim_xml *x, int xsi, int nb_attributes,
                                 const xmlChar **attributes)
{
    for (int i = 0; i < nb_attributes; i++) {
        const xmlChar **a = attributes + 5 * i;
        if (a[0] != x->type_name && strcmp((const char *)a[0], "type"))
            continue;
        if (xsi ? a[2] && (a[2] == x->xsi_ns || !strcmp((const char *)a[2], VIM_XSI_NS)) : !a[2])
            return a;
    }
    return NULL;
}

/* Whether the element localname, at depth rel below the filtered <val> with parent parent,
 * is built (see kept[]). */
static int kept_child(const struct vim_xml *x, int rel, const struct vim_node *parent,
                      const xmlChar *localname, int nb_attributes, const xmlChar **attributes)
{
    if (rel == 1 && x->filter->prop == x->devices_prop) {
        const xmlChar **a = type_attr(x, 1, nb_attributes, attributes);
        /* no type: decode_devices() skips it too */
        return a && wanted_device((const char *)a[3], (size_t)(a[4] - a[3]));
    }
    if (rel != 2 && rel != 3)
        return 1;
    for (size_t i = 0; i < NKEEP; i++) {
        const struct kept_names *k = &x->keep[i];
        if (k->prop != x->filter->prop || (rel == 2) != !k->parent)
            continue;
        if (rel == 3 && (!parent || strcmp(parent->name, (const char *)k->parent)))
            continue;
        for (size_t j = 0; j < NKEEP_NAMES && k->names[j]; j++)
            if (localname == k->names[j])
                return 1;
        return 0;
    }
    return 1;
}

/* The kept[] entry of the property whose <val> was just opened below set (a propSet or a
 * changeSet: its <name> comes first), or NULL to build that value whole. */
static const struct kept_names *filter_for(const struct vim_xml *x, const struct vim_node *set)
{
    const struct vim_node *name = set ? set->first : NULL;

    if (!name || strcmp(name->name, "name") || !name->text)
        return NULL;
    for (size_t i = 0; i < NKEEP; i++)
        if (x->keep[i].prop && !strcmp(name->text, (const char *)x->keep[i].prop))
            return &x->keep[i];
    return NULL;
}

/* An attribute's value, NUL-terminated, in the arena. Where it held "&amp;", libxml2 (not
 * replacing entities) hands over "&#38;": that is read back as the "&" it stands for. */
static const char *copy_attr(struct vim_xml *x, const xmlChar **a)
{
    size_t len = (size_t)(a[4] - a[3]);
    char *out = arena_alloc(x, len + 1), *o = out;

    if (!out)
        return NULL;
    for (const xmlChar *p = a[3]; p < a[4]; p++) {
        *o++ = (char)*p;
        if (*p == '&' && a[4] - p >= 5 && !memcmp(p + 1, "#38;", 4))
            p += 4;
    }
    *o = '\0';
    return out;
}

static int push(struct vim_xml *x, struct vim_node *node, struct mark m)
{
    if (x->depth == x->cap) {
        int cap = x->cap ? x->cap * 2 : 64;
        struct frame *s = realloc(x->stack, (size_t)cap * sizeof(*s));
        if (!s)
            return -ENOMEM;
        x->stack = s;
        x->cap = cap;
    }
    struct frame *parent = x->depth > 0 ? &x->stack[x->depth - 1] : NULL;
    struct frame *f = &x->stack[x->depth++];
    *f = (struct frame){.node = node, .mark = m};
    if (parent) {
        node->parent = parent->node;
        f->prev = parent->last;
        if (parent->last)
            parent->last->next = node;
        else
            parent->node->first = node;
        parent->last = node;
    } else {
        x->root = node;
    }
    return 0;
}

/* Whether c may follow a tag's name: the tag's end or the blank before an attribute. */
static int ends_name(xmlChar c)
{
    return c == '>' || c == '/' || c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* The '<' of the end tag "</qn>" of the element whose content starts at p, NULL when it is not
 * in [p, end) or when a plain scan for it could be wrong: the content holds a comment, CDATA
 * or a processing instruction (where "</qn>" may be text), another element spelt qn (whose end
 * tag would be found first), or an end tag spelt qn with a blank before its '>'. */
static const xmlChar *end_tag(const xmlChar *p, const xmlChar *end, const char *qn, size_t qlen)
{
    while (p < end && (p = memchr(p, '<', (size_t)(end - p)))) {
        if ((size_t)(end - p) < qlen + 3)
            return NULL;
        if (p[1] == '!' || p[1] == '?')
            return NULL;
        int close = p[1] == '/';
        const xmlChar *name = p + 1 + close;
        if (name[0] == (xmlChar)qn[0] && !memcmp(name, qn, qlen) && ends_name(name[qlen])) {
            if (close && name[qlen] == '>')
                return p;
            return NULL;
        }
        p = name;
    }
    return NULL;
}

/* libxml2 still tokenizes a subtree that start_element() leaves out (every element, every
 * text), which was most of the parse of a path-dense host's LUNs (their byte arrays) and of a
 * VM's devices. So when the element libxml2 has just read the start tag of (the parser is at
 * its '>') ends within the bytes already buffered, the parser is moved to the byte right
 * before its end tag "</qn>", but only when that byte is a '>' (its last child's end): content
 * that ends in text or whitespace is not jumped over. Likewise past the siblings of the same
 * name that follow it at once ("<qn>" with no attribute, chained only when the first declared
 * no namespace: left out as it is): each but the last is jumped over whole, and the last to
 * the '>' before its end tag, or, when its content ends in text, only to its start tag's '>'
 * (its content is then read), so that the end tag libxml2 reads next is the last one's and
 * closes this element.
 *
 * What is jumped over is not tokenized and seen by no callback. Of it, only this is checked:
 * the scan for '<' gives up (libxml2 reads it all) on a comment, CDATA, a processing
 * instruction, an element spelt qn or an end tag spelt qn with a blank before its '>'; and a
 * span holding a NUL byte is not jumped over. Anything else malformed in it (unbalanced tags,
 * bad names, attributes or references, bytes that are not UTF-8, control characters) is not
 * seen. Whether a subtree is jumped over depends on what is buffered when its start tag is
 * read, that is on how the answer arrived: the same malformed subtree can fail one read of an
 * answer and pass another. Newlines in what is jumped over are counted (in->line) for the
 * error messages; in->col is not updated (vslint prints only the line).
 *
 * This moves libxml2's push parser by its internals (ctxt->input, instate, checkIndex), which
 * are no API. It was run against libxml2 2.9.14 only; read for it were 2.9.14's headers
 * (parser.h's xmlParserInputState, xmlParserInput, xmlParserCtxt), and the states the callback
 * comes in were observed there (tests/unit/test_decode.c). Versions from 2.14 on rework the
 * parser's input, so it is compiled only for 2.9.14 to 2.13, and used only when the library
 * loaded at run time is in the same range (vim_xml_new()); otherwise nothing is jumped over and
 * libxml2 tokenizes the left-out subtrees, as before. */
#if LIBXML_VERSION >= 20914 && LIBXML_VERSION < 21400
#define VIM_XML_JUMP 1
#else
#define VIM_XML_JUMP 0
#endif

static void jump_over(struct vim_xml *x, const xmlChar *prefix, const xmlChar *localname,
                      int nb_namespaces)
{
#if VIM_XML_JUMP
    xmlParserCtxtPtr ctxt = x->ctxt;
    xmlParserInputPtr in = ctxt->input;
    const xmlChar *p, *end, *to = NULL;
    char qn[256];

    /* Only in the states the push parser calls startElementNs from, on its one input (no
     * entity pushed), with its buffer, and at the start tag's '>' ("/>" is not jumped). Run on
     * 2.9.14, the callback comes in XML_PARSER_START_TAG, and in XML_PARSER_CONTENT for a start
     * tag that follows an end tag (test_jumped_namespaces has one): both are accepted. */
    if (!x->can_jump || ctxt->inputNr != 1 ||
        (ctxt->instate != XML_PARSER_START_TAG && ctxt->instate != XML_PARSER_CONTENT) || !in ||
        !in->buf || !in->cur || !in->end || in->cur >= in->end || *in->cur != '>')
        return;
    /* qn as the document spells it: prefix:localname (no snprintf: this runs per element) */
    size_t plen = prefix ? strlen((const char *)prefix) + 1 : 0;
    size_t qlen = plen + strlen((const char *)localname);
    if (qlen >= sizeof(qn))
        return;
    if (prefix) {
        memcpy(qn, prefix, plen - 1);
        qn[plen - 1] = ':';
    }
    memcpy(qn + plen, localname, qlen - plen + 1);
    for (p = in->cur, end = in->end;;) {
        const xmlChar *e = end_tag(p + 1, end, qn, qlen);
        if (!e)
            break;
        /* its last child's '>'; when its content ends in text, its own start tag's '>' (no
         * move for the first element: its content is read) */
        to = e[-1] == '>' ? e - 1 : p;
        p = e + qlen + 3;
        /* A sibling "<qn>" names the same element only where the first declared no
         * namespace: a declaration on it (xmlns:v="...") is out of scope in the next. */
        if (nb_namespaces != 0 || (size_t)(end - p) < qlen + 2 || p[0] != '<' ||
            p[1] != (xmlChar)qn[0] || memcmp(p + 1, qn, qlen) || p[1 + qlen] != '>')
            break;
        p += qlen + 1;
        to = p; /* a sibling's '>': its content is parsed if its end is not found */
    }
    /* A span holding a NUL byte (which libxml2 refuses wherever it reads one) is left to
     * libxml2: that answer fails however it was split. */
    if (!to || to == in->cur || memchr(in->cur, 0, (size_t)(to - in->cur)))
        return;
    for (const xmlChar *nl = in->cur; (nl = memchr(nl, '\n', (size_t)(to - nl))); nl++)
        in->line++;
    in->cur = to;
    ctxt->checkIndex = 0;
    x->jumps++;
#else
    (void)x;
    (void)prefix;
    (void)localname;
    (void)nb_namespaces;
#endif
}

static void start_element(void *ctx, const xmlChar *localname, const xmlChar *prefix,
                          const xmlChar *uri, int nb_namespaces, const xmlChar **namespaces,
                          int nb_attributes, int nb_defaulted, const xmlChar **attributes)
{
    xmlParserCtxtPtr ctxt = ctx;
    struct vim_xml *x = ctxt->_private;
    struct frame *parent = x->depth > 0 ? &x->stack[x->depth - 1] : NULL;

    (void)namespaces;
    (void)nb_defaulted;
    if (x->err)
        return;
    if (x->depth + x->skip >= MAX_DEPTH) {
        over_limit(x, -VSL_EXML, "elements nested deeper than 256");
        return;
    }
    if (x->skip > 0) {
        x->skip++;
        return;
    }
    if (parent)
        parent->had_child = 1;
    /* Only below an emitted element (depth is the parent's): an envelope, a fault or a
     * document read whole keeps every element. */
    if (x->fn && x->depth >= x->emit_depth &&
        (skipped_name(x, localname, uri) ||
         (x->filter && uri == x->vim_ns &&
          !kept_child(x, x->depth + 1 - x->filter_depth, parent->node, localname, nb_attributes,
                      attributes)))) {
        x->skip = 1;
        jump_over(x, prefix, localname, nb_namespaces);
        return;
    }
    end_text(x, 1);
    struct mark m = arena_mark(x);
    struct vim_node *node = arena_alloc(x, sizeof(*node));
    if (!node)
        goto nomem;
    *node = (struct vim_node){.name = (const char *)localname};
    const xmlChar **a = type_attr(x, 1, nb_attributes, attributes);
    if (a && !(node->xsi_type = copy_attr(x, a)))
        goto nomem;
    if ((a = type_attr(x, 0, nb_attributes, attributes)) && !(node->type = copy_attr(x, a)))
        goto nomem;
    if (push(x, node, m) < 0)
        goto nomem;
    /* push() may have moved the stack: the parent's frame is looked up again. */
    parent = x->depth > 1 ? &x->stack[x->depth - 2] : NULL;
    /* A property's <val> inside an object (its propSet at or below the emitted depth). */
    if (x->fn && !x->filter && localname == x->val_name && uri == x->vim_ns &&
        x->depth > x->emit_depth && (x->filter = filter_for(x, parent ? parent->node : NULL)))
        x->filter_depth = x->depth;
    return;
nomem:
    out_of_memory(x);
}

static void characters(void *ctx, const xmlChar *ch, int len)
{
    xmlParserCtxtPtr ctxt = ctx;
    add_text(ctxt->_private, ch, len);
}

static void end_element(void *ctx, const xmlChar *localname, const xmlChar *prefix,
                        const xmlChar *uri)
{
    xmlParserCtxtPtr ctxt = ctx;
    struct vim_xml *x = ctxt->_private;

    (void)localname;
    (void)prefix;
    (void)uri;
    if (x->skip > 0) {
        x->skip--;
        return;
    }
    if (x->err || x->depth == 0)
        return;
    struct frame *f = &x->stack[x->depth - 1];
    int depth = x->depth--;
    end_text(x, f->had_child);
    if (x->filter && depth == x->filter_depth)
        x->filter = NULL;
    if (depth != x->emit_depth || !x->fn)
        return;
    int r = x->fn(x->ctx, f->node);
    if (r < 0) {
        x->err = r;
        snprintf(x->msg, sizeof(x->msg), "%s", vsl_strerror(r));
        xmlStopParser(ctxt);
        return;
    }
    if (r > 0) {
        /* Consumed: unlinked (it is its parent's last child) and its memory given back. */
        struct frame *parent = x->depth > 0 ? &x->stack[x->depth - 1] : NULL;
        if (!parent)
            x->root = NULL;
        else if ((parent->last = f->prev))
            f->prev->next = NULL;
        else
            parent->node->first = NULL;
        arena_reset(x, f->mark);
        x->pending = 0;
    }
}

/* Parse errors are read back with xmlCtxtGetLastError(); libxml2 must not print them. */
static void quiet_error(void *ctx, const xmlError *err)
{
    (void)ctx;
    (void)err;
}

/* libxml2's "generic" errors (e.g. "encoding error : input conversion failed") bypass the
 * parser context; its error globals are per thread, so this is set for every parser made. */
static void quiet_generic(void *ctx, const char *msg, ...)
{
    (void)ctx;
    (void)msg;
}

/* SOAP 1.1 forbids a document type declaration, and an internal subset's entities would
 * expand through the same SAX hooks as the answer's own text: a peer that is not vCenter (with
 * insecure = true and someone in the path) could plant objects inside another object's value.
 * So any DOCTYPE, with or without a subset, ends the parse here, before its subset is read. */
static void refuse_doctype(void *ctxt, const xmlChar *name, const xmlChar *external_id,
                           const xmlChar *system_id)
{
    xmlParserCtxtPtr c = ctxt;
    struct vim_xml *x = c->_private;

    (void)external_id;
    (void)system_id;
    if (!x->err) {
        snprintf(x->msg, sizeof(x->msg),
                 "line %d: the answer has a document type declaration (<!DOCTYPE %.64s>), "
                 "which SOAP forbids",
                 xmlSAX2GetLineNumber(ctxt), name ? (const char *)name : "");
        x->err = -VSL_EXML;
    }
    xmlStopParser(c);
}

int vim_xml_new(struct vim_xml **out, int emit_depth, vim_xml_emit_fn fn, void *ctx,
                size_t max_pending)
{
    xmlSAXHandler sax;
    struct vim_xml *x = calloc(1, sizeof(*x));

    *out = NULL;
    if (!x)
        return -ENOMEM;
    xmlSetGenericErrorFunc(NULL, quiet_generic);
    /* Only the tokenizer's callbacks, ours: none of libxml2's SAX2 tree builders (no
     * xmlSAX2StartDocument, so no xmlDoc), no entity or DTD handlers (a DOCTYPE ends the
     * parse; without one, an entity other than the five predefined is a fatal error). */
    memset(&sax, 0, sizeof(sax));
    sax.initialized = XML_SAX2_MAGIC;
    sax.startElementNs = start_element;
    sax.endElementNs = end_element;
    sax.characters = characters;
    sax.ignorableWhitespace = characters;
    sax.cdataBlock = characters;
    sax.internalSubset = refuse_doctype;
    sax.serror = (xmlStructuredErrorFunc)quiet_error;
    /* No external entities, no network, no DTD loading: the input is remote. */
    x->ctxt = xmlCreatePushParserCtxt(&sax, NULL, NULL, 0, NULL);
    if (!x->ctxt) {
        free(x);
        return -ENOMEM;
    }
    xmlCtxtUseOptions(x->ctxt, XML_PARSE_NONET);
    x->ctxt->_private = x;
    /* The library loaded may not be the one compiled against (jump_over()). */
    int v = atoi(xmlParserVersion);
    x->can_jump = VIM_XML_JUMP && v >= 20914 && v < 21400;
    _Static_assert(NSKIPPED == sizeof(x->skip_names) / sizeof(x->skip_names[0]), "skip_names");
    /* NULL (no dictionary, no memory) matches no name: nothing is skipped. */
    for (size_t i = 0; i < NSKIPPED; i++)
        x->skip_names[i] = xmlDictLookup(x->ctxt->dict, (const xmlChar *)skipped[i], -1);
    x->vim_ns = xmlDictLookup(x->ctxt->dict, (const xmlChar *)VIM_NS, -1);
    x->val_name = xmlDictLookup(x->ctxt->dict, (const xmlChar *)"val", -1);
    x->type_name = xmlDictLookup(x->ctxt->dict, (const xmlChar *)"type", -1);
    x->xsi_ns = xmlDictLookup(x->ctxt->dict, (const xmlChar *)VIM_XSI_NS, -1);
    /* Without these, every device is built. */
    x->devices_prop = x->type_name && x->xsi_ns
                          ? xmlDictLookup(x->ctxt->dict, (const xmlChar *)DEVICES_PROP, -1)
                          : NULL;
    for (size_t i = 0; i < NKEEP; i++) {
        struct kept_names *k = &x->keep[i];
        const xmlChar *prop = xmlDictLookup(x->ctxt->dict, (const xmlChar *)kept[i].prop, -1);
        int ok = prop != NULL;
        if (kept[i].parent)
            ok = ok && (k->parent = xmlDictLookup(x->ctxt->dict,
                                                  (const xmlChar *)kept[i].parent, -1));
        for (size_t j = 0; j < NKEEP_NAMES && kept[i].names[j]; j++)
            ok = ok && (k->names[j] = xmlDictLookup(x->ctxt->dict,
                                                     (const xmlChar *)kept[i].names[j], -1));
        k->prop = ok ? prop : NULL;
    }
    x->emit_depth = emit_depth;
    x->fn = fn;
    x->ctx = ctx;
    x->max_pending = max_pending;
    *out = x;
    return 0;
}

static int parse_error(struct vim_xml *x)
{
    if (x->err)
        return x->err;
    const xmlError *e = xmlCtxtGetLastError(x->ctxt);
    char *nl;
    snprintf(x->msg, sizeof(x->msg), "line %d: %s", e ? e->line : 0,
             e && e->message ? e->message : "parse error");
    if ((nl = strchr(x->msg, '\n')))
        *nl = '\0';
    x->err = -VSL_EXML;
    return x->err;
}

int vim_xml_feed(struct vim_xml *x, const char *data, size_t len)
{
    if (x->err)
        return x->err;
    while (len > 0) {
        /* Feed in bounded chunks so the pending-byte limit is checked often. */
        size_t n = len > 65536 ? 65536 : len;
        x->pending += n;
        if (x->max_pending && x->pending > x->max_pending) {
            snprintf(x->msg, sizeof(x->msg), "a single object exceeds %zu bytes", x->max_pending);
            x->err = -VSL_ETOOBIG;
            return x->err;
        }
        if (xmlParseChunk(x->ctxt, data, (int)n, 0) != 0 || x->err)
            return parse_error(x);
        data += n;
        len -= n;
    }
    return 0;
}

int vim_xml_finish(struct vim_xml *x)
{
    if (x->err)
        return x->err;
    if (xmlParseChunk(x->ctxt, NULL, 0, 1) != 0 || x->err || !x->ctxt->wellFormed)
        return parse_error(x);
    if (!x->root) {
        snprintf(x->msg, sizeof(x->msg), "empty document");
        x->err = -VSL_EXML;
        return x->err;
    }
    return 0;
}

struct vim_node *vim_xml_root(struct vim_xml *x)
{
    return x ? x->root : NULL;
}

const char *vim_xml_error(struct vim_xml *x)
{
    return x->msg[0] ? x->msg : "no error";
}

void vim_xml_free(struct vim_xml *x)
{
    if (!x)
        return;
    while (x->first) {
        struct block *b = x->first;
        x->first = b->next;
        free(b);
    }
    free(x->stack);
    xmlFreeParserCtxt(x->ctxt);
    free(x);
}

int vim_xml_parse_all(const char *data, size_t len, int emit_depth, vim_xml_emit_fn fn, void *ctx,
                      struct vim_xml **out)
{
    int r = vim_xml_new(out, emit_depth, fn, ctx, 0);
    if (r < 0)
        return r;
    r = vim_xml_feed(*out, data, len);
    if (r == 0)
        r = vim_xml_finish(*out);
    return r;
}

int vim_name_is(const struct vim_node *n, const char *name)
{
    return n && !strcmp(n->name, name);
}

/* The first element from c on (c itself, then its next siblings) named name, or c when name
 * is NULL. */
static struct vim_node *elem_from(struct vim_node *c, const char *name)
{
    if (name)
        while (c && strcmp(c->name, name))
            c = c->next;
    return c;
}

struct vim_node *vim_first_elem(const struct vim_node *parent)
{
    return parent ? parent->first : NULL;
}

struct vim_node *vim_next_elem(const struct vim_node *node)
{
    return node ? node->next : NULL;
}

struct vim_node *vim_child(const struct vim_node *parent, const char *name)
{
    return parent ? elem_from(parent->first, name) : NULL;
}

struct vim_node *vim_next(const struct vim_node *node, const char *name)
{
    return node ? elem_from(node->next, name) : NULL;
}

struct vim_node *vim_path(const struct vim_node *n, const char *path)
{
    char part[128];

    /* one name, most of the decoders' lookups: no copy */
    if (*path && !strchr(path, '/'))
        return vim_child(n, path);
    while (n && *path) {
        const char *slash = strchr(path, '/');
        size_t len = slash ? (size_t)(slash - path) : strlen(path);
        if (len >= sizeof(part))
            return NULL;
        memcpy(part, path, len);
        part[len] = '\0';
        n = vim_child(n, part);
        path += len + (slash ? 1 : 0);
    }
    return (struct vim_node *)n;
}

const char *vim_text(const struct vim_node *n)
{
    return n ? n->text : NULL;
}

const char *vim_path_text(const struct vim_node *n, const char *path)
{
    return vim_text(vim_path(n, path));
}

int64_t vim_path_int(const struct vim_node *n, const char *path, int64_t dflt)
{
    const char *s = vim_path_text(n, path);
    char *end;

    if (!s)
        return dflt;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end)
        return dflt;
    return v;
}

int vim_path_int32(const struct vim_node *n, const char *path, int dflt)
{
    int64_t v = vim_path_int(n, path, dflt);
    return v < INT_MIN || v > INT_MAX ? dflt : (int)v;
}

int vim_path_bool(const struct vim_node *n, const char *path, int dflt)
{
    return vsl_parse_bool(vim_path_text(n, path), dflt);
}

const char *vim_xsi_type(const struct vim_node *n, char *buf, size_t len)
{
    if (!n || !n->xsi_type || !len)
        return NULL;
    const char *colon = strchr(n->xsi_type, ':'), *t = colon ? colon + 1 : n->xsi_type;
    size_t tl = strlen(t);
    if (tl >= len)
        tl = len - 1; /* cut short, as snprintf would */
    memcpy(buf, t, tl);
    buf[tl] = '\0';
    return buf;
}

/* Whether id is one of the ", "-separated ids in list. */
static int listed(const char *list, const char *id)
{
    size_t n = strlen(id);
    for (const char *p = list; (p = strstr(p, id)); p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == '\0' || p[n] == ','))
            return 1;
    return 0;
}

const char *vim_fault_privileges(const struct vim_node *fault, char *buf, size_t len)
{
    const char *one = vim_path_text(fault, "privilegeId");
    size_t used = 0;

    if (!len)
        return NULL;
    buf[0] = '\0';
    if (one && *one)
        return strlen(one) < len ? (snprintf(buf, len, "%s", one), buf) : NULL;
    for (struct vim_node *m = vim_child(fault, "missingPrivileges"); m;
         m = vim_next(m, "missingPrivileges"))
        for (struct vim_node *id = vim_child(m, "privilegeIds"); id;
             id = vim_next(id, "privilegeIds")) {
            const char *t = vim_text(id);
            if (!t || !*t || listed(buf, t))
                continue;
            int w = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", t);
            if (w < 0 || (size_t)w >= len - used)
                return NULL;
            used += (size_t)w;
        }
    return used ? buf : NULL;
}

int vim_parse_time(const char *s, int64_t *out)
{
    struct tm tm;
    int y, mo, d, h, mi, sec;
    int n = 0;

    if (!s || sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &n) != 6)
        return -EINVAL;
    s += n;
    if (*s == '.')
        for (s++; *s >= '0' && *s <= '9'; s++)
            ;
    long off = 0;
    if (*s == '+' || *s == '-') {
        int oh, om;
        if (sscanf(s + 1, "%2d:%2d", &oh, &om) != 2)
            return -EINVAL;
        off = (oh * 3600L + om * 60L) * (*s == '-' ? -1 : 1);
    } else if (*s != 'Z' && *s != '\0') {
        return -EINVAL;
    }
    memset(&tm, 0, sizeof(tm));
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = sec;
    *out = (int64_t)timegm(&tm) - off;
    return 0;
}

struct vim_node *vim_prop(const struct vim_node *objects, const char *name)
{
    for (struct vim_node *p = vim_child(objects, "propSet"); p; p = vim_next(p, "propSet")) {
        const char *n = vim_path_text(p, "name");
        if (n && !strcmp(n, name))
            return vim_child(p, "val");
    }
    return NULL;
}
