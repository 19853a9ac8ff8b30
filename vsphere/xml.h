/* Streaming SOAP response parsing: libxml2's push parser builds a tree, and each element at a
 * chosen depth is handed to a callback and freed as soon as it closes, so memory stays flat in
 * the size of a response. Plus small DOM helpers that match names by local name. */
#ifndef VIM_XML_H
#define VIM_XML_H

#include <stddef.h>
#include <stdint.h>

#include <libxml/tree.h>

#define VIM_NS "urn:vim25"
#define VIM_XSI_NS "http://www.w3.org/2001/XMLSchema-instance"

/* Called when an element at emit_depth closes (the Envelope is depth 1). Returns 1 when it has
 * consumed the node (it is then freed), 0 to keep it in the tree, or a negative error. */
typedef int (*vim_xml_emit_fn)(void *ctx, xmlNode *node);

struct vim_xml;

/* max_pending bounds the bytes fed since the last emitted element (a single object or a whole
 * small response); beyond it feeding fails with -VSL_ETOOBIG. */
int vim_xml_new(struct vim_xml **out, int emit_depth, vim_xml_emit_fn fn, void *ctx,
                size_t max_pending);
int vim_xml_feed(struct vim_xml *x, const char *data, size_t len);
int vim_xml_finish(struct vim_xml *x);
/* The tree left after parsing (what no callback consumed); owned by x. */
xmlDoc *vim_xml_doc(struct vim_xml *x);
/* "line N: message" for the first parse error, or the callback's error; never NULL. */
const char *vim_xml_error(struct vim_xml *x);
void vim_xml_free(struct vim_xml *x); /* NULL is a no-op */

/* Parses a whole in-memory document with the same streaming machinery (tests, esxcli). */
int vim_xml_parse_all(const char *data, size_t len, int emit_depth, vim_xml_emit_fn fn, void *ctx,
                      struct vim_xml **out);

/* DOM helpers: names are local names; NULL in, NULL out. */
xmlNode *vim_child(const xmlNode *parent, const char *name);
xmlNode *vim_next(const xmlNode *node, const char *name); /* next sibling element with name */
xmlNode *vim_first_elem(const xmlNode *parent);
xmlNode *vim_next_elem(const xmlNode *node);
xmlNode *vim_path(const xmlNode *n, const char *path); /* "spec/ip/ipAddress" */
/* The element's text (borrowed from the tree) or NULL if it has none. */
const char *vim_text(const xmlNode *n);
const char *vim_path_text(const xmlNode *n, const char *path);

/* The value (<val>) of the property name in an <objects> element of a RetrieveResult: the
 * <propSet> whose <name> is name. NULL when the object has no such property. */
xmlNode *vim_prop(const xmlNode *objects, const char *name);
int64_t vim_path_int(const xmlNode *n, const char *path, int64_t dflt);
/* The same for an int field (keys, MTUs, ports): a value outside int's range is dflt too. */
int vim_path_int32(const xmlNode *n, const char *path, int dflt);
/* vsl_parse_bool of the text at path: 1 for "true"/"1", 0 for "false"/"0", dflt otherwise. */
int vim_path_bool(const xmlNode *n, const char *path, int dflt);
/* Local part of the xsi:type attribute (matched by namespace URI, any prefix), or NULL. */
const char *vim_xsi_type(const xmlNode *n, char *buf, size_t len);
int vim_name_is(const xmlNode *n, const char *name);
/* The privileges a NoPermission fault (the element holding its fields) says are missing: its
 * privilegeId, or (vSphere 7.0.3 on, where privilegeId is deprecated) each missingPrivileges'
 * privilegeIds, once each, joined with ", ". NULL when it names none or they do not fit len. */
const char *vim_fault_privileges(const xmlNode *fault, char *buf, size_t len);
/* Parses xsd:dateTime ("2026-11-29T19:14:44.7375Z", "+02:00" offsets) into unix seconds. */
int vim_parse_time(const char *s, int64_t *out);

#endif
