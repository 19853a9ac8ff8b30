/* Backing the database up while `vslint serve` writes it, and checking a database file, for
 * `vslint db backup` and `vslint db check`.
 *
 * The copy is SQLite's VACUUM INTO on a read-only connection: one read transaction, so in WAL
 * mode it is the last committed state (never half a poll) while the daemon goes on writing, and
 * the copy is compacted, in rollback-journal mode, one self-contained file. It is written under
 * a temporary name beside OUT with mode 0600 (it holds the estate's names and the findings),
 * checked with PRAGMA integrity_check, and only then renamed over OUT, so a failed or
 * interrupted backup never leaves a half file under the name a restore would use. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db/db-private.h"
#include "db/db.h"
#include "util/err.h"

/* The first row's first column of sql on h as text into out ("" when none). */
static int first_text(sqlite3 *h, const char *sql, char *out, size_t size)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(h, sql, -1, &st, NULL);

    out[0] = '\0';
    if (rc == SQLITE_OK) {
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            const unsigned char *t = sqlite3_column_text(st, 0);
            snprintf(out, size, "%s", t ? (const char *)t : "");
            rc = SQLITE_OK;
        } else if (rc == SQLITE_DONE) {
            rc = SQLITE_OK;
        }
    }
    sqlite3_finalize(st);
    return rc;
}

/* Opens path read-only and fills what db_check_file() reports of it. */
static int inspect(const char *path, struct db_file_info *info, char **errmsg)
{
    sqlite3 *h = NULL;
    char v[64];
    int rc = db_probe_open(path, &h), r = 0;

    memset(info, 0, sizeof(*info));
    if (rc != SQLITE_OK) {
        db_set_errmsg(errmsg, "%s", h ? sqlite3_errmsg(h) : sqlite3_errstr(rc));
        r = -VSL_EDB;
        goto out;
    }
    sqlite3_busy_timeout(h, 5000);
    if ((rc = first_text(h, "PRAGMA user_version", v, sizeof(v))) != SQLITE_OK) {
        db_set_errmsg(errmsg, "%s", sqlite3_errmsg(h));
        r = -VSL_EDB;
        goto out;
    }
    info->schema = (int)strtol(v, NULL, 10);
    if ((r = db_foreign(h, info->schema, errmsg)) < 0)
        goto out;
    if (info->schema == 0) {
        db_set_errmsg(errmsg, "an empty database: no vslint schema yet");
        r = -VSL_EDB;
        goto out;
    }
    if ((rc = first_text(h, "PRAGMA integrity_check", info->integrity,
                         sizeof(info->integrity))) != SQLITE_OK) {
        snprintf(info->integrity, sizeof(info->integrity), "%s", sqlite3_errmsg(h));
    }
    if (first_text(h, "SELECT count(*) FROM polls", v, sizeof(v)) == SQLITE_OK)
        info->polls = strtoll(v, NULL, 10);
    if (first_text(h, "SELECT count(*) FROM findings WHERE resolved_at_ms IS NULL", v, sizeof(v)) ==
        SQLITE_OK)
        info->open_findings = strtoll(v, NULL, 10);
    if (first_text(h, "SELECT max(finished_ms) FROM polls WHERE ok = 1", v, sizeof(v)) ==
        SQLITE_OK)
        info->last_poll_ms = strtoll(v, NULL, 10);
out:
    sqlite3_close(h);
    return r;
}

int db_check_file(const char *path, struct db_file_info *info, char **errmsg)
{
    struct stat sb;

    if (errmsg)
        *errmsg = NULL;
    if (stat(path, &sb) < 0) {
        int e = errno;
        db_set_errmsg(errmsg, "%s", strerror(e));
        return -e;
    }
    int r = inspect(path, info, errmsg);
    info->bytes = sb.st_size;
    return r;
}

/* The directory holding path, as a string the caller owns in buf. */
static void dir_of(const char *path, char *buf, size_t size)
{
    char copy[PATH_MAX];

    snprintf(copy, sizeof(copy), "%s", path);
    snprintf(buf, size, "%s", dirname(copy));
}

/* A backup killed before its rename (SIGKILL, power loss) leaves OUT.partial-PID behind, a
 * whole-database-sized file nobody will use: the next backup to the same OUT removes those
 * whose process is gone. One whose PID still lives may be a backup running now, and stays. */
