/* Opening the database and writing poll snapshots: a poll's rows are staged in a temporary
 * database while the network is slow, then copied in one short transaction; the poll history. */
#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "db/db-private.h"
#include "db/db.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/log.h"

struct db_snapshot {
    struct db *db; /* borrowed */
    char *vcenter; /* owned */
    char *url;     /* owned, may be NULL */
    const char *kind; /* static: NULL for a vCenter, "unity" for an array */
    int keep;      /* an update: the copy removes nothing, the noted objects' rows go first */
    struct {
        int tag;
        char *key;
    } *notes; /* owned: what db_snapshot_note() recorded, for db_snapshot_apply() */
    size_t nnotes, cap;
    size_t noted[DB_NOTE_TAGS]; /* how many notes of each tag */
    /* A full poll's writer thread (db/stage.c), owned; NULL: rows are inserted by the sink's
     * caller. While it runs, only it uses the connection: everything else waits for
     * db_stager_stop(). */
    struct db_stager *stager;
    /* The database's first refusal of a row (a sink call's error, or the writer's): every
     * later sink call returns err at once, so the poll ends at the next row. */
    int err;
    char errmsg[300];
};

/* The table each counted kind is counted in. */
static const enum db_table kind_table[DB_NKINDS] = {
    [DB_DATASTORE] = T_DATASTORE, [DB_STORAGE_POD] = T_STORAGE_POD,   [DB_VM] = T_VM,
    [DB_VDISK] = T_VDISK,         [DB_SNAPSHOT] = T_SNAPSHOT,         [DB_HOST] = T_HOST,
    [DB_VNIC] = T_VNIC,           [DB_VSWITCH] = T_VSWITCH,           [DB_DVSWITCH] = T_DVSWITCH,
    [DB_ISCSI_HBA] = T_ISCSI_HBA, [DB_ISCSI_TARGET] = T_ISCSI_TARGET, [DB_LUN] = T_LUN,
    [DB_LUN_PATH] = T_LUN_PATH,   [DB_ARRAY_POOL] = T_ARRAY_POOL,     [DB_ARRAY_LUN] = T_ARRAY_LUN,
};

const char *db_kind_name(enum db_kind k)
{
    if (k < 0 || k >= DB_NKINDS)
        return "unknown";
    return db_table_name(kind_table[k]);
}

/* Prepares *st once; later calls reuse it. */
static int prepare(struct db *db, sqlite3_stmt **st, const char *sql)
{
    int rc;

    if (*st)
        return 0;
    rc = sqlite3_prepare_v3(db->h, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL);
    if (rc != SQLITE_OK) {
        *st = NULL;
        return db_fail(db->h, rc, sql);
    }
    return 0;
}

/* Runs a statement that returns no rows and makes it ready for the next use. */
static int step_done(struct db *db, sqlite3_stmt *st)
{
    int rc = sqlite3_step(st), r = rc == SQLITE_DONE ? 0 : db_fail(db->h, rc, sqlite3_sql(st));

    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return r;
}

static int exec(struct db *db, const char *sql)
{
    return db_exec(db->h, sql);
}

/* "vcenter, col1, col2, ...": table t's columns in list order. */
static int add_columns(struct vsl_buf *sql, enum db_table t)
{
    const struct db_table_def *d = &db_tables[t];
    int r = vsl_buf_addstr(sql, "vcenter");

    for (int i = 0; i < d->ncols && r == 0; i++)
        r = vsl_buf_printf(sql, ", %s", d->cols[i].name);
    return r;
}

/* Into the staging table. INSERT OR REPLACE: a confused server that sends the same key twice
 * costs one row, not the poll (a table without a key, satp_rules, takes a rule sent twice as
 * two rows, which changes no answer). ?1 is the vCenter, the columns follow in list order. */
static int insert_sql(enum db_table t, struct vsl_buf *sql)
{
    const struct db_table_def *d = &db_tables[t];
    int i, pk = 0, r;

    for (i = 0; i < d->ncols; i++)
        pk |= d->cols[i].flags & DB_PK;
    r = vsl_buf_printf(sql, "INSERT%s INTO " DB_STAGE_SCHEMA "." DB_STAGE_PREFIX "%s (",
                       pk ? " OR REPLACE" : "", d->name);
    if (r == 0)
        r = add_columns(sql, t);
    for (i = 0; i <= d->ncols && r == 0; i++)
        r = vsl_buf_printf(sql, "%s?%d", i ? ", " : ") VALUES (", i + 1);
    if (r == 0)
        r = vsl_buf_addstr(sql, ")");
    return r;
}

/* From the staging table into the table (whose rows of that vCenter are gone by then); an
 * update's copy replaces a row of the same key instead. */
static int copy_sql_with(enum db_table t, struct vsl_buf *sql, const char *verb)
{
    const char *name = db_table_name(t);
    int r = vsl_buf_printf(sql, "%s INTO main.%s (", verb, name);

    if (r == 0)
        r = add_columns(sql, t);
    if (r == 0)
        r = vsl_buf_addstr(sql, ") SELECT ");
    if (r == 0)
        r = add_columns(sql, t);
    if (r == 0)
        r = vsl_buf_printf(sql, " FROM " DB_STAGE_SCHEMA "." DB_STAGE_PREFIX "%s", name);
    return r;
}

static int copy_sql(enum db_table t, struct vsl_buf *sql)
{
    return copy_sql_with(t, sql, "INSERT");
}

static int copy_keep_sql(enum db_table t, struct vsl_buf *sql)
{
    return copy_sql_with(t, sql, "INSERT OR REPLACE");
}

/* Prepares *st from the SQL that make() builds for table t, once per connection. */
static int prepare_built(struct db *db, sqlite3_stmt **st, enum db_table t,
                         int (*make)(enum db_table, struct vsl_buf *))
{
    struct vsl_buf sql;
    int r;

    if (*st)
        return 0;
    vsl_buf_init(&sql, 4096);
    r = make(t, &sql);
    if (r == 0)
        r = prepare(db, st, sql.data);
    vsl_buf_free(&sql);
    return r;
}

/* Binds one row of table t for vcenter into the staging table's insert and runs it: text[i]
 * (len[i] bytes, -1 up to the NUL; NULL for SQL NULL) for a TEXT or FN column, num[i] for the
 * others (VIM_UNKNOWN for SQL NULL). The strings only need to live until it returns. */
