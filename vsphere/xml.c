/* The streaming parser behind every SOAP call, and the DOM helpers the decoders use.
 * libxml2's SAX2 handlers build the tree; our endElementNs hook detaches finished objects. */
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
 * its ids. Inside an emitted object they are parsed (the document must still be well formed)
 * but never built into the tree: at 200 hosts with 512 LUN paths each, that is half of the
 * hosts' elements, and building and freeing the tree is most of a poll's time. A decoder
 * that needs one of these must take it off this list (tests/unit/test_decode.c has a case). */
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
    int err; /* first error from a callback or a limit */
    char msg[512];
};

static int skipped_name(const struct vim_xml *x, const xmlChar *localname, const xmlChar *uri)
{
    if (!uri || uri != x->vim_ns)
        return 0;
    for (size_t i = 0; i < NSKIPPED; i++)
        if (localname == x->skip_names[i])
            return 1;
    return 0;
}

/* Whether the element localname, at depth rel below the filtered <val> with parent parent,
 * is built (see kept[]). */
static int kept_child(const struct vim_xml *x, int rel, const xmlNode *parent,
                      const xmlChar *localname, int nb_attributes, const xmlChar **attributes)
{
    if (rel == 1 && x->filter->prop == x->devices_prop) {
        /* libxml2 hands attributes over as (localname, prefix, URI, value, end). Compared
         * by content too: a name not interned must not drop every device. */
        for (int i = 0; i < nb_attributes; i++) {
            const xmlChar **a = attributes + 5 * i;
            if ((a[0] == x->type_name || !strcmp((const char *)a[0], "type")) && a[2] &&
                (a[2] == x->xsi_ns || !strcmp((const char *)a[2], VIM_XSI_NS)))
                return wanted_device((const char *)a[3], (size_t)(a[4] - a[3]));
        }
        return 0; /* no type: decode_devices() skips it too */
    }
    if (rel != 2 && rel != 3)
        return 1;
    for (size_t i = 0; i < NKEEP; i++) {
        const struct kept_names *k = &x->keep[i];
        if (k->prop != x->filter->prop || (rel == 2) != !k->parent)
            continue;
        if (rel == 3 && (!parent || !parent->name || strcmp((const char *)parent->name,
                                                            (const char *)k->parent)))
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
static const struct kept_names *filter_for(const struct vim_xml *x, const xmlNode *set)
{
    const xmlNode *name = NULL;

    for (const xmlNode *c = set ? set->children : NULL; c && !name; c = c->next)
        if (c->type == XML_ELEMENT_NODE)
            name = c;
    if (!name || !name->name || strcmp((const char *)name->name, "name"))
        return NULL;
    const xmlNode *t = name->children;
    /* One text node or none: a name split around an entity reference is not ours. */
    if (!t || t->type != XML_TEXT_NODE || t->next || !t->content)
        return NULL;
    for (size_t i = 0; i < NKEEP; i++)
        if (x->keep[i].prop && !strcmp((const char *)t->content, (const char *)x->keep[i].prop))
            return &x->keep[i];
    return NULL;
}

static void start_element(void *ctx, const xmlChar *localname, const xmlChar *prefix,
                          const xmlChar *uri, int nb_namespaces, const xmlChar **namespaces,
                          int nb_attributes, int nb_defaulted, const xmlChar **attributes)
{
    xmlParserCtxtPtr ctxt = ctx;
    struct vim_xml *x = ctxt->_private;

    if (x->skip > 0) {
        x->skip++;
        return;
    }
    /* Only below an emitted element (nodeNr is the depth of the parent): an envelope, a fault
     * or a document read whole keeps every element. */
    if (x->fn && ctxt->nodeNr >= x->emit_depth &&
        (skipped_name(x, localname, uri) ||
         (x->filter && uri == x->vim_ns &&
          !kept_child(x, ctxt->nodeNr + 1 - x->filter_depth, ctxt->node, localname,
                      nb_attributes, attributes)))) {
        x->skip = 1;
        return;
    }
    xmlSAX2StartElementNs(ctx, localname, prefix, uri, nb_namespaces, namespaces, nb_attributes,
                          nb_defaulted, attributes);
    /* A property's <val> inside an object (its propSet at or below the emitted depth). */
    if (x->fn && !x->filter && localname == x->val_name && uri == x->vim_ns &&
        ctxt->nodeNr > x->emit_depth && ctxt->node && ctxt->node->name == localname &&
        (x->filter = filter_for(x, ctxt->node->parent)))
        x->filter_depth = ctxt->nodeNr;
}

static void characters(void *ctx, const xmlChar *ch, int len)
{
    xmlParserCtxtPtr ctxt = ctx;
    struct vim_xml *x = ctxt->_private;

    if (x->skip == 0)
        xmlSAX2Characters(ctx, ch, len);
}

static void cdata_block(void *ctx, const xmlChar *value, int len)
{
    xmlParserCtxtPtr ctxt = ctx;
    struct vim_xml *x = ctxt->_private;

    if (x->skip == 0)
        xmlSAX2CDataBlock(ctx, value, len);
}

static void reference(void *ctx, const xmlChar *name)
{
    xmlParserCtxtPtr ctxt = ctx;
    struct vim_xml *x = ctxt->_private;

    if (x->skip == 0)
        xmlSAX2Reference(ctx, name);
}

static void end_element(void *ctx, const xmlChar *localname, const xmlChar *prefix,
                        const xmlChar *uri)
{
    xmlParserCtxtPtr ctxt = ctx;
    struct vim_xml *x = ctxt->_private;
    xmlNode *cur = ctxt->node;
    int depth = ctxt->nodeNr;

    if (x->skip > 0) {
        if (--x->skip == 0) {
            /* The text after the subtree goes to a new node, as after a freed object. */
            ctxt->nodelen = 0;
            ctxt->nodemem = 0;
        }
        return;
    }
    if (x->filter && depth == x->filter_depth)
        x->filter = NULL;
    xmlSAX2EndElementNs(ctx, localname, prefix, uri);
    if (x->err || !cur || depth != x->emit_depth || !x->fn)
        return;
    int r = x->fn(x->ctx, cur);
    if (r < 0) {
        x->err = r;
        snprintf(x->msg, sizeof(x->msg), "%s", vsl_strerror(r));
        xmlStopParser(ctxt);
        return;
    }
    if (r > 0) {
        xmlUnlinkNode(cur);
        xmlFreeNode(cur);
        x->pending = 0;
        /* libxml2 appends text to the parent's last text node at offset nodelen, which it
         * tracks for the node it built last. With cur gone, an earlier text node can be last
         * again and that offset is stale: nodemem = 0 makes it concatenate the slow, safe way
         * (found by tests/fuzz/fuzz_soap under AddressSanitizer). */
        ctxt->nodelen = 0;
        ctxt->nodemem = 0;
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
    memset(&sax, 0, sizeof(sax));
    xmlSAXVersion(&sax, 2);
    sax.startElementNs = start_element;
    sax.endElementNs = end_element;
    sax.characters = characters;
    sax.cdataBlock = cdata_block;
    sax.reference = reference;
    sax.internalSubset = refuse_doctype;
    sax.serror = (xmlStructuredErrorFunc)quiet_error;
    sax.error = NULL;
    sax.warning = NULL;
    /* No external entities, no network, no DTD loading: the input is remote. */
    x->ctxt = xmlCreatePushParserCtxt(&sax, NULL, NULL, 0, NULL);
    if (!x->ctxt) {
        free(x);
        return -ENOMEM;
    }
    xmlCtxtUseOptions(x->ctxt, XML_PARSE_NONET | XML_PARSE_NOBLANKS | XML_PARSE_COMPACT);
    x->ctxt->_private = x;
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
    if (!x->ctxt->myDoc || !xmlDocGetRootElement(x->ctxt->myDoc)) {
        snprintf(x->msg, sizeof(x->msg), "empty document");
        x->err = -VSL_EXML;
        return x->err;
    }
    return 0;
}

xmlDoc *vim_xml_doc(struct vim_xml *x)
{
    return x->ctxt->myDoc;
}

const char *vim_xml_error(struct vim_xml *x)
{
    return x->msg[0] ? x->msg : "no error";
}

void vim_xml_free(struct vim_xml *x)
{
    if (!x)
        return;
    if (x->ctxt->myDoc)
        xmlFreeDoc(x->ctxt->myDoc);
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

int vim_name_is(const xmlNode *n, const char *name)
{
    return n && n->type == XML_ELEMENT_NODE && !strcmp((const char *)n->name, name);
}

/* The first element from c on (c itself, then its next siblings) named name, or of any name
 * when name is NULL. */
static xmlNode *elem_from(xmlNode *c, const char *name)
{
    for (; c; c = c->next)
        if (name ? vim_name_is(c, name) : c->type == XML_ELEMENT_NODE)
            return c;
    return NULL;
}

xmlNode *vim_first_elem(const xmlNode *parent)
{
    return parent ? elem_from(parent->children, NULL) : NULL;
}

xmlNode *vim_next_elem(const xmlNode *node)
{
    return node ? elem_from(node->next, NULL) : NULL;
}

xmlNode *vim_child(const xmlNode *parent, const char *name)
{
    return parent ? elem_from(parent->children, name) : NULL;
}

xmlNode *vim_next(const xmlNode *node, const char *name)
{
    return node ? elem_from(node->next, name) : NULL;
}

xmlNode *vim_path(const xmlNode *n, const char *path)
{
    char part[128];

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
    return (xmlNode *)n;
}

const char *vim_text(const xmlNode *n)
{
    if (!n)
        return NULL;
    xmlNode *t = n->children;
    if (!t)
        return NULL;
    /* Adjacent text nodes can appear around entity references: merge them once. */
    while (t->next && t->type == XML_TEXT_NODE && t->next->type == XML_TEXT_NODE)
        if (!xmlTextMerge(t, t->next))
            break;
    if (t->type != XML_TEXT_NODE && t->type != XML_CDATA_SECTION_NODE)
        return NULL;
    return (const char *)t->content;
}

const char *vim_path_text(const xmlNode *n, const char *path)
{
    return vim_text(vim_path(n, path));
}

int64_t vim_path_int(const xmlNode *n, const char *path, int64_t dflt)
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

int vim_path_int32(const xmlNode *n, const char *path, int dflt)
{
    int64_t v = vim_path_int(n, path, dflt);
    return v < INT_MIN || v > INT_MAX ? dflt : (int)v;
}

int vim_path_bool(const xmlNode *n, const char *path, int dflt)
{
    return vsl_parse_bool(vim_path_text(n, path), dflt);
}

const char *vim_xsi_type(const xmlNode *n, char *buf, size_t len)
{
    if (!n || n->type != XML_ELEMENT_NODE)
        return NULL;
    for (xmlAttr *a = n->properties; a; a = a->next) {
        if (strcmp((const char *)a->name, "type") || !a->ns || !a->ns->href ||
            strcmp((const char *)a->ns->href, VIM_XSI_NS))
            continue;
        const char *v = a->children ? (const char *)a->children->content : NULL;
        if (!v)
            return NULL;
        const char *colon = strchr(v, ':');
        snprintf(buf, len, "%s", colon ? colon + 1 : v);
        return buf;
    }
    return NULL;
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

const char *vim_fault_privileges(const xmlNode *fault, char *buf, size_t len)
{
    const char *one = vim_path_text(fault, "privilegeId");
    size_t used = 0;

    if (!len)
        return NULL;
    buf[0] = '\0';
    if (one && *one)
        return strlen(one) < len ? (snprintf(buf, len, "%s", one), buf) : NULL;
    for (xmlNode *m = vim_child(fault, "missingPrivileges"); m; m = vim_next(m, "missingPrivileges"))
        for (xmlNode *id = vim_child(m, "privilegeIds"); id; id = vim_next(id, "privilegeIds")) {
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

xmlNode *vim_prop(const xmlNode *objects, const char *name)
{
    for (xmlNode *p = vim_child(objects, "propSet"); p; p = vim_next(p, "propSet")) {
        const char *n = vim_path_text(p, "name");
        if (n && !strcmp(n, name))
            return vim_child(p, "val");
    }
    return NULL;
}
