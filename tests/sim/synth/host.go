package main

// Hosts: network, adapters, and the storage view of every LUN of the
// host's cluster (ScsiLun, multipathInfo with every path, the plug-store
// topology), and the answers of the per-host calls (QueryOptions,
// QueryBoundVnics, esxcli through ExecuteSoap).

// LUN l of cluster c: l < dsCount(c) backs that datastore when it is VMFS;
// the others are RDM candidates. Arrays differ by cluster.
var arrays = []struct{ vendor, model, display, oui string }{
	{"PURE    ", "FlashArray      ", "PURE Fibre Channel Disk", "624a9370"},
	{"DGC     ", "VRAID           ", "DGC Fibre Channel Disk", "60060160"},
	{"NETAPP  ", "LUN C-Mode      ", "NETAPP Fibre Channel Disk", "600a0980"},
}

func (s *gen) naa(o *out, c, l int) {
	o.s("naa.")
	o.s(arrays[c%len(arrays)].oui)
	o.hex(s.e.seed&0xffff, 4)
	o.hex(uint64(c), 8)
	o.hex(uint64(l+1), 12)
}

// lunUUID is the ScsiLun uuid: "02000" + LUN number + the naa digits + model bytes.
func (s *gen) lunUUID(o *out, c, l int) {
	o.s("0200")
	o.hex(uint64(l+1), 4)
	o.s("00")
	o.s(arrays[c%len(arrays)].oui)
	o.hex(s.e.seed&0xffff, 4)
	o.hex(uint64(c), 8)
	o.hex(uint64(l+1), 12)
	o.s("466c61736841")
}

// lunDead reports whether path p of LUN l on host h is dead (rare: multipath-redundancy).
func (s *gen) lunDead(h, l, p int) bool {
	return p == s.e.pathsPerLun-1 && s.e.pathsPerLun > 1 && s.e.h(kLun, h, l+1)%500 == 0
}

// lunFixed: a few LUNs left on Fixed (multipath-policy).
func (s *gen) lunFixed(c, l int) bool { return s.e.h(kLun, c, 1<<20|l)%100 == 0 }

func (s *gen) lunIops(c, l int) int {
	if s.e.h(kLun, c, 2<<20|l)%40 == 0 {
		return 1000
	}
	return 1
}

var pathHBA = []string{"vmhba2", "vmhba3", "vmhba2", "vmhba3"}
var pathTarget = []string{"0", "0", "1", "1"}

func (o *out) pathName(p, l int) {
	o.s(pathHBA[p])
	o.s(":C0:T")
	o.s(pathTarget[p])
	o.s(":L")
	o.i(l + 1)
}

