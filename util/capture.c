/* The recorder behind `vslint record`: exchanges kept in memory as the transports report them,
 * then written as a ustar archive through zlib (both already vslint's), secrets removed. */
#define _GNU_SOURCE /* memmem */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <zlib.h>

#include "util/anon.h"
#include "util/buf.h"
#include "util/capture.h"
#include "util/err.h"

#define REMOVED "(removed)"
#define TOP     "vslint-capture/"

struct entry {
    char source[16];
    char proto[8];
    char method[64];
    char *path; /* owned: the URL's path and query */
    char *req;  /* owned, or NULL */
    size_t req_len;
    char *answer; /* owned, or NULL */
    size_t answer_len;
    long status;
    char failure[96]; /* "" when the answer came whole; else vsl_capture_outcome()'s text */
};

struct vsl_capture {
    pthread_mutex_t mu;
    struct entry *v; /* owned array */
    size_t n, cap;
    size_t bytes, max;
    int overflow;   /* an exchange did not fit under max: the archive would be incomplete */
    int lost;       /* an exchange could not be kept (out of memory): the same */
    char **secrets; /* owned strings, wiped when freed */
    size_t n_secrets, cap_secrets;
    /* The user names and their parts, the same; removed after the anonymizer ran, since a
     * user's domain is often the hosts' (jsmith@corp.example.com, esx1.corp.example.com),
     * and a host name cut by "(removed)" would no longer be the name the anonymizer replaces. */
    char **users;
    size_t n_users, cap_users;
    /* The archive being written, beside its final name, for vsl_capture_discard(): tmp is
     * complete whenever tmp_live is set, which is set only while the file exists under it. */
    char tmp[4096];
    volatile sig_atomic_t tmp_live;
    volatile sig_atomic_t written; /* set with the rename that put the archive in place */
};

int vsl_capture_new(size_t max_bytes, struct vsl_capture **out)
{
    struct vsl_capture *c = calloc(1, sizeof(*c));

    *out = NULL;
    if (!c)
        return -ENOMEM;
    pthread_mutex_init(&c->mu, NULL);
    c->max = max_bytes ? max_bytes : (size_t)2 << 30;
    *out = c;
    return 0;
}

void vsl_capture_free(struct vsl_capture *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++) {
        free(c->v[i].path);
        free(c->v[i].req);
        free(c->v[i].answer);
    }
    free(c->v);
    for (size_t i = 0; i < c->n_secrets; i++) {
        explicit_bzero(c->secrets[i], strlen(c->secrets[i]));
        free(c->secrets[i]);
    }
    free(c->secrets);
    for (size_t i = 0; i < c->n_users; i++) {
        explicit_bzero(c->users[i], strlen(c->users[i]));
        free(c->users[i]);
    }
    free(c->users);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

size_t vsl_capture_count(const struct vsl_capture *c)
{
    return c->n;
}

size_t vsl_capture_answered(const struct vsl_capture *c)
{
    size_t n = 0;

    for (size_t i = 0; i < c->n; i++)
        n += c->v[i].status != 0;
    return n;
}

void vsl_capture_discard(struct vsl_capture *c)
{
    if (c && c->tmp_live)
        unlink(c->tmp);
}

int vsl_capture_written(const struct vsl_capture *c)
{
    return c && c->written;
}

/* Blocks (how SIG_BLOCK) or restores the signals `vslint record` ends on, around the steps
 * that must not be split: mkstemp() and setting tmp_live (else an interrupt leaves an empty
 * file the handler does not know of), rename() and clearing tmp_live while setting written
 * (else the handler says no archive was written while one is in place). old is the mask to
 * restore. */
static void hold_interrupts(int how, sigset_t *old)
{
    sigset_t set;

    if (how != SIG_BLOCK) {
        pthread_sigmask(SIG_SETMASK, old, NULL);
        return;
    }
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &set, old);
}

const char *vsl_capture_outcome(void *h, int cc, int stopped, size_t got, char *out, size_t size)
{
    curl_off_t announced = -1;
    long status = 0;

    if (cc == CURLE_OK)
        return NULL;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    if (curl_easy_getinfo(h, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &announced) != CURLE_OK)
        announced = -1;
    if (cc == CURLE_WRITE_ERROR && stopped)
        snprintf(out, size, "vslint stopped reading after %zu bytes", got);
    else if (cc == CURLE_OPERATION_TIMEDOUT)
        snprintf(out, size, "timed out after %zu bytes", got);
    else if (!status)
        snprintf(out, size, "no answer: %s", curl_easy_strerror((CURLcode)cc));
    else if (announced >= 0)
        snprintf(out, size, "closed after %zu of %lld bytes", got, (long long)announced);
    else
        snprintf(out, size, "closed after %zu bytes", got);
    return out;
}

