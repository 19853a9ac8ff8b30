/* Unit tests for rules/: the sandbox refuses everything but one read of the public views (each
 * refusal with its reason), stops a query at its time and row limits, and leaves the database
 * file as it was. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "db/db.h"
#include "rules/rule.h"
#include "rules/sandbox.h"
#include "rules/views.h"
#include "testlib.h"

/* A database with the current schema (db_open) and nothing polled, opened in the sandbox. */
struct fx {
    struct tl_dbfile *file;
    struct rules_db *rdb;
};

static int setup(void **state)
{
    struct fx *fx = calloc(1, sizeof(*fx));
    char err[256] = "";
    void *file = NULL;

    assert_non_null(fx);
    assert_int_equal(tl_db_setup_open(&file), 0);
    fx->file = file;
    assert_int_equal(rules_db_open(fx->file->path, NULL, &fx->rdb, err, sizeof(err)), 0);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    struct fx *fx = *state;
    void *file = fx->file;

    rules_db_close(fx->rdb);
    tl_db_teardown(&file);
    free(fx);
    return 0;
}

static int count_row(void *ctx, sqlite3_stmt *st)
{
    (void)st;
    (*(long *)ctx)++;
    return 0;
}

/* Prepares sql; returns rules_db_prepare()'s answer, the message in err. */
static int prepare(struct fx *fx, const char *sql, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    int r = rules_db_prepare(fx->rdb, sql, &st, NULL, err, errlen);

    sqlite3_finalize(st);
    return r;
}

static const struct refusal {
    const char *sql;
    int want;         /* rules_db_prepare's answer */
    const char *says; /* in the message */
} refusals[] = {
    {"SELECT 1; SELECT 2", -EPERM, "second statement"},
    {"SELECT 1 FROM vsl_vms; DELETE FROM vms", -EPERM, "second statement"},
    {"ATTACH DATABASE '/tmp/vsl-rules-attach.db' AS x", -EPERM, "ATTACH is not allowed"},
    {"DETACH DATABASE temp", -EPERM, "DETACH is not allowed"},
    {"PRAGMA user_version", -EPERM, "PRAGMA is not allowed"},
    {"PRAGMA query_only = OFF", -EPERM, "PRAGMA is not allowed"},
    {"SELECT * FROM pragma_table_info('vms')", -EPERM, "not allowed"},
    {"INSERT INTO vcenters (name) VALUES ('x')", -EPERM, "INSERT is not allowed"},
    {"UPDATE vms SET name = 'x'", -EPERM, "UPDATE is not allowed"},
    {"DELETE FROM findings", -EPERM, "DELETE is not allowed"},
    {"CREATE TABLE t (a)", -EPERM, "schema change"},
    {"CREATE TEMP VIEW v AS SELECT 1", -EPERM, "schema change"},
    {"DROP VIEW vsl_vms", -EPERM, "schema change"},
    {"BEGIN", -EPERM, "transaction"},
    {"VACUUM INTO '/tmp/vsl-rules-vacuum.db'", -EPERM, "writes"},
    {"SELECT load_extension('/tmp/x.so')", -EPERM, "load_extension() is not allowed"},
    {"SELECT name FROM vms", -EPERM, "reading vms is not allowed"},
    {"SELECT * FROM vcenters", -EPERM, "reading vcenters is not allowed"},
    {"SELECT sql FROM sqlite_master", -EPERM, "reading sqlite_master is not allowed"},
    {"SELECT sql FROM sqlite_temp_master", -EPERM, "is not allowed"},
    /* A common table expression named like a view cannot borrow the view's right to read. */
    {"WITH vsl_vms AS (SELECT * FROM vcenters) SELECT * FROM vsl_vms", -EPERM,
     "reading vcenters is not allowed"},
    {"SELECT * FROM dbstat", -EPERM, "virtual table other than json_each"},
    {"SELECT * FROM sqlite_stmt", -EPERM, "virtual table other than json_each"},
    {"WITH x AS (SELECT * FROM dbstat) SELECT count(*) FROM x", -EPERM,
     "virtual table other than json_each"},
    {"SELECT nosuch FROM vsl_vms", -EINVAL, "no such column: nosuch"},
    {"SELEC 1", -EINVAL, "syntax error"},
    {"", -EINVAL, "no SQL statement"},
};

TEST_WITH(test_each_refusal_says_why, setup, teardown)
{
    struct fx *fx = *state;
    char err[512];

    for (size_t i = 0; i < N(refusals); i++) {
        err[0] = '\0';
        int r = prepare(fx, refusals[i].sql, err, sizeof(err));
        if (r != refusals[i].want || !strstr(err, refusals[i].says))
            fail_msg("%s: got %d '%s', want %d '%s'", refusals[i].sql, r, err, refusals[i].want,
                     refusals[i].says);
    }
    /* Nothing was written: VACUUM INTO made no file. */
    assert_int_equal(access("/tmp/vsl-rules-vacuum.db", F_OK), -1);
}

