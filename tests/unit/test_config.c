/* Unit tests for daemon/config: every bad line is reported with file, line and key; good
 * files load with their defaults. Table-driven: {ini text, expected problem or NULL}. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/config.h"
#include "util/err.h"

#define GOOD_VC "[vcenter prod]\nurl = https://vc.example.com/sdk\nuser = u\npassword_env = PW\n"

#define R50 "a reason long enough that a line holding it passes 200 characters, "
#define LONG_REASON R50 R50 R50 R50 R50 R50 "the old limit"
#define TP32                                                                                   \
    "AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:ab:cd:ef:01:23:45:67:89:ab:cd:ef:01:23:45:67:89"

static const struct {
    const char *ini;
    const char *want; /* substring of the error text, NULL when the file must load */
} rows[] = {
    {GOOD_VC, NULL},
    {"[database]\npath = /tmp/x.db\n" GOOD_VC, NULL},
    {"[database]\ncapacity_retention = 30\n" GOOD_VC,
     ":2: [database] capacity_retention: '30' is not a whole number from 31 to 36500"},
    {"[database]\ncapacity_retention = 1y\n" GOOD_VC, "capacity_retention: '1y' is not a whole"},
    {"[database]\nround_window = 0\npoll_retention = 1\nfindings_retention = 36500\n" GOOD_VC,
     NULL},
    {"[database]\nround_window = 86401\n" GOOD_VC,
     ":2: [database] round_window: '86401' is not a whole number from 0 to 86400"},
    {"[database]\npoll_retention = 0\n" GOOD_VC,
     ":2: [database] poll_retention: '0' is not a whole number from 1 to 36500"},
    {"[database]\nfindings_retention = -1\n" GOOD_VC,
     ":2: [database] findings_retention: '-1' is not a whole number from 1 to 36500"},
    {GOOD_VC "pasword = x\n", ":5: [vcenter prod] pasword: unknown key"},
    {GOOD_VC "insecure = maybe\n", ":5: [vcenter prod] insecure: 'maybe' is not true or false"},
    {GOOD_VC "interval = 5\n", ":5: [vcenter prod] interval: '5' is not a whole number from 10"},
    {GOOD_VC "interval = 60s\n", "interval: '60s' is not a whole number"},
    {"[vcenter prod]\nurl = vc.example.com\nuser = u\npassword_env = PW\n",
     ":2: [vcenter prod] url: 'vc.example.com' is not an http:// or https:// URL"},
    {"[vcenter prod]\nurl = https://vc/sdk\npassword_env = PW\n", "[vcenter prod] user: missing"},
    {"[vcenter prod]\nurl = https://vc/sdk\nuser = u\n", "password_file: missing"},
    {"[vcenter prod]\nurl = https://vc/sdk\nuser = u\npassword_env = PW\npassword_file = /x\n",
     "not both"},
    {GOOD_VC "ca_file = /dev/null\ninsecure = true\n", "contradict"},
    {"[database]\npath = /tmp/x.db\n", "no [vcenter NAME] section"},
    {"[databse]\npath = x\n" GOOD_VC, ":2: [databse]: unknown section"},
    {GOOD_VC "[vcenter prod]\nuser = v\n", "vCenter 'prod' is already defined on line 1"},
    {"[vcenter bad name!]\nurl = https://x/sdk\n", "[vcenter bad name!]: a vCenter section"},
    {GOOD_VC "this line has no equals sign\n", ":5: not a 'key = value'"},
    {GOOD_VC "password_env = not a name\n", "is not an environment variable name"},
    {GOOD_VC "[check snapshots]\nenabled = false\n", NULL},
    {GOOD_VC "[check snapshots]\nseverity = critical\n", NULL},
    {GOOD_VC "[check snapshot]\nenabled = false\n", ":5: [check snapshot]: no check 'snapshot'"},
    {GOOD_VC "[check snapshots]\nseverity = high\n",
     ":6: [check snapshots] severity: 'high' is not info, warning or critical"},
    {GOOD_VC "[check snapshots]\nenable = false\n", "enable: unknown key (known keys: enabled"},
    {GOOD_VC "[check datastore-free-space]\nwarn_free_pct = 150\n",
     "warn_free_pct: '150' is not a number from"},
    {GOOD_VC "[check datastore-free-space]\nwarn_free_pct = 25\n", NULL},
    {GOOD_VC "[waiver]\ncheck = snapshots\nobject = vm-*\nreason = r\nexpires = 2027-01-31\n",
     NULL},
    {GOOD_VC "[waiver]\ncheck = snapshots\nobject = vm-*\nreason = r\n",
     ":5: [waiver] expires: missing"},
    {GOOD_VC "[waiver]\ncheck = snapshots\nobject = vm-*\nreason = r\nexpires = 2027-02-30\n",
     ":9: [waiver] expires: '2027-02-30' is not a date"},
    {GOOD_VC "[waiver]\ncheck = nosuch\nobject = x\nreason = r\nexpires = 2027-01-01\n",
     ":6: [waiver] check: no check 'nosuch'"},
    {GOOD_VC "[waiver]\ncheck = snapshots\nobject = a\nreason = r\nexpires = 2027-01-01\n"
             "[waiver]\ncheck = snapshots\nreason = r\nexpires = 2027-01-01\n",
     ":10: [waiver] object: missing"},
    /* Long values are read whole (inih's default line is 200 bytes). */
    {GOOD_VC "[waiver]\ncheck = snapshots\nobject = vm-*\nreason = " LONG_REASON
             "\nexpires = 2027-01-31\n",
     NULL},
    {GOOD_VC "ca_file = /nonexistent/ca.pem\n",
     ":5: [vcenter prod] ca_file: cannot read /nonexistent/ca.pem: No such file"},
    {"[server]\nlisten = 1.2.3:80\n" GOOD_VC, ":2: [server] listen: '1.2.3:80' is not ADDRESS:PORT"},
    {"[server]\nlisten = localhost:8080\n" GOOD_VC, NULL},
    {"[server]\nlisten = ::1:8080\n" GOOD_VC, "listen: '::1:8080' is not ADDRESS:PORT"},
    {"[server]\nlisten = [::1]:8080\n" GOOD_VC, NULL},
    {GOOD_VC "thumbprint = SHA256:" TP32 "\n", NULL},
    {GOOD_VC "thumbprint = " TP32 "\n", NULL},
    {GOOD_VC "thumbprint = SHA256:" TP32 ":00\n", "is not a SHA-256 fingerprint"},
    {GOOD_VC "thumbprint = AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB\n",
     "is a SHA-1 thumbprint"},
    {GOOD_VC "thumbprint = " TP32 "\ninsecure = true\n", "set only one of them"},
    {GOOD_VC "a1 = 1\na2 = 1\na3 = 1\na4 = 1\na5 = 1\na6 = 1\na7 = 1\na8 = 1\na9 = 1\n"
             "b1 = 1\nb2 = 1\nb3 = 1\nb4 = 1\nb5 = 1\nb6 = 1\nb7 = 1\nb8 = 1\nb9 = 1\n"
             "c1 = 1\nc2 = 1\nc3 = 1\nc4 = 1\nc5 = 1\n",
     ": and 3 more problems\n"},
};

