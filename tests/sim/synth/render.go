package main

// The XML of every managed object, property by property, written straight
// to the answer. Shapes follow what vCenter 7 sends (and what vslint's unit
// test captures hold), with the bulk a real object carries: a VM's full
// device list, a LUN's descriptors, durable name and inquiry bytes, every
// path with its Fibre Channel transport.

import (
	"strconv"

	"simkit"
)

// Object types and their morefs.
const (
	tVM      = "VirtualMachine"
	tHost    = "HostSystem"
	tDS      = "Datastore"
	tPod     = "StoragePod"
	tDVS     = "VmwareDistributedVirtualSwitch"
	tCluster = "ClusterComputeResource"
	tDC      = "Datacenter"
	tFolder  = "Folder"
	tAlarm   = "Alarm"
	tPerf    = "PerformanceManager"
)

var morefPrefix = map[string]string{
	tVM: "vm-", tHost: "host-", tDS: "datastore-", tPod: "group-p", tDVS: "dvs-",
	tCluster: "domain-c", tAlarm: "alarm-",
}

// The fixed folders: the root, and the datacenter's four.
var folders = []struct{ moref, name, parent, parentType, childTypes string }{
	{"group-d1", "Datacenters", "", "", "Folder,Datacenter"},
	{"group-v3", "vm", "datacenter-2", tDC, "Folder,VirtualMachine,VirtualApp"},
	{"group-h4", "host", "datacenter-2", tDC, "Folder,ComputeResource"},
	{"group-s5", "datastore", "datacenter-2", tDC, "Folder,Datastore,StoragePod"},
	{"group-n6", "network", "datacenter-2", tDC, "Folder,Network,DistributedVirtualSwitch"},
}

const rootFolder = "group-d1"

func moref(typ string, i int) string {
	switch typ {
	case tDC:
		return "datacenter-2"
	case tFolder:
		return folders[i].moref
	case tPerf:
		return "PerfMgr"
	}
	return morefPrefix[typ] + strconv.Itoa(i+1)
}

// ---- property framing -------------------------------------------------------------------------

// propName opens a property: a propSet of an ObjectContent, or (o.change) a
// changeSet of an ObjectUpdate (filters.go), whose op is always assign.
func (o *out) propName(name string) {
	if o.change {
		o.s("<changeSet><name>")
		o.s(name)
		o.s("</name><op>assign</op>")
		return
	}
	o.s("<propSet><name>")
	o.s(name)
	o.s("</name>")
}

func (o *out) prop(name, xsiType string) {
	o.propName(name)
	o.s("<val xsi:type=\"")
	o.s(xsiType)
	o.s("\">")
}

func (o *out) propRef(name, typ, ref string) {
	o.propName(name)
	o.s("<val xsi:type=\"ManagedObjectReference\" type=\"")
	o.s(typ)
	o.s("\">")
	o.s(ref)
	o.endProp()
}

func (o *out) endProp() {
	if o.change {
		o.s("</val></changeSet>")
		return
	}
	o.s("</val></propSet>")
}

// synthGuests: the guest ids VMs take in turn (config.guestId), as a mixed estate has them.
var synthGuests = []string{"rhel8_64Guest", "windows2019srv_64Guest", "ubuntu64Guest"}

func (o *out) propStr(name, xsiType, v string) {
	o.prop(name, xsiType)
	o.s(v)
	o.endProp()
}

func (o *out) ref(elem, typ, ref string) {
	o.s("<")
	o.s(elem)
	o.s(" type=\"")
	o.s(typ)
	o.s("\">")
	o.s(ref)
	o.s("</")
	o.s(elem)
	o.s(">")
}

// name helpers, written without allocating
func (o *out) vmName(i int)      { o.s("vm-"); o.pad(i+1, 6) }
func (o *out) hostName(h int)    { o.s("esx-"); o.pad(h+1, 5); o.s(".synth.local") }
func (o *out) dsName(g int)      { o.s("ds-"); o.pad(g+1, 5) }
func (o *out) clusterName(c int) { o.s("cluster-"); o.pad(c+1, 3) }
func (o *out) podName(c int)     { o.s("pod-"); o.pad(c+1, 3) }
func (o *out) dvsName(d int)     { o.s("dvs-"); o.pad(d+1, 2) }