/* Adds s to the list *v of *n strings (of capacity *cap), once. */
static int add_secret(struct vsl_capture *c, char ***v, size_t *n, size_t *cap, const char *s)
{
    int r = 0;

    if (!s || strlen(s) < 4)
        return 0;
    pthread_mutex_lock(&c->mu);
    for (size_t i = 0; i < *n; i++)
        if (!strcmp((*v)[i], s))
            goto out;
    r = vsl_grow(v, cap, *n, sizeof(char *), 4);
    if (r == 0 && !((*v)[*n] = strdup(s)))
        r = -ENOMEM;
    if (r == 0)
        (*n)++;
out:
    pthread_mutex_unlock(&c->mu);
    return r;
}

int vsl_capture_secret(struct vsl_capture *c, const char *s)
{
    return add_secret(c, &c->secrets, &c->n_secrets, &c->cap_secrets, s);
}

static int user_secret(struct vsl_capture *c, const char *s)
{
    return add_secret(c, &c->users, &c->n_users, &c->cap_users, s);
}

int vsl_capture_user(struct vsl_capture *c, const char *user)
{
    char part[256];
    const char *bs = user ? strchr(user, '\\') : NULL, *at = user ? strchr(user, '@') : NULL;
    int r = user_secret(c, user);

    /* DOMAIN\name and name@domain: the name and the domain each show alone in answers. */
    if (r == 0 && bs) {
        snprintf(part, sizeof(part), "%.*s", (int)(bs - user), user);
        if ((r = user_secret(c, part)) == 0)
            r = user_secret(c, bs + 1);
    }
    if (r == 0 && at) {
        snprintf(part, sizeof(part), "%.*s", (int)(at - user), user);
        if ((r = user_secret(c, part)) == 0)
            r = user_secret(c, at + 1);
    }
    explicit_bzero(part, sizeof(part));
    return r;
}

int vsl_capture_cookies(struct vsl_capture *c, void *h)
{
    struct curl_slist *cookies = NULL;
    int r = 0;

    if (curl_easy_getinfo(h, CURLINFO_COOKIELIST, &cookies) != CURLE_OK)
        return -ENOMEM;
    /* Netscape format: the value is the seventh tab-separated field. */
    for (struct curl_slist *k = cookies; k && r == 0; k = k->next) {
        const char *v = k->data;
        for (int f = 0; f < 6 && v; f++)
            if ((v = strchr(v, '\t')))
                v++;
        if (v)
            r = vsl_capture_secret(c, v);
        /* vCenter quotes its cookie ("vmware_soap_session=\"52...\""): the value unquoted
         * shows too. */
        size_t n = v ? strlen(v) : 0;
        if (r == 0 && n > 2 && v[0] == '"' && v[n - 1] == '"') {
            char *inner = strndup(v + 1, n - 2);
            r = inner ? vsl_capture_secret(c, inner) : -ENOMEM;
            if (inner)
                explicit_bzero(inner, n - 2);
            free(inner);
        }
    }
    curl_slist_free_all(cookies);
    return r;
}

/* The local name of the first element inside soapenv:Body of a request ("Login"). */
static void soap_method(const char *req, size_t len, char *out, size_t size)
{
    const char *end = req + len, *p = req ? memmem(req, len, "Body>", 5) : NULL;
    size_t n = 0;

    snprintf(out, size, "unknown");
    if (!p)
        return;
    p = memchr(p, '<', (size_t)(end - p));
    if (!p)
        return;
    p++;
    const char *colon = NULL;
    for (const char *q = p; q < end && *q != '>' && *q != ' ' && *q != '/'; q++)
        if (*q == ':')
            colon = q;
    if (colon)
        p = colon + 1;
    while (p + n < end && n + 1 < size && p[n] != '>' && p[n] != ' ' && p[n] != '/')
        n++;
    if (n) {
        memcpy(out, p, n);
        out[n] = '\0';
    }
}

/* A copy of the len bytes at s (NUL-terminated) with the text of each element named in names
 * (<name>text</name>, any attributes) replaced by REMOVED: how the Login password, the user
 * name and the session key leave a request or an answer before it is kept. The copy is built
 * in a secret's buffer since the original may hold the password. */
