/* vsl_buf: bounded growable buffer, and a bounded whole-file reader.
 * Every append is checked; the limit protects the daemon from a hostile or broken peer. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/err.h"

int vsl_grow(void *pv, size_t *cap, size_t n, size_t elem, size_t first)
{
    void *v, *nv;
    size_t ncap;

    if (n < *cap)
        return 0;
    ncap = *cap ? *cap * 2 : first;
    if (ncap <= n || ncap > SIZE_MAX / elem)
        return -ENOMEM;
    /* Through memcpy: pv points to a pointer of another type (struct step *, ...), which may
     * not be read as a void * directly. */
    memcpy(&v, pv, sizeof(v));
    nv = realloc(v, ncap * elem);
    if (!nv)
        return -ENOMEM;
    memcpy(pv, &nv, sizeof(nv));
    *cap = ncap;
    return 0;
}

void vsl_buf_init(struct vsl_buf *b, size_t max)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->max = max;
    b->wipe = 0;
}

void vsl_buf_init_secret(struct vsl_buf *b, size_t max)
{
    vsl_buf_init(b, max);
    b->wipe = 1;
}

/* A block of cap bytes, len of them in use, grown to ncap: realloc, or for a secret a new
 * block, the bytes copied, the old block zeroed and freed. NULL, b unchanged, on failure. */
static char *regrow(struct vsl_buf *b, size_t ncap)
{
    if (!b->wipe)
        return realloc(b->data, ncap);
    char *d = malloc(ncap);
    if (!d)
        return NULL;
    if (b->data) {
        memcpy(d, b->data, b->len + 1);
        explicit_bzero(b->data, b->cap);
        free(b->data);
    }
    return d;
}

int vsl_buf_add(struct vsl_buf *b, const void *p, size_t n)
{
    if (n > b->max || b->len > b->max - n)
        return -VSL_ETOOBIG;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *d = regrow(b, cap);
        if (!d)
            return -ENOMEM;
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

int vsl_buf_addstr(struct vsl_buf *b, const char *s)
{
    return vsl_buf_add(b, s, strlen(s));
}

int vsl_buf_addxml(struct vsl_buf *b, const char *s)
{
    int r = 0;

    for (; *s && r == 0; s++) {
        switch (*s) {
        case '&': r = vsl_buf_addstr(b, "&amp;"); break;
        case '<': r = vsl_buf_addstr(b, "&lt;"); break;
        case '>': r = vsl_buf_addstr(b, "&gt;"); break;
        case '"': r = vsl_buf_addstr(b, "&quot;"); break;
        case '\'': r = vsl_buf_addstr(b, "&#39;"); break; /* HTML 4 mail clients too */
        default: r = vsl_buf_add(b, s, 1); break;
        }
    }
    return r;
}

int vsl_buf_vprintf(struct vsl_buf *b, const char *fmt, va_list ap)
{
    char small[512];
    va_list again;
    int n;

    va_copy(again, ap);
    n = vsnprintf(small, sizeof(small), fmt, ap);
    if (n < 0 || (size_t)n < sizeof(small)) {
        va_end(again);
        int r = n < 0 ? -EINVAL : vsl_buf_add(b, small, (size_t)n);
        if (b->wipe)
            explicit_bzero(small, sizeof(small));
        return r;
    }
    char *big = malloc((size_t)n + 1);
    int r = -ENOMEM;
    if (big) {
        vsnprintf(big, (size_t)n + 1, fmt, again);
        r = vsl_buf_add(b, big, (size_t)n);
        if (b->wipe)
            explicit_bzero(big, (size_t)n + 1);
        free(big);
    }
    va_end(again);
    return r;
}

int vsl_buf_printf(struct vsl_buf *b, const char *fmt, ...)
{
    va_list ap;
    int r;

    va_start(ap, fmt);
    r = vsl_buf_vprintf(b, fmt, ap);
    va_end(ap);
    return r;
}

#define LEFT_OUT "(further messages left out: too many)\n"

int vsl_buf_line(struct vsl_buf *b, const char *fmt, ...)
{
    const size_t n = sizeof(LEFT_OUT) - 1;
    va_list ap;
    int r;

    va_start(ap, fmt);
    r = vsl_buf_vprintf(b, fmt, ap);
    va_end(ap);
    if (r == 0)
        r = vsl_buf_add(b, "\n", 1);
    if (r == 0)
        return 0;
    /* Whatever of the line got in goes, and the list says once that it is incomplete; the
     * marker may pass max by its own length, so it always fits. */
    while (b->len > 0 && b->data[b->len - 1] != '\n')
        b->len--;
    if (b->data)
        b->data[b->len] = '\0';
    if (b->len >= n && memcmp(b->data + b->len - n, LEFT_OUT, n) == 0)
        return r;
    if (b->len + n > b->max)
        b->max = b->len + n;
    if (vsl_buf_add(b, LEFT_OUT, n) < 0)
        return -ENOMEM; /* not even room for the marker */
    return r;
}

int vsl_buf_addurl(struct vsl_buf *b, const char *s)
{
    int r = 0;

    for (; *s && r == 0; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            strchr("-_.~", c))
            r = vsl_buf_add(b, s, 1);
        else
            r = vsl_buf_printf(b, "%%%02X", c);
    }
    return r;
}