// propNamed writes the xsd:string property p, object i's name as name (a helper above) writes it.
func (o *out) propNamed(p string, name func(*out, int), i int) {
	o.prop(p, "xsd:string")
	name(o, i)
	o.endProp()
}

// propNames lists the properties each type answers; anything else is an
// InvalidProperty fault for the whole call, as on vCenter.
var propNames = map[string][]string{
	tVM: {"name", "config.hardware.device", "config.version", "config.template", "runtime.powerState",
		"runtime.host", "summary.runtime.faultToleranceState", "snapshot", "datastore",
		"summary.config.vmPathName", "runtime.consolidationNeeded", "config.managedBy", "config.guestId"},
	tHost: {"name", "parent", "runtime.connectionState", "config.product.version", "config.network.vnic",
		"config.network.vswitch",
		"config.network.portgroup", "config.storageDevice.hostBusAdapter", "config.storageDevice.scsiLun",
		"config.storageDevice.multipathInfo", "config.storageDevice.plugStoreTopology.device",
		"config.storageDevice.plugStoreTopology.plugin", "configManager.advancedOption",
		"configManager.iscsiManager"},
	// declaredAlarmState (vslint reads the alarms disabled on an entity) is
	// answered empty: no alarm is disabled on one entity here.
	tDS:      {"name", "summary", "info", "vm", "parent", "host", "declaredAlarmState"},
	tPod:     {"name", "summary", "parent", "childEntity", "childType", "declaredAlarmState"},
	tDVS:     {"name", "uuid", "config"},
	tCluster: {"name", "parent"},
	tDC:      {"name", "parent", "declaredAlarmState"},
	tFolder:  {"name", "parent", "childType", "declaredAlarmState"},
	tAlarm:   {"info", "info.name", "info.systemName", "info.enabled", "info.entity", "info.expression"},
	tPerf:    {"perfCounter"},
}

func knownProp(typ, path string) bool {
	for _, p := range propNames[typ] {
		if p == path {
			return true
		}
	}
	return false
}

// writeObject writes one ObjectContent (elem is "objects" or "returnval").
func (s *gen) writeObject(o *out, elem, typ string, i int, paths []string) {
	o.s("<")
	o.s(elem)
	o.s("><obj type=\"")
	o.s(typ)
	o.s("\">")
	o.s(moref(typ, i))
	o.s("</obj>")
	for _, p := range paths {
		s.writeProp(o, typ, i, p)
	}
	o.s("</")
	o.s(elem)
	o.s(">")
}

// writeProp writes property p of object i of typ (nothing for a property
// the object does not have a value of).
func (s *gen) writeProp(o *out, typ string, i int, p string) {
	switch typ {
	case tVM:
		s.vmProp(o, i, p)
	case tHost:
		s.hostProp(o, i, p)
	case tDS:
		s.dsProp(o, i, p)
	case tPod:
		s.podProp(o, i, p)
	case tDVS:
		s.dvsProp(o, i, p)
	case tCluster:
		switch p {
		case "name":
			o.propNamed(p, (*out).clusterName, i)
		case "parent":
			o.propRef(p, tFolder, "group-h4")
		}
	case tDC:
		switch p {
		case "name":
			o.propStr(p, "xsd:string", "DC-synth")
		case "parent":
			o.propRef(p, tFolder, rootFolder)
		}
	case tFolder:
		f := folders[i]
		switch p {
		case "name":
			o.propStr(p, "xsd:string", f.name)
		case "parent":
			if f.parent != "" {
				o.propRef(p, f.parentType, f.parent)
			}
		case "childType":
			o.prop(p, "ArrayOfString")
			start := 0
			for k := 0; k <= len(f.childTypes); k++ {
				if k == len(f.childTypes) || f.childTypes[k] == ',' {
					o.s("<string>")
					o.s(f.childTypes[start:k])
					o.s("</string>")
					start = k + 1
				}
			}
			o.endProp()
		}
	case tAlarm:
		s.alarmProp(o, i, p)
	case tPerf:
		perfCounters(o)
	}
}

// ---- virtual machines ---------------------------------------------------------------------------

