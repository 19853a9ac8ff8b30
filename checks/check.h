/* A check is data plus one function: id, title, default severity, rationale, reference,
 * remediation, parameters with defaults, and run(), which reads an estate and emits findings.
 * checks/registry.c lists every check in one table. */
#ifndef CHK_CHECK_H
#define CHK_CHECK_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "checks/san.h"
#include "model/estate.h"
#include "model/finding.h"

/* A numeric threshold a user may override in [check ID]. */
struct chk_param {
    const char *name; /* config key, e.g. "warn_free_pct" */
    double dflt, min, max;
    const char *unit; /* "%", "GB", "VMs", "days", ... for help and messages */
    const char *help;
};

struct chk_ctx; /* one run of one check over one estate; see chk_emit() */

/* What a check rests on: a passage of a seed document (../shared/seeds/). quote is the seed's
 * own words, one or more whole sentences copied verbatim (typographic quote marks and dashes
 * may be written plainly): tests/unit/test_registry.c finds each quote in its section of the
 * seed, so a citation cannot say what its source does not. Whatever the check adds (a
 * threshold, a wider scope, a severity) is not quoted but said in the check's `own`. */
struct chk_source {
    const char *document; /* the seed's file name: "000_5bd48962a767ee9e.txt" */
    const char *section;  /* "§3.7.2" in a numbered document; else the title of the post
                             the quote is under ("SPC-2 set or not?"), a line of the seed */
    const char *quote;    /* the seed's words, verbatim */
};

/* What a check reads besides what every successful poll brings (vCenter's own view of
 * datastores, VMs and hosts). The engine uses it to keep findings honest: where an input a
 * check needs was not read this poll, that check's findings there are neither judged nor
 * resolved, but kept as they were and marked unverified (see chk_run_all). */
enum chk_needs {
    CHK_NEEDS_HOST = 1 << 0,           /* the host's configuration (storage, network): the host
                                          must be connected, or vCenter's copy is stale */
    CHK_NEEDS_ESXCLI = 1 << 1,         /* esxcli reads through vCenter (the "esxcli" gap) */
    CHK_NEEDS_OPTIONS = 1 << 2,        /* the host's advanced options ("options") */
    CHK_NEEDS_ISCSI_BINDINGS = 1 << 3, /* iSCSI port bindings ("iscsi-bindings") */
    CHK_NEEDS_DATASTORE = 1 << 4,      /* a datastore's capacity figures: it must be
                                          accessible, or they are stale */
};

struct check {
    const char *id;    /* kebab-case, stable forever: configs, waivers, pipelines name it */
    const char *title; /* one line */
    enum vsl_severity severity; /* the default (highest) severity it raises */
    const char *rationale;      /* why, in a sentence or two */
    const char *reference;      /* "000_5bd48962a767ee9e.txt §3.5.1", KB numbers */
    const struct chk_source *sources; /* the seeds' words the rule rests on, terminated by an
                                         entry with document == NULL; NULL only for a check
                                         that is no practice of the seeds (host-coverage) */
    const char *own;            /* what vslint adds on its own (thresholds, scope, severity)
                                   and why: never attributed to a seed */
    const char *remediation;    /* the concrete fix, with the esxcli/PowerCLI command */
    const struct chk_param *params; /* terminated by an entry with name == NULL; may be NULL */
    unsigned needs;                 /* enum chk_needs flags */
    /* Reads e and calls chk_emit() once per finding. Returns 0 or a negative error. */
    int (*run)(struct chk_ctx *ctx, const struct estate *e);
};

/* The value of the check's parameter name in this run (the configured one or the default).
 * Asking for a name the check does not declare is a programming error (assert). */
double chk_param(const struct chk_ctx *ctx, const char *name);

/* Bytes as the vSphere Client prints them: binary units named GB and TB (1 GB = 2^30 bytes,
 * so a LUN created as "750 GB" prints "750 GB"), at most two decimals, trailing zeros
 * dropped: "599.75 GB", "70 TB", "512 MB". Returns buf. */
#define CHK_GIB 1073741824.0
#define CHK_TIB 1099511627776.0
const char *chk_size(int64_t bytes, char *buf, size_t size);

/* The value of another check's parameter in this run's configuration (its default when the run
 * has none, as in chk_run_one), for a check whose rule follows another's thresholds. Naming a
 * check or parameter that does not exist is a programming error (assert). */