static char *write_tmp_len(const char *text, size_t len)
{
    char *path = strdup("/tmp/vslint-conf-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, len), (ssize_t)len);
    close(fd);
    return path;
}

static char *write_tmp(const char *text)
{
    return write_tmp_len(text, strlen(text));
}

static void test_table(void **state)
{
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char *path = write_tmp(rows[i].ini);
        struct vsl_config *cfg = NULL;
        struct vsl_buf errors;
        vsl_buf_init(&errors, 65536);
        int r = vsl_config_load(path, &cfg, &errors);
        if (!rows[i].want) {
            if (r != 0)
                fail_msg("row %zu: unexpected errors: %s", i, errors.data);
            assert_non_null(cfg);
        } else {
            if (r != -VSL_ECONFIG || cfg)
                fail_msg("row %zu: loaded although it should fail with '%s'", i, rows[i].want);
            if (!errors.data || !strstr(errors.data, rows[i].want))
                fail_msg("row %zu: want '%s' in '%s'", i, rows[i].want,
                         errors.data ? errors.data : "");
            assert_non_null(strstr(errors.data, path)); /* the file is named */
        }
        vsl_config_free(cfg);
        vsl_buf_free(&errors);
        unlink(path);
        free(path);
    }
}

static void test_defaults_and_values(void **state)
{
    char *path = write_tmp("[database]\npath = /tmp/v.db\n" GOOD_VC "insecure = yes\n"
                           "interval = 120\n\n[vcenter lab-2]\nurl = http://127.0.0.1:1/sdk\n"
                           "user = admin\npassword_file = /etc/pw\n");
    struct vsl_config *cfg = NULL;
    struct vsl_buf errors;
    vsl_buf_init(&errors, 65536);
    assert_int_equal(vsl_config_load(path, &cfg, &errors), 0);
    assert_string_equal(cfg->db_path, "/tmp/v.db");
    assert_int_equal(cfg->capacity_retention_days, 400);
    assert_int_equal(cfg->round_window_s, 300);
    assert_int_equal(cfg->poll_retention_days, 400);
    assert_int_equal(cfg->findings_retention_days, 400);
    assert_int_equal(cfg->n_vcenters, 2);
    assert_string_equal(cfg->vcenters[0].name, "prod");
    assert_int_equal(cfg->vcenters[0].insecure, 1);
    assert_int_equal(cfg->vcenters[0].interval_s, 120);
    assert_string_equal(cfg->vcenters[1].name, "lab-2");
    assert_int_equal(cfg->vcenters[1].insecure, 0); /* verification is on unless asked */
    assert_int_equal(cfg->vcenters[1].interval_s, 300);
    assert_int_equal(cfg->vcenters[1].max_objects, 500);
    vsl_config_free(cfg);
    vsl_buf_free(&errors);
    unlink(path);
    free(path);
}

