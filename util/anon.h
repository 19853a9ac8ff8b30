/* Anonymizing a capture (`vslint record --anonymize`): the names the estate owns, host names
 * and domains, URL hosts, e-mail addresses, IQNs, WWNs, MAC, IPv4 and IPv6 addresses replaced
 * by tokens, the same original (whatever its case) by the same token everywhere; only text
 * changes, never markup or JSON keys, and the API's own words stay. */
#ifndef VSL_ANON_H
#define VSL_ANON_H

#include <stddef.h>

struct vsl_buf;
struct vsl_anon;

int vsl_anon_new(struct vsl_anon **out);
void vsl_anon_free(struct vsl_anon *a); /* NULL is a no-op */

/* First pass: learns from one request or answer (json 0: SOAP, or a file under /sdk; 1: an
 * array's REST exchange, whose path says the type read). From answers: the names the estate
 * owns (the name property of every managed object, VMFS labels, iSCSI aliases, NFS servers
 * and export paths, every part of a datastore path, snapshots, port groups and vSwitches,
 * devices' display names, host names and domains, the hosts of URLs, e-mail addresses and
 * user names, serial numbers, vCenter's instance UUID, the arrays' objects), WWNs and VMFS
 * UUIDs; and the API's words (the text of enumerations and product fields, type names,
 * property paths; never free text). From requests, which vslint writes itself: each text
 * whole, since a request must stay as it was sent for the replay to know it. A name equal to
 * a word of the API is kept; runtime names (vmhba64:C0:T0:L1, vmnic0, vmk1) are not names. */
int vsl_anon_learn(struct vsl_anon *a, int json, const char *path, const char *body, size_t len);
/* Learns one more name to replace, of kind ("vcenter": the configured name and the URL's host,
 * which answers may repeat). */
int vsl_anon_name(struct vsl_anon *a, const char *name, const char *kind);
/* Ends the first pass: the table of replacements. */
int vsl_anon_seal(struct vsl_anon *a);
/* Second pass: appends body to out with every learned name and WWN, every IQN, MAC address
 * and IP address that is not a netmask replaced. Only text changes (XML text, JSON string
 * values other than "id"), decoded first and written again only where it changed: markup,
 * entities, attributes and JSON keys are copied as they are, so the document stays valid.
 * Addresses keep their prefixes: two addresses that share the first one, two or three
 * octets still do afterwards (subnets stay subnets); IPv6 addresses keep their /64s. */
int vsl_anon_apply(struct vsl_anon *a, int json, const char *body, size_t len, struct vsl_buf *out);

/* A cut answer (a failed exchange's partial body), before the first pass: the text after the
 * last complete markup (XML) or token (JSON) overwritten in place with 'x', the length kept, so
 * that a name cut at the break, which no learned name matches, does not leave its prefix.
 * Returns how many bytes were overwritten. */
size_t vsl_anon_blank_cut(int json, char *s, size_t len);

/* What was replaced, for the archive's README. */
struct vsl_anon_stats {
    size_t names, kept_names, iqns, addresses, addresses6, wwns, macs;
};
void vsl_anon_stats(const struct vsl_anon *a, struct vsl_anon_stats *s);
/* The i-th name left as it is (one that is also a word of the API), NULL past the last, once
 * sealed: for the README, so that whoever sends the capture sees which of the estate's names
 * it still holds. Borrowed: valid until vsl_anon_free(). */
const char *vsl_anon_kept(const struct vsl_anon *a, size_t i);

#endif