func (s *gen) vmProp(o *out, i int, p string) {
	e := s.e
	f := e.vm(i)
	g := e.vmDS(i)
	switch p {
	case "name":
		o.propNamed(p, (*out).vmName, i)
	case "config.hardware.device":
		o.prop(p, "ArrayOfVirtualDevice")
		s.vmDevices(o, i, g, &f)
		o.endProp()
	case "config.version":
		o.prop(p, "xsd:string")
		o.s("vmx-")
		o.i(f.hw)
		o.endProp()
	case "config.guestId":
		o.propStr(p, "xsd:string", synthGuests[i%len(synthGuests)])
	case "config.template":
		o.prop(p, "xsd:boolean")
		o.b2(f.template)
		o.endProp()
	case "runtime.powerState":
		if f.poweredOn {
			o.propStr(p, "VirtualMachinePowerState", "poweredOn")
		} else {
			o.propStr(p, "VirtualMachinePowerState", "poweredOff")
		}
	case "runtime.host":
		o.propRef(p, tHost, moref(tHost, e.vmHost(i)))
	case "summary.runtime.faultToleranceState":
		o.propStr(p, "VirtualMachineFaultToleranceState", "notConfigured")
	case "snapshot":
		if f.snapshots > 0 {
			o.prop(p, "VirtualMachineSnapshotInfo")
			s.vmSnapshots(o, i, &f)
			o.endProp()
		}
	case "datastore":
		o.prop(p, "ArrayOfManagedObjectReference")
		o.ref("ManagedObjectReference", tDS, moref(tDS, g))
		o.endProp()
	case "runtime.consolidationNeeded":
		o.prop(p, "xsd:boolean")
		o.s("false")
		o.endProp()
	case "config.managedBy":
		// Unset on every synthetic VM: vCenter then leaves the property out.
	case "summary.config.vmPathName":
		o.prop(p, "xsd:string")
		o.s("[")
		o.dsName(g)
		o.s("] ")
		o.vmName(i)
		o.s("/")
		o.vmName(i)
		o.s(".vmx")
		o.endProp()
	}
}

func (o *out) devInfo(label, summary string) {
	o.s("<deviceInfo xsi:type=\"Description\"><label>")
	o.s(label)
	o.s("</label><summary>")
	o.s(summary)
	o.s("</summary></deviceInfo>")
}

const vmFixedDevices = `<VirtualDevice xsi:type="VirtualIDEController"><key>200</key><deviceInfo xsi:type="Description"><label>IDE 0</label><summary>IDE 0</summary></deviceInfo><busNumber>0</busNumber></VirtualDevice>` +
	`<VirtualDevice xsi:type="VirtualIDEController"><key>201</key><deviceInfo xsi:type="Description"><label>IDE 1</label><summary>IDE 1</summary></deviceInfo><busNumber>1</busNumber><device>3002</device></VirtualDevice>` +
	`<VirtualDevice xsi:type="VirtualPS2Controller"><key>300</key><deviceInfo xsi:type="Description"><label>PS2 controller 0</label><summary>PS2 controller 0</summary></deviceInfo><busNumber>0</busNumber><device>600</device><device>700</device></VirtualDevice>` +
	`<VirtualDevice xsi:type="VirtualPCIController"><key>100</key><deviceInfo xsi:type="Description"><label>PCI controller 0</label><summary>PCI controller 0</summary></deviceInfo><busNumber>0</busNumber><device>500</device><device>12000</device><device>1000</device><device>4000</device></VirtualDevice>` +
	`<VirtualDevice xsi:type="VirtualSIOController"><key>400</key><deviceInfo xsi:type="Description"><label>SIO controller 0</label><summary>SIO controller 0</summary></deviceInfo><busNumber>0</busNumber></VirtualDevice>` +
	`<VirtualDevice xsi:type="VirtualKeyboard"><key>600</key><deviceInfo xsi:type="Description"><label>Keyboard</label><summary>Keyboard</summary></deviceInfo><controllerKey>300</controllerKey><unitNumber>0</unitNumber></VirtualDevice>` +
	`<VirtualDevice xsi:type="VirtualPointingDevice"><key>700</key><deviceInfo xsi:type="Description"><label>Pointing device</label><summary>Pointing device; Device</summary></deviceInfo><backing xsi:type="VirtualPointingDeviceDeviceBackingInfo"><deviceName></deviceName><useAutoDetect>false</useAutoDetect><hostPointingDevice>autodetect</hostPointingDevice></backing><controllerKey>300</controllerKey><unitNumber>1</unitNumber></VirtualDevice>` +
	`<VirtualDevice xsi:type="VirtualMachineVideoCard"><key>500</key><deviceInfo xsi:type="Description"><label>Video card </label><summary>Video card</summary></deviceInfo><controllerKey>100</controllerKey><unitNumber>0</unitNumber><videoRamSizeInKB>4096</videoRamSizeInKB><numDisplays>1</numDisplays><useAutoDetect>false</useAutoDetect><enable3DSupport>false</enable3DSupport><use3dRenderer>automatic</use3dRenderer><graphicsMemorySizeInKB>262144</graphicsMemorySizeInKB></VirtualDevice>` +
	`<VirtualDevice xsi:type="VirtualMachineVMCIDevice"><key>12000</key><deviceInfo xsi:type="Description"><label>VMCI device</label><summary>Device on the virtual machine PCI bus that provides support for the virtual machine communication interface</summary></deviceInfo><controllerKey>100</controllerKey><unitNumber>17</unitNumber><id>-1</id><allowUnrestrictedCommunication>false</allowUnrestrictedCommunication><filterEnable>true</filterEnable></VirtualDevice>` +
	`<VirtualDevice xsi:type="VirtualCdrom"><key>3002</key><deviceInfo xsi:type="Description"><label>CD/DVD drive 1</label><summary>Remote device</summary></deviceInfo><backing xsi:type="VirtualCdromRemotePassthroughBackingInfo"><deviceName></deviceName><useAutoDetect>false</useAutoDetect><exclusive>false</exclusive></backing><connectable><migrateConnect>unset</migrateConnect><startConnected>false</startConnected><allowGuestControl>true</allowGuestControl><connected>false</connected><status>untried</status></connectable><controllerKey>201</controllerKey><unitNumber>0</unitNumber></VirtualDevice>`