func (s *gen) hostProp(o *out, h int, p string) {
	e := s.e
	c := e.hostCluster(h)
	iscsi := e.hostIscsi(h)
	switch p {
	case "name":
		o.propNamed(p, (*out).hostName, h)
	case "parent":
		o.propRef(p, tCluster, moref(tCluster, c))
	case "runtime.connectionState":
		o.propStr(p, "HostSystemConnectionState", "connected")
	case "config.product.version":
		o.prop(p, "xsd:string")
		o.s("7.0.3")
		o.endProp()
	case "config.network.vnic":
		o.prop(p, "ArrayOfHostVirtualNic")
		s.vnic(o, h, "vmk0", "Management Network", 1500, 10, "", 0)
		s.vnic(o, h, "vmk1", "", 9000, 20, "vMotion", c/e.clustersPerDVS)
		if iscsi {
			s.vnic(o, h, "vmk2", "iSCSI-1", 9000, 30, "", 0)
		}
		o.endProp()
	case "config.network.vswitch":
		o.prop(p, "ArrayOfHostVirtualSwitch")
		s.vswitch(o, "vSwitch0", 1500, "vmnic0", []string{"VM Network", "Management Network"})
		if iscsi {
			s.vswitch(o, "vSwitch1", 9000, "vmnic4", []string{"iSCSI-1"})
		}
		o.endProp()
	case "config.network.portgroup":
		o.prop(p, "ArrayOfHostPortGroup")
		s.portgroup(o, "VM Network", "vSwitch0", "vmnic0")
		s.portgroup(o, "Management Network", "vSwitch0", "vmnic0")
		if iscsi {
			s.portgroup(o, "iSCSI-1", "vSwitch1", "vmnic4")
		}
		o.endProp()
	case "config.storageDevice.hostBusAdapter":
		o.prop(p, "ArrayOfHostHostBusAdapter")
		o.s(`<HostHostBusAdapter xsi:type="HostSerialAttachedHba"><key>key-vim.host.SerialAttachedHba-vmhba0</key><device>vmhba0</device><bus>3</bus><status>unknown</status><model>Dell HBA330 Mini</model><driver>lsi_msgpt3</driver><pci>0000:03:00.0</pci><storageProtocol>scsi</storageProtocol><nodeWorldWideName>5000000000000000</nodeWorldWideName></HostHostBusAdapter>`)
		for k, dev := range []string{"vmhba2", "vmhba3"} {
			o.s(`<HostHostBusAdapter xsi:type="HostFibreChannelHba"><key>key-vim.host.FibreChannelHba-`)
			o.s(dev)
			o.s(`</key><device>`)
			o.s(dev)
			o.s(`</device><bus>`)
			o.i(59 + k)
			o.s(`</bus><status>online</status><model>QLogic 2692 Dual Port 16Gb Fibre Channel to PCIe Adapter</model><driver>qlnativefc</driver><pci>0000:3b:00.`)
			o.i(k)
			o.s(`</pci><storageProtocol>scsi</storageProtocol><portWorldWideName>`)
			o.u64(0x2100000000000000 | uint64(h)<<8 | uint64(k))
			o.s(`</portWorldWideName><nodeWorldWideName>`)
			o.u64(0x2000000000000000 | uint64(h)<<8 | uint64(k))
			o.s(`</nodeWorldWideName><portType>fabric</portType><speed>16</speed></HostHostBusAdapter>`)
		}
		if iscsi {
			s.iscsiHBA(o, h)
		}
		o.endProp()
	case "config.storageDevice.scsiLun":
		o.prop(p, "ArrayOfScsiLun")
		o.s(`<ScsiLun xsi:type="HostScsiDisk"><deviceName>/vmfs/devices/disks/mpx.vmhba0:C0:T0:L0</deviceName><deviceType>disk</deviceType><key>key-vim.host.ScsiDisk-0000000000766d686261303a303a30</key><uuid>0000000000766d686261303a303a30</uuid><descriptor><quality>lowQuality</quality><id>mpx.vmhba0:C0:T0:L0</id></descriptor><descriptor><quality>lowQuality</quality><id>vml.0000000000766d686261303a303a30</id></descriptor><canonicalName>mpx.vmhba0:C0:T0:L0</canonicalName><displayName>Local ATA Disk (mpx.vmhba0:C0:T0:L0)</displayName><lunType>disk</lunType><vendor>ATA     </vendor><model>MZ7KH240HAHQ0D3 </model><revision>HG58</revision><scsiLevel>6</scsiLevel><serialNumber>unavailable</serialNumber><queueDepth>31</queueDepth><operationalState>ok</operationalState><capabilities><updateDisplayNameSupported>true</updateDisplayNameSupported></capabilities><vStorageSupport>vStorageUnsupported</vStorageSupport><protocolEndpoint>false</protocolEndpoint><perenniallyReserved>false</perenniallyReserved><clusteredVmdkSupported>false</clusteredVmdkSupported><capacity><blockSize>512</blockSize><block>468862128</block></capacity><devicePath>/vmfs/devices/disks/mpx.vmhba0:C0:T0:L0</devicePath><ssd>true</ssd><localDisk>true</localDisk><emulatedDIXDIFEnabled>false</emulatedDIXDIFEnabled><scsiDiskType>native512</scsiDiskType></ScsiLun>`)
		for l := 0; l < e.clusterLuns(c); l++ {
			s.scsiLun(o, c, l)
		}
		o.endProp()
	case "config.storageDevice.multipathInfo":
		o.prop(p, "HostMultipathInfo")
		o.s(`<lun><key>key-vim.host.MultipathInfo.LogicalUnit-0000000000766d686261303a303a30</key><id>0000000000766d686261303a303a30</id><lun>key-vim.host.ScsiDisk-0000000000766d686261303a303a30</lun><path><key>key-vim.host.MultipathInfo.Path-vmhba0:C0:T0:L0</key><name>vmhba0:C0:T0:L0</name><pathState>active</pathState><state>active</state><isWorkingPath>true</isWorkingPath><adapter>key-vim.host.SerialAttachedHba-vmhba0</adapter><lun>key-vim.host.MultipathInfo.LogicalUnit-0000000000766d686261303a303a30</lun><transport xsi:type="HostBlockAdapterTargetTransport"></transport></path><policy xsi:type="HostMultipathInfoFixedLogicalUnitPolicy"><policy>VMW_PSP_FIXED</policy><prefer>vmhba0:C0:T0:L0</prefer></policy><storageArrayTypePolicy><policy>VMW_SATP_LOCAL</policy></storageArrayTypePolicy></lun>`)
		for l := 0; l < e.clusterLuns(c); l++ {
			s.multipathLun(o, h, c, l)
		}
		o.endProp()
	case "config.storageDevice.plugStoreTopology.device":
		o.prop(p, "ArrayOfHostPlugStoreTopologyDevice")
		o.s(`<HostPlugStoreTopologyDevice><key>key-vim.host.PlugStoreTopology.Device-0000000000766d686261303a303a30</key><lun>key-vim.host.ScsiDisk-0000000000766d686261303a303a30</lun><path>key-vim.host.PlugStoreTopology.Path-vmhba0:C0:T0:L0</path></HostPlugStoreTopologyDevice>`)
		for l := 0; l < e.clusterLuns(c); l++ {
			o.s(`<HostPlugStoreTopologyDevice><key>key-vim.host.PlugStoreTopology.Device-`)
			s.lunUUID(o, c, l)
			o.s(`</key><lun>key-vim.host.ScsiDisk-`)
			s.lunUUID(o, c, l)
			o.s(`</lun>`)
			for p := 0; p < e.pathsPerLun; p++ {
				o.s(`<path>key-vim.host.PlugStoreTopology.Path-`)
				o.pathName(p, l)
				o.s(`</path>`)
			}
			o.s(`</HostPlugStoreTopologyDevice>`)
		}
		o.endProp()
	case "config.storageDevice.plugStoreTopology.plugin":
		o.prop(p, "ArrayOfHostPlugStoreTopologyPlugin")
		o.s(`<HostPlugStoreTopologyPlugin><key>key-vim.host.PlugStoreTopology.Plugin-NMP</key><name>NMP</name><device>key-vim.host.PlugStoreTopology.Device-0000000000766d686261303a303a30</device>`)
		for l := 0; l < e.clusterLuns(c); l++ {
			o.s(`<device>key-vim.host.PlugStoreTopology.Device-`)
			s.lunUUID(o, c, l)
			o.s(`</device>`)
		}
		o.s(`<claimedPath>key-vim.host.PlugStoreTopology.Path-vmhba0:C0:T0:L0</claimedPath>`)
		for l := 0; l < e.clusterLuns(c); l++ {
			for p := 0; p < e.pathsPerLun; p++ {
				o.s(`<claimedPath>key-vim.host.PlugStoreTopology.Path-`)
				o.pathName(p, l)
				o.s(`</claimedPath>`)
			}
		}
		o.s(`</HostPlugStoreTopologyPlugin><HostPlugStoreTopologyPlugin><key>key-vim.host.PlugStoreTopology.Plugin-HPP</key><name>HPP</name></HostPlugStoreTopologyPlugin>`)
		o.endProp()
	case "configManager.advancedOption":
		o.propRef(p, "OptionManager", "EsxHostAdvSettings-"+itoa(h+1))
	case "configManager.iscsiManager":
		o.propRef(p, "IscsiManager", "iscsiManager-"+itoa(h+1))
	}
}

