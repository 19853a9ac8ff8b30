/* A database that stays the same size (db/prune.c, db/db.c's round windows): incremental
 * rounds summed into one row per vCenter per window, polls thinned past retention without
 * losing one a finding names, resolved findings and digests deleted, and a soak of thousands of
 * rounds on a simulated clock whose row counts and file size stay flat. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checks/engine.h"
#include "db/digest.h"
#include "db/findings.h"
#include "db/history.h"
#include "db/prune.h"
#include "db/update.h"
#include "model/finding.h"

#include <sqlite3.h>

#include "testlib.h"

#define S_MS   1000LL
#define MIN_MS (60 * S_MS)
#define T0     (20000 * DB_DAY_MS) /* a UTC midnight */
#define NVMS   40

static const char *db_path;

static int64_t count(const char *sql)
{
    return tl_db_count(db_path, sql);
}

/* NVMS VMs, vm-0.. powered on. */
static void fill(const struct vim_sink *s, const void *arg)
{
    (void)arg;
    for (int i = 0; i < NVMS; i++) {
        char moref[16];
        snprintf(moref, sizeof(moref), "vm-%d", i);
        struct vim_vm vm = {.moref = moref, .name = moref, .power_state = "poweredOn"};
        assert_int_equal(s->vm(s->ctx, &vm), 0);
    }
}

/* One round at t that re-reads vm-k (its power state flipped by the round's parity). */
static void round_at(struct db *db, int64_t t, int k)
{
    struct db_snapshot *u = NULL;
    struct vim_sink sink;
    char moref[16];

    snprintf(moref, sizeof(moref), "vm-%d", k % NVMS);
    assert_int_equal(db_update_begin(db, "vc1", &u, &sink), 0);
    assert_int_equal(db_update_forget(u, "VirtualMachine", moref), 0);
    struct vim_vm vm = {.moref = moref, .name = moref,
                        .power_state = k % 2 ? "poweredOff" : "poweredOn"};
    assert_int_equal(sink.vm(sink.ctx, &vm), 0);
    assert_int_equal(db_update_commit(u, &(struct db_round){.started_ms = t,
                                                             .finished_ms = t + 40,
                                                             .version = "v",
                                                             .bytes = 1000}),
                     0);
}

/* An evaluation of vc1 at now: the finding "always" and, when churn >= 0, "churn-N"; every
 * other one of the check is resolved. */
static void evaluate(struct db *db, int64_t now, int churn)
{
    static const char *const completed[] = {"soak-check"};
    struct finding items[2];
    json_t *ev0 = json_object(), *ev1 = json_object();
    char moref[32];
    struct evaluation ev = {.findings = items, .completed = completed, .n_completed = 1};

    memset(items, 0, sizeof(items));
    snprintf(moref, sizeof(moref), "churn-%d", churn);
    const char *objs[2] = {"always", moref};
    for (int i = 0; i < (churn >= 0 ? 2 : 1); i++) {
        struct finding *f = &items[ev.n_findings++];
        chk_fingerprint("soak-check", "vc1", objs[i], NULL, f->fingerprint);
        f->check_id = "soak-check";
        f->check_title = "Soak";
        f->severity = SEV_WARNING;
        f->object_type = "vm";
        f->object_moref = objs[i];
        f->object_name = objs[i];
        f->message = "soak";
        f->evidence = i ? ev1 : ev0;
    }
    assert_int_equal(db_findings_record(db, "vc1", &ev, now), 0);
    json_decref(ev0);
    json_decref(ev1);
}

/* Rounds in one window are one row: rounds, changes, bytes, errors and the changed types summed;
 * the vCenter and a finding name that row; a full read, or the next window, starts a new one. */