double chk_param_from(const struct chk_ctx *ctx, const char *check_id, const char *name);

/* The estate this run judges, for a callback that is handed only one of its objects. */
const struct estate *chk_estate(const struct chk_ctx *ctx);

/* Whether this run's findings keep their evidence (0 in a what-if judge, which reads only the
 * messages; chk_results.no_evidence): a check whose evidence grows with the estate builds it
 * only then. The engine empties the evidence of such a run itself, so nothing else need ask. */
int chk_wants_evidence(const struct chk_ctx *ctx);

/* The time of this run (unix seconds), for age-based rules. */
int64_t chk_now(const struct chk_ctx *ctx);

/* What a check reports about one object: a managed object (datastore, storage_pod, host, vm,
 * cluster), or a part of a host that has no moref of its own (lun, vmknic, iscsi_hba,
 * iscsi_target), named by itself and by its host. */
struct chk_emit {
    enum vsl_severity severity;
    const char *object_type;  /* "datastore", "storage_pod", "host", "vm", "lun", "vmknic", ... */
    const char *object_moref; /* the managed object; NULL for a part of a host */
    const char *object_name;  /* what a human calls it: "ds-crowded", "naa.6006...", "vmk1" */
    const struct est_host *host; /* the host of a part of a host, or the host a host finding is
                                    about; NULL otherwise */
    const char *detail;       /* distinguishes several findings on one object ("vmhba64/10.0.0.20:3260"), or NULL */
    const char *message;      /* a sentence a human can act on */
    json_t *evidence;         /* measured values and thresholds; reference stolen (may be NULL) */
};

/* Records a finding. The run applies severity overrides and waivers afterwards. */
int chk_emit(struct chk_ctx *ctx, const struct chk_emit *f);

/* The findings a check raises, one helper per kind of object, so that every check names its
 * objects alike (and so fingerprints them alike). Each records one finding with chk_emit():
 * severity, a message a human can act on, and the evidence, whose reference it takes (NULL is
 * out of memory: -ENOMEM, nothing recorded). */

/* About a managed object that is not a host, of type ("storage_pod", "cluster", ...), moref
 * and name. */
int chk_emit_object(struct chk_ctx *ctx, const char *type, const char *moref, const char *name,
                    enum vsl_severity severity, const char *message, json_t *evidence);

/* About datastore d; the evidence gets d's LUNs ("extents", chk_ev_extents()), as every
 * datastore finding names them. */
int chk_emit_datastore(struct chk_ctx *ctx, const struct est_datastore *d,
                       enum vsl_severity severity, const char *message, json_t *evidence);

/* About virtual machine vm. */
int chk_emit_vm(struct chk_ctx *ctx, const struct est_vm *vm, enum vsl_severity severity,
                const char *message, json_t *evidence);

/* About host h itself; detail tells several findings of one check on one host apart ("plug-ins",
 * "VMW_SATP_ALUA/DGC"), NULL when the check raises one per host. */
int chk_emit_host(struct chk_ctx *ctx, const struct est_host *h, const char *detail,
                  enum vsl_severity severity, const char *message, json_t *evidence);

/* About a part of host h that has no moref of its own, of type ("vmknic", "iscsi_hba",
 * "iscsi_target", ...) and called name; detail is what the finding's history follows (its
 * fingerprint is the host's moref and detail), so it is stable: the device, the portal. */
int chk_emit_part(struct chk_ctx *ctx, const struct est_host *h, const char *type,
                  const char *name, const char *detail, enum vsl_severity severity,
                  const char *message, json_t *evidence);

/* About LUN l of host h: the part "lun", named by its canonical name, which is its detail too,
 * so that the finding's history follows the LUN (one finding per LUN per host and check). */
int chk_emit_lun(struct chk_ctx *ctx, const struct est_host *h, const struct est_lun *l,
                 enum vsl_severity severity, const char *message, json_t *evidence);

/* Building evidence. A NULL anywhere is out of memory, and it travels: each helper takes the
 * references it is given, releases them all when it fails, and returns NULL, so that a check
 * writes ev = chk_ev_set(json_pack(...), "key", value) and hands ev to an emit helper, which
 * reports -ENOMEM for a NULL rather than record evidence with a field missing. */

/* Sets key in the object ev to value (both references taken); returns ev, or NULL (ev and value
 * released) when either is NULL or memory runs out. */