func (s *gen) vnic(o *out, h int, dev, pg string, mtu, net int, dvpg string, dvs int) {
	o.s("<HostVirtualNic><device>")
	o.s(dev)
	o.s("</device><key>key-vim.host.VirtualNic-")
	o.s(dev)
	o.s("</key><portgroup>")
	o.s(pg)
	o.s("</portgroup><spec><ip><dhcp>false</dhcp><ipAddress>10.")
	o.i(net)
	o.s(".")
	o.i(h / 250)
	o.s(".")
	o.i(h%250 + 1)
	o.s("</ipAddress><subnetMask>255.255.0.0</subnetMask></ip><mac>00:50:56:6")
	o.hex(uint64(net/10), 1)
	o.s(":")
	o.hex(uint64(h>>8), 2)
	o.s(":")
	o.hex(uint64(h), 2)
	o.s("</mac>")
	if dvpg != "" {
		o.s("<distributedVirtualPort><switchUuid>")
		s.dvsUUID(o, dvs)
		o.s("</switchUuid><portgroupKey>dvportgroup-")
		o.i(500 + dvs)
		o.s("</portgroupKey><portKey>")
		o.i(h % 4096)
		o.s("</portKey><connectionCookie>")
		o.i(h*7 + 13)
		o.s("</connectionCookie></distributedVirtualPort>")
	} else {
		o.s("<portgroup>")
		o.s(pg)
		o.s("</portgroup>")
	}
	o.s("<mtu>")
	o.i(mtu)
	o.s("</mtu><tsoEnabled>true</tsoEnabled><netStackInstanceKey>defaultTcpipStack</netStackInstanceKey></spec>")
	if dvpg == "" {
		o.s("<port>key-vim.host.PortGroup.Port-")
		o.i(33554436 + net)
		o.s("</port>")
	}
	o.s("</HostVirtualNic>")
}