func (s *gen) vmDevices(o *out, i, g int, f *vmFacts) {
	e := s.e
	o.s(vmFixedDevices)
	// The SCSI controller and its disks.
	if f.lsi {
		o.s(`<VirtualDevice xsi:type="VirtualLsiLogicSASController"><key>1000</key>`)
		o.devInfo("SCSI controller 0", "LSI Logic SAS")
	} else {
		o.s(`<VirtualDevice xsi:type="ParaVirtualSCSIController"><key>1000</key>`)
		o.devInfo("SCSI controller 0", "VMware paravirtual SCSI")
	}
	o.s(`<slotInfo xsi:type="VirtualDevicePciBusSlotInfo"><pciSlotNumber>160</pciSlotNumber></slotInfo><controllerKey>100</controllerKey><unitNumber>3</unitNumber><busNumber>0</busNumber>`)
	for d := 0; d < f.disks; d++ {
		o.s("<device>")
		o.i(2000 + d)
		o.s("</device>")
	}
	o.s(`<hotAddRemove>true</hotAddRemove><sharedBus>noSharing</sharedBus><scsiCtlrUnitNumber>7</scsiCtlrUnitNumber></VirtualDevice>`)
	for d := 0; d < f.disks; d++ {
		kb := f.gib[d] << 20
		o.s(`<VirtualDevice xsi:type="VirtualDisk"><key>`)
		o.i(2000 + d)
		o.s(`</key><deviceInfo xsi:type="Description"><label>Hard disk `)
		o.i(d + 1)
		o.s(`</label><summary>`)
		o.i(kb)
		o.s(` KB</summary></deviceInfo><backing xsi:type="VirtualDiskFlatVer2BackingInfo"><fileName>[`)
		o.dsName(g)
		o.s("] ")
		o.vmName(i)
		o.s("/")
		o.vmName(i)
		if d > 0 {
			o.s("_")
			o.i(d)
		}
		o.s(`.vmdk</fileName><datastore type="Datastore">`)
		o.s(moref(tDS, g))
		o.s(`</datastore><backingObjectId></backingObjectId><diskMode>persistent</diskMode><split>false</split><writeThrough>false</writeThrough><thinProvisioned>`)
		o.b2(f.format[d] == 't')
		o.s(`</thinProvisioned><eagerlyScrub>`)
		o.b2(f.format[d] == 'e')
		o.s(`</eagerlyScrub><uuid>6000C29`)
		u := e.h(kVM, i, 100+d)
		o.hex(u>>36, 1)
		o.s("-")
		o.hex(u>>20, 4)
		o.s("-")
		o.hex(u>>4, 4)
		o.s("-")
		o.hex(u^0x5a5a, 4)
		o.s("-")
		o.hex(u>>8, 12)
		o.s(`</uuid><contentId>`)
		o.hex(u, 16)
		o.hex(u>>3, 16)
		o.s(`</contentId><digestEnabled>false</digestEnabled><sharing>sharingNone</sharing></backing><controllerKey>1000</controllerKey><unitNumber>`)
		o.i(d)
		o.s(`</unitNumber><capacityInKB>`)
		o.i(kb)
		o.s(`</capacityInKB><capacityInBytes>`)
		o.i64(int64(kb) << 10)
		o.s(`</capacityInBytes><shares><shares>1000</shares><level>normal</level></shares><storageIOAllocation><limit>-1</limit><shares><shares>1000</shares><level>normal</level></shares><reservation>0</reservation></storageIOAllocation><diskObjectId>`)
		o.i(i + 1)
		o.s("-")
		o.i(2000 + d)
		o.s(`</diskObjectId><nativeUnmanagedLinkedClone>false</nativeUnmanagedLinkedClone></VirtualDevice>`)
	}
	// One vmxnet3 on the cluster's distributed switch.
	c := e.hostCluster(e.vmHost(i))
	x := e.h(kVM, i, 200)
	o.s(`<VirtualDevice xsi:type="VirtualVmxnet3"><key>4000</key><deviceInfo xsi:type="Description"><label>Network adapter 1</label><summary>DVSwitch: `)
	s.dvsUUID(o, c/e.clustersPerDVS)
	o.s(`</summary></deviceInfo><backing xsi:type="VirtualEthernetCardDistributedVirtualPortBackingInfo"><port><switchUuid>`)
	s.dvsUUID(o, c/e.clustersPerDVS)
	o.s(`</switchUuid><portgroupKey>dvportgroup-`)
	o.i(1000 + c)
	o.s(`</portgroupKey><portKey>`)
	o.i(i % 4096)
	o.s(`</portKey><connectionCookie>`)
	o.u64(x >> 34)
	o.s(`</connectionCookie></port></backing><connectable><migrateConnect>unset</migrateConnect><startConnected>true</startConnected><allowGuestControl>true</allowGuestControl><connected>`)
	o.b2(f.poweredOn)
	o.s(`</connected><status>ok</status></connectable><slotInfo xsi:type="VirtualDevicePciBusSlotInfo"><pciSlotNumber>192</pciSlotNumber></slotInfo><controllerKey>100</controllerKey><unitNumber>7</unitNumber><addressType>assigned</addressType><macAddress>00:50:56:`)
	o.hex(x>>16, 2)
	o.s(":")
	o.hex(x>>8, 2)
	o.s(":")
	o.hex(x, 2)
	o.s(`</macAddress><wakeOnLanEnabled>true</wakeOnLanEnabled><resourceAllocation><reservation>0</reservation><share><shares>50</shares><level>normal</level></share><limit>-1</limit></resourceAllocation><uptCompatibilityEnabled>true</uptCompatibilityEnabled></VirtualDevice>`)
}

