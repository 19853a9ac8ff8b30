/* The Unity REST client: libcurl with the session cookie in curl's in-memory cookie engine,
 * the X-EMC-REST-CLIENT header on every request, compact=true pages of per_page instances
 * read until the answer says no more follow (read_type()), and jansson for the answers. */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "arrays/unity.h"
#include "util/log.h"
#include "util/buf.h"
#include "util/capture.h"
#include "util/clock.h"
#include "util/err.h"

/* A page of 500 LUNs is about 150 KiB; no answer of a real array comes near this. */
#define MAX_ANSWER (64u << 20)
#define MAX_PAGES  100000

#define POOL_FIELDS                                                                                \
    "name,sizeTotal,sizeFree,sizeUsed,sizeSubscribed,alertThreshold,health,snapSizeUsed,"          \
    "snapSizeSubscribed"
#define LUN_FIELDS        "name,wwn,pool,sizeTotal,sizeAllocated,isThinEnabled"
#define FC_PORT_FIELDS    "wwn,storageProcessor"
#define ETH_PORT_FIELDS   "storageProcessor,mtu"
#define PORTAL_FIELDS     "ipAddress,ethernetPort,iscsiNode.name"
#define NAS_SERVER_FIELDS "name,homeSP,currentSP,isReplicationDestination"
/* What is read of a NAS server when an array refuses NAS_SERVER_FIELDS (an OE without
 * isReplicationDestination): the SPs without the flag, which then stays unknown. */
#define NAS_SERVER_FIELDS_BASIC "name,homeSP,currentSP"
#define FILE_IF_FIELDS    "nasServer,ipAddress"
#define FS_FIELDS         "name,pool,nasServer,isThinEnabled"
#define NFS_SHARE_FIELDS  "name,filesystem"
#define SR_FIELDS         "name,type,vmwareUUID,pools"

/* storageResource.type of a VVol datastore: VVolDatastoreFS and VVolDatastoreISCSI. */
#define SR_VVOL_FS    9
#define SR_VVOL_ISCSI 10

/* How long the logout of a poll being cancelled may take: the daemon stopping waits for it. */
#define ARR_CLOSE_MS 2000

static int cancelled(const struct arr_client *c)
{
    return c->opts.cancel && atomic_load(c->opts.cancel);
}

/* Whether the transfer in flight is to end for the cancel: at once, except the logout
 * (c->closing), which has ARR_CLOSE_MS from its start. */
static int cut_short(const struct arr_client *c)
{
    if (!cancelled(c))
        return 0;
    return !c->closing || vsl_mono_ms() - c->request_ms >= ARR_CLOSE_MS;
}

/* curl calls it while a transfer runs, data or not: nonzero aborts the transfer. */
static int on_progress(void *user, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
    (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
    return cut_short(user);
}

int arr_client_new(const struct arr_opts *opts, struct arr_client **out)
{
    struct arr_client *c;
    size_t len;
    int r;

    *out = NULL;
    c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    c->opts = *opts;
    c->base = strdup(opts->url);
    r = c->base ? vsl_curl_new(&c->tls, opts->timeout_s, opts->ca_file, opts->insecure,
                               opts->thumbprint, &c->curl)
                : -ENOMEM;
    if (r < 0) {
        arr_client_free(c);
        return r;
    }
    len = strlen(c->base);
    while (len > 0 && c->base[len - 1] == '/')
        c->base[--len] = '\0';
    if (opts->cancel) {
        curl_easy_setopt(c->curl, CURLOPT_XFERINFOFUNCTION, on_progress);
        curl_easy_setopt(c->curl, CURLOPT_XFERINFODATA, c);
        curl_easy_setopt(c->curl, CURLOPT_NOPROGRESS, 0L);
    }
    *out = c;
    return 0;
}

void arr_client_free(struct arr_client *c)
{
    if (!c)
        return;
    if (c->curl)
        curl_easy_cleanup(c->curl);
    free(c->base);
    free(c);
}

const char *arr_client_error(const struct arr_client *c)
{
    return c->err[0] ? c->err : "no error";
}

/* ---- transport ---------------------------------------------------------------------------- */

struct answer {
    struct vsl_buf body;
    struct arr_client *c;
    int err;
};

static size_t on_data(char *p, size_t size, size_t n, void *user)
{
    struct answer *a = user;
    int r = vsl_buf_add(&a->body, p, size * n);

    if (r < 0) {
        a->err = r;
        return 0;
    }
    return size * n;
}

/* Keeps the CSRF token of the login answer (the header is case-insensitive). */
static size_t on_header(char *p, size_t size, size_t n, void *user)
{
    struct answer *a = user;
    size_t len = size * n;
    static const char name[] = "EMC-CSRF-TOKEN:";

    if (len > sizeof(name) - 1 && !strncasecmp(p, name, sizeof(name) - 1)) {
        const char *v = p + sizeof(name) - 1;
        size_t vl = len - (sizeof(name) - 1);
        while (vl && (*v == ' ' || *v == '\t'))
            v++, vl--;
        while (vl && (v[vl - 1] == '\r' || v[vl - 1] == '\n' || v[vl - 1] == ' '))
            vl--;
        if (vl < sizeof(a->c->csrf)) {
            memcpy(a->c->csrf, v, vl);
            a->c->csrf[vl] = '\0';
        }
    }
    return len;
}

/* The message of a Unity error answer, {"error": {"messages": [{"en-US": "..."}]}}, or NULL. */
static const char *error_message(const json_t *doc)
{
    const json_t *msgs = json_object_get(json_object_get(doc, "error"), "messages");
    const json_t *m = json_array_get(msgs, 0);
    const char *s = json_string_value(json_object_get(m, "en-US"));

    if (!s) {
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)m, k, v)
            if (json_is_string(v))
                return json_string_value(v);
    }
    return s;
}