const nicTeaming = `<nicTeaming><policy>loadbalance_srcid</policy><reversePolicy>true</reversePolicy><notifySwitches>true</notifySwitches><rollingOrder>false</rollingOrder><failureCriteria><checkSpeed>minimum</checkSpeed><speed>10</speed><checkDuplex>false</checkDuplex><fullDuplex>false</fullDuplex><checkErrorPercent>false</checkErrorPercent><percentage>0</percentage><checkBeacon>false</checkBeacon></failureCriteria><nicOrder><activeNic>`
const netPolicyTail = `<offloadPolicy><csumOffload>true</csumOffload><tcpSegmentation>true</tcpSegmentation><zeroCopyXmit>true</zeroCopyXmit></offloadPolicy><shapingPolicy><enabled>false</enabled></shapingPolicy>`

func (s *gen) vswitch(o *out, name string, mtu int, pnic string, pgs []string) {
	o.s("<HostVirtualSwitch><name>")
	o.s(name)
	o.s("</name><key>key-vim.host.VirtualSwitch-")
	o.s(name)
	o.s("</key><numPorts>2560</numPorts><numPortsAvailable>2548</numPortsAvailable><mtu>")
	o.i(mtu)
	o.s("</mtu>")
	for _, pg := range pgs {
		o.s("<portgroup>key-vim.host.PortGroup-")
		o.s(pg)
		o.s("</portgroup>")
	}
	o.s("<pnic>key-vim.host.PhysicalNic-")
	o.s(pnic)
	o.s("</pnic><spec><numPorts>128</numPorts><bridge xsi:type=\"HostVirtualSwitchBondBridge\"><nicDevice>")
	o.s(pnic)
	o.s("</nicDevice><beacon><interval>1</interval></beacon><linkDiscoveryProtocolConfig><protocol>cdp</protocol><operation>listen</operation></linkDiscoveryProtocolConfig></bridge><policy><security><allowPromiscuous>false</allowPromiscuous><macChanges>false</macChanges><forgedTransmits>false</forgedTransmits></security>")
	o.s(nicTeaming)
	o.s(pnic)
	o.s("</activeNic></nicOrder></nicTeaming>")
	o.s(netPolicyTail)
	o.s("</policy><mtu>")
	o.i(mtu)
	o.s("</mtu></spec></HostVirtualSwitch>")
}

func (s *gen) portgroup(o *out, name, vswitch, pnic string) {
	o.s("<HostPortGroup><key>key-vim.host.PortGroup-")
	o.s(name)
	o.s("</key><vswitch>key-vim.host.VirtualSwitch-")
	o.s(vswitch)
	o.s("</vswitch><computedPolicy><security><allowPromiscuous>false</allowPromiscuous><macChanges>false</macChanges><forgedTransmits>false</forgedTransmits></security>")
	o.s(nicTeaming)
	o.s(pnic)
	o.s("</activeNic></nicOrder></nicTeaming>")
	o.s(netPolicyTail)
	o.s("</computedPolicy><spec><name>")
	o.s(name)
	o.s("</name><vlanId>0</vlanId><vswitchName>")
	o.s(vswitch)
	o.s("</vswitchName><policy><security></security><nicTeaming><failureCriteria></failureCriteria></nicTeaming><offloadPolicy></offloadPolicy><shapingPolicy></shapingPolicy></policy></spec></HostPortGroup>")
}

func (s *gen) iscsiName(o *out, h int) {
	o.s("iqn.1998-01.com.vmware:esx-")
	o.pad(h+1, 5)
	o.s("-")
	o.hex(s.e.h(kHost, h, 9), 8)
}

