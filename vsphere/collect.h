/* One poll of one vCenter: read every type the checks need through container views and the
 * paged property collector, then the per-host extras, and emit rows to a sink. */
#ifndef VIM_COLLECT_H
#define VIM_COLLECT_H

#include "model/inventory.h"
#include "vsphere/soap.h"

/* The client must be connected and logged in. Returns 0 or a negative error with
 * vim_client_error() set. -VSL_ENOAUTH means: log in again and run the whole poll again.
 * A host that refuses a per-host call (esxcli, options, bindings) is not an error: it is
 * reported as a gap row and the poll goes on. */
int vim_collect(struct vim_client *c, struct vim_sink *sink);

/* Re-reads the objects that entered or changed in cs (leaving ones are the caller's to
 * remove), by moref with one RetrievePropertiesEx per type, with the poll's paths and decoders,
 * and runs the per-host reads of the hosts among them. Same errors as vim_collect(). */
struct vim_changes;
int vim_collect_changes(struct vim_client *c, const struct vim_changes *cs, struct vim_sink *sink);

/* Whether error r ends a poll (session lost, network, TLS, memory, an answer too big, a page
 * that may have been lost: the poll is run again); any other failure of a read is a gap in
 * the snapshot. */
int vim_poll_fatal(int r);
/* The client's last error without its leading "URL: ", as a gap's text. */
const char *vim_gap_error(const struct vim_client *c);

#endif
