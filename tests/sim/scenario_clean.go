package main

import (
	"fmt"
	"time"

	"github.com/vmware/govmomi/simulator"
)

// Scenario "clean" (version 1): a compliant estate. Nothing here may trip any
// check of the catalogue in DESIGN.md.
//
// Planted facts:
//   - Datacenter DC0 (stock name), cluster "cluster-clean" with 4 hosts:
//     esx-clean-01, esx-clean-02, esx-clean-03, esx-iscsi-clean.
//     Every host: VMFS3.EnableBlockDelete = 1 in its own OptionManager; the
//     stock local boot disk mpx.vmhba0:C0:T0:L0 stays (localDisk true,
//     VMW_PSP_FIXED, 1 path: it is not a SAN LUN); the stock CD-ROM LUN and
//     the stock block HBA vmhba64 are removed; FC HBAs vmhba2/vmhba3 added.
//   - Datastores (all mounted on the 4 hosts):
//     ds-clean-01, ds-clean-02, ds-clean-03: VMFS6, 600 GiB, 50% free,
//     uncommitted 0; ds-nfs-clean: NFS (nfs01.example.com:/export/ds-nfs-clean),
//     600 GiB, 50% free, uncommitted 60 GiB.
//     StoragePod pod-ok: ds-pod-ok-1, ds-pod-ok-2, VMFS6, 600 GiB, 50% free
//     each (pod: 1200 GiB, 600 GiB free = 50%).
//   - SAN LUNs: every VMFS datastore is backed by one naa.60060160a0b00000...
//     LUN, visible on every host: VMW_PSP_RR, iops=1 (esxcli), VMW_SATP_ALUA,
//     2 active paths (vmhba2/vmhba3, or vmhba64:C0/C1 on esx-iscsi-clean),
//     vendor DGC, localDisk false.
//   - SATP claim rules (esxcli storage nmp satp rule list): every host has
//     the user rule VMW_SATP_ALUA, vendor DGC, VMW_PSP_RR, PSP options
//     iops=1 (000 §3.3), besides the system rules of ext.go's systemRules.
//   - esx-iscsi-clean: software iSCSI vmhba64 (iqn.1998-01.com.vmware:esx-iscsi-clean),
//     adapter DelayedAck false; send target 10.0.0.10:3260 and static target
//     10.0.0.11:3260 both inherit (DelayedAck false, isInherited true);
//     vmk1 (MTU 9000) on portgroup iSCSI-1 of vSwitch-iscsi (MTU 9000),
//     bound to vmhba64 (QueryBoundVnics).
//   - 12 VMs vm-clean-01..vm-clean-12, 2 per datastore, spread over the 4
//     hosts: vmx-13, powered on, one PVSCSI controller (noSharing), one
//     40 GiB disk; formats cycle lazyzeroedthick, eagerzeroedthick, thin
//     (NFS VMs are thin). vm-clean-05 has one snapshot "before-patch" 1 day old.
//     vm-clean-12 additionally has a 10 GiB physical-mode RDM disk.
//   - Alarms (alarms.go): at the root folder, vCenter's default "Datastore
//     usage on disk" (alarm.DatastoreDiskUsageAlarm), enabled, set to
//     disk.used.latest isAbove yellow 7000 red 9000 (70 % / 90 % used), so
//     it covers every datastore at datastore-free-space's thresholds; and
//     "Host connection and power state", a host state alarm.
func buildClean(w *world) {
	cl := w.addCluster("cluster-clean")
	for _, n := range []string{"esx-clean-01", "esx-clean-02", "esx-clean-03", "esx-iscsi-clean"} {
		w.addHost(cl, n, hostOpts{enableBlockDelete: 1})
	}
	w.addIscsi(w.hosts["esx-iscsi-clean"], iscsiSpec{
		delayedAck:    false,
		sendTargets:   []targetSpec{{address: "10.0.0.10", port: 3260}},
		staticTargets: []targetSpec{{address: "10.0.0.11", port: 3260, iqn: "iqn.1992-04.com.emc:cx.clean.a0"}},
		vnicMTU:       9000,
		vswitchMTU:    9000,
	})
	hosts := hostsOf(w, "esx-clean-01", "esx-clean-02", "esx-clean-03", "esx-iscsi-clean")
	c := 600 * GiB
	var dss []*simulator.Datastore
	for _, n := range []string{"ds-clean-01", "ds-clean-02", "ds-clean-03"} {
		dss = append(dss, w.addDatastore(dsSpec{name: n, capacity: c, free: pct(c, 50), hosts: hosts}))
	}
	dss = append(dss, w.addDatastore(dsSpec{name: "ds-nfs-clean", nfs: true, capacity: c, free: pct(c, 50),
		uncommitted: 60 * GiB, hosts: hosts}))
	pod := w.addPod("pod-ok")
	for _, n := range []string{"ds-pod-ok-1", "ds-pod-ok-2"} {
		dss = append(dss, w.addDatastore(dsSpec{name: n, capacity: c, free: pct(c, 50), hosts: hosts, pod: pod}))
	}
	formats := []string{"lazyzeroedthick", "eagerzeroedthick", "thin"}
	for i := 0; i < 12; i++ {
		ds := dss[i/2]
		f := formats[i%3]
		if ds.Name == "ds-nfs-clean" {
			f = "thin"
		}
		s := vmSpec{
			name:  fmt.Sprintf("vm-clean-%02d", i+1),
			host:  hosts[i%4],
			disks: []diskSpec{{ds: ds, gib: 40, format: f}},
		}
		if i == 4 {
			s.snapshots = []snapSpec{{name: "before-patch", age: 24 * time.Hour}}
		}
		if i == 11 {
			s.disks = append(s.disks, diskSpec{ds: ds, gib: 10, format: "rdm"})
		}
		w.addVM(s)
	}
	plantCleanAlarms(w)
}
