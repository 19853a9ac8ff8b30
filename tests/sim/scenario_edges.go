package main

import (
	"fmt"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"
)

// Scenario "edges" (version 1): everything of "clean" (see
// scenario_clean.go) plus what real estates hold and "clean" does not: the
// data "findings you can trust on a real estate" needs. Each planted fact
// has a compliant twin (TWIN). Sizes are GiB (1024^3). Unless stated,
// datastores are VMFS6 (version 6.82, unmapPriority unset, ssd false),
// 600 GiB, 50% free, mounted (and accessible) on esx-edge-01 and
// esx-edge-02, each extent on its own naa. SAN LUN (DGC, RR iops=1, ALUA,
// 2 active paths on FC vmhba2/vmhba3, localDisk false) visible on both; VMs
// are vmx-13, powered on, one PVSCSI controller, one 8 GiB lazyzeroedthick
// disk on their home datastore, on esx-edge-01.
//
// Cluster "cluster-edges", hosts (EnableBlockDelete=1, FC HBAs vmhba2 and
// vmhba3 HostFibreChannelHba/qlnativefc, the stock local vmhba0
// HostParallelScsiHba/pvscsi with boot disk mpx.vmhba0:C0:T0:L0 and vmhba1
// HostBlockHba/vmkata):
//
//	esx-edge-01, esx-edge-02, esx-edge-iscsi, and esx "Prod" & <Ops> 'Ñandú'
//
// Datastores (VmfsDatastoreInfo.vmfs, Datastore.host)
//
//	ds-edge-span        2 extents (2 naa. LUNs, partition 1 each), both LUNs
//	                    visible on esx-edge-01 and esx-edge-02, 1200 GiB
//	TWIN ds-edge-single 1 extent
//	datastore1 (esx-edge-01)  local boot VMFS: vmfs.local true, 120 GiB, one
//	                    extent mpx.vmhba0:C0:T0:L0 partition 3 (localDisk true,
//	                    one path on vmhba0 HostParallelScsiHba, VMW_SATP_LOCAL,
//	                    VMW_PSP_FIXED), mounted on esx-edge-01 only
//	TWIN ds-edge-single the SAN one (vmfs.local false)
//	ds-edge-vmfs5       VMFS5 (version 5.81, no unmapPriority)
//	ds-edge-unmap-none  VMFS6, unmapPriority "none" (automatic unmap off)
//	TWIN ds-edge-unmap-low VMFS6, unmapPriority "low", vmfs.ssd true
//	ds-edge-750 / ds-edge-760  exactly 750 GiB and 760 GiB
//	ds-edge-499 / ds-edge-500  exactly 499 GiB and 500 GiB
//	ds-edge-1000        1000 GiB, holds vm-edge-bigdisks: two 400 GiB
//	                    lazyzeroedthick disks there
//	ds-edge-apd         mounted on both hosts, mountInfo.accessible false on
//	                    esx-edge-02 (TWIN: every other mount is accessible)
//	ds-edge-nfs         NFS (nfs01.example.com:/export/ds-edge-nfs), holds
//	                    vm-edge-nfs (thin disk there)
//	ds-edge-vsan        vsan (VsanDatastoreInfo), holds vm-edge-vsan (thin)
//	ds-edge-vvol        VVOL (VvolDatastoreInfo), holds vm-edge-vvol (thin)
//	ds-edge-iscsi       on esx-edge-iscsi only, its LUN through vmhba64
//
// Where VMs live (summary.config.vmPathName vs VirtualMachine.datastore)
//
//	ds-edge-26vms       the configuration (and disk) of 26 VMs
//	                    vm-edge-home-01..vm-edge-home-26
//	ds-edge-iso         no VM's configuration; 30 VMs only have an ISO image
//	                    ("[ds-edge-iso] iso/linux.iso", VirtualCdrom with a
//	                    VirtualCdromIsoBackingInfo on IDE 0) mounted from it:
//	                    vm-edge-home-01..26 and vm-edge-iso-01..04, so
//	                    Datastore.vm lists 30 VMs and each of those VMs'
//	                    VirtualMachine.datastore lists it
//	ds-edge-4vms        the configurations of vm-edge-iso-01..04 and of
//	TWIN vm-edge-noiso  the same, without a CD-ROM
//
// Devices on esx-edge-01 (besides its datastores' LUNs and the boot disk)
//
//	vmhba4              HostSerialAttachedHba, driver lsi_msgpt3 (local SAS)
//	vmhba5              HostPcieHba, driver nvme_pcie (local NVMe)
//	naa.5000c500a1b2c3d4  local SAS disk, localDisk not answered, one path on
//	                    vmhba4, VMW_SATP_LOCAL, VMW_PSP_FIXED
//	eui.0025388b91c3a1b2  NVMe, localDisk true, ssd, HPP: policy LB-RR of type
//	                    HostMultipathInfoHppLogicalUnitPolicy, no SATP, one
//	                    path on vmhba5, claimed by plug-in HPP
//	naa.60000970000197601234533030303441  EMC SYMMETRIX claimed by plug-in
//	                    PowerPath: in scsiLun and plugStoreTopology, absent
//	                    from multipathInfo (no policy, SATP or paths there)
//	naa.600601600000000000000000000000c1  ALUA, RR: 2 active + 2 standby
//	                    paths, over vmhba2 and vmhba3
//	naa.600601600000000000000000000000c2  RR: 2 active paths, both through
//	                    vmhba2 (TWIN of ...c1: two adapters)
//	naa.600601600000000000000000000000c3  RR: paths active (vmhba2) and off
//	                    (vmhba3)
//	TWIN every other SAN LUN: claimed by NMP, VMW_PSP_*, 2 active paths
//
// SATP claim rules of esx-edge-01 (esxcli storage nmp satp rule list):
// besides the DGC rule and the system rules (unscoped: TWIN), user rules
//
//	VMW_SATP_ALUA device naa.600601600000000000000000000000c1 VMW_PSP_RR iops=1
//	VMW_SATP_LOCAL driver lsi_msgpt3 VMW_PSP_FIXED
//	VMW_SATP_ALUA transport fc, claim options tpgs_on, options
//	              reset_on_attempted_reserve, VMW_PSP_RR iops=1
//
// iSCSI on esx-edge-iscsi (software vmhba64, adapter DelayedAck false, vmk1
// MTU 9000 on vSwitch-iscsi MTU 9000): an array that presents one IQN per
// volume on one portal
//
//	send target 10.0.5.10:3260 with DelayedAck true set on it (not inherited)
//	static targets 10.0.5.10:3260 iqn.2001-05.com.equallogic:0-8a0906-edge-vol1,
//	                    -vol2 and -vol3: discoveryMethod sendTargetMethod,
//	                    parent "10.0.5.10:3260", DelayedAck true inherited
//	                    from the send target
//	TWIN static target 10.0.5.20:3260 iqn.1992-04.com.emc:cx.edge.a0:
//	                    staticMethod, parent vmhba64, DelayedAck false
//	                    inherited from the adapter
//
// Names with spaces, & < > " ' and non-ASCII letters, which must come back
// unchanged from SOAP, SQLite and JSON (TWIN: every other name)
//
//	host      esx "Prod" & <Ops> 'Ñandú'  (mounts the datastore below)
//	datastore ds "Prod" & <Ops> 'Ñandú'   (on esx-edge-01 and that host)
//	VM        vm "Prod" & <Ops> 'Ñandú'   (on that host and datastore)
//
// Hosts esx-edge-iscsi-b, esx-edge-nvmeof and esx-edge-rules, and what the
// host checks make of all of the above: scenario_edges_hosts.go (its
// header is their spec).
//
// Capacity, placement and space checks on the datastores above (the checks'
// applies-to/skips rules, docs/findings.md):
//
//	datastore-size      ds-edge-499, ds-edge-760 and ds-edge-span (1200 GiB
//	                    over 2 LUNs: its finding names both) are flagged;
//	                    TWIN ds-edge-500, ds-edge-750, ds-edge-1000 (exempt:
//	                    vm-edge-bigdisks keeps 800 GiB there), datastore1
//	                    (esx-edge-01) (local boot volume: not judged), the
//	                    NFS, vSAN and vVol ones (no LUN size)
//	vms-per-datastore   ds-edge-26vms flagged (26 VMs live there); TWIN
//	                    ds-edge-iso (30 VMs only mount an ISO image from it),
//	                    ds-edge-4vms; NFS is judged, vSAN and vVol are not
//	space-reclaim       ds-edge-unmap-none flagged; TWIN ds-edge-unmap-low,
//	                    ds-edge-single (unmapPriority not reported)
//
// Added for space-reclaim and nfs-server-redundancy (sizes as above):
//
//	esx-edge-noebd      in cluster-edges, EnableBlockDelete=0; mounts only:
//	  ds-edge-reclaim5  VMFS5 (its own LUN, on esx-edge-noebd only)
//	  ds-edge-reclaim6  VMFS6, unmapPriority low (likewise)
//	  datastore1 (esx-edge-noebd)  local boot VMFS6 on its mpx.vmhba0:C0:T0:L0,
//	                    120 GiB, unmapPriority "none": not judged (no array
//	                    pool; TWIN of ds-edge-unmap-none), nor by datastore-size
//	  VMs on esx-edge-noebd:
//	    vm-edge-thin5-a   vmx-13, thin on ds-edge-reclaim5 and thin on
//	                      ds-edge-reclaim6
//	    vm-edge-thin5-b   vmx-10, thin on ds-edge-reclaim5
//	    tmpl-edge-thin5   template, vmx-10, thin on ds-edge-reclaim5
//	    vm-edge-lazy5     vmx-10, lazyzeroedthick on ds-edge-reclaim5
//	    vm-edge-thin6     vmx-10, thin on ds-edge-reclaim6
//	    vm-edge-local6    vmx-10, thin on datastore1 (esx-edge-noebd)
//	  -> ONE space-reclaim finding for esx-edge-noebd listing exactly
//	     vm-edge-thin5-a (its ds-edge-reclaim5 disk only) and vm-edge-thin5-b;
//	     a VM finding for vm-edge-thin5-b (vmx-10); TWIN the other VMs
//	vm-edge-old5-ebd    on esx-edge-01 (EnableBlockDelete=1), vmx-10, thin on
//	                    ds-edge-vmfs5 -> a VM finding; TWIN esx-edge-01
//	vm-edge-span, vm-edge-single  live on ds-edge-span and ds-edge-single (so
//	                    that vms-per-datastore, with max_vms 0, names the LUNs
//	                    of both)
//
//	cluster-edges       mounts one NFS datastore (ds-edge-nfs): TWIN, one
//	                    datastore is on one server whatever you do
//	cluster-edges-nas1  host esx-edge-nas1 mounts ds-edge-nas1-a
//	                    (nas-a.example.com), ds-edge-nas1-b (NAS-A.EXAMPLE.COM,
//	                    the same server spelt otherwise) and ds-edge-nas-shared
//	                    (nas-a.example.com) -> one warning for the cluster,
//	                    naming the three
//	TWIN cluster-edges-nas2  host esx-edge-nas2 mounts ds-edge-nas-shared
//	                    (nas-a) and ds-edge-nas2-b (nas-b.example.com): two
//	                    servers
func buildEdges(w *world) {
	buildClean(w)

	const odd = `"Prod" & <Ops> 'Ñandú'`
	cl := w.addCluster("cluster-edges")
	for _, n := range []string{"esx-edge-01", "esx-edge-02", "esx-edge-iscsi", "esx " + odd} {
		w.addHost(cl, n, hostOpts{enableBlockDelete: 1})
	}
	e1, e2, oddHost := w.hosts["esx-edge-01"], w.hosts["esx-edge-02"], w.hosts["esx "+odd]
	edge := []*simulator.HostSystem{e1, e2}

	// Local adapters and devices, before the datastores' LUNs.
	addHBA(e1, &types.HostSerialAttachedHba{HostHostBusAdapter: types.HostHostBusAdapter{
		Key: "key-vim.host.SerialAttachedHba-vmhba4", Device: "vmhba4", Bus: 5, Status: "online",
		Model:  "Avago (LSI Logic) Fusion-MPT 12GSAS SAS3008 PCI-Express",
		Driver: "lsi_msgpt3", Pci: "0000:05:00.0", StorageProtocol: "scsi",
	}, NodeWorldWideName: "5003048016d7a400"})
	addHBA(e1, &types.HostPcieHba{HostHostBusAdapter: types.HostHostBusAdapter{
		Key: "key-vim.host.PcieHba-vmhba5", Device: "vmhba5", Bus: 6, Status: "online",
		Model: "Samsung NVMe SSD Controller SM981/PM981", Driver: "nvme_pcie", Pci: "0000:06:00.0",
		StorageProtocol: "nvme",
	}})
	w.addLun(e1, lunSpec{canonical: "naa.5000c500a1b2c3d4", vendor: "SEAGATE ", model: "ST1200MM0099    ",
		policy: "VMW_PSP_FIXED", satp: "VMW_SATP_LOCAL", paths: []string{"active"},
		adapters: []string{"vmhba4"}, noLocalDisk: true, sizeGiB: 1117})
	w.addLun(e1, lunSpec{canonical: "eui.0025388b91c3a1b2", vendor: "NVMe    ", model: "Samsung SSD 970 ",
		policy: "LB-RR", plugin: "HPP", paths: []string{"active"}, adapters: []string{"vmhba5"},
		local: true, ssd: true, sizeGiB: 931})
	w.addLun(e1, lunSpec{canonical: "naa.60000970000197601234533030303441", vendor: "EMC     ",
		model: "SYMMETRIX       ", plugin: "PowerPath", paths: []string{"active", "active", "active", "active"},
		adapters: []string{"vmhba2", "vmhba3", "vmhba2", "vmhba3"}, sizeGiB: 1024})
	naa := func(s string) string { return "naa.600601600000000000000000000000" + s }
	alua := sanLun(naa("c1"), 500)
	alua.paths = []string{"active", "active", "standby", "standby"}
	alua.adapters = []string{"vmhba2", "vmhba3", "vmhba2", "vmhba3"}
	w.addLun(e1, alua)
	oneHBA := sanLun(naa("c2"), 500)
	oneHBA.adapters = []string{"vmhba2", "vmhba2"}
	w.addLun(e1, oneHBA)
	off := sanLun(naa("c3"), 500)
	off.paths = []string{"active", "off"}
	w.addLun(e1, off)
	extraFor(e1.Self).userRules = []satpRule{
		dgcRule(),
		{satp: "VMW_SATP_ALUA", device: naa("c1"), group: "user", psp: "VMW_PSP_RR", pspOptions: "iops=1",
			description: "one device"},
		{satp: "VMW_SATP_LOCAL", driver: "lsi_msgpt3", group: "user", psp: "VMW_PSP_FIXED",
			description: "local SAS"},
		{satp: "VMW_SATP_ALUA", transport: "fc", group: "user", claimOptions: "tpgs_on",
			options: "reset_on_attempted_reserve", psp: "VMW_PSP_RR", pspOptions: "iops=1",
			description: "ALUA over FC"},
	}

	// iSCSI: one portal, one IQN per volume, found by a send target.
	iscsiHost := w.hosts["esx-edge-iscsi"]
	eql := "iqn.2001-05.com.equallogic:0-8a0906-edge-vol"
	w.addIscsi(iscsiHost, iscsiSpec{
		delayedAck:  false,
		sendTargets: []targetSpec{{address: "10.0.5.10", port: 3260, delayedAck: boolp(true)}},
		staticTargets: append(foundBy("10.0.5.10", eql+"1", eql+"2", eql+"3"),
			targetSpec{address: "10.0.5.20", port: 3260, iqn: "iqn.1992-04.com.emc:cx.edge.a0"}),
		vnicMTU: 9000, vswitchMTU: 9000,
	})

	c := 600 * GiB
	ds := func(s dsSpec) *simulator.Datastore {
		if s.capacity == 0 {
			s.capacity = c
		}
		s.free = s.capacity / 2
		if s.hosts == nil {
			s.hosts = edge
		}
		return w.addDatastore(s)
	}
	ds(dsSpec{name: "ds-edge-span", extents: 2, capacity: 1200 * GiB})
	ds(dsSpec{name: "ds-edge-single"})
	ds(dsSpec{name: "datastore1 (esx-edge-01)", localDisk: "mpx.vmhba0:C0:T0:L0", capacity: 120 * GiB,
		hosts: []*simulator.HostSystem{e1}})
	ds(dsSpec{name: "ds-edge-vmfs5", vmfsMajor: 5})
	ds(dsSpec{name: "ds-edge-unmap-none", unmapPriority: "none"})
	ds(dsSpec{name: "ds-edge-unmap-low", unmapPriority: "low", ssd: true})
	for _, g := range []int64{750, 760, 499, 500} {
		ds(dsSpec{name: fmt.Sprintf("ds-edge-%d", g), capacity: g * GiB})
	}
	big := ds(dsSpec{name: "ds-edge-1000", capacity: 1000 * GiB})
	ds(dsSpec{name: "ds-edge-apd", inaccessibleOn: e2})
	nfs := ds(dsSpec{name: "ds-edge-nfs", nfs: true})
	vsan := ds(dsSpec{name: "ds-edge-vsan", kind: "vsan"})
	vvol := ds(dsSpec{name: "ds-edge-vvol", kind: "vvol"})
	ds(dsSpec{name: "ds-edge-iscsi", hosts: []*simulator.HostSystem{iscsiHost}})
	homes := ds(dsSpec{name: "ds-edge-26vms"})
	iso := ds(dsSpec{name: "ds-edge-iso"})
	four := ds(dsSpec{name: "ds-edge-4vms"})
	oddDs := ds(dsSpec{name: "ds " + odd, hosts: []*simulator.HostSystem{e1, oddHost}})

	disk := func(d *simulator.Datastore, gib int64, format string) []diskSpec {
		return []diskSpec{{ds: d, gib: gib, format: format}}
	}
	w.addVM(vmSpec{name: "vm-edge-bigdisks", host: e1, disks: []diskSpec{
		{ds: big, gib: 400, format: "lazyzeroedthick"}, {ds: big, gib: 400, format: "lazyzeroedthick"}}})
	w.addVM(vmSpec{name: "vm-edge-nfs", host: e1, disks: disk(nfs, 40, "thin")})
	w.addVM(vmSpec{name: "vm-edge-vsan", host: e1, disks: disk(vsan, 40, "thin")})
	w.addVM(vmSpec{name: "vm-edge-vvol", host: e1, disks: disk(vvol, 40, "thin")})
	for i := 1; i <= 26; i++ {
		w.addVM(vmSpec{name: fmt.Sprintf("vm-edge-home-%02d", i), host: edge[i%2],
			disks: disk(homes, 8, "lazyzeroedthick"), iso: iso})
	}
	for i := 1; i <= 4; i++ {
		w.addVM(vmSpec{name: fmt.Sprintf("vm-edge-iso-%02d", i), host: edge[i%2],
			disks: disk(four, 8, "lazyzeroedthick"), iso: iso})
	}
	w.addVM(vmSpec{name: "vm-edge-noiso", host: e1, disks: disk(four, 8, "lazyzeroedthick")})
	w.addVM(vmSpec{name: "vm " + odd, host: oddHost, disks: disk(oddDs, 8, "lazyzeroedthick")})

	plantEdgesHosts(w)
	plantEdgesCapacity(w, ds, disk)
}