func (s *gen) iscsiHBA(o *out, h int) {
	const opt = `<advancedOptions><key>%s</key><value xsi:type="%s">%s</value><isInherited>%s</isInherited></advancedOptions>`
	o.s(`<HostHostBusAdapter xsi:type="HostInternetScsiHba"><key>key-vim.host.InternetScsiHba-vmhba64</key><device>vmhba64</device><bus>0</bus><status>online</status><model>iSCSI Software Adapter</model><driver>iscsi_vmk</driver><pci>UNKNOWN - NULL PCI DEV</pci><storageProtocol>scsi</storageProtocol><isSoftwareBased>true</isSoftwareBased><canBeDisabled>true</canBeDisabled><networkBindingSupport>optional</networkBindingSupport><discoveryCapabilities><iSnsDiscoverySettable>false</iSnsDiscoverySettable><slpDiscoverySettable>false</slpDiscoverySettable><staticTargetDiscoverySettable>false</staticTargetDiscoverySettable><sendTargetsDiscoverySettable>false</sendTargetsDiscoverySettable></discoveryCapabilities><discoveryProperties><iSnsDiscoveryEnabled>false</iSnsDiscoveryEnabled><slpDiscoveryEnabled>false</slpDiscoveryEnabled><staticTargetDiscoveryEnabled>true</staticTargetDiscoveryEnabled><sendTargetsDiscoveryEnabled>true</sendTargetsDiscoveryEnabled></discoveryProperties><authenticationCapabilities><chapAuthSettable>true</chapAuthSettable><krb5AuthSettable>false</krb5AuthSettable><srpAuthSettable>false</srpAuthSettable><spkmAuthSettable>false</spkmAuthSettable><mutualChapSettable>true</mutualChapSettable><targetChapSettable>true</targetChapSettable><targetMutualChapSettable>true</targetMutualChapSettable></authenticationCapabilities><authenticationProperties><chapAuthEnabled>false</chapAuthEnabled><chapAuthenticationType>chapProhibited</chapAuthenticationType><chapInherited>true</chapInherited><mutualChapAuthenticationType>chapProhibited</mutualChapAuthenticationType><mutualChapInherited>true</mutualChapInherited></authenticationProperties><digestProperties><headerDigestType>digestProhibited</headerDigestType><headerDigestInherited>true</headerDigestInherited><dataDigestType>digestProhibited</dataDigestType><dataDigestInherited>true</dataDigestInherited></digestProperties><ipCapabilities><addressSettable>false</addressSettable><ipConfigurationMethodSettable>false</ipConfigurationMethodSettable><subnetMaskSettable>false</subnetMaskSettable><defaultGatewaySettable>false</defaultGatewaySettable><primaryDnsServerAddressSettable>false</primaryDnsServerAddressSettable><alternateDnsServerAddressSettable>false</alternateDnsServerAddressSettable><ipv6Supported>false</ipv6Supported><arpRedirectSettable>false</arpRedirectSettable><mtuSettable>false</mtuSettable><hostNameAsTargetAddress>false</hostNameAsTargetAddress><nameAliasSettable>true</nameAliasSettable></ipCapabilities><ipProperties><dhcpConfigurationEnabled>false</dhcpConfigurationEnabled></ipProperties><supportedAdvancedOptions><key>DelayedAck</key><optionType xsi:type="BoolOption"><valueIsReadonly>false</valueIsReadonly><supported>true</supported><defaultValue>true</defaultValue></optionType></supportedAdvancedOptions>`)
	o.s(`<advancedOptions><key>DelayedAck</key><value xsi:type="xsd:boolean">false</value><isInherited>false</isInherited></advancedOptions><advancedOptions><key>LoginTimeout</key><value xsi:type="xsd:int">5</value><isInherited>true</isInherited></advancedOptions><iScsiName>`)
	s.iscsiName(o, h)
	o.s(`</iScsiName><iScsiAlias></iScsiAlias><configuredSendTarget><address>10.30.`)
	o.i(h / 250)
	o.s(`.200</address><port>3260</port><authenticationProperties><chapAuthEnabled>false</chapAuthEnabled><chapInherited>true</chapInherited><mutualChapInherited>true</mutualChapInherited></authenticationProperties><digestProperties><headerDigestInherited>true</headerDigestInherited><dataDigestInherited>true</dataDigestInherited></digestProperties><supportedAdvancedOptions><key>DelayedAck</key><optionType xsi:type="BoolOption"><valueIsReadonly>false</valueIsReadonly><supported>true</supported><defaultValue>true</defaultValue></optionType></supportedAdvancedOptions><advancedOptions><key>DelayedAck</key><value xsi:type="xsd:boolean">false</value><isInherited>true</isInherited></advancedOptions><parent>vmhba64</parent></configuredSendTarget><maxSpeedMb>10000</maxSpeedMb><currentSpeedMb>10000</currentSpeedMb></HostHostBusAdapter>`)
}