json_t *chk_ev_set(json_t *ev, const char *key, json_t *value);

/* Appends value to the array a (both references taken); returns a, or NULL (both released) when
 * either is NULL or memory runs out. */
json_t *chk_ev_append(json_t *a, json_t *value);

/* Appends the string s to the array a unless a holds it already (a list of names, each once);
 * a NULL a is created. Returns a, or NULL (a released) when memory runs out. */
json_t *chk_ev_add_name(json_t *a, const char *s);

/* n as JSON: an integer, or null when it is EST_UNKNOWN. A new reference, NULL when out of
 * memory. */
json_t *chk_ev_known(int64_t n);

/* Unix seconds as JSON: a UTC ISO-8601 string ("2026-12-02T07:10:00Z"), or null when
 * negative (unknown). A new reference, NULL when out of memory. */
json_t *chk_ev_time(int64_t unix_s);

/* Appends the string s to the JSON array a of strings unless a holds it already. 0, or -ENOMEM
 * (a is left as it was). */
int chk_append_unique(json_t *a, const char *s);
/* Adds "extents" to a datastore finding's evidence ev (chk_emit_datastore() does, for every
 * datastore check): the canonical names of the devices of every extent of d (a spanned VMFS
 * volume has several), head extent first, each once. A datastore without extents (NFS, vSAN,
 * vVol, or a VMFS one whose extents were not reported) gets none. Takes ev's reference and
 * returns it, or NULL when ev is NULL or memory runs out (ev is released then). */
json_t *chk_ev_extents(json_t *ev, const struct est_datastore *d);

/* The datastores whose capacity figures can be judged: the first datastore of e at index *i or
 * after that is accessible (an inaccessible one's sizes are stale in vCenter) with a capacity
 * above zero and a known free space, *i set to its index; NULL when there is none.
 *     for (size_t i = 0; (d = chk_measured_datastore(e, &i)); i++) ... */
const struct est_datastore *chk_measured_datastore(const struct estate *e, size_t *i);

/* Calls judge(ctx, d, NULL) for every measured datastore d of e (chk_measured_datastore), then
 * judge(ctx, NULL, p) for every datastore cluster p whose capacity is above zero and free space
 * known; returns the first error, else 0. For the checks that judge both alike. */
typedef int chk_measured_fn(struct chk_ctx *ctx, const struct est_datastore *d,
                            const struct est_pod *p);
int chk_each_measured(struct chk_ctx *ctx, const struct estate *e, chk_measured_fn *judge);
/* What a chk_measured_fn judge reports: about datastore d (chk_emit_datastore), or when d is
 * NULL about datastore cluster p (a "storage_pod" object). */
int chk_emit_measured(struct chk_ctx *ctx, const struct est_datastore *d, const struct est_pod *p,
                      enum vsl_severity severity, const char *message, json_t *evidence);
/* The VMs vms-per-datastore counts on datastore ds (index into e->datastores): those living
 * there (configuration or a non-RDM disk), templates excluded; and how many are powered on. */
void chk_vms_on_datastore(const struct estate *e, size_t ds, int *vms, int *powered_on);

/* Whether virtual disk d is a raw device mapping (format rdm-physical or rdm-virtual): its data
 * is on its own LUN, and only a small mapping file is on its datastore. */
int chk_disk_rdm(const struct est_disk *d);
/* A virtual disk of e as evidence: label, file_name, format, datastore (its name, null when
 * unknown) and capacity_bytes (when known). A new reference, NULL when memory runs out. */
json_t *chk_ev_disk(const struct estate *e, const struct est_disk *d);

/* Array pool p of e as evidence: array, id, name, size_total_bytes, size_free_bytes,
 * free_pct (null when unknown), alert_threshold_pct (the array's own alert level, % used),
 * health, array_polled (when the array was last read), array_error (its last poll failed: the
 * figures are that old) and datastores (the names of e's datastores it backs). A new
 * reference, NULL when memory runs out. */
json_t *chk_ev_pool(const struct estate *e, const struct est_pool *p);
/* Why NFS datastore d is joined to no NAS server of a configured array although one may serve
 * it (est_datastore.nas_doubt), as a sentence in buf (nfs-server-redundancy's evidence,
 * pool-free-space's info finding); NULL when there is no doubt. */
