/* Fuzz target for the configuration loader: the input is written to an in-memory file and read
 * with vsl_config_load(), which must either accept it or name every problem on its own line. */
#define _GNU_SOURCE /* memfd_create */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "daemon/config.h"
#include "util/err.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile size_t sink_hole;

static void s(const char *p)
{
    if (p)
        sink_hole += strlen(p);
}

static void need(int ok)
{
    if (!ok)
        abort(); /* a promise of daemon/config.h is broken */
}

/* One file for the whole run: a memfd, reopened by its /proc name for each input. */
static int file_fd = -1;
static char file_path[64];

static int write_input(const uint8_t *data, size_t size)
{
    if (file_fd < 0) {
        file_fd = memfd_create("vslint-fuzz.conf", MFD_CLOEXEC);
        if (file_fd < 0) {
            /* No memfd (old kernel, seccomp): a file of our own under /tmp. */
            snprintf(file_path, sizeof(file_path), "/tmp/vslint-fuzz-config-%ld.conf",
                     (long)getpid());
            file_fd = open(file_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
            if (file_fd < 0)
                return -1;
        } else {
            snprintf(file_path, sizeof(file_path), "/proc/self/fd/%d", file_fd);
        }
    }
    if (ftruncate(file_fd, 0) < 0)
        return -1;
    for (size_t done = 0; done < size;) {
        ssize_t w = pwrite(file_fd, data + done, size - done, (off_t)done);
        if (w <= 0)
            return -1;
        done += (size_t)w;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct vsl_config *cfg = NULL;
    struct vsl_buf errors;
    size_t plen;

    if (write_input(data, size) < 0)
        return 0;
    plen = strlen(file_path);
    vsl_buf_init(&errors, 1 << 20);
    int r = vsl_config_load(file_path, &cfg, &errors);
    if (r < 0) {
        need(cfg == NULL);
        /* Every problem is one line naming the file: "FILE:LINE: ..." or "FILE: ...". The
         * buffer's hard limit may cut the last line short, so only whole lines are checked. */
        need(r == -ENOMEM || (errors.data && errors.len > 0));
        for (const char *p = errors.data; p && *p;) {
            const char *nl = strchr(p, '\n');
            if (!nl)
                break;
            need(!strncmp(p, file_path, plen) && (p[plen] == ':'));
            p = nl + 1;
        }
    } else {
        need(cfg && cfg->db_path && cfg->server.listen && cfg->n_vcenters > 0);
        need(cfg->server.max_connections > 0 && cfg->server.timeout_s > 0);
        need(!cfg->server.tls_cert == !cfg->server.tls_key);
        need(!cfg->server.auth_all || cfg->server.token_file);
        s(cfg->path), s(cfg->server.token_file), s(cfg->server.tls_cert), s(cfg->server.tls_key);
        for (size_t i = 0; i < cfg->n_vcenters; i++) {
            const struct vsl_vcenter_conf *v = &cfg->vcenters[i];
            need(v->name && v->url && v->user);
            need(!v->password_file != !v->password_env);
            need(v->interval_s >= 10 && v->timeout_s >= 1 && v->max_objects >= 1);
            s(v->name), s(v->url), s(v->user), s(v->password_file), s(v->ca_file);
            if (v->password_env) {
                /* Reads only the environment; password_file would open any path. */
                char *pw = NULL, err[256];
                if (vsl_config_password(v, &pw, err, sizeof(err)) == 0)
                    vsl_config_wipe(pw);
                else
                    s(err);
            }
        }
        for (size_t i = 0; i < cfg->checks.n_waivers; i++) {
            const struct chk_waiver *w = &cfg->checks.waivers[i];
            need(w->check && w->object && w->reason && w->expires_text);
            s(w->vcenter);
        }
    }
    vsl_config_free(cfg);
    vsl_buf_free(&errors);
    return 0;
}
