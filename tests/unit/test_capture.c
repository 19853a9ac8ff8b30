/* Unit tests for util/capture (vslint record): secrets out of the archive, the Login's
 * credentials emptied, a read too big for the capture refused whole, the archive a valid
 * ustar inside gzip with the README and manifest first. */
#define _GNU_SOURCE /* memmem */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "util/capture.h"
#include "util/err.h"

static const char login_req[] =
    "<soapenv:Envelope><soapenv:Body><Login><_this type=\"SessionManager\">SessionManager"
    "</_this><userName>admin@corp</userName><password>Hunter2-pass</password></Login>"
    "</soapenv:Body></soapenv:Envelope>";
static const char login_answer[] =
    "<soapenv:Envelope><soapenv:Body><LoginResponse><returnval><key>52-session-key</key>"
    "<userName>admin@corp</userName><fullName>Ada Admin</fullName></returnval>"
    "</LoginResponse></soapenv:Body></soapenv:Envelope>";
static const char view_req[] = "<soapenv:Body><CreateContainerView/></soapenv:Body>";
static const char view_answer[] =
    "<soapenv:Body><CreateContainerViewResponse><returnval type=\"ContainerView\">"
    "session[cookie-value-123]52ab</returnval><x>session[52-session-key]53cd jsmith@corp.example"
    " CORP\\jsmith, jsmith and CORP alone</x></CreateContainerViewResponse></soapenv:Body>";

/* The whole archive, uncompressed, NUL-terminated (tar's padding holds NULs: search with
 * memmem over *len). */
static char *unpack(const char *path, size_t *len)
{
    gzFile z = gzopen(path, "rb");
    size_t cap = 1 << 20;
    char *buf = malloc(cap);
    int n;

    assert_non_null(z);
    *len = 0;
    while ((n = gzread(z, buf + *len, (unsigned)(cap - *len - 1))) > 0)
        *len += (size_t)n;
    gzclose(z);
    buf[*len] = '\0';
    return buf;
}

static void test_secrets_removed(void **state)
{
    struct vsl_capture *c = NULL;
    char path[] = "/tmp/vslint-test-capture-XXXXXX", err[256] = "";
    size_t len;
    int fd = mkstemp(path);

    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(vsl_capture_new(0, &c), 0);
    assert_int_equal(vsl_capture_secret(c, "Hunter2-pass"), 0);
    assert_int_equal(vsl_capture_secret(c, "cookie-value-123"), 0);
    assert_int_equal(vsl_capture_user(c, "CORP\\jsmith"), 0);
    assert_int_equal(vsl_capture_user(c, "jsmith@corp.example"), 0);
    assert_int_equal(
        vsl_capture_add(c, &(struct vsl_exchange){.source = "vcenter",
                                                  .proto = "soap",
                                                  .url = "https://vc.corp.example:443/sdk",
                                                  .req = login_req,
                                                  .req_len = strlen(login_req),
                                                  .answer = login_answer,
                                                  .answer_len = strlen(login_answer),
                                                  .status = 200}),
        0);
    assert_int_equal(
        vsl_capture_add(c, &(struct vsl_exchange){.source = "vcenter",
                                                  .proto = "soap",
                                                  .url = "https://vc.corp.example:443/sdk",
                                                  .req = view_req,
                                                  .req_len = strlen(view_req),
                                                  .answer = view_answer,
                                                  .answer_len = strlen(view_answer),
                                                  .status = 200}),
        0);
    assert_int_equal(vsl_capture_count(c), 2);
    assert_false(vsl_capture_written(c));
    assert_int_equal(vsl_capture_write(c, path,
                                       &(struct vsl_capture_about){.vcenter = "prod",
                                                                   .url = "https://vc/sdk",
                                                                   .version = "test"},
                                       err, sizeof(err)),
                     0);
    /* What an interrupt after the write finds: the archive in place, which it must not
     * remove, and written set, so that it says the archive was written. */
    assert_true(vsl_capture_written(c));
    vsl_capture_discard(c);
    assert_int_equal(access(path, F_OK), 0);
    vsl_capture_free(c);
    char *all = unpack(path, &len);
    static const char *const gone[] = {"Hunter2-pass", "admin@corp", "52-session-key", "Ada Admin",
                                       "cookie-value-123", "jsmith", "CORP", "corp.example"};
    for (size_t i = 0; i < sizeof(gone) / sizeof(gone[0]); i++)
        assert_null(memmem(all, len, gone[i], strlen(gone[i])));
    assert_non_null(memmem(all, len, "<password>(removed)</password>", 30));
    assert_non_null(memmem(all, len, "session[(removed)]52ab", 22));
    /* The Login answer's key is a secret wherever it shows, not only in that answer. */
    assert_non_null(memmem(all, len, "session[(removed)]53cd", 22));
    /* ustar: the README first, then the manifest, named under vslint-capture/. */
    assert_string_equal(all, "vslint-capture/README.md");
    assert_memory_equal(all + 257, "ustar", 6);
    assert_non_null(memmem(all, len,
                           "1\tvcenter\tsoap\tLogin\t/sdk\t200\t0001-vcenter-Login.request.xml"
                           "\t0001-vcenter-Login.answer.xml\n",
                           88));
    free(all);
    unlink(path);
}

