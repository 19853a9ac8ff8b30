package main

import (
	"fmt"

	"github.com/vmware/govmomi/vim25/types"
)

// The host side of scenario "edges" (buildEdges calls plantEdgesHosts):
// what the multipathing, claim-rule and iSCSI checks must judge right on a
// real estate, each with its compliant twin. This comment is the spec
// tests/integration/test_checks_edges_hosts.py is written against; it also
// says what the checks make of the devices scenario_edges.go plants on
// esx-edge-01 and esx-edge-iscsi. Unless stated, a LUN here is a SAN LUN
// (localDisk false) claimed by NMP, VMW_PSP_RR with iops=1, two active
// paths through two adapters; hosts get addHost's defaults (FC vmhba2 and
// vmhba3 qlnativefc, the local boot disk, the DGC claim rule).
//
// esx-edge-01 (scenario_edges.go), as the checks see it
//
//	mpx.vmhba0:C0:T0:L0, naa.5000c500a1b2c3d4 (VMW_SATP_LOCAL, no localDisk
//	                    answer, one path through local SAS), eui.0025388b91c3a1b2
//	                    (local NVMe, HPP): local -> TWIN, no multipath-policy,
//	                    multipath-redundancy, device-identifier or
//	                    satp-claim-rule finding
//	naa.60000970000197601234533030303441 (PowerPath, paths not reported):
//	                    not judged by multipath-policy, multipath-redundancy
//	                    or satp-claim-rule -> host-coverage info "plug-ins" on
//	                    esx-edge-01 naming it, multipath-redundancy not verified
//	naa.600601600000000000000000000000c1  2 active + 2 ALUA standby over
//	                    vmhba2 and vmhba3 -> TWIN (standby is usable)
//	naa.600601600000000000000000000000c2  2 active, both through vmhba2
//	                    -> multipath-redundancy critical (one adapter)
//	naa.600601600000000000000000000000c3  active (vmhba2) + off (vmhba3)
//	                    -> multipath-redundancy critical (one usable path)
//	claim rules (DGC rule plus rules scoped to a device, a driver, a
//	                    transport with tpgs_on) -> TWIN (all its DGC LUNs covered)
//
// esx-edge-iscsi (scenario_edges.go): adapter DelayedAck false
//
//	10.0.5.10:3260      the send target sets DelayedAck true; the static
//	                    targets ...-edge-vol1, -vol2, -vol3 it found inherit it
//	                    -> iscsi-delayed-ack warning, one finding (detail
//	                    vmhba64/10.0.5.10:3260) naming the three IQNs, each
//	                    with its own command, the send target's first
//	TWIN 10.0.5.20:3260 static target of the adapter, inherits false
//
// esx-edge-iscsi-b: software vmhba64, adapter DelayedAck TRUE, vmk1 MTU 9000
// on vSwitch-iscsi MTU 9000
//
//	vmhba64             -> iscsi-delayed-ack warning on the adapter, whose
//	                    targets_inheriting is exactly ["10.0.6.20:3260"]
//	10.0.6.20:3260      static target iqn.1992-04.com.emc:cx.edge.b0 of the
//	                    adapter, inherits true (covered by the adapter finding)
//	TWIN 10.0.6.10:3260 send target with DelayedAck false set on it, and the
//	                    static targets ...-edge-b-vol1, -vol2 it found, which
//	                    inherit false from it, not true from the adapter: no
//	                    finding on the portal, not in targets_inheriting
//
// esx-edge-nvmeof: vmhba6 and vmhba7 HostRdmaHba (nvmerdma, NVMe over RDMA)
//
//	TWIN eui.00a0b1c2d3e4f501  HPP, LB-RR, active paths through vmhba6 and
//	                    vmhba7: no multipath-policy (NMP's rule), no
//	                    multipath-redundancy finding
//	eui.00a0b1c2d3e4f502  HPP, LB-RR, one active path (vmhba6)
//	                    -> multipath-redundancy critical, with HPP's commands
//	                    (esxcli storage hpp path list), none of esxcli storage nmp
//	-> host-coverage info "plug-ins" naming both HPP devices; nothing "not
//	                    verified" (HPP reports its paths)
//	TWIN naa.600508b1001c4d5e6f70000000000001  HP LOGICAL VOLUME, no localDisk
//	                    answer, VMW_SATP_DEFAULT_AA, VMW_PSP_FIXED, one path
//	                    through the local vmhba0: local, so no finding at all
//	                    (as SAN it would be one path, and no claim rule)
//
// esx-edge-rules: no DGC rule; user claim rules scoped to a device, a
// driver, a transport, a claim option; vmhba6 and vmhba7
// HostFibreChannelHba with driver lpfc; software iSCSI vmhba64 (DelayedAck
// false, vmk1 MTU 9000 on vSwitch-iscsi MTU 9000). satp-claim-rule findings
// (warning, detail SATP/vendor) and the LUNs in their evidence:
//
//	VMW_SATP_ALUA device naa.600601600000000000000000000000e1, RR iops=1
//	    TWIN ...e1 (DGC VRAID, FC)
//	    -> VMW_SATP_ALUA/DGC: ...e2 (DGC VRAID, FC) only
//	VMW_SATP_SYMM vendor EMC driver lpfc, RR iops=1
//	    TWIN ...f1 (EMC SYMMETRIX, through vmhba6/vmhba7, lpfc)
//	    -> VMW_SATP_SYMM/EMC: ...f2 (EMC SYMMETRIX, through vmhba2/vmhba3,
//	       qlnativefc) only
//	VMW_SATP_ALUA vendor NETAPP transport iscsi, RR iops=1
//	    TWIN ...a1 (NETAPP LUN C-Mode, two paths through vmhba64)
//	    -> VMW_SATP_ALUA/NETAPP: ...a2 (NETAPP, FC) only
//	VMW_SATP_DEFAULT_AA vendor HITACHI claim option tpgs_on, RR iops=1
//	    -> VMW_SATP_DEFAULT_AA/HITACHI: ...b1 (HITACHI OPEN-V, not ALUA)
//	VMW_SATP_ALUA vendor 3PARdata claim option tpgs_on, RR iops=1
//	    TWIN ...b2 (3PARdata VV, ALUA): no VMW_SATP_ALUA/3PARdata finding
//
// (the ...e1 style names are naa.600601600000000000000000000000 + two hex
// digits). Every LUN of esx-edge-rules is otherwise compliant: no
// multipath-policy, multipath-redundancy or device-identifier finding.
func plantEdgesHosts(w *world) {
	cl := w.clusters["cluster-edges"]
	naa := func(s string) string { return "naa.600601600000000000000000000000" + s }
	eql := "iqn.2001-05.com.equallogic:0-8a0906-edge-b-vol"

	// esx-edge-iscsi-b: a send target whose own false its targets inherit.
	ib := w.addHost(cl, "esx-edge-iscsi-b", hostOpts{enableBlockDelete: 1})
	w.addIscsi(ib, iscsiSpec{
		delayedAck:  true,
		sendTargets: []targetSpec{{address: "10.0.6.10", port: 3260, delayedAck: boolp(false)}},
		staticTargets: append(foundBy("10.0.6.10", eql+"1", eql+"2"),
			targetSpec{address: "10.0.6.20", port: 3260, iqn: "iqn.1992-04.com.emc:cx.edge.b0"}),
		vnicMTU: 9000, vswitchMTU: 9000,
	})

	// esx-edge-nvmeof: NVMe over RDMA under HPP, and a local RAID volume
	// that does not say it is local.
	nv := w.addHost(cl, "esx-edge-nvmeof", hostOpts{enableBlockDelete: 1})
	for i, dev := range []string{"vmhba6", "vmhba7"} {
		addHBA(nv, &types.HostRdmaHba{HostHostBusAdapter: types.HostHostBusAdapter{
			Key: "key-vim.host.RdmaHba-" + dev, Device: dev, Bus: int32(7 + i), Status: "online",
			Model: "VMware NVMe over RDMA Storage Adapter", Driver: "nvmerdma", StorageProtocol: "nvme",
		}, AssociatedRdmaDevice: fmt.Sprintf("vmrdma%d", i)})
	}
	hpp := func(canonical string, adapters ...string) lunSpec {
		paths := make([]string, len(adapters))
		for i := range paths {
			paths[i] = "active"
		}
		return lunSpec{canonical: canonical, vendor: "NVMe    ", model: "Dell PowerStore  ",
			policy: "LB-RR", plugin: "HPP", paths: paths, adapters: adapters, sizeGiB: 500}
	}
	w.addLun(nv, hpp("eui.00a0b1c2d3e4f501", "vmhba6", "vmhba7"))
	w.addLun(nv, hpp("eui.00a0b1c2d3e4f502", "vmhba6"))
	w.addLun(nv, lunSpec{canonical: "naa.600508b1001c4d5e6f70000000000001", vendor: "HP      ",
		model: "LOGICAL VOLUME  ", policy: "VMW_PSP_FIXED", satp: "VMW_SATP_DEFAULT_AA",
		paths: []string{"active"}, adapters: []string{"vmhba0"}, noLocalDisk: true, sizeGiB: 558})

	// esx-edge-rules: claim rules that cover only their scope.
	ru := w.addHost(cl, "esx-edge-rules", hostOpts{enableBlockDelete: 1})
	for i, dev := range []string{"vmhba6", "vmhba7"} {
		addHBA(ru, &types.HostFibreChannelHba{
			HostHostBusAdapter: types.HostHostBusAdapter{
				Key: "key-vim.host.FibreChannelHba-" + dev, Device: dev, Bus: int32(7 + i),
				Status: "online", Model: "Emulex LightPulse LPe32000 PCIe Fibre Channel Adapter",
				Driver: "lpfc", StorageProtocol: "scsi",
			},
			PortWorldWideName: 0x10000090fa000000 + int64(i),
			NodeWorldWideName: 0x20000090fa000000 + int64(i),
			PortType:          "fabric", Speed: 16,
		})
	}
	w.addIscsi(ru, iscsiSpec{delayedAck: false, vnicMTU: 9000, vswitchMTU: 9000})
	fc := []string{"vmhba2", "vmhba3"}
	lun := func(id, vendor, model, satp string, adapters []string) {
		w.addLun(ru, lunSpec{canonical: naa(id), vendor: vendor, model: model, policy: "VMW_PSP_RR",
			satp: satp, iops: 1, paths: []string{"active", "active"}, adapters: adapters, sizeGiB: 500})
	}
	lun("e1", "DGC     ", "VRAID           ", "VMW_SATP_ALUA", fc)
	lun("e2", "DGC     ", "VRAID           ", "VMW_SATP_ALUA", fc)
	lun("f1", "EMC     ", "SYMMETRIX       ", "VMW_SATP_SYMM", []string{"vmhba6", "vmhba7"})
	lun("f2", "EMC     ", "SYMMETRIX       ", "VMW_SATP_SYMM", fc)
	lun("a1", "NETAPP  ", "LUN C-Mode      ", "VMW_SATP_ALUA", []string{"vmhba64", "vmhba64"})
	lun("a2", "NETAPP  ", "LUN C-Mode      ", "VMW_SATP_ALUA", fc)
	lun("b1", "HITACHI ", "OPEN-V          ", "VMW_SATP_DEFAULT_AA", fc)
	lun("b2", "3PARdata", "VV              ", "VMW_SATP_ALUA", fc)
	rr := func(r satpRule) satpRule {
		r.group, r.psp, r.pspOptions = "user", "VMW_PSP_RR", "iops=1"
		return r
	}
	extraFor(ru.Self).userRules = []satpRule{
		rr(satpRule{satp: "VMW_SATP_ALUA", device: naa("e1"), description: "one device"}),
		rr(satpRule{satp: "VMW_SATP_SYMM", vendor: "EMC", driver: "lpfc", description: "VMAX behind the Emulex HBAs"}),
		rr(satpRule{satp: "VMW_SATP_ALUA", vendor: "NETAPP", transport: "iscsi", description: "ONTAP over iSCSI"}),
		rr(satpRule{satp: "VMW_SATP_DEFAULT_AA", vendor: "HITACHI", claimOptions: "tpgs_on", description: "VSP in ALUA mode"}),
		rr(satpRule{satp: "VMW_SATP_ALUA", vendor: "3PARdata", claimOptions: "tpgs_on", description: "3PAR ALUA"}),
	}
}
