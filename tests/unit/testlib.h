/* Helpers the unit tests share: running one check and reading its findings (test_checks_*.c),
 * a database file in a temporary directory filled through a snapshot sink (test_db.c,
 * test_findings.c, test_estate.c), a sink that writes decoded rows as lines of text
 * (test_decode.c, test_alarms.c), and the simulator's answers captured in tests/unit/data/
 * (test_decode.c, test_estate.c). They fail the running cmocka test; link tests/unit/testlib.c. */
#ifndef TESTLIB_H
#define TESTLIB_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "checks/check.h"
#include "checks/engine.h"
#include "db/db.h"
#include "vsphere/decode.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define NONE (-1) /* "no finding" in a want column */

/* ---- checks ---- */

/* The findings of c over e at now (unix seconds) with settings s (NULL: the defaults); the
 * run must succeed. The caller frees them with chk_results_free(). */
struct chk_results tl_run(const struct check *c, const struct chk_settings *s,
                          const struct estate *e, int64_t now);

/* The finding on object name with detail (NULL: any detail), or NULL. Two fail the test. */
/* The finding on name (a part of a host: "HOST PART"), and detail when given. */
const struct chk_finding *tl_find(const struct chk_results *r, const char *name,
                                  const char *detail);

/* Asserts that name has one finding, of severity want and with a message, or none (NONE). */
void tl_want(const struct chk_results *r, const char *name, int want);

/* Host bus adapters of the kinds the tests need, in device order, for est_host.hbas (a path's
 * hba is its index here). */
enum tl_hba {
    TL_RAID0,             /* vmhba0: local SCSI/RAID, pvscsi */
    TL_FC2, TL_FC3,       /* vmhba2, vmhba3: Fibre Channel, qlnativefc */
    TL_SAS4,              /* vmhba4: SAS, lsi_msgpt3 */
    TL_NVME5,             /* vmhba5: local NVMe */
    TL_RDMA6, TL_RDMA7,   /* vmhba6, vmhba7: NVMe over RDMA */
    TL_SAS8,              /* vmhba8: SAS, lsi_msgpt3 */
    TL_LPFC10, TL_LPFC11, /* vmhba10, vmhba11: Fibre Channel, lpfc */
    TL_SWISCSI,           /* vmhba64: software iSCSI, iscsi_vmk */
    TL_HWISCSI,           /* vmhba65: dependent hardware iSCSI, bnx2i */
    TL_N_HBAS
};
extern struct est_hba tl_hbas[TL_N_HBAS];
/* A path through adapter i of tl_hbas, whose device is dev, to target t, in state s. */
#define TL_PATH(dev, i, t, s)                                                                      \
    {                                                                                              \
        .name = dev ":C0:T" #t ":L1", .state = s, .adapter = dev, .hba = i                         \
    }

/* tl_want() for every row of the table rows[0..n): the object named by the row's string member
 * name has the severity in its int member want (or NONE: no finding). Returns how many rows
 * want a finding. */
#define TL_WANT_EACH(r, rows, n, name, want)                                                       \
    tl_want_each_in((r), (rows), (n), sizeof((rows)[0]), offsetof(__typeof__((rows)[0]), name),    \
                    offsetof(__typeof__((rows)[0]), want))
size_t tl_want_each_in(const struct chk_results *r, const void *rows, size_t n, size_t size,
                       size_t name_offset, size_t want_offset);

/* Asserts that the results keep the earlier findings of the object moref, unverified. */
void tl_want_unverified(const struct chk_results *r, const char *moref);

/* Two active paths, one through each adapter of a pair: Fibre Channel (vmhba2 and vmhba3) and
 * SAS (vmhba4 and vmhba8). */
extern struct est_path tl_paths_fc[2], tl_paths_sas[2];

/* The evidence's value at key, which must be of that type. */
double tl_ev_num(const struct chk_finding *f, const char *key);
json_int_t tl_ev_int(const struct chk_finding *f, const char *key);
int tl_ev_bool(const struct chk_finding *f, const char *key);
const char *tl_ev_str(const struct chk_finding *f, const char *key);

/* The string at evidence[key][i], or, with field, at evidence[key][i][field]; NULL when there
 * is none. */
const char *tl_ev_item(const struct chk_finding *f, const char *key, size_t i, const char *field);

/* One row of a table of wanted findings: the object (named as tl_find() names it), the severity
 * of its one finding or NONE for none, and the string its evidence holds at the table's key. */
struct tl_want_row {
    const char *name;
    int sev;
    const char *ev;
};

/* Asserts every row of want[0..n) with tl_want() (and, for a finding, that its object type is
 * type and its evidence's ev_key is the row's ev, where they are not NULL), and that r holds no
 * finding the table does not want. */
void tl_want_table(const struct chk_results *r, const struct tl_want_row *want, size_t n,
                   const char *type, const char *ev_key);

/* tl_run() with c's parameter name set to value, the others at their defaults. */
struct chk_results tl_run_with(const struct check *c, const char *name, double value,
                               const struct estate *e, int64_t now);