static char *redact_elements(const char *s, size_t len, const char *const *names, size_t *outlen)
{
    struct vsl_buf b;
    const char *p = s, *end = s + len;
    char *out = NULL;

    vsl_buf_init_secret(&b, (size_t)-1);
    while (p < end) {
        const char *lt = memchr(p, '<', (size_t)(end - p));
        const char *content = NULL;
        if (!lt)
            break;
        for (size_t i = 0; names[i] && !content; i++) {
            size_t n = strlen(names[i]);
            if ((size_t)(end - lt) > n + 1 && !memcmp(lt + 1, names[i], n) &&
                (lt[n + 1] == '>' || lt[n + 1] == ' ')) {
                const char *gt = memchr(lt, '>', (size_t)(end - lt));
                if (gt && gt[-1] != '/')
                    content = gt + 1;
            }
        }
        if (!content) {
            if (vsl_buf_add(&b, p, (size_t)(lt + 1 - p)) < 0)
                goto out;
            p = lt + 1;
            continue;
        }
        const char *close = memchr(content, '<', (size_t)(end - content));
        if (!close)
            close = end;
        if (vsl_buf_add(&b, p, (size_t)(content - p)) < 0 || vsl_buf_addstr(&b, REMOVED) < 0)
            goto out;
        p = close;
    }
    if (p < end && vsl_buf_add(&b, p, (size_t)(end - p)) < 0)
        goto out;
    *outlen = b.len;
    out = vsl_buf_take(&b);
out:
    vsl_buf_free(&b);
    return out;
}

static const char *const request_secrets[] = {"password",  "userName",  "token",
                                              "samlToken", "sessionId", NULL};
static const char *const login_answer_secrets[] = {"key", "userName", "fullName", NULL};

/* Registers the text of the first <key> of a Login answer as a secret. */
static int login_key(struct vsl_capture *c, const char *a, size_t len)
{
    const char *p = a ? memmem(a, len, "<key>", 5) : NULL, *end;
    char *key;
    int r;

    if (!p)
        return 0;
    p += 5;
    end = memchr(p, '<', len - (size_t)(p - a));
    if (!end)
        return 0;
    if (!(key = strndup(p, (size_t)(end - p))))
        return -ENOMEM;
    r = vsl_capture_secret(c, key);
    explicit_bzero(key, strlen(key));
    free(key);
    return r;
}

/* The path and query of url ("https://host:443/sdk?x" -> "/sdk?x"). */
static const char *url_path(const char *url)
{
    const char *p = strstr(url, "://");
    p = p ? strchr(p + 3, '/') : NULL;
    return p ? p : "/";
}

int vsl_capture_add(struct vsl_capture *c, const struct vsl_exchange *x)
{
    struct entry e = {.status = x->status};
    int r = -ENOMEM;

    if (x->failure)
        snprintf(e.failure, sizeof(e.failure), "%s", x->failure);

    snprintf(e.source, sizeof(e.source), "%s", x->source);
    snprintf(e.proto, sizeof(e.proto), "%s", x->proto);
    if (x->method)
        snprintf(e.method, sizeof(e.method), "%s", x->method);
    else
        soap_method(x->req, x->req_len, e.method, sizeof(e.method));
    e.path = strdup(url_path(x->url));
    if (!e.path)
        goto fail;
    if (x->req) {
        e.req = !strcmp(e.proto, "soap")
                    ? redact_elements(x->req, x->req_len, request_secrets, &e.req_len)
                    : strndup(x->req, x->req_len);
        if (!e.req)
            goto fail;
        if (strcmp(e.proto, "soap"))
            e.req_len = x->req_len;
    }
    if (x->answer) {
        if (!strcmp(e.proto, "soap") && !strcmp(e.method, "Login")) {
            /* The session key shows again outside the Login answer (in container views'
             * morefs, session[KEY]...) and a real vCenter's cookie differs from it. */
            if ((r = login_key(c, x->answer, x->answer_len)) < 0)
                goto fail;
            r = -ENOMEM;
            e.answer =
                redact_elements(x->answer, x->answer_len, login_answer_secrets, &e.answer_len);
        }
        else if ((e.answer = malloc(x->answer_len + 1))) {
            memcpy(e.answer, x->answer, x->answer_len);
            e.answer[x->answer_len] = '\0';
            e.answer_len = x->answer_len;
        }
        if (!e.answer)
            goto fail;
    }
    pthread_mutex_lock(&c->mu);
    if (x->incomplete || c->bytes + e.req_len + e.answer_len > c->max) {
        c->overflow = 1;
        r = -VSL_ETOOBIG;
    } else if ((r = vsl_grow(&c->v, &c->cap, c->n, sizeof(*c->v), 64)) == 0) {
        c->v[c->n++] = e;
        c->bytes += e.req_len + e.answer_len;
    }
    pthread_mutex_unlock(&c->mu);
    if (r == 0)
        return 0;
fail:
    free(e.path);
    free(e.req);
    free(e.answer);
    if (r != -VSL_ETOOBIG) {
        pthread_mutex_lock(&c->mu);
        c->lost = r;
        pthread_mutex_unlock(&c->mu);
    }
    return r;
}

/* Replaces every occurrence in *s (of *len bytes) of each of the nlist strings of list by
 * REMOVED. */
