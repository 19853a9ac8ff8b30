/* A client of the Dell EMC Unity Unisphere Management REST API (JSON over HTTPS): log in with
 * basic authentication, read the pools, LUNs, ports, iSCSI portals and NAS servers a page at a
 * time, log out. Emits model/inventory.h rows (struct vim_array_pool, ...) into a sink. */
#ifndef ARR_UNITY_H
#define ARR_UNITY_H

#include <jansson.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>

#include "model/inventory.h"
#include "util/tls.h"

struct arr_opts {
    const char *url;        /* https://HOST, the management address */
    const char *ca_file;    /* NULL: the system trust store */
    int insecure;           /* 1: no certificate or host name verification */
    const char *thumbprint; /* "AA:BB:..." SHA-256 of the pinned certificate, or NULL */
    int timeout_s;          /* whole-request timeout */
    int per_page;           /* instances per page asked for; 0: 500 */
    /* NULL, or a flag another thread sets to abandon the poll (vslint serve stopping): as for
     * vim_opts.cancel, the transfer in flight ends within about a second (curl's progress
     * callback) and every request after it fails at once, with -ECANCELED. */
    const _Atomic int *cancel;
    /* NULL, or where every request and answer is recorded (`vslint record`) under the label
     * capture_source, with the session's cookie and CSRF token as secrets. */
    struct vsl_capture *capture;
    const char *capture_source;
};

struct arr_client {
    void *curl;          /* CURL * */
    char *base;          /* owned: url without a trailing '/' */
    struct arr_opts opts; /* strings borrowed from the caller's configuration */
    struct vsl_tls tls;
    char csrf[256];      /* EMC-CSRF-TOKEN of the session, needed for POST and DELETE */
    char err[1024];      /* the last error, one line */
    int64_t requests, bytes;
    int closing;         /* arr_logout() runs: a cancel gives it ARR_CLOSE_MS (see unity.c) */
    int64_t request_ms;  /* monotonic start of the request in flight */
};

int arr_client_new(const struct arr_opts *opts, struct arr_client **out);
void arr_client_free(struct arr_client *c); /* NULL is a no-op */
const char *arr_client_error(const struct arr_client *c);

/* GET /api/types/loginSessionInfo/instances with basic authentication: the session cookie and
 * the CSRF token are kept. -VSL_ELOGIN when the array refuses the user or password. The
 * password is only handed to libcurl for this request. */
int arr_login(struct arr_client *c, const char *user, const char *password);
/* Reads every pool, LUN, FC and Ethernet port, iSCSI portal, NAS server, file interface, file
 * system, NFS share and VVol datastore (storageResource), in that order, into sink. -VSL_ENOAUTH when the session was refused in the
 * middle (log in again and start over), -VSL_EPROTO for an answer that is not the API's JSON. */
int arr_collect(struct arr_client *c, const struct vim_sink *sink);
/* POST /api/types/loginSessionInfo/action/logout with the CSRF token; 0 without asking when
 * there is no token (no login, or one answered without it: that session cannot be closed).
 * Asked while the poll is being cancelled (the daemon stopping), it is still sent, and cut
 * short ARR_CLOSE_MS after it started (about a second more: curl's progress callback). */
int arr_logout(struct arr_client *c);

/* The decoders, for tests: one entry's "content" object into a row whose strings point into
 * content (naa into the caller's buffer of at least 40 bytes). -VSL_EPROTO with why in err when
 * a required member (id) is missing or a member has the wrong type. */
int arr_decode_pool(const json_t *content, struct vim_array_pool *out, char *err, size_t errlen);
int arr_decode_lun(const json_t *content, struct vim_array_lun *out, char naa[40], char *err,
                   size_t errlen);
/* fcPort: wwpn (the caller's buffer) is the port WWN of its wwn, NULL when that is not one. */
int arr_decode_fc_port(const json_t *content, struct vim_array_port *out, char wwpn[24],
                       char *err, size_t errlen);
/* ethernetPort: its SP and MTU (an MTU outside 576-65535 is stored as unknown). */
int arr_decode_eth_port(const json_t *content, struct vim_array_port *out, char *err,
                        size_t errlen);
/* iscsiPortal: ipAddress, ethernetPort.id and iscsiNode.name. */
int arr_decode_portal(const json_t *content, struct vim_array_portal *out, char *err,
                      size_t errlen);
/* nasServer: name, homeSP.id, currentSP.id and isReplicationDestination. */
int arr_decode_nas_server(const json_t *content, struct vim_array_nas_server *out, char *err,
                          size_t errlen);
/* filesystem: name, pool.id, nasServer.id, isThinEnabled. */
int arr_decode_filesystem(const json_t *content, struct vim_array_filesystem *out, char *err,
                          size_t errlen);
/* nfsShare: name and filesystem.id. */
int arr_decode_nfs_share(const json_t *content, struct vim_array_nfs_share *out, char *err,
                         size_t errlen);
/* storageResource: row i of a VVol datastore's pools (name, vmwareUUID, pools[i].id): 1 and the
 * row, 0 when there is no row i (past its pools, or not a VVol datastore), -VSL_EPROTO with why
 * in err for a member of the wrong type. */
int arr_decode_vvol_pool(const json_t *content, size_t i, struct vim_array_vvol_pool *out,
                         char *err, size_t errlen);
/* fileInterface: nasServer.id and ipAddress. */
int arr_decode_file_interface(const json_t *content, struct vim_array_file_interface *out,
                              char *err, size_t errlen);
/* A collection answer ({"entries": [{"content": {...}}], "links": [...]}): calls fn on each
 * entry's content; *more is 1 when the answer links a next page. */
int arr_decode_page(const json_t *doc, int (*fn)(void *ctx, const json_t *content), void *ctx,
                    int *more, char *err, size_t errlen);

#endif
