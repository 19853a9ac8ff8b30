package main

// The truth document: what the simulator holds, computed by walking
// simulator.Map after planting (not from scenario constants), so that
// integration tests can compare it with what vslint stored.

import (
	"encoding/json"
	"io/ioutil"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

type truthDelayedAck struct {
	Value     string `json:"value"`
	Inherited bool   `json:"inherited"`
}

type truthTarget struct {
	Kind            string          `json:"kind"`
	Address         string          `json:"address"`
	Port            int32           `json:"port"`
	IscsiName       string          `json:"iscsi_name"`
	DiscoveryMethod string          `json:"discovery_method"` // static targets; "" otherwise
	Parent          string          `json:"parent"`           // what it inherits from, or ""
	DelayedAck      truthDelayedAck `json:"delayed_ack"`
}

// truthAnyHBA is any host bus adapter; Type is its vim25 type name.
type truthAnyHBA struct {
	Device string `json:"device"`
	Type   string `json:"type"`
	Driver string `json:"driver"`
	Model  string `json:"model"`
}

type truthHBA struct {
	Device     string          `json:"device"`
	IscsiName  string          `json:"iscsi_name"`
	DelayedAck truthDelayedAck `json:"delayed_ack"`
	Targets    []truthTarget   `json:"targets"`
	BoundVnics []string        `json:"bound_vnics"`
}

type truthPath struct {
	Name    string `json:"name"`
	State   string `json:"state"`
	Adapter string `json:"adapter"` // the adapter's device
	// TargetWwpn is the Fibre Channel target port the path ends at, "" when
	// the path has no transport.
	TargetWwpn string `json:"target_wwpn"`
}

type truthLun struct {
	CanonicalName string `json:"canonical_name"`
	// Local is localDisk as vslint reads it: null for a device that is not
	// a disk (an enclosure, a tape), which has no localDisk.
	Local   *bool  `json:"local"`
	LunType string `json:"lun_type"`
	// LocalDisk is ScsiLun.localDisk as sent: null when the host leaves it out.
	LocalDisk *bool  `json:"local_disk"`
	Policy    string `json:"policy"`
	Satp      string `json:"satp"`
	// PolicyType is the multipathInfo policy's type, "" for a device that is
	// not in multipathInfo; MultipathPlugin is the plug-in that owns it.
	PolicyType      string      `json:"policy_type"`
	MultipathPlugin string      `json:"multipath_plugin"`
	IopsLimit       *int        `json:"iops_limit"`
	Paths           []truthPath `json:"paths"`
	// ProtocolEndpoint is ScsiLun.protocolEndpoint as sent: null when left out.
	ProtocolEndpoint *bool `json:"protocol_endpoint"`
}

// truthSatpRule is a claim rule as esxcli lists it; "" = not set.
type truthSatpRule struct {
	Satp       string `json:"satp"`
	Vendor     string `json:"vendor"`
	Model      string `json:"model"`
	Psp        string `json:"psp"`
	PspOptions string `json:"psp_options"`
	RuleGroup  string `json:"rule_group"`
	// What else the rule matches on, or sets ("" = nothing).
	Device       string `json:"device"`
	Driver       string `json:"driver"`
	Transport    string `json:"transport"`
	ClaimOptions string `json:"claim_options"`
	Options      string `json:"options"`
	Description  string `json:"description"`
}

type truthVnic struct {
	Device    string  `json:"device"`
	Mtu       int32   `json:"mtu"`
	Portgroup string  `json:"portgroup"`
	DvsUUID   *string `json:"dvs_uuid"`
	// spec.ip: what iscsi-jumbo-frames selects an unbound adapter's vmknics by.
	IP         *string `json:"ip"`
	SubnetMask *string `json:"subnet_mask"`
}

type truthVswitch struct {
	Name string `json:"name"`
	Mtu  int32  `json:"mtu"`
}

type truthHost struct {
	Moref             string         `json:"moref"`
	Name              string         `json:"name"`
	ProductVersion    string         `json:"product_version"` // config.product.version
	EnableBlockDelete *int64         `json:"enable_block_delete"`
	Vnics             []truthVnic    `json:"vnics"`
	Vswitches         []truthVswitch `json:"vswitches"`
	HBAs              []truthAnyHBA  `json:"hbas"`
	IscsiHBAs         []truthHBA     `json:"iscsi_hbas"`
	Luns              []truthLun     `json:"luns"`
	// SatpRules is what the host's esxcli lists (empty when it refuses
	// esxcli); vslint asks only hosts with SAN LUNs.
	SatpRules []truthSatpRule `json:"satp_rules"`
}

type truthExtent struct {
	DiskName  string `json:"disk_name"`
	Partition int32  `json:"partition"`
}

type truthMount struct {
	Host       string `json:"host"`
	Mounted    *bool  `json:"mounted"`
	Accessible *bool  `json:"accessible"`
}

type truthDatastore struct {
	Moref       string `json:"moref"`
	Name        string `json:"name"`
	Type        string `json:"type"`
	Capacity    int64  `json:"capacity"`
	FreeSpace   int64  `json:"free_space"`
	Uncommitted int64  `json:"uncommitted"`
	VmfsMajor   int32  `json:"vmfs_major"`
	Parent      string `json:"parent"`
	VMCount     int    `json:"vm_count"`
	// VMFS only (null / "" / empty otherwise).
	VmfsVersion   string        `json:"vmfs_version"`
	VmfsLocal     *bool         `json:"vmfs_local"`
	VmfsSsd       *bool         `json:"vmfs_ssd"`
	UnmapPriority string        `json:"unmap_priority"`
	Extents       []truthExtent `json:"extents"`
	Hosts         []truthMount  `json:"hosts"`
}

type truthPod struct {
	Moref      string   `json:"moref"`
	Name       string   `json:"name"`
	Capacity   int64    `json:"capacity"`
	FreeSpace  int64    `json:"free_space"`
	Datastores []string `json:"datastores"`
}

type truthDVS struct {
	Moref  string `json:"moref"`
	Name   string `json:"name"`
	UUID   string `json:"uuid"`
	MaxMtu int32  `json:"max_mtu"`
}

type truthSnapshot struct {
	Name       string `json:"name"`
	CreateTime string `json:"create_time"`
	Depth      int    `json:"depth"`
}

type truthController struct {
	Key       int32   `json:"key"`
	Type      string  `json:"type"`
	SharedBus *string `json:"shared_bus"` // null for a controller without one (NVMe)
}

type truthDisk struct {
	Key           int32  `json:"key"`
	Label         string `json:"label"`
	FileName      string `json:"file_name"`
	Datastore     string `json:"datastore"`
	CapacityBytes int64  `json:"capacity_bytes"`
	Format        string `json:"format"`
	ControllerKey int32  `json:"controller_key"`
	Parent        string `json:"parent"`  // backing.parent.fileName, "" for none
	Sharing       string `json:"sharing"` // backing.sharing, "" when unset
}

type truthVM struct {
	Moref       string            `json:"moref"`
	Name        string            `json:"name"`
	Template    bool              `json:"template"`
	PowerState  string            `json:"power_state"`
	HwVersion   string            `json:"hw_version"`
	FtState     string            `json:"ft_state"`
	Host        string            `json:"host"`
	Snapshots   []truthSnapshot   `json:"snapshots"`
	Controllers []truthController `json:"controllers"`
	Disks       []truthDisk       `json:"disks"`
	VMPathName  string            `json:"vm_path_name"`
	Datastores  []string          `json:"datastores"` // VirtualMachine.datastore morefs
	// runtime.consolidationNeeded, and config.managedBy's extensionKey ("" for none).
	ConsolidationNeeded bool   `json:"consolidation_needed"`
	ManagedBy           string `json:"managed_by"`
	GuestId             string `json:"guest_id"` // config.guestId
}

type truth struct {
	Counts      map[string]int   `json:"counts"`
	Datastores  []truthDatastore `json:"datastores"`
	StoragePods []truthPod       `json:"storage_pods"`
	Hosts       []truthHost      `json:"hosts"`
	DVSwitches  []truthDVS       `json:"dvswitches"`
	VMs         []truthVM        `json:"vms"`
	// Identifying is every value the estate holds that says whose it is, for the test
	// that hunts what an anonymized capture leaks (identifying.go).
	Identifying  []truthIdentifying `json:"identifying"`
	Scenario     string             `json:"scenario"`
	GeneratedUTC string             `json:"generated_utc"`
}

func all(kind string) []mo.Entity {
	es := simulator.Map.All(kind)
	sort.Slice(es, func(i, j int) bool { return es[i].Entity().Name < es[j].Entity().Name })
	return es
}

func delayedAck(opts []types.HostInternetScsiHbaParamValue) truthDelayedAck {
	for _, o := range opts {
		if o.Key == "DelayedAck" {
			v := "false"
			if b, ok := o.Value.(bool); ok && b {
				v = "true"
			}
			return truthDelayedAck{Value: v, Inherited: o.IsInherited != nil && *o.IsInherited}
		}
	}
	return truthDelayedAck{Value: "", Inherited: true}
}

func hostTruth(h *simulator.HostSystem) truthHost {
	t := truthHost{Moref: h.Self.Value, Name: h.Name, Vnics: []truthVnic{}, Vswitches: []truthVswitch{},
		HBAs: []truthAnyHBA{}, IscsiHBAs: []truthHBA{}, Luns: []truthLun{}}
	if h.Config != nil {
		t.ProductVersion = h.Config.Product.Version
	}
	if h.ConfigManager.AdvancedOption != nil {
		if om, ok := simulator.Map.Get(*h.ConfigManager.AdvancedOption).(*simulator.OptionManager); ok {
			for _, s := range om.Setting {
				o := s.GetOptionValue()
				if o.Key == "VMFS3.EnableBlockDelete" {
					if v, ok := o.Value.(int64); ok {
						t.EnableBlockDelete = &v
					}
				}
			}
		}
	}
	net := h.Config.Network
	for _, v := range net.Vnic {
		tv := truthVnic{Device: v.Device, Mtu: v.Spec.Mtu, Portgroup: v.Portgroup}
		if v.Spec.DistributedVirtualPort != nil {
			u := v.Spec.DistributedVirtualPort.SwitchUuid
			tv.DvsUUID = &u
		}
		if ip := v.Spec.Ip; ip != nil {
			tv.IP, tv.SubnetMask = strp(ip.IpAddress), strp(ip.SubnetMask)
		}
		t.Vnics = append(t.Vnics, tv)
	}
	for _, s := range net.Vswitch {
		t.Vswitches = append(t.Vswitches, truthVswitch{Name: s.Name, Mtu: s.Mtu})
	}
	var bound map[string][]string
	if h.ConfigManager.IscsiManager != nil {
		if im, ok := simulator.Map.Get(*h.ConfigManager.IscsiManager).(*IscsiManager); ok {
			bound = im.Bound
		}
	}
	for _, a := range h.Config.StorageDevice.HostBusAdapter {
		b := a.GetHostHostBusAdapter()
		t.HBAs = append(t.HBAs, truthAnyHBA{Device: b.Device, Type: reflect.TypeOf(a).Elem().Name(),
			Driver: b.Driver, Model: b.Model})
	}
	for _, a := range h.Config.StorageDevice.HostBusAdapter {
		hba, ok := a.(*types.HostInternetScsiHba)
		if !ok {
			continue
		}
		th := truthHBA{Device: hba.Device, IscsiName: hba.IScsiName, DelayedAck: delayedAck(hba.AdvancedOptions),
			Targets: []truthTarget{}, BoundVnics: append([]string{}, bound[hba.Device]...)}
		for _, s := range hba.ConfiguredSendTarget {
			th.Targets = append(th.Targets, truthTarget{Kind: "send", Address: s.Address, Port: s.Port, Parent: s.Parent,
				DelayedAck: delayedAck(s.AdvancedOptions)})
		}
		for _, s := range hba.ConfiguredStaticTarget {
			th.Targets = append(th.Targets, truthTarget{Kind: "static", Address: s.Address, Port: s.Port,
				IscsiName: s.IScsiName, DiscoveryMethod: s.DiscoveryMethod, Parent: s.Parent,
				DelayedAck: delayedAck(s.AdvancedOptions)})
		}
		t.IscsiHBAs = append(t.IscsiHBAs, th)
	}
	x := extraFor(h.Self)
	for _, l := range hostLuns(h) {
		local := l.local
		tl := truthLun{CanonicalName: l.canonical, Local: &local, LunType: l.lunType, LocalDisk: l.localDisk, Policy: l.policy,
			Satp: l.satp, PolicyType: l.policyType, MultipathPlugin: l.plugin, Paths: []truthPath{},
			ProtocolEndpoint: l.protocolEndpoint}
		if iops, ok := x.iops[l.canonical]; ok && !x.refuseEsxcli && !l.local && l.policy == "VMW_PSP_RR" {
			v := iops
			tl.IopsLimit = &v
		}
		if l.lunType != "" && l.lunType != "disk" {
			tl.Local = nil
		}
		for _, p := range l.paths {
			tl.Paths = append(tl.Paths, truthPath{Name: p.name, State: p.state, Adapter: p.adapter, TargetWwpn: p.wwpn})
		}
		t.Luns = append(t.Luns, tl)
	}
	t.SatpRules = []truthSatpRule{}
	if !x.refuseEsxcli {
		for _, r := range hostRules(x) {
			t.SatpRules = append(t.SatpRules, truthSatpRule{Satp: r.satp, Vendor: r.vendor, Model: r.model,
				Psp: r.psp, PspOptions: r.pspOptions, RuleGroup: r.group, Device: r.device, Driver: r.driver,
				Transport: r.transport, ClaimOptions: r.claimOptions, Options: r.options,
				Description: r.description})
		}
	}
	return t
}

func diskFormat(b types.BaseVirtualDeviceBackingInfo) string {
	switch x := b.(type) {
	case *types.VirtualDiskFlatVer2BackingInfo:
		if x.ThinProvisioned != nil && *x.ThinProvisioned {
			return "thin"
		}
		if x.EagerlyScrub != nil && *x.EagerlyScrub {
			return "eagerzeroedthick"
		}
		return "lazyzeroedthick"
	case *types.VirtualDiskRawDiskMappingVer1BackingInfo:
		return "rdm"
	}
	return "other"
}

func vmTruth(vm *simulator.VirtualMachine) truthVM {
	t := truthVM{Moref: vm.Self.Value, Name: vm.Name, PowerState: string(vm.Runtime.PowerState),
		FtState: string(vm.Summary.Runtime.FaultToleranceState), Snapshots: []truthSnapshot{},
		Controllers: []truthController{}, Disks: []truthDisk{}, VMPathName: vm.Summary.Config.VmPathName,
		Datastores: []string{}}
	for _, d := range vm.Datastore {
		t.Datastores = append(t.Datastores, d.Value)
	}
	if vm.Runtime.Host != nil {
		t.Host = vm.Runtime.Host.Value
	}
	t.ConsolidationNeeded = vm.Runtime.ConsolidationNeeded != nil && *vm.Runtime.ConsolidationNeeded
	if vm.Config != nil && vm.Config.ManagedBy != nil {
		t.ManagedBy = vm.Config.ManagedBy.ExtensionKey
	}
	if vm.Config != nil {
		t.Template = vm.Config.Template
		t.HwVersion = vm.Config.Version
		t.GuestId = vm.Config.GuestId
		for _, d := range vm.Config.Hardware.Device {
			if c, ok := d.(types.BaseVirtualSCSIController); ok {
				sc := c.GetVirtualSCSIController()
				bus := string(sc.SharedBus)
				t.Controllers = append(t.Controllers, truthController{Key: sc.Key,
					Type: reflect.TypeOf(d).Elem().Name(), SharedBus: &bus})
			}
			if c, ok := d.(*types.VirtualNVMEController); ok {
				t.Controllers = append(t.Controllers, truthController{Key: c.Key, Type: "VirtualNVMEController"})
			}
			if disk, ok := d.(*types.VirtualDisk); ok {
				td := truthDisk{Key: disk.Key, CapacityBytes: disk.CapacityInBytes, Format: diskFormat(disk.Backing),
					ControllerKey: disk.ControllerKey}
				if disk.DeviceInfo != nil {
					td.Label = disk.DeviceInfo.GetDescription().Label
				}
				if fb, ok := disk.Backing.(types.BaseVirtualDeviceFileBackingInfo); ok {
					f := fb.GetVirtualDeviceFileBackingInfo()
					td.FileName = f.FileName
					if f.Datastore != nil {
						td.Datastore = f.Datastore.Value
					}
				}
				if fb, ok := disk.Backing.(*types.VirtualDiskFlatVer2BackingInfo); ok {
					td.Sharing = fb.Sharing
					if fb.Parent != nil {
						td.Parent = fb.Parent.FileName
					}
				}
				t.Disks = append(t.Disks, td)
			}
		}
	}
	if vm.Snapshot != nil {
		var walk func(list []types.VirtualMachineSnapshotTree, depth int)
		walk = func(list []types.VirtualMachineSnapshotTree, depth int) {
			for _, s := range list {
				t.Snapshots = append(t.Snapshots, truthSnapshot{Name: s.Name,
					CreateTime: s.CreateTime.UTC().Format(time.RFC3339), Depth: depth})
				walk(s.ChildSnapshotList, depth+1)
			}
		}
		walk(vm.Snapshot.RootSnapshotList, 1)
	}
	return t
}

func buildTruth(scenario string) *truth {
	t := &truth{Counts: map[string]int{}, Datastores: []truthDatastore{}, StoragePods: []truthPod{},
		Hosts: []truthHost{}, DVSwitches: []truthDVS{}, VMs: []truthVM{}, Scenario: scenario,
		GeneratedUTC: time.Now().UTC().Format(time.RFC3339)}
	for _, e := range all("Datastore") {
		ds := e.(*simulator.Datastore)
		td := truthDatastore{Moref: ds.Self.Value, Name: ds.Name, Type: ds.Summary.Type, Capacity: ds.Summary.Capacity,
			FreeSpace: ds.Summary.FreeSpace, Uncommitted: ds.Summary.Uncommitted, VMCount: len(ds.Vm),
			Extents: []truthExtent{}, Hosts: []truthMount{}}
		if v, ok := ds.Info.(*types.VmfsDatastoreInfo); ok && v.Vmfs != nil {
			td.VmfsMajor = v.Vmfs.MajorVersion
			td.VmfsVersion, td.UnmapPriority = v.Vmfs.Version, v.Vmfs.UnmapPriority
			td.VmfsLocal, td.VmfsSsd = v.Vmfs.Local, v.Vmfs.Ssd
			for _, e := range v.Vmfs.Extent {
				td.Extents = append(td.Extents, truthExtent{DiskName: e.DiskName, Partition: e.Partition})
			}
		}
		for _, m := range ds.Host {
			td.Hosts = append(td.Hosts, truthMount{Host: m.Key.Value, Mounted: m.MountInfo.Mounted,
				Accessible: m.MountInfo.Accessible})
		}
		if ds.Parent != nil {
			td.Parent = ds.Parent.Value
		}
		t.Datastores = append(t.Datastores, td)
	}
	for _, e := range all("StoragePod") {
		p := e.(*simulator.StoragePod)
		tp := truthPod{Moref: p.Self.Value, Name: p.Name, Datastores: []string{}}
		if p.Summary != nil {
			tp.Capacity, tp.FreeSpace = p.Summary.Capacity, p.Summary.FreeSpace
		}
		for _, c := range p.ChildEntity {
			tp.Datastores = append(tp.Datastores, c.Value)
		}
		t.StoragePods = append(t.StoragePods, tp)
	}
	for _, e := range all("HostSystem") {
		t.Hosts = append(t.Hosts, hostTruth(e.(*simulator.HostSystem)))
	}
	for _, e := range all("DistributedVirtualSwitch") {
		d := e.(*simulator.DistributedVirtualSwitch)
		td := truthDVS{Moref: d.Self.Value, Name: d.Name, UUID: d.Uuid}
		if c, ok := d.Config.(*types.VMwareDVSConfigInfo); ok {
			td.MaxMtu = c.MaxMtu
		}
		t.DVSwitches = append(t.DVSwitches, td)
	}
	for _, e := range all("VirtualMachine") {
		t.VMs = append(t.VMs, vmTruth(e.(*simulator.VirtualMachine)))
	}
	t.Identifying = identifying()
	c := t.Counts
	c["datastore"] = len(t.Datastores)
	c["storage_pod"] = len(t.StoragePods)
	c["vm"] = len(t.VMs)
	c["host"] = len(t.Hosts)
	c["dvswitch"] = len(t.DVSwitches)
	for _, h := range t.Hosts {
		c["iscsi_hba"] += len(h.IscsiHBAs)
		c["lun"] += len(h.Luns)
		c["vnic"] += len(h.Vnics)
		for _, l := range h.Luns {
			c["lun_path"] += len(l.Paths)
		}
	}
	for _, v := range t.VMs {
		c["vdisk"] += len(v.Disks)
	}
	return t
}

func writeTruth(path, scenario string) error {
	b, err := json.MarshalIndent(buildTruth(scenario), "", " ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := ioutil.WriteFile(tmp, append(b, '\n'), 0644); err != nil {
		return err
	}
	return renameFile(tmp, path)
}

var _ = strings.TrimSpace