// scsiLun writes one SAN HostScsiDisk with the bulk a real one carries.
func (s *gen) scsiLun(o *out, c, l int) {
	a := arrays[c%len(arrays)]
	o.s(`<ScsiLun xsi:type="HostScsiDisk"><deviceName>/vmfs/devices/disks/`)
	s.naa(o, c, l)
	o.s(`</deviceName><deviceType>disk</deviceType><key>key-vim.host.ScsiDisk-`)
	s.lunUUID(o, c, l)
	o.s(`</key><uuid>`)
	s.lunUUID(o, c, l)
	o.s(`</uuid><descriptor><quality>highQuality</quality><id>`)
	s.naa(o, c, l)
	o.s(`</id></descriptor><descriptor><quality>highQuality</quality><id>vml.`)
	s.lunUUID(o, c, l)
	o.s(`</id></descriptor><descriptor><quality>mediumQuality</quality><id>`)
	s.lunUUID(o, c, l)
	o.s(`</id></descriptor><canonicalName>`)
	s.naa(o, c, l)
	o.s(`</canonicalName><displayName>`)
	o.s(a.display)
	o.s(` (`)
	s.naa(o, c, l)
	o.s(`)</displayName><lunType>disk</lunType><vendor>`)
	o.s(a.vendor)
	o.s(`</vendor><model>`)
	o.s(a.model)
	o.s(`</model><revision>8888</revision><scsiLevel>6</scsiLevel><serialNumber>unavailable</serialNumber><durableName><namespace>SERIALNUM</namespace><namespaceId>5</namespaceId>`)
	x := s.e.h(kLun, c, l)
	for k := 0; k < 16; k++ {
		o.s("<data>")
		o.i(int(int8(x >> (uint(k%8) * 8))))
		o.s("</data>")
	}
	o.s(`</durableName><alternateName><namespace>GENERIC_VPD</namespace><namespaceId>5</namespaceId>`)
	for k := 0; k < 16; k++ {
		o.s("<data>")
		o.i(int(int8(x >> (uint(k%8) * 7))))
		o.s("</data>")
	}
	o.s(`</alternateName><alternateName><namespace>GENERIC_VPD</namespace><namespaceId>5</namespaceId>`)
	for k := 0; k < 20; k++ {
		o.s("<data>")
		o.i(int(int8(x >> (uint(k%8) * 5))))
		o.s("</data>")
	}
	o.s(`</alternateName>`)
	for k := 0; k < 36; k++ {
		o.s("<standardInquiry>")
		o.i(int(int8(x >> (uint(k%8) * 3))))
		o.s("</standardInquiry>")
	}
	o.s(`<queueDepth>64</queueDepth><operationalState>ok</operationalState><capabilities><updateDisplayNameSupported>true</updateDisplayNameSupported></capabilities><vStorageSupport>vStorageSupported</vStorageSupport><protocolEndpoint>false</protocolEndpoint><perenniallyReserved>false</perenniallyReserved><clusteredVmdkSupported>false</clusteredVmdkSupported><capacity><blockSize>512</blockSize><block>`)
	o.i64(s.lunBlocks(c, l))
	o.s(`</block></capacity><devicePath>/vmfs/devices/disks/`)
	s.naa(o, c, l)
	o.s(`</devicePath><ssd>true</ssd><localDisk>false</localDisk><emulatedDIXDIFEnabled>false</emulatedDIXDIFEnabled><scsiDiskType>native512</scsiDiskType></ScsiLun>`)
}

// lunBlocks: a datastore's LUN is the datastore's size, other LUNs 100 GiB..2 TiB.
func (s *gen) lunBlocks(c, l int) int64 {
	if l < s.e.dsCount(c) {
		g := c*s.e.dsFull + l
		if !s.e.dsNFS(g) {
			return s.ds(g).capacity / 512
		}
	}
	return int64(100+s.e.h(kLun, c, 3<<20|l)%1948) * gib / 512
}

func (s *gen) multipathLun(o *out, h, c, l int) {
	o.s(`<lun><key>key-vim.host.MultipathInfo.LogicalUnit-`)
	s.lunUUID(o, c, l)
	o.s(`</key><id>`)
	s.lunUUID(o, c, l)
	o.s(`</id><lun>key-vim.host.ScsiDisk-`)
	s.lunUUID(o, c, l)
	o.s(`</lun>`)
	for p := 0; p < s.e.pathsPerLun; p++ {
		state := "active"
		if s.lunDead(h, l, p) {
			state = "dead"
		}
		o.s(`<path><key>key-vim.host.MultipathInfo.Path-`)
		o.pathName(p, l)
		o.s(`</key><name>`)
		o.pathName(p, l)
		o.s(`</name><pathState>`)
		o.s(state)
		o.s(`</pathState><state>`)
		o.s(state)
		o.s(`</state><isWorkingPath>`)
		o.b2(state == "active")
		o.s(`</isWorkingPath><adapter>key-vim.host.FibreChannelHba-`)
		o.s(pathHBA[p])
		o.s(`</adapter><lun>key-vim.host.MultipathInfo.LogicalUnit-`)
		s.lunUUID(o, c, l)
		o.s(`</lun><transport xsi:type="HostFibreChannelTargetTransport"><portWorldWideName>`)
		o.u64(0x5000000000000000 | uint64(c)<<16 | uint64(p))
		o.s(`</portWorldWideName><nodeWorldWideName>`)
		o.u64(0x5000000000000000 | uint64(c)<<16 | 0xff)
		o.s(`</nodeWorldWideName></transport></path>`)
	}
	if s.lunFixed(c, l) {
		o.s(`<policy xsi:type="HostMultipathInfoFixedLogicalUnitPolicy"><policy>VMW_PSP_FIXED</policy><prefer>`)
		o.pathName(0, l)
		o.s(`</prefer></policy>`)
	} else {
		o.s(`<policy xsi:type="HostMultipathInfoLogicalUnitPolicy"><policy>VMW_PSP_RR</policy></policy>`)
	}
	o.s(`<storageArrayTypePolicy><policy>VMW_SATP_ALUA</policy></storageArrayTypePolicy></lun>`)
}

// ---- per-host calls -------------------------------------------------------------------------------