TEST_WITH(rounds_in_a_window_are_one_row, tl_db_setup_open, tl_db_teardown)
{
    struct tl_dbfile *f = *state;

    db_path = f->path;
    db_set_retention(f->db, 300 * S_MS, 0, 0);
    tl_snapshot(f->db, "vc1", fill, NULL, T0, T0 + 500, NULL);
    round_at(f->db, T0 + 10 * S_MS, 1);
    evaluate(f->db, T0 + 11 * S_MS, 1);
    round_at(f->db, T0 + 20 * S_MS, 2);
    assert_int_equal(db_update_failed(f->db, "vc1",
                                      &(struct db_round){.started_ms = T0 + 30 * S_MS,
                                                         .finished_ms = T0 + 30 * S_MS + 100,
                                                         .bytes = 50},
                                      "connection reset"),
                     0);
    round_at(f->db, T0 + 299 * S_MS, 3);
    assert_int_equal(count("SELECT count(*) FROM polls"), 2);
    assert_int_equal(count("SELECT count(*) FROM polls WHERE mode = 'incremental' AND ok = 1"
                           " AND rounds = 4 AND changes = 3 AND bytes = 3050 AND errors = 1"
                           " AND busy_ms = 220 AND longest_ms = 100"
                           " AND started_ms = " "20000" "*86400000 + 299000"
                           " AND counts_json = '{\"changed\":{\"VirtualMachine\":3}}'"
                           " AND error IS NULL"), /* the latest round went well */
                     1);
    int64_t window = count("SELECT id FROM polls WHERE mode = 'incremental'");
    char sql[160];
    snprintf(sql, sizeof(sql), "SELECT count(*) FROM vcenters WHERE last_poll_id = %lld",
             (long long)window);
    assert_int_equal(count(sql), 1);
    snprintf(sql, sizeof(sql), "SELECT count(*) FROM findings WHERE first_poll = %lld",
             (long long)window);
    assert_int_equal(count(sql), 2); /* "always" and churn-1 */

    /* The next window: a row of its own; a full read in between: the one after it too. */
    round_at(f->db, T0 + 300 * S_MS, 4);
    tl_snapshot(f->db, "vc1", fill, NULL, T0 + 301 * S_MS, T0 + 302 * S_MS, NULL);
    round_at(f->db, T0 + 310 * S_MS, 5);
    assert_int_equal(count("SELECT count(*) FROM polls"), 5);
    assert_int_equal(count("SELECT count(*) FROM polls WHERE mode = 'incremental'"
                           " AND rounds = 1"),
                     2);

    /* The history counts rounds, not rows: 6 incremental (1 failed), 2 full. */
    json_t *days = NULL;
    assert_int_equal(db_history_polls(f->db, "vc1", T0 + DB_DAY_MS - 1, 1, &days), 0);
    json_t *d = json_array_get(days, 0), *inc = json_object_get(d, "incremental");
    assert_int_equal(json_integer_value(json_object_get(d, "polls")), 8);
    assert_int_equal(json_integer_value(json_object_get(d, "failed")), 1);
    assert_int_equal(json_integer_value(json_object_get(inc, "polls")), 6);
    assert_int_equal(json_integer_value(json_object_get(inc, "failed")), 1);
    assert_int_equal(json_integer_value(json_object_get(inc, "max_ms")), 100);
    /* (5 * 40 + 100) / 6 rounds */
    assert_int_equal(json_integer_value(json_object_get(inc, "mean_ms")), 50);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(d, "full"), "polls")), 2);
    json_decref(days);
}

/* Past retention: resolved findings and old digests go, open ones and the last digest stay;
 * polls thin to one per day, but a poll a finding names stays; in batches. */
