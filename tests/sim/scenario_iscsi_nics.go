package main

import (
	"strings"
)

// Software iSCSI through one NIC (issue 27 item 2), planted in "violations" by
// plantIscsiNics: the software iSCSI adapter is one adapter for every NIC, so what makes
// its paths redundant is its NICs. This comment is the spec test_checks_iscsi_nics.py is
// written against.
//
// Cluster "cluster-iscsi-nics". Every host has software iSCSI vmhba64 (DelayedAck false)
// and one SAN LUN, naa.60060160a5c5 + 18 zeros + NN (DGC, VMW_SATP_ALUA, RR iops=1, two
// active paths), no datastore. vmk1 is on vSwitch-iscsi, vmk2 on vSwitch-iscsi-2.
//
// multipath-redundancy: with port binding the bound vmknics are the independent elements
// (ESXi gives each its own path channel)
//
//	VIOLATION esx-1nic           vmk1 alone bound (10.0.21.5/24, MTU 9000 on 9000); send
//	                             targets 10.0.21.40 and 10.0.21.41 (two portals); LUN ...c1's
//	                             paths vmhba64:C0:T0:L1 and vmhba64:C0:T1:L1, both on vmk1
//	                             -> critical, naming vmk1
//	TWIN      esx-2nic           vmk1 and vmk2 bound (MTU 9000 on 9000); LUN ...c2's paths
//	                             vmhba64:C0:T0:L1 and vmhba64:C1:T0:L1, one per vmknic
//
// iscsi-jumbo-frames: without port binding (multi-subnet or routed iSCSI), the vmknic whose
// subnet holds a target carries it
//
//	VIOLATION esx-nobind         nothing bound; vmk1 10.0.23.5/24 MTU 1500 on vSwitch-iscsi
//	                             MTU 9000, vmk2 10.0.24.5/24 MTU 9000 on 9000; send targets
//	                             10.0.23.20, 10.0.24.20 and 10.9.0.20 (on neither subnet:
//	                             routed, not matched) -> vmk1 warning, chosen by target
//	                             10.0.23.20 on its subnet; vmk2 silent. LUN ...c3 (paths
//	                             vmhba64:C0:T0:L1, vmhba64:C0:T1:L1): not judged on elements
//	                             by multipath-redundancy (no binding: the routing table's)
//	TWIN      esx-nobind-ok      the same addresses (10.0.25/26.5), vmk1 MTU 9000: silent
func plantIscsiNics(w *world) {
	cl := w.addCluster("cluster-iscsi-nics")
	naa := func(s string) string { return "naa.60060160a5c5" + strings.Repeat("0", 18) + s }
	send := func(addrs ...string) []targetSpec {
		var ts []targetSpec
		for _, a := range addrs {
			ts = append(ts, targetSpec{address: a, port: 3260})
		}
		return ts
	}
	host := func(name string, s iscsiSpec, lun string) {
		h := w.addHost(cl, name, hostOpts{enableBlockDelete: 1})
		s.vswitchMTU = 9000
		w.addIscsi(h, s)
		w.addLun(h, sanLun(naa(lun), 100))
	}
	host("esx-1nic", iscsiSpec{nics: 1, vnicMTU: 9000, ips: []string{"10.0.21.5/24"},
		sendTargets: send("10.0.21.40", "10.0.21.41")}, "c1")
	host("esx-2nic", iscsiSpec{nics: 2, vnicMTU: 9000,
		ips: []string{"10.0.22.5/24", "10.0.22.6/24"}, sendTargets: send("10.0.22.40")}, "c2")
	host("esx-nobind", iscsiSpec{noBinding: true, vnicMTU: 1500,
		ips:         []string{"10.0.23.5/24", "10.0.24.5/24"},
		sendTargets: send("10.0.23.20", "10.0.24.20", "10.9.0.20")}, "c3")
	host("esx-nobind-ok", iscsiSpec{noBinding: true, vnicMTU: 9000,
		ips:         []string{"10.0.25.5/24", "10.0.26.5/24"},
		sendTargets: send("10.0.25.20", "10.0.26.20", "10.9.0.20")}, "c4")
}
