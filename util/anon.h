/* Anonymizing a capture (`vslint record --anonymize`): names of hosts, VMs, datastores,
 * clusters, datacenters, folders and array objects, IQNs, WWNs, IPv4 and IPv6 addresses
 * replaced by tokens, the same original by the same token everywhere, structure and numbers
 * kept. */
#ifndef VSL_ANON_H
#define VSL_ANON_H

#include <stddef.h>

struct vsl_buf;
struct vsl_anon;

int vsl_anon_new(struct vsl_anon **out);
void vsl_anon_free(struct vsl_anon *a); /* NULL is a no-op */

/* First pass: learns what to replace from one answer: json 0 for a SOAP answer (the name
 * property of every managed object, every *WorldWideName), 1 for a REST one (every "name",
 * the "wwn" of a Fibre Channel port when path names fcPort). Every other text value of the
 * answers is learned too, so that a name which is also one of the API's words (a datastore
 * called "VMFS") is kept rather than replaced in every place the word stands. */
int vsl_anon_learn(struct vsl_anon *a, int json, const char *path, const char *body, size_t len);
/* Learns one more name to replace, of kind ("vcenter": the configured name and the URL's host,
 * which answers may repeat). */
int vsl_anon_name(struct vsl_anon *a, const char *name, const char *kind);
/* Ends the first pass: the table of replacements. */
int vsl_anon_seal(struct vsl_anon *a);
/* Second pass: appends body to out with every learned name and WWN, every IQN and every IPv4
 * address that is not a netmask replaced. In XML (json 0) only text is changed, never markup.
 * Addresses keep their prefixes: two addresses that share the first one, two or three
 * octets still do afterwards (subnets stay subnets); IPv6 addresses keep their /64s. */
int vsl_anon_apply(struct vsl_anon *a, int json, const char *body, size_t len, struct vsl_buf *out);

/* What was replaced, for the archive's README. */
struct vsl_anon_stats {
    size_t names, kept_names, iqns, addresses, addresses6, wwns, macs;
};
void vsl_anon_stats(const struct vsl_anon *a, struct vsl_anon_stats *s);

#endif
