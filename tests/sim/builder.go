package main

// Inventory builder: clusters and hosts are created through the simulator's
// own API (in process); datastores, VMs, LUNs, iSCSI and network details
// are planted directly on the objects in simulator.Map, under
// simulator.Map.WithLock, before the server starts. Creating VMs directly
// (instead of CreateVM_Task) keeps 20,000 VMs fast and makes every planted
// property exactly what the scenario says.

import (
	"context"
	"crypto/sha1"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/simulator/esx"
	"github.com/vmware/govmomi/simulator/vpx"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"simkit"
)

// GiB is the unit for every size in the scenarios.
const GiB = int64(1) << 30

// TiB is 1024 GiB.
const TiB = 1024 * GiB

func vpxServiceContent() types.ServiceContent { return vpx.ServiceContent }

type world struct {
	ctx     context.Context
	c       *vim25.Client
	dc      *simulator.Datacenter
	folders *object.DatacenterFolders
	now     time.Time

	clusters   map[string]*simulator.ClusterComputeResource
	hosts      map[string]*simulator.HostSystem
	datastores map[string]*simulator.Datastore
	pods       map[string]*simulator.StoragePod
	dvs        map[string]*simulator.DistributedVirtualSwitch
	vms        map[string]*simulator.VirtualMachine

	lunSeq  int
	hostLun map[types.ManagedObjectReference]int
	ipSeq   int
	// iscsiChannels: the path channels of a host's software iSCSI adapter, one per bound
	// vmknic (1 without port binding).
	iscsiChannels map[types.ManagedObjectReference]int
}