/* Sets c's parameter name in s; c must have it. */
void tl_set_param(const struct check *c, struct chk_settings *s, const char *name, double value);
/* c's default settings with parameter name set to value. */
struct chk_settings tl_with_param(const struct check *c, const char *name, double value);

/* The element of the array a[0..n) whose string member field is key (with strcmp); fails the
 * test with "no WHAT KEY" when there is none. */
#define TL_FIND(a, n, field, key, what)                                                            \
    ((__typeof__(&(a)[0]))tl_find_in((a), (n), sizeof((a)[0]),                                     \
                                     offsetof(__typeof__((a)[0]), field), (key), (what)))
const void *tl_find_in(const void *a, size_t n, size_t size, size_t offset, const char *key,
                       const char *what);

struct vsl_buf;
/* Appends the line fmt, ... and a newline to rows; running out of room fails the test. */
void tl_row(struct vsl_buf *rows, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- tests that register themselves ---- */

/* TEST(name) { ... } defines the cmocka test name and registers it for tl_main(), so that a
 * test written is a test run. TEST_WITH(name, setup, teardown) does the same with cmocka setup
 * and teardown functions (either NULL) run around it. */
#define TEST_WITH(name, setup, teardown)                                                           \
    static void name(void **state);                                                                \
    __attribute__((constructor)) static void tl_register_##name(void)                              \
    {                                                                                              \
        tl_register(#name, name, setup, teardown, __LINE__);                                       \
    }                                                                                              \
    static void name(void **state)
#define TEST(name) TEST_WITH(name, NULL, NULL)

void tl_register(const char *name, void (*test)(void **state), int (*setup)(void **state),
                 int (*teardown)(void **state), int line);

/* Runs the tests registered with TEST(), in the order they are written, as one cmocka group;
 * main() returns its result. */
int tl_main(void);

/* ---- the database ---- */

/* The state of a test run with tl_db_setup/tl_db_setup_open and tl_db_teardown. */
struct tl_dbfile {
    char dir[64];   /* a new directory in /tmp */
    char path[128]; /* dir/vslint.db */
    struct db *db;  /* open with tl_db_setup_open, else NULL */
};

/* cmocka setup functions: *state becomes a struct tl_dbfile; the file is not created
 * (tl_db_setup) or opened with db_open (tl_db_setup_open). */
int tl_db_setup(void **state);
int tl_db_setup_open(void **state);
/* Closes the database, removes the file, its WAL, shared-memory and journal files, the
 * directory, and frees the state. */
int tl_db_teardown(void **state);

/* Writes rows through a snapshot's sink. */
typedef void tl_fill_fn(const struct vim_sink *sink, const void *arg);

/* datastore-2, "nfs01": an unreachable 1 TiB NFS datastore of filer01 (800 GiB free, 10 GiB
 * uncommitted) in folder group-s4, with no VMs; test_db and test_findings write it. */
extern const struct vim_datastore tl_ds_nfs01;

/* Writes the rows test_db and test_findings share, after their iSCSI targets and LUNs: the
 * DelayedAck options of host-10's vmhba64 (the adapter's, send target 10.0.0.1:3260's inherited,
 * static target 10.0.0.2:3260's own), the paths of its LUNs naa.600a0001 (one active, one dead)
 * and naa.600a0002 (active), and their esxcli rows (Round Robin at iops=1; MRU). */
void tl_fill_host10_san(const struct vim_sink *s);

/* Writes one snapshot of vCenter vc (https://vc.example/sdk) with fill(sink, arg) and commits it
 * as a poll from started_ms to finished_ms; counts (may be NULL) as db_snapshot_commit(). */
void tl_snapshot(struct db *db, const char *vc, tl_fill_fn *fill, const void *arg,
                 int64_t started_ms, int64_t finished_ms, int64_t counts[DB_NKINDS]);

/* The one number sql answers in the database at path, read on a connection of its own (as the
 * API reads); -1 when it answers no row. */
int64_t tl_db_count(const char *path, const char *sql);

/* ---- decoded rows as text ---- */

/* A sink that appends every row the decoders and the alarm read emit to rows, one line each:
 * the kind, then its fields as name=value ("vnic host=host-10 device=vmk1 mtu=9000 ..."), an
 * unset string as "-". test_decode and test_alarms assert on these lines. */
struct vim_sink tl_text_sink(struct vsl_buf *rows);

/* ---- captured simulator answers (tests/unit/data/, made by capture.py) ---- */

/* What tl_feed_objects decodes with: a decoder (its sink set) and the type's decode function. */
struct tl_feed {
    struct vim_decoder d;
    vim_decode_fn *decode;
};

/* A vim_xml_emit_fn for a RetrievePropertiesEx answer (emit depth 5): every <objects> (one
 * managed object) to ctx, a struct tl_feed, as the collector hands them over. */
int tl_feed_objects(void *ctx, struct vim_node *node);

/* The file tests/unit/data/NAME, NUL-terminated; the caller frees it. */
char *tl_data_read(const char *name);

/* Decodes the captured RetrievePropertiesEx answer tests/unit/data/NAME into sink. */
void tl_data_decode(struct vim_sink *sink, const char *name, vim_decode_fn *decode);

#endif
