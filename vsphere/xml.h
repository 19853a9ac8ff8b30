/* Streaming SOAP response parsing: libxml2's push parser tokenizes, our SAX callbacks build a
 * compact read-only tree in an arena, and each element at a chosen depth is handed to a
 * callback and its memory given back as soon as it closes, so memory stays flat in the size of
 * a response. Plus small DOM helpers that match names by local name. */
#ifndef VIM_XML_H
#define VIM_XML_H

#include <stddef.h>
#include <stdint.h>

#define VIM_NS "urn:vim25"
#define VIM_XSI_NS "http://www.w3.org/2001/XMLSchema-instance"

/* An element: its local name (any namespace), its text, the type attributes the decoders read,
 * and its child elements. Owned by the parse: valid until the callback it was handed to returns
 * 1, else until vim_xml_free. Comments, processing instructions and attributes other than
 * these two are not kept. */
struct vim_node {
    const char *name; /* local name, never NULL */
    /* The character data (entities and CDATA decoded, pieces joined) before its first child
     * element, or NULL when it has none (or only blanks and children). Text after a child is
     * not kept: the decoders read leaves. */
    const char *text;
    const char *xsi_type; /* the xsi:type attribute as sent ("vim25:VirtualDisk"), or NULL */
    const char *type;     /* the type attribute in no namespace (a MoRef's), or NULL */
    struct vim_node *first, *next, *parent;
};

/* Called when an element at emit_depth closes (the Envelope is depth 1). Returns 1 when it has
 * consumed the node (it is then unlinked and its memory reused: no pointer into it may be kept),
 * 0 to keep it in the tree, or a negative error. */
typedef int (*vim_xml_emit_fn)(void *ctx, struct vim_node *node);

struct vim_xml;

/* max_pending bounds the bytes fed since the last emitted element (a single object or a whole
 * small response); beyond it feeding fails with -VSL_ETOOBIG. */
int vim_xml_new(struct vim_xml **out, int emit_depth, vim_xml_emit_fn fn, void *ctx,
                size_t max_pending);
int vim_xml_feed(struct vim_xml *x, const char *data, size_t len);
int vim_xml_finish(struct vim_xml *x);
/* The root element of the tree left after parsing (what no callback consumed), or NULL (x NULL,
 * or no element); owned by x. */
struct vim_node *vim_xml_root(struct vim_xml *x);
/* "line N: message" for the first parse error, or the callback's error; never NULL. */
const char *vim_xml_error(struct vim_xml *x);
void vim_xml_free(struct vim_xml *x); /* NULL is a no-op */
/* The bytes the tree's arena holds now (allocated from it or kept for reuse), for tests of
 * its bounds; 0 for NULL. */
size_t vim_xml_arena_bytes(const struct vim_xml *x);
/* The times the parser jumped over a left-out subtree unread, for tests; 0 for NULL. */
unsigned long vim_xml_jumps(const struct vim_xml *x);
/* Whether x may jump at all: 0 when the libxml2 compiled against or loaded is not a version
 * jump_over() in vsphere/xml.c was written for (nothing is jumped over then). */
int vim_xml_can_jump(const struct vim_xml *x);

/* Parses a whole in-memory document with the same streaming machinery (tests, esxcli). */
int vim_xml_parse_all(const char *data, size_t len, int emit_depth, vim_xml_emit_fn fn, void *ctx,
                      struct vim_xml **out);

/* DOM helpers: names are local names; NULL in, NULL out. */
struct vim_node *vim_child(const struct vim_node *parent, const char *name);
/* The next sibling element named name. */
struct vim_node *vim_next(const struct vim_node *node, const char *name);
struct vim_node *vim_first_elem(const struct vim_node *parent);
struct vim_node *vim_next_elem(const struct vim_node *node);
struct vim_node *vim_path(const struct vim_node *n, const char *path); /* "spec/ip/ipAddress" */
/* The element's text (borrowed from the tree) or NULL if it has none. */
const char *vim_text(const struct vim_node *n);
const char *vim_path_text(const struct vim_node *n, const char *path);

/* The value (<val>) of the property name in an <objects> element of a RetrieveResult: the
 * <propSet> whose <name> is name. NULL when the object has no such property. */
struct vim_node *vim_prop(const struct vim_node *objects, const char *name);
int64_t vim_path_int(const struct vim_node *n, const char *path, int64_t dflt);
/* The same for an int field (keys, MTUs, ports): a value outside int's range is dflt too. */
int vim_path_int32(const struct vim_node *n, const char *path, int dflt);
/* vsl_parse_bool of the text at path: 1 for "true"/"1", 0 for "false"/"0", dflt otherwise. */
int vim_path_bool(const struct vim_node *n, const char *path, int dflt);
/* Local part of the xsi:type attribute (matched by namespace URI, any prefix), or NULL. */
const char *vim_xsi_type(const struct vim_node *n, char *buf, size_t len);
int vim_name_is(const struct vim_node *n, const char *name);
/* The privileges a NoPermission fault (the element holding its fields) says are missing: its
 * privilegeId, or (vSphere 7.0.3 on, where privilegeId is deprecated) each missingPrivileges'
 * privilegeIds, once each, joined with ", ". NULL when it names none or they do not fit len. */
const char *vim_fault_privileges(const struct vim_node *fault, char *buf, size_t len);
/* Parses xsd:dateTime ("2026-11-29T19:14:44.7375Z", "+02:00" offsets) into unix seconds. */
int vim_parse_time(const char *s, int64_t *out);

#endif
