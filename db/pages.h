/* The reads the HTTP API needs beyond db.h and findings.h: the stored inventory one page at a
 * time (so a daemon serving 20,000 VMs never builds the whole document in memory), object
 * counts, and what the database remembers of each vCenter's polling. */
#ifndef DB_PAGES_H
#define DB_PAGES_H

#include <jansson.h>
#include <stdint.h>

#include "db/db.h"

enum db_page_kind { DB_PAGE_DATASTORES, DB_PAGE_HOSTS, DB_PAGE_VMS, DB_PAGE_POOLS, DB_NPAGE_KINDS };

struct db_page {
    const char *vcenter; /* exact, or NULL for every vCenter */
    int limit;           /* rows per page; 0 = all */
    const char *cursor;  /* opaque, from a previous page's *next, or NULL */
};

/* One page of datastores, hosts, VMs or array pools in (vcenter, name, moref) order (pools:
 * (array, name, id), vcenter then meaning the array's name), as a JSON array of
 * flat objects (fields of docs/inventory.md plus "vcenter"; hosts carry counts of their
 * vnics, iSCSI adapters and LUNs, VMs their disks). *items is a new reference the caller
 * owns; *total counts every row matching vcenter; *next (malloc'd, caller frees) is NULL on
 * the last page. -EINVAL for a cursor this function did not make. Datastores carry "pools" (the
 * array pools behind their extents), pools "datastores" (those they back, of any vCenter). */
int db_inventory_page(struct db *db, enum db_page_kind kind, const struct db_page *p,
                          json_t **items, int64_t *total, char **next);

/* One datastore's figures for /metrics: what the inventory page says of its capacity, free
 * space and runway (db/capacity.h), without building the page. Strings are valid during the
 * call only; name is "" when unknown; a has_* of 0 says the figure is unknown. */
struct db_ds_gauges {
    const char *vcenter, *name, *moref;
    int has_capacity, has_free, has_warning, has_critical;
    int64_t capacity, free_space, days_to_warning, days_to_critical;
};
/* Calls fn for every stored datastore, in the inventory pages' order, in one read transaction;
 * stops at the first negative fn returns, and returns it. */
int db_datastore_gauges(struct db *db, int (*fn)(const struct db_ds_gauges *g, void *ctx),
                        void *ctx);

/* Counts the stored datastores, hosts and VMs of vcenter (NULL: all), in that order. */
int db_object_counts(struct db *db, const char *vcenter, int64_t counts[3]);

/* At most this many host names per group of db_gaps_grouped(); "hosts" counts them all. */
#define DB_GAP_NAMES 100

/* At most this many groups per vCenter of db_gaps_grouped() whose error names no privilege; the
 * rest are one "other" group. */
#define DB_GAP_GROUPS 20

/* What the last successful read of each vCenter (vcenter, or NULL: all) and of each of its hosts
 * could not read: *out (new reference, the caller owns it) maps a vCenter's name to an array of
 * {"what", "error", "privilege" (the one the refusal names, or null), "hosts" (how many hosts
 * have this gap; 0 for a gap about the vCenter itself), "host_names" (the first DB_GAP_NAMES,
 * by name)}. A refusal is grouped by what and privilege, "error" the first host's as a sample;
 * another error by what and error, at most DB_GAP_GROUPS of them (those with the most hosts),
 * the rest counted in one last group {"what": "other", "error": "N other errors, ...", ...}.
 * In (what, privilege or error) order. Text that is not UTF-8 has '?' for its bad bytes. A
 * vCenter without gaps has no member. */
int db_gaps_grouped(struct db *db, const char *vcenter, json_t **out);

/* A hash of the gaps (and their hosts' names) db_gaps_grouped() would group, in *sig: equal
 * while nothing it shows has changed, whatever else was written (an incremental round's
 * last-success time). Reading it costs a scan of the gaps, not their grouping. */
int db_gaps_signature(struct db *db, const char *vcenter, uint64_t *sig);

/* What the database remembers of a vCenter's polling, so a restarted daemon reports the age of
 * the snapshot it serves before its own first poll. All zero/empty when never polled. */
struct db_vcenter_state {
    int64_t last_success_ms;
    int64_t last_started_ms, last_finished_ms;
    int last_ok;
    char error[1024];
};
int db_vcenter_state(struct db *db, const char *vcenter, struct db_vcenter_state *out);

#endif