/* Hands an exchange to the capture (`vslint record`): the session's cookie and CSRF token go
 * in as secrets, so that no copy of them is in the archive. */
static void record(struct arr_client *c, const char *url, const char *body,
                   const struct vsl_buf *answer, long status, CURLcode cc, int stopped)
{
    char failure[96];

    vsl_capture_add(c->opts.capture,
                    &(struct vsl_exchange){.source = c->opts.capture_source,
                                           .proto = "rest",
                                           .method = body ? "POST" : "GET",
                                           .url = url,
                                           .req = body,
                                           .req_len = body ? strlen(body) : 0,
                                           .answer = answer->data ? answer->data : "",
                                           .answer_len = answer->len,
                                           .status = status,
                                           .failure = vsl_capture_outcome(
                                               c->curl, cc, stopped, answer->len, failure,
                                               sizeof(failure))});
    vsl_capture_cookies(c->opts.capture, c->curl);
    vsl_capture_secret(c->opts.capture, c->csrf);
}

/* One request: GET path (with its query), or POST body when body is not NULL. On success *doc
 * (may be NULL) is the parsed answer, owned by the caller. Errors leave one line in c->err. */
static int request(struct arr_client *c, const char *path, const char *body, json_t **doc)
{
    char url[2048], detail[CURL_ERROR_SIZE] = "", hdr[300];
    struct answer a = {.c = c};
    struct curl_slist *headers = NULL;
    CURL *h = c->curl;
    long status = 0;
    json_error_t je = {.line = 0};
    json_t *j = NULL;
    int r;

    if (doc)
        *doc = NULL;
    if ((size_t)snprintf(url, sizeof(url), "%s%s", c->base, path) >= sizeof(url))
        return -EINVAL;
    if (cancelled(c) && !c->closing) {
        snprintf(c->err, sizeof(c->err), "%s: abandoned (stopping)", c->base);
        return -ECANCELED;
    }
    vsl_buf_init(&a.body, MAX_ANSWER);
    headers = curl_slist_append(headers, "X-EMC-REST-CLIENT: true");
    headers = curl_slist_append(headers, "Accept: application/json");
    if (body) {
        headers = curl_slist_append(headers, "Content-Type: application/json");
        snprintf(hdr, sizeof(hdr), "EMC-CSRF-TOKEN: %s", c->csrf);
        headers = curl_slist_append(headers, hdr);
    }
    if (!headers) {
        vsl_buf_free(&a.body);
        return -ENOMEM;
    }
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &a);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &a);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, detail);
    if (body) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
    } else {
        curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    }
    c->request_ms = vsl_mono_ms();
    CURLcode cc = curl_easy_perform(h);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
    curl_slist_free_all(headers);
    c->requests++;
    c->bytes += (int64_t)a.body.len;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    if (c->opts.capture)
        record(c, url, body, &a.body, status, cc, a.err != 0);
    if (cc == CURLE_ABORTED_BY_CALLBACK && c->closing) {
        snprintf(c->err, sizeof(c->err), "%s: no answer within %d ms while stopping", url,
                 ARR_CLOSE_MS);
        r = -VSL_ENET;
        goto out;
    }
    if (cc == CURLE_ABORTED_BY_CALLBACK) {
        snprintf(c->err, sizeof(c->err), "%s: abandoned (stopping)", c->base);
        r = -ECANCELED;
        goto out;
    }
    if (cc == CURLE_WRITE_ERROR && a.err) {
        snprintf(c->err, sizeof(c->err), "%s: the answer is larger than %u MiB", url,
                 MAX_ANSWER >> 20);
        r = a.err;
        goto out;
    }
    if (cc != CURLE_OK) {
        r = vsl_tls_transfer_error(h, &c->tls, cc, detail, url, "array", c->err, sizeof(c->err));
        goto out;
    }
    if (a.body.len)
        j = json_loadb(a.body.data, a.body.len, 0, &je);
    if (status == 401) {
        const char *m = error_message(j);
        snprintf(c->err, sizeof(c->err), "%s: HTTP 401%s%s", url, m ? ": " : "", m ? m : "");
        r = -VSL_ENOAUTH;
        goto out;
    }
    if (status < 200 || status > 299) {
        const char *m = error_message(j);
        snprintf(c->err, sizeof(c->err), "%s: HTTP %ld%s%s", url, status, m ? ": " : "",
                 m ? m : "");
        r = -VSL_EHTTP;
        goto out;
    }
    if (doc && !j) {
        if (a.body.len)
            snprintf(c->err, sizeof(c->err),
                     "%s: the answer is not JSON (%s at line %d, column %d)", url, je.text, je.line,
                     je.column);
        else
            snprintf(c->err, sizeof(c->err), "%s: the answer is empty (HTTP %ld, no JSON)", url,
                     status);
        r = -VSL_EPROTO;
        goto out;
    }
    if (doc) {
        *doc = j;
        j = NULL;
    }
    r = 0;
