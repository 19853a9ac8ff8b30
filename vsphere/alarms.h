/* Alarms and the part of the inventory tree they apply through: the containers above datastores
 * (folders, datacenters, datastore clusters), every alarm definition of the AlarmManager, and the
 * performance counters their metric conditions watch; and the clusters hosts sit in. */
#ifndef VIM_ALARMS_H
#define VIM_ALARMS_H

#include <stddef.h>

#include "vsphere/decode.h"
#include "model/inventory.h"
#include "vsphere/soap.h"

/* The property paths of the containers (read through views, like the other types). */
extern const char *const vim_folder_paths[];
extern const char *const vim_datacenter_paths[];
extern const char *const vim_pod_parent_paths[];
extern const char *const vim_cluster_paths[];
/* A datastore's declaredAlarmState, for the alarms disabled on it. */
extern const char *const vim_datastore_alarm_paths[];

/* One container in, one entity row out. A folder that can hold neither datastores, datastore
 * clusters nor datacenters (a VM, host or network folder) is left out: no datastore is below it. */
vim_decode_fn vim_decode_folder;
vim_decode_fn vim_decode_datacenter;
vim_decode_fn vim_decode_pod_parent;
/* A ClusterComputeResource in, an entity row out (type "ClusterComputeResource"): what a host's
 * parent names when the host is in a cluster, so a finding about a cluster can name it. */
vim_decode_fn vim_decode_cluster;
/* Folders, datacenters and datastore clusters, and datastores through this one: an
 * alarm_disabled row for each alarm the entity's declaredAlarmState says is disabled on it. */
vim_decode_fn vim_decode_datastore_alarms;

/* What decoding the alarms gathers besides the rows it emits. */
struct vim_alarm_read {
    struct vim_sink *sink;
    int *counters; /* the distinct counterIds the emitted metric rows name, owned */
    size_t n_counters, cap;
    size_t unreadable; /* alarms whose info the server did not give */
    char why[384];     /* the fault of the first of them, "TYPE fault (needs ID)" for a refusal */
};

/* One Alarm object (its "info") in, an alarm row and its metric rows out. An object without
 * info (a missingSet) is counted in ar->unreadable instead. */
int vim_decode_alarm(struct vim_alarm_read *ar, const char *moref, struct vim_node *objects);
/* A PerformanceManager.perfCounter value (PerfCounterInfo elements) in, perf_counter rows out
 * for the counters whose key is among ids (all of them when ids is NULL). */
int vim_decode_perf_counters(struct vim_sink *sink, struct vim_node *list, const int *ids,
                             size_t n);
void vim_alarm_read_free(struct vim_alarm_read *ar);

/* Reads every alarm of the client's AlarmManager and the counters they name into sink, then
 * the alarm_manager row that says the list is complete. A server without an AlarmManager, or
 * one that refuses any of these reads, gets an "alarms" gap about the vCenter (object "")
 * instead of that row, and the poll goes on; only errors that end a poll are returned. */
int vim_collect_alarms(struct vim_client *c, struct vim_sink *sink);

#endif