static int scrub(char *const *list, size_t nlist, char **s, size_t *len)
{
    for (size_t i = 0; i < nlist && *s; i++) {
        const char *sec = list[i];
        size_t n = strlen(sec);
        if (!memmem(*s, *len, sec, n))
            continue;
        struct vsl_buf b;
        const char *p = *s, *end = *s + *len, *hit;
        vsl_buf_init(&b, (size_t)-1);
        while ((hit = memmem(p, (size_t)(end - p), sec, n))) {
            if (vsl_buf_add(&b, p, (size_t)(hit - p)) < 0 || vsl_buf_addstr(&b, REMOVED) < 0)
                goto nomem;
            p = hit + n;
        }
        if (vsl_buf_add(&b, p, (size_t)(end - p)) < 0)
            goto nomem;
        explicit_bzero(*s, *len);
        free(*s);
        *len = b.len;
        *s = vsl_buf_take(&b);
        if (!*s)
            return -ENOMEM;
        continue;
    nomem:
        vsl_buf_free(&b);
        return -ENOMEM;
    }
    return 0;
}

/* The shortest start of a secret scrub_cut() removes: shorter, it would match a secret's first
 * bytes that are not secret (a cookie's "52", a token's common prefix) all over. */
#define CUT_SECRET_MIN 8

/* scrub(), and then for an answer that was cut (the transfer ended early), a start of one of
 * the strings of list at its very end, of CUT_SECRET_MIN bytes or more, replaced by REMOVED:
 * scrub() replaces only whole strings, and an answer cut inside a session key (a container
 * view's moref, "session[52ab...") would keep the key's first bytes. */
static int scrub_cut(char *const *list, size_t nlist, int cut, char **s, size_t *len)
{
    int r = scrub(list, nlist, s, len);

    for (size_t i = 0; i < nlist && r == 0 && cut && *s; i++) {
        size_t n = strlen(list[i]);
        for (size_t k = n - 1 < *len ? n - 1 : *len; k >= CUT_SECRET_MIN; k--) {
            if (memcmp(*s + *len - k, list[i], k))
                continue;
            char *grown = realloc(*s, *len - k + sizeof(REMOVED));
            if (!grown)
                return -ENOMEM;
            explicit_bzero(grown + *len - k, k);
            memcpy(grown + *len - k, REMOVED, sizeof(REMOVED));
            *s = grown;
            *len = *len - k + sizeof(REMOVED) - 1;
            break;
        }
    }
    return r;
}

/* "closed after N of M bytes" for the body as it now is: scrubbing and anonymizing changed its
 * length N, and the replay announces M, which must stay M - N bytes more than it sends or the
 * client would take the cut answer for a whole one. */
static void recount(struct entry *e)
{
    static const char pre[] = "closed after ";
    char *p, *q;

    if (strncmp(e->failure, pre, sizeof(pre) - 1))
        return;
    errno = 0;
    unsigned long long n = strtoull(e->failure + sizeof(pre) - 1, &p, 10);
    if (errno || strncmp(p, " of ", 4))
        return;
    long long m = strtoll(p + 4, &q, 10);
    if (errno || strcmp(q, " bytes") || m < 0 || (unsigned long long)m < n)
        return;
    snprintf(e->failure, sizeof(e->failure), "closed after %zu of %lld bytes", e->answer_len,
             m - (long long)n + (long long)e->answer_len);
}

/* Replaces *s by its anonymized copy. */
static int anonymize(struct vsl_anon *a, int json, char **s, size_t *len)
{
    struct vsl_buf b;
    int r;

    if (!*s)
        return 0;
    vsl_buf_init(&b, (size_t)-1);
    r = vsl_anon_apply(a, json, *s, *len, &b);
    if (r == 0) {
        free(*s);
        *len = b.len;
        *s = vsl_buf_take(&b);
        r = *s ? 0 : -ENOMEM;
    }
    vsl_buf_free(&b);
    return r;
}

/* One ustar member: a 512-byte header, the data, zeros to the next 512 bytes. */
static int tar_member(gzFile z, const char *name, const char *data, size_t len, time_t mtime)
{
    unsigned char h[512] = {0};
    unsigned sum = 0;
    static const char zeros[512];

    if (strlen(name) >= 100)
        return -ENAMETOOLONG;
    memcpy(h, name, strlen(name));
    snprintf((char *)h + 100, 8, "%07o", 0600);
    snprintf((char *)h + 108, 8, "%07o", 0);
    snprintf((char *)h + 116, 8, "%07o", 0);
    snprintf((char *)h + 124, 12, "%011llo", (unsigned long long)len);
    snprintf((char *)h + 136, 12, "%011llo", (unsigned long long)mtime);
    memset(h + 148, ' ', 8);
    h[156] = '0';
    memcpy(h + 257, "ustar", 6);
    memcpy(h + 263, "00", 2);
    memcpy(h + 265, "vslint", 6);
    memcpy(h + 297, "vslint", 6);
    for (size_t i = 0; i < sizeof(h); i++)
        sum += h[i];
    snprintf((char *)h + 148, 8, "%06o", sum);
    h[155] = ' ';
    if (gzwrite(z, h, sizeof(h)) != (int)sizeof(h))
        return -EIO;
    for (size_t off = 0; off < len;) {
        unsigned n = len - off > (1u << 20) ? 1u << 20 : (unsigned)(len - off);
        if (gzwrite(z, data + off, n) != (int)n)
            return -EIO;
        off += n;
    }
    if (len % 512 && gzwrite(z, zeros, (unsigned)(512 - len % 512)) != (int)(512 - len % 512))
        return -EIO;
    return 0;
}

