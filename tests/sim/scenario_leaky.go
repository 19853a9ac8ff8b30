package main

import (
	"time"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"
)

// Scenario "leaky": an estate whose every name says something about its owner, for the
// test that hunts what a capture (`vslint record --anonymize`) leaks
// (tests/integration/test_record.py). Not a compliance scenario: findings are whatever
// they are, the live poll and the replay must only agree.
//
// Planted facts:
//   - Cluster "id" (a name of 2 characters, also an XML/JSON word) with 3 hosts named
//     by FQDN in mixed case: ESX-Prod01.Corp.Example.com, ESX-Prod02.Corp.Example.com,
//     esx-DR03.Site-Frankfurt.Example.net.
//   - ESX-Prod01 and esx-DR03 have software iSCSI (vmhba64), their IQN holding the host
//     name as ESXi makes it and their iSCSI alias equal to the host name; static
//     targets 10.20.30.40 (iqn.1992-04.com.emc:cx.apm00123456789.a0) and 10.20.31.40;
//     two vmknics each, every vmknic with a MAC.
//   - Datastores whose VMFS volume label differs from the datastore's name:
//     DS-Prod-Gold (label "gold_vol_Frankfurt-DC2"), "gt" (label "lt_vol_Payroll"),
//     and an NFS datastore NFS-Archive-Frankfurt mounted from the server by DNS name
//     Filer01.Corp.Example.com, path /vol/Frankfurt-DC2/NFS-Archive-Frankfurt.
//   - VMs Payroll-App01 (a snapshot "before patch of ESX-Prod01.Corp.Example.com",
//     described "requested by jane.doe@corp.example.com for Payroll-App01") and "lt".
//   - Alarms: the clean scenario's, and "Datastore usage Frankfurt" whose action
//     e-mails storage-team@corp.example.com (vslint reads no action: it must not be in a
//     capture at all).
//   - So that the findings of a replay have something to agree on, a few violations, each
//     on an object with a telling name: Payroll-App01's snapshot is 40 days old
//     (snapshots), esx-DR03's iSCSI adapter has DelayedAck on (iscsi-delayed-ack), and
//     "gt" has 5 % free (datastore-free-space).
func buildLeaky(w *world) {
	cl := w.addCluster("id")
	names := []string{"ESX-Prod01.Corp.Example.com", "ESX-Prod02.Corp.Example.com",
		"esx-DR03.Site-Frankfurt.Example.net"}
	for _, n := range names {
		w.addHost(cl, n, hostOpts{enableBlockDelete: 1})
	}
	for _, n := range []string{names[0], names[2]} {
		h := w.hosts[n]
		w.addIscsi(h, iscsiSpec{
			delayedAck: n == names[2],
			staticTargets: []targetSpec{
				{address: "10.20.30.40", port: 3260, iqn: "iqn.1992-04.com.emc:cx.apm00123456789.a0"},
				{address: "10.20.31.40", port: 3260, iqn: "iqn.1992-04.com.emc:cx.apm00123456789.b0"},
			},
			vnicMTU: 9000, vswitchMTU: 9000,
		})
		// The alias ESXi shows is often the host's own name.
		lock(h, func() {
			for _, a := range h.Config.StorageDevice.HostBusAdapter {
				if i, ok := a.(*types.HostInternetScsiHba); ok {
					i.IScsiAlias = h.Name
				}
			}
		})
	}
	hosts := hostsOf(w, names...)
	c := 600 * GiB
	gold := w.addDatastore(dsSpec{name: "DS-Prod-Gold", capacity: c, free: pct(c, 50), hosts: hosts})
	gt := w.addDatastore(dsSpec{name: "gt", capacity: c, free: pct(c, 5), hosts: hosts})
	for ds, label := range map[*simulator.Datastore]string{gold: "gold_vol_Frankfurt-DC2", gt: "lt_vol_Payroll"} {
		ds, label := ds, label
		lock(ds, func() { ds.Info.(*types.VmfsDatastoreInfo).Vmfs.Name = label })
	}
	nfs := w.addDatastore(dsSpec{name: "NFS-Archive-Frankfurt", nfs: true, capacity: c, free: pct(c, 50),
		hosts: hosts, remoteHost: "Filer01.Corp.Example.com", remotePathBase: "/vol/Frankfurt-DC2/"})
	w.addVM(vmSpec{name: "Payroll-App01", host: hosts[0],
		disks: []diskSpec{{ds: gold, gib: 40, format: "thin"}},
		snapshots: []snapSpec{{name: "before patch of ESX-Prod01.Corp.Example.com", age: 40 * 24 * time.Hour,
			description: "requested by jane.doe@corp.example.com for Payroll-App01"}}})
	w.addVM(vmSpec{name: "lt", host: hosts[1], disks: []diskSpec{{ds: nfs, gib: 20, format: "thin"}}})
	w.addVM(vmSpec{name: "Exchange-Mbx-Frankfurt", host: hosts[2], disks: []diskSpec{{ds: gt, gib: 40, format: "thin"}}})
	plantCleanAlarms(w)
	a := w.addAlarm(w.rootFolder(), "Datastore usage Frankfurt", "", true, anyOf(usage(7500, 9000)))
	lock(a, func() {
		a.Info.Action = &types.AlarmTriggeringAction{
			Action: &types.SendEmailAction{ToList: "storage-team@corp.example.com",
				Subject: "Datastore usage Frankfurt"},
			Green2yellow: true,
		}
	})
}