static void test_checks_and_waivers(void **state)
{
    char *path = write_tmp(GOOD_VC "[check snapshots]\nenabled = no\n[check thin-overcommit]\n"
                                   "severity = critical\n[waiver]\ncheck = snapshots\n"
                                   "object = vm-*\nreason = backup window\n"
                                   "expires = 2027-01-31\n[waiver]\ncheck = datastore-size\n"
                                   "object = ds-1\nreason = r\nexpires = 2026-12-01\n"
                                   "vcenter = prod\n");
    struct vsl_config *cfg = NULL;
    struct vsl_buf errors;
    vsl_buf_init(&errors, 65536);
    if (vsl_config_load(path, &cfg, &errors) < 0)
        fail_msg("%s", errors.data);
    for (size_t i = 0; i < chk_registry_len; i++) {
        const char *id = chk_registry[i]->id;
        assert_int_equal(cfg->checks.settings[i].enabled, strcmp(id, "snapshots") != 0);
        assert_int_equal(cfg->checks.settings[i].severity_override,
                         strcmp(id, "thin-overcommit") ? -1 : SEV_CRITICAL);
    }
    assert_int_equal(cfg->checks.n_waivers, 2);
    assert_string_equal(cfg->checks.waivers[0].object, "vm-*");
    assert_string_equal(cfg->checks.waivers[0].reason, "backup window");
    assert_int_equal(cfg->checks.waivers[0].expires, 1801439999); /* 2027-01-31T23:59:59Z */
    assert_int_equal(cfg->checks.waivers[0].line, 9);
    assert_string_equal(cfg->checks.waivers[1].vcenter, "prod");
    vsl_config_free(cfg);
    vsl_buf_free(&errors);
    unlink(path);
    free(path);
}

static void test_password_sources(void **state)
{
    struct vsl_vcenter_conf vc = {.name = "x", .password_env = "VSLINT_TEST_PW"};
    char err[256], *pw = NULL;
    unsetenv("VSLINT_TEST_PW");
    assert_int_equal(vsl_config_password(&vc, &pw, err, sizeof(err)), -VSL_ECONFIG);
    assert_non_null(strstr(err, "VSLINT_TEST_PW"));
    setenv("VSLINT_TEST_PW", "p&ss<word>", 1);
    assert_int_equal(vsl_config_password(&vc, &pw, err, sizeof(err)), 0);
    assert_string_equal(pw, "p&ss<word>");
    vsl_config_wipe(pw);

    char *path = write_tmp("");
    struct vsl_vcenter_conf vf = {.name = "y", .password_file = path};
    assert_int_equal(vsl_config_password(&vf, &pw, err, sizeof(err)), -VSL_ECONFIG);
    assert_non_null(strstr(err, "is empty"));
    unlink(path);
    assert_true(vsl_config_password(&vf, &pw, err, sizeof(err)) < 0);
    assert_non_null(strstr(err, "cannot read password_file"));
    free(path);
}