// nmpDevices writes `esxcli storage nmp device list` as the escaped document
// ExecuteSoap returns in returnval/response.
func (s *gen) nmpDevices(o *out, h int) {
	e := s.e
	c := e.hostCluster(h)
	o.s(`&lt;?xml version="1.0" encoding="UTF-8"?&gt;` + "\n" + `&lt;obj xmlns:vim25="urn:vim25" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" versionId="5.0" xsi:type="ArrayOfDataObject"&gt;` + "\n")
	a := arrays[c%len(arrays)]
	for l := 0; l < e.clusterLuns(c); l++ {
		o.s(`&lt;DataObject xsi:type="VimEsxCLIstoragenmpdevicelistNMPDevice"&gt;&lt;Device&gt;`)
		s.naa(o, c, l)
		o.s(`&lt;/Device&gt;&lt;DeviceDisplayName&gt;`)
		o.s(a.display)
		o.s(` (`)
		s.naa(o, c, l)
		o.s(`)&lt;/DeviceDisplayName&gt;&lt;IsBootUSBDevice&gt;false&lt;/IsBootUSBDevice&gt;&lt;IsLocalSASDevice&gt;false&lt;/IsLocalSASDevice&gt;&lt;IsUSB&gt;false&lt;/IsUSB&gt;&lt;PathSelectionPolicy&gt;`)
		if s.lunFixed(c, l) {
			o.s(`VMW_PSP_FIXED&lt;/PathSelectionPolicy&gt;&lt;PathSelectionPolicyDeviceConfig&gt;{preferred=`)
			o.pathName(0, l)
			o.s(`;current=`)
			o.pathName(0, l)
			o.s(`}`)
		} else {
			o.s(`VMW_PSP_RR&lt;/PathSelectionPolicy&gt;&lt;PathSelectionPolicyDeviceConfig&gt;{policy=rr,iops=`)
			o.i(s.lunIops(c, l))
			o.s(`,bytes=10485760,useANO=0; lastPathIndex=1: NumIOsPending=0,numBytesPending=0}`)
		}
		o.s(`&lt;/PathSelectionPolicyDeviceConfig&gt;&lt;PathSelectionPolicyDeviceCustomConfig&gt;&lt;/PathSelectionPolicyDeviceCustomConfig&gt;&lt;StorageArrayType&gt;VMW_SATP_ALUA&lt;/StorageArrayType&gt;&lt;StorageArrayTypeDeviceConfig&gt;{implicit_support=on; explicit_support=off; explicit_allow=on; alua_followover=on; action_OnRetryErrors=on; {TPG_id=1,TPG_state=AO}{TPG_id=0,TPG_state=AO}}&lt;/StorageArrayTypeDeviceConfig&gt;&lt;WorkingPaths&gt;`)
		n := 0
		for p := 0; p < e.pathsPerLun; p++ {
			if s.lunDead(h, l, p) {
				continue
			}
			if n > 0 {
				o.s(", ")
			}
			o.pathName(p, l)
			n++
		}
		o.s(`&lt;/WorkingPaths&gt;&lt;/DataObject&gt;` + "\n")
	}
	o.s(`&lt;/obj&gt;`)
}