static void member_name(char *out, size_t size, size_t seq, const struct entry *e, int request)
{
    const int json = !strcmp(e->proto, "rest");
    snprintf(out, size, "%04zu-%s-%.40s.%s.%s", seq, e->source, e->method,
             request ? "request" : "answer", json ? "json" : "xml");
}

/* The README's account of a read that failed: why (failed, secrets removed and anonymized as
 * the rest), and the exchanges that did not end in a whole 2xx answer, where it went wrong. */
static int readme_failed(struct vsl_buf *b, const struct vsl_capture *c, const char *failed)
{
    size_t shown = 0, bad = 0;
    int r = 0;

    for (size_t i = 0; i < c->n; i++)
        bad += c->v[i].failure[0] || c->v[i].status < 200 || c->v[i].status > 299;
    if (!failed && !bad)
        return 0;
    if (failed)
        r = vsl_buf_printf(b,
                           "\n## The read failed\n\n"
                           "It ended with: %s\n\n"
                           "The capture holds every exchange up to that point, the failed ones\n"
                           "as vslint saw them (status, body, or how the connection ended), so it\n"
                           "reproduces the failure when replayed.\n",
                           failed);
    if (r == 0 && bad)
        r = vsl_buf_printf(b,
                           "\n## Exchanges that did not end in a whole answer with HTTP 2xx\n\n"
                           "%zu (a SOAP fault comes with HTTP 500; see manifest.tsv, whose ninth\n"
                           "column says how a transfer ended when it did not end whole):\n\n",
                           bad);
    for (size_t i = 0; i < c->n && r == 0 && shown < 20; i++) {
        const struct entry *e = &c->v[i];
        if (!e->failure[0] && e->status >= 200 && e->status <= 299)
            continue;
        shown++;
        r = vsl_buf_printf(b, "- %zu %s %s %s: HTTP %ld%s%s\n", i + 1, e->source, e->method,
                           e->path, e->status, e->failure[0] ? ", " : "", e->failure);
    }
    if (r == 0 && bad > shown)
        r = vsl_buf_printf(b, "- and %zu more\n", bad - shown);
    return r;
}