static void remove_stale_partials(const char *out)
{
    char dir[PATH_MAX], copy[PATH_MAX], prefix[NAME_MAX + 16], victim[PATH_MAX];
    struct dirent *de;
    DIR *d;

    dir_of(out, dir, sizeof(dir));
    snprintf(copy, sizeof(copy), "%s", out);
    if ((size_t)snprintf(prefix, sizeof(prefix), "%s.partial-", basename(copy)) >= sizeof(prefix))
        return;
    if (!(d = opendir(dir)))
        return;
    while ((de = readdir(d))) {
        size_t n = strlen(prefix);
        char *end;
        long pid;

        if (strncmp(de->d_name, prefix, n) != 0 || !de->d_name[n])
            continue;
        errno = 0;
        pid = strtol(de->d_name + n, &end, 10);
        if (errno || *end || pid <= 0 || pid > INT_MAX)
            continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        if ((size_t)snprintf(victim, sizeof(victim), "%s/%s", dir, de->d_name) < sizeof(victim))
            unlink(victim);
    }
    closedir(d);
}

/* After the rename, the directory entry is on disk only once the directory is synced: without
 * it a crash can bring back the old OUT (or none) although the backup said it was done. */
static void sync_dir_of(const char *path)
{
    char dir[PATH_MAX];
    int fd;

    dir_of(path, dir, sizeof(dir));
    if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
        fsync(fd);
        close(fd);
    }
}

int db_backup(const char *path, const char *out, struct db_file_info *info, char **errmsg)
{
    sqlite3 *h = NULL;
    sqlite3_stmt *st = NULL;
    char tmp[PATH_MAX], real_src[PATH_MAX], real_out[PATH_MAX];
    int rc, r = 0;
    mode_t old_mask;

    if (errmsg)
        *errmsg = NULL;
    /* Writing the copy over the database itself would destroy both. */
    if (realpath(path, real_src) && realpath(out, real_out) && !strcmp(real_src, real_out)) {
        db_set_errmsg(errmsg, "%s is the database itself: name another file", out);
        return -EINVAL;
    }
    if ((size_t)snprintf(tmp, sizeof(tmp), "%s.partial-%ld", out, (long)getpid()) >= sizeof(tmp))
        return -ENAMETOOLONG;
    unlink(tmp);
    remove_stale_partials(out);
    /* The source must be a vslint database this build knows: a backup of anything else would
     * be reported as a good one. */
    if ((r = db_check_file(path, info, errmsg)) < 0) {
        char *why = errmsg ? *errmsg : NULL;
        if (errmsg)
            *errmsg = NULL;
        db_set_errmsg(errmsg, "%s: %s", path, why ? why : "cannot be read");
        free(why);
        return r;
    }
    rc = sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL);
    if (rc != SQLITE_OK) {
        db_set_errmsg(errmsg, "%s: %s", path, h ? sqlite3_errmsg(h) : sqlite3_errstr(rc));
        r = -VSL_EDB;
        goto out;
    }
    sqlite3_busy_timeout(h, 30000);
    rc = sqlite3_prepare_v2(h, "VACUUM INTO ?1", -1, &st, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(st, 1, tmp, -1, SQLITE_STATIC);
    /* The copy is created by SQLite: the umask makes it 0600 from its first byte. */
    old_mask = umask(077);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    umask(old_mask);
    if (rc != SQLITE_DONE) {
        db_set_errmsg(errmsg, "copying %s to %s: %s", path, tmp, sqlite3_errmsg(h));
        r = -VSL_EDB;
        goto out;
    }
    sqlite3_finalize(st);
    st = NULL;
    sqlite3_close(h);
    h = NULL;
    chmod(tmp, 0600);
    /* The copy is judged on its own: integrity, and the same schema as its source. */
    struct db_file_info copy;
    if ((r = inspect(tmp, &copy, errmsg)) < 0) {
        char *why = errmsg ? *errmsg : NULL;
        if (errmsg)
            *errmsg = NULL;
        db_set_errmsg(errmsg, "the copy %s: %s", tmp, why ? why : "cannot be read");
        free(why);
        goto out;
    }
    if (strcmp(copy.integrity, "ok") != 0) {
        db_set_errmsg(errmsg, "the copy %s fails integrity_check: %s", tmp, copy.integrity);
        r = -VSL_EDB;
        goto out;
    }
    if (copy.schema != info->schema) {
        db_set_errmsg(errmsg, "the copy has schema version %d, its source %d", copy.schema,
                      info->schema);
        r = -VSL_EDB;
        goto out;
    }
    /* The source's figures are those of the moment the copy was taken. */
    copy.bytes = info->bytes;
    {
        struct stat sb;
        if (stat(tmp, &sb) == 0)
            copy.bytes = sb.st_size;
    }
    *info = copy;
    int fd = open(tmp, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    if (rename(tmp, out) < 0) {
        int e = errno;
        db_set_errmsg(errmsg, "cannot rename %s to %s: %s", tmp, out, strerror(e));
        r = -e;
        goto out;
    }
    sync_dir_of(out);
out:
    sqlite3_finalize(st);
    sqlite3_close(h);
    if (r < 0)
        unlink(tmp);
    return r;
}
