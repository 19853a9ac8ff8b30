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

int main(void)
{
    return tl_main();
}
