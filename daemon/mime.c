/* Quoted-printable, encoded words and the few header values the digest writes. Mail passes
 * through servers that cut lines past 998 characters and clients that mangle 8-bit text: the
 * message leaves vslint as 7-bit ASCII with short lines. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include <openssl/evp.h>

#include "daemon/mime.h"

#define QP_MAX 76 /* RFC 2045 6.7: encoded lines at most 76 characters */

static const char hex[] = "0123456789ABCDEF";

/* Appends one token (a literal character or =XX) to the QP line at *col, breaking the line
 * softly first when the token and a final "=" would not fit. No line starts with a literal
 * ".": a line that is a lone "." ends the SMTP DATA (RFC 5321 4.5.2) when the message is
 * piped to a sendmail without -i, and a soft break can put a dot first as well as the text. */
static int qp_token(struct vsl_buf *out, const char *tok, size_t n, size_t *col)
{
    int r = 0;

    if (*col + n > QP_MAX - 1) {
        r = vsl_buf_addstr(out, "=\r\n");
        *col = 0;
    }
    if (*col == 0 && n == 1 && tok[0] == '.') {
        tok = "=2E";
        n = 3;
    }
    if (r == 0)
        r = vsl_buf_add(out, tok, n);
    *col += n;
    return r;
}

int vsl_mime_qp(struct vsl_buf *out, const char *text)
{
    const unsigned char *p = (const unsigned char *)text;
    size_t col = 0;
    int r = 0;

    while (*p && r == 0) {
        unsigned char c = *p;
        const unsigned char *next = p + 1;
        int line_end = *next == '\n' || *next == '\0' || (*next == '\r' && next[1] == '\n');
        if (c == '\r' && p[1] == '\n') {
            p++;
            continue;
        }
        if (c == '\n') {
            r = vsl_buf_addstr(out, "\r\n");
            col = 0;
            p++;
            continue;
        }
        int literal = (c >= 33 && c <= 126 && c != '=') || ((c == ' ' || c == '\t') && !line_end);
        if (literal) {
            char t = (char)c;
            r = qp_token(out, &t, 1, &col);
        } else {
            char t[3] = {'=', hex[c >> 4], hex[c & 15]};
            r = qp_token(out, t, 3, &col);
        }
        p++;
    }
    return r;
}

static int is_ascii(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s >= 127 || ((unsigned char)*s < 32 && *s != '\t'))
            return 0;
    return 1;
}

/* Length of the longest prefix of s (at most max bytes) that ends between two UTF-8
 * characters. */
static size_t utf8_cut(const char *s, size_t max)
{
    size_t n = strlen(s);

    if (n <= max)
        return n;
    n = max;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--;
    return n ? n : max;
}

int vsl_mime_header(struct vsl_buf *out, const char *name, const char *value)
{
    size_t col = strlen(name) + 2;
    int r = vsl_buf_printf(out, "%s: ", name);

    if (r == 0 && is_ascii(value)) {
        /* Fold at spaces before column 78; a word longer than a line stays whole (998 max). */
        const char *p = value;
        while (r == 0 && *p) {
            const char *sp = strchr(p + 1, ' ');
            size_t w = sp ? (size_t)(sp - p) : strlen(p);
            if (col + w > 78 && col > strlen(name) + 2 && *p == ' ') {
                r = vsl_buf_addstr(out, "\r\n");
                col = 0;
            }
            if (r == 0)
                r = vsl_buf_add(out, p, w);
            col += w;
            p += w;
        }
        return r == 0 ? vsl_buf_addstr(out, "\r\n") : r;
    }
    /* Each word "=?UTF-8?B?" + base64 + "?=" fits the rest of its line within 78 columns and
     * is at most the 75 characters RFC 2047 allows an encoded word: 4 base64 characters per 3
     * bytes. A continuation line (" " and the word) has 77 columns, so 75 is the bound there. */
    if (r == 0 && col + 12 + 4 > 78) {
        r = vsl_buf_addstr(out, "\r\n ");
        col = 1;
    }
    for (const char *p = value; r == 0 && *p;) {
        unsigned char enc[80];
        size_t avail = 78 - (p == value ? col : 1);
        size_t room = (avail > 75 ? 75 : avail) - 12;
        size_t n = utf8_cut(p, room / 4 * 3);
        int len = EVP_EncodeBlock(enc, (const unsigned char *)p, (int)n);
        if (p != value)
            r = vsl_buf_addstr(out, "\r\n ");
        if (r == 0)
            r = vsl_buf_printf(out, "=?UTF-8?B?%.*s?=", len, (const char *)enc);
        p += n;
    }
    return r == 0 ? vsl_buf_addstr(out, "\r\n") : r;
}

const char *vsl_mime_date(int64_t ms, char *buf, size_t size)
{
    static const char *const days[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    static const char *const months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                         "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    time_t t = (time_t)(ms / 1000);
    struct tm tm;

    /* Spelled out rather than strftime's %a and %b, which follow the locale. */
    if (!gmtime_r(&t, &tm))
        return NULL;
    int n = snprintf(buf, size, "%s, %02d %s %04d %02d:%02d:%02d +0000", days[tm.tm_wday],
                     tm.tm_mday, months[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min,
                     tm.tm_sec);
    return n > 0 && (size_t)n < size ? buf : NULL;
}

int vsl_mime_message_id(const char *from, int64_t ms, char *buf, size_t size)
{
    unsigned char rnd[8];
    const char *at = strrchr(from, '@');
    char r[17];

    if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
        return -errno;
    for (size_t i = 0; i < sizeof(rnd); i++) {
        r[2 * i] = hex[rnd[i] >> 4];
        r[2 * i + 1] = hex[rnd[i] & 15];
    }
    r[16] = '\0';
    int n = snprintf(buf, size, "<vslint.%lld.%s@%s>", (long long)ms, r,
                     at && at[1] ? at + 1 : "localhost");
    return n > 0 && (size_t)n < size ? 0 : -ENOSPC;
}
