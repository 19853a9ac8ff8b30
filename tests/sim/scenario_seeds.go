package main

import (
	"strings"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"
)

// The violations scenario's objects for the seeds' rules taken whole (issue
// 22), planted after everything else so that no earlier object changes.
// Unity's port WWNs follow 000 §3.1.2's zoning table: 50:06:01:60-67 are SP A's
// ports, 50:06:01:68-6f SP B's.
//
// multipath-redundancy, both storage processors (esx-san-1, FC: two paths,
// one through vmhba2 and one through vmhba3, RR iops=1, vendor DGC)
//
//	VIOLATION naa.60060160a0b0000000000000000000f1  both paths to SP A ports
//	                             (50:06:01:60:47:e4:1e:49, 50:06:01:61:47:e4:1e:49)
//	                             -> critical, naming SP A
//	TWIN      naa.60060160a0b0000000000000000000f2  one path to SP A (…60…), one to SP B
//	                             (50:06:01:68:47:e4:1e:49)
//	(the LUNs without a transport, ...a1-...a5, are not judged on SPs: a5's
//	finding says "no target port reported for the path")
//	With the Unity responder as [array] (its fcPort list), also:
//	VIOLATION naa.60060160a0b0000000000000000000f5  both paths to ports 58:cc:f0:98:49:20/21
//	                             the array lists on spa -> critical, naming SP A; without
//	                             the array not judged (no convention knows 58:cc:f0)
//	TWIN      naa.60060160a0b0000000000000000000f6  one path to spa's 58:...:20, one to
//	                             spb's 58:...:28
//	iSCSI (esx-iscsi-a, software vmhba64, paths on C0 and C1; the Unity responder's
//	iscsiPortal list places each target address on an ethernetPort of one SP):
//	VIOLATION naa.60060160a0b0000000000000000000e5  paths to 10.0.1.21 (if_4, spa_eth2) and
//	                             10.0.1.22 (if_5, spa_eth3) -> critical, naming SP A; without
//	                             the array not judged (an IQN names no SP)
//	TWIN      naa.60060160a0b0000000000000000000e6  paths to 10.0.1.21 (SP A) and 10.0.1.23
//	                             (if_6, spb_eth2, SP B)
//
// iscsi-jumbo-frames on the array (000 §3.4.1; with the Unity responder as [array]): the
// portals esx-iscsi-a's targets and paths name, 10.0.1.21 (spa_eth2, MTU 9000), 10.0.1.22
// (spa_eth3, MTU 1500) and 10.0.1.23 (spb_eth2, MTU 9000):
//
//	VIOLATION unity1/spa_eth3    MTU 1500 behind portal 10.0.1.22 -> warning
//	TWIN      spa_eth2, spb_eth2 MTU 9000
//	TWIN      spb_eth4           MTU 1500, but its portal 10.0.1.25 is no host's target
//
// nfs-server-redundancy, NAS servers on both SPs (000 §3.8; with the Unity responder as
// [array], whose NAS servers have interfaces 10.0.3.10 (nas-spa-1, home SP A), 10.0.3.11
// (nas-spa-2, home SP A) and 10.0.3.20 (nas-spb-1, home SP B)); NFS datastores 600 GiB,
// 50% free:
//
//	VIOLATION cluster-nas-onesp  (host esx-nas-a) ds-nas-a1 from 10.0.3.10, ds-nas-a2 from
//	                             10.0.3.11: two addresses, one SP -> warning naming SP A;
//	                             without the array silent (two addresses)
//	TWIN      cluster-nas-twosp  (host esx-nas-b) ds-nas-b1 from 10.0.3.10 (SP A), ds-nas-b2
//	                             from 10.0.3.20 (SP B)
//	TWIN      cluster-nas-reused (host esx-nas-c) ds-nas-c1 from 10.0.3.11 (nas-spa-2, SP A),
//	                             ds-nas-c2 from 10.0.3.20:/vol/ds-nas-c2: nas-spb-1's address
//	                             (SP B), the server found by address alone, but no share of it
//	                             holds the path -> SP A and SP B, no finding; pool-free-space
//	                             says at info why ds-nas-c2's pool is not judged
//	QUIET     ds-nas-dns         (host esx-nas-b) mounted from nas-spb-1.lab.example.com:/ds-nas-dns,
//	                             a share of nas-spb-1 by name: a name vslint does not resolve ->
//	                             not matched, no finding (a share of that name is no proof)
//
// pool-free-space behind NFS and VVol datastores (000 §1.1.1; with the Unity responder as
// [array]; each NFS datastore above is mounted from <address>:/<its name>, the Unity share of
// its file system; VVol datastores 600 GiB, 50% free, on esx-nas-b, whose URL holds the UUID
// the array's storageResource gives them):
//
//	VIOLATION pool-nfs-low       9 % free, holds ds-nas-a1's file system -> critical
//	VIOLATION pool-vvol-low      20 % free, holds VVol datastore ds-vvol-low -> warning
//	TWIN      pool-ok            holds ds-nas-a2, ds-nas-b1, ds-nas-b2 and ds-vvol-ok (50 % free)
//	TWIN      pool-unjoined      2 % free, holds fs-unmounted, exported by ds-nas-a1's NAS server
//	                             but mounted by no datastore -> silent
//
// multipath-policy, VVol protocol endpoints (esx-san-1, ScsiLun.protocolEndpoint
// true, paths to both SPs): 000 §3.9 tunes them as §3.3 tunes LUNs
//
//	VIOLATION naa.60060160a0b0000000000000000000f3  PE on VMW_PSP_MRU -> warning, the
//	                             message calls it a VVol protocol endpoint
//	TWIN      naa.60060160a0b0000000000000000000f4  PE on RR iops=1
//
// datastore-alarms, an alarm disabled on one entity (vSphere 7's
// AlarmManager.DisableAlarm: the entity's declaredAlarmState entry for it has
// disabled = true). In DC-remote (see the datastore-alarms section of
// scenario_violations.go's header; its root alarm is disabled), folder
// fld-pods holds "Datastore usage (pods)" usage 7000/9000, enabled, and two
// datastore clusters:
//
//	VIOLATION ds-alarm-pod-off   in pod-alarm-off, on which "Datastore usage (pods)"
//	                             is disabled -> warning, level "disabled", naming
//	                             pod-alarm-off
//	TWIN      ds-alarm-pod-on    in pod-alarm-on, whose declaredAlarmState entry for
//	                             the alarm has disabled = false
//
// space-reclaim, thin on thin (000 §3.7.2; judged only with the Unity
// responder as [array], which says ds-pool-ok's LUN (…d2) is thin and
// ds-pool-thick's (…d7) thick; VMs vmx-13 on esx-san-1, one 8 GiB disk each)
//
//	VIOLATION vm-thick-on-thin   lazyzeroedthick on ds-pool-ok -> info (detail thin-on-thin)
//	VIOLATION vm-thin-on-thick   thin on ds-pool-thick -> info (detail thin-on-thin)
//	TWIN      vm-thin-on-thin    thin on ds-pool-ok
//	TWIN      vm-thick-on-thick  lazyzeroedthick on ds-pool-thick (no reclaim asked of it)
func plantSeedRules(w *world) {
	san1 := w.hosts["esx-san-1"]
	naa := func(s string) string { return "naa.60060160a0b0" + strings.Repeat("0", 18) + s }
	const spA0, spA1, spB0 = "50:06:01:60:47:e4:1e:49", "50:06:01:61:47:e4:1e:49", "50:06:01:68:47:e4:1e:49"

	// xA0, xA1, xB0: ports whose SP only the array's fcPort list tells (tests/sim/unity/main.go).
	const xA0, xA1, xB0 = "58:cc:f0:98:49:20:0b:2a", "58:cc:f0:98:49:21:0b:2a", "58:cc:f0:98:49:28:0b:2a"
	for _, l := range []struct {
		naa     string
		targets []string
	}{{"f1", []string{spA0, spA1}}, {"f2", []string{spA0, spB0}}, {"f5", []string{xA0, xA1}},
		{"f6", []string{xA0, xB0}}} {
		spec := sanLun(naa(l.naa), 500)
		spec.targets = l.targets
		w.addLun(san1, spec)
	}

	iscsiA := w.hosts["esx-iscsi-a"]
	const lab = "iqn.1992-04.com.emc:cx.lab."
	for _, l := range []struct {
		naa     string
		portals []string
	}{{"e5", []string{"10.0.1.21 " + lab + "a0", "10.0.1.22 " + lab + "a1"}},
		{"e6", []string{"10.0.1.21 " + lab + "a0", "10.0.1.23 " + lab + "b0"}}} {
		spec := sanLun(naa(l.naa), 500)
		spec.portals = l.portals
		w.addLun(iscsiA, spec)
	}
	c := 600 * GiB
	for _, x := range []struct {
		cluster, host string
		ds            [2]string
		addr          [2]string
	}{{"cluster-nas-onesp", "esx-nas-a", [2]string{"ds-nas-a1", "ds-nas-a2"}, [2]string{"10.0.3.10", "10.0.3.11"}},
		{"cluster-nas-twosp", "esx-nas-b", [2]string{"ds-nas-b1", "ds-nas-b2"}, [2]string{"10.0.3.10", "10.0.3.20"}}} {
		h := w.addHost(w.addCluster(x.cluster), x.host, hostOpts{enableBlockDelete: 1})
		for i := range x.ds {
			w.addDatastore(dsSpec{name: x.ds[i], nfs: true, remoteHost: x.addr[i], remotePathBase: "/",
				capacity: c, free: pct(c, 50), hosts: []*simulator.HostSystem{h}})
		}
	}
	for _, n := range []string{"ds-vvol-low", "ds-vvol-ok"} {
		w.addDatastore(dsSpec{name: n, kind: "vvol", capacity: c, free: pct(c, 50),
			hosts: []*simulator.HostSystem{w.hosts["esx-nas-b"]}})
	}

	peMRU := sanLun(naa("f3"), 1)
	peMRU.pe, peMRU.policy, peMRU.targets = true, "VMW_PSP_MRU", []string{spA0, spB0}
	w.addLun(san1, peMRU)
	peRR := sanLun(naa("f4"), 1)
	peRR.pe, peRR.targets = true, []string{spA0, spB0}
	w.addLun(san1, peRR)

	plantDisabledOnEntity(w)

	for _, v := range []struct{ name, ds, format string }{
		{"vm-thick-on-thin", "ds-pool-ok", "lazyzeroedthick"},
		{"vm-thin-on-thick", "ds-pool-thick", "thin"},
		{"vm-thin-on-thin", "ds-pool-ok", "thin"},
		{"vm-thick-on-thick", "ds-pool-thick", "lazyzeroedthick"},
	} {
		w.addVM(vmSpec{name: v.name, host: san1,
			disks: []diskSpec{{ds: w.datastores[v.ds], gib: 8, format: v.format}}})
	}
	// Issue 22's leftovers, a reused address and a mount by name, planted last so that no
	// earlier object's moref changes.
	reused := w.addHost(w.addCluster("cluster-nas-reused"), "esx-nas-c", hostOpts{enableBlockDelete: 1})
	w.addDatastore(dsSpec{name: "ds-nas-c1", nfs: true, remoteHost: "10.0.3.11", remotePathBase: "/",
		capacity: c, free: pct(c, 50), hosts: []*simulator.HostSystem{reused}})
	w.addDatastore(dsSpec{name: "ds-nas-c2", nfs: true, remoteHost: "10.0.3.20", remotePathBase: "/vol/",
		capacity: c, free: pct(c, 50), hosts: []*simulator.HostSystem{reused}})
	w.addDatastore(dsSpec{name: "ds-nas-dns", nfs: true, remoteHost: "nas-spb-1.lab.example.com",
		remotePathBase: "/", capacity: c, free: pct(c, 50), hosts: []*simulator.HostSystem{w.hosts["esx-nas-b"]}})
}

