/* A main() for the fuzz targets without libFuzzer: runs LLVMFuzzerTestOneInput over every file
 * named on the command line or found in a named directory, so every build replays the seed
 * corpora and the saved crashes (meson suite "unit"). A target that crashes fails the test. */
#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_INPUT_SIZE (16u << 20)

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
    LLVMFuzzerTestOneInput(data, len);
    free(data);
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

int main(int argc, char **argv)
{
    int total = 0;

    for (int i = 1; i < argc; i++) {
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
    /* No input at all means a wrong path, not a pass. */
    return total > 0 ? 0 : 1;
}
