/* MIME pieces of the digest (RFC 2045, 2047, 5322): quoted-printable bodies, encoded-word
 * headers, the Date and Message-ID values. Lines end in CRLF. */
#ifndef VSL_MIME_H
#define VSL_MIME_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

/* Appends text (lines separated by "\n") as quoted-printable: every line at most 76 characters
 * (soft breaks "=" where needed), CRLF line ends, '=' and non-ASCII bytes as =XX, a space or
 * tab before a line end and a '.' starting a line encoded. */
VSL_MUST_CHECK int vsl_mime_qp(struct vsl_buf *out, const char *text);

/* Appends "Name: value" CRLF. A value with non-ASCII bytes (UTF-8) becomes RFC 2047 encoded
 * words (=?UTF-8?B?...?=), each at most 75 characters and split between characters, folded
 * onto continuation lines; a long ASCII value is folded at spaces. No line passes 78. */
VSL_MUST_CHECK int vsl_mime_header(struct vsl_buf *out, const char *name, const char *value);

/* ms as an RFC 5322 date in UTC ("Mon, 30 Nov 2026 06:30:00 +0000"); NULL if it does not fit. */
const char *vsl_mime_date(int64_t ms, char *buf, size_t size);

/* A new Message-ID "<vslint.TIME.RANDOM@DOMAIN>", DOMAIN from the address from. 0 or -errno. */
int vsl_mime_message_id(const char *from, int64_t ms, char *buf, size_t size);

#endif