static int readme(struct vsl_buf *b, const struct vsl_capture *c,
                  const struct vsl_capture_about *about, const struct vsl_anon *anon,
                  const char *failed)
{
    char when[64];
    time_t now = time(NULL);
    struct tm tm;
    size_t soap = 0, rest = 0;

    gmtime_r(&now, &tm);
    strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
    for (size_t i = 0; i < c->n; i++)
        rest += !strcmp(c->v[i].proto, "rest"), soap += !!strcmp(c->v[i].proto, "rest");
    int r = vsl_buf_printf(
        b,
        "# A vslint capture\n\n"
        "Recorded by `vslint record` (vslint %s) on %s: one full read of %s, as `vslint collect`\n"
        "makes it, with every request vslint sent and every answer it got, in order.\n\n"
        "- %zu exchanges with the vCenter (SOAP requests to /sdk and the files it read there),\n"
        "  %zu with storage arrays (REST): see manifest.tsv, one line each: sequence number,\n"
        "  source, protocol, method, path, HTTP status, request file, answer file, and how\n"
        "  the transfer ended (\"-\": the answer came whole).\n"
        "- Only bodies are recorded: no HTTP header is, so no session cookie\n"
        "  (vmware_soap_session), no Authorization header and no CSRF token.\n\n"
        "## Removed\n\n"
        "- The Login request's password and user name, and the session key, user name and full\n"
        "  name of its answer, each replaced by \"(removed)\".\n"
        "- Every occurrence, anywhere, of the password, the session key, the session cookies'\n"
        "  values, the arrays' CSRF tokens and the configured user names (and their parts\n"
        "  before '@' and after '\\', and the domain), replaced by \"(removed)\".\n"
        "- Of alarms, only the name, systemName, enabled, entity and expression: who last\n"
        "  changed one and its actions (e-mail addresses, scripts) were not read.\n",
        about->version, when,
        about->anonymize ? "a vCenter (its name is anonymized)" : "the vCenter below", soap, rest);
    if (r == 0 && !about->anonymize)
        r = vsl_buf_printf(b, "\nvCenter: [vcenter %s] at %s\n", about->vcenter, about->url);
    if (r == 0)
        r = readme_failed(b, c, failed);
    if (r == 0 && anon) {
        struct vsl_anon_stats s;
        vsl_anon_stats(anon, &s);
        r = vsl_buf_printf(
            b,
            "\n## Anonymized (--anonymize)\n\n"
            "Replaced, the same original (whatever its case) by the same token in every\n"
            "file, in text only (never markup or JSON keys):\n"
            "- %zu names the estate owns: of hosts, VMs, datastores, clusters, datacenters,\n"
            "  folders, resource pools, switches and port groups, VMFS labels, iSCSI aliases,\n"
            "  NFS servers and export paths, snapshots, alarms and array objects (anon-host-1,\n"
            "  anon-vm-2, ...), host names and DNS domains (anon-host-1.anon-dom-1.example),\n"
            "  the hosts of URLs and e-mail addresses, also inside paths such as\n"
            "  \"[datastore] vm/vm.vmx\" and esxcli's answers;\n"
            "- %zu IQNs (iqn.2000-01.org.example:anon-N);\n"
            "- %zu IPv4 addresses, prefix by prefix: addresses that shared their first one, two\n"
            "  or three octets still do (netmasks are kept);\n"
            "- %zu IPv6 addresses, by /64: each /64 becomes 2001:db8:N::/64 (fe80::/64 is\n"
            "  kept: every link has it) and each interface id a number under it, so addresses\n"
            "  that shared a /64 still do; :: and ::1 are kept; written in compressed form;\n"
            "- %zu MAC addresses: the vendor's first three bytes are kept, the rest counted;\n"
            "- %zu WWNs, as vSphere's decimal longs and as hex with or without colons: the last\n"
            "  four bytes (the serial number); the first four (NAA type, vendor, and for\n"
            "  CLARiiON, VNX and Unity ports the storage processor) are kept.\n"
            "- The vCenter's configured name and its URL's host (anon-vcenter-N; not written\n"
            "  here).\n\n"
            "Kept: managed object ids (morefs: host-21, vm-45), sizes and capacities, counts,\n"
            "versions and builds, device names (vmhba64, vmk1, naa./eui./t10. LUN ids),\n"
            "policies, settings and the API's words (enumerations, types, product strings,\n"
            "the words of vslint's requests). %zu names that are also such words (or only\n"
            "digits) were kept, since replacing them would change those words too; they are\n"
            "listed below. Check before sending: tar xzf, then grep -ri for your domain, host\n"
            "and VM names.\n",
            s.names, s.iqns, s.addresses, s.addresses6, s.macs, s.wwns, s.kept_names);
        for (size_t i = 0; r == 0 && vsl_anon_kept(anon, i); i++)
            r = vsl_buf_printf(b, "%s- kept: `%s`\n", i ? "" : "\n", vsl_anon_kept(anon, i));
    }
    if (r == 0)
        r = vsl_buf_addstr(b, "\nReplay it: tests/sim/replay (vcsim-replay -capture FILE.tar.gz); "
                              "see docs/captures.md.\n");
    return r;
}

/* Appends a copy of the n bytes at s to the list *v of *len strings (of capacity *cap). */
static int add_host(char ***v, size_t *len, size_t *cap, const char *s, size_t n)
{
    int r = vsl_grow(v, cap, *len, sizeof(char *), 4);

    if (r == 0 && !((*v)[*len] = strndup(s, n)))
        r = -ENOMEM;
    if (r == 0)
        (*len)++;
    return r;
}

/* Gives the host of url, and its first label ("unity-prod" of unity-prod.corp.example.com),
 * to the anonymizer as names of kind; adds the host to the list *v (of *n, capacity *cap) of
 * strings removed from everything after anonymizing (a host inside a longer word is not
 * replaced by the anonymizer, which replaces whole words), and the first label to the list
 * *lv (of *ln, capacity *lcap) removed from the failure text only: curl's words around it
 * are known, while cut from every answer a label such as "unity" or "vcenter" would change
 * values vslint reads. An address is left to the anonymizer's address rules; a first label
 * shorter than 4 bytes ("vc") is not removed, as it would cut words all over. */
static int anon_host(struct vsl_anon *anon, const char *url, const char *kind, char ***v,
                     size_t *n, size_t *cap, char ***lv, size_t *ln, size_t *lcap)
{
    const char *h = strstr(url, "://");
    char host[256];
    size_t len, dot;
    int r;

    h = h ? h + 3 : url;
    len = strcspn(h, ":/[]?#");
    snprintf(host, sizeof(host), "%.*s", (int)(len < 255 ? len : 255), h);
    len = strlen(host);
    if (!len || strspn(host, "0123456789.") == len)
        return 0;
    if ((r = vsl_anon_name(anon, host, kind)) < 0 || (r = add_host(v, n, cap, host, len)) < 0)
        return r;
    dot = strcspn(host, ".");
    if (dot == len || dot < 2)
        return 0;
    host[dot] = '\0';
    r = vsl_anon_name(anon, host, kind);
    if (r == 0 && dot >= 4)
        r = add_host(lv, ln, lcap, host, dot);
    return r;
}