// vmSnapshots writes a chain: each snapshot is the child of the one before.
func (s *gen) vmSnapshots(o *out, i int, f *vmFacts) {
	o.s(`<currentSnapshot type="VirtualMachineSnapshot">snapshot-`)
	o.i((i+1)*10 + f.snapshots)
	o.s(`</currentSnapshot>`)
	for k := 0; k < f.snapshots; k++ {
		if k == 0 {
			o.s("<rootSnapshotList>")
		} else {
			o.s("<childSnapshotList>")
		}
		o.s(`<snapshot type="VirtualMachineSnapshot">snapshot-`)
		o.i((i+1)*10 + k + 1)
		o.s(`</snapshot><vm type="VirtualMachine">`)
		o.s(moref(tVM, i))
		o.s(`</vm><name>before-change-`)
		o.i(k + 1)
		o.s(`</name><description></description><id>`)
		o.i(k + 1)
		o.s(`</id><createTime>`)
		o.b = s.now.AddDate(0, 0, -(f.snapAge-k)).AppendFormat(o.b, "2006-01-02T15:04:05Z")
		o.s(`</createTime><state>poweredOn</state><quiesced>false</quiesced><replaySupported>false</replaySupported>`)
	}
	for k := f.snapshots - 1; k >= 0; k-- {
		if k == 0 {
			o.s("</rootSnapshotList>")
		} else {
			o.s("</childSnapshotList>")
		}
	}
}