func newWorld(ctx context.Context, m *simulator.Model) (*world, error) {
	c, err := vim25.NewClient(ctx, m.Service)
	if err != nil {
		return nil, err
	}
	w := &world{
		ctx: ctx, c: c, now: time.Now().UTC().Truncate(time.Second),
		clusters:   map[string]*simulator.ClusterComputeResource{},
		hosts:      map[string]*simulator.HostSystem{},
		datastores: map[string]*simulator.Datastore{},
		pods:       map[string]*simulator.StoragePod{},
		dvs:        map[string]*simulator.DistributedVirtualSwitch{},
		vms:        map[string]*simulator.VirtualMachine{},
		hostLun:    map[types.ManagedObjectReference]int{},
	}
	dcs := simulator.Map.All("Datacenter")
	if len(dcs) != 1 {
		return nil, fmt.Errorf("expected 1 datacenter, got %d", len(dcs))
	}
	w.dc = dcs[0].(*simulator.Datacenter)
	w.folders, err = object.NewDatacenter(c, w.dc.Self).Folders(ctx)
	if err != nil {
		return nil, err
	}
	return w, nil
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

func lock(obj mo.Reference, f func()) { simulator.Map.WithLock(obj, f) }

// ---- clusters and hosts ----

func (w *world) addCluster(name string) *simulator.ClusterComputeResource {
	cl, err := w.folders.HostFolder.CreateCluster(w.ctx, name, types.ClusterConfigSpecEx{})
	must(err)
	obj := simulator.Map.Get(cl.Reference()).(*simulator.ClusterComputeResource)
	w.clusters[name] = obj
	return obj
}

// hostOpts are per-host facts; zero value = compliant defaults.
type hostOpts struct {
	enableBlockDelete int64 // VMFS3.EnableBlockDelete
	refuseEsxcli      bool
	version           string // config.product.version; "" keeps the simulator's 6.5.0
}

func (w *world) addHost(cluster *simulator.ClusterComputeResource, name string, o hostOpts) *simulator.HostSystem {
	cl := object.NewClusterComputeResource(w.c, cluster.Self)
	task, err := cl.AddHost(w.ctx, types.HostConnectSpec{HostName: name, Force: true}, true, nil, nil)
	must(err)
	info, err := task.WaitForResult(w.ctx, nil)
	must(err)
	h := simulator.Map.Get(info.Result.(types.ManagedObjectReference)).(*simulator.HostSystem)
	w.hosts[name] = h
	x := extraFor(h.Self)
	x.refuseEsxcli = o.refuseEsxcli
	// Compliant by default: a user claim rule giving the DGC ALUA LUNs of
	// sanLun Round Robin with iops=1.
	x.userRules = []satpRule{dgcRule()}

	if o.version != "" {
		lock(h, func() {
			p := h.Config.Product
			p.Version, p.FullName = o.version, "VMware ESXi "+o.version+" build-3620759"
			h.Config.Product = p
			h.Summary.Config.Product = &p
		})
	}
	lock(h, func() {
		// Own OptionManager with its own copies of the settings (the stock
		// hosts share the pointers of esx.Setting).
		var settings []types.BaseOptionValue
		for _, s := range esx.Setting {
			v := *s.GetOptionValue()
			settings = append(settings, &v)
		}
		settings = append(settings, &types.OptionValue{Key: "VMFS3.EnableBlockDelete", Value: o.enableBlockDelete})
		om := simulator.NewOptionManager(nil, settings).(*simulator.OptionManager)
		om.Self = types.ManagedObjectReference{Type: "OptionManager", Value: "EsxHostAdvSettings-" + h.Self.Value}
		omRef := simulator.Map.Put(om).Reference()
		h.ConfigManager.AdvancedOption = &omRef

		im := &IscsiManager{host: h.Self, Bound: map[string][]string{}}
		im.Self = types.ManagedObjectReference{Type: "IscsiManager", Value: "iscsiManager-" + h.Self.Value}
		imRef := simulator.Map.Put(im).Reference()
		h.ConfigManager.IscsiManager = &imRef

		// Storage: keep the local mpx. boot disk (localDisk true, FIXED),
		// drop the local CD-ROM and the block HBA vmhba64, add two FC HBAs.
		sd := h.Config.StorageDevice
		var luns []types.BaseScsiLun
		keep := map[string]bool{}
		for _, l := range sd.ScsiLun {
			if d, ok := l.(*types.HostScsiDisk); ok {
				luns = append(luns, d)
				keep[d.Key] = true
			}
		}
		sd.ScsiLun = luns
		var mp []types.HostMultipathInfoLogicalUnit
		for _, l := range sd.MultipathInfo.Lun {
			if keep[l.Lun] {
				mp = append(mp, l)
			}
		}
		sd.MultipathInfo.Lun = mp
		var hbas []types.BaseHostHostBusAdapter
		for _, a := range sd.HostBusAdapter {
			if a.GetHostHostBusAdapter().Device != "vmhba64" {
				hbas = append(hbas, a)
			}
		}
		for i, dev := range []string{"vmhba2", "vmhba3"} {
			hbas = append(hbas, &types.HostFibreChannelHba{
				HostHostBusAdapter: types.HostHostBusAdapter{
					Key: "key-vim.host.FibreChannelHba-" + dev, Device: dev, Bus: int32(3 + i),
					Status: "online", Model: "QLogic ISP2532-based 8Gb Fibre Channel to PCI Express HBA",
					Driver: "qlnativefc", Pci: fmt.Sprintf("0000:0%d:00.0", 3+i), StorageProtocol: "scsi",
				},
				PortWorldWideName: 0x2100001b32000000 + int64(len(w.hosts))*16 + int64(i),
				NodeWorldWideName: 0x2000001b32000000 + int64(len(w.hosts))*16 + int64(i),
				PortType:          "fabric",
				Speed:             8,
			})
		}
		sd.HostBusAdapter = hbas
		sd.PlugStoreTopology = ownTopology(sd.PlugStoreTopology, keep)
	})
	return h
}

// ownTopology returns a copy of the stock plug-in topology (which every host
// shares) holding only the devices of the LUNs kept, so that each host's
// devices can be claimed by their plug-ins without touching the others'.
func ownTopology(pst *types.HostPlugStoreTopology, keep map[string]bool) *types.HostPlugStoreTopology {
	c := &types.HostPlugStoreTopology{}
	if pst == nil {
		return c
	}
	c.Adapter = append(c.Adapter, pst.Adapter...)
	c.Target = append(c.Target, pst.Target...)
	devs := map[string]bool{}
	for _, d := range pst.Device {
		if keep[d.Lun] {
			d.Path = append([]string(nil), d.Path...)
			c.Device = append(c.Device, d)
			devs[d.Key] = true
		}
	}
	for _, p := range pst.Path {
		if devs[p.Device] {
			c.Path = append(c.Path, p)
		}
	}
	for _, pl := range pst.Plugin {
		var kept []string
		for _, d := range pl.Device {
			if devs[d] {
				kept = append(kept, d)
			}
		}
		pl.Device = kept
		pl.ClaimedPath = append([]string(nil), pl.ClaimedPath...)
		c.Plugin = append(c.Plugin, pl)
	}
	return c
}

// claim records in the host's plug-in topology that plugin (NMP, HPP,
// PowerPath, ...) owns the device of ScsiLun lunKey, reached by paths.
func claim(sd *types.HostStorageDeviceInfo, plugin, id, lunKey string, paths []types.HostMultipathInfoPath) {
	pst := sd.PlugStoreTopology
	dev := types.HostPlugStoreTopologyDevice{Key: "key-vim.host.PlugStoreTopology.Device-" + id, Lun: lunKey}
	for _, p := range paths {
		pk := "key-vim.host.PlugStoreTopology.Path-" + p.Name
		dev.Path = append(dev.Path, pk)
		pst.Path = append(pst.Path, types.HostPlugStoreTopologyPath{Key: pk, Name: p.Name, Device: dev.Key,
			Adapter: "key-vim.host.PlugStoreTopology.Adapter-" + strings.SplitN(p.Name, ":", 2)[0]})
	}
	pst.Device = append(pst.Device, dev)
	for i := range pst.Plugin {
		if pst.Plugin[i].Name == plugin {
			pst.Plugin[i].Device = append(pst.Plugin[i].Device, dev.Key)
			pst.Plugin[i].ClaimedPath = append(pst.Plugin[i].ClaimedPath, dev.Path...)
			return
		}
	}
	pst.Plugin = append(pst.Plugin, types.HostPlugStoreTopologyPlugin{
		Key: "key-vim.host.PlugStoreTopology.Plugin-" + plugin, Name: plugin,
		Device: []string{dev.Key}, ClaimedPath: dev.Path})
}

// claimedBy is the plug-in the host's topology says owns the device of
// ScsiLun lunKey, or "".
func claimedBy(sd *types.HostStorageDeviceInfo, lunKey string) string {
	pst := sd.PlugStoreTopology
	if pst == nil {
		return ""
	}
	for _, d := range pst.Device {
		if d.Lun != lunKey {
			continue
		}
		for _, p := range pst.Plugin {
			for _, k := range p.Device {
				if k == d.Key {
					return p.Name
				}
			}
		}
	}
	return ""
}

// addHBA gives the host one more adapter (a local SAS or NVMe controller).
func addHBA(h *simulator.HostSystem, a types.BaseHostHostBusAdapter) {
	lock(h, func() {
		sd := h.Config.StorageDevice
		sd.HostBusAdapter = append(sd.HostBusAdapter, a)
	})
}

// hbaKey is the key of the host's adapter with that device name.
func hbaKey(sd *types.HostStorageDeviceInfo, device string) string {
	for _, a := range sd.HostBusAdapter {
		if hba := a.GetHostHostBusAdapter(); hba.Device == device {
			return hba.Key
		}
	}
	panic("no adapter " + device)
}

// ---- LUNs ----

type pathSpec struct {
	state string // active, standby, dead
}

type lunSpec struct {
	canonical string
	vendor    string
	model     string
	policy    string // VMW_PSP_RR, VMW_PSP_MRU, VMW_PSP_FIXED; HPP: LB-RR, FIXED, ...
	satp      string
	iops      int // RR IOPS limit as esxcli reports it
	paths     []string
	sizeGiB   int64
	// adapters, when set, is the adapter device of each path (vmhba2);
	// otherwise paths alternate over the host's two SAN adapters.
	adapters []string
	// plugin owns the device: "" is NMP; "HPP" gives an HPP policy and no
	// SATP; any other (PowerPath) keeps the device out of multipathInfo,
	// which lists only NMP and HPP devices.
	plugin      string
	local       bool // localDisk true
	noLocalDisk bool // leave localDisk out, as some hosts do
	ssd         bool
	// lunType, when set and not "disk", makes the device a plain ScsiLun
	// of that type (enclosure, tape, mediaChanger), as hosts list them.
	lunType string
	// pspConfig is esxcli's PathSelectionPolicyDeviceConfig for the
	// device instead of the one its policy and iops imply (latency or
	// bytes Round Robin).
	pspConfig string
	// pe makes the device a VVol protocol endpoint (ScsiLun.protocolEndpoint).
	pe bool
	// targets, when set, is the Fibre Channel target port WWN each path ends
	// at ("50:06:01:60:47:e4:1e:49"), sent as the path's transport.
	targets []string
	// portals, when set, is the iSCSI target each path ends at, "address IQN"
	// ("10.0.1.21 iqn.1992-04.com.emc:cx.lab.a0"), sent as the path's transport
	// (HostInternetScsiTargetTransport, its address as "address:3260").
	portals []string
}

// wwnInt is a colon-separated WWN as vSphere's xsd:long.
func wwnInt(s string) int64 {
	v, err := strconv.ParseUint(strings.ReplaceAll(s, ":", ""), 16, 64)
	if err != nil {
		panic("bad WWN " + s)
	}
	return int64(v)
}

// dgcRule is the user claim rule that makes sanLun LUNs presented later
// come up on Round Robin with iops=1.
func dgcRule() satpRule {
	return satpRule{satp: "VMW_SATP_ALUA", vendor: "DGC", group: "user", psp: "VMW_PSP_RR", pspOptions: "iops=1"}
}

// sanLun is a compliant SAN LUN: RR, iops=1, two active paths.
func sanLun(canonical string, sizeGiB int64) lunSpec {
	return lunSpec{canonical: canonical, vendor: "DGC", model: "VRAID", policy: "VMW_PSP_RR",
		satp: "VMW_SATP_ALUA", iops: 1, paths: []string{"active", "active"}, sizeGiB: sizeGiB}
}

func (w *world) newNaa() string {
	w.lunSeq++
	return fmt.Sprintf("naa.60060160a0b00000%016x", 0x1000+w.lunSeq)
}

func isIscsiHost(h *simulator.HostSystem) bool {
	for _, a := range h.Config.StorageDevice.HostBusAdapter {
		if _, ok := a.(*types.HostInternetScsiHba); ok {
			return true
		}
	}
	return false
}

func (w *world) addLun(h *simulator.HostSystem, l lunSpec) {
	lock(h, func() {
		w.hostLun[h.Self]++
		n := w.hostLun[h.Self]
		sum := sha1.Sum([]byte(l.canonical))
		id := fmt.Sprintf("0200%02x0000%x", n, sum[:12])
		key := "key-vim.host.ScsiDisk-" + id
		sd := h.Config.StorageDevice
		display := fmt.Sprintf("%s Fibre Channel Disk (%s)", l.vendor, l.canonical)
		adapters := []string{"vmhba2:C0", "vmhba3:C0"}
		adapterKeys := []string{"key-vim.host.FibreChannelHba-vmhba2", "key-vim.host.FibreChannelHba-vmhba3"}
		// Paths alternate over the two FC HBAs, or over the software iSCSI adapter's
		// channels (one per bound vmknic); further paths go to further targets (portals).
		channels := 2
		if isIscsiHost(h) {
			display = fmt.Sprintf("%s iSCSI Disk (%s)", l.vendor, l.canonical)
			adapters = []string{"vmhba64:C0", "vmhba64:C1"}
			adapterKeys = []string{"key-vim.host.InternetScsiHba-vmhba64", "key-vim.host.InternetScsiHba-vmhba64"}
			if c := w.iscsiChannels[h.Self]; c == 1 {
				channels = 1
			}
		}
		if l.local {
			display = fmt.Sprintf("Local %s Disk (%s)", strings.TrimSpace(l.vendor), l.canonical)
		}
		disk := &types.HostScsiDisk{
			ScsiLun: types.ScsiLun{
				HostDevice:       types.HostDevice{DeviceName: "/vmfs/devices/disks/" + l.canonical, DeviceType: "disk"},
				Key:              key,
				Uuid:             id,
				CanonicalName:    l.canonical,
				DisplayName:      display,
				LunType:          "disk",
				Vendor:           l.vendor,
				Model:            l.model,
				Revision:         "0001",
				ScsiLevel:        6,
				OperationalState: []string{"ok"},
				Capabilities:     &types.ScsiLunCapabilities{UpdateDisplayNameSupported: true},
				Descriptor: []types.ScsiLunDescriptor{
					{Quality: "highQuality", Id: l.canonical},
					{Quality: "highQuality", Id: "vml." + id},
				},
			},
			Capacity:   types.HostDiskDimensionsLba{BlockSize: 512, Block: l.sizeGiB * GiB / 512},
			DevicePath: "/vmfs/devices/disks/" + l.canonical,
			Ssd:        types.NewBool(l.ssd),
			LocalDisk:  types.NewBool(l.local),
		}
		if l.noLocalDisk {
			disk.LocalDisk = nil
		}
		if l.lunType != "" && l.lunType != "disk" {
			dev := disk.ScsiLun
			dev.LunType = l.lunType
			dev.DeviceType = map[string]string{"tape": "sequential-access", "mediaChanger": "media-changer"}[l.lunType]
			if dev.DeviceType == "" {
				dev.DeviceType = l.lunType
			}
			dev.DeviceName = "/vmfs/devices/genscsi/" + l.canonical
			dev.DisplayName = fmt.Sprintf("%s %s (%s)", l.vendor, l.lunType, l.canonical)
			sd.ScsiLun = append(sd.ScsiLun, &dev)
		} else {
			if l.pe {
				disk.ProtocolEndpoint = types.NewBool(true)
			}
			sd.ScsiLun = append(sd.ScsiLun, disk)
		}
		lu := types.HostMultipathInfoLogicalUnit{
			Key:                    "key-vim.host.MultipathInfo.LogicalUnit-" + id,
			Id:                     id,
			Lun:                    key,
			StorageArrayTypePolicy: &types.HostMultipathInfoLogicalUnitStorageArrayTypePolicy{Policy: l.satp},
		}
		perAdapter := map[string]int{}
		for i, st := range l.paths {
			name := fmt.Sprintf("%s:T%d:L%d", adapters[i%channels], i/channels, n)
			akey := adapterKeys[i%2]
			if l.adapters != nil {
				dev := l.adapters[i]
				name = fmt.Sprintf("%s:C0:T%d:L%d", dev, perAdapter[dev], n)
				if c := w.iscsiChannels[h.Self]; dev == "vmhba64" && c > 1 {
					name = fmt.Sprintf("%s:C%d:T%d:L%d", dev, perAdapter[dev]%c, perAdapter[dev]/c, n)
				}
				perAdapter[dev]++
				akey = hbaKey(sd, dev)
			}
			mp := types.HostMultipathInfoPath{
				Key:           "key-vim.host.MultipathInfo.Path-" + name,
				Name:          name,
				PathState:     st,
				State:         st,
				IsWorkingPath: types.NewBool(st == "active"),
				Adapter:       akey,
				Lun:           lu.Key,
			}
			if l.portals != nil {
				f := strings.Fields(l.portals[i])
				mp.Transport = &types.HostInternetScsiTargetTransport{
					IScsiName: f[1], IScsiAlias: "", Address: []string{f[0] + ":3260"},
				}
			}
			if l.targets != nil {
				mp.Transport = &types.HostFibreChannelTargetTransport{
					PortWorldWideName: wwnInt(l.targets[i]),
					NodeWorldWideName: wwnInt("50:06:01:60:c7:e0:1e:49"),
				}
			}
			lu.Path = append(lu.Path, mp)
		}
		switch l.plugin {
		case "":
			claim(sd, "NMP", id, key, lu.Path)
		case "HPP":
			claim(sd, "HPP", id, key, lu.Path)
			lu.StorageArrayTypePolicy = nil
			lu.Policy = &types.HostMultipathInfoHppLogicalUnitPolicy{
				HostMultipathInfoLogicalUnitPolicy: types.HostMultipathInfoLogicalUnitPolicy{Policy: l.policy},
			}
			sd.MultipathInfo.Lun = append(sd.MultipathInfo.Lun, lu)
			return
		default:
			// A third-party plug-in's device: in scsiLun and the topology only.
			claim(sd, l.plugin, id, key, lu.Path)
			return
		}
		if l.policy == "VMW_PSP_FIXED" {
			lu.Policy = &types.HostMultipathInfoFixedLogicalUnitPolicy{
				HostMultipathInfoLogicalUnitPolicy: types.HostMultipathInfoLogicalUnitPolicy{Policy: l.policy},
				Prefer:                             lu.Path[0].Name,
			}
		} else {
			lu.Policy = &types.HostMultipathInfoLogicalUnitPolicy{Policy: l.policy}
		}
		sd.MultipathInfo.Lun = append(sd.MultipathInfo.Lun, lu)
		if l.pspConfig != "" {
			extraFor(h.Self).pspConfig[l.canonical] = l.pspConfig
		}
		// A latency config has no IOPS limit (iops 0): esxcli shows none.
		if l.policy == "VMW_PSP_RR" && (l.pspConfig == "" || l.iops > 0) {
			extraFor(h.Self).iops[l.canonical] = l.iops
		}
	})
}

// lunView joins ScsiLun, multipath info and the plug-in topology for one
// device.
type lunView struct {
	canonical, displayName, policy, satp string
	policyType, plugin                   string
	lunType                              string // ScsiLun.lunType: disk, enclosure, tape, ...
	local                                bool
	localDisk                            *bool
	protocolEndpoint                     *bool
	paths                                []struct{ name, state, adapter, wwpn string }
}

func (l lunView) pathNames() []string {
	var s []string
	for _, p := range l.paths {
		s = append(s, p.name)
	}
	if len(s) == 0 {
		s = append(s, "")
	}
	return s
}

func hostLuns(h *simulator.HostSystem) []lunView {
	var out []lunView
	if h.Config == nil || h.Config.StorageDevice == nil {
		return nil
	}
	sd := h.Config.StorageDevice
	// Disks (HostScsiDisk) and the other SCSI devices a host lists as plain
	// ScsiLun: enclosures, tape drives, media changers.
	byKey := map[string]types.BaseScsiLun{}
	for _, l := range sd.ScsiLun {
		byKey[l.GetScsiLun().Key] = l
	}
	devices := map[string]string{} // adapter key -> device
	for _, a := range sd.HostBusAdapter {
		hba := a.GetHostHostBusAdapter()
		devices[hba.Key] = hba.Device
	}
	view := func(l types.BaseScsiLun) lunView {
		d := l.GetScsiLun()
		v := lunView{canonical: d.CanonicalName, displayName: d.DisplayName, lunType: d.LunType,
			plugin: claimedBy(sd, d.Key), protocolEndpoint: d.ProtocolEndpoint}
		if disk, ok := l.(*types.HostScsiDisk); ok {
			v.local, v.localDisk = disk.LocalDisk != nil && *disk.LocalDisk, disk.LocalDisk
		}
		return v
	}
	listed := map[string]bool{}
	if sd.MultipathInfo != nil {
		for _, lu := range sd.MultipathInfo.Lun {
			d := byKey[lu.Lun]
			if d == nil {
				continue
			}
			listed[lu.Lun] = true
			v := view(d)
			if lu.Policy != nil {
				v.policy = lu.Policy.GetHostMultipathInfoLogicalUnitPolicy().Policy
				v.policyType = reflect.TypeOf(lu.Policy).Elem().Name()
			}
			if v.plugin == "" && v.policyType == "HostMultipathInfoHppLogicalUnitPolicy" {
				v.plugin = "HPP"
			} else if v.plugin == "" {
				v.plugin = "NMP"
			}
			if lu.StorageArrayTypePolicy != nil {
				v.satp = lu.StorageArrayTypePolicy.Policy
			}
			for _, p := range lu.Path {
				wwpn := ""
				if fc, ok := p.Transport.(*types.HostFibreChannelTargetTransport); ok {
					var b []string
					for i := 56; i >= 0; i -= 8 {
						b = append(b, fmt.Sprintf("%02x", (uint64(fc.PortWorldWideName)>>uint(i))&0xff))
					}
					wwpn = strings.Join(b, ":")
				}
				v.paths = append(v.paths, struct{ name, state, adapter, wwpn string }{p.Name, p.PathState, devices[p.Adapter], wwpn})
			}
			out = append(out, v)
		}
	}
	// Devices of other plug-ins (PowerPath) are not in multipathInfo.
	for _, l := range sd.ScsiLun {
		if !listed[l.GetScsiLun().Key] {
			out = append(out, view(l))
		}
	}
	return out
}

// ---- iSCSI and network ----

type targetSpec struct {
	address    string
	port       int32
	iqn        string // static targets only
	delayedAck *bool  // nil: inherit from the adapter, or from the parent send target
	// Static targets: discoveryMethod (default staticMethod) and parent
	// (default the adapter): a send target's "address:port" when found by it.
	method, parent string
}

// foundBy is what the send target at address:3260 finds: a static target for each of iqns,
// discovered by it (sendTargetMethod) and so inheriting its options.
func foundBy(address string, iqns ...string) []targetSpec {
	var ts []targetSpec
	for _, iqn := range iqns {
		ts = append(ts, targetSpec{address: address, port: 3260, iqn: iqn,
			method: "sendTargetMethod", parent: address + ":3260"})
	}
	return ts
}

type iscsiSpec struct {
	delayedAck    bool
	sendTargets   []targetSpec
	staticTargets []targetSpec
	vnicMTU       int32
	vswitchMTU    int32                               // standard vSwitch "vSwitch-iscsi"
	dvs           *simulator.DistributedVirtualSwitch // when set, vmk1 is on this DVS instead
	// nics: the host's iSCSI vmknics, one per physical NIC (default 2, as a real estate
	// has them): vmk1 as above, vmk2 MTU 9000 on its own vSwitch-iscsi-2 (MTU 9000), the
	// second fabric. With port binding (the default) each is bound to vmhba64 and its
	// sessions get their own path channel (vmhba64:C0, vmhba64:C1), as ESXi names them.
	nics int
	// noBinding: no vmknic is bound (routed or multi-subnet iSCSI, where VMware says not
	// to bind): the paths are one per portal, on channel C0 (vmhba64:C0:T0, :T1).
	noBinding bool
	// ips: the vmknics' "address/mask" (vmk1 first); default 10.0.1.<n>/24, 10.0.11.<n>/24.
	ips []string
}

func paramDelayedAck(v bool, inherited bool) types.HostInternetScsiHbaParamValue {
	return types.HostInternetScsiHbaParamValue{
		OptionValue: types.OptionValue{Key: "DelayedAck", Value: v},
		IsInherited: types.NewBool(inherited),
	}
}

func targetOptions(t targetSpec, adapter bool) []types.HostInternetScsiHbaParamValue {
	loginTimeout := types.HostInternetScsiHbaParamValue{
		OptionValue: types.OptionValue{Key: "LoginTimeout", Value: int32(5)},
		IsInherited: types.NewBool(true),
	}
	if t.delayedAck == nil {
		return []types.HostInternetScsiHbaParamValue{loginTimeout, paramDelayedAck(adapter, true)}
	}
	return []types.HostInternetScsiHbaParamValue{loginTimeout, paramDelayedAck(*t.delayedAck, false)}
}

// addIscsi gives the host a software iSCSI adapter vmhba64 bound to vmk1 and vmk2 (s.nics
// of them; none with s.noBinding).
// Call before addLun so the host's SAN paths go through vmhba64.
func (w *world) addIscsi(h *simulator.HostSystem, s iscsiSpec) {
	w.ipSeq++
	if s.nics == 0 {
		s.nics = 2
	}
	ips := s.ips
	for i := len(ips); i < s.nics; i++ {
		ips = append(ips, fmt.Sprintf("10.0.%d.%d/24", 1+10*i, w.ipSeq))
	}
	var dvsUUID, dvsName string
	if s.dvs != nil {
		dvsUUID, dvsName = s.dvs.Uuid, s.dvs.Name
	}
	lock(h, func() {
		hba := &types.HostInternetScsiHba{
			HostHostBusAdapter: types.HostHostBusAdapter{
				Key: "key-vim.host.InternetScsiHba-vmhba64", Device: "vmhba64", Bus: 0,
				Status: "online", Model: "iSCSI Software Adapter", Driver: "iscsi_vmk", StorageProtocol: "scsi",
			},
			IsSoftwareBased:       true,
			CanBeDisabled:         types.NewBool(true),
			NetworkBindingSupport: types.HostInternetScsiHbaNetworkBindingSupportTypeOptional,
			DiscoveryCapabilities: types.HostInternetScsiHbaDiscoveryCapabilities{
				SendTargetsDiscoverySettable: true, StaticTargetDiscoverySettable: true,
			},
			DiscoveryProperties: types.HostInternetScsiHbaDiscoveryProperties{
				SendTargetsDiscoveryEnabled: true, StaticTargetDiscoveryEnabled: true,
			},
			AuthenticationProperties: types.HostInternetScsiHbaAuthenticationProperties{ChapAuthEnabled: false},
			IpCapabilities:           types.HostInternetScsiHbaIPCapabilities{},
			IpProperties:             types.HostInternetScsiHbaIPProperties{DhcpConfigurationEnabled: false},
			AdvancedOptions: []types.HostInternetScsiHbaParamValue{
				{OptionValue: types.OptionValue{Key: "LoginTimeout", Value: int32(5)}, IsInherited: types.NewBool(false)},
				paramDelayedAck(s.delayedAck, false),
			},
			IScsiName: "iqn.1998-01.com.vmware:" + h.Name,
		}
		for _, t := range s.sendTargets {
			hba.ConfiguredSendTarget = append(hba.ConfiguredSendTarget, types.HostInternetScsiHbaSendTarget{
				Address: t.address, Port: t.port, AdvancedOptions: targetOptions(t, s.delayedAck),
				Parent: "vmhba64",
			})
		}
		for _, t := range s.staticTargets {
			method, parent, inherit := "staticMethod", "vmhba64", s.delayedAck
			if t.parent != "" {
				method, parent = t.method, t.parent
			}
			// What a target found by a send target inherits is the send target's.
			for _, st := range s.sendTargets {
				if fmt.Sprintf("%s:%d", st.address, st.port) == parent && st.delayedAck != nil {
					inherit = *st.delayedAck
				}
			}
			hba.ConfiguredStaticTarget = append(hba.ConfiguredStaticTarget, types.HostInternetScsiHbaStaticTarget{
				Address: t.address, Port: t.port, IScsiName: t.iqn, DiscoveryMethod: method,
				AdvancedOptions: targetOptions(t, inherit), Parent: parent,
			})
		}
		sd := h.Config.StorageDevice
		sd.HostBusAdapter = append(sd.HostBusAdapter, hba)

		net := h.Config.Network
		for i := 0; i < s.nics; i++ {
			dev := fmt.Sprintf("vmk%d", i+1)
			addr, bits, _ := strings.Cut(ips[i], "/")
			var n int
			fmt.Sscanf(bits, "%d", &n)
			mask := netMask(n)
			vnic := types.HostVirtualNic{
				Device: dev,
				Key:    "key-vim.host.VirtualNic-" + dev,
				Spec: types.HostVirtualNicSpec{
					Ip:  &types.HostIpConfig{Dhcp: false, IpAddress: addr, SubnetMask: mask},
					Mac: fmt.Sprintf("00:50:56:6a:%02x:%02x", i*16+w.ipSeq/256, w.ipSeq%256),
					Mtu: s.vnicMTU,
				},
			}
			// vmk1 is the one the spec plants; vmk2 on is compliant, each on its own vSwitch.
			swName, pgName, mtu := "vSwitch-iscsi", "iSCSI-1", s.vswitchMTU
			if i > 0 {
				swName, pgName, mtu = fmt.Sprintf("vSwitch-iscsi-%d", i+1), fmt.Sprintf("iSCSI-%d", i+1), 9000
				vnic.Spec.Mtu = 9000
			}
			if s.dvs == nil || i > 0 {
				swKey := "key-vim.host.VirtualSwitch-" + swName
				pgKey := "key-vim.host.PortGroup-" + pgName
				net.Vswitch = append(net.Vswitch, types.HostVirtualSwitch{
					Name: swName, Key: swKey, NumPorts: 128, NumPortsAvailable: 120,
					Mtu: mtu, Portgroup: []string{pgKey},
					Spec: types.HostVirtualSwitchSpec{NumPorts: 128, Mtu: mtu},
				})
				net.Portgroup = append(net.Portgroup, types.HostPortGroup{
					Key: pgKey, Vswitch: swKey,
					Spec: types.HostPortGroupSpec{Name: pgName, VswitchName: swName},
				})
				vnic.Portgroup = pgName
				vnic.Spec.Portgroup = pgName
			} else {
				vnic.Spec.DistributedVirtualPort = &types.DistributedVirtualSwitchPortConnection{
					SwitchUuid: dvsUUID, PortgroupKey: "dvportgroup-iscsi-" + dvsName, PortKey: fmt.Sprintf("%d", 100+w.ipSeq),
				}
			}
			net.Vnic = append(net.Vnic, vnic)
		}
	})
	im := simulator.Map.Get(*h.ConfigManager.IscsiManager).(*IscsiManager)
	im.Bound["vmhba64"] = []string{}
	if w.iscsiChannels == nil {
		w.iscsiChannels = map[types.ManagedObjectReference]int{}
	}
	w.iscsiChannels[h.Self] = 1
	if !s.noBinding {
		for i := 0; i < s.nics; i++ {
			im.Bound["vmhba64"] = append(im.Bound["vmhba64"], fmt.Sprintf("vmk%d", i+1))
		}
		w.iscsiChannels[h.Self] = s.nics
	}
}

// netMask is the dotted-quad IPv4 mask of a /bits prefix.
func netMask(bits int) string {
	m := uint32(0xffffffff) << (32 - bits)
	return fmt.Sprintf("%d.%d.%d.%d", m>>24, m>>16&0xff, m>>8&0xff, m&0xff)
}

func (w *world) addDVS(name string, maxMtu int32, members []*simulator.HostSystem) *simulator.DistributedVirtualSwitch {
	var spec types.DVSCreateSpec
	spec.ConfigSpec = &types.VMwareDVSConfigSpec{DVSConfigSpec: types.DVSConfigSpec{Name: name}, MaxMtu: maxMtu}
	task, err := w.folders.NetworkFolder.CreateDVS(w.ctx, spec)
	must(err)
	info, err := task.WaitForResult(w.ctx, nil)
	must(err)
	ref := info.Result.(types.ManagedObjectReference)
	if len(members) > 0 {
		cs := &types.DVSConfigSpec{}
		for _, h := range members {
			cs.Host = append(cs.Host, types.DistributedVirtualSwitchHostMemberConfigSpec{
				Operation: string(types.ConfigSpecOperationAdd), Host: h.Self,
			})
		}
		t, err := object.NewDistributedVirtualSwitch(w.c, ref).Reconfigure(w.ctx, cs)
		must(err)
		must(t.Wait(w.ctx))
	}
	d := simulator.Map.Get(ref).(*simulator.DistributedVirtualSwitch)
	lock(d, func() {
		if cfg, ok := d.Config.(*types.VMwareDVSConfigInfo); ok {
			cfg.MaxMtu = maxMtu
		}
	})
	w.dvs[name] = d
	return d
}

// ---- datastores and datastore clusters ----

type dsSpec struct {
	name           string
	nfs            bool
	kind           string                // "" (VMFS, or NFS with nfs), "vsan" or "vvol"
	vmfsMajor      int32                 // 5 or 6 (default 6)
	extents        int                   // VMFS: extents, each on its own new SAN LUN (default 1)
	naa            string                // VMFS: the one extent's SAN LUN is this device (default: a new naa.)
	localDisk      string                // VMFS on this local device of its one host instead (vmfs.local)
	unmapPriority  string                // VMFS6 vmfs.unmapPriority ("none", "low"); default unset
	ssd            bool                  // vmfs.ssd
	inaccessibleOn *simulator.HostSystem // a mounting host where it is not accessible
	capacity       int64
	free           int64
	uncommitted    int64
	hosts          []*simulator.HostSystem // mounted on
	lunHosts       []*simulator.HostSystem // hosts that see the backing LUN (default: hosts)
	pod            *simulator.StoragePod
	remoteHost     string
	remotePathBase string // NFS: the export is remotePathBase + name (default "/export/")
}

// pct returns p percent of c, exactly for the sizes used here.
func pct(c int64, p int64) int64 { return c / 100 * p }

func (w *world) addDatastore(s dsSpec) *simulator.Datastore {
	ds := &simulator.Datastore{}
	ds.Name = s.name
	ds.Self.Type = "Datastore"
	simulator.Map.Put(ds) // assigns datastore-N
	sum := sha1.Sum([]byte(s.name))
	uuid := fmt.Sprintf("%x-%x-%x-%x", sum[0:4], sum[4:8], sum[8:10], sum[10:16])
	url := "ds:///vmfs/volumes/" + uuid + "/"
	now := w.now

	lock(ds, func() {
		var info types.BaseDatastoreInfo
		typ := "VMFS"
		base := types.DatastoreInfo{
			Name: s.name, Url: url, FreeSpace: s.free, MaxFileSize: 62 * TiB,
			MaxVirtualDiskCapacity: 62 * TiB, MaxMemoryFileSize: 62 * TiB, Timestamp: &now,
			ContainerId: uuid,
		}
		switch {
		case s.kind == "vsan":
			typ = "vsan"
			info = &types.VsanDatastoreInfo{DatastoreInfo: base, MembershipUuid: uuid}
		case s.kind == "vvol":
			typ = "VVOL"
			// vSphere names a VVol datastore by its storage container: ds:///vmfs/volumes/vvol:<hex16>-<hex16>/
			base.Url = fmt.Sprintf("ds:///vmfs/volumes/vvol:%x-%x/", sum[0:8], sum[8:16])
			info = &types.VvolDatastoreInfo{DatastoreInfo: base, VvolDS: &types.HostVvolVolume{
				HostFileSystemVolume: types.HostFileSystemVolume{Type: "VVOL", Name: s.name, Capacity: s.capacity},
				ScId:                 "vvol:" + uuid,
			}}
		case s.nfs:
			typ = "NFS"
			host := s.remoteHost
			if host == "" {
				host = "nfs01.example.com"
			}
			remotePath := "/export/" + s.name
			if s.remotePathBase != "" {
				remotePath = s.remotePathBase + s.name
			}
			info = &types.NasDatastoreInfo{
				DatastoreInfo: base,
				Nas: &types.HostNasVolume{
					HostFileSystemVolume: types.HostFileSystemVolume{Type: "NFS", Name: s.name, Capacity: s.capacity},
					RemoteHost:           host,
					RemotePath:           remotePath,
					SecurityType:         "AUTH_SYS",
				},
			}
		default:
			major := s.vmfsMajor
			if major == 0 {
				major = 6
			}
			var extents []types.HostScsiDiskPartition
			if s.localDisk != "" {
				extents = append(extents, types.HostScsiDiskPartition{DiskName: s.localDisk, Partition: 3})
			}
			for i := 0; s.localDisk == "" && (i == 0 || i < s.extents); i++ {
				name := s.naa
				if name == "" || i > 0 {
					name = w.newNaa()
				}
				extents = append(extents, types.HostScsiDiskPartition{DiskName: name, Partition: 1})
			}
			info = &types.VmfsDatastoreInfo{
				DatastoreInfo:          base,
				MaxPhysicalRDMFileSize: 64 * TiB,
				MaxVirtualRDMFileSize:  62 * TiB,
				Vmfs: &types.HostVmfsVolume{
					HostFileSystemVolume: types.HostFileSystemVolume{Type: "VMFS", Name: s.name, Capacity: s.capacity},
					BlockSizeMb:          1,
					MaxBlocks:            63963136,
					MajorVersion:         major,
					Version:              simkit.VmfsVersion(int(major)),
					Uuid:                 uuid,
					Extent:               extents,
					Local:                types.NewBool(s.localDisk != ""),
					Ssd:                  types.NewBool(s.ssd),
					UnmapPriority:        s.unmapPriority,
				},
			}
			lunHosts := s.lunHosts
			if lunHosts == nil {
				lunHosts = s.hosts
			}
			for _, h := range lunHosts {
				for _, e := range extents {
					if s.localDisk == "" {
						w.addLun(h, sanLun(e.DiskName, s.capacity/GiB/int64(len(extents))+1))
					}
				}
			}
		}
		ds.Info = info
		ds.Summary = types.DatastoreSummary{
			Datastore: &ds.Self, Name: s.name, Url: url, Capacity: s.capacity, FreeSpace: s.free,
			Uncommitted: s.uncommitted, Accessible: true, MultipleHostAccess: types.NewBool(len(s.hosts) > 1),
			Type: typ, MaintenanceMode: string(types.DatastoreSummaryMaintenanceModeStateNormal),
		}
		ds.Capability = types.DatastoreCapability{
			DirectoryHierarchySupported: true, RawDiskMappingsSupported: !s.nfs,
			PerFileThinProvisioningSupported: true, StorageIORMSupported: types.NewBool(true),
			NativeSnapshotSupported: types.NewBool(false), TopLevelDirectoryCreateSupported: types.NewBool(true),
			SeSparseSupported: types.NewBool(true),
		}
		browser := &simulator.HostDatastoreBrowser{}
		browser.Datastore = []types.ManagedObjectReference{ds.Self}
		ds.Browser = simulator.Map.Put(browser).Reference()
		for _, h := range s.hosts {
			ds.Host = append(ds.Host, types.DatastoreHostMount{
				Key: h.Self,
				MountInfo: types.HostMountInfo{Path: "/vmfs/volumes/" + uuid, AccessMode: "readWrite",
					Mounted: types.NewBool(true), Accessible: types.NewBool(h != s.inaccessibleOn)},
			})
		}
	})
	for _, h := range s.hosts {
		lock(h, func() { h.Datastore = append(h.Datastore, ds.Self) })
		if p, ok := simulator.Map.Get(*h.Parent).(*simulator.ClusterComputeResource); ok {
			lock(p, func() {
				for _, r := range p.Datastore {
					if r == ds.Self {
						return
					}
				}
				p.Datastore = append(p.Datastore, ds.Self)
			})
		}
	}
	lock(w.dc, func() { w.dc.Datastore = append(w.dc.Datastore, ds.Self) })
	if s.pod != nil {
		pod := s.pod
		lock(pod, func() {
			pod.ChildEntity = append(pod.ChildEntity, ds.Self)
			pod.Summary.Capacity += s.capacity
			pod.Summary.FreeSpace += s.free
		})
		ds.Parent = &pod.Self
	} else {
		f := simulator.Map.Get(w.folders.DatastoreFolder.Reference()).(*simulator.Folder)
		lock(f, func() { f.ChildEntity = append(f.ChildEntity, ds.Self) })
		ds.Parent = &f.Self
	}
	w.datastores[s.name] = ds
	return ds
}

func (w *world) addPod(name string) *simulator.StoragePod {
	p, err := w.folders.DatastoreFolder.CreateStoragePod(w.ctx, name)
	must(err)
	pod := simulator.Map.Get(p.Reference()).(*simulator.StoragePod)
	lock(pod, func() { pod.Summary.Name = name })
	w.pods[name] = pod
	return pod
}

// ---- virtual machines ----

type diskSpec struct {
	ds     *simulator.Datastore
	gib    int64
	format string // thin, lazyzeroedthick, eagerzeroedthick, rdm
	ctrl   int    // index into vmSpec.controllers
	// delta > 0 makes the disk a delta file, "<vm>-00000N.vmdk" (or
	// "<vm>_<i>-00000N.vmdk"), whose backing.parent is parent, or the VM's
	// own base file when parent is "" (noParent: none, as a name only).
	delta    int
	parent   string
	noParent bool
	sharing  types.VirtualDiskSharing // backing.sharing; "" leaves it unset
}

type ctrlSpec struct {
	kind      string // pvscsi, lsilogic, lsilogicsas, nvme
	sharedBus types.VirtualSCSISharing
}

type snapSpec struct {
	name        string
	description string // default "planted by vcsim-vslint"
	age         time.Duration
	children    []snapSpec
}

type vmSpec struct {
	name        string
	host        *simulator.HostSystem
	template    bool
	poweredOff  bool
	hwVersion   string // default vmx-13
	guestId     string // config.guestId, default other3xLinux64Guest (guestNames lists those known)
	ftState     types.VirtualMachineFaultToleranceState
	controllers []ctrlSpec // default one PVSCSI, noSharing
	disks       []diskSpec
	snapshots   []snapSpec
	iso         *simulator.Datastore // a CD-ROM with an ISO image from this datastore
	// runtime.consolidationNeeded (always sent, as vCenter does), and
	// config.managedBy (a replication product's replica) when set.
	consolidationNeeded bool
	managedBy           *types.ManagedByInfo
}

// guestNames: the guest ids a scenario may give a VM, with the full name vCenter shows for each.
var guestNames = map[string]string{
	"other3xLinux64Guest":    "Other 3.x or later Linux (64-bit)",
	"rhel8_64Guest":          "Red Hat Enterprise Linux 8 (64-bit)",
	"windows2019srv_64Guest": "Microsoft Windows Server 2019 (64-bit)",
}

func defaultDisk(ds *simulator.Datastore) []diskSpec {
	return []diskSpec{{ds: ds, gib: 40, format: "lazyzeroedthick"}}
}

func newController(i int, c ctrlSpec) types.BaseVirtualDevice {
	share := c.sharedBus
	if share == "" {
		share = types.VirtualSCSISharingNoSharing
	}
	unit := int32(3 + i)
	base := types.VirtualSCSIController{
		VirtualController: types.VirtualController{
			VirtualDevice: types.VirtualDevice{
				Key:           int32(1000 + i),
				DeviceInfo:    &types.Description{Label: fmt.Sprintf("SCSI controller %d", i)},
				ControllerKey: 100,
				UnitNumber:    &unit,
			},
			BusNumber: int32(i),
		},
		HotAddRemove:       types.NewBool(true),
		SharedBus:          share,
		ScsiCtlrUnitNumber: 7,
	}
	switch c.kind {
	case "nvme":
		// The virtual NVMe controller: not SCSI, no shared bus.
		nvme := &types.VirtualNVMEController{VirtualController: base.VirtualController}
		nvme.DeviceInfo = &types.Description{Label: fmt.Sprintf("NVME controller %d", i), Summary: "NVME controller"}
		nvme.Key = int32(31000 + i)
		return nvme
	case "lsilogic":
		base.DeviceInfo.GetDescription().Summary = "LSI Logic"
		return &types.VirtualLsiLogicController{VirtualSCSIController: base}
	case "lsilogicsas":
		base.DeviceInfo.GetDescription().Summary = "LSI Logic SAS"
		return &types.VirtualLsiLogicSASController{VirtualSCSIController: base}
	default:
		base.DeviceInfo.GetDescription().Summary = "VMware paravirtual SCSI"
		return &types.ParaVirtualSCSIController{VirtualSCSIController: base}
	}
}

func (w *world) addVM(s vmSpec) *simulator.VirtualMachine {
	vm := &simulator.VirtualMachine{}
	vm.Name = s.name
	vm.Self.Type = "VirtualMachine"
	folder := simulator.Map.Get(w.folders.VmFolder.Reference()).(*simulator.Folder)
	simulator.Map.PutEntity(folder, vm)
	lock(folder, func() { folder.ChildEntity = append(folder.ChildEntity, vm.Self) })
	pool, dsRefs := w.fillVM(vm, s)
	if !s.template {
		lock(pool, func() { pool.Vm = append(pool.Vm, vm.Self) })
	}
	lock(s.host, func() { s.host.Vm = append(s.host.Vm, vm.Self) })
	for _, r := range dsRefs {
		ds := simulator.Map.Get(r).(*simulator.Datastore)
		lock(ds, func() { ds.Vm = append(ds.Vm, vm.Self) })
	}
	w.vms[s.name] = vm
	return vm
}

// fillVM plants everything of vm (whose Self is set) that s describes, and
// returns the resource pool and the datastores that must list it: addVM
// links them before the server starts, addVMLive (control_vm.go) through
// simulator.Map.Update while it runs.
func (w *world) fillVM(vm *simulator.VirtualMachine, s vmSpec) (*simulator.ResourcePool, []types.ManagedObjectReference) {
	if s.hwVersion == "" {
		s.hwVersion = "vmx-13"
	}
	if s.guestId == "" {
		s.guestId = "other3xLinux64Guest"
	}
	guestName, ok := guestNames[s.guestId]
	if !ok {
		panic("vmSpec " + s.name + ": unknown guestId " + s.guestId)
	}
	if s.ftState == "" {
		s.ftState = types.VirtualMachineFaultToleranceStateNotConfigured
	}
	if len(s.controllers) == 0 {
		s.controllers = []ctrlSpec{{kind: "pvscsi"}}
	}
	homeDs := s.disks[0].ds

	sum := sha1.Sum([]byte(s.name))
	uuid := fmt.Sprintf("%x-%x-%x-%x-%x", sum[0:4], sum[4:6], sum[6:8], sum[8:10], sum[10:16])
	iuuid := fmt.Sprintf("50%x-%x-%x-%x-%x", sum[1:4], sum[5:7], sum[7:9], sum[11:13], sum[14:20])
	vmx := fmt.Sprintf("[%s] %s/%s.vmx", homeDs.Name, s.name, s.name)

	pci := &types.VirtualPCIController{VirtualController: types.VirtualController{
		VirtualDevice: types.VirtualDevice{Key: 100, DeviceInfo: &types.Description{Label: "PCI controller 0", Summary: "PCI controller 0"}},
	}}
	devices := []types.BaseVirtualDevice{pci}
	var ctrls []*types.VirtualController
	for i, c := range s.controllers {
		d := newController(i, c)
		devices = append(devices, d)
		pci.Device = append(pci.Device, d.GetVirtualDevice().Key)
		ctrls = append(ctrls, d.(types.BaseVirtualController).GetVirtualController())
	}
	var committed, uncommitted int64
	dsSeen := map[types.ManagedObjectReference]bool{homeDs.Self: true}
	dsRefs := []types.ManagedObjectReference{homeDs.Self}
	units := make([]int32, len(ctrls))
	for i, d := range s.disks {
		ctrl := ctrls[d.ctrl]
		unit := units[d.ctrl]
		if unit == 7 {
			unit++
		}
		units[d.ctrl] = unit + 1
		base := s.name
		if i > 0 {
			base = fmt.Sprintf("%s_%d", s.name, i)
		}
		file := fmt.Sprintf("[%s] %s/%s.vmdk", d.ds.Name, s.name, base)
		var parent *types.VirtualDiskFlatVer2BackingInfo
		if d.delta > 0 {
			parentFile := d.parent
			if parentFile == "" {
				parentFile = file
			}
			file = fmt.Sprintf("[%s] %s/%s-%06d.vmdk", d.ds.Name, s.name, base, d.delta)
			if !d.noParent {
				parent = &types.VirtualDiskFlatVer2BackingInfo{
					VirtualDeviceFileBackingInfo: types.VirtualDeviceFileBackingInfo{FileName: parentFile, Datastore: &d.ds.Self},
					DiskMode:                     "persistent",
					ThinProvisioned:              types.NewBool(d.format == "thin"),
				}
			}
		}
		fb := types.VirtualDeviceFileBackingInfo{FileName: file, Datastore: &d.ds.Self}
		var backing types.BaseVirtualDeviceBackingInfo
		switch d.format {
		case "rdm":
			fb.FileName = fmt.Sprintf("[%s] %s/%s_rdm%d.vmdk", d.ds.Name, s.name, s.name, i)
			backing = &types.VirtualDiskRawDiskMappingVer1BackingInfo{
				VirtualDeviceFileBackingInfo: fb,
				LunUuid:                      fmt.Sprintf("0200%02x0000%x", i, sum[:12]),
				DeviceName:                   "vml.0200" + fmt.Sprintf("%x", sum[:12]),
				CompatibilityMode:            "physicalMode",
				DiskMode:                     "independent_persistent",
				Uuid:                         uuid,
			}
		default:
			fb2 := &types.VirtualDiskFlatVer2BackingInfo{
				VirtualDeviceFileBackingInfo: fb,
				DiskMode:                     "persistent",
				Split:                        types.NewBool(false),
				WriteThrough:                 types.NewBool(false),
				ThinProvisioned:              types.NewBool(d.format == "thin"),
				EagerlyScrub:                 types.NewBool(d.format == "eagerzeroedthick"),
				Uuid:                         fmt.Sprintf("6000C29%x", sum[i%8:i%8+12]),
				Parent:                       parent,
				Sharing:                      string(d.sharing),
			}
			backing = fb2
		}
		bytes := d.gib * GiB
		if d.format == "thin" {
			committed += bytes / 4
			uncommitted += bytes - bytes/4
		} else if d.format != "rdm" {
			committed += bytes
		}
		u := unit
		disk := &types.VirtualDisk{
			VirtualDevice: types.VirtualDevice{
				Key:           int32(2000 + 16*d.ctrl + int(unit)),
				DeviceInfo:    &types.Description{Label: fmt.Sprintf("Hard disk %d", i+1), Summary: fmt.Sprintf("%d KB", bytes/1024)},
				Backing:       backing,
				ControllerKey: ctrl.Key,
				UnitNumber:    &u,
			},
			CapacityInKB:    bytes / 1024,
			CapacityInBytes: bytes,
		}
		ctrl.Device = append(ctrl.Device, disk.Key)
		devices = append(devices, disk)
		if !dsSeen[d.ds.Self] {
			dsSeen[d.ds.Self] = true
			dsRefs = append(dsRefs, d.ds.Self)
		}
	}

	if s.iso != nil {
		// An IDE CD-ROM drive with an ISO image: VirtualMachine.datastore lists its datastore.
		unit := int32(0)
		ide := &types.VirtualIDEController{VirtualController: types.VirtualController{
			VirtualDevice: types.VirtualDevice{Key: 200, DeviceInfo: &types.Description{Label: "IDE 0", Summary: "IDE 0"}},
			Device:        []int32{3000},
		}}
		iso := fmt.Sprintf("[%s] iso/linux.iso", s.iso.Name)
		cd := &types.VirtualCdrom{VirtualDevice: types.VirtualDevice{
			Key:        3000,
			DeviceInfo: &types.Description{Label: "CD/DVD drive 1", Summary: "ISO " + iso},
			Backing: &types.VirtualCdromIsoBackingInfo{VirtualDeviceFileBackingInfo: types.VirtualDeviceFileBackingInfo{
				FileName: iso, Datastore: &s.iso.Self}},
			Connectable:   &types.VirtualDeviceConnectInfo{StartConnected: true, Connected: true, Status: "ok"},
			ControllerKey: 200,
			UnitNumber:    &unit,
		}}
		devices = append(devices, ide, cd)
		if !dsSeen[s.iso.Self] {
			dsSeen[s.iso.Self] = true
			dsRefs = append(dsRefs, s.iso.Self)
		}
	}

	power := types.VirtualMachinePowerStatePoweredOn
	if s.poweredOff || s.template {
		power = types.VirtualMachinePowerStatePoweredOff
	}
	hostRef := s.host.Self
	cluster := simulator.Map.Get(*s.host.Parent).(*simulator.ClusterComputeResource)
	pool := simulator.Map.Get(*cluster.ResourcePool).(*simulator.ResourcePool)

	lock(vm, func() {
		vm.Config = &types.VirtualMachineConfigInfo{
			ChangeVersion: w.now.Format(time.RFC3339Nano),
			Modified:      w.now,
			Name:          s.name,
			GuestFullName: guestName,
			Version:       s.hwVersion,
			Uuid:          uuid,
			InstanceUuid:  iuuid,
			Template:      s.template,
			GuestId:       s.guestId,
			Files: types.VirtualMachineFileInfo{
				VmPathName:        vmx,
				SnapshotDirectory: fmt.Sprintf("[%s] %s/", homeDs.Name, s.name),
				SuspendDirectory:  fmt.Sprintf("[%s] %s/", homeDs.Name, s.name),
				LogDirectory:      fmt.Sprintf("[%s] %s/", homeDs.Name, s.name),
			},
			Hardware:  types.VirtualHardware{NumCPU: 2, NumCoresPerSocket: 1, MemoryMB: 4096, Device: devices},
			ManagedBy: s.managedBy,
		}
		vm.Runtime = types.VirtualMachineRuntimeInfo{
			Host:                &hostRef,
			ConnectionState:     types.VirtualMachineConnectionStateConnected,
			PowerState:          power,
			FaultToleranceState: s.ftState,
			ConsolidationNeeded: types.NewBool(s.consolidationNeeded),
			MaxCpuUsage:         4600,
			MaxMemoryUsage:      4096,
		}
		if power == types.VirtualMachinePowerStatePoweredOn {
			bt := w.now.Add(-72 * time.Hour)
			vm.Runtime.BootTime = &bt
		}
		vm.Guest = &types.GuestInfo{ToolsStatus: types.VirtualMachineToolsStatusToolsOk, GuestState: "running"}
		if power != types.VirtualMachinePowerStatePoweredOn {
			vm.Guest = &types.GuestInfo{ToolsStatus: types.VirtualMachineToolsStatusToolsNotRunning, GuestState: "notRunning"}
		}
		vm.Summary = types.VirtualMachineSummary{
			Vm:      &vm.Self,
			Runtime: vm.Runtime,
			Guest:   &types.VirtualMachineGuestSummary{GuestId: s.guestId, ToolsStatus: vm.Guest.ToolsStatus},
			Config: types.VirtualMachineConfigSummary{
				Name: s.name, Template: s.template, VmPathName: vmx, MemorySizeMB: 4096, NumCpu: 2,
				NumVirtualDisks: int32(len(s.disks)), Uuid: uuid, InstanceUuid: iuuid,
				GuestId: s.guestId, GuestFullName: guestName,
				HwVersion: s.hwVersion,
			},
			Storage: &types.VirtualMachineStorageSummary{Committed: committed, Uncommitted: uncommitted, Unshared: committed, Timestamp: w.now},
			QuickStats: types.VirtualMachineQuickStats{
				GuestHeartbeatStatus: types.ManagedEntityStatusGreen,
			},
			OverallStatus: types.ManagedEntityStatusGreen,
		}
		vm.Datastore = dsRefs
		if !s.template {
			vm.ResourcePool = &pool.Self
		}
		vm.Storage = &types.VirtualMachineStorageInfo{Timestamp: w.now}
		vm.Layout = &types.VirtualMachineFileLayout{}
		vm.LayoutEx = &types.VirtualMachineFileLayoutEx{Timestamp: w.now}
		vm.Summary.Config.Product = nil
		if len(s.snapshots) > 0 {
			w.plantSnapshots(vm, s.snapshots)
		}
	})
	return pool, dsRefs
}

func (w *world) plantSnapshots(vm *simulator.VirtualMachine, roots []snapSpec) {
	var current *types.ManagedObjectReference
	id := int32(0)
	var build func(s snapSpec) types.VirtualMachineSnapshotTree
	build = func(s snapSpec) types.VirtualMachineSnapshotTree {
		id++
		snap := &simulator.VirtualMachineSnapshot{}
		snap.Self.Type = "VirtualMachineSnapshot"
		snap.Vm = vm.Self
		ref := simulator.Map.Put(snap).Reference()
		current = &ref
		desc := s.description
		if desc == "" {
			desc = "planted by vcsim-vslint"
		}
		t := types.VirtualMachineSnapshotTree{
			Snapshot: ref, Vm: vm.Self, Name: s.name, Description: desc,
			Id: id, CreateTime: w.now.Add(-s.age), State: vm.Runtime.PowerState,
			Quiesced: false, ReplaySupported: types.NewBool(false),
		}
		for _, c := range s.children {
			t.ChildSnapshotList = append(t.ChildSnapshotList, build(c))
		}
		return t
	}
	info := &types.VirtualMachineSnapshotInfo{}
	for _, r := range roots {
		t := build(r)
		info.RootSnapshotList = append(info.RootSnapshotList, t)
		vm.RootSnapshot = append(vm.RootSnapshot, t.Snapshot)
	}
	info.CurrentSnapshot = current
	vm.Snapshot = info
}

// chain returns a linear chain of n snapshots, all of the given age.
func chain(prefix string, n int, age time.Duration) []snapSpec {
	if n == 0 {
		return nil
	}
	return []snapSpec{{name: fmt.Sprintf("%s-%d", prefix, 1), age: age + time.Duration(n)*time.Minute,
		children: rename(chain(prefix, n-1, age), prefix, 2)}}
}

func rename(s []snapSpec, prefix string, start int) []snapSpec {
	for i := range s {
		s[i].name = fmt.Sprintf("%s-%d", prefix, start)
		s[i].children = rename(s[i].children, prefix, start+1)
	}
	return s
}

func hostsOf(w *world, names ...string) []*simulator.HostSystem {
	var out []*simulator.HostSystem
	for _, n := range names {
		h := w.hosts[n]
		if h == nil {
			panic("unknown host " + n)
		}
		out = append(out, h)
	}
	return out
}

func boolp(b bool) *bool { return &b }

// strp is s as a JSON string, or nil (null) when empty: what vCenter leaves out.
func strp(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

var _ = strings.TrimSpace
