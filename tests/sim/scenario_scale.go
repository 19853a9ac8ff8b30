package main

import (
	"fmt"

	"github.com/vmware/govmomi/simulator"
)

// Scenario "scale:N" (version 1): N VMs in realistic proportions, for
// benchmarks. Not a compliance scenario (for example every datastore holds
// about 100 VMs, so vms-per-datastore fires everywhere).
//
//   - hosts = ceil(N/100), named esx-scale-0001..; clusters of up to 16 hosts
//     (cluster-scale-01..); EnableBlockDelete=1 everywhere.
//   - datastores = ceil(N/100), ds-scale-0001.., VMFS6, 4 TiB, 50% free,
//     uncommitted 0; each is mounted on every host of one cluster
//     (round robin), and its backing naa. LUN (RR, iops=1, 2 active paths)
//     is visible on two hosts of that cluster, so each host has a couple of
//     SAN LUNs besides the local boot disk.
//   - every 4th host (1st, 5th, ...) has software iSCSI vmhba64, vmk1 MTU
//     9000 on vSwitch-iscsi MTU 9000, DelayedAck false, one send target.
//   - VMs vm-000001..: one 40 GiB thin disk on PVSCSI, vmx-13, powered on,
//     spread round robin over the hosts and the datastores of the host's
//     cluster.
//   - the alarms of clean (alarms.go plantCleanAlarms): the default datastore
//     usage alarm at the root, at 70 % / 90 %, and a host alarm.
func buildScale(w *world, n int) {
	if n < 1 {
		n = 1
	}
	nHosts := (n + 99) / 100
	nDS := nHosts
	var clusters [][]*simulator.HostSystem
	var cl *simulator.ClusterComputeResource
	for i := 0; i < nHosts; i++ {
		if i%16 == 0 {
			cl = w.addCluster(fmt.Sprintf("cluster-scale-%02d", i/16+1))
			clusters = append(clusters, nil)
		}
		h := w.addHost(cl, fmt.Sprintf("esx-scale-%04d", i+1), hostOpts{enableBlockDelete: 1})
		clusters[len(clusters)-1] = append(clusters[len(clusters)-1], h)
		if i%4 == 0 {
			w.addIscsi(h, iscsiSpec{
				sendTargets: []targetSpec{{address: fmt.Sprintf("10.1.%d.10", i/250), port: 3260}},
				vnicMTU:     9000, vswitchMTU: 9000,
			})
		}
	}
	c := 4 * TiB
	dsByCluster := make([][]*simulator.Datastore, len(clusters))
	for i := 0; i < nDS; i++ {
		ci := i % len(clusters)
		hosts := clusters[ci]
		k := len(dsByCluster[ci])
		lunHosts := []*simulator.HostSystem{hosts[k%len(hosts)]}
		if len(hosts) > 1 {
			lunHosts = append(lunHosts, hosts[(k+1)%len(hosts)])
		}
		ds := w.addDatastore(dsSpec{name: fmt.Sprintf("ds-scale-%04d", i+1), capacity: c, free: pct(c, 50),
			hosts: hosts, lunHosts: lunHosts})
		dsByCluster[ci] = append(dsByCluster[ci], ds)
	}
	var all []*simulator.HostSystem
	for _, hs := range clusters {
		all = append(all, hs...)
	}
	for i := 0; i < n; i++ {
		h := all[i%len(all)]
		ci := (i % len(all)) / 16
		dss := dsByCluster[ci]
		ds := dss[(i/len(all))%len(dss)]
		w.addVM(vmSpec{name: fmt.Sprintf("vm-%06d", i+1), host: h, disks: []diskSpec{{ds: ds, gib: 40, format: "thin"}}})
	}
	plantCleanAlarms(w)
}