// ---- datastores and datastore clusters ----------------------------------------------------------

const (
	gib = int64(1) << 30
	tib = int64(1) << 40
)

type dsFacts struct {
	capacity, free int64
	vmfs           int // 5 or 6; 0 for NFS
}

func (s *gen) ds(g int) dsFacts {
	e := s.e
	x := e.h(kDS, g, 0)
	f := dsFacts{capacity: []int64{512 * gib, 750 * gib, 1 * tib, 2 * tib, 4 * tib}[x%5]}
	pct := int64(10 + (x>>8)%60) // 10..69 % free
	pct -= int64(e.version(kDS, g))
	if pct < 1 {
		pct = 1
	}
	f.free = f.capacity / 100 * pct
	if !e.dsNFS(g) {
		f.vmfs = 6
		if (x>>16)%10 == 0 {
			f.vmfs = 5
		}
	}
	return f
}

func (s *gen) dsUUID(o *out, g int) {
	x := s.e.h(kDS, g, 1)
	o.hex(x>>32, 8)
	o.s("-")
	o.hex(x, 8)
	o.s("-")
	o.hex(x>>48, 4)
	o.s("-")
	o.hex(x>>20, 12)
}

// dsNameURL writes datastore g's <name> and <url>, which its summary and its info both carry.
func (s *gen) dsNameURL(o *out, g int) {
	o.s("<name>")
	o.dsName(g)
	o.s("</name><url>")
	s.dsURL(o, g)
	o.s("</url>")
}

func (s *gen) dsURL(o *out, g int) {
	if s.e.dsNFS(g) {
		o.s("ds:///vmfs/volumes/")
		o.hex(s.e.h(kDS, g, 1), 8)
		o.s("-")
		o.hex(s.e.h(kDS, g, 2), 8)
		o.s("/")
		return
	}
	o.s("ds:///vmfs/volumes/")
	s.dsUUID(o, g)
	o.s("/")
}

func (s *gen) dsProp(o *out, g int, p string) {
	e := s.e
	f := s.ds(g)
	c, k := e.dsCluster(g)
	switch p {
	case "name":
		o.propNamed(p, (*out).dsName, g)
	case "summary":
		o.prop(p, "DatastoreSummary")
		o.ref("datastore", tDS, moref(tDS, g))
		s.dsNameURL(o, g)
		o.s("<capacity>")
		o.i64(f.capacity)
		o.s("</capacity><freeSpace>")
		o.i64(f.free)
		o.s("</freeSpace><uncommitted>")
		o.i64(f.capacity / 5)
		o.s("</uncommitted><accessible>true</accessible><multipleHostAccess>true</multipleHostAccess><type>")
		if f.vmfs == 0 {
			o.s("NFS")
		} else {
			o.s("VMFS")
		}
		o.s("</type><maintenanceMode>normal</maintenanceMode>")
		o.endProp()
	case "info":
		if f.vmfs == 0 {
			o.prop(p, "NasDatastoreInfo")
		} else {
			o.prop(p, "VmfsDatastoreInfo")
		}
		s.dsNameURL(o, g)
		o.s("<freeSpace>")
		o.i64(f.free)
		o.s("</freeSpace><maxFileSize>68169720922112</maxFileSize><maxVirtualDiskCapacity>68169720922112</maxVirtualDiskCapacity><maxMemoryFileSize>68169720922112</maxMemoryFileSize><timestamp>")
		o.b = s.now.AppendFormat(o.b, "2006-01-02T15:04:05Z")
		o.s("</timestamp>")
		if f.vmfs == 0 {
			o.s("<nas><type>NFS</type><name>")
			o.dsName(g)
			o.s("</name><capacity>")
			o.i64(f.capacity)
			o.s("</capacity><remoteHost>nas-")
			o.pad(c%16+1, 2)
			o.s(".synth.local</remoteHost><remotePath>/export/vol")
			o.i(k)
			o.s("</remotePath><accessMode>readWrite</accessMode><protocolEndpoint>false</protocolEndpoint></nas>")
		} else {
			o.s("<containerId>")
			s.dsUUID(o, g)
			o.s("</containerId><maxPhysicalRDMFileSize>70368744177664</maxPhysicalRDMFileSize><maxVirtualRDMFileSize>68169720922112</maxVirtualRDMFileSize><vmfs><type>VMFS</type><name>")
			o.dsName(g)
			o.s("</name><capacity>")
			o.i64(f.capacity)
			o.s("</capacity><blockSizeMb>1</blockSizeMb><maxBlocks>63963136</maxBlocks><majorVersion>")
			o.i(f.vmfs)
			o.s("</majorVersion><version>")
			o.s(simkit.VmfsVersion(f.vmfs))
			o.s("</version><uuid>")
			s.dsUUID(o, g)
			o.s("</uuid><extent><diskName>")
			s.naa(o, c, k)
			o.s("</diskName><partition>1</partition></extent><vmfsUpgradable>false</vmfsUpgradable><ssd>true</ssd><local>false</local>")
			if f.vmfs == 6 {
				o.s("<unmapGranularity>1024</unmapGranularity><unmapPriority>low</unmapPriority>")
			}
			o.s("</vmfs>")
		}
		o.endProp()
	case "vm":
		o.prop(p, "ArrayOfManagedObjectReference")
		e.dsVMs(g, func(i int) { o.ref("ManagedObjectReference", tVM, moref(tVM, i)) })
		o.endProp()
	case "parent":
		if e.dsInPod(g) {
			o.propRef(p, tPod, moref(tPod, c))
		} else {
			o.propRef(p, tFolder, "group-s5")
		}
	case "host":
		o.prop(p, "ArrayOfDatastoreHostMount")
		lo, hi := e.clusterHosts(c)
		for h := lo; h < hi; h++ {
			o.s(`<DatastoreHostMount><key type="HostSystem">`)
			o.s(moref(tHost, h))
			o.s(`</key><mountInfo><path>/vmfs/volumes/`)
			s.dsUUID(o, g)
			o.s(`</path><accessMode>readWrite</accessMode><mounted>true</mounted><accessible>true</accessible></mountInfo></DatastoreHostMount>`)
		}
		o.endProp()
	}
}

