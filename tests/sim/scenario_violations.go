package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"
)

// Scenario "violations" (version 1): everything of "clean" (see
// scenario_clean.go; all of it stays silent) plus, for every check of the
// catalogue, planted violations and compliant twins. This comment is the
// spec the check tests are written against. Sizes are GiB (1024^3);
// "50% free" etc. are exact byte fractions of capacity.
//
// Lab cluster "cluster-lab", hosts (all EnableBlockDelete=1 unless noted):
//
//	esx-iscsi-a, esx-iscsi-b, esx-iscsi-dvs, esx-noblockdelete (EnableBlockDelete=0),
//	esx-san-1, esx-san-noesxcli (refuses esxcli: ExecuteSoap faults NoPermission).
//
// Every lab datastore below is mounted on all lab hosts except
// esx-san-noesxcli, and its backing naa. LUN (RR, iops=1, 2 active paths,
// ALUA) is visible on those hosts; esx-san-noesxcli sees only LUN ...b1.
// Unless stated, datastores are VMFS6, 600 GiB, 50% free, uncommitted 0,
// and VMs are vmx-13, powered on, one PVSCSI controller (noSharing), one
// 40 GiB lazyzeroedthick disk, no snapshots, FT notConfigured, on
// esx-san-1.
//
// datastore-free-space
//
//	VIOLATION ds-free-warn       600 GiB, 20% free  -> warning
//	VIOLATION ds "Q3" & <Ops> 'Ñandú'  600 GiB, 22% free -> warning: a name with blanks,
//	                             & < > " ' and non-ASCII letters, which every output must
//	                             carry unchanged
//	VIOLATION ds-free-crit       600 GiB,  8% free  -> critical
//	VIOLATION ds-free-snaprisk   600 GiB,  3% free  -> critical (below the 5 % at which a Unity pool invalidates snapshots)
//	TWIN      ds-free-ok         600 GiB, 40% free  (holds vm-snap-old, vm-snap-chain, vm-snap-ok)
//	VIOLATION pod-free-low       StoragePod, 1200 GiB, 180 GiB free = 15% -> warning
//	          members: ds-pod-low-1 600 GiB 25% free (own finding: warning),
//	                   ds-pod-low-2 600 GiB  5% free (own finding: critical; 5% is not < 5%)
//	TWIN      pod-ok             (from clean: 50% free, members 50% free)
//
// datastore-size (band 500-750 GB; 600 GiB = 644 GB is inside)
//
//	VIOLATION ds-size-small      200 GiB (215 GB), 50% free -> warning
//	VIOLATION ds-size-huge       70 TiB (76.97 TB), 50% free -> critical
//	EXEMPT    ds-size-exempt     1200 GiB, 50% free, holds vm-bigdisk (one 900 GiB = 966 GB
//	                             lazyzeroedthick disk on PVSCSI) -> exempt, no finding
//	EXEMPT    ds-big-lsi         1200 GiB, 50% free, holds vm-big-lsi (800 GiB = 859 GB disk)
//	                             -> exempt, no finding (exists for pvscsi-controller)
//	TWIN      every 600 GiB datastore
//
// vms-per-datastore
//
//	VIOLATION ds-crowded         30 VMs vm-crowd-01..vm-crowd-30, powered on, one 8 GiB
//	                             lazyzeroedthick disk each -> warning (30 > 25)
//	TWIN      ds-busy-ok         20 VMs vm-busy-01..vm-busy-20 (powered on, 8 GiB) plus
//	                             10 templates tmpl-busy-01..tmpl-busy-10 (8 GiB) -> 20, silent
//
// iscsi-jumbo-frames
//
//	VIOLATION esx-iscsi-a        vmk1 MTU 1500 on vSwitch-iscsi MTU 9000 -> warning
//	VIOLATION esx-iscsi-b        vmk1 MTU 9000 on vSwitch-iscsi MTU 1500 -> critical
//	VIOLATION esx-iscsi-dvs      vmk1 MTU 9000 on DVS dvs-iscsi (maxMtu 1500) -> critical
//	TWIN      esx-iscsi-clean    (from clean: 9000 on 9000)
//	(vmk1 is bound to vmhba64 on all four hosts; vmk0 management is not iSCSI-bound)
//
// iscsi-delayed-ack
//
//	VIOLATION esx-iscsi-a        vmhba64 DelayedAck true; send target 10.0.1.20:3260 and
//	                             static target 10.0.1.21:3260 inherit (true, isInherited true)
//	                             -> warning (adapter, and targets effective true)
//	VIOLATION esx-iscsi-b        vmhba64 DelayedAck false; send target 10.0.0.20:3260
//	                             DelayedAck true, isInherited false -> warning (that target);
//	                             static target 10.0.0.21:3260 inherits false -> silent
//	SILENT    esx-iscsi-dvs      adapter false, send target 10.0.2.20:3260 inherits false
//	TWIN      esx-iscsi-clean    (from clean)
//
// vdisk-format
//
//	VIOLATION vm-ft-lazy         faultToleranceState running, lazyzeroedthick -> critical
//	TWIN      vm-ft-eager        running, eagerzeroedthick
//	VIOLATION vm-mscs-thin       SCSI controller sharedBus physicalSharing, thin -> critical
//	TWIN      vm-mscs-eager      physicalSharing, eagerzeroedthick
//	TWIN      vm-reclaim-old     thin, vmx-10, on ds-vmfs5 (VMFS5, 600 GiB, 50% free),
//	                             host esx-noblockdelete (EnableBlockDelete=0): no FT, no
//	                             shared bus (its reclaim is space-reclaim's)
//	TWIN      vm-reclaim-ok      thin, vmx-13, on ds-thin-ok (VMFS6), host esx-noblockdelete
//	(ft/mscs VMs live on ds-lab-01)
//
// multipath-policy (host esx-san-1 unless noted; all vendor DGC, ALUA)
//
//	VIOLATION naa.60060160a0b0000000000000000000a1  VMW_PSP_MRU, 2 active paths -> warning
//	VIOLATION naa.60060160a0b0000000000000000000a2  VMW_PSP_RR iops=1000, 2 active -> warning
//	TWIN      naa.60060160a0b0000000000000000000a3  VMW_PSP_RR iops=1, 2 active
//	UNKNOWN   naa.60060160a0b0000000000000000000b1  on esx-san-noesxcli: VMW_PSP_RR, 2 active,
//	                             esxcli refused -> IOPS limit unknown (say so; never guess)
//
// multipath-redundancy (esx-san-1)
//
//	VIOLATION naa.60060160a0b0000000000000000000a4  RR iops=1, 1 active path -> critical
//	VIOLATION naa.60060160a0b0000000000000000000a5  RR iops=1, 2 paths: active + dead -> critical
//	TWIN      ...a3
//
// device-identifier (esx-san-1)
//
//	VIOLATION sym.000192601234533031323334  RR iops=1, 2 active, vendor EMC, model SYMMETRIX,
//	                             SATP VMW_SATP_SYMM -> warning
//	TWIN      the naa. LUNs; the local mpx.vmhba0:C0:T0:L0 boot disk is localDisk=true (not SAN)
//
// satp-claim-rule (every host answers esxcli storage nmp satp rule list with
// the system rules of ext.go's systemRules, none of which gives DGC or EMC
// LUNs Round Robin with iops=1, plus its user rules; a lab host's user rule
// is, as in clean, VMW_SATP_ALUA vendor DGC, VMW_PSP_RR, PSP options iops=1,
// unless noted)
//
//	VIOLATION esx-san-1          user rules: VMW_SATP_ALUA vendor DGC VMW_PSP_RR with no PSP
//	                             options (Round Robin at the default 1000 I/Os), and
//	                             VMW_SATP_SYMM vendor EMC model SYMMETRIX VMW_PSP_RR iops=1
//	                             (001's rule) -> warning for VMW_SATP_ALUA/DGC (LUNs
//	                             ...a1-...a5 and the lab datastores' LUNs); the
//	                             sym.000192601234533031323334 LUN (VMW_SATP_SYMM, EMC,
//	                             SYMMETRIX) is covered by the SYMM rule: no finding for
//	                             VMW_SATP_SYMM/EMC
//	TWIN      esx-iscsi-a, esx-iscsi-b, esx-iscsi-dvs, esx-noblockdelete (ALUA/DGC LUNs,
//	                             the DGC rule), and every clean host
//	SKIPPED   esx-san-noesxcli   refuses esxcli: its rules are unknown, no finding
//
// pvscsi-controller
//
//	VIOLATION vm-many-disks-lsi  4 x 40 GiB lazyzeroedthick on VirtualLsiLogicController,
//	                             on ds-lab-02 -> info
//	VIOLATION vm-big-lsi         1 x 800 GiB lazyzeroedthick on VirtualLsiLogicSASController,
//	                             on ds-big-lsi -> info
//	TWIN      vm-many-disks-pvscsi 4 x 40 GiB on ParaVirtualSCSIController, on ds-lab-03
//	TWIN      vm-bigdisk         900 GiB on PVSCSI
//
// snapshots (VMs on ds-free-ok)
//
//	VIOLATION vm-snap-old        1 snapshot "old-1", created 10 days ago -> warning
//	VIOLATION vm-snap-chain      chain of 4 snapshots chain-1..chain-4, ~1 day old -> warning
//	TWIN      vm-snap-ok         1 snapshot "ok-1", 1 day old
//
// thin-overcommit
//
//	VIOLATION ds-overcommit      600 GiB, 50% free, uncommitted 700 GiB:
//	                             (600-300+700)/600 = 167% -> warning; holds vm-thin-overcommit
//	                             (one thin 1000 GiB PVSCSI disk, vmx-13)
//	TWIN      ds-thin-ok         600 GiB, 50% free, uncommitted 100 GiB: 67%; holds vm-reclaim-ok
//
// Other lab datastores, all compliant: ds-lab-01, ds-lab-02, ds-lab-03.
//
// The seeds' rules taken whole (issue 22: storage processors, VVol protocol
// endpoints, ...): see scenario_seeds.go.
//
// pool-free-space and pool-subscription (with the Unity responder, tests/sim/unity/main.go,
// which holds their LUNs; without an [array] section they are compliant datastores):
// ds-pool-low, ds-pool-ok, ds-pool-warn, ds-pool-snap, ds-pool-over, ds-pool-thick, each
// 600 GiB, 60% free, on lab hosts, on SAN LUN naa.600601600000000000000000000000 + d1, d2, d3,
// d4, d5, d7 (the responder's WWNs 60:06:01:60:00:...:00:D1 and so on).
//
// vmfs-version (every VMFS datastore above is VMFS6 unless noted)
//
//	VIOLATION ds-vmfs5           VMFS5 (from vdisk-format) -> warning
//	VIOLATION ds-vmfs3           VMFS3 (version 3.60), 600 GiB, 50% free, lab hosts -> critical
//	TWIN      every VMFS6 datastore; ds-nfs-clean is NFS (skipped)
//
// space-reclaim (000 §3.7.2; VMFS6 datastores leave unmapPriority unset,
// i.e. not reported, unless noted)
//
//	VIOLATION ds-unmap-none      VMFS6, unmapPriority "none", 600 GiB, 50% free, lab
//	                             hosts -> warning (automatic space reclamation off)
//	TWIN      ds-unmap-low       VMFS6, unmapPriority "low"
//	VIOLATION esx-noblockdelete  EnableBlockDelete=0, runs vm-reclaim-old (thin on VMFS5
//	                             ds-vmfs5) -> one warning for the host, listing
//	                             vm-reclaim-old only (vm-reclaim-ok's thin disk is on VMFS6)
//	VIOLATION vm-reclaim-old     vmx-10 with a thin disk on VMFS5 -> info
//	TWIN      vm-reclaim-ok      vmx-13, thin on VMFS6 (on esx-noblockdelete)
//	TWIN      vm-reclaim-ebd     vmx-13, thin 40 GiB on ds-vmfs5, on esx-san-1
//	                             (EnableBlockDelete=1): neither it nor its host
//
// nfs-server-redundancy (000 §3.8; NFS datastores 600 GiB, 50% free)
//
//	VIOLATION cluster-lab        ds-nfs-lab-1 and ds-nfs-lab-2, both from
//	                             nas-lab.example.com, mounted on the lab hosts -> warning
//	TWIN      cluster-clean      ds-nfs-clean (nfs01.example.com) and ds-nfs-clean-b
//	                             (nfs02.example.com), mounted on the clean hosts
//	                             (in the clean scenario, ds-nfs-clean alone: silent too)
//
// datastore-alarms (alarms.go; "usage" = disk.used.latest, type Datastore,
// isAbove, thresholds in hundredths of a percent; vslint wants yellow by 70 %
// and red by 90 %, datastore-free-space's 30 % / 10 % free)
//
//	root folder: clean's "Datastore usage on disk" set back to vCenter's
//	             default usage 7500/8500 and DISABLED; the host alarm stays
//	DC0:         "Datastore usage (DC0)" usage 7000/9000, enabled: covers every
//	             datastore above -> TWIN (all silent)
//	Datacenter DC-remote (under the root folder); its datastores are VMFS6,
//	600 GiB, 50% free, mounted on no host, in its datastore folder unless noted:
//	VIOLATION ds-alarm-disabled     only the root's disabled alarm covers it -> warning
//	VIOLATION ds-alarm-high         in folder fld-alarm-high, whose "Datastore usage (lax)"
//	                                is Or(usage 8000/9500, state summary.accessible) -> warning
//	                                (warns at 80 %, red at 95 %)
//	VIOLATION ds-alarm-provisioned  its own alarm "Datastore overcommitment" watches
//	                                disk.provisioned.latest 7000/9000: not usage -> warning
//	VIOLATION ds-alarm-and          its own alarm is And(usage 7000/9000, a state): never
//	                                fires on usage alone -> warning
//	TWIN      ds-alarm-folder-ok    in folder fld-alarm-ok ("Datastore usage (remote)" 7000/9000)
//	TWIN      ds-alarm-nested-ok    in fld-alarm-ok/fld-alarm-ok-sub (inherits it)
//	TWIN      ds-alarm-own-ok       its own alarm, usage 6500/8500
//	TWIN      ds-alarm-pod-ok       in datastore cluster pod-alarm, whose alarm is 7000/9000
//	TWIN      ds-alarm-split        two alarms of its own: yellow-only 7000 and red-only 9000
//	With -refuse-alarms, GetAlarm faults (NoPermission): an "alarms" gap, no finding.
//
// Real estates and their exceptions (issue 27): see scenario_estates.go.
func buildViolations(w *world) {
	buildClean(w)

	cl := w.addCluster("cluster-lab")
	for _, n := range []string{"esx-iscsi-a", "esx-iscsi-b", "esx-iscsi-dvs", "esx-san-1", "esx-san-noesxcli"} {
		w.addHost(cl, n, hostOpts{enableBlockDelete: 1, refuseEsxcli: n == "esx-san-noesxcli"})
	}
	w.addHost(cl, "esx-noblockdelete", hostOpts{enableBlockDelete: 0})
	// satp-claim-rule: esx-san-1's DGC rule sets Round Robin but no IOPS limit.
	noIops := dgcRule()
	noIops.pspOptions = ""
	extraFor(w.hosts["esx-san-1"].Self).userRules = []satpRule{noIops,
		{satp: "VMW_SATP_SYMM", vendor: "EMC", model: "SYMMETRIX", group: "user", psp: "VMW_PSP_RR", pspOptions: "iops=1"}}

	// iSCSI before any LUN, so SAN paths go through vmhba64 on these hosts.
	w.addIscsi(w.hosts["esx-iscsi-a"], iscsiSpec{
		delayedAck:    true,
		sendTargets:   []targetSpec{{address: "10.0.1.20", port: 3260}},
		staticTargets: []targetSpec{{address: "10.0.1.21", port: 3260, iqn: "iqn.1992-04.com.emc:cx.lab.a0"}},
		vnicMTU:       1500, vswitchMTU: 9000,
	})
	w.addIscsi(w.hosts["esx-iscsi-b"], iscsiSpec{
		delayedAck:    false,
		sendTargets:   []targetSpec{{address: "10.0.0.20", port: 3260, delayedAck: boolp(true)}},
		staticTargets: []targetSpec{{address: "10.0.0.21", port: 3260, iqn: "iqn.1992-04.com.emc:cx.lab.b0"}},
		vnicMTU:       9000, vswitchMTU: 1500,
	})
	dvs := w.addDVS("dvs-iscsi", 1500, hostsOf(w, "esx-iscsi-dvs"))
	w.addIscsi(w.hosts["esx-iscsi-dvs"], iscsiSpec{
		delayedAck:  false,
		sendTargets: []targetSpec{{address: "10.0.2.20", port: 3260}},
		vnicMTU:     9000, dvs: dvs,
	})

	// Multipath LUNs.
	san1 := w.hosts["esx-san-1"]
	naa := func(s string) string { return "naa.60060160a0b0" + strings.Repeat("0", 18) + s }
	mru := sanLun(naa("a1"), 500)
	mru.policy = "VMW_PSP_MRU"
	w.addLun(san1, mru)
	rr1000 := sanLun(naa("a2"), 500)
	rr1000.iops = 1000
	w.addLun(san1, rr1000)
	w.addLun(san1, sanLun(naa("a3"), 500))
	onePath := sanLun(naa("a4"), 500)
	onePath.paths = []string{"active"}
	w.addLun(san1, onePath)
	dead := sanLun(naa("a5"), 500)
	dead.paths = []string{"active", "dead"}
	w.addLun(san1, dead)
	sym := sanLun("sym.000192601234533031323334", 500)
	sym.vendor, sym.model, sym.satp = "EMC", "SYMMETRIX", "VMW_SATP_SYMM"
	w.addLun(san1, sym)
	w.addLun(w.hosts["esx-san-noesxcli"], sanLun(naa("b1"), 500))

	lab := hostsOf(w, "esx-iscsi-a", "esx-iscsi-b", "esx-iscsi-dvs", "esx-noblockdelete", "esx-san-1")
	c := 600 * GiB
	ds := func(name string, capacity, free, uncommitted int64) *simulator.Datastore {
		return w.addDatastore(dsSpec{name: name, capacity: capacity, free: free, uncommitted: uncommitted, hosts: lab})
	}
	// datastore-free-space
	ds("ds-free-warn", c, pct(c, 20), 0)
	ds(`ds "Q3" & <Ops> 'Ñandú'`, c, pct(c, 22), 0)
	ds("ds-free-crit", c, pct(c, 8), 0)
	ds("ds-free-snaprisk", c, pct(c, 3), 0)
	freeOK := ds("ds-free-ok", c, pct(c, 40), 0)
	podLow := w.addPod("pod-free-low")
	w.addDatastore(dsSpec{name: "ds-pod-low-1", capacity: c, free: pct(c, 25), hosts: lab, pod: podLow})
	w.addDatastore(dsSpec{name: "ds-pod-low-2", capacity: c, free: pct(c, 5), hosts: lab, pod: podLow})
	// datastore-size
	ds("ds-size-small", 200*GiB, pct(200*GiB, 50), 0)
	ds("ds-size-huge", 70*TiB, pct(70*TiB, 50), 0)
	exempt := ds("ds-size-exempt", 1200*GiB, pct(1200*GiB, 50), 0)
	bigLsi := ds("ds-big-lsi", 1200*GiB, pct(1200*GiB, 50), 0)
	// vms-per-datastore
	crowded := ds("ds-crowded", c, pct(c, 50), 0)
	busy := ds("ds-busy-ok", c, pct(c, 50), 0)
	// vdisk-format
	vmfs5 := w.addDatastore(dsSpec{name: "ds-vmfs5", vmfsMajor: 5, capacity: c, free: pct(c, 50), hosts: lab})
	// thin-overcommit
	over := ds("ds-overcommit", c, pct(c, 50), 700*GiB)
	thinOK := ds("ds-thin-ok", c, pct(c, 50), 100*GiB)
	// pool-free-space and pool-subscription (the Unity responder, tests/sim/unity/, holds
	// these LUNs in pools near each threshold): every one 60 % free as vCenter sees it.
	for _, p := range []struct{ name, naa string }{
		{"ds-pool-low", "d1"}, {"ds-pool-ok", "d2"}, {"ds-pool-warn", "d3"},
		{"ds-pool-snap", "d4"}, {"ds-pool-over", "d5"}, {"ds-pool-thick", "d7"},
	} {
		w.addDatastore(dsSpec{name: p.name, naa: "naa.600601600000000000000000000000" + p.naa,
			capacity: c, free: pct(c, 60), hosts: lab})
	}
	lab1 := ds("ds-lab-01", c, pct(c, 50), 0)
	lab2 := ds("ds-lab-02", c, pct(c, 50), 0)
	lab3 := ds("ds-lab-03", c, pct(c, 50), 0)

	noBD := w.hosts["esx-noblockdelete"]
	disk := func(d *simulator.Datastore, gib int64, format string) []diskSpec {
		return []diskSpec{{ds: d, gib: gib, format: format}}
	}
	// datastore-size exemption and pvscsi twin
	w.addVM(vmSpec{name: "vm-bigdisk", host: san1, disks: disk(exempt, 900, "lazyzeroedthick")})
	// vms-per-datastore
	for i := 1; i <= 30; i++ {
		w.addVM(vmSpec{name: fmt.Sprintf("vm-crowd-%02d", i), host: lab[i%len(lab)], disks: disk(crowded, 8, "lazyzeroedthick")})
	}
	for i := 1; i <= 20; i++ {
		w.addVM(vmSpec{name: fmt.Sprintf("vm-busy-%02d", i), host: lab[i%len(lab)], disks: disk(busy, 8, "lazyzeroedthick")})
	}
	for i := 1; i <= 10; i++ {
		w.addVM(vmSpec{name: fmt.Sprintf("tmpl-busy-%02d", i), host: lab[i%len(lab)], template: true, disks: disk(busy, 8, "lazyzeroedthick")})
	}
	// vdisk-format
	running := types.VirtualMachineFaultToleranceStateRunning
	w.addVM(vmSpec{name: "vm-ft-lazy", host: san1, ftState: running, guestId: "rhel8_64Guest", disks: disk(lab1, 40, "lazyzeroedthick")})
	w.addVM(vmSpec{name: "vm-ft-eager", host: san1, ftState: running, guestId: "rhel8_64Guest", disks: disk(lab1, 40, "eagerzeroedthick")})
	shared := []ctrlSpec{{kind: "pvscsi", sharedBus: types.VirtualSCSISharingPhysicalSharing}}
	w.addVM(vmSpec{name: "vm-mscs-thin", host: san1, controllers: shared, guestId: "windows2019srv_64Guest", disks: disk(lab1, 40, "thin")})
	w.addVM(vmSpec{name: "vm-mscs-eager", host: san1, controllers: shared, guestId: "windows2019srv_64Guest", disks: disk(lab1, 40, "eagerzeroedthick")})
	w.addVM(vmSpec{name: "vm-reclaim-old", host: noBD, hwVersion: "vmx-10", disks: disk(vmfs5, 40, "thin")})
	w.addVM(vmSpec{name: "vm-reclaim-ok", host: noBD, disks: disk(thinOK, 40, "thin")})
	// pvscsi-controller
	four := func(d *simulator.Datastore) []diskSpec {
		var s []diskSpec
		for i := 0; i < 4; i++ {
			s = append(s, diskSpec{ds: d, gib: 40, format: "lazyzeroedthick"})
		}
		return s
	}
	w.addVM(vmSpec{name: "vm-many-disks-lsi", host: san1, controllers: []ctrlSpec{{kind: "lsilogic"}}, disks: four(lab2)})
	w.addVM(vmSpec{name: "vm-big-lsi", host: san1, controllers: []ctrlSpec{{kind: "lsilogicsas"}}, disks: disk(bigLsi, 800, "lazyzeroedthick")})
	w.addVM(vmSpec{name: "vm-many-disks-pvscsi", host: san1, disks: four(lab3)})
	// snapshots
	day := 24 * time.Hour
	w.addVM(vmSpec{name: "vm-snap-old", host: san1, disks: disk(freeOK, 40, "lazyzeroedthick"),
		snapshots: []snapSpec{{name: "old-1", age: 10 * day}}})
	w.addVM(vmSpec{name: "vm-snap-chain", host: san1, disks: disk(freeOK, 40, "lazyzeroedthick"),
		snapshots: chain("chain", 4, day)})
	w.addVM(vmSpec{name: "vm-snap-ok", host: san1, disks: disk(freeOK, 40, "lazyzeroedthick"),
		snapshots: []snapSpec{{name: "ok-1", age: day}}})
	// thin-overcommit
	w.addVM(vmSpec{name: "vm-thin-overcommit", host: san1, disks: disk(over, 1000, "thin")})
	// vmfs-version
	vmfs3 := w.addDatastore(dsSpec{name: "ds-vmfs3", vmfsMajor: 3, capacity: c, free: pct(c, 50), hosts: lab})
	lock(vmfs3, func() { vmfs3.Info.(*types.VmfsDatastoreInfo).Vmfs.Version = "3.60" })
	// space-reclaim
	w.addDatastore(dsSpec{name: "ds-unmap-none", unmapPriority: "none", capacity: c, free: pct(c, 50), hosts: lab})
	w.addDatastore(dsSpec{name: "ds-unmap-low", unmapPriority: "low", capacity: c, free: pct(c, 50), hosts: lab})
	w.addVM(vmSpec{name: "vm-reclaim-ebd", host: san1, disks: disk(vmfs5, 40, "thin")})
	// nfs-server-redundancy
	for _, n := range []string{"ds-nfs-lab-1", "ds-nfs-lab-2"} {
		w.addDatastore(dsSpec{name: n, nfs: true, remoteHost: "nas-lab.example.com", capacity: c,
			free: pct(c, 50), hosts: lab})
	}
	w.addDatastore(dsSpec{name: "ds-nfs-clean-b", nfs: true, remoteHost: "nfs02.example.com", capacity: c,
		free: pct(c, 50), hosts: hostsOf(w, "esx-clean-01", "esx-clean-02", "esx-clean-03", "esx-iscsi-clean")})
	// issue 27's real-estate exceptions (scenario_estates.go)
	plantRealEstates(w)
	// issue 27's software iSCSI through one NIC (scenario_iscsi_nics.go)
	plantIscsiNics(w)
	// datastore-alarms
	plantViolationAlarms(w)
	// the seeds' rules taken whole (scenario_seeds.go)
	plantSeedRules(w)
}
