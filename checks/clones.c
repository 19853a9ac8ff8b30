/* Delta disks and the sources of linked clones (see checks/clones.h): read from the disks'
 * backing.parent, the one level of a disk's parent chain vslint reads. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "checks/check.h"
#include "checks/clones.h"

int chk_disk_is_delta(const struct est_disk *d)
{
    const char *f = d->file_name, *dash;
    size_t n;

    if (d->parent)
        return 1;
    if (!f || (n = strlen(f)) < 12 || strcmp(f + n - 5, ".vmdk") != 0)
        return 0;
    /* "...-000001.vmdk": a dash, six digits, the extension. */
    dash = f + n - 12;
    if (*dash != '-')
        return 0;
    for (const char *c = dash + 1; c < f + n - 5; c++)
        if (*c < '0' || *c > '9')
            return 0;
    /* Unless the whole name is its folder's: the first disk of a VM named "web-000001" is
     * "web-000001/web-000001.vmdk", a base disk (its deltas are "web-000001-000001.vmdk"). */
    size_t dir = chk_path_dir_len(f);
    if (dir >= 2 && f[dir - 1] == '/') {
        const char *folder = f + dir - 1;
        size_t stem = n - dir - 5;
        while (folder > f && folder[-1] != '/' && folder[-1] != ' ' && folder[-1] != ']')
            folder--;
        if ((size_t)(f + dir - 1 - folder) == stem && !strncmp(folder, f + dir, stem))
            return 0;
    }
    return 1;
}

size_t chk_path_dir_len(const char *path)
{
    const char *slash, *bracket;

    if (!path)
        return 0;
    if ((slash = strrchr(path, '/')))
        return (size_t)(slash - path) + 1;
    bracket = strchr(path, ']');
    return bracket ? (size_t)(bracket - path) + 1 + (bracket[1] == ' ') : 0;
}

static int ref_cmp(const void *a, const void *b)
{
    const struct chk_parent_ref *x = a, *y = b;
    int c = strcmp(x->file, y->file);
    return c ? c : (x->vm > y->vm) - (x->vm < y->vm);
}

int chk_parents_build(const struct estate *e, struct chk_parents *p)
{
    size_t n = 0;

    p->refs = NULL;
    p->n = 0;
    for (size_t v = 0; v < e->n_vms; v++)
        for (size_t k = 0; k < e->vms[v].n_disks; k++)
            n += e->vms[v].disks[k].parent != NULL;
    if (n == 0)
        return 0;
    if (!(p->refs = calloc(n, sizeof(*p->refs))))
        return -ENOMEM;
    for (size_t v = 0; v < e->n_vms; v++)
        for (size_t k = 0; k < e->vms[v].n_disks; k++)
            if (e->vms[v].disks[k].parent)
                p->refs[p->n++] = (struct chk_parent_ref){e->vms[v].disks[k].parent, v};
    qsort(p->refs, p->n, sizeof(*p->refs), ref_cmp);
    return 0;
}

void chk_parents_free(struct chk_parents *p)
{
    if (!p)
        return;
    free(p->refs);
    p->refs = NULL;
    p->n = 0;
}

int chk_parents_children(const struct chk_parents *p, const struct estate *e, const char *file,
                         size_t vm, json_t *names)
{
    size_t lo = 0, hi = p->n;
    int n = 0;

    if (!file)
        return 0;
    /* The first ref whose file is not below file. */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(p->refs[mid].file, file) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < p->n && !strcmp(p->refs[i].file, file); i++) {
        if (p->refs[i].vm == vm)
            continue;
        n++;
        if (names && chk_append_unique(names, e->vms[p->refs[i].vm].name) < 0)
            return -ENOMEM;
    }
    return n;
}

static int own_parent(const struct est_disk *d)
{
    size_t n = chk_path_dir_len(d->file_name);
    return d->parent && n > 0 && n == chk_path_dir_len(d->parent) &&
           !strncmp(d->file_name, d->parent, n);
}

int chk_disk_own_delta(const struct est_disk *d)
{
    return own_parent(d);
}

int chk_vm_clone_children(const struct chk_parents *p, const struct estate *e, size_t v,
                          json_t *names)
{
    const struct est_vm *vm = &e->vms[v];
    int total = 0;

    for (size_t k = 0; k < vm->n_disks; k++) {
        const struct est_disk *d = &vm->disks[k];
        int a = chk_parents_children(p, e, d->file_name, v, names), b = 0;
        /* The parent counts when it is v's own (in the same folder as the delta): a linked
         * clone's parent is its source's disk, which the clone's siblings share without the
         * clone being anyone's source. */
        if (own_parent(d))
            b = chk_parents_children(p, e, d->parent, v, names);
        if (a < 0 || b < 0)
            return -ENOMEM;
        total += a + b;
    }
    return total;
}

int chk_each_vm_parents(struct chk_ctx *ctx, const struct estate *e, chk_vm_parents_fn *fn)
{
    struct chk_parents p;
    int r = chk_parents_build(e, &p);

    for (size_t v = 0; r == 0 && v < e->n_vms; v++)
        r = fn(ctx, e, &p, v);
    chk_parents_free(&p);
    return r;
}
