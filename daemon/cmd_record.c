/* `vslint record`: one full read of a vCenter (and of the configured arrays) written as an
 * archive a user can look through and send back, which the test harness replays as a vCenter. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/cli.h"
#include "daemon/config.h"
#include "daemon/poll.h"
#include "util/capture.h"
#include "util/err.h"
#include "util/log.h"

/* The capture an interrupting signal must not leave half-written: set while the handlers are. */
static struct vsl_capture *volatile interrupted_capture;

/* SIGINT, SIGTERM, SIGHUP: the archive being written (beside --output) goes, the rows were in
 * memory only, and the process ends by the signal, so that its status says it was
 * interrupted. A signal that comes after the archive was renamed into place (and before the
 * handlers are removed) says so instead: the archive is whole, and the one it replaced is
 * gone. Only async-signal-safe calls: unlink, write, sigaction, raise. */
static void on_interrupt(int sig)
{
    static const char intr[] = "vslint record: interrupted (SIGINT): no archive written\n",
                      term[] = "vslint record: interrupted (SIGTERM): no archive written\n",
                      hup[] = "vslint record: interrupted (SIGHUP): no archive written\n",
                      done[] = "vslint record: interrupted after the archive was written\n";
    const char *m = sig == SIGINT ? intr : sig == SIGTERM ? term : hup;
    size_t n = sig == SIGINT ? sizeof(intr) : sig == SIGTERM ? sizeof(term) : sizeof(hup);
    struct sigaction dfl = {.sa_handler = SIG_DFL};

    if (vsl_capture_written(interrupted_capture)) {
        m = done;
        n = sizeof(done);
    }
    vsl_capture_discard(interrupted_capture);
    if (write(STDERR_FILENO, m, n - 1) < 0) {
        /* nothing left to tell it with */
    }
    sigaction(sig, &dfl, NULL);
    raise(sig);
}

static void catch_interrupts(struct vsl_capture *cap)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    struct sigaction sa = {.sa_handler = cap ? on_interrupt : SIG_DFL};

    interrupted_capture = cap;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
        sigaddset(&sa.sa_mask, sigs[i]);
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
        sigaction(sigs[i], &sa, NULL);
}

/* err without the configured URL it starts with (a client's errors name the URL they went to,
 * "https://vc/sdk: ..." or an array's "https://unity/api/types/...: ..."): the README names the
 * source by its label instead, and an anonymized capture keeps no host. */
static const char *without_url(const char *err, const char *url)
{
    size_t n = strlen(url);

    if (strncmp(err, url, n))
        return err;
    return err[n] == ':' && err[n + 1] == ' ' ? err + n + 2 : err + n;
}

int cmd_record(const struct vsl_args *a)
{
    struct vsl_config *cfg = NULL;
    struct vsl_capture *cap = NULL;
    const struct vsl_vcenter_conf *vc = NULL;
    struct vsl_poll_result res;
    const char **array_urls = NULL; /* owned array of borrowed strings: the arrays' URLs */
    char err[1024], label[16], failed[1200] = "";
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
    array_urls = calloc(vsl_config_nsources(cfg) + 1, sizeof(*array_urls));
    if (!array_urls) {
        log_warnx("out of memory");
        goto out;
    }
    catch_interrupts(cap);
    /* A read that fails partway is what a user most wants to send: the archive is still
     * written, up to and with the failed exchange, and the exit status says it failed. */
    if (vsl_record(vc, cap, "vcenter", &res) < 0) {
        log_warnx("vcenter %s: cannot read it: %s", vc->name, res.error);
        snprintf(failed, sizeof(failed), "vcenter: %s", without_url(res.error, vc->url));
    }
    /* Arrays are not tied to a vCenter in the configuration: every one is read, since any may
     * hold the LUNs behind this vCenter's datastores. */
    for (size_t i = 0; i < vsl_config_nsources(cfg); i++) {
        const struct vsl_vcenter_conf *s = vsl_config_source(cfg, i);
        if (!s->type)
            continue;
        array_urls[arrays] = s->url;
        snprintf(label, sizeof(label), "array%d", ++arrays);
        if (vsl_record(s, cap, label, &res) < 0) {
            log_warnx("array %s (%s): cannot read it: %s", s->name, label, res.error);
            if (!failed[0])
                snprintf(failed, sizeof(failed), "%s: %s", label, without_url(res.error, s->url));
        }
    }
    /* Nothing answered at all (no vCenter there, a refused connection): nothing to send. */
    if (vsl_capture_answered(cap) == 0) {
        log_warnx("nothing answered: no archive written");
        goto out;
    }
    struct vsl_capture_about about = {.vcenter = vc->name,
                                      .url = vc->url,
                                      .version = VSL_VERSION,
                                      .anonymize = a->anonymize,
                                      .failed = failed[0] ? failed : NULL,
                                      .array_urls = array_urls,
                                      .n_arrays = (size_t)arrays};
    if (vsl_capture_write(cap, a->output, &about, err, sizeof(err)) < 0) {
        log_warnx("%s", err);
        goto out;
    }
    catch_interrupts(NULL);
    if (failed[0]) {
        log_warnx("%s: the capture holds the read up to where it failed (%zu requests and "
                  "answers); its README says where",
                  a->output, vsl_capture_count(cap));
        goto out;
    }
    printf("%s: %zu requests and answers of vcenter %s%s%s\n", a->output, vsl_capture_count(cap),
           vc->name, arrays ? " and its arrays" : "", a->anonymize ? ", anonymized" : "");
    status = VSL_EXIT_OK;
out:
    catch_interrupts(NULL);
    vsl_capture_free(cap);
    free(array_urls);
    vsl_config_free(cfg);
    return status;
}