out:
    json_decref(j);
    vsl_buf_free(&a.body);
    return r;
}

int arr_login(struct arr_client *c, const char *user, const char *password)
{
    CURL *h = c->curl;
    int r;

    c->csrf[0] = '\0';
    curl_easy_setopt(h, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
    curl_easy_setopt(h, CURLOPT_USERNAME, user);
    curl_easy_setopt(h, CURLOPT_PASSWORD, password);
    r = request(c, "/api/types/loginSessionInfo/instances?compact=true", NULL, NULL);
    /* The session cookie carries the rest: the password goes no further than this request. */
    curl_easy_setopt(h, CURLOPT_USERNAME, NULL);
    curl_easy_setopt(h, CURLOPT_PASSWORD, NULL);
    curl_easy_setopt(h, CURLOPT_HTTPAUTH, (long)CURLAUTH_NONE);
    if (r == -VSL_ENOAUTH) {
        size_t len = strlen(c->err);
        snprintf(c->err + len, sizeof(c->err) - len,
                 " (the array refused the user name or password)");
        return -VSL_ELOGIN;
    }
    if (r == 0 && !c->csrf[0]) {
        snprintf(c->err, sizeof(c->err),
                 "%s: the login answer has no EMC-CSRF-TOKEN header: not a Unisphere REST API?",
                 c->base);
        return -VSL_EPROTO;
    }
    return r;
}

int arr_logout(struct arr_client *c)
{
    if (!c->csrf[0])
        return 0;
    int was = c->closing;
    c->closing = 1;
    int r = request(c, "/api/types/loginSessionInfo/action/logout",
                    "{\"localCleanupOnly\":true}", NULL);
    c->closing = was;
    return r;
}

/* ---- decoding ----------------------------------------------------------------------------- */

/* An integer member: its value, VIM_UNKNOWN when absent or null, -1 with *bad set for another
 * type (a size may arrive as a real on some releases: whole ones are accepted). */
static int64_t get_i64(const json_t *o, const char *key, const char **bad)
{
    const json_t *v = json_object_get(o, key);

    if (!v || json_is_null(v))
        return VIM_UNKNOWN;
    if (json_is_integer(v) && json_integer_value(v) >= 0)
        return json_integer_value(v);
    if (json_is_real(v) && json_real_value(v) >= 0 && json_real_value(v) < 9.0e18)
        return (int64_t)json_real_value(v);
    *bad = key;
    return VIM_UNKNOWN;
}

static const char *get_str(const json_t *o, const char *key, const char **bad)
{
    const json_t *v = json_object_get(o, key);

    if (!v || json_is_null(v))
        return NULL;
    if (!json_is_string(v))
        *bad = key;
    return json_string_value(v);
}

static int wrong(char *err, size_t errlen, const char *what, const char *id, const char *key)
{
    snprintf(err, errlen, "%s %s: member \"%s\" %s", what, id ? id : "without an id", key,
             strcmp(key, "id") ? "has the wrong type" : "is missing");
    return -VSL_EPROTO;
}

/* The instance's id, which every row needs: 0, or -VSL_EPROTO naming what when it is missing
 * or not a string. */
static int get_id(const json_t *content, const char *what, const char **id, char *err,
                  size_t errlen)
{
    const char *bad = NULL;

    *id = get_str(content, "id", &bad);
    return *id && !bad ? 0 : wrong(err, errlen, what, NULL, "id");
}

int arr_decode_pool(const json_t *content, struct vim_array_pool *out, char *err, size_t errlen)
{
    const char *bad = NULL;
    const json_t *health = json_object_get(content, "health");

    memset(out, 0, sizeof(*out));
    out->id = get_str(content, "id", &bad);
    if (!out->id || bad)
        return wrong(err, errlen, "pool", NULL, "id");
    out->name = get_str(content, "name", &bad);
    out->size_total = get_i64(content, "sizeTotal", &bad);
    out->size_free = get_i64(content, "sizeFree", &bad);
    out->size_used = get_i64(content, "sizeUsed", &bad);
    out->size_subscribed = get_i64(content, "sizeSubscribed", &bad);
    out->snap_size_used = get_i64(content, "snapSizeUsed", &bad);
    out->snap_size_subscribed = get_i64(content, "snapSizeSubscribed", &bad);
    int64_t t = get_i64(content, "alertThreshold", &bad);
    out->alert_threshold = t >= 0 && t <= 100 ? (int)t : VIM_UNKNOWN;
    out->health = VIM_UNKNOWN;
    if (health && !json_is_object(health))
        bad = "health";
    if (json_is_object(health)) {
        int64_t hv = get_i64(health, "value", &bad);
        out->health = hv >= 0 && hv < 1000 ? (int)hv : VIM_UNKNOWN;
        out->health_text = json_string_value(json_array_get(json_object_get(health, "descriptions"), 0));
    }
    if (bad)
        return wrong(err, errlen, "pool", out->id, bad);
    return 0;
}

int arr_decode_lun(const json_t *content, struct vim_array_lun *out, char naa[40], char *err,
                   size_t errlen)
{
    const char *bad = NULL;
    const json_t *pool = json_object_get(content, "pool");
    const json_t *thin = json_object_get(content, "isThinEnabled");

    memset(out, 0, sizeof(*out));
    out->id = get_str(content, "id", &bad);
    if (!out->id || bad)
        return wrong(err, errlen, "LUN", NULL, "id");
    out->name = get_str(content, "name", &bad);
    out->wwn = get_str(content, "wwn", &bad);
    out->size_total = get_i64(content, "sizeTotal", &bad);
    out->size_allocated = get_i64(content, "sizeAllocated", &bad);
    if (pool && !json_is_null(pool) && !json_is_object(pool))
        bad = "pool";
    out->pool = get_str(pool, "id", &bad);
    out->thin = VIM_UNKNOWN;
    if (json_is_boolean(thin))
        out->thin = json_is_true(thin);
    else if (thin && !json_is_null(thin))
        bad = "isThinEnabled";
    if (bad)
        return wrong(err, errlen, "LUN", out->id, bad);
    /* A WWN that is not one joins nothing; the LUN is still stored as the array has it. */
    out->naa = est_naa_from_wwn(out->wwn, naa, 40) == 0 ? naa : NULL;
    return 0;
}

/* The port WWN in Unity's fcPort.wwn, which is the node WWN and the port WWN in one
 * ("50:06:01:60:C7:E0:1B:1A:50:06:01:60:47:E0:1B:1A"): its last 8 bytes, in lower case with
 * colons as vSphere's path targets are stored. A lone 8-byte WWN is taken as the port's. 0, or
 * -1 when wwn is neither. */
static int port_wwpn(const char *wwn, char out[24])
{
    size_t n = wwn ? strlen(wwn) : 0;

    if (n != 23 && n != 47)
        return -1;
    wwn += n - 23;
    for (size_t i = 0; i < 23; i++) {
        char ch = wwn[i];
        if (i % 3 == 2 ? ch != ':' : !strchr("0123456789abcdefABCDEF", ch) || !ch)
            return -1;
        out[i] = (char)(ch >= 'A' && ch <= 'F' ? ch - 'A' + 'a' : ch);
    }
    out[23] = '\0';
    return 0;
}

/* The member of the instance a reference member names ({"id": "spa"} and what fields= asked
 * of it): NULL when the reference is absent or null; *bad is key when it is not an object or
 * that member is not a string. */
static const char *get_ref(const json_t *o, const char *key, const char *member, const char **bad)
{
    const json_t *v = json_object_get(o, key);
    const char *sub_bad = NULL, *s;

    if (!v || json_is_null(v))
        return NULL;
    if (!json_is_object(v)) {
        *bad = key;
        return NULL;
    }
    s = get_str(v, member, &sub_bad);
    if (sub_bad)
        *bad = key;
    return s;
}

int arr_decode_fc_port(const json_t *content, struct vim_array_port *out, char wwpn[24],
                       char *err, size_t errlen)
{
    const char *bad = NULL;

    memset(out, 0, sizeof(*out));
    out->mtu = VIM_UNKNOWN;
    if (get_id(content, "fcPort", &out->id, err, errlen) < 0)
        return -VSL_EPROTO;
    const char *wwn = get_str(content, "wwn", &bad);
    out->sp = get_ref(content, "storageProcessor", "id", &bad);
    if (bad)
        return wrong(err, errlen, "fcPort", out->id, bad);
    /* A WWN that is not one tells no path's SP; the port is still stored as the array has it. */
    out->wwpn = port_wwpn(wwn, wwpn) == 0 ? wwpn : NULL;
    return 0;
}

int arr_decode_eth_port(const json_t *content, struct vim_array_port *out, char *err, size_t errlen)
{
    const char *bad = NULL;

    memset(out, 0, sizeof(*out));
    if (get_id(content, "ethernetPort", &out->id, err, errlen) < 0)
        return -VSL_EPROTO;
    out->sp = get_ref(content, "storageProcessor", "id", &bad);
    int64_t mtu = get_i64(content, "mtu", &bad);
    /* An MTU no Ethernet has is not stored as one: the port's MTU is then unknown. */
    out->mtu = mtu >= 576 && mtu <= 65535 ? (int)mtu : VIM_UNKNOWN;
    if (bad)
        return wrong(err, errlen, "ethernetPort", out->id, bad);
    return 0;
}

int arr_decode_portal(const json_t *content, struct vim_array_portal *out, char *err, size_t errlen)
{
    const char *bad = NULL;

    memset(out, 0, sizeof(*out));
    if (get_id(content, "iscsiPortal", &out->id, err, errlen) < 0)
        return -VSL_EPROTO;
    out->address = get_str(content, "ipAddress", &bad);
    out->port = get_ref(content, "ethernetPort", "id", &bad);
    out->iqn = get_ref(content, "iscsiNode", "name", &bad);
    if (bad)
        return wrong(err, errlen, "iscsiPortal", out->id, bad);
    return 0;
}

int arr_decode_nas_server(const json_t *content, struct vim_array_nas_server *out, char *err,
                          size_t errlen)
{
    const char *bad = NULL;
    const json_t *dst = json_object_get(content, "isReplicationDestination");

    memset(out, 0, sizeof(*out));
    if (get_id(content, "nasServer", &out->id, err, errlen) < 0)
        return -VSL_EPROTO;
    out->name = get_str(content, "name", &bad);
    out->home_sp = get_ref(content, "homeSP", "id", &bad);
    out->current_sp = get_ref(content, "currentSP", "id", &bad);
    out->replication_destination = VIM_UNKNOWN;
    if (json_is_boolean(dst))
        out->replication_destination = json_is_true(dst);
    else if (dst && !json_is_null(dst))
        bad = "isReplicationDestination";
    if (bad)
        return wrong(err, errlen, "nasServer", out->id, bad);
    return 0;
}

int arr_decode_filesystem(const json_t *content, struct vim_array_filesystem *out, char *err,
                          size_t errlen)
{
    const char *bad = NULL;
    const json_t *thin = json_object_get(content, "isThinEnabled");

    memset(out, 0, sizeof(*out));
    if (get_id(content, "filesystem", &out->id, err, errlen) < 0)
        return -VSL_EPROTO;
    out->name = get_str(content, "name", &bad);
    out->pool = get_ref(content, "pool", "id", &bad);
    out->nas_server = get_ref(content, "nasServer", "id", &bad);
    out->thin = VIM_UNKNOWN;
    if (json_is_boolean(thin))
        out->thin = json_is_true(thin);
    else if (thin && !json_is_null(thin))
        bad = "isThinEnabled";
    if (bad)
        return wrong(err, errlen, "filesystem", out->id, bad);
    return 0;
}

int arr_decode_nfs_share(const json_t *content, struct vim_array_nfs_share *out, char *err,
                         size_t errlen)
{
    const char *bad = NULL;

    memset(out, 0, sizeof(*out));
    if (get_id(content, "nfsShare", &out->id, err, errlen) < 0)
        return -VSL_EPROTO;
    out->name = get_str(content, "name", &bad);
    out->filesystem = get_ref(content, "filesystem", "id", &bad);
    if (bad)
        return wrong(err, errlen, "nfsShare", out->id, bad);
    return 0;
}

int arr_decode_vvol_pool(const json_t *content, size_t i, struct vim_array_vvol_pool *out,
                         char *err, size_t errlen)
{
    const char *bad = NULL;
    const json_t *pools = json_object_get(content, "pools");

    memset(out, 0, sizeof(*out));
    if (get_id(content, "storageResource", &out->id, err, errlen) < 0)
        return -VSL_EPROTO;
    out->name = get_str(content, "name", &bad);
    out->vmware_uuid = get_str(content, "vmwareUUID", &bad);
    int64_t type = get_i64(content, "type", &bad);
    if (pools && !json_is_null(pools) && !json_is_array(pools))
        bad = "pools";
    if (bad)
        return wrong(err, errlen, "storageResource", out->id, bad);
    if ((type != SR_VVOL_FS && type != SR_VVOL_ISCSI) || i >= json_array_size(pools))
        return 0;
    if (!json_is_object(json_array_get(pools, i)) ||
        !(out->pool = get_str(json_array_get(pools, i), "id", &bad)) || bad)
        return wrong(err, errlen, "storageResource", out->id, "pools");
    return 1;
}

int arr_decode_file_interface(const json_t *content, struct vim_array_file_interface *out,
                              char *err, size_t errlen)
{
    const char *bad = NULL;

    memset(out, 0, sizeof(*out));
    if (get_id(content, "fileInterface", &out->id, err, errlen) < 0)
        return -VSL_EPROTO;
    out->nas_server = get_ref(content, "nasServer", "id", &bad);
    out->address = get_str(content, "ipAddress", &bad);
    if (bad)
        return wrong(err, errlen, "fileInterface", out->id, bad);
    return 0;
}

int arr_decode_page(const json_t *doc, int (*fn)(void *ctx, const json_t *content), void *ctx,
                    int *more, char *err, size_t errlen)
{
    const json_t *entries = json_object_get(doc, "entries");
    const json_t *links = json_object_get(doc, "links");
    size_t i;
    json_t *e, *l;

    *more = 0;
    if (!json_is_object(doc) || !json_is_array(entries)) {
        snprintf(err, errlen, "the answer has no \"entries\" array");
        return -VSL_EPROTO;
    }
    json_array_foreach(entries, i, e) {
        const json_t *content = json_object_get(e, "content");
        if (!json_is_object(content)) {
            snprintf(err, errlen, "entry %zu has no \"content\" object", i);
            return -VSL_EPROTO;
        }
        int r = fn(ctx, content);
        if (r < 0)
            return r;
    }
    json_array_foreach(links, i, l) {
        const char *rel = json_string_value(json_object_get(l, "rel"));
        if (rel && !strcmp(rel, "next"))
            *more = 1;
    }
    return 0;
}

/* ---- collecting --------------------------------------------------------------------------- */

/* The kinds of instance read_type() reads, each decoded into its row and handed to the sink. */
enum kind {
    K_POOL,
    K_LUN,
    K_FC_PORT,
    K_ETH_PORT,
    K_PORTAL,
    K_NAS_SERVER,
    K_FILE_IF,
    K_FILESYSTEM,
    K_NFS_SHARE,
    K_STORAGE_RESOURCE
};

struct emit {
    struct arr_client *c;
    const struct vim_sink *sink;
    enum kind kind;
    size_t n;
};

static int emit_entry(void *ctx, const json_t *content)
{
    struct emit *em = ctx;
    const struct vim_sink *k = em->sink;
    char *err = em->c->err, naa[40], wwpn[24];
    size_t el = sizeof(em->c->err);
    union {
        struct vim_array_pool pool;
        struct vim_array_lun lun;
        struct vim_array_port port;
        struct vim_array_portal portal;
        struct vim_array_nas_server nas;
        struct vim_array_file_interface fi;
        struct vim_array_filesystem fs;
        struct vim_array_nfs_share share;
        struct vim_array_vvol_pool vvol;
    } u;
    int r;

    em->n++;
    switch (em->kind) {
    case K_POOL:
        r = arr_decode_pool(content, &u.pool, err, el);
        return r < 0 ? r : k->array_pool(k->ctx, &u.pool);
    case K_LUN:
        r = arr_decode_lun(content, &u.lun, naa, err, el);
        return r < 0 ? r : k->array_lun(k->ctx, &u.lun);
    case K_FC_PORT:
        r = arr_decode_fc_port(content, &u.port, wwpn, err, el);
        return r < 0 ? r : k->array_port(k->ctx, &u.port);
    case K_ETH_PORT:
        r = arr_decode_eth_port(content, &u.port, err, el);
        return r < 0 ? r : k->array_port(k->ctx, &u.port);
    case K_PORTAL:
        r = arr_decode_portal(content, &u.portal, err, el);
        return r < 0 ? r : k->array_portal(k->ctx, &u.portal);
    case K_NAS_SERVER:
        r = arr_decode_nas_server(content, &u.nas, err, el);
        return r < 0 ? r : k->array_nas_server(k->ctx, &u.nas);
    case K_FILE_IF:
        r = arr_decode_file_interface(content, &u.fi, err, el);
        return r < 0 ? r : k->array_file_interface(k->ctx, &u.fi);
    case K_FILESYSTEM:
        r = arr_decode_filesystem(content, &u.fs, err, el);
        return r < 0 ? r : k->array_filesystem(k->ctx, &u.fs);
    case K_NFS_SHARE:
        r = arr_decode_nfs_share(content, &u.share, err, el);
        return r < 0 ? r : k->array_nfs_share(k->ctx, &u.share);
    case K_STORAGE_RESOURCE:
        /* One row per pool of a VVol datastore; other storage resources give none. */
        for (size_t i = 0; (r = arr_decode_vvol_pool(content, i, &u.vvol, err, el)) > 0; i++)
            if ((r = k->array_vvol_pool(k->ctx, &u.vvol)) < 0)
                return r;
        return r;
    }
    return -EINVAL;
}

/* Every instance of type, page after page (page=, per_page=), as the Unisphere REST API
 * documents its collections. The answer says in two ways that more pages follow: a "next"
 * link, and entryCount (asked for with with_entrycount=true) above what was read; an array
 * may send either, both or neither, so the reading goes on while either says so, and with
 * neither while a page is as full as the first (an array may cap per_page below what was
 * asked, so a short page is measured against the first page, not per_page). An empty page
 * always ends it: a server that answered "next" forever with nothing in it would otherwise
 * hold the poll for MAX_PAGES requests. Nothing is cut short silently: a count that does not
 * match what was read is -VSL_ERETRY, and MAX_PAGES full pages -VSL_ETOOBIG. */
static int read_type(struct arr_client *c, const struct vim_sink *sink, const char *type,
                     const char *fields, enum kind kind)
{
    const int per_page = c->opts.per_page > 0 ? c->opts.per_page : 500;
    struct emit em = {.c = c, .sink = sink, .kind = kind};
    char path[512];
    size_t first_page = 0; /* entries on page 1: the page size the array uses */
    json_int_t count = -1;

    for (int page = 1; page <= MAX_PAGES; page++) {
        json_t *doc = NULL;
        int more = 0;
        snprintf(path, sizeof(path),
                 "/api/types/%s/instances?fields=%s&compact=true&with_entrycount=true"
                 "&per_page=%d&page=%d",
                 type, fields, per_page, page);
        int r = request(c, path, NULL, &doc);
        if (r < 0)
            return r;
        if (page == 1 && json_is_integer(json_object_get(doc, "entryCount")))
            count = json_integer_value(json_object_get(doc, "entryCount"));
        size_t entries = json_array_size(json_object_get(doc, "entries"));
        int links = json_is_array(json_object_get(doc, "links"));
        if (page == 1)
            first_page = entries;
        r = arr_decode_page(doc, emit_entry, &em, &more, c->err, sizeof(c->err));
        json_decref(doc);
        if (r == -VSL_EPROTO) {
            char why[sizeof(c->err)];
            snprintf(why, sizeof(why), "%s", c->err);
            snprintf(c->err, sizeof(c->err), "%s/api/types/%s/instances page %d: %s", c->base,
                     type, page, why);
        }
        if (r < 0)
            return r;
        if (entries > 0 && (more || (count >= 0 && (json_int_t)em.n < count) ||
                            (count < 0 && !links && entries >= first_page)))
            continue;
        /* Instances created or deleted between two pages shift the rest: a LUN could be
         * missed, and its datastore would lose its pool. Read again rather than store that
         * (daemon/poll.c polls once more, at once; a second such answer is reported). */
        if (count >= 0 && (json_int_t)em.n != count) {
            snprintf(c->err, sizeof(c->err),
                     "%s: %zu %s instances read where the first page counted %lld; they changed "
                     "while being read",
                     c->base, em.n, type, (long long)count);
            return -VSL_ERETRY;
        }
        return 0;
    }
    snprintf(c->err, sizeof(c->err), "%s: more than %d pages of %s instances", c->base,
             MAX_PAGES, type);
    return -VSL_ETOOBIG;
}

int arr_collect(struct arr_client *c, const struct vim_sink *sink)
{
    /* The pools and LUNs behind the datastores; the FC and Ethernet ports and the iSCSI portals
     * tell which storage processor a path's target is on (000 §3.1.1) and the array's MTU
     * (§3.4.1); the NAS servers and their interfaces which SP an NFS datastore's server is
     * placed on (§3.8); the file systems, their NFS shares and the VVol datastores' storage
     * resources which pools the NFS and VVol datastores take space from (§1.1.1). */
    /* optional: what only refines a judgement (which SP, which pool behind a file system).
     * An answer of that type vslint cannot read (an entry of an unexpected shape, a type an
     * older Unity OE does not serve) is logged and left out, and the checks that need it say
     * "not judged"; it must not cost the pools and LUNs, which capacity checks live on. A lost
     * connection or session still ends the read. */
    static const struct {
        const char *type, *fields;
        enum kind kind;
        int optional;
    } reads[] = {
        {"pool", POOL_FIELDS, K_POOL, 0},
        {"lun", LUN_FIELDS, K_LUN, 0},
        {"fcPort", FC_PORT_FIELDS, K_FC_PORT, 0},
        {"ethernetPort", ETH_PORT_FIELDS, K_ETH_PORT, 1},
        {"iscsiPortal", PORTAL_FIELDS, K_PORTAL, 1},
        {"nasServer", NAS_SERVER_FIELDS, K_NAS_SERVER, 1},
        {"fileInterface", FILE_IF_FIELDS, K_FILE_IF, 1},
        {"filesystem", FS_FIELDS, K_FILESYSTEM, 1},
        {"nfsShare", NFS_SHARE_FIELDS, K_NFS_SHARE, 1},
        {"storageResource", SR_FIELDS, K_STORAGE_RESOURCE, 1},
    };
    int r = 0;

    for (size_t i = 0; r == 0 && i < sizeof(reads) / sizeof(reads[0]); i++) {
        r = read_type(c, sink, reads[i].type, reads[i].fields, reads[i].kind);
        /* The replication flag must not cost the NAS servers' SPs: a refusal of the first page
         * (HTTP 4xx, nothing read yet) is asked again without it. */
        if (r == -VSL_EHTTP && reads[i].kind == K_NAS_SERVER && strstr(c->err, "&page=1: HTTP 4")) {
            log_warnx("array: nasServer read again without isReplicationDestination: %s", c->err);
            c->err[0] = '\0';
            r = read_type(c, sink, reads[i].type, NAS_SERVER_FIELDS_BASIC, reads[i].kind);
        }
        if (r < 0 && reads[i].optional && (r == -VSL_EPROTO || r == -VSL_EHTTP)) {
            log_warnx("array: %s instances not read, left out: %s", reads[i].type, c->err);
            c->err[0] = '\0';
            r = 0;
        }
    }
    return r;
}
