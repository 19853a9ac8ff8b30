package main

import (
	"fmt"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"
)

// Scenario "gate" (version 1): datastores planted just under each threshold
// the what-if gate (vslint gate, POST /api/v1/gate, GET /api/v1/placement)
// judges, so that a small proposal stays under and a slightly bigger one
// crosses. Every datastore is VMFS6, 600 GiB (1 % = 6 GiB), uncommitted 0
// unless said otherwise; the default thresholds are 30 % free, 25 VMs and
// 150 % provisioned.
//
// Planted facts:
//   - Cluster "cluster-gate": esx-gate-01, esx-gate-02; cluster
//     "cluster-gate-other": esx-gate-03. Hosts compliant as in "clean"
//     (EnableBlockDelete 1, SAN LUNs on RR iops=1 with two active paths).
//   - Mounted on esx-gate-01 and esx-gate-02:
//     ds-gate-free: 32 % free (192 GiB): 12 GiB thick leaves exactly 30 %
//     (allowed), 18 GiB leaves 29 % (datastore-free-space warning).
//     ds-gate-vms: 60 % free, 24 VMs vm-gate-01..24 (powered on, one 1 GiB
//     thin disk each): one more VM is 25 (allowed), two are 26 (warning).
//     ds-gate-thin: 50 % free, uncommitted 594 GiB: 149 % provisioned;
//     +3 GiB thin is 149.5 % (allowed), +12 GiB thin 151 % (warning).
//     ds-gate-dead: 60 % free; its LUN has paths active + dead on
//     esx-gate-01 (multipath-redundancy critical), two active on esx-gate-02.
//     ds-gate-roomy: 70 % free.
//     Datastore cluster pod-gate: ds-gate-pod-a 40 % free (240 GiB),
//     ds-gate-pod-b 22 % free (132 GiB): the pod has 372 of 1200 GiB free
//     (31 %); Storage DRS would place on ds-gate-pod-a; 6 GiB thick leaves the
//     pod 30.5 % (allowed), 24 GiB leaves 29 % (warning on the pod).
//   - ds-gate-partial: 75 % free, mounted on esx-gate-01 only.
//   - ds-gate-other: 80 % free, mounted on esx-gate-03 only.
//   - Alarms as in "clean".
func buildGate(w *world) {
	cl := w.addCluster("cluster-gate")
	for _, n := range []string{"esx-gate-01", "esx-gate-02"} {
		w.addHost(cl, n, hostOpts{enableBlockDelete: 1})
	}
	other := w.addCluster("cluster-gate-other")
	w.addHost(other, "esx-gate-03", hostOpts{enableBlockDelete: 1})
	hosts := hostsOf(w, "esx-gate-01", "esx-gate-02")
	c := 600 * GiB
	plain := func(name string, freePct int64, uncommitted int64, on []*simulator.HostSystem) *simulator.Datastore {
		return w.addDatastore(dsSpec{name: name, capacity: c, free: pct(c, freePct),
			uncommitted: uncommitted, hosts: on})
	}
	plain("ds-gate-free", 32, 0, hosts)
	vms := plain("ds-gate-vms", 60, 0, hosts)
	plain("ds-gate-thin", 50, 594*GiB, hosts)
	plain("ds-gate-roomy", 70, 0, hosts)
	plain("ds-gate-partial", 75, 0, hostsOf(w, "esx-gate-01"))
	plain("ds-gate-other", 80, 0, hostsOf(w, "esx-gate-03"))

	// The dead path: the datastore's LUN is planted by hand, dead on one host.
	dead := w.addDatastore(dsSpec{name: "ds-gate-dead", capacity: c, free: pct(c, 60), hosts: hosts,
		lunHosts: []*simulator.HostSystem{}})
	naa := dead.Info.(*types.VmfsDatastoreInfo).Vmfs.Extent[0].DiskName
	broken := sanLun(naa, 601)
	broken.paths = []string{"active", "dead"}
	w.addLun(hosts[0], broken)
	w.addLun(hosts[1], sanLun(naa, 601))

	pod := w.addPod("pod-gate")
	w.addDatastore(dsSpec{name: "ds-gate-pod-a", capacity: c, free: pct(c, 40), hosts: hosts, pod: pod})
	w.addDatastore(dsSpec{name: "ds-gate-pod-b", capacity: c, free: pct(c, 22), hosts: hosts, pod: pod})

	for i := 0; i < 24; i++ {
		w.addVM(vmSpec{
			name:  fmt.Sprintf("vm-gate-%02d", i+1),
			host:  hosts[i%2],
			disks: []diskSpec{{ds: vms, gib: 1, format: "thin"}},
		})
	}
	plantCleanAlarms(w)
}
