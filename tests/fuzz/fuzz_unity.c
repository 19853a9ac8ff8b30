/* Fuzz target for the Unity REST decoders (arrays/unity.c): an answer of the array as jansson
 * parses it, then a collection page's entries decoded as pools or LUNs (with the WWN to naa.
 * join), and LUN pages' entries as Ethernet ports, iSCSI portals, NAS servers, file
 * interfaces, file systems, NFS shares and VVol datastores too. Input: byte 0 even: pool entries, odd: LUN entries; the rest is the JSON
 * answer. A
 * decoder may refuse an entry (-VSL_EPROTO with a message), never crash or return a row whose
 * strings are not the entry's. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <jansson.h>

#include "arrays/unity.h"
#include "util/err.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int decode(void *ctx, const json_t *content)
{
    char err[256], naa[40];
    int pools = *(const int *)ctx;

    if (pools) {
        struct vim_array_pool p;
        int r = arr_decode_pool(content, &p, err, sizeof(err));
        if (r == 0 && (!p.id || !json_is_string(json_object_get(content, "id"))))
            __builtin_trap();
        return r < 0 && r != -VSL_EPROTO ? r : 0;
    }
    struct vim_array_lun l;
    int r = arr_decode_lun(content, &l, naa, err, sizeof(err));
    if (r == 0 && l.naa && (strncmp(l.naa, "naa.", 4) || strlen(l.naa) > 36))
        __builtin_trap();
    if (r < 0 && r != -VSL_EPROTO)
        return r;
    /* The same entry as each of the port, portal and NAS types: a row only with the entry's
     * own string id, an MTU only in Ethernet's range. */
    struct vim_array_port port;
    struct vim_array_portal portal;
    struct vim_array_nas_server nas;
    struct vim_array_file_interface fi;
    const char *id = json_string_value(json_object_get(content, "id"));
    if (arr_decode_eth_port(content, &port, err, sizeof(err)) == 0 &&
        (port.id != id || (port.mtu != VIM_UNKNOWN && (port.mtu < 576 || port.mtu > 65535))))
        __builtin_trap();
    if (arr_decode_portal(content, &portal, err, sizeof(err)) == 0 && portal.id != id)
        __builtin_trap();
    if (arr_decode_nas_server(content, &nas, err, sizeof(err)) == 0 && nas.id != id)
        __builtin_trap();
    if (arr_decode_file_interface(content, &fi, err, sizeof(err)) == 0 && fi.id != id)
        __builtin_trap();
    struct vim_array_filesystem fs;
    struct vim_array_nfs_share share;
    struct vim_array_vvol_pool vv;
    if (arr_decode_filesystem(content, &fs, err, sizeof(err)) == 0 && fs.id != id)
        __builtin_trap();
    if (arr_decode_nfs_share(content, &share, err, sizeof(err)) == 0 && share.id != id)
        __builtin_trap();
    /* Rows of a VVol datastore's pools: each pool a string, at most as many as listed. */
    size_t n = 0;
    while ((r = arr_decode_vvol_pool(content, n, &vv, err, sizeof(err))) > 0) {
        if (vv.id != id || !vv.pool || ++n > json_array_size(json_object_get(content, "pools")))
            __builtin_trap();
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256];
    int more, pools;
    json_t *doc;

    if (size < 1)
        return 0;
    pools = !(data[0] & 1);
    doc = json_loadb((const char *)data + 1, size - 1, 0, NULL);
    if (!doc)
        return 0;
    arr_decode_page(doc, decode, &pools, &more, err, sizeof(err));
    json_decref(doc);
    return 0;
}
