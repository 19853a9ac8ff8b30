/* Writes vslint.conf(5) in scdoc: the hand-written head, then every section and key from the
 * option table (vsl_config_doc) and every check's parameters (the registry), then the tail. */
#include <stdio.h>
#include <string.h>

#include "checks/check.h"
#include "daemon/config.h"

/* Text as scdoc reads it: *, _ and \ would start emphasis or an escape. */
static void text(const char *s)
{
    for (; *s; s++) {
        if (*s == '*' || *s == '_' || *s == '\\')
            putchar('\\');
        putchar(*s);
    }
}

static int copy(const char *path)
{
    char buf[4096];
    size_t n;
    FILE *f = fopen(path, "r");

    if (!f) {
        perror(path);
        return -1;
    }
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
        fwrite(buf, 1, n, stdout);
    fclose(f);
    return 0;
}

static void key(const char *name, const char *syntax, const char *dflt, const char *help)
{
    putchar('*');
    text(name);
    printf("* = _");
    text(syntax);
    putchar('_');
    if (dflt) {
        printf(" (default: ");
        text(dflt);
        putchar(')');
    }
    printf("\n\t");
    text(help);
    printf("\n\n");
}

int main(int argc, char **argv)
{
    struct vsl_config_doc d;
    const char *section = "";
    char syntax[96], dflt[64];

    if (argc != 3) {
        fprintf(stderr, "usage: conf-keys HEAD.scd TAIL.scd\n");
        return 2;
    }
    if (copy(argv[1]) < 0)
        return 1;
    for (size_t i = 0; vsl_config_doc(i, &d) == 0; i++) {
        if (strcmp(section, d.section)) {
            section = d.section;
            printf("## [");
            text(section);
            printf("]\n\n");
        }
        key(d.key, d.syntax, d.dflt, d.help);
    }
    printf("## The thresholds of each check\n\n"
           "Each [check ID] section also takes the thresholds of its check (*vslint checks* "
           "lists them too):\n\n");
    for (size_t i = 0; i < chk_registry_len; i++) {
        const struct check *c = chk_registry[i];
        if (!c->params || !c->params[0].name)
            continue;
        printf("## [check ");
        text(c->id);
        printf("]\n\n");
        for (const struct chk_param *p = c->params; p->name; p++) {
            snprintf(syntax, sizeof(syntax), "%g-%g%s%s", p->min, p->max, p->unit ? " " : "",
                     p->unit ? p->unit : "");
            snprintf(dflt, sizeof(dflt), "%g", p->dflt);
            key(p->name, syntax, dflt, p->help ? p->help : "");
        }
    }
    return copy(argv[2]) < 0 ? 1 : 0;
}
