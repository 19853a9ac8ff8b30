package main

// The identifying values of the truth document: walked from simulator.Map
// (never from what vslint or its anonymizer make of them), every name, label,
// address and text an estate holds that says whose it is, each with its kind.
// tests/integration/test_record.py searches an anonymized capture for them.

import (
	"regexp"
	"sort"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"
)

type truthIdentifying struct {
	Kind  string `json:"kind"`
	Value string `json:"value"`
}

// emailRe finds the e-mail addresses in a text (an alarm's recipients).
var emailRe = regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]+`)

func identifying() []truthIdentifying {
	seen := map[truthIdentifying]bool{}
	add := func(kind, v string) {
		if v != "" {
			seen[truthIdentifying{kind, v}] = true
		}
	}
	for _, kind := range []string{"Datacenter", "ClusterComputeResource", "StoragePod",
		"DistributedVirtualSwitch", "ResourcePool", "Folder"} {
		for _, e := range simulator.Map.All(kind) {
			add(kind, e.Entity().Name)
		}
	}
	for _, e := range simulator.Map.All("HostSystem") {
		h := e.(*simulator.HostSystem)
		add("host", h.Name)
		if h.Config == nil {
			continue
		}
		if h.Config.Network != nil {
			for _, v := range h.Config.Network.Vnic {
				add("mac", v.Spec.Mac)
				if v.Spec.Ip != nil {
					add("address", v.Spec.Ip.IpAddress)
				}
			}
		}
		if h.Config.StorageDevice == nil {
			continue
		}
		for _, a := range h.Config.StorageDevice.HostBusAdapter {
			i, ok := a.(*types.HostInternetScsiHba)
			if !ok {
				continue
			}
			add("iqn", i.IScsiName)
			add("iscsi_alias", i.IScsiAlias)
			for _, t := range i.ConfiguredStaticTarget {
				add("iqn", t.IScsiName)
				add("address", t.Address)
			}
			for _, t := range i.ConfiguredSendTarget {
				add("address", t.Address)
			}
		}
	}
	for _, e := range simulator.Map.All("Datastore") {
		ds := e.(*simulator.Datastore)
		add("datastore", ds.Name)
		switch info := ds.Info.(type) {
		case *types.VmfsDatastoreInfo:
			if info.Vmfs != nil {
				add("volume_label", info.Vmfs.Name)
			}
		case *types.NasDatastoreInfo:
			if info.Nas != nil {
				add("nfs_server", info.Nas.RemoteHost)
				add("nfs_path", info.Nas.RemotePath)
			}
		}
	}
	for _, e := range simulator.Map.All("VirtualMachine") {
		vm := e.(*simulator.VirtualMachine)
		add("vm", vm.Name)
		if vm.Snapshot == nil {
			continue
		}
		var walk func(list []types.VirtualMachineSnapshotTree)
		walk = func(list []types.VirtualMachineSnapshotTree) {
			for _, s := range list {
				add("snapshot", s.Name)
				add("snapshot_description", s.Description)
				walk(s.ChildSnapshotList)
			}
		}
		walk(vm.Snapshot.RootSnapshotList)
	}
	for _, ref := range alarmManager().alarms {
		a := simulator.Map.Get(ref).(*Alarm)
		// vCenter's own alarms (a systemName) are named alike everywhere; an alarm an
		// administrator made is named after what it watches.
		if a.Info.SystemName == "" {
			add("alarm", a.Info.Name)
		}
		if t, ok := a.Info.Action.(*types.AlarmTriggeringAction); ok {
			if m, ok := t.Action.(*types.SendEmailAction); ok {
				for _, addr := range emailRe.FindAllString(m.ToList+" "+m.CcList, -1) {
					add("email", addr)
				}
			}
		}
	}
	out := []truthIdentifying{}
	for v := range seen {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].Value < out[j].Value
	})
	return out
}