static const char *const allowed[] = {
    "SELECT count(*) FROM vsl_vms",
    "SELECT * FROM vsl_findings WHERE status = 'open'",
    "WITH big AS (SELECT name, capacity_bytes FROM vsl_datastores) "
    "SELECT name, json_extract('{\"a\": 1}', '$.a') FROM big",
    "SELECT d.vm_name FROM vsl_vm_disks d JOIN vsl_vms v ON v.moref = d.vm_moref",
    "SELECT value FROM json_each('[1, 2]')",
    "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 3) SELECT x FROM n",
    "SELECT 1; -- a comment after the statement is not a second one",
    "SELECT version FROM vsl_schema_info",
};

TEST_WITH(test_reads_of_the_views_are_allowed, setup, teardown)
{
    struct fx *fx = *state;
    char err[512];

    for (size_t i = 0; i < N(allowed); i++) {
        err[0] = '\0';
        if (prepare(fx, allowed[i], err, sizeof(err)) != 0)
            fail_msg("%s: refused: %s", allowed[i], err);
    }
}

TEST_WITH(test_schema_version_is_published, setup, teardown)
{
    struct fx *fx = *state;
    sqlite3_stmt *st = NULL;
    char err[256];

    assert_int_equal(rules_db_prepare(fx->rdb, "SELECT version FROM vsl_schema_info", &st, NULL,
                                      err, sizeof(err)),
                     0);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(st, 0), RULES_SCHEMA_VERSION);
    sqlite3_finalize(st);
}

TEST_WITH(test_error_names_the_line, setup, teardown)
{
    struct fx *fx = *state;
    sqlite3_stmt *st = NULL;
    char err[256];
    int line = -1;

    assert_int_equal(rules_db_prepare(fx->rdb, "SELECT name\nFROM vsl_vms\nWHERE nosuch = 1",
                                      &st, &line, err, sizeof(err)),
                     -EINVAL);
    assert_int_equal(line, 3);
    assert_null(st);
}

