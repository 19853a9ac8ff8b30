/* A growable byte buffer with a hard maximum, for everything that holds remote input
 * (curl's dynbuf idea: an append past the limit fails with VSL_ETOOBIG and frees nothing). */
#ifndef VSL_BUF_H
#define VSL_BUF_H

#include <stdarg.h>
#include <stddef.h>

struct vsl_buf {
    char *data; /* owned; NUL-terminated when len > 0 */
    size_t len;
    size_t cap;
    size_t max; /* hard limit on len */
    int wipe;   /* a secret's buffer: no copy of its bytes is left in freed memory */
};

void vsl_buf_init(struct vsl_buf *b, size_t max);
/* The same for a buffer that holds a secret (a request carrying a password): growing it
 * copies into a new block and zeroes the old one before freeing it (realloc would free it as
 * it is), and reset and free zero what it held. vsl_buf_take() hands the secret over. */
void vsl_buf_init_secret(struct vsl_buf *b, size_t max);
/* The appends fail (-VSL_ETOOBIG past max, -ENOMEM) without changing b: a caller that goes on
 * regardless builds a truncated document, so the result must be looked at. */
#define VSL_MUST_CHECK __attribute__((warn_unused_result))
VSL_MUST_CHECK int vsl_buf_add(struct vsl_buf *b, const void *p, size_t n);
VSL_MUST_CHECK int vsl_buf_addstr(struct vsl_buf *b, const char *s);
/* Appends s with XML's five special characters escaped (the apostrophe as &#39;, which HTML
 * readers that predate &apos; understand too). */
VSL_MUST_CHECK int vsl_buf_addxml(struct vsl_buf *b, const char *s);
VSL_MUST_CHECK int vsl_buf_printf(struct vsl_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
VSL_MUST_CHECK int vsl_buf_vprintf(struct vsl_buf *b, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
/* Appends s percent-encoded as one segment of a URI path or query value: every byte but the
 * unreserved ones (letters, digits, "-._~") as %XX, so "/" and spaces stay inside the segment. */
VSL_MUST_CHECK int vsl_buf_addurl(struct vsl_buf *b, const char *s);
/* Appends the n bytes at s as a JSON string literal, quotes included, escaped as jansson
 * escapes them (quote, backslash and control characters; UTF-8 as it is). -EILSEQ, and nothing
 * appended, when s is not well-formed UTF-8 (jansson would refuse it too). */
VSL_MUST_CHECK int vsl_buf_addjson(struct vsl_buf *b, const char *s, size_t n);
/* Appends one line of a list of messages (fmt, then a newline). A line that does not fit is
 * not cut half-way: the list ends instead, once, with a line saying that further messages were
 * left out. Returns 0, or the error that left this line out (for callers that count). */
int vsl_buf_line(struct vsl_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void vsl_buf_reset(struct vsl_buf *b);
void vsl_buf_free(struct vsl_buf *b);
/* Returns a string the caller owns (never NULL on success: "" for an empty buffer). */
char *vsl_buf_take(struct vsl_buf *b);

/* Whether the n bytes at s are well-formed UTF-8 (what jansson and vsl_buf_addjson() take). */
int vsl_utf8_valid(const char *s, size_t n);

/* The length in bytes of the character at s if it would break a line or move a terminal's
 * cursor (C0 controls, DEL, C1 controls as UTF-8, U+2028 and U+2029), else 0. Reads up to
 * two bytes past a lead byte: s must be NUL-ended or have them. */
size_t vsl_control_len(const unsigned char *s);
/* The visible escape of such a character (k = vsl_control_len(s)) into e: \n, \r, \t,
 * \xHH (other C0 and DEL), \u00HH (C1), \u2028, \u2029. */
void vsl_control_escape(const unsigned char *s, size_t k, char e[8]);

/* Makes s valid UTF-8 in place: each byte that does not start or continue a well-formed
 * sequence becomes '?', so text built from remote input can go into JSON (which jansson
 * rejects otherwise), even when snprintf cut a character in two. */
void vsl_utf8_fix(char *s);

/* The bytes of the longest prefix of s that fits in cols terminal columns, never cutting a
 * character; *width (if not NULL) gets its columns. East Asian wide characters and most emoji
 * take two columns, combining marks none, a byte that is not UTF-8 one. For tables of names. */
size_t vsl_utf8_fit(const char *s, size_t cols, size_t *width);

/* v in the shortest form that strtod() reads back as the same double ("0.136", not %.17g's
 * "0.13600000000000001"), into out (at least 32 bytes). For the Prometheus text format. */
void vsl_fmt_double(char *out, size_t size, double v);

/* Makes room for element n of the array *(T **)pv, whose elements are elem bytes and whose
 * capacity (in elements) is *cap: when n has reached *cap the array is reallocated to twice
 * *cap, or to first when it has none. The one growth rule of every append-only array.
 * 0, or -ENOMEM with the array and *cap as they were. pv is the address of the array's
 * pointer (of any object type): &p->items. */
VSL_MUST_CHECK int vsl_grow(void *pv, size_t *cap, size_t n, size_t elem, size_t first);

/* Reads a whole small file (at most max bytes), strips one trailing newline. Caller frees *out. */
int vsl_read_file(const char *path, size_t max, char **out);
/* vsl_read_file() for a key or a token: no copy of it is left behind unwiped (the caller
 * wipes *out). */
int vsl_read_secret_file(const char *path, size_t max, char **out);

#endif