int db_insert_values(struct db *db, enum db_table t, const char *vcenter, const char *const *text,
                     const int *len, const int64_t *num)
{
    const struct db_table_def *d = &db_tables[t];
    sqlite3_stmt *st;
    int i, rc, r = prepare_built(db, &db->ins[t], t, insert_sql);

    if (r < 0)
        return r;
    st = db->ins[t];
    rc = sqlite3_bind_text(st, 1, vcenter, -1, SQLITE_STATIC);
    for (i = 0; i < d->ncols && rc == SQLITE_OK; i++) {
        const struct db_column *c = &d->cols[i];
        if (c->type == DB_TEXT || c->type == DB_FN)
            rc = text[i] ? sqlite3_bind_text(st, i + 2, text[i], len ? len[i] : -1, SQLITE_STATIC)
                         : sqlite3_bind_null(st, i + 2);
        else
            rc = num[i] == VIM_UNKNOWN ? sqlite3_bind_null(st, i + 2)
                                       : sqlite3_bind_int64(st, i + 2, num[i]);
    }
    if (rc != SQLITE_OK) {
        sqlite3_clear_bindings(st);
        return db_fail(db->h, rc, d->name);
    }
    return step_done(db, st);
}

/* Records the database's first refusal of a row of table: the writer's words when it was the
 * writer's, else SQLite's last (the connection is the sink caller's when there is no writer). */
static void stage_failed(struct db_snapshot *snap, int r, const char *table, const char *w)
{
    if (snap->err)
        return;
    snap->err = r;
    if (w)
        snprintf(snap->errmsg, sizeof(snap->errmsg), "%s", w);
    else
        snprintf(snap->errmsg, sizeof(snap->errmsg), "cannot stage a row of %s: %s", table,
                 snap->stager || r == -ENOMEM ? vsl_strerror(r) : sqlite3_errmsg(snap->db->h));
    log_debug("vcenter %s: %s", snap->vcenter, snap->errmsg);
}

/* Inserts one row of table t for the snapshot's vCenter, each column bound from its field of
 * the row struct: at once, or through the snapshot's writer thread (db/stage.c), which copies
 * it. Strings are borrowed: they only need to live until the sink call returns. NULL strings
 * and VIM_UNKNOWN numbers become SQL NULL. A row missing a NOT NULL string (a key) is skipped
 * (logged) rather than failing the poll over one object. */
static int insert(struct db_snapshot *snap, enum db_table t, const void *row)
{
    const struct db_table_def *d = &db_tables[t];
    char bufs[4][320];
    const char *text[DB_MAX_COLS];
    int64_t num[DB_MAX_COLS];
    int i, r, nbuf = 0;

    assert(d->ncols < DB_MAX_COLS);
    if (snap->err)
        return snap->err;
    for (i = 0; i < d->ncols; i++) {
        const struct db_column *c = &d->cols[i];
        const char *p = (const char *)row + c->off;
        text[i] = NULL;
        num[i] = VIM_UNKNOWN;
        if (c->type == DB_TEXT)
            text[i] = *(const char *const *)p;
        else if (c->type == DB_FN)
            text[i] = c->fn(row, bufs[nbuf++ % 4], sizeof(bufs[0]));
        else
            num[i] = c->type == DB_I64 ? *(const int64_t *)p : *(const int *)p;
        if ((c->type == DB_TEXT || c->type == DB_FN) && (c->flags & DB_NN) && !text[i]) {
            log_debug("db: %s: skipping a row without a key", d->name);
            return 0;
        }
    }
    if (snap->stager)
        r = db_stager_put(snap->stager, t, text, num);
    else
        r = db_insert_values(snap->db, t, snap->vcenter, text, NULL, num);
    if (r < 0)
        stage_failed(snap, r, d->name, snap->stager ? db_stager_error(snap->stager) : NULL);
    return r;
}