/* A NUL byte cannot be written in a table row's string: the value would silently end there. */
static void test_nul_byte(void **state)
{
    static const char ini[] = GOOD_VC "user = a\0b\n";
    char *path = write_tmp_len(ini, sizeof(ini) - 1);
    struct vsl_config *cfg = NULL;
    struct vsl_buf errors;

    vsl_buf_init(&errors, 65536);
    assert_int_equal(vsl_config_load(path, &cfg, &errors), -VSL_ECONFIG);
    assert_null(cfg);
    assert_non_null(strstr(errors.data, ":5: a NUL byte in the line"));
    vsl_buf_free(&errors);
    unlink(path);
    free(path);
}

/* Secret files others can read: a warning, or with strict_permissions an error. */
static void test_secret_permissions(void **state)
{
    char *pw = write_tmp("secret\n");
    char ini[1024];
    struct vsl_config *cfg = NULL;
    struct vsl_buf errors;

    chmod(pw, 0644);
    snprintf(ini, sizeof(ini),
             "[vcenter prod]\nurl = https://vc/sdk\nuser = u\npassword_file = %s\n", pw);
    char *path = write_tmp(ini);
    vsl_buf_init(&errors, 65536);
    assert_int_equal(vsl_config_load(path, &cfg, &errors), 0);
    assert_non_null(cfg->warnings);
    assert_non_null(strstr(cfg->warnings, ":4: [vcenter prod] password_file: warning: "));
    assert_non_null(strstr(cfg->warnings, "readable by everyone (mode 0644)"));
    vsl_config_free(cfg);
    unlink(path);
    free(path);

    snprintf(ini, sizeof(ini),
             "[vcenter prod]\nurl = https://vc/sdk\nuser = u\npassword_file = %s\n"
             "[server]\nstrict_permissions = true\n", pw);
    path = write_tmp(ini);
    assert_int_equal(vsl_config_load(path, &cfg, &errors), -VSL_ECONFIG);
    assert_non_null(strstr(errors.data, ":4: [vcenter prod] password_file: "));
    assert_non_null(strstr(errors.data, "strict_permissions is on"));
    unlink(path);
    free(path);

    chmod(pw, 0600);
    path = write_tmp(ini);
    assert_int_equal(vsl_config_load(path, &cfg, &errors), 0);
    assert_null(cfg->warnings);
    vsl_config_free(cfg);
    vsl_buf_free(&errors);
    unlink(path);
    free(path);
    unlink(pw);
    free(pw);
}

/* Secret files are judged for [server] service_user (here the system account daemon, uid and
 * gid 1), whoever runs the command: root:daemon 0640 is right for it and strict_permissions does
 * not mind; root:root 0600 is a file it cannot read (a problem for config-check only); a file
 * everyone reads is a warning, an error with strict_permissions for serve and config-check only.
 * Needs root to give the file away; the service account must exist (Debian's base passwd). */
