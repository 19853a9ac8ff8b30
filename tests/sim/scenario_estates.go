package main

import (
	"strings"
	"time"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"
)

// Real estates, real exceptions (issue 27), planted in "violations" by
// plantRealEstates: configurations of production estates that an expert
// would dismiss a finding about, or that vslint used to miss, each with its
// compliant twin. This comment is the spec test_checks_estates.py is written
// against. Unless stated: VMs are powered on, vmx-13, one PVSCSI controller,
// one 40 GiB lazyzeroedthick disk on ds-estates, host esx-estates.
//
// Cluster "cluster-estates": esx-estates (ESXi 6.7.0) and esx-legacy-60
// (ESXi 6.0.0). ds-estates: VMFS6, 600 GiB, 50 % free, on esx-estates (its LUN
// RR iops=1, 2 active paths, DGC); ds-legacy: VMFS5 (ESXi 6.0 mounts no
// VMFS6), 600 GiB, 50 % free, on esx-legacy-60 -> vmfs-version warning.
// esx-estates' user claim rules: VMW_SATP_ALUA
// vendor DGC VMW_PSP_RR "policy=latency", and VMW_SATP_EQL vendor EQLOGIC
// DELL_PSP_EQL_ROUTED (EqualLogic MEM's); esx-legacy-60 has the lab's DGC
// iops=1 rule.
//
// Vendor path policies (esx-estates; naa.60060160e5e5 + 18 zeros + NN)
//
//	SILENT    ...e1  Nimble/Server, VMW_SATP_ALUA, NIMBLE_PSP_DIRECTED, 2 active
//	SILENT    ...e2  EQLOGIC/100E-00, VMW_SATP_EQL, DELL_PSP_EQL_ROUTED, 2 active
//	SILENT    ...e3  HITACHI/OPEN-V, VMW_SATP_DEFAULT_AA, HTI_PSP_HDLM_EXLBK, 2 active
//	          (multipath-policy and satp-claim-rule: not judged; host-coverage: one info
//	          finding "plug-ins" on esx-estates naming the three with their policies)
//	VIOLATION ...e4  DGC, VMW_PSP_FIXED, 2 active -> multipath-policy warning (VMware's own
//	                 policies are still judged on this host)
//
// Latency Round Robin (esx-estates; esxcli's PathSelectionPolicyDeviceConfig)
//
//	VIOLATION ...e5  DGC, RR "{policy=latency,...}" -> multipath-policy info (accepted)
//	VIOLATION ...e6  DGC, RR "{policy=bytes,iops=1,...}" -> multipath-policy warning
//	TWIN      esx-estates' DGC rule "policy=latency": satp-claim-rule silent on the host
//
// Non-disk SAN devices (esx-estates; one active path each)
//
//	SILENT    ...e7  lunType enclosure (LUN 254), DGC, VMW_PSP_MRU
//	SILENT    ...e8  lunType tape, IBM/ULT3580-TD8, VMW_SATP_DEFAULT_AA, VMW_PSP_FIXED
//	SILENT    ...e9  lunType mediaChanger, STK/L700, VMW_SATP_DEFAULT_AA, VMW_PSP_FIXED
//	          (no multipath-policy, multipath-redundancy, device-identifier or
//	          satp-claim-rule finding)
//	VIOLATION ...ea  lunType disk, DGC, RR iops=1, one active path -> multipath-redundancy
//	                 critical (the twin: a disk is judged)
//
// Local boot datastores (vmfs.local, on the host's mpx.vmhba0:C0:T0:L0; 120 GiB, 50 % free)
//
//	SILENT    "datastore1 (esx-estates)"    VMFS5 -> no vmfs-version finding
//	VIOLATION "datastore1 (esx-legacy-60)"  VMFS3 (3.60) -> vmfs-version critical
//
// Consolidation and orphaned deltas (snapshot-consolidation)
//
//	VIOLATION vm-orphan-delta    no snapshot, disk vm-orphan-delta-000001.vmdk whose parent is
//	                             its own vm-orphan-delta.vmdk -> warning
//	VIOLATION vm-orphan-named    no snapshot, disk vm-orphan-named-000002.vmdk, no parent
//	                             reported -> warning
//	VIOLATION vm-orphan-low      as vm-orphan-delta, on ds-free-warn (20 % free), host
//	                             esx-san-1 -> critical
//	VIOLATION vm-consolidate     runtime.consolidationNeeded true, one snapshot (1 day), delta
//	                             disk -> warning
//	TWIN      vm-delta-snap      one snapshot (1 day), delta disk: the snapshot explains it
//
// Snapshots by design (snapshots, snapshot-consolidation)
//
//	INFO      vm-golden          snapshot "golden" 30 days old, its disk vm-golden-000001.vmdk
//	                             (parent vm-golden.vmdk), which vm-lc-01 and vm-lc-02's disks
//	                             are children of -> snapshots info, never told to consolidate
//	SILENT    vm-lc-01, vm-lc-02 linked clones: vm-lc-0N-000001.vmdk, parent
//	                             [ds-estates] vm-golden/vm-golden.vmdk, no snapshot
//	SILENT    vm-replica         config.managedBy com.vmware.vcHms/replicaVm, snapshot
//	                             "restore point" 20 days old, delta disk
//	TWIN      vm-snap-old        (from the lab) 10 days old, not managed: warning
//
// Multi-writer disks (vdisk-format)
//
//	VIOLATION vm-mw-lazy         backing.sharing sharingMultiWriter, lazyzeroedthick -> critical
//	TWIN      vm-mw-eager        sharingMultiWriter, eagerzeroedthick
//
// Fault Tolerance (vdisk-format; the lab's hosts run the simulator's 6.5.0)
//
//	VIOLATION vm-ft-legacy       FT running, lazyzeroedthick, on esx-legacy-60 and ds-legacy
//	                             -> critical
//	INFO      vm-ft-lazy         (from the lab) FT running, lazyzeroedthick, 6.5.0 -> info
//
// pvscsi-controller
//
//	TWIN      vm-nvme-heavy      4 x 40 GiB on the virtual NVMe controller
//	TWIN      vm-os-lsi          1 x 40 GiB on LSI Logic (the OS), 4 x 40 GiB on PVSCSI (data)
//	TWIN      vm-lsi-700gib      1 x 700 GiB (751.6 GB) on LSI Logic, on ds-big-lsi: not more
//	                             than 750 GiB
func plantRealEstates(w *world) {
	cl := w.addCluster("cluster-estates")
	estates := w.addHost(cl, "esx-estates", hostOpts{enableBlockDelete: 1, version: "6.7.0"})
	legacy := w.addHost(cl, "esx-legacy-60", hostOpts{enableBlockDelete: 1, version: "6.0.0"})
	extraFor(estates.Self).userRules = []satpRule{
		{satp: "VMW_SATP_ALUA", vendor: "DGC", group: "user", psp: "VMW_PSP_RR", pspOptions: "policy=latency"},
		{satp: "VMW_SATP_EQL", vendor: "EQLOGIC", group: "user", psp: "DELL_PSP_EQL_ROUTED"},
	}

	naa := func(s string) string { return "naa.60060160e5e5" + strings.Repeat("0", 18) + s }
	lun := func(id, vendor, model, satp, policy string, paths ...string) lunSpec {
		l := sanLun(naa(id), 100)
		l.vendor, l.model, l.satp, l.policy = vendor, model, satp, policy
		if len(paths) > 0 {
			l.paths = paths
		}
		return l
	}
	// Vendor path policies, and VMware's own beside them.
	w.addLun(estates, lun("e1", "Nimble", "Server", "VMW_SATP_ALUA", "NIMBLE_PSP_DIRECTED"))
	w.addLun(estates, lun("e2", "EQLOGIC", "100E-00", "VMW_SATP_EQL", "DELL_PSP_EQL_ROUTED"))
	w.addLun(estates, lun("e3", "HITACHI", "OPEN-V", "VMW_SATP_DEFAULT_AA", "HTI_PSP_HDLM_EXLBK"))
	w.addLun(estates, lun("e4", "DGC", "VRAID", "VMW_SATP_ALUA", "VMW_PSP_FIXED"))
	// Latency and bytes Round Robin.
	latency := lun("e5", "DGC", "VRAID", "VMW_SATP_ALUA", "VMW_PSP_RR")
	latency.iops = 0
	latency.pspConfig = "{policy=latency,latencyEvalTime=180000,samplingCycles=16,curSamplingCycle=1,useANO=0; CurrentPath=vmhba2:C0:T0:L5: NumIOsPending=0,latency=0}"
	w.addLun(estates, latency)
	bytes := lun("e6", "DGC", "VRAID", "VMW_SATP_ALUA", "VMW_PSP_RR")
	bytes.iops = 1
	bytes.pspConfig = "{policy=bytes,iops=1,bytes=10485760,useANO=0; lastPathIndex=0: NumIOsPending=0,numBytesPending=0}"
	w.addLun(estates, bytes)
	// Non-disk devices, one path each, and a disk like them.
	enclosure := lun("e7", "DGC", "VRAID", "VMW_SATP_ALUA", "VMW_PSP_MRU", "active")
	enclosure.lunType = "enclosure"
	w.addLun(estates, enclosure)
	tape := lun("e8", "IBM", "ULT3580-TD8", "VMW_SATP_DEFAULT_AA", "VMW_PSP_FIXED", "active")
	tape.lunType = "tape"
	w.addLun(estates, tape)
	changer := lun("e9", "STK", "L700", "VMW_SATP_DEFAULT_AA", "VMW_PSP_FIXED", "active")
	changer.lunType = "mediaChanger"
	w.addLun(estates, changer)
	w.addLun(estates, lun("ea", "DGC", "VRAID", "VMW_SATP_ALUA", "VMW_PSP_RR", "active"))

	c := 600 * GiB
	dsE := w.addDatastore(dsSpec{name: "ds-estates", capacity: c, free: pct(c, 50),
		hosts: []*simulator.HostSystem{estates}})
	// ESXi 6.0 mounts no VMFS6: the legacy host's shared datastore is VMFS5.
	dsLegacy := w.addDatastore(dsSpec{name: "ds-legacy", vmfsMajor: 5, capacity: c, free: pct(c, 50),
		hosts: []*simulator.HostSystem{legacy}})
	w.addDatastore(dsSpec{name: "datastore1 (esx-estates)", vmfsMajor: 5, localDisk: "mpx.vmhba0:C0:T0:L0",
		capacity: 120 * GiB, free: pct(120*GiB, 50), hosts: []*simulator.HostSystem{estates}})
	local3 := w.addDatastore(dsSpec{name: "datastore1 (esx-legacy-60)", vmfsMajor: 3, localDisk: "mpx.vmhba0:C0:T0:L0",
		capacity: 120 * GiB, free: pct(120*GiB, 50), hosts: []*simulator.HostSystem{legacy}})
	lock(local3, func() { local3.Info.(*types.VmfsDatastoreInfo).Vmfs.Version = "3.60" })

	day := 24 * time.Hour
	one := func(d diskSpec) []diskSpec {
		if d.ds == nil {
			d.ds = dsE
		}
		if d.gib == 0 {
			d.gib = 40
		}
		if d.format == "" {
			d.format = "lazyzeroedthick"
		}
		return []diskSpec{d}
	}
	// Consolidation and orphaned deltas.
	w.addVM(vmSpec{name: "vm-orphan-delta", host: estates, disks: one(diskSpec{delta: 1})})
	w.addVM(vmSpec{name: "vm-orphan-named", host: estates, disks: one(diskSpec{delta: 2, noParent: true})})
	w.addVM(vmSpec{name: "vm-orphan-low", host: w.hosts["esx-san-1"],
		disks: one(diskSpec{ds: w.datastores["ds-free-warn"], delta: 1})})
	w.addVM(vmSpec{name: "vm-consolidate", host: estates, consolidationNeeded: true,
		disks: one(diskSpec{delta: 2}), snapshots: []snapSpec{{name: "backup-job", age: day}}})
	w.addVM(vmSpec{name: "vm-delta-snap", host: estates, disks: one(diskSpec{delta: 1}),
		snapshots: []snapSpec{{name: "before-patch", age: day}}})
	// Snapshots by design: a golden image and its linked clones, a replica.
	w.addVM(vmSpec{name: "vm-golden", host: estates, disks: one(diskSpec{delta: 1}),
		snapshots: []snapSpec{{name: "golden", age: 30 * day}}})
	for _, n := range []string{"vm-lc-01", "vm-lc-02"} {
		w.addVM(vmSpec{name: n, host: estates, disks: one(diskSpec{delta: 1, format: "thin",
			parent: "[ds-estates] vm-golden/vm-golden.vmdk"})})
	}
	w.addVM(vmSpec{name: "vm-replica", host: estates, poweredOff: true, disks: one(diskSpec{delta: 1}),
		snapshots: []snapSpec{{name: "restore point", age: 20 * day}},
		managedBy: &types.ManagedByInfo{ExtensionKey: "com.vmware.vcHms", Type: "replicaVm"}})
	// Multi-writer disks.
	w.addVM(vmSpec{name: "vm-mw-lazy", host: estates,
		disks: one(diskSpec{sharing: types.VirtualDiskSharingSharingMultiWriter})})
	w.addVM(vmSpec{name: "vm-mw-eager", host: estates,
		disks: one(diskSpec{format: "eagerzeroedthick", sharing: types.VirtualDiskSharingSharingMultiWriter})})
	// Fault Tolerance where legacy FT can still run.
	w.addVM(vmSpec{name: "vm-ft-legacy", host: legacy, ftState: types.VirtualMachineFaultToleranceStateRunning,
		disks: one(diskSpec{ds: dsLegacy})})
	// pvscsi-controller: NVMe, the OS on LSI Logic, and 700 GiB in GiB.
	four := func(ctrl int) []diskSpec {
		var s []diskSpec
		for i := 0; i < 4; i++ {
			s = append(s, diskSpec{ds: dsE, gib: 40, format: "lazyzeroedthick", ctrl: ctrl})
		}
		return s
	}
	w.addVM(vmSpec{name: "vm-nvme-heavy", host: estates, controllers: []ctrlSpec{{kind: "nvme"}}, disks: four(0)})
	w.addVM(vmSpec{name: "vm-os-lsi", host: estates, controllers: []ctrlSpec{{kind: "lsilogic"}, {kind: "pvscsi"}},
		disks: append(one(diskSpec{}), four(1)...)})
	w.addVM(vmSpec{name: "vm-lsi-700gib", host: estates, controllers: []ctrlSpec{{kind: "lsilogic"}},
		disks: one(diskSpec{ds: w.datastores["ds-big-lsi"], gib: 700})})
}