/* One sink callback per table: put_<sink>(ctx, row) inserts row into the table. */
#define PUT(ENUM, table, sink, est, since, rowid)                                                  \
    static int put_##sink(void *ctx, const struct vim_##sink *row)                                 \
    {                                                                                              \
        return insert(ctx, T_##ENUM, row);                                                         \
    }
DB_INVENTORY_TABLES(PUT)

/* The database holds the estate's names and layout: it is created 0600 whatever the umask
 * (SQLite gives its -wal and -shm files the database file's mode). An existing file keeps the
 * mode its owner chose. */
static int create_private(const char *path)
{
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

    if (fd < 0)
        return 0; /* there already, or not creatable: sqlite3_open_v2 says which */
    if (fchmod(fd, 0600) < 0)
        log_debug("db: %s: chmod 0600: %s", path, strerror(errno));
    close(fd);
    return 1;
}

/* A database this open created but could not write its schema into (a full disk) would be
 * left as an empty file: removed, with its -wal and -shm, so the next start creates it anew. */
static void remove_empty(const char *path)
{
    struct stat sb;
    char side[4096];

    if (stat(path, &sb) < 0 || sb.st_size != 0)
        return;
    unlink(path);
    snprintf(side, sizeof(side), "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof(side), "%s-shm", path);
    unlink(side);
}

/* A database is three files: itself, its -wal and its -shm. */
static const char *const db_files[] = {"", "-wal", "-shm"};

/* The directory path is in, into dir ("." when none). */
static void dir_of(const char *path, char *dir, size_t size)
{
    const char *slash = strrchr(path, '/');

    if (!slash)
        snprintf(dir, size, ".");
    else if (slash == path)
        snprintf(dir, size, "/");
    else
        snprintf(dir, size, "%.*s", (int)(slash - path), path);
}

/* The database in a directory another account owns is that account's (the service's
 * /var/lib/vslint): what root creates there running a one-shot command beside the daemon (the
 * file, its -wal and -shm) is given to it, so the daemon can still open them. Root's own
 * directories, and files another user owns, are left alone. */
static void give_to_dir_owner(const char *path)
{
    char dir[4096], f[4096];
    struct stat ds, fs;

    if (geteuid() != 0)
        return;
    dir_of(path, dir, sizeof(dir));
    if (stat(dir, &ds) < 0 || ds.st_uid == 0)
        return;
    for (size_t i = 0; i < sizeof(db_files) / sizeof(db_files[0]); i++) {
        snprintf(f, sizeof(f), "%s%s", path, db_files[i]);
        /* The directory is the service account's: it can swap a name for a symlink between a
         * look and a chown. So the file is opened without following links, and the one it
         * opened (a plain file of root's with one name) is the one handed over. */
        int fd = open(f, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
            continue;
        if (fstat(fd, &fs) == 0 && S_ISREG(fs.st_mode) && fs.st_uid == 0 && fs.st_nlink == 1 &&
            fchown(fd, ds.st_uid, ds.st_gid) < 0)
            log_debug("db: %s: chown to the directory's owner: %s", f, strerror(errno));
        close(fd);
    }
}

/* The names of uid and gid (their numbers when they have none), for messages. */
static void owner_names(uid_t uid, gid_t gid, char *user, char *group, size_t size)
{
    struct passwd pw, *p = NULL;
    struct group gr, *g = NULL;
    char buf[4096];

    if (getpwuid_r(uid, &pw, buf, sizeof(buf), &p) == 0 && p)
        snprintf(user, size, "%s", p->pw_name);
    else
        snprintf(user, size, "%u", (unsigned)uid);
    if (getgrgid_r(gid, &gr, buf, sizeof(buf), &g) == 0 && g)
        snprintf(group, size, "%s", g->gr_name);
    else
        snprintf(group, size, "%u", (unsigned)gid);
}

/* SQLite says "unable to open database file" or "attempt to write a readonly database", not
 * which file or why: the first of the database's files (or its directory) this process cannot
 * read and write is named, with its owner and mode and the fix, after *errmsg. */
static void add_access_hint(char **errmsg, const char *path)
{
    char f[4096], me[64], owner[64], group[64], hint[1024];
    struct stat st;
    int found = 0;

    if (!errmsg || !*errmsg)
        return;
    for (size_t i = 0; i <= sizeof(db_files) / sizeof(db_files[0]) && !found; i++) {
        if (i < sizeof(db_files) / sizeof(db_files[0]))
            snprintf(f, sizeof(f), "%s%s", path, db_files[i]);
        else
            dir_of(path, f, sizeof(f));
        found = stat(f, &st) == 0 && access(f, R_OK | W_OK | (S_ISDIR(st.st_mode) ? X_OK : 0)) < 0;
    }
    if (!found)
        return;
    owner_names(geteuid(), getegid(), me, group, sizeof(me));
    owner_names(st.st_uid, st.st_gid, owner, group, sizeof(owner));
    snprintf(hint, sizeof(hint),
             "%s: %s belongs to %s:%s (mode %04o) and vslint runs as %s: as root, chown %s: %s %s-wal "
             "%s-shm (one-shot commands as root on this database give it to %s by themselves: "
             "runuser -u %s -- vslint ... runs them as %s)",
             *errmsg, f, owner, group, (unsigned)(st.st_mode & 07777), me, me, path, path, path,
             me, me, me);
    char *m = strdup(hint);
    if (m) {
        free(*errmsg);
        *errmsg = m;
    }
}

/* vsl_addr(x): a server address in one written form, so that two spellings of one address
 * join (db-private.h DB_NFS_CANDIDATES): an IPv4 or IPv6 address as inet_ntop() writes it
 * ("FD00:0::A" -> "fd00::a"), anything else (a host name) in lower case; NULL stays NULL. */
static void addr_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    const unsigned char *in = sqlite3_value_text(argv[0]);
    int n = sqlite3_value_bytes(argv[0]);
    unsigned char a[sizeof(struct in6_addr)];
    char buf[INET6_ADDRSTRLEN + 1];

    (void)argc;
    if (!in)
        return; /* the result stays NULL */
    if (n < (int)sizeof(buf)) {
        memcpy(buf, in, (size_t)n + 1);
        int family = inet_pton(AF_INET, buf, a) == 1    ? AF_INET
                     : inet_pton(AF_INET6, buf, a) == 1 ? AF_INET6
                                                        : 0;
        if (family && inet_ntop(family, a, buf, sizeof(buf))) {
            sqlite3_result_text(ctx, buf, -1, SQLITE_TRANSIENT);
            return;
        }
    }
    char *low = sqlite3_malloc(n + 1);
    if (!low) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    for (int i = 0; i <= n; i++)
        low[i] = (char)(in[i] >= 'A' && in[i] <= 'Z' ? in[i] - 'A' + 'a' : in[i]);
    sqlite3_result_text(ctx, low, n, sqlite3_free);
}

int db_add_functions(sqlite3 *h)
{
    return sqlite3_create_function(h, "vsl_addr", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL,
                                   addr_fn, NULL, NULL);
}

/* Opens the connection: read-write (creating the file) for a writer, or read-only for a
 * reader, which then never takes a lock a writer or another process holding the write lock
 * (a backup tool, an admin's `BEGIN EXCLUSIVE`) could make it wait for: in WAL mode it reads
 * the last committed state beside them. No migration here. */
static int open_conn(const char *path, int readonly, struct db **out, char **errmsg)
{
    struct db *db;
    sqlite3_stmt *st = NULL;
    int rc, r, persist = 1;

    db = calloc(1, sizeof(*db));
    if (!db)
        return -ENOMEM;
    db->readonly = readonly;
    rc = sqlite3_open_v2(path, &db->h,
                         readonly ? SQLITE_OPEN_READONLY
                                  : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                         NULL);
    if (rc != SQLITE_OK) {
        db_set_errmsg(errmsg, "%s: %s", path, db->h ? sqlite3_errmsg(db->h) : sqlite3_errstr(rc));
        r = db_fail(db->h, rc, path);
        goto fail;
    }
    sqlite3_extended_result_codes(db->h, 1);
    rc = db_add_functions(db->h);
    if (rc != SQLITE_OK) {
        db_set_errmsg(errmsg, "%s: %s", path, sqlite3_errmsg(db->h));
        r = db_fail(db->h, rc, path);
        goto fail;
    }
    /* The -wal and -shm files stay when the last connection closes (the WAL is truncated after
     * each poll instead, db_checkpoint()): a reader on a full disk can then still open the
     * database, which it cannot when it would have to create them. */
    sqlite3_file_control(db->h, "main", SQLITE_FCNTL_PERSIST_WAL, &persist);
    /* Readers (the API) and the poll writers are separate connections; a writer holding the
     * lock briefly must not turn into an error on the other side. */
    sqlite3_busy_timeout(db->h, DB_BUSY_MS);

    /* WAL lets the API read the last committed snapshot while a poll is being written. The
     * default synchronous=FULL is kept: one commit per poll costs nothing, and a committed poll
     * then survives a power cut, not only a crash. A reader finds the mode in the file. */
    if (!readonly) {
        struct stat sb;
        /* A new file reclaims the pages pruning frees in small steps (db_prune()). SQLite
         * takes this only before the first table, and before WAL writes the header. */
        if (stat(path, &sb) == 0 && sb.st_size == 0)
            sqlite3_exec(db->h, "PRAGMA auto_vacuum = INCREMENTAL", NULL, NULL, NULL);
        rc = sqlite3_prepare_v2(db->h, "PRAGMA journal_mode = WAL", -1, &st, NULL);
        if (rc == SQLITE_OK)
            rc = sqlite3_step(st);
        if (rc != SQLITE_ROW) {
            db_set_errmsg(errmsg, "%s: %s", path, sqlite3_errmsg(db->h));
            r = db_fail(db->h, rc, path);
            goto fail;
        }
        db->wal = strcmp((const char *)sqlite3_column_text(st, 0), "wal") == 0;
        if (!db->wal)
            log_debug("db: %s: journal mode is %s, not wal", path, sqlite3_column_text(st, 0));
        sqlite3_finalize(st);
        st = NULL;
    } else if (sqlite3_prepare_v2(db->h, "PRAGMA journal_mode", -1, &st, NULL) == SQLITE_OK) {
        /* A reader only asks (one read of the header). Not an error here when it cannot: the
         * first query says why, as it did before; the mode is then taken as not WAL. */
        if (sqlite3_step(st) == SQLITE_ROW)
            db->wal = strcmp((const char *)sqlite3_column_text(st, 0), "wal") == 0;
        sqlite3_finalize(st);
        st = NULL;
    }
    rc = sqlite3_exec(db->h, readonly ? "PRAGMA query_only = ON" : "PRAGMA foreign_keys = ON",
                      NULL, NULL, NULL);
    if (rc != SQLITE_OK) {
        db_set_errmsg(errmsg, "%s: %s", path, sqlite3_errmsg(db->h));
        r = db_fail(db->h, rc, path);
        goto fail;
    }
    *out = db;
    return 0;

fail:
    sqlite3_finalize(st);
    db_close(db);
    return r;
}

int db_probe_open(const char *path, sqlite3 **h)
{
    char uri[4200], side[4200];
    struct stat sb;

    /* Without a -wal beside it, the file is opened immutable: a read-only connection to a WAL
     * database would otherwise create -wal and -shm files next to another program's database
     * (as root: files its owner then cannot open). With one, that WAL is part of the file. */
    snprintf(side, sizeof(side), "%s-wal", path);
    if (stat(side, &sb) == 0)
        return sqlite3_open_v2(path, h, SQLITE_OPEN_READONLY, NULL);
    struct vsl_buf b;
    vsl_buf_init(&b, sizeof(uri));
    int r = vsl_buf_addstr(&b, "file:");
    for (const char *p = path; r == 0 && *p; p++) {
        if (*p == '?' || *p == '#' || *p == '%')
            r = vsl_buf_printf(&b, "%%%02X", (unsigned char)*p);
        else
            r = vsl_buf_add(&b, p, 1);
    }
    if (r == 0)
        r = vsl_buf_addstr(&b, "?mode=ro&immutable=1");
    if (r < 0) {
        vsl_buf_free(&b);
        return sqlite3_open_v2(path, h, SQLITE_OPEN_READONLY, NULL);
    }
    int rc = sqlite3_open_v2(b.data, h, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL);
    vsl_buf_free(&b);
    return rc;
}

/* A file that exists is looked at read-only before the writer's open changes anything (the
 * switch to WAL rewrites the header): another program's database, or a newer vslint's, is
 * refused as it is. */
static int refuse_foreign(const char *path, char **errmsg)
{
    struct stat sb;
    sqlite3 *h = NULL;
    int version = 0, r = 0;

    if (stat(path, &sb) < 0 || sb.st_size == 0)
        return 0;
    int rc = db_probe_open(path, &h);
    if (rc == SQLITE_OK) {
        sqlite3_busy_timeout(h, DB_BUSY_MS);
        rc = db_user_version(h, &version);
    }
    if (rc == SQLITE_OK) {
        r = db_foreign(h, version, errmsg);
    } else if ((rc & 0xff) != SQLITE_NOTADB) {
        /* Not a database at all the writer's open says itself; anything else (busy, locked by
         * another program, unreadable) refuses: what the file is could not be told, and the
         * writer's open would change it. */
        db_set_errmsg(errmsg, "cannot tell whether it is a vslint database (%s): nothing was "
                      "changed; try again, or point [database] path at a file of vslint's own",
                      h ? sqlite3_errmsg(h) : sqlite3_errstr(rc));
        r = -VSL_EDB;
    }
    sqlite3_close(h);
    return r;
}

int db_open(const char *path, struct db **out, char **errmsg)
{
    struct db *db = NULL;
    int r, version = 0;

    assert(path && out);
    *out = NULL;
    if (errmsg)
        *errmsg = NULL;
    /* ":memory:" is SQLite's database in memory alone (`vslint record`'s scratch rows): no
     * file is looked at, created, or handed to a directory's owner under that name. */
    const int in_memory = !strcmp(path, DB_MEMORY);
    if (!in_memory && (r = refuse_foreign(path, errmsg)) < 0)
        return r;
    int created = in_memory ? 0 : create_private(path);
    r = open_conn(path, 0, &db, errmsg);
    if (r < 0) {
        if (created)
            remove_empty(path);
        add_access_hint(errmsg, path);
        return r;
    }
    /* In memory alone means the staging database too (ATTACH '' makes SQLite's temporary
     * database, a file under $TMPDIR unlinked at open, unless temporary storage is memory):
     * `vslint record`'s rows are not anonymized and must never be in a file. */
    if (in_memory && (r = exec(db, "PRAGMA temp_store = MEMORY")) < 0) {
        db_close(db);
        return r;
    }
    /* The migration takes the write lock: only when the file is older than this build (or new),
     * so opening a current database waits for no one. */
    if (db_user_version(db->h, &version) != SQLITE_OK || version != db_schema_version())
        r = db_migrate(db->h, errmsg);
    if (r < 0) {
        db_close(db);
        if (created)
            remove_empty(path);
        add_access_hint(errmsg, path);
        return r;
    }
    if (!in_memory)
        give_to_dir_owner(path);
    *out = db;
    return 0;
}

void db_memory(int64_t *used, int64_t *page_cache)
{
    sqlite3_int64 cur = 0, hi = 0;

    *used = sqlite3_memory_used();
    /* Without a page cache buffer of its own (SQLITE_CONFIG_PAGECACHE), the page caches'
     * pages are "overflow": malloc'd. Not all of them are counted: each connection's first
     * bulk allocation of pages (about 20) is malloc'd apart from this status, so this is a
     * lower bound; *used includes it all. */
    sqlite3_status64(SQLITE_STATUS_PAGECACHE_OVERFLOW, &cur, &hi, 0);
    *page_cache = cur;
}

void db_checkpoint(struct db *db)
{
    int rc, wal = 0, moved = 0;

    assert(db && !db->in_snapshot);
    if (db->readonly)
        return;
    /* TRUNCATE waits (through the busy handler) for every reader still using the WAL to end,
     * and meanwhile holds off every other writer: with the busy timeout of DB_BUSY_MS, a long
     * read (an API estate load, an administrator's open transaction) made the poll wait 5 s
     * before it was reported, and another vCenter's commit waited as long, up to its own busy
     * timeout. So it waits DB_CHECKPOINT_BUSY_MS at most. When the busy handler gives up,
     * SQLite goes on as a PASSIVE checkpoint (it copies what no reader needs, waiting for no
     * one) and returns SQLITE_BUSY; the WAL keeps its size until a later checkpoint finds no
     * reader. Every checkpoint is this one: after a poll or round, and db_close()'s. */
    sqlite3_busy_timeout(db->h, DB_CHECKPOINT_BUSY_MS);
    rc = sqlite3_wal_checkpoint_v2(db->h, "main", SQLITE_CHECKPOINT_TRUNCATE, &wal, &moved);
    sqlite3_busy_timeout(db->h, DB_BUSY_MS);
    if (rc == SQLITE_BUSY)
        log_debug("db: checkpoint: the WAL is not truncated, a reader holds it (%d of %d pages "
                  "copied)",
                  moved, wal);
    else if (rc != SQLITE_OK)
        log_debug("db: checkpoint: %s (%d of %d WAL pages copied)", sqlite3_errmsg(db->h),
                  moved, wal);
}

int db_open_reader(const char *path, struct db **out, char **errmsg)
{
    struct db *db = NULL;
    struct stat sb;
    int r, version = 0, rc;

    assert(path && out);
    *out = NULL;
    if (errmsg)
        *errmsg = NULL;
    /* A file not made yet, or older than this build, is the writer's to create or migrate. */
    if (stat(path, &sb) < 0 || sb.st_size == 0)
        return db_open(path, out, errmsg);
    if ((r = refuse_foreign(path, errmsg)) < 0)
        return r;
    r = open_conn(path, 1, &db, errmsg);
    if (r < 0) {
        add_access_hint(errmsg, path);
        return r;
    }
    rc = db_user_version(db->h, &version);
    if (rc != SQLITE_OK) {
        db_set_errmsg(errmsg, "%s: cannot read the schema version: %s", path,
                      sqlite3_errmsg(db->h));
        r = db_fail(db->h, rc, path);
        db_close(db);
        return r;
    }
    if ((r = db_foreign(db->h, version, errmsg)) < 0) {
        db_close(db);
        return r;
    }
    if (version < db_schema_version()) {
        db_close(db);
        return db_open(path, out, errmsg);
    }
    give_to_dir_owner(path); /* the first read may have made the -shm */
    *out = db;
    return 0;
}

int db_changed(struct db *db)
{
    sqlite3_stmt *st;
    int64_t v;
    int r = db_stmt(db, "PRAGMA data_version", &st), rc;

    if (r < 0)
        return r;
    rc = sqlite3_step(st);
    v = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    db_stmt_done(db, st);
    if (rc != SQLITE_ROW)
        return db_fail(db->h, rc, "PRAGMA data_version");
    r = !db->data_version_read || v != db->data_version;
    db->data_version = v;
    db->data_version_read = 1;
    return r;
}

void db_close(struct db *db)
{
    int i;

    if (!db)
        return;
    /* The WAL persists (open_conn()): left empty, not at the size of the last poll, unless a
     * reader holds it past DB_CHECKPOINT_BUSY_MS (see db_checkpoint()). */
    if (db->h && !db->readonly && !db->in_snapshot)
        db_checkpoint(db);
    for (i = 0; i < T_NTABLES; i++) {
        sqlite3_finalize(db->ins[i]);
        sqlite3_finalize(db->del[i]);
        sqlite3_finalize(db->copy[i]);
        sqlite3_finalize(db->copy_keep[i]);
        sqlite3_finalize(db->others[i]);
        sqlite3_finalize(db->trunc[i]);
        sqlite3_finalize(db->xfer[i]);
    }
    db_stmt_free(db);
    for (i = 0; i < DB_NPAGE_KINDS; i++) {
        sqlite3_finalize(db->page_count[i]);
        for (int j = 0; j < 4; j++)
            sqlite3_finalize(db->page[i][j / 2][j % 2]);
    }
    /* close_v2: the handle goes away once nothing uses it, even if a caller leaked a statement. */
    sqlite3_close_v2(db->h);
    free(db);
}

static void snapshot_free(struct db_snapshot *snap)
{
    if (!snap)
        return;
    assert(!snap->stager);
    snap->db->in_snapshot = 0;
    free(snap->vcenter);
    free(snap->url);
    for (size_t i = 0; i < snap->nnotes; i++)
        free(snap->notes[i].key);
    free(snap->notes);
    free(snap);
}

/* Creates the staging tables on this connection: in a database of their own, attached for the
 * poll and detached after it. Writing them takes no lock on the database, and detaching
 * deletes the file whole: emptying the tables (DELETE) instead read and freed every page and
 * journaled them, some 50,000 reads and writes and a twentieth of a poll's CPU at 20,000 VMs.
 * Its journal is kept in memory: it holds only the pages the tables had before the staging
 * transaction, none but the schema's. */
static int stage_tables(struct db *db)
{
    struct vsl_buf ddl;
    int r;

    if (db->staged)
        return 0;
    r = exec(db, "ATTACH '' AS " DB_STAGE_SCHEMA);
    if (r < 0)
        return r;
    db->staged = 1;
    r = exec(db, "PRAGMA " DB_STAGE_SCHEMA ".journal_mode = MEMORY");
    vsl_buf_init(&ddl, 256 * 1024);
    if (r == 0)
        r = db_stage_ddl(&ddl);
    if (r == 0)
        r = exec(db, ddl.data);
    vsl_buf_free(&ddl);
    return r;
}

/* Drops the staging tables (outside any transaction), so what a poll staged costs no space
 * until the next one. The statements that name them are prepared again on their next use. */
static int stage_clear(struct db *db)
{
    int r = db->staged ? exec(db, "DETACH " DB_STAGE_SCHEMA) : 0;

    if (r == 0)
        db->staged = 0;
    return r;
}

int db_snapshot_begin(struct db *db, const char *vcenter, const char *url, struct db_snapshot **out,
                      struct vim_sink *sink)
{
    return db_snapshot_open(db, vcenter, url, 0, out, sink);
}

int db_snapshot_open(struct db *db, const char *vcenter, const char *url, int keep,
                     struct db_snapshot **out, struct vim_sink *sink)
{
    struct db_snapshot *snap;
    int r;

    assert(db && vcenter && out && sink);
    assert(!db->in_snapshot && !db->readonly);
    *out = NULL;
    snap = calloc(1, sizeof(*snap));
    if (!snap)
        return -ENOMEM;
    snap->db = db;
    snap->vcenter = strdup(vcenter);
    snap->url = url ? strdup(url) : NULL;
    if (!snap->vcenter || (url && !snap->url)) {
        r = -ENOMEM;
        goto fail;
    }

    /* The rows go to the staging tables while vCenter sends them, however slowly: the
     * database's write lock is taken only in db_snapshot_commit(), for the copy. A deferred
     * transaction that writes only the staging database locks nothing in the database. A
     * previous poll's staged rows must be gone. */
    r = stage_clear(db);
    if (r == 0)
        r = stage_tables(db);
    if (r < 0)
        goto fail;
    r = exec(db, "BEGIN");
    if (r < 0)
        goto fail;
    db->in_snapshot = 1;

    snap->keep = keep;
    /* A full poll's rows are inserted by a thread of their own; an update's are a few, and
     * its notes and removals interleave with them. Without the thread (none could be made),
     * the sink's caller inserts them. */
    if (!keep && db_stager_start(db, snap->vcenter, &snap->stager) < 0)
        log_debug("db: no writer thread for %s: rows inserted by the poll", snap->vcenter);
#define SINK(ENUM, table, sink, est, since, rowid) .sink = put_##sink,
    *sink = (struct vim_sink){.ctx = snap, DB_INVENTORY_TABLES(SINK)};
#undef SINK
    *out = snap;
    return 0;

fail:
    db_snapshot_abort(snap);
    return r;
}

/* Runs st with ?1 bound to the snapshot's vCenter: 1 if it returned a row, 0 if not. */
static int step_vcenter(struct db_snapshot *snap, sqlite3_stmt *st)
{
    int rc = db_bind(st, DB_TEXT(snap->vcenter)), r;

    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    r = rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : db_fail(snap->db->h, rc, sqlite3_sql(st));
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return r;
}

/* Whether table t and its staging table have the same columns in the same order, so that
 * "INSERT INTO t SELECT * FROM stage_t" copies each value into its own column (the migrations
 * are held to the column lists by tests/unit/test_db.c, but a copy that could shift values
 * must not rest on that alone). 1 yes, 0 no, or an error. */
static int same_columns(struct db *db, enum db_table t)
{
    static const char sql[] =
        "SELECT count(*) = (SELECT count(*) FROM pragma_table_xinfo(?1, 'main')) AND count(*) = "
        "(SELECT count(*) FROM pragma_table_xinfo(?2, '" DB_STAGE_SCHEMA "')) FROM "
        "pragma_table_xinfo(?1, 'main') m JOIN pragma_table_xinfo(?2, '" DB_STAGE_SCHEMA "') s "
        "ON s.cid = m.cid AND s.name = m.name "
        "AND s.hidden = 0 AND m.hidden = 0";
    char stage[96];
    sqlite3_stmt *st = NULL;
    int r;

    snprintf(stage, sizeof(stage), DB_STAGE_PREFIX "%s", db_table_name(t));
    r = db_row(db->h, sql, &st, "comparing columns", DB_TEXT(db_table_name(t)), DB_TEXT(stage));
    if (r == 0)
        r = sqlite3_column_int(st, 0) == 1;
    sqlite3_finalize(st);
    return r;
}

/* The copy of table t from its staging table: "SELECT *" when the columns line up, which lets
 * SQLite copy the staged records and index entries as they are, in order, into an empty
 * table, instead of decoding and re-encoding each row; else the columns named one by one. */
static int prepare_copy(struct db *db, enum db_table t, sqlite3_stmt **out)
{
    char sql[160];
    int r;

    if (!db->xfer[t] && !db->copy[t]) {
        r = same_columns(db, t);
        if (r < 0)
            return r;
        if (r == 1) {
            snprintf(sql, sizeof(sql),
                     "INSERT INTO main.%s SELECT * FROM " DB_STAGE_SCHEMA "." DB_STAGE_PREFIX "%s",
                     db_table_name(t), db_table_name(t));
            r = prepare(db, &db->xfer[t], sql);
        } else {
            log_debug("db: %s: its columns differ from the staging table's, copied by name",
                      db_table_name(t));
            r = prepare_built(db, &db->copy[t], t, copy_sql);
        }
        if (r < 0)
            return r;
    }
    *out = db->xfer[t] ? db->xfer[t] : db->copy[t];
    return 0;
}

/* Removes the vCenter's previous rows of table t. When the table holds no other vCenter's
 * rows (one vCenter, the usual case) it is emptied whole, which SQLite does by freeing its
 * pages instead of deleting row by row and index entry by index entry; the copy that follows
 * then finds the table empty. */
static int remove_previous(struct db_snapshot *snap, enum db_table t)
{
    struct db *db = snap->db;
    const char *name = db_table_name(t);
    char sql[160];
    int r;

    snprintf(sql, sizeof(sql),
             "SELECT 1 FROM main.%s WHERE vcenter < ?1 UNION ALL SELECT 1 FROM main.%s WHERE "
             "vcenter > ?1 LIMIT 1",
             name, name);
    r = prepare(db, &db->others[t], sql);
    if (r == 0)
        r = step_vcenter(snap, db->others[t]);
    if (r == 0) {
        snprintf(sql, sizeof(sql), "DELETE FROM main.%s", name);
        r = prepare(db, &db->trunc[t], sql);
        return r < 0 ? r : step_done(db, db->trunc[t]);
    }
    if (r < 0)
        return r;
    snprintf(sql, sizeof(sql), "DELETE FROM main.%s WHERE vcenter = ?1", name);
    r = prepare(db, &db->del[t], sql);
    if (r == 0)
        r = step_vcenter(snap, db->del[t]);
    return r;
}

/* Inside the write transaction: replaces the vCenter's rows of every table with the staged
 * ones. The previous snapshot goes in the same transaction: readers see it until commit. An
 * update (snap->keep) removes nothing: it adds the staged rows, replacing those of the same key.
 * For a full poll, copied[t] is the number of rows the copy put into table t: every staged row
 * (the staging tables have the tables' keys, so a row the server sent twice is one row), as
 * SQLite counts an INSERT's rows, so counting them needs no scan of the staging tables. */
static int copy_staged(struct db_snapshot *snap, int64_t copied[T_NTABLES])
{
    struct db *db = snap->db;
    sqlite3_stmt *copy = NULL;
    int i, r = 0;

    for (i = 0; i < T_NTABLES && r == 0; i++) {
        if (snap->keep) {
            r = prepare_built(db, &db->copy_keep[i], i, copy_keep_sql);
            if (r == 0)
                r = step_done(db, db->copy_keep[i]);
            continue;
        }
        r = remove_previous(snap, i);
        if (r == 0)
            r = prepare_copy(db, i, &copy);
        if (r == 0)
            r = step_done(db, copy);
        if (r == 0 && copied)
            copied[i] = sqlite3_changes(db->h);
    }
    return r;
}

static char *counts_json(const int64_t counts[DB_NKINDS])
{
    json_t *o = json_object();
    char *s = NULL;
    int k;

    if (!o)
        return NULL;
    for (k = 0; k < DB_NKINDS; k++) {
        if (json_object_set_new(o, db_kind_name(k), json_integer(counts[k])) < 0)
            goto out;
    }
    s = json_dumps(o, JSON_COMPACT);
out:
    json_decref(o);
    return s;
}

/* counts_json of a round added to a row: the {"changed": {type: n}} of both, summed. NULL when
 * out of memory; a row whose counts cannot be read keeps the round's alone. */
static char *sum_changed(const char *row, const char *round)
{
    json_t *a = row ? json_loads(row, 0, NULL) : NULL, *b = round ? json_loads(round, 0, NULL) : NULL;
    json_t *ca = json_object_get(a, "changed"), *cb = json_object_get(b, "changed");
    const char *type;
    json_t *n;
    char *s = NULL;

    if (!json_is_object(ca) || !json_is_object(cb)) {
        /* A failed round changed nothing: the row's counts stay. */
        const char *keep = json_is_object(cb) || !row ? round : row;
        s = strdup(keep ? keep : "{}");
        goto out;
    }
    json_object_foreach(cb, type, n) {
        json_int_t sum = json_integer_value(json_object_get(ca, type)) + json_integer_value(n);
        if (json_object_set_new(ca, type, json_integer(sum)) < 0)
            goto out;
    }
    s = json_dumps(a, JSON_COMPACT);
out:
    json_decref(a);
    json_decref(b);
    return s;
}

/* The id of vcenter's last polls row when p, an incremental round, belongs to it: that row is
 * an incremental one whose last round began in the same round window as p (windows counted from
 * the epoch, so a window that divides a day never straddles midnight and the history's days
 * stay apart). 0 when p needs a row of its own; *counts (the caller's) that row's counts_json. */
static int64_t window_row(struct db *db, const char *vcenter, const struct db_poll_rec *p,
                          char **counts)
{
    static const char sql[] = "SELECT id, mode, started_ms, counts_json FROM polls"
                              " WHERE vcenter = ?1 ORDER BY id DESC LIMIT 1";
    sqlite3_stmt *st = NULL;
    int64_t id = 0, w = db->round_window_ms;

    *counts = NULL;
    if (w <= 0 || !p->mode || strcmp(p->mode, "incremental") ||
        db_row(db->h, sql, &st, "reading the last poll", DB_TEXT(vcenter)) < 0)
        goto out;
    const char *mode = (const char *)sqlite3_column_text(st, 1);
    int64_t started = sqlite3_column_int64(st, 2);
    if (mode && !strcmp(mode, "incremental") && started / w == p->started_ms / w) {
        const char *c = (const char *)sqlite3_column_text(st, 3);
        if (!c || (*counts = strdup(c)))
            id = sqlite3_column_int64(st, 0);
    }
out:
    sqlite3_finalize(st);
    return id;
}

/* Adds a row to polls, or a round to its window's row (window_row()), and, unless p->row_only,
 * points the vCenter at it. Runs inside the caller's transaction. */
static int record_poll(struct db *db, const char *vcenter, const char *url, const char *kind,
                       const struct db_poll_rec *p)
{
    static const char poll_sql[] =
        "INSERT INTO polls (vcenter, url, started_ms, finished_ms, ok, error, counts_json, mode,"
        " version, rounds, changes, bytes, errors, busy_ms, longest_ms)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 1, ?10, ?11, 1 - ?5, ?4 - ?3, ?4 - ?3)";
    /* A row written before version 11 is one round: its NULLs count as that round's. The row
     * says how its latest round ended (ok, error), as the vCenter's state and the digest read
     * it; the failed rounds of the window are counted in errors. */
    static const char add_sql[] =
        "UPDATE polls SET started_ms = ?2, finished_ms = ?3, ok = ?4,"
        " error = ?5, counts_json = ?6, version = coalesce(?7, version),"
        " rounds = coalesce(rounds, 1) + 1, changes = coalesce(changes, 0) + ?8,"
        " bytes = coalesce(bytes, 0) + ?9, errors = coalesce(errors, 1 - ok) + 1 - ?4,"
        " busy_ms = coalesce(busy_ms, finished_ms - started_ms) + ?3 - ?2,"
        " longest_ms = max(coalesce(longest_ms, finished_ms - started_ms), ?3 - ?2)"
        " WHERE id = ?1";
    /* A failed poll keeps last_success_ms and the url we last reached it by (if none given). */
    static const char vc_sql[] =
        "INSERT INTO vcenters (name, url, last_poll_id, last_success_ms, last_error, kind)"
        " VALUES (?1, ?2, ?3, CASE WHEN ?5 IS NULL THEN ?4 END, ?5, ?6)"
        " ON CONFLICT (name) DO UPDATE SET url = coalesce(excluded.url, url),"
        " last_poll_id = excluded.last_poll_id,"
        " last_success_ms = coalesce(excluded.last_success_ms, last_success_ms),"
        " last_error = excluded.last_error, kind = excluded.kind";
    char *row_counts = NULL, *counts = NULL;
    int64_t id = window_row(db, vcenter, p, &row_counts);
    struct db_arg changes = p->mode && !strcmp(p->mode, "incremental") ? DB_INT(p->changes)
                                                                         : DB_NULL;
    struct db_arg bytes = p->bytes > 0 ? DB_INT(p->bytes) : DB_NULL;
    int r;

    if (id && !(counts = sum_changed(row_counts, p->counts))) {
        r = -ENOMEM;
        goto out;
    }
    if (id)
        r = db_run(db->h, add_sql, "adding a round to its window", DB_INT(id),
                   DB_INT(p->started_ms), DB_INT(p->finished_ms), DB_INT(p->error == NULL),
                   DB_TEXT(p->error), DB_TEXT(counts), DB_TEXT(p->version), DB_INT(p->changes),
                   DB_INT(p->bytes));
    else
        r = db_run(db->h, poll_sql, "recording a poll", DB_TEXT(vcenter), DB_TEXT(url),
                   DB_INT(p->started_ms), DB_INT(p->finished_ms), DB_INT(p->error == NULL),
                   DB_TEXT(p->error), DB_TEXT(p->counts), DB_TEXT(p->mode ? p->mode : "full"),
                   DB_TEXT(p->version), changes, bytes);
    if (r < 0 || p->row_only)
        goto out;
    if (!id)
        id = sqlite3_last_insert_rowid(db->h);
    r = db_run(db->h, vc_sql, "recording a poll", DB_TEXT(vcenter), DB_TEXT(url), DB_INT(id),
               DB_INT(p->finished_ms), DB_TEXT(p->error), DB_TEXT(kind));
out:
    free(row_counts);
    free(counts);
    return r;
}

/* When vcenter's last successful poll finished (before this one is recorded), 0 if never. */
static int last_success(struct db *db, const char *vcenter, int64_t *out)
{
    sqlite3_stmt *st = NULL;
    int r = db_row(db->h, "SELECT last_success_ms FROM vcenters WHERE name = ?1", &st,
                   "reading the last poll", DB_TEXT(vcenter));

    *out = r == 0 ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    return r == -VSL_ENOTFOUND ? 0 : r;
}

void db_set_capacity_retention(struct db *db, int days)
{
    assert(db && days >= 0);
    db->capacity_retention_ms = (int64_t)days * 86400000;
}

int db_snapshot_sync(struct db_snapshot *snap)
{
    char why[256] = "";
    int r;

    assert(snap);
    if (snap->err)
        return snap->err;
    r = db_stager_stop(snap->stager, why, sizeof(why));
    snap->stager = NULL;
    if (r < 0)
        stage_failed(snap, r, "the staging tables", why[0] ? why : NULL);
    return r;
}

size_t db_snapshot_stage_memory(struct db_snapshot *snap)
{
    return snap->stager ? db_stager_memory(snap->stager) : 0;
}

const char *db_snapshot_error(const struct db_snapshot *snap)
{
    return snap && snap->err ? snap->errmsg : NULL;
}

int db_snapshot_commit(struct db_snapshot *snap, int64_t started_ms, int64_t finished_ms,
                       int64_t counts[DB_NKINDS])
{
    int64_t n[DB_NKINDS] = {0}, copied[T_NTABLES] = {0}, prev = 0;
    struct timespec t0, t1;
    char *cj = NULL;
    int r;

    /* A full poll's snapshot: an update's (db_update_begin()) ends in db_snapshot_apply(), and
     * its copy fills no copied[] to count from. */
    assert(snap && !snap->keep);
    r = db_snapshot_sync(snap);
    if (r < 0)
        goto fail;
    /* The staging ends; the write lock is taken for as long as the copy takes. IMMEDIATE
     * takes it now, so a concurrent writer is waited for here (busy timeout). */
    r = exec(snap->db, "COMMIT");
    if (r == 0)
        r = exec(snap->db, "BEGIN IMMEDIATE");
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (r == 0)
        r = copy_staged(snap, copied);
    /* What the poll stored, per kind: the rows each copy inserted. */
    for (int k = 0; k < DB_NKINDS; k++)
        n[k] = copied[kind_table[k]];
    if (r == 0 && !(cj = counts_json(n)))
        r = -ENOMEM;
    /* The capacity history reads the copied rows, and the previous success before this poll
     * is recorded as one. */
    if (r == 0)
        r = last_success(snap->db, snap->vcenter, &prev);
    /* An array's snapshot has no datastore: no capacity point to record. */
    if (r == 0 && !snap->kind)
        r = db_capacity_record(snap->db, snap->vcenter, finished_ms, prev);
    if (r == 0)
        r = record_poll(snap->db, snap->vcenter, snap->url, snap->kind,
                        &(struct db_poll_rec){.mode = "full", .started_ms = started_ms,
                                              .finished_ms = finished_ms, .counts = cj});
    if (r == 0)
        r = exec(snap->db, "COMMIT");
    if (r < 0)
        goto fail;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    log_debug("db: snapshot of %s: write lock held %.3f s", snap->vcenter,
              (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
    if (counts)
        memcpy(counts, n, sizeof(n));
    free(cj);
    stage_clear(snap->db);
    snapshot_free(snap);
    return 0;

fail:
    free(cj);
    db_snapshot_abort(snap);
    return r;
}

int db_snapshot_note(struct db_snapshot *snap, int tag, const char *key)
{
    assert(snap && snap->keep && key && tag >= 0 && tag < DB_NOTE_TAGS);
    if (vsl_grow(&snap->notes, &snap->cap, snap->nnotes, sizeof(*snap->notes), 16) < 0)
        return -ENOMEM;
    snap->notes[snap->nnotes].key = strdup(key);
    if (!snap->notes[snap->nnotes].key)
        return -ENOMEM;
    snap->notes[snap->nnotes++].tag = tag;
    snap->noted[tag]++;
    return 0;
}

size_t db_snapshot_noted(const struct db_snapshot *snap, int tag)
{
    assert(snap && tag >= 0 && tag < DB_NOTE_TAGS);
    return snap->noted[tag];
}

int db_snapshot_apply(struct db_snapshot *snap,
                      int (*forget)(struct db *db, const char *vcenter, int tag, const char *key),
                      const struct db_poll_rec *poll)
{
    struct timespec t0, t1;
    int r;

    assert(snap && snap->keep && forget);
    /* As in db_snapshot_commit(): the staging ends, the write lock lasts as long as the
     * removals and the copy. */
    r = exec(snap->db, "COMMIT");
    if (r == 0)
        r = exec(snap->db, "BEGIN IMMEDIATE");
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (size_t i = 0; i < snap->nnotes && r == 0; i++)
        r = forget(snap->db, snap->vcenter, snap->notes[i].tag, snap->notes[i].key);
    if (r == 0)
        r = copy_staged(snap, NULL);
    if (r == 0 && poll)
        r = record_poll(snap->db, snap->vcenter, NULL, NULL, poll);
    if (r == 0)
        r = exec(snap->db, "COMMIT");
    if (r < 0) {
        db_snapshot_abort(snap);
        return r;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    log_debug("db: update of %s (%zu objects): write lock held %.3f s", snap->vcenter,
              snap->nnotes,
              (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
    stage_clear(snap->db);
    snapshot_free(snap);
    return 0;
}

void db_snapshot_abort(struct db_snapshot *snap)
{
    if (!snap)
        return;
    db_stager_stop(snap->stager, NULL, 0); /* its error is the one being handled, or moot */
    snap->stager = NULL;
    /* A failed COMMIT may already have rolled back; ROLLBACK then fails harmlessly. */
    if (sqlite3_get_autocommit(snap->db->h) == 0)
        exec(snap->db, "ROLLBACK");
    stage_clear(snap->db);
    snapshot_free(snap);
}

void db_snapshot_set_kind(struct db_snapshot *snap, const char *kind)
{
    assert(snap);
    snap->kind = kind;
}

int db_poll_failed(struct db *db, const char *vcenter, const char *url, int64_t started_ms,
                   int64_t finished_ms, const char *error)
{
    return db_record_failure(db, vcenter, url, NULL,
                             &(struct db_poll_rec){.mode = "full", .started_ms = started_ms,
                                                   .finished_ms = finished_ms, .error = error});
}

int db_array_poll_failed(struct db *db, const char *array, const char *url, const char *kind,
                         int64_t started_ms, int64_t finished_ms, const char *error)
{
    return db_record_failure(db, array, url, kind,
                             &(struct db_poll_rec){.mode = "full", .started_ms = started_ms,
                                                   .finished_ms = finished_ms, .error = error});
}

int db_record_failure(struct db *db, const char *vcenter, const char *url, const char *kind,
                      const struct db_poll_rec *poll)
{
    struct db_poll_rec p = *poll;
    int r;

    assert(db && vcenter && poll);
    assert(!db->in_snapshot);
    if (!p.error)
        p.error = "unknown error";
    r = exec(db, "BEGIN IMMEDIATE");
    if (r < 0)
        return r;
    r = record_poll(db, vcenter, url, kind, &p);
    if (r < 0)
        goto fail;
    r = exec(db, "COMMIT");
    if (r < 0)
        goto fail;
    return 0;

fail:
    if (sqlite3_get_autocommit(db->h) == 0)
        exec(db, "ROLLBACK");
    return r;
}