func (s *gen) podProp(o *out, c int, p string) {
	e := s.e
	switch p {
	case "name":
		o.propNamed(p, (*out).podName, c)
	case "summary":
		var capacity, free int64
		lo, hi := e.podMembers(c)
		for g := lo; g < hi; g++ {
			f := s.ds(g)
			capacity += f.capacity
			free += f.free
		}
		o.prop(p, "StoragePodSummary")
		o.s("<name>pod-")
		o.pad(c+1, 3)
		o.s("</name><capacity>")
		o.i64(capacity)
		o.s("</capacity><freeSpace>")
		o.i64(free)
		o.s("</freeSpace>")
		o.endProp()
	case "parent":
		o.propRef(p, tFolder, "group-s5")
	case "childEntity":
		o.prop(p, "ArrayOfManagedObjectReference")
		lo, hi := e.podMembers(c)
		for g := lo; g < hi; g++ {
			o.ref("ManagedObjectReference", tDS, moref(tDS, g))
		}
		o.endProp()
	case "childType":
		o.propStr(p, "ArrayOfString", "<string>Datastore</string>")
	}
}

// ---- distributed switches -----------------------------------------------------------------------

func (s *gen) dvsUUID(o *out, d int) {
	x := s.e.h(kDS, d, 77)
	for k := 0; k < 16; k++ {
		if k > 0 {
			if k == 8 {
				o.s("-")
			} else {
				o.s(" ")
			}
		}
		o.hex(x>>(uint(k%8)*8)+uint64(k), 2)
	}
}

func (s *gen) dvsProp(o *out, d int, p string) {
	switch p {
	case "name":
		o.propNamed(p, (*out).dvsName, d)
	case "uuid":
		o.prop(p, "xsd:string")
		s.dvsUUID(o, d)
		o.endProp()
	case "config":
		o.prop(p, "VMwareDVSConfigInfo")
		o.s("<uuid>")
		s.dvsUUID(o, d)
		o.s("</uuid><name>dvs-")
		o.pad(d+1, 2)
		o.s("</name><numStandalonePorts>0</numStandalonePorts><numPorts>4096</numPorts><maxPorts>2147483647</maxPorts><productInfo><name>DVS</name><vendor>VMware, Inc.</vendor><version>7.0.3</version></productInfo><configVersion>42</configVersion><createTime>2024-01-15T10:00:00Z</createTime><maxMtu>9000</maxMtu>")
		o.endProp()
	}
}