const char *chk_nas_doubt(const struct est_datastore *d, char *buf, size_t size);
/* The seed passages several checks rest on, quoted once. CHK_QUOTE_POOL_CAPACITY: the Unity
 * guide's pool-capacity levels (000 §1.1.1); CHK_QUOTE_OVERCOMMIT: Yellow Bricks on alarms for
 * thin provisioning (003, "Performance: Thin Provisioning"). */
#define CHK_SEED_UNITY "000_5bd48962a767ee9e.txt"
#define CHK_SEED_YELLOW_BRICKS "003_c6252f56ada835be.txt"
#define CHK_QUOTE_POOL_CAPACITY                                                                  \
    "Storage pools must maintain free capacity in order to operate properly. By default, Dell "  \
    "EMC Unity will raise an alert if a storage pool has less than 30% free capacity, and will " \
    "begin to automatically invalidate snapshots and replication sessions if the storage pool "  \
    "has less than 5% free capacity. Dell EMC recommends that a storage pool always have at "    \
    "least 10% free capacity."
#define CHK_QUOTE_OVERCOMMIT                                                                     \
    "Make sure you set the correct alarms when thin provisioning a VMDK. You need to regularly " \
    "check what the level of \"overcommitment\" is, what the total capacity is and the "         \
    "percentage of disk space still available."
/* The sources of the checks that rest on the pool-capacity passage alone (datastore-free-space,
 * pool-free-space, datastore-runway), and of those that rest on §3.7.2's requirements for a
 * guest's space reclamation (space-reclaim, vmfs-version). */
extern const struct chk_source chk_pool_capacity_sources[];
extern const struct chk_source chk_reclaim_sources[];
/* The guide's only words on snapshots' cost (000 §4.2): snapshots and snapshot-consolidation. */
extern const struct chk_source chk_snapshot_cost_sources[];
/* The parameters of the free-space rule (datastore-free-space, pool-free-space): the Unity
 * guide's pool-capacity thresholds, warn_free_pct 30, crit_free_pct 10, snap_free_pct 5. */
extern const struct chk_param chk_free_params[];
/* Sets the run's values of chk_free_params in evidence ev as "warn_free_pct", "crit_free_pct"
 * and "snap_free_pct". Takes ev's reference and returns it, or NULL when ev is NULL or memory
 * runs out (ev is released then). */
json_t *chk_ev_free_params(json_t *ev, const struct chk_ctx *ctx);
/* A level of a free-space rule (datastore-free-space, pool-free-space): the parameter whose
 * share of capacity free space is below, the finding's severity, the evidence's "level", and
 * the message's words before and after the threshold. */
struct chk_free_level {
    const char *param;
    enum vsl_severity severity;
    const char *name;
    const char *before, *after;
};
/* The first of levels[0..n) (the most severe first) whose threshold, the run's value of its
 * parameter (into *threshold), free_space is below: free * 100 < pct * capacity, exact in a
 * double for byte counts below 2^53, so exactly 5 % free is not "below 5 %". NULL when free
 * space is below none (capacity above zero). */
const struct chk_free_level *chk_free_level(const struct chk_ctx *ctx,
                                            const struct chk_free_level *levels, size_t n,
                                            int64_t free_space, int64_t capacity,
                                            double *threshold);
/* p's free share in percent, or a negative number when its sizes are unknown. */
double chk_pool_free_pct(const struct est_pool *p);
/* The name of the i-th (< p->n_datastores) datastore pool p of e backs: from its names when it
 * has them (a what-if judge's estate), else e's datastore. */
const char *chk_pool_datastore(const struct estate *e, const struct est_pool *p, size_t i);
/* What a finding about pool p is called: object type "array_pool", moref "ARRAY/ID" (stable
 * while the pool lives), name "ARRAY/NAME". */
int chk_emit_pool(struct chk_ctx *ctx, const struct est_pool *p, enum vsl_severity severity,
                  const char *message, json_t *evidence);

/* The registry: every built-in check, in catalogue order. */
extern const struct check *const chk_registry[];
extern const size_t chk_registry_len;
const struct check *chk_find(const char *id);
/* The catalogue as a JSON document (a new reference, NULL on ENOMEM). */
json_t *chk_catalogue_json(void);
/* ck's sources as JSON, [{document, section, quote}] (empty when it has none): a new
 * reference, NULL on ENOMEM. */
json_t *chk_sources_json(const struct check *ck);

#endif
