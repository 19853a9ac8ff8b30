/* Decoders: one <objects> element (an ObjectContent) of a known type in, typed rows out to the
 * sink. Pure functions of the XML, so unit tests feed them captured responses. */
#ifndef VIM_DECODE_H
#define VIM_DECODE_H

#include <stddef.h>

#include "model/inventory.h"
#include "vsphere/xml.h"

/* What a host's properties say must be asked next, in per-host calls. */
struct vim_host_work {
    char *moref, *name;    /* owned */
    char *option_manager;  /* configManager.advancedOption, owned, may be NULL */
    char *iscsi_manager;   /* configManager.iscsiManager, owned, may be NULL */
    char **hbas;           /* iSCSI adapter devices, owned */
    size_t n_hbas;
    int san_luns;          /* number of non-local LUNs: esxcli is only worth asking if > 0 */
};

struct vim_decoder {
    struct vim_sink *sink;
    struct vim_host_work *hosts; /* owned, grows as hosts are decoded */
    size_t n_hosts;
};

/* The property paths each type is read with (NULL-terminated). */
extern const char *const vim_datastore_paths[];
extern const char *const vim_storage_pod_paths[];
extern const char *const vim_dvswitch_paths[];
extern const char *const vim_host_paths[];
extern const char *const vim_vm_paths[];

/* A decoder: one <objects> element of its type in, rows out to d->sink. 0 or a negative error;
 * an object it cannot use (no name: deleted while being read) is skipped. */
typedef int vim_decode_fn(struct vim_decoder *d, const char *moref, struct vim_node *objects);

vim_decode_fn vim_decode_datastore;
vim_decode_fn vim_decode_storage_pod;
vim_decode_fn vim_decode_dvswitch;
vim_decode_fn vim_decode_host;
vim_decode_fn vim_decode_vm;

/* QueryOptions returnval list -> host_option rows. */
int vim_decode_options(struct vim_sink *sink, const char *host, struct vim_node *response);
/* QueryBoundVnics returnval list -> iscsi_binding rows. */
int vim_decode_bound_vnics(struct vim_sink *sink, const char *host, const char *hba,
                           struct vim_node *response);
/* The esxcli "storage nmp device list" answer (the unescaped inner document) -> nmp_device rows. */
int vim_decode_nmp_devices(struct vim_sink *sink, const char *host, const char *doc, size_t len);
/* The esxcli "storage nmp satp rule list" answer (the unescaped inner document) -> satp_rule
 * rows. Empty fields (esxcli prints "" for "any") become NULL. */
int vim_decode_satp_rules(struct vim_sink *sink, const char *host, const char *doc, size_t len);
/* Parses "{policy=rr,iops=1,bytes=...}" and returns iops, or VIM_UNKNOWN. */
int vim_parse_rr_iops(const char *config);

void vim_decoder_free(struct vim_decoder *d); /* frees the host work list */

#endif