// satpRules are a host's user rules then the system rules an ESXi 7 host ships (a subset).
var satpRules = [][12]string{
	// Name, Device, Vendor, Model, Driver, Transport, Options, RuleGroup, ClaimOptions, DefaultPSP, PSPOptions, Description
	{"VMW_SATP_ALUA", "", "PURE", "FlashArray", "", "", "", "user", "", "VMW_PSP_RR", "iops=1", "Pure FlashArray RR IO Operation Limit Rule"},
	{"VMW_SATP_ALUA", "", "NETAPP", "", "", "", "", "user", "tpgs_on", "VMW_PSP_RR", "iops=1", "NetApp arrays with ALUA support"},
	{"VMW_SATP_ALUA", "", "DGC", "", "", "", "", "user", "tpgs_on", "VMW_PSP_RR", "iops=1", "CLARiiON/Unity in ALUA mode"},
	{"VMW_SATP_ALUA", "", "", "", "", "", "", "system", "tpgs_on", "VMW_PSP_MRU", "", "Any array with ALUA support"},
	{"VMW_SATP_ALUA", "", "PURE", "FlashArray", "", "", "", "system", "", "VMW_PSP_RR", "iops=1", "PURE FlashArray IO Operation Limit Rule"},
	{"VMW_SATP_ALUA", "", "IBM", "2810XIV", "", "", "", "system", "tpgs_on", "VMW_PSP_RR", "", "IBM XIV with ALUA"},
	{"VMW_SATP_ALUA", "", "NETAPP", "", "", "", "reset_on_attempted_reserve", "system", "tpgs_on", "VMW_PSP_RR", "", "NetApp arrays with ALUA support"},
	{"VMW_SATP_ALUA", "", "HPE", "", "", "", "", "system", "tpgs_on", "VMW_PSP_RR", "", "HPE arrays with ALUA support"},
	{"VMW_SATP_ALUA_CX", "", "DGC", "", "", "", "", "system", "tpgs_on", "VMW_PSP_RR", "", "CLARiiON array in ALUA mode"},
	{"VMW_SATP_CX", "", "DGC", "", "", "", "", "system", "tpgs_off", "VMW_PSP_MRU", "", "All non-ALUA Clariion Arrays"},
	{"VMW_SATP_SYMM", "", "EMC", "SYMMETRIX", "", "", "", "system", "", "VMW_PSP_RR", "iops=1", "EMC Symmetrix"},
	{"VMW_SATP_INV", "", "EMC", "Invista", "", "", "", "system", "", "", "", "Invista"},
	{"VMW_SATP_INV", "", "EMC", "LUNZ", "", "", "", "system", "", "", "", "Invista LUNZ"},
	{"VMW_SATP_EQL", "", "EQLOGIC", "", "", "", "", "system", "", "", "", "All EqualLogic Arrays"},
	{"VMW_SATP_MSA", "", "", "MSA1000 VOLUME", "", "", "", "system", "", "", "", "MSA 1000/1500 [Legacy product, Not supported in this release]"},
	{"VMW_SATP_DEFAULT_AP", "", "DEC", "HSG80", "", "", "", "system", "", "", "", "All HSG80 Arrays"},
	{"VMW_SATP_DEFAULT_AP", "", "HP", "HSVX700", "", "", "", "system", "tpgs_off", "", "", "active/passive HP StorageWorks SVSP"},
	{"VMW_SATP_DEFAULT_AA", "", "IBM", "^2810XIV*", "", "", "", "system", "tpgs_off", "", "", "IBM 2810XIV"},
	{"VMW_SATP_DEFAULT_AA", "", "IBM", "2145", "", "", "", "system", "", "", "", "IBM SVC"},
	{"VMW_SATP_DEFAULT_AA", "", "HITACHI", "^OPEN-*", "", "", "", "system", "", "", "", "HITACHI arrays"},
	{"VMW_SATP_DEFAULT_AA", "", "3PARdata", "VV", "", "", "", "system", "tpgs_off", "", "", "3PAR VV"},
	{"VMW_SATP_DEFAULT_AA", "", "", "", "", "fc", "", "system", "", "", "", "Fibre Channel Devices"},
	{"VMW_SATP_DEFAULT_AA", "", "", "", "", "iscsi", "", "system", "", "", "", "iSCSI Devices"},
	{"VMW_SATP_DEFAULT_AA", "", "", "", "", "fcoe", "", "system", "", "", "", "Fibre Channel over Ethernet Devices"},
	{"VMW_SATP_LOCAL", "", "", "", "", "parallel", "", "system", "", "", "", "Parallel SCSI Devices"},
	{"VMW_SATP_LOCAL", "", "", "", "", "sas", "", "system", "", "", "", "Serial Attached SCSI Devices"},
	{"VMW_SATP_LOCAL", "", "", "", "", "sata", "", "system", "", "", "", "Serial ATA Devices"},
	{"VMW_SATP_LOCAL", "", "", "", "", "usb", "", "system", "", "", "", "USB Devices"},
	{"VMW_SATP_LOCAL", "", "", "", "", "ide", "", "system", "", "", "", "IDE Devices"},
	{"VMW_SATP_LOCAL", "", "", "", "", "block", "", "system", "", "", "", "RAID Block Devices"},
}

var satpFields = [12]string{"Name", "Device", "Vendor", "Model", "Driver", "Transport", "Options",
	"RuleGroup", "ClaimOptions", "DefaultPSP", "PSPOptions", "Description"}

// The fields in the alphabetical order esxcli writes them.
var satpOrder = []int{8, 9, 11, 1, 4, 3, 0, 6, 10, 7, 5, 2}

func (s *gen) satpRuleList(o *out) {
	o.s(`&lt;?xml version="1.0" encoding="UTF-8"?&gt;` + "\n" + `&lt;obj xmlns:vim25="urn:vim25" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" versionId="5.0" xsi:type="ArrayOfDataObject"&gt;` + "\n")
	for _, r := range satpRules {
		o.s(`&lt;DataObject xsi:type="VimEsxCLIstoragenmpsatprulelistSatpRule"&gt;`)
		for _, k := range satpOrder {
			o.s("&lt;")
			o.s(satpFields[k])
			o.s("&gt;")
			o.esc(r[k])
			o.s("&lt;/")
			o.s(satpFields[k])
			o.s("&gt;")
		}
		o.s(`&lt;/DataObject&gt;` + "\n")
	}
	o.s(`&lt;/obj&gt;`)
}