static void test_too_big_is_refused_whole(void **state)
{
    struct vsl_capture *c = NULL;
    char path[] = "/tmp/vslint-test-capture-XXXXXX", err[256] = "";
    int fd = mkstemp(path);

    assert_true(fd >= 0);
    close(fd);
    unlink(path);
    assert_int_equal(vsl_capture_new(64, &c), 0);
    assert_int_equal(vsl_capture_add(c, &(struct vsl_exchange){.source = "vcenter",
                                                               .proto = "get",
                                                               .method = "GET",
                                                               .url = "http://vc/sdk/x",
                                                               .answer = login_answer,
                                                               .answer_len = strlen(login_answer),
                                                               .status = 200}),
                     -VSL_ETOOBIG);
    assert_true(vsl_capture_write(c, path, &(struct vsl_capture_about){.version = "t"}, err,
                                  sizeof(err)) < 0);
    assert_non_null(strstr(err, "larger than the capture may hold"));
    assert_int_equal(access(path, F_OK), -1);
    assert_false(vsl_capture_written(c));
    vsl_capture_free(c);
}

/* Adds a SOAP exchange of view_req with answer (ended by failure, NULL: whole). */
static void add_view(struct vsl_capture *c, const char *answer, const char *failure)
{
    assert_int_equal(vsl_capture_add(c, &(struct vsl_exchange){.source = "vcenter",
                                                               .proto = "soap",
                                                               .url = "https://vc/sdk",
                                                               .req = view_req,
                                                               .req_len = strlen(view_req),
                                                               .answer = answer,
                                                               .answer_len = strlen(answer),
                                                               .status = 200,
                                                               .failure = failure}),
                     0);
}

/* An answer cut inside a session key (the transfer ended there) keeps none of its first
 * bytes: a start of 8 bytes or more of a secret at the end of a cut answer is removed. */
static void test_cut_answer_loses_a_secret_s_start(void **state)
{
    struct vsl_capture *c = NULL;
    char path[] = "/tmp/vslint-test-capture-XXXXXX", err[256] = "";
    static const char cut[] = "<returnval type=\"ContainerView\">session[52ab-cut-key";
    static const char whole[] = "<x>52ab-cut-key</x>";
    size_t len;
    int fd = mkstemp(path);

    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(vsl_capture_new(0, &c), 0);
    assert_int_equal(vsl_capture_secret(c, "52ab-cut-key-0123456789"), 0);
    add_view(c, cut, "closed after 52 bytes");
    /* The same bytes in an answer that came whole are not a secret's start but a value. */
    assert_int_equal(vsl_capture_add(c, &(struct vsl_exchange){.source = "vcenter",
                                                               .proto = "get",
                                                               .method = "GET",
                                                               .url = "https://vc/sdk/x",
                                                               .answer = whole,
                                                               .answer_len = strlen(whole),
                                                               .status = 200}),
                     0);
    assert_int_equal(vsl_capture_write(c, path, &(struct vsl_capture_about){.version = "t"}, err,
                                       sizeof(err)),
                     0);
    vsl_capture_free(c);
    char *all = unpack(path, &len);
    assert_non_null(memmem(all, len, "\">session[(removed)", 19));
    assert_null(memmem(all, len, "session[52ab", 12));
    assert_non_null(memmem(all, len, whole, strlen(whole)));
    free(all);
    unlink(path);
}

/* --anonymize: an array that never answered is still named in the failure's text; its
 * configured host and its first label are in no file of the archive. */
static void test_anonymized_failure_names_no_configured_host(void **state)
{
    struct vsl_capture *c = NULL;
    char path[] = "/tmp/vslint-test-capture-XXXXXX", err[256] = "";
    static const char *const arrays[] = {"https://unity-prod.corp.example:443/"};
    size_t len;
    int fd = mkstemp(path);

    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(vsl_capture_new(0, &c), 0);
    add_view(c, view_answer, NULL);
    assert_int_equal(
        vsl_capture_write(c, path,
                          &(struct vsl_capture_about){
                              .vcenter = "lab",
                              .url = "https://vcsa01.lab.test/sdk",
                              .version = "t",
                              .anonymize = 1,
                              .failed = "array1: Failed to connect to unity-prod.corp.example "
                                        "port 443 (unity-prod is down)",
                              .array_urls = arrays,
                              .n_arrays = 1},
                          err, sizeof(err)),
        0);
    vsl_capture_free(c);
    char *all = unpack(path, &len);
    assert_non_null(memmem(all, len, "It ended with: array1: Failed to connect to ", 44));
    assert_null(memmem(all, len, "unity-prod", 10));
    assert_null(memmem(all, len, "vcsa01", 6));
    free(all);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_secrets_removed),
        cmocka_unit_test(test_too_big_is_refused_whole),
        cmocka_unit_test(test_cut_answer_loses_a_secret_s_start),
        cmocka_unit_test(test_anonymized_failure_names_no_configured_host),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
