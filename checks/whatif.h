/* The what-if gate: a proposed placement (VMs with their disks on a datastore or a datastore
 * cluster) applied to a copy of a vCenter's snapshot, judged by the capacity, density and
 * format checks with the thresholds and waivers in force; and placement, the same question
 * asked of every datastore, ranked by headroom. Pure over the estates it is given. */
#ifndef CHK_WHATIF_H
#define CHK_WHATIF_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "checks/engine.h"
#include "model/estate.h"
#include "model/finding.h"

#define CHK_GATE_MAX_VMS   10000
#define CHK_GATE_MAX_DISKS 64
#define CHK_GATE_MAX_GB    65536.0 /* one disk: 64 TiB (VMFS6's largest VMDK is 62 TB) */

enum chk_disk_format { CHK_DISK_THIN = 0, CHK_DISK_LAZY, CHK_DISK_EAGER };

/* What a pipeline is about to do. Strings are borrowed. */
struct chk_proposal {
    const char *datastore;         /* the target: a datastore's name, or */
    const char *datastore_cluster; /* a datastore cluster's (exactly one of the two; placement:
                                      datastore_cluster narrows the candidates to its members) */
    const char *vcenter;           /* NULL: any vCenter that has the name (once) */
    int vms;                       /* new VMs, 1..CHK_GATE_MAX_VMS (default 1) */
    int64_t disk_bytes[CHK_GATE_MAX_DISKS]; /* each new VM's disks */
    size_t n_disks;
    enum chk_disk_format format; /* default lazy, as the vSphere Client's default on VMFS */
    int ft, shared_bus;          /* Fault Tolerance / a SCSI controller in physicalSharing */
    enum vsl_severity fail_on;   /* default warning */
    int allow_stale;             /* judge a snapshot older than max_age */
    int64_t max_age_s;           /* 0: the vCenter's default (struct chk_site) */
};

/* One vCenter's latest snapshot, as the gate sees it. */
struct chk_site {
    const struct estate *estate; /* borrowed */
    int64_t max_age_s;           /* default for its snapshot: 2 x its poll interval */
    /* Borrowed: chk_run_all() over estate with the configuration the gate is given, made
     * once for every request on the same snapshot (api/estates.c); NULL: each call runs it.
     * Only its findings on the target's LUNs are read, which do not depend on the time. */
    const struct chk_results *base;
    /* When vCenter last confirmed the snapshot (unix ms), where that is newer than the
     * estate's polled_ms: an estate shared across incremental rounds that changed nothing
     * (api/estates.c). 0: the estate's own. */
    int64_t polled_ms;
    /* Borrowed: base's findings indexed by the LUN they name (chk_lun_index_make()), made
     * with base and as read-only; NULL: each call indexes base again (about 40 ms of CPU at
     * 100,000 VMs). Read only when base is set. */
    const struct chk_lun_index *base_luns;
    /* Borrowed: estate's VMs by the datastores they name (chk_ds_vms_make()), made once per
     * shared estate, read-only; NULL: each call makes its own (a walk of every VM). */
    const struct chk_ds_vms *ds_vms;
};

/* The VMs of an estate by each datastore they name (configuration, disks, files): a judge
 * reads only the target's. Opaque. */
struct chk_ds_vms;
/* *out owned by the caller; 0 or -ENOMEM. */
int chk_ds_vms_make(const struct estate *e, struct chk_ds_vms **out);
void chk_ds_vms_free(struct chk_ds_vms *x); /* NULL is a no-op */

/* Findings on LUNs by the LUN they name (host, LUN): a placement judges every datastore
 * against the findings on each of its LUNs without matching names. Opaque. */
struct chk_lun_index;
/* Indexes all's findings on e's LUNs; *out owned by the caller; 0 or -ENOMEM. */
int chk_lun_index_make(const struct estate *e, const struct chk_results *all,
                       struct chk_lun_index **out);
void chk_lun_index_free(struct chk_lun_index *x); /* NULL is a no-op */

/* Drops from r (chk_run_all() over a snapshot, to be a chk_site.base) what no what-if reads
 * of it: all but the findings on LUNs, in their order. */
void chk_site_base_trim(struct chk_results *r);

/* Defaults: 1 VM, no disks yet, lazy, fail_on warning. */
void chk_proposal_init(struct chk_proposal *p);

/* "thin", "lazy", "eager" (also the vSphere names thin, lazyzeroedthick, eagerzeroedthick).
 * 0 or -EINVAL. */
int chk_disk_format_parse(const char *s, enum chk_disk_format *out);
const char *chk_disk_format_name(enum chk_disk_format f); /* "thin", "lazy", "eager" */

/* Parses "100,20.5" (GiB, each above 0 and at most CHK_GATE_MAX_GB) into p's disks. 0, or
 * -EINVAL with what is wrong in err. */
int chk_proposal_disks(struct chk_proposal *p, const char *list, char *err, size_t errlen);

/* The proposal of a JSON body (POST /api/v1/gate; docs/openapi.yaml GateRequest): strings
 * borrowed from body. Unknown keys, wrong types and values out of range are refused. 0, or
 * -EINVAL with "what: why" in err. */
int chk_proposal_from_json(const json_t *body, struct chk_proposal *p, char *err,
                           size_t errlen);
/* p as that JSON body (a new reference, NULL when out of memory). */
json_t *chk_proposal_json(const struct chk_proposal *p);

/* Judges p over the sites at now (unix seconds) into *answer (a new reference):
 * {"allowed","reasons","waived","before","after","headroom","limited_by","snapshot_age_s",...}
 * as docs/openapi.yaml's GateAnswer. Returns 0 (allowed or not), -VSL_ENOTFOUND (no such
 * datastore, datastore cluster or vCenter), -EINVAL (the name is on several vCenters or
 * datastore clusters: give vcenter), -ENOMEM, or a check's error; err says which. */
int chk_gate(const struct chk_config *cfg, const struct chk_site *sites, size_t n_sites,
             const struct chk_proposal *p, int64_t now, json_t **answer, char *err,
             size_t errlen);

/* Where p could go: every datastore of the sites (of p->vcenter only, when set) mounted by a
 * host of the compute cluster named cluster (NULL: any), in p->datastore_cluster when set,
 * judged as chk_gate() does. *answer: {"candidates":[...] (allowed, most headroom first, at
 * most limit), "rejected":[...] (the first max_rejected in the sites' order, SIZE_MAX: all),
 * "total_rejected", "rejected_by_reason":[{"code","check","datastores"}],
 * ...} as docs/openapi.yaml's PlacementAnswer. Errors as for chk_gate(). */
int chk_placement(const struct chk_config *cfg, const struct chk_site *sites, size_t n_sites,
                  const struct chk_proposal *p, const char *cluster, int limit,
                  size_t max_rejected, int64_t now, json_t **answer, char *err, size_t errlen);

/* How many datastores the estate a placement judges datastore ds of site's estate over holds
 * (the target and those its VMs name; a pool behind it adds only the names of the ones it
 * backs), 0 when out of memory: what one judge costs, so that tests can hold it to its size. */
size_t chk_judge_datastores(const struct chk_site *site, size_t ds);

/* The findings a placement's or the gate's judge of datastore ds of site's estate gets from
 * the checks, with p placed on ds, appended to out (chk_results_free(); their vcenter is
 * borrowed from site's estate), so that tests can see what a judge is handed: no evidence.
 * 0 or a negative error (err says). */
int chk_judge_findings(const struct chk_config *cfg, const struct chk_site *site, size_t ds,
                       const struct chk_proposal *p, int64_t now, struct chk_results *out,
                       char *err, size_t errlen);

#endif
