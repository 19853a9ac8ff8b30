/* vCenter session and property collector: service content, login/logout, container views, and
 * RetrievePropertiesEx with ContinueRetrievePropertiesEx paging, objects streamed to a callback. */
#ifndef VIM_SESSION_H
#define VIM_SESSION_H

#include "vsphere/soap.h"

/* Reads /sdk/vimServiceVersions.xml (for the SOAPAction) and the ServiceInstance content. */
int vim_connect(struct vim_client *c);
/* SessionManager.Login. The password is not kept. -VSL_ELOGIN when rejected. */
int vim_login(struct vim_client *c, const char *user, const char *password);
int vim_logout(struct vim_client *c);

/* ViewManager.CreateContainerView on the root folder, recursive. *view is malloc'd. */
int vim_create_view(struct vim_client *c, const char *type, char **view);
int vim_destroy_view(struct vim_client *c, const char *view);

/* Called once per ObjectContent: moref and the <objects> element (propSet children). Returns 0
 * or a negative error, which stops the retrieval (the server-side result is cancelled). */
typedef int (*vim_object_fn)(void *ctx, const char *moref, struct vim_node *objects);

/* Reads paths of every object of type in view, page by page: each next page is fetched on a
 * second connection while the current one is decoded. */
int vim_retrieve_view(struct vim_client *c, const char *view, const char *type,
                      const char *const *paths, vim_object_fn fn, void *ctx);

/* Reads paths of the n objects of type named by morefs (no view), paged like
 * vim_retrieve_view. An object the server cannot read comes to fn with a missingSet. */
int vim_retrieve_objects(struct vim_client *c, const char *type, const char *const *morefs,
                         size_t n, const char *const *paths, vim_object_fn fn, void *ctx);

/* Appends <tag type="TYPE">moref</tag>. */
struct vsl_buf;
int vim_add_moref(struct vsl_buf *b, const char *tag, const char *type, const char *moref);
/* Appends <tag>text</tag> with text escaped. */
int vim_add_elem(struct vsl_buf *b, const char *tag, const char *text);

/* Calls method on the managed object (type, moref): <method><_this ...>moref</_this>ARGS
 * </method>, args being ready XML (NULL for none). Elements at emit_depth stream to fn as in
 * vim_call(); *out (may be NULL) receives the parsed answer. The request is wiped after use,
 * since it may hold a password. */
int vim_invoke(struct vim_client *c, const char *method, const char *type, const char *moref,
               const char *args, int emit_depth, vim_xml_emit_fn fn, void *ctx,
               struct vim_xml **out);

#endif