TEST_WITH(prune_keeps_what_is_named, tl_db_setup_open, tl_db_teardown)
{
    struct tl_dbfile *f = *state;
    struct db_prune_stats s;

    db_path = f->path;
    db_set_retention(f->db, 0, DB_DAY_MS, 3 * DB_DAY_MS);
    tl_snapshot(f->db, "vc1", fill, NULL, T0, T0 + 500, NULL);
    evaluate(f->db, T0 + 600, 0); /* "always" and churn-0, first seen by the full read */
    /* 1200 rounds of a row each on day 0, churn-0 resolved by the 600th. */
    for (int i = 1; i <= 1200; i++) {
        round_at(f->db, T0 + i * MIN_MS, i);
        if (i == 600)
            evaluate(f->db, T0 + i * MIN_MS + 100, -1);
    }
    for (int i = 0; i < 3; i++)
        assert_int_equal(db_digest_record(f->db, &(struct db_digest){.slot_ms = T0 + i * 1000,
                                                                     .from_ms = i,
                                                                     .to_ms = i + 1,
                                                                     .sent_ms = T0 + i * 1000,
                                                                     .score = 90}),
                         0);
    assert_int_equal(count("SELECT count(*) FROM polls"), 1201);

    /* Within retention nothing goes. */
    assert_int_equal(db_prune(f->db, T0 + DB_DAY_MS - 1, &s), 0);
    assert_int_equal(s.polls + s.findings + s.digests, 0);
    /* Day 2: day 0 is past retention. At most DB_PRUNE_MAX_BATCHES of DB_PRUNE_BATCH rows a
     * call; a call cut short runs again at once, the next one finishes. */
    int64_t now = T0 + 2 * DB_DAY_MS + 1;
    assert_int_equal(db_prune(f->db, now, &s), 0);
    assert_true(s.batches <= DB_PRUNE_MAX_BATCHES);
    assert_int_equal(s.findings + s.digests, 0);
    assert_true(s.polls > 0 && s.polls <= DB_PRUNE_BATCH * DB_PRUNE_MAX_BATCHES);
    int64_t more = 0;
    for (int i = 0; i < 5; i++) {
        assert_int_equal(db_prune(f->db, now, &s), 0);
        more += s.polls;
    }
    assert_int_equal(more + s.polls, 0); /* the last call had nothing left */
    /* Kept: the day's last full read (named by "always" too), the round that resolved churn-0
     * (still within findings_retention), and the vCenter's last poll. */
    assert_int_equal(count("SELECT count(*) FROM polls"), 3);
    assert_int_equal(count("SELECT count(*) FROM polls p JOIN findings f ON f.resolved_poll = p.id"
                           " WHERE p.mode = 'incremental' AND f.object_moref = 'churn-0'"),
                     1);
    /* Day 4: churn-0 is past findings_retention, and with it the round it named. */
    now = T0 + 4 * DB_DAY_MS;
    assert_int_equal(db_prune(f->db, now, &s), 0);
    assert_int_equal(s.findings, 1);
    assert_int_equal(s.digests, 2);
    assert_int_equal(s.polls, 1);
    assert_int_equal(count("SELECT count(*) FROM polls"), 2);
    assert_int_equal(count("SELECT count(*) FROM polls p JOIN findings f ON f.first_poll = p.id"
                           " WHERE p.mode = 'full' AND f.status = 'open'"),
                     1);
    assert_int_equal(count("SELECT count(*) FROM findings WHERE status = 'open'"), 1);
    assert_int_equal(count("SELECT count(*) FROM findings WHERE status = 'resolved'"), 0);
    assert_int_equal(count("SELECT count(*) FROM polls p JOIN vcenters v"
                           " ON v.last_poll_id = p.id"),
                     1);
    assert_int_equal(count("SELECT count(*) FROM digests"), 1);
    assert_int_equal(count("SELECT slot_ms FROM digests"), T0 + 2000);
    struct db_prune_stats last;
    db_prune_last(&last);
    assert_int_equal(last.at_ms, now);
    /* Nothing dangles. */
    assert_int_equal(count("SELECT count(*) FROM pragma_foreign_key_check"), 0);
}

/* A new file gives pages back: after a prune that freed more than the slack, the free pages
 * beyond it are returned and the file shrinks by as much (once checkpointed). */
