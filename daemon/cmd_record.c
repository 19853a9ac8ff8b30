/* `vslint record`: one full read of a vCenter (and of the configured arrays) written as an
 * archive a user can look through and send back, which the test harness replays as a vCenter. */
#include <stdio.h>
#include <string.h>

#include "daemon/cli.h"
#include "daemon/config.h"
#include "daemon/poll.h"
#include "util/capture.h"
#include "util/err.h"
#include "util/log.h"

int cmd_record(const struct vsl_args *a)
{
    struct vsl_config *cfg = NULL;
    struct vsl_capture *cap = NULL;
    const struct vsl_vcenter_conf *vc = NULL;
    struct vsl_poll_result res;
    char err[1024], label[16];
    int status = VSL_EXIT_FAIL, arrays = 0;

    log_init(a->verbose, LOG_TO_STDERR);
    if (!a->vcenter || !a->output) {
        log_warnx("record needs --vcenter NAME and --output FILE.tar.gz (see vslint help record)");
        return VSL_EXIT_FAIL;
    }
    if (vsl_cli_load_config(a->config, &cfg, VSL_CONFIG_COMMAND) < 0)
        return VSL_EXIT_FAIL;
    for (size_t i = 0; i < vsl_config_nsources(cfg); i++) {
        const struct vsl_vcenter_conf *s = vsl_config_source(cfg, i);
        if (!s->type && !strcmp(s->name, a->vcenter))
            vc = s;
    }
    if (!vc) {
        log_warnx("no [vcenter %s] in %s", a->vcenter, cfg->path);
        goto out;
    }
    if (vsl_capture_new(0, &cap) < 0) {
        log_warnx("out of memory");
        goto out;
    }
    if (vsl_record(vc, cap, "vcenter", &res) < 0) {
        log_warnx("vcenter %s: cannot read it: %s", vc->name, res.error);
        goto out;
    }
    /* Arrays are not tied to a vCenter in the configuration: every one is read, since any may
     * hold the LUNs behind this vCenter's datastores. */
    for (size_t i = 0; i < vsl_config_nsources(cfg); i++) {
        const struct vsl_vcenter_conf *s = vsl_config_source(cfg, i);
        if (!s->type)
            continue;
        snprintf(label, sizeof(label), "array%d", ++arrays);
        if (vsl_record(s, cap, label, &res) < 0)
            log_warnx("array %s: cannot read it, the capture goes without it: %s", s->name,
                      res.error);
    }
    struct vsl_capture_about about = {
        .vcenter = vc->name, .url = vc->url, .version = VSL_VERSION, .anonymize = a->anonymize};
    if (vsl_capture_write(cap, a->output, &about, err, sizeof(err)) < 0) {
        log_warnx("%s", err);
        goto out;
    }
    printf("%s: %zu requests and answers of vcenter %s%s%s\n", a->output, vsl_capture_count(cap),
           vc->name, arrays ? " and its arrays" : "", a->anonymize ? ", anonymized" : "");
    status = VSL_EXIT_OK;
out:
    vsl_capture_free(cap);
    vsl_config_free(cfg);
    return status;
}