// plantEdgesCapacity plants what space-reclaim and nfs-server-redundancy
// need (the header's "Added for" part); ds and disk are buildEdges' helpers.
func plantEdgesCapacity(w *world, ds func(dsSpec) *simulator.Datastore,
	disk func(*simulator.Datastore, int64, string) []diskSpec) {
	e1 := w.hosts["esx-edge-01"]
	noebd := w.addHost(w.clusters["cluster-edges"], "esx-edge-noebd", hostOpts{enableBlockDelete: 0})
	only := []*simulator.HostSystem{noebd}
	r5 := ds(dsSpec{name: "ds-edge-reclaim5", vmfsMajor: 5, hosts: only})
	r6 := ds(dsSpec{name: "ds-edge-reclaim6", unmapPriority: "low", hosts: only})
	local := ds(dsSpec{name: "datastore1 (esx-edge-noebd)", localDisk: "mpx.vmhba0:C0:T0:L0",
		capacity: 120 * GiB, unmapPriority: "none", hosts: only})
	w.addVM(vmSpec{name: "vm-edge-thin5-a", host: noebd, disks: []diskSpec{
		{ds: r5, gib: 20, format: "thin"}, {ds: r6, gib: 20, format: "thin"}}})
	w.addVM(vmSpec{name: "vm-edge-thin5-b", host: noebd, hwVersion: "vmx-10", disks: disk(r5, 20, "thin")})
	w.addVM(vmSpec{name: "tmpl-edge-thin5", host: noebd, hwVersion: "vmx-10", template: true,
		disks: disk(r5, 20, "thin")})
	w.addVM(vmSpec{name: "vm-edge-lazy5", host: noebd, hwVersion: "vmx-10", disks: disk(r5, 20, "lazyzeroedthick")})
	w.addVM(vmSpec{name: "vm-edge-thin6", host: noebd, hwVersion: "vmx-10", disks: disk(r6, 20, "thin")})
	w.addVM(vmSpec{name: "vm-edge-local6", host: noebd, hwVersion: "vmx-10", disks: disk(local, 20, "thin")})
	w.addVM(vmSpec{name: "vm-edge-old5-ebd", host: e1, hwVersion: "vmx-10",
		disks: disk(w.datastores["ds-edge-vmfs5"], 20, "thin")})
	for _, n := range []string{"span", "single"} {
		w.addVM(vmSpec{name: "vm-edge-" + n, host: e1, disks: disk(w.datastores["ds-edge-"+n], 8, "lazyzeroedthick")})
	}

	nas1 := w.addHost(w.addCluster("cluster-edges-nas1"), "esx-edge-nas1", hostOpts{enableBlockDelete: 1})
	nas2 := w.addHost(w.addCluster("cluster-edges-nas2"), "esx-edge-nas2", hostOpts{enableBlockDelete: 1})
	nfs := func(name, server string, hosts ...*simulator.HostSystem) {
		ds(dsSpec{name: name, nfs: true, remoteHost: server, hosts: hosts})
	}
	nfs("ds-edge-nas1-a", "nas-a.example.com", nas1)
	nfs("ds-edge-nas1-b", "NAS-A.EXAMPLE.COM", nas1)
	nfs("ds-edge-nas-shared", "nas-a.example.com", nas1, nas2)
	nfs("ds-edge-nas2-b", "nas-b.example.com", nas2)
}