// plantDisabledOnEntity: see the datastore-alarms part of the header above.
func plantDisabledOnEntity(w *world) {
	var dc *simulator.Datacenter
	for _, ref := range w.rootFolder().ChildEntity {
		if d, ok := simulator.Map.Get(ref).(*simulator.Datacenter); ok && d.Name == "DC-remote" {
			dc = d
		}
	}
	if dc == nil {
		panic("no DC-remote (plantViolationAlarms first)")
	}
	f, err := object.NewFolder(w.c, dc.DatastoreFolder).CreateFolder(w.ctx, "fld-pods")
	must(err)
	folder := simulator.Map.Get(f.Reference()).(*simulator.Folder)
	alarm := w.addAlarm(folder, "Datastore usage (pods)", "", true, anyOf(usage(7000, 9000)))
	c := 600 * GiB
	for _, x := range []struct {
		pod, ds  string
		disabled bool
	}{{"pod-alarm-off", "ds-alarm-pod-off", true}, {"pod-alarm-on", "ds-alarm-pod-on", false}} {
		p, err := object.NewFolder(w.c, folder.Self).CreateStoragePod(w.ctx, x.pod)
		must(err)
		pod := simulator.Map.Get(p.Reference()).(*simulator.StoragePod)
		name, disabled := x.pod, x.disabled
		lock(pod, func() {
			pod.Summary.Name = name
			pod.DeclaredAlarmState = append(pod.DeclaredAlarmState, types.AlarmState{
				Key: alarm.Self.Value + "." + pod.Self.Value, Entity: pod.Self, Alarm: alarm.Self,
				OverallStatus: types.ManagedEntityStatusGray, Time: w.now,
				Acknowledged: types.NewBool(false), Disabled: types.NewBool(disabled)})
		})
		w.pods[x.pod] = pod
		d := w.addDatastore(dsSpec{name: x.ds, capacity: c, free: pct(c, 50), pod: pod})
		w.moveToDatacenter(d, dc, nil)
	}
}