int vsl_capture_write(struct vsl_capture *c, const char *path,
                      const struct vsl_capture_about *about, char *err, size_t errlen)
{
    struct vsl_anon *anon = NULL;
    struct vsl_buf text;
    gzFile z = NULL;
    char name[160], reqname[128], ansname[128], *tmp = c->tmp;
    char *failed = NULL; /* owned: about->failed, as the archive may show it */
    size_t failed_len = 0;
    char **hosts = NULL; /* owned, with its strings: the configured hosts, when anonymized */
    size_t n_hosts = 0, cap_hosts = 0;
    char **labels = NULL; /* owned, with its strings: their first labels (the failure text) */
    size_t n_labels = 0, cap_labels = 0;
    time_t now = time(NULL);
    sigset_t mask; /* the signal mask before hold_interrupts() */
    int r = 0, fd = -1;

    vsl_buf_init(&text, (size_t)-1);
    sigemptyset(&mask);
    pthread_mutex_lock(&c->mu);
    if (c->overflow) {
        snprintf(err, errlen, "the read is larger than the capture may hold (%zu MiB)",
                 c->max >> 20);
        r = -VSL_ETOOBIG;
        goto out;
    }
    if (c->lost) {
        snprintf(err, errlen, "an exchange could not be recorded: %s", vsl_strerror(c->lost));
        r = c->lost;
        goto out;
    }
    /* The credentials first, before anything else reads the answers. */
    for (size_t i = 0; i < c->n && r == 0; i++) {
        r = scrub(c->secrets, c->n_secrets, &c->v[i].req, &c->v[i].req_len);
        if (r == 0)
            r = scrub_cut(c->secrets, c->n_secrets, c->v[i].failure[0] != '\0', &c->v[i].answer,
                          &c->v[i].answer_len);
    }
    /* Why the read failed may quote an answer (a fault's message), and names the URL. */
    if (r == 0 && about->failed) {
        failed_len = strlen(about->failed);
        r = (failed = strdup(about->failed)) ? scrub(c->secrets, c->n_secrets, &failed, &failed_len)
                                             : -ENOMEM;
    }
    if (r == 0 && about->anonymize) {
        r = vsl_anon_new(&anon);
        /* The requests too: their words are the API's (a VM called "summary" is kept, or
         * the replay would not find the request that reads summary). */
        for (size_t i = 0; i < c->n && r == 0; i++) {
            const int json = !strcmp(c->v[i].proto, "rest");
            /* A cut answer ends in a cut name, which no learned name would match. */
            if (c->v[i].failure[0] && c->v[i].answer)
                vsl_anon_blank_cut(json, c->v[i].answer, c->v[i].answer_len);
            if (c->v[i].req)
                r = vsl_anon_learn(anon, json, c->v[i].path, c->v[i].req, c->v[i].req_len);
            if (r == 0 && c->v[i].answer)
                r = vsl_anon_learn(anon, json, c->v[i].path, c->v[i].answer, c->v[i].answer_len);
        }
        /* The vCenter's own name and host, which an answer may hold (a vCenter's name in an
         * alarm, its FQDN in a URL), and the arrays' hosts: an array that never answered
         * taught the anonymizer nothing, and its host is in curl's error ("Could not resolve
         * host: unity-prod.corp.example.com"). */
        if (r == 0 && about->vcenter)
            r = vsl_anon_name(anon, about->vcenter, "vcenter");
        if (r == 0 && about->url)
            r = anon_host(anon, about->url, "vcenter", &hosts, &n_hosts, &cap_hosts, &labels,
                          &n_labels, &cap_labels);
        for (size_t i = 0; i < about->n_arrays && r == 0; i++)
            r = anon_host(anon, about->array_urls[i], "array", &hosts, &n_hosts, &cap_hosts, &labels,
                          &n_labels, &cap_labels);
        if (r == 0)
            r = vsl_anon_seal(anon);
        for (size_t i = 0; i < c->n && r == 0; i++) {
            struct entry *e = &c->v[i];
            const int json = !strcmp(e->proto, "rest");
            size_t plen = strlen(e->path);
            r = anonymize(anon, json, &e->req, &e->req_len);
            if (r == 0)
                r = anonymize(anon, json, &e->answer, &e->answer_len);
            if (r == 0)
                r = anonymize(anon, 1, &e->path, &plen);
        }
        if (r == 0)
            r = anonymize(anon, 1, &failed, &failed_len);
    }
    for (size_t i = 0; i < c->n && r == 0; i++) {
        struct entry *e = &c->v[i];
        size_t plen = strlen(e->path);
        r = scrub(c->users, c->n_users, &e->req, &e->req_len);
        if (r == 0)
            r = scrub_cut(c->users, c->n_users, e->failure[0] != '\0', &e->answer,
                          &e->answer_len);
        if (r == 0)
            r = scrub(c->users, c->n_users, &e->path, &plen);
        if (r == 0)
            r = scrub(hosts, n_hosts, &e->req, &e->req_len);
        if (r == 0)
            r = scrub(hosts, n_hosts, &e->answer, &e->answer_len);
        if (r == 0)
            r = scrub(hosts, n_hosts, &e->path, &plen);
        if (r == 0)
            recount(e);
    }
    if (r == 0 && failed)
        r = scrub(c->users, c->n_users, &failed, &failed_len);
    if (r == 0 && failed)
        r = scrub(hosts, n_hosts, &failed, &failed_len);
    if (r == 0 && failed)
        r = scrub(labels, n_labels, &failed, &failed_len);
    if (r < 0) {
        snprintf(err, errlen, "cannot prepare the capture: %s", vsl_strerror(r));
        goto out;
    }
    if ((size_t)snprintf(tmp, sizeof(c->tmp), "%s.XXXXXX", path) >= sizeof(c->tmp)) {
        snprintf(err, errlen, "%s: path too long", path);
        r = -ENAMETOOLONG;
        goto out;
    }
    /* 0600: a capture holds an estate's layout even anonymized; its owner decides to share. A
     * fresh name (mkstemp: O_EXCL, so no file or symlink someone left there is written
     * through) and fchmod, so that nothing but the owner can ever open it. */
    hold_interrupts(SIG_BLOCK, &mask);
    fd = mkstemp(tmp);
    c->tmp_live = fd >= 0;
    hold_interrupts(SIG_SETMASK, &mask);
    if (fd >= 0 && (fchmod(fd, 0600) < 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)) {
        close(fd);
        unlink(tmp);
        c->tmp_live = 0;
        fd = -1;
    }
    if (fd < 0 || !(z = gzdopen(fd, "wb9"))) {
        r = -errno;
        snprintf(err, errlen, "%s: cannot write: %s", tmp, strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(tmp);
            c->tmp_live = 0;
        }
        goto out;
    }
    r = readme(&text, c, about, anon, failed);
    if (r == 0)
        r = tar_member(z, TOP "README.md", text.data, text.len, now);
    vsl_buf_reset(&text);
    for (size_t i = 0; i < c->n && r == 0; i++) {
        const struct entry *e = &c->v[i];
        member_name(reqname, sizeof(reqname), i + 1, e, 1);
        member_name(ansname, sizeof(ansname), i + 1, e, 0);
        /* A path holds no tab or newline (libcurl refuses them in URLs). */
        r = vsl_buf_printf(&text, "%zu\t%s\t%s\t%s\t%s\t%ld\t%s\t%s\t%s\n", i + 1, e->source,
                           e->proto, e->method, e->path, e->status, e->req ? reqname : "-",
                           e->answer ? ansname : "-", e->failure[0] ? e->failure : "-");
    }
    if (r == 0)
        r = tar_member(z, TOP "manifest.tsv", text.data, text.len, now);
    for (size_t i = 0; i < c->n && r == 0; i++) {
        const struct entry *e = &c->v[i];
        if (e->req) {
            member_name(reqname, sizeof(reqname), i + 1, e, 1);
            snprintf(name, sizeof(name), TOP "%s", reqname);
            r = tar_member(z, name, e->req, e->req_len, now);
        }
        if (r == 0 && e->answer) {
            member_name(ansname, sizeof(ansname), i + 1, e, 0);
            snprintf(name, sizeof(name), TOP "%s", ansname);
            r = tar_member(z, name, e->answer, e->answer_len, now);
        }
    }
    if (r == 0) {
        static const char end[1024];
        if (gzwrite(z, end, sizeof(end)) != (int)sizeof(end))
            r = -EIO;
    }
    if (gzclose(z) != Z_OK && r == 0)
        r = -EIO;
    hold_interrupts(SIG_BLOCK, &mask);
    if (r == 0 && rename(tmp, path) < 0)
        r = -errno;
    if (r < 0)
        unlink(tmp);
    c->written = r == 0;
    c->tmp_live = 0;
    hold_interrupts(SIG_SETMASK, &mask);
    if (r < 0)
        snprintf(err, errlen, "%s: cannot write the archive: %s", path, vsl_strerror(r));
out:
    pthread_mutex_unlock(&c->mu);
    free(failed);
    for (size_t i = 0; i < n_hosts; i++)
        free(hosts[i]);
    free(hosts);
    for (size_t i = 0; i < n_labels; i++)
        free(labels[i]);
    free(labels);
    vsl_anon_free(anon);
    vsl_buf_free(&text);
    return r;
}
