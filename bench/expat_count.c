/* The expat anchor of the scale benchmark: a parse-only pass over captured SOAP answers, with
 * callbacks that only count, to say what merely parsing the bytes `vslint collect` reads costs.
 *
 * Usage: expat-count MANIFEST, where MANIFEST names one captured answer file a line (as
 * bench/bench_scale.py writes them). Each answer is parsed as its own document by one
 * namespace-aware parser (reset between answers), fed in 64 KiB pieces as a transfer would hand
 * them over. Prints one line of figures: answers, bytes, elements, character-data bytes, the
 * wall and CPU seconds of the whole pass (reading the files included: they sit in the page cache
 * right after the capture) and the wall seconds spent inside XML_Parse alone. Exits non-zero,
 * naming the file and line, when an answer is not well-formed. */
#include <errno.h>
#include <expat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define CHUNK (64 * 1024)

struct counts {
    long long elements;
    long long chars;
    long long attrs;
};

static void on_start(void *ud, const XML_Char *name, const XML_Char **atts)
{
    struct counts *c = ud;
    (void)name;
    c->elements++;
    for (; atts[0]; atts += 2)
        c->attrs++;
}

static void on_end(void *ud, const XML_Char *name)
{
    (void)ud;
    (void)name;
}

static void on_chars(void *ud, const XML_Char *s, int len)
{
    struct counts *c = ud;
    (void)s;
    c->chars += len;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* Parses one answer file with p (reset first); 0 or -1 with the error on stderr. */
static int parse_file(XML_Parser p, const char *path, struct counts *c, char *buf,
                      long long *bytes, double *in_parse)
{
    int rc = -1;
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "expat-count: %s: %s\n", path, strerror(errno));
        return -1;
    }
    XML_ParserReset(p, NULL);
    XML_SetUserData(p, c);
    XML_SetElementHandler(p, on_start, on_end);
    XML_SetCharacterDataHandler(p, on_chars);
    for (;;) {
        size_t n = fread(buf, 1, CHUNK, f);
        if (n < CHUNK && ferror(f)) {
            fprintf(stderr, "expat-count: %s: read error\n", path);
            goto out;
        }
        int last = n < CHUNK;
        double t0 = now();
        enum XML_Status st = XML_Parse(p, buf, (int)n, last);
        *in_parse += now() - t0;
        *bytes += (long long)n;
        if (st != XML_STATUS_OK) {
            fprintf(stderr, "expat-count: %s: line %lu: %s\n", path,
                    (unsigned long)XML_GetCurrentLineNumber(p),
                    XML_ErrorString(XML_GetErrorCode(p)));
            goto out;
        }
        if (last)
            break;
    }
    rc = 0;
out:
    fclose(f);
    return rc;
}

int main(int argc, char **argv)
{
    int rc = 1;
    FILE *man = NULL;
    char *buf = NULL;                                /* owned: the read buffer */
    XML_Parser p = XML_ParserCreateNS("UTF-8", ' '); /* owned */
    struct counts c = {0};
    long long answers = 0, bytes = 0;
    double in_parse = 0;
    char line[4096];

    if (argc != 2) {
        fprintf(stderr, "usage: expat-count MANIFEST (one answer file a line)\n");
        goto out;
    }
    buf = malloc(CHUNK);
    if (!p || !buf) {
        fprintf(stderr, "expat-count: out of memory\n");
        goto out;
    }
    man = fopen(argv[1], "r");
    if (!man) {
        fprintf(stderr, "expat-count: %s: %s\n", argv[1], strerror(errno));
        goto out;
    }
    double w0 = now(), c0 = cpu_seconds();
    while (fgets(line, sizeof(line), man)) {
        size_t len = strcspn(line, "\n");
        if (line[len] != '\n' && !feof(man)) {
            fprintf(stderr, "expat-count: %s: line %lld is longer than %zu bytes\n", argv[1],
                    answers + 1, sizeof(line) - 1);
            goto out;
        }
        line[len] = '\0';
        if (!len)
            continue;
        if (parse_file(p, line, &c, buf, &bytes, &in_parse) < 0)
            goto out;
        answers++;
    }
    printf("answers %lld bytes %lld elements %lld attributes %lld chars %lld wall %.3f cpu %.3f "
           "parse %.3f\n",
           answers, bytes, c.elements, c.attrs, c.chars, now() - w0, cpu_seconds() - c0, in_parse);
    rc = 0;
out:
    if (man)
        fclose(man);
    free(buf);
    if (p)
        XML_ParserFree(p);
    return rc;
}