static const struct {
    uid_t uid;
    gid_t gid;
    mode_t mode;
    enum vsl_config_use use;
    int strict;
    const char *user;  /* service_user */
    const char *error; /* substring of the problems, or NULL: the file loads */
    const char *warn;  /* substring of the warnings, or NULL: none */
} perm_rows[] = {
    {0, 1, 0640, VSL_CONFIG_CHECK, 1, "daemon", NULL, NULL},
    {0, 1, 0640, VSL_CONFIG_SERVE, 1, "daemon", NULL, NULL},
    {0, 1, 0640, VSL_CONFIG_COMMAND, 1, "daemon", NULL, NULL},
    {1, 0, 0600, VSL_CONFIG_CHECK, 1, "daemon", NULL, NULL},
    {0, 0, 0600, VSL_CONFIG_COMMAND, 0, "daemon", NULL,
     "cannot be read by daemon, the account vslint serve runs as (mode 0600): chown root:daemon "},
    {0, 0, 0600, VSL_CONFIG_CHECK, 0, "daemon",
     ":4: [vcenter prod] password_file: FILE cannot be read by daemon", NULL},
    {0, 0, 0640, VSL_CONFIG_COMMAND, 0, "daemon", NULL, "cannot be read by daemon"},
    {0, 1, 0644, VSL_CONFIG_COMMAND, 0, "daemon", NULL,
     ":4: [vcenter prod] password_file: warning: FILE is readable by everyone (mode 0644): chown "
     "root:daemon FILE && chmod 0640 FILE"},
    {0, 1, 0644, VSL_CONFIG_COMMAND, 1, "daemon", NULL, "is readable by everyone (mode 0644)"},
    {0, 1, 0644, VSL_CONFIG_SERVE, 1, "daemon", "strict_permissions is on", NULL},
    {0, 1, 0644, VSL_CONFIG_CHECK, 1, "daemon", "strict_permissions is on", NULL},
    {1, 0, 0640, VSL_CONFIG_COMMAND, 0, "daemon", NULL,
     "is readable by its group, which daemon is not in (mode 0640)"},
    /* No such account: judged for root, who runs the test and reads everything. */
    {0, 0, 0600, VSL_CONFIG_CHECK, 1, "no-such-vslint-user", NULL, NULL},
    {0, 0, 0640, VSL_CONFIG_COMMAND, 0, "no-such-vslint-user", NULL, NULL},
};

/* pattern with each FILE replaced by path, into out. */
static void expand_file(char *out, size_t size, const char *pattern, const char *path)
{
    size_t n = 0;

    for (const char *p = pattern; *p && n + 1 < size;) {
        if (!strncmp(p, "FILE", 4)) {
            n += (size_t)snprintf(out + n, size - n, "%s", path);
            p += 4;
        } else {
            out[n++] = *p++;
        }
    }
    out[n < size ? n : size - 1] = '\0';
}

static void test_secrets_judged_for_the_service_user(void **state)
{
    (void)state;
    if (geteuid() != 0)
        skip();
    for (size_t i = 0; i < sizeof(perm_rows) / sizeof(perm_rows[0]); i++) {
        char *pw = write_tmp("secret\n"), ini[1024], want[1024];
        struct vsl_config *cfg = NULL;
        struct vsl_buf errors;
        assert_int_equal(chown(pw, perm_rows[i].uid, perm_rows[i].gid), 0);
        assert_int_equal(chmod(pw, perm_rows[i].mode), 0);
        snprintf(ini, sizeof(ini),
                 "[vcenter prod]\nurl = https://vc/sdk\nuser = u\npassword_file = %s\n"
                 "[server]\nservice_user = %s\nstrict_permissions = %s\n",
                 pw, perm_rows[i].user, perm_rows[i].strict ? "true" : "false");
        char *path = write_tmp(ini);
        vsl_buf_init(&errors, 65536);
        int r = vsl_config_load_for(path, perm_rows[i].use, &cfg, &errors);
        const char *w = perm_rows[i].error ? perm_rows[i].error : perm_rows[i].warn;
        if (w)
            expand_file(want, sizeof(want), w, pw);
        if (perm_rows[i].error) {
            if (r != -VSL_ECONFIG || !strstr(errors.data ? errors.data : "", want))
                fail_msg("row %zu: want the problem '%s', got %d: %s", i, want, r,
                         errors.data ? errors.data : "");
        } else {
            if (r != 0)
                fail_msg("row %zu: want it loaded, got: %s", i, errors.data);
            const char *got = cfg->warnings ? cfg->warnings : "";
            if (perm_rows[i].warn ? !strstr(got, want) : *got != '\0')
                fail_msg("row %zu: want warning '%s', got '%s'", i,
                         perm_rows[i].warn ? want : "", got);
        }
        vsl_config_free(cfg);
        vsl_buf_free(&errors);
        unlink(path);
        free(path);
        unlink(pw);
        free(pw);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_defaults_and_values),
        cmocka_unit_test(test_checks_and_waivers),
        cmocka_unit_test(test_password_sources),
        cmocka_unit_test(test_nul_byte),
        cmocka_unit_test(test_secret_permissions),
        cmocka_unit_test(test_secrets_judged_for_the_service_user),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
