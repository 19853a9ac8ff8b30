/* A main() for the fuzz targets without libFuzzer: runs LLVMFuzzerTestOneInput over every file
 * named on the command line or found in a named directory, so every build replays the seed
 * corpora and the saved crashes (meson suite "unit"). A target that crashes fails the test.
 * With --junit FILE, each input replayed is a passed case of a JUnit report written at the end:
 * a crash leaves no report (the test runner counts that as a failure) and the input's name as
 * the last "replay:" line on stdout. */
#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_INPUT_SIZE (16u << 20)

static FILE *junit;        /* the report being written (FILE.tmp until the end), or NULL */
static const char *target; /* the report's suite: this program's name */

/* s as an XML attribute value: markup escaped, control characters left out. */
static void xml_attr(const char *s)
{
    static const char *const entity[256] = {
        ['&'] = "&amp;", ['<'] = "&lt;", ['>'] = "&gt;", ['"'] = "&quot;"};

    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (entity[c])
            fputs(entity[c], junit);
        else if (c >= 0x20)
            fputc(c, junit);
    }
}

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    uint8_t *data = NULL;
    size_t len = 0;
    long size;

    if (!f || fseek(f, 0, SEEK_END) < 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) < 0 ||
        (size_t)size > MAX_INPUT_SIZE) {
        perror(path);
        goto fail;
    }
    /* Exactly the file's size, so ASan catches a target reading past its input. */
    data = malloc(size ? (size_t)size : 1);
    if (!data)
        goto fail;
    len = fread(data, 1, (size_t)size, f);
    if (len != (size_t)size) {
        fprintf(stderr, "%s: short read\n", path);
        goto fail;
    }
    fclose(f);
    printf("replay: %s\n", path);
    fflush(stdout);
    LLVMFuzzerTestOneInput(data, len);
    free(data);
    if (junit) {
        const char *name = strrchr(path, '/');
        fputs("    <testcase classname=\"", junit);
        xml_attr(target);
        fputs("\" name=\"", junit);
        xml_attr(name ? name + 1 : path);
        fputs("\"/>\n", junit);
    }
    return 0;
fail:
    if (f)
        fclose(f);
    free(data);
    return -1;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs every regular file of dir in name order; returns how many ran, or -1. */
static int run_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char **names = NULL;
    size_t n = 0;
    int ran = 0;

    if (!d) {
        perror(dir);
        return -1;
    }
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char **nn = realloc(names, (n + 1) * sizeof(*names));
        if (!nn)
            break;
        names = nn;
        size_t plen = strlen(dir) + strlen(e->d_name) + 2;
        if (!(names[n] = malloc(plen)))
            break;
        snprintf(names[n++], plen, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof(*names), by_name);
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (ran >= 0 && stat(names[i], &st) == 0 && S_ISREG(st.st_mode))
            ran = run_file(names[i]) < 0 ? -1 : ran + 1;
        free(names[i]);
    }
    free(names);
    return ran;
}

/* Opens FILE.tmp for the report; junit_close() renames it to FILE once every input ran. */
static int junit_open(const char *file, char *tmp, size_t size)
{
    if ((size_t)snprintf(tmp, size, "%s.tmp", file) >= size || !(junit = fopen(tmp, "w"))) {
        perror(file);
        return -1;
    }
    fprintf(junit,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite name=\"");
    xml_attr(target);
    fputs("\">\n", junit);
    return 0;
}

static int junit_close(const char *file, const char *tmp)
{
    fputs("  </testsuite>\n</testsuites>\n", junit);
    if (fclose(junit) != 0 || rename(tmp, file) < 0) {
        perror(file);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *report = NULL;
    char tmp[4096];
    int total = 0, first = 1;

    target = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
    if (argc > 2 && !strcmp(argv[1], "--junit")) {
        report = argv[2];
        first = 3;
        if (junit_open(report, tmp, sizeof(tmp)) < 0)
            return 1;
    }
    for (int i = first; i < argc; i++) {
        struct stat st;
        int ran;
        if (stat(argv[i], &st) < 0) {
            perror(argv[i]);
            return 1;
        }
        ran = S_ISDIR(st.st_mode) ? run_dir(argv[i]) : run_file(argv[i]) < 0 ? -1 : 1;
        if (ran < 0)
            return 1;
        total += ran;
    }
    printf("%d inputs replayed\n", total);
    if (report && junit_close(report, tmp) < 0)
        return 1;
    /* No input at all means a wrong path, not a pass. */
    return total > 0 ? 0 : 1;
}