void vsl_buf_reset(struct vsl_buf *b)
{
    if (b->wipe && b->data)
        explicit_bzero(b->data, b->cap);
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

void vsl_buf_free(struct vsl_buf *b)
{
    if (b->wipe && b->data)
        explicit_bzero(b->data, b->cap);
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

char *vsl_buf_take(struct vsl_buf *b)
{
    char *s = b->data ? b->data : strdup("");
    b->data = NULL;
    b->len = b->cap = 0;
    return s;
}

/* Length of the well-formed UTF-8 sequence at p (RFC 3629: no overlongs, no surrogates, at
 * most U+10FFFF), or 0. */
static size_t utf8_len(const unsigned char *p)
{
    unsigned char c = p[0];
    size_t n;
    unsigned min;

    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
        min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        min = 0x10000;
    } else {
        return 0;
    }
    unsigned cp = c & (0x7f >> n);
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (p[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

int vsl_utf8_valid(const char *s, size_t n)
{
    const unsigned char *run = (const unsigned char *)s, *end = run + n;

    while (run < end) {
        /* ASCII, the common case, a byte at a time without the decoder. */
        if (*run < 0x80) {
            run++;
            continue;
        }
        /* utf8_len() may look up to three bytes ahead: near the end, at a zero-padded copy. */
        unsigned char tail[5] = {0};
        size_t left = (size_t)(end - run), k;
        if (left < 4)
            memcpy(tail, run, left);
        k = utf8_len(left < 4 ? tail : run);
        if (k == 0 || left < k)
            return 0;
        run += k;
    }
    return 1;
}

int vsl_buf_addjson(struct vsl_buf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789ABCDEF"; /* as jansson writes \u001F */
    const unsigned char *p = (const unsigned char *)s, *end = p + n, *run;
    size_t start = b->len;
    int r;

    if (!vsl_utf8_valid(s, n))
        return -EILSEQ;
    r = vsl_buf_add(b, "\"", 1);
    /* Runs of bytes that need no escape are appended at once. */
    for (run = p; r == 0 && p < end; p++) {
        if (*p >= 0x20 && *p != '"' && *p != '\\')
            continue;
        char e[6] = {'\\', (char)*p, 0, 0, 0, 0};
        size_t elen = 2;
        switch (*p) {
        case '"': case '\\': break;
        case '\b': e[1] = 'b'; break;
        case '\f': e[1] = 'f'; break;
        case '\n': e[1] = 'n'; break;
        case '\r': e[1] = 'r'; break;
        case '\t': e[1] = 't'; break;
        default:
            memcpy(e + 1, "u00", 3);
            e[4] = hex[*p >> 4];
            e[5] = hex[*p & 15];
            elen = 6;
        }
        r = vsl_buf_add(b, run, (size_t)(p - run));
        if (r == 0)
            r = vsl_buf_add(b, e, elen);
        run = p + 1;
    }
    if (r == 0)
        r = vsl_buf_add(b, run, (size_t)(p - run));
    if (r == 0)
        r = vsl_buf_add(b, "\"", 1);
    if (r < 0 && b->len > start) {
        b->len = start; /* nothing half-written */
        b->data[start] = '\0';
    }
    return r;
}

size_t vsl_control_len(const unsigned char *s)
{
    if (*s < 0x20 || *s == 0x7F)
        return 1;
    if (s[0] == 0xC2 && s[1] >= 0x80 && s[1] <= 0x9F)
        return 2;
    if (s[0] == 0xE2 && s[1] == 0x80 && (s[2] == 0xA8 || s[2] == 0xA9))
        return 3;
    return 0;
}

void vsl_control_escape(const unsigned char *s, size_t k, char e[8])
{
    if (k == 1 && (*s == '\n' || *s == '\r' || *s == '\t'))
        snprintf(e, 8, "\\%c", *s == '\n' ? 'n' : *s == '\r' ? 'r' : 't');
    else if (k == 1)
        snprintf(e, 8, "\\x%02X", *s);
    else if (k == 2)
        snprintf(e, 8, "\\u%04X", s[1]);
    else
        snprintf(e, 8, "\\u%04X", 0x2000 + (s[2] - 0x80));
}

void vsl_utf8_fix(char *s)
{
    unsigned char *p = (unsigned char *)s;

    while (*p) {
        size_t n = utf8_len(p);
        if (n == 0) {
            *p++ = '?';
            continue;
        }
        p += n;
    }
}

/* Columns a code point takes in a terminal: the wide ranges of Unicode's East Asian Width (W,
 * F) and the emoji blocks are two, combining diacritical marks and zero-width joiners none. */
static size_t cp_width(unsigned cp)
{
    static const unsigned wide[][2] = {
        {0x1100, 0x115f},  {0x2e80, 0x303e},  {0x3041, 0x33ff},  {0x3400, 0x4dbf},
        {0x4e00, 0x9fff},  {0xa000, 0xa4cf},  {0xac00, 0xd7a3},  {0xf900, 0xfaff},
        {0xfe30, 0xfe4f},  {0xff00, 0xff60},  {0xffe0, 0xffe6},  {0x1f300, 0x1f64f},
        {0x1f900, 0x1f9ff}, {0x20000, 0x3fffd},
    };
    if ((cp >= 0x300 && cp <= 0x36f) || (cp >= 0x200b && cp <= 0x200f) || cp == 0xfe0f)
        return 0;
    for (size_t i = 0; i < sizeof(wide) / sizeof(wide[0]); i++)
        if (cp >= wide[i][0] && cp <= wide[i][1])
            return 2;
    return 1;
}

size_t vsl_utf8_fit(const char *s, size_t cols, size_t *width)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t used = 0, at = 0;

    while (p[at]) {
        size_t n = utf8_len(p + at), w = 1;
        if (n == 0) {
            n = 1; /* not UTF-8: one column, as vsl_utf8_fix's '?' */
        } else if (n > 1) {
            unsigned cp = p[at] & (0x7f >> n);
            for (size_t i = 1; i < n; i++)
                cp = (cp << 6) | (p[at + i] & 0x3f);
            w = cp_width(cp);
        }
        if (used + w > cols)
            break;
        used += w;
        at += n;
    }
    if (width)
        *width = used;
    return at;
}

void vsl_fmt_double(char *out, size_t size, double v)
{
    /* %.17g always reads back, but prints the binary's noise; the first precision that reads
     * back is the shortest decimal that names the same double. */
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(out, size, "%.*g", prec, v);
        if (strtod(out, NULL) == v || v != v)
            return;
    }
}

/* vsl_read_file(); secret: the buffers it grows through and stdio's are wiped (none is
 * used: the file is read unbuffered), for a key or a token. */
static int read_file(const char *path, size_t max, char **out, int secret)
{
    struct vsl_buf b;
    char chunk[4096];
    size_t n;
    int r = 0;
    FILE *f = fopen(path, "re");

    *out = NULL;
    if (!f)
        return -errno;
    if (secret) {
        setvbuf(f, NULL, _IONBF, 0);
        vsl_buf_init_secret(&b, max);
    } else {
        vsl_buf_init(&b, max);
    }
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
        r = vsl_buf_add(&b, chunk, n);
        if (r < 0)
            goto out;
    }
    if (ferror(f)) {
        r = -EIO;
        goto out;
    }
    if (b.len > 0 && b.data[b.len - 1] == '\n')
        b.data[--b.len] = '\0';
    if (b.len > 0 && b.data[b.len - 1] == '\r')
        b.data[--b.len] = '\0';
    *out = vsl_buf_take(&b);
    if (!*out)
        r = -ENOMEM;
out:
    if (r < 0)
        vsl_buf_free(&b);
    if (secret)
        explicit_bzero(chunk, sizeof(chunk));
    fclose(f);
    return r;
}

int vsl_read_file(const char *path, size_t max, char **out)
{
    return read_file(path, max, out, 0);
}

int vsl_read_secret_file(const char *path, size_t max, char **out)
{
    return read_file(path, max, out, 1);
}