static double elapsed_ms(const struct timespec *t0)
{
    struct timespec t1;

    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/* "A time limit per rule": an endless query is stopped at it, said so, and the connection
 * answers the next query. */
TEST_WITH(test_time_limit_stops_an_endless_query, setup, teardown)
{
    struct fx *fx = *state;
    sqlite3_stmt *st = NULL;
    struct timespec t0;
    char err[256];
    long rows = 0;

    int r = rules_db_prepare(fx->rdb,
                             "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) "
                             "SELECT count(*) FROM n",
                             &st, NULL, err, sizeof(err));
    if (r)
        fail_msg("%s", err);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(rules_db_run(fx->rdb, st, 300, 0, count_row, &rows, err, sizeof(err)),
                     -ETIMEDOUT);
    double ms = elapsed_ms(&t0);
    assert_true(ms >= 300 && ms < 1500);
    assert_non_null(strstr(err, "time limit"));
    assert_int_equal(rows, 0);
    sqlite3_finalize(st);
    assert_int_equal(rules_db_prepare(fx->rdb, "SELECT 1", &st, NULL, err, sizeof(err)), 0);
    assert_int_equal(rules_db_run(fx->rdb, st, 300, 0, count_row, &rows, err, sizeof(err)), 0);
    assert_int_equal(rows, 1);
    sqlite3_finalize(st);
}

/* The row past max_rows stops the run; exactly max_rows rows are handed over. */
TEST_WITH(test_row_limit, setup, teardown)
{
    struct fx *fx = *state;
    sqlite3_stmt *st = NULL;
    char err[256];
    long rows = 0;

    assert_int_equal(rules_db_prepare(fx->rdb,
                                      "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 "
                                      "FROM n WHERE x < 100) SELECT x FROM n",
                                      &st, NULL, err, sizeof(err)),
                     0);
    assert_int_equal(rules_db_run(fx->rdb, st, 0, 10, count_row, &rows, err, sizeof(err)),
                     -E2BIG);
    assert_int_equal(rows, 10);
    assert_non_null(strstr(err, "more than 10 rows"));
    rows = 0;
    assert_int_equal(rules_db_run(fx->rdb, st, 0, 100, count_row, &rows, err, sizeof(err)), 0);
    assert_int_equal(rows, 100);
    sqlite3_finalize(st);
}

/* A value past RULES_MAX_VALUE fails the query instead of taking the memory. */
TEST_WITH(test_value_size_limit, setup, teardown)
{
    struct fx *fx = *state;
    sqlite3_stmt *st = NULL;
    char err[256];
    long rows = 0;

    assert_int_equal(rules_db_prepare(fx->rdb, "SELECT zeroblob(64 * 1024 * 1024)", &st, NULL,
                                      err, sizeof(err)),
                     0);
    assert_int_equal(rules_db_run(fx->rdb, st, 0, 0, count_row, &rows, err, sizeof(err)),
                     -EINVAL);
    assert_non_null(strstr(err, "too big"));
    sqlite3_finalize(st);
}

/* The sandbox never creates a database: a missing file is an error. */
TEST(test_missing_file_is_an_error)
{
    struct rules_db *rdb = NULL;
    char err[256] = "";

    assert_true(rules_db_open("/nonexistent/vslint.db", NULL, &rdb, err, sizeof(err)) < 0);
    assert_null(rdb);
    assert_non_null(strstr(err, "/nonexistent/vslint.db"));
}

/* ---- rule files ---------------------------------------------------------------------------- */

#define H "-- id: site-x\n-- title: T\n-- severity: warning\n"

static const struct bad_header {
    const char *text;
    int line;         /* where the error is said to be */
    const char *says; /* in the message */
} bad_headers[] = {
    {"-- title: T\n-- severity: info\nSELECT 1", 1, "no '-- id:' line"},
    {"-- id: site-x\n-- severity: info\nSELECT 1", 1, "no '-- title:' line"},
    {"-- id: site-x\n-- title: T\nSELECT 1", 1, "no '-- severity:' line"},
    {"-- id: Site_X\n-- title: T\n-- severity: info\nSELECT 1", 1, "not kebab-case"},
    {"-- id: site-x\n-- title: T\n-- severity: high\nSELECT 1", 3,
     "severity 'high' is not info, warning or critical"},
    {H "-- id: site-y\nSELECT 1", 4, "a second id line"},
    {H "-- param: max_gb 200\nSELECT 1", 4, "a param is written"},
    {H "-- param: Max = 2\nSELECT 1", 4, "param name 'Max'"},
    {H "-- param: max = lots\nSELECT 1", 4, "the default is not a number"},
    {H "-- param: max = 2 (GiB\nSELECT 1", 4, "has no ')'"},
    {H "-- param: a = 1\n-- param: a = 2\nSELECT 1", 5,
     "param a is declared twice (first on line 4)"},
    {H "-- param: a = 1\n-- param: b = 1\n-- param: c = 1\n-- param: d = 1\n-- param: e = 1\n"
       "-- param: f = 1\n-- param: g = 1\n-- param: h = 1\n-- param: i = 1\nSELECT 1",
     12, "more than 8 params"},
    {H "\n-- only comments\n", 5, "no SELECT after the header"},
    {"-- id: site-x\n-- title: caf\xe9\n-- severity: info\nSELECT 1", 2, "not UTF-8"},
};

TEST(test_bad_headers_name_the_line)
{
    struct rules_rule rule;
    char err[256];
    int line;

    for (size_t i = 0; i < N(bad_headers); i++) {
        err[0] = '\0';
        line = -1;
        int r = rules_parse("x.sql", bad_headers[i].text, &rule, &line, err, sizeof(err));
        if (r != -EINVAL || line != bad_headers[i].line || !strstr(err, bad_headers[i].says))
            fail_msg("row %zu: got %d line %d '%s', want line %d '%s'", i, r, line, err,
                     bad_headers[i].line, bad_headers[i].says);
    }
}

TEST(test_header_fields_params_and_continuations)
{
    static const char text[] =
        "-- a comment before the header is ignored\n"
        "-- id: site-thin\n"
        "-- title: No big thin disks\n"
        "-- severity: critical\n"
        "-- rationale: first line\n"
        "--   and the second\n"
        "\n"
        "-- remediation: inflate it\n"
        "-- param: max_gb = 2.5 (GiB) larger thin disks are reported\n"
        "-- param: n = 3\n"
        "SELECT 1 -- a comment in the statement stays\n";
    struct rules_rule rule;
    char err[256];
    int line;

    assert_int_equal(rules_parse("dir/thin.sql", text, &rule, &line, err, sizeof(err)), 0);
    assert_string_equal(rule.id, "site-thin");
    assert_string_equal(rule.title, "No big thin disks");
    assert_int_equal(rule.severity, SEV_CRITICAL);
    assert_string_equal(rule.rationale, "first line and the second");
    assert_string_equal(rule.remediation, "inflate it");
    assert_int_equal(rule.n_params, 2);
    assert_string_equal(rule.params[0].name, "max_gb");
    assert_true(rule.params[0].dflt == 2.5);
    assert_string_equal(rule.params[0].unit, "GiB");
    assert_string_equal(rule.params[0].help, "larger thin disks are reported");
    assert_string_equal(rule.params[1].unit, "");
    assert_int_equal(rule.sql_line, 11);
    assert_string_equal(rule.sql, "SELECT 1 -- a comment in the statement stays\n");
    assert_string_equal(rule.file, "dir/thin.sql");
    rules_rule_free(&rule);
}

int main(void)
{
    return tl_main();
}
