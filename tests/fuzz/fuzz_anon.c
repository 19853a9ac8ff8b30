/* Fuzz target for the anonymizer of `vslint record --anonymize` (util/anon.c), which reads every
 * answer of a capture: byte 0 even means the rest is a SOAP answer, odd a REST (JSON) one. It
 * is learned from, then anonymized twice. The replacement must succeed, give the same text both
 * times (the same original, the same token), in XML leave every piece of markup (<...>) as
 * it was (only text is ever changed), and leave valid JSON valid with the same keys. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "util/anon.h"
#include "util/buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The markup of s: every <...> in order, joined. */
static int markup(const char *s, size_t len, struct vsl_buf *out)
{
    int in = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '<')
            in = 1;
        if (in && vsl_buf_add(out, s + i, 1) < 0)
            return -1;
        if (s[i] == '>')
            in = 0;
    }
    return 0;
}

/* Whether x and y have the same shape: the same keys in every object, the same lengths of
 * arrays, strings where strings were. */
static int same_keys(const json_t *x, const json_t *y)
{
    const char *key;
    json_t *v;
    size_t i;

    if (json_typeof(x) != json_typeof(y))
        return 0;
    if (json_is_array(x)) {
        if (json_array_size(x) != json_array_size(y))
            return 0;
        json_array_foreach(x, i, v) if (!same_keys(v, json_array_get(y, i))) return 0;
    } else if (json_is_object(x)) {
        if (json_object_size(x) != json_object_size(y))
            return 0;
        json_object_foreach((json_t *)x, key, v)
        {
            const json_t *w = json_object_get(y, key);
            if (!w || !same_keys(v, w))
                return 0;
        }
    }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct vsl_anon *a = NULL;
    struct vsl_buf one, two, m1, m2;
    const char *body = (const char *)data + 1;
    int json;

    if (size < 1 || vsl_anon_new(&a) < 0)
        return 0;
    json = data[0] & 1;
    size--;
    vsl_buf_init(&one, (size_t)-1);
    vsl_buf_init(&two, (size_t)-1);
    vsl_buf_init(&m1, (size_t)-1);
    vsl_buf_init(&m2, (size_t)-1);
    if (vsl_anon_learn(a, json, json ? "/api/types/pool/instances" : "/sdk", body, size) < 0 ||
        vsl_anon_seal(a) < 0)
        goto out;
    if (vsl_anon_apply(a, json, body, size, &one) < 0 ||
        vsl_anon_apply(a, json, body, size, &two) < 0)
        __builtin_trap();
    if (one.len != two.len || (one.len && memcmp(one.data, two.data, one.len)))
        __builtin_trap();
    if (!json && markup(body, size, &m1) == 0 && markup(one.data, one.len, &m2) == 0 &&
        (m1.len != m2.len || (m1.len && memcmp(m1.data, m2.data, m1.len))))
        __builtin_trap();
    if (json) {
        json_t *in = json_loadb(body, size, 0, NULL), *got = NULL;
        if (in && !(got = json_loadb(one.data ? one.data : "", one.len, 0, NULL)))
            __builtin_trap();
        if (in && !same_keys(in, got))
            __builtin_trap();
        json_decref(in);
        json_decref(got);
    }
out:
    vsl_buf_free(&one);
    vsl_buf_free(&two);
    vsl_buf_free(&m1);
    vsl_buf_free(&m2);
    vsl_anon_free(a);
    return 0;
}