TEST_WITH(pruned_pages_are_given_back, tl_db_setup_open, tl_db_teardown)
{
    struct tl_dbfile *f = *state;
    struct db_prune_stats s;
    sqlite3 *h = NULL;
    struct stat before, after;

    db_path = f->path;
    db_set_retention(f->db, 0, 0, DB_DAY_MS);
    /* 6,000 resolved findings of 2 KB each, resolved on day 0: about 3,000 pages. */
    assert_int_equal(sqlite3_open(f->path, &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h,
                                  "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n"
                                  " WHERE i < 6000) INSERT INTO findings (fingerprint, check_id,"
                                  " vcenter, severity, status, message, first_seen_ms,"
                                  " last_seen_ms, resolved_at_ms) SELECT 'fp' || i, 'c', 'vc1',"
                                  " 'info', 'resolved', hex(randomblob(1000)), 1, 1, 1 FROM n",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(h);
    db_checkpoint(f->db);
    assert_int_equal(stat(f->path, &before), 0);
    assert_int_equal(db_prune(f->db, 2 * DB_DAY_MS, &s), 0);
    assert_int_equal(s.findings, 6000);
    /* DB_PRUNE_BATCH rows a transaction: 12 full ones, the one that found nothing left, and
     * the digests' (none). */
    assert_int_equal(s.batches, 6000 / DB_PRUNE_BATCH + 2);
    /* At most a step at a time; the next runs (a minute apart) give back the rest but the slack. */
    assert_int_equal(s.pages_freed, DB_VACUUM_STEP_PAGES);
    int64_t freed = s.pages_freed;
    assert_true(count("PRAGMA freelist_count") > DB_VACUUM_SLACK_PAGES);
    for (int i = 1; i <= 5 && count("PRAGMA freelist_count") > DB_VACUUM_SLACK_PAGES; i++) {
        assert_int_equal(db_prune(f->db, 2 * DB_DAY_MS + i * DB_PRUNE_EVERY_MS, &s), 0);
        assert_true(s.pages_freed > 0 && s.pages_freed <= DB_VACUUM_STEP_PAGES);
        freed += s.pages_freed;
    }
    assert_int_equal(count("PRAGMA freelist_count"), DB_VACUUM_SLACK_PAGES);
    db_checkpoint(f->db);
    assert_int_equal(stat(f->path, &after), 0);
    /* The free pages, and the pointer-map pages (one per ~800) that tracked them. */
    assert_true(before.st_size - after.st_size >= freed * 4096);
    assert_true(before.st_size - after.st_size <= freed * 4096 + freed * 4096 / 400);
    printf("6,000 resolved findings pruned: file %lld -> %lld bytes\n", (long long)before.st_size,
           (long long)after.st_size);
}

/* Days of size of the soak: file + WAL, and rows. */
struct day {
    int64_t bytes, polls, findings, digests;
    int64_t rss_kb, fds; /* this process's resident memory and open descriptors */
};

/* Resident memory in KiB (/proc/self/statm) and open descriptors (/proc/self/fd). */
static void process_use(int64_t *rss_kb, int64_t *fds)
{
    FILE *fh = fopen("/proc/self/statm", "r");
    long long size = 0, rss = 0;
    assert_non_null(fh);
    assert_int_equal(fscanf(fh, "%lld %lld", &size, &rss), 2);
    fclose(fh);
    *rss_kb = rss * (sysconf(_SC_PAGESIZE) / 1024);
    DIR *d = opendir("/proc/self/fd");
    assert_non_null(d);
    *fds = 0;
    while (readdir(d))
        (*fds)++;
    closedir(d);
}

static int64_t file_bytes(const char *path)
{
    char wal[256];
    struct stat a, b;
    snprintf(wal, sizeof(wal), "%s-wal", path);
    return (stat(path, &a) == 0 ? a.st_size : 0) + (stat(wal, &b) == 0 ? b.st_size : 0);
}

/* The soak: SOAK_DAYS simulated days of a round with a change every ROUND_S seconds (a busy
 * vCenter), a full read a day, an evaluation an hour (one finding open all along, one that
 * comes and goes each hour), a digest a day, pruned after every round as serve does, with
 * retention of two days. After retention the rows and the file stay flat; nothing open is lost
 * and the history within retention counts every round. */
#define RETAIN 2

TEST_WITH(soak_stays_flat, tl_db_setup_open, tl_db_teardown)
{
    struct tl_dbfile *f = *state;
    /* VSLINT_SOAK_DAYS=N runs longer (docs/performance.md's figures); the unit suite, 5. */
    const char *env = getenv("VSLINT_SOAK_DAYS");
    const int SOAK_DAYS = env && strtol(env, NULL, 10) > RETAIN + 2 ? (int)strtol(env, NULL, 10) : 5;
    struct day *days = calloc((size_t)SOAK_DAYS, sizeof(*days));
    /* VSLINT_SOAK_ROUND_S=S: a round every S seconds (a divisor of 3600); 20 by default, so
     * the unit suite's 5 days are 21,600 rounds. */
    const char *renv = getenv("VSLINT_SOAK_ROUND_S");
    const int ROUND_S = renv && strtol(renv, NULL, 10) > 0 && 3600 % strtol(renv, NULL, 10) == 0
                            ? (int)strtol(renv, NULL, 10)
                            : 20;
    const int per_day = (int)(DB_DAY_MS / (ROUND_S * S_MS));
    int hour = 0;
    int64_t t = T0, rounds = 0;

    db_path = f->path;
    db_set_retention(f->db, 300 * S_MS, RETAIN * DB_DAY_MS, RETAIN * DB_DAY_MS);
    assert_int_equal(count("PRAGMA auto_vacuum"), 2); /* a new file: incremental */
    for (int day = 0; day < SOAK_DAYS; day++) {
        tl_snapshot(f->db, "vc1", fill, NULL, t + 1, t + 2000, NULL);
        for (int i = 0; i < per_day; i++) {
            int64_t rt = T0 + (int64_t)day * DB_DAY_MS + (int64_t)i * ROUND_S * S_MS + 3000;
            round_at(f->db, rt, (int)rounds++);
            if (i % (3600 / ROUND_S) == 0)
                evaluate(f->db, rt + 100, hour++);
            if (i % (3600 / ROUND_S) == 1)
                db_checkpoint(f->db);
            assert_int_equal(db_prune(f->db, rt + 200, NULL), 0);
        }
        t = T0 + (int64_t)(day + 1) * DB_DAY_MS;
        assert_int_equal(db_digest_record(f->db, &(struct db_digest){.slot_ms = t - 1000,
                                                                     .from_ms = t - DB_DAY_MS,
                                                                     .to_ms = t - 1000,
                                                                     .sent_ms = t - 1000}),
                         0);
        db_checkpoint(f->db);
        days[day] = (struct day){file_bytes(f->path), count("SELECT count(*) FROM polls"),
                                 count("SELECT count(*) FROM findings"),
                                 count("SELECT count(*) FROM digests"), 0, 0};
        process_use(&days[day].rss_kb, &days[day].fds);
        printf("soak day %d: %lld rounds, %lld bytes, %lld polls, %lld findings, %lld digests, "
               "RSS %lld KiB, %lld fds\n",
               day + 1, (long long)rounds, (long long)days[day].bytes, (long long)days[day].polls,
               (long long)days[day].findings, (long long)days[day].digests,
               (long long)days[day].rss_kb, (long long)days[day].fds);
    }
    /* A day within retention: 288 windows and the full read (which splits one window). */
    assert_true(days[0].polls <= 288 + 2);
    /* Flat after retention: the same rows each day end (but the one poll a day kept past
     * retention), the file no larger. */
    for (int d = RETAIN + 1; d < SOAK_DAYS; d++) {
        int64_t kept = d - (RETAIN + 1);
        assert_true(days[d].polls <= days[RETAIN + 1].polls + kept + 2);
        assert_true(days[d].polls >= days[RETAIN + 1].polls + kept - 2);
        assert_true(days[d].findings <= days[RETAIN + 1].findings + 1);
        assert_true(days[d].digests <= RETAIN + 2);
        assert_true(days[d].bytes <= days[RETAIN + 1].bytes + days[RETAIN + 1].bytes / 20);
        assert_int_equal(days[d].fds, days[RETAIN + 1].fds);
        assert_true(days[d].rss_kb <= days[RETAIN + 1].rss_kb + 1024);
    }
    /* Nothing lost: "always" open since the first evaluation; the hour's churn finding open;
     * every poll a finding names is there. */
    char sql[256];
    snprintf(sql, sizeof(sql),
             "SELECT count(*) FROM findings f JOIN polls p ON p.id = f.first_poll"
             " WHERE f.object_moref = 'always' AND f.status = 'open'"
             " AND f.first_seen_ms = %lld",
             (long long)(T0 + 3000 + 100));
    assert_int_equal(count(sql), 1);
    snprintf(sql, sizeof(sql),
             "SELECT count(*) FROM findings WHERE object_moref = 'churn-%d' AND status = 'open'",
             hour - 1);
    assert_int_equal(count(sql), 1);
    assert_int_equal(count("SELECT count(*) FROM pragma_foreign_key_check"), 0);
    /* The history within retention counts every round of the day: the last whole day. */
    json_t *h = NULL;
    assert_int_equal(db_history_polls(f->db, "vc1", t - 1, 1, &h), 0);
    json_t *inc = json_object_get(json_array_get(h, 0), "incremental");
    assert_int_equal(json_integer_value(json_object_get(inc, "polls")), per_day);
    assert_int_equal(json_integer_value(json_object_get(inc, "failed")), 0);
    json_decref(h);
    /* And a day past retention is one poll, the day's full read, with its objects. */
    h = NULL;
    assert_int_equal(db_history_polls(f->db, "vc1", T0 + 2 * DB_DAY_MS - 1, 1, &h), 0);
    json_t *d1 = json_array_get(h, 0);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(d1, "full"), "polls")),
                     1);
    json_decref(h);
    free(days);
}

int main(void)
{
    return tl_main();
}
