package main

// The esxcli commands that change a host, as ExecuteSoap answers them: the
// steps of `vslint plan` change the simulated estate through the same SOAP
// path vslint reads esxcli through (RetrieveManagedMethodExecuter, then
// ExecuteSoap with the command's moid and method), and the next poll sees
// the change. Arguments come as govc's esxcli sends them: name = the option's
// long name without dashes ("volumelabel" for --volume-label), val =
// "<name>VALUE</name>" with VALUE XML-escaped.
//
//	storage nmp device set                     device, psp
//	storage nmp psp roundrobin deviceconfig set device, type (iops|default), iops
//	storage nmp satp rule add                  satp, vendor, model, psp, pspoption
//	iscsi adapter param set                    adapter, key, value
//	iscsi adapter discovery sendtarget param set adapter, address, key, value
//	iscsi adapter target portal param set      adapter, address, name, key, value
//	network vswitch standard set               vswitchname, mtu
//	network ip interface set                   interfacename, mtu
//	system settings advanced set               option, intvalue
//	storage vmfs reclaim config set            volumelabel, reclaimpriority
//
// A set answers an empty response (real esxcli prints nothing), or a result
// whose fault.faultMsg says what was wrong, as esxcli does for a bad argument.
// Inherited iSCSI values follow their parent, as on ESXi: a target that
// inherits DelayedAck gets the adapter's (or its send target's) new value.

import (
	"fmt"
	"html"
	"regexp"
	"strconv"
	"strings"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"
)

var argRe = regexp.MustCompile(`(?s)^<([A-Za-z0-9]+)>(.*)</([A-Za-z0-9]+)>$`)

// esxcliArgs turns the SOAP arguments into name -> value.
func esxcliArgs(req *ExecuteSoapRequest) (map[string]string, error) {
	out := map[string]string{}
	for _, a := range req.Argument {
		m := argRe.FindStringSubmatch(a.Val)
		if m == nil || m[1] != a.Name || m[3] != a.Name {
			return nil, fmt.Errorf("argument %s: value %q is not <%s>...</%s>", a.Name, a.Val, a.Name, a.Name)
		}
		out[a.Name] = html.UnescapeString(m[2])
	}
	return out, nil
}

type esxcliSet func(h *simulator.HostSystem, x *hostExtra, args map[string]string) error

var esxcliSets = map[string]esxcliSet{
	"storage.nmp.device.set":                       setDevicePolicy,
	"storage.nmp.psp.roundrobin.deviceconfig.set":  setRoundRobin,
	"storage.nmp.satp.rule.add":                    addSatpRule,
	"iscsi.adapter.param.set":                      setIscsiParam,
	"iscsi.adapter.discovery.sendtarget.param.set": setIscsiParam,
	"iscsi.adapter.target.portal.param.set":        setIscsiParam,
	"network.vswitch.standard.set":                 setVswitch,
	"network.ip.interface.set":                     setVmknic,
	"system.settings.advanced.set":                 setAdvanced,
	"storage.vmfs.reclaim.config.set":              setReclaim,
}

// esxcliSetFor is the handler of a moid/method pair, or nil: the moid must be
// the method's namespace, as on ESXi.
func esxcliSetFor(moid, method string) esxcliSet {
	cmd := strings.TrimPrefix(method, "vim.EsxCLI.")
	f := esxcliSets[cmd]
	if f == nil || cmd == method {
		return nil
	}
	ns := cmd[:strings.LastIndex(cmd, ".")]
	if moid != "ha-cli-handler-"+strings.ReplaceAll(ns, ".", "-") {
		return nil
	}
	return f
}

func need(args map[string]string, names ...string) error {
	for _, n := range names {
		if args[n] == "" {
			return fmt.Errorf("Missing required parameter %s", n)
		}
	}
	return nil
}

// multipathLun is the multipath entry of the disk device, or esxcli's error for an unknown one.
func multipathLun(h *simulator.HostSystem, device string) (*types.HostMultipathInfoLogicalUnit, error) {
	sd := h.Config.StorageDevice
	key := ""
	for _, l := range sd.ScsiLun {
		if d, ok := l.(*types.HostScsiDisk); ok && d.CanonicalName == device {
			key = d.Key
		}
	}
	for i := range sd.MultipathInfo.Lun {
		if key != "" && sd.MultipathInfo.Lun[i].Lun == key {
			return &sd.MultipathInfo.Lun[i], nil
		}
	}
	return nil, fmt.Errorf("Unknown device %s", device)
}

// rrDevice is the multipath entry of args' device, which must use Round Robin.
func rrDevice(h *simulator.HostSystem, args map[string]string) (*types.HostMultipathInfoLogicalUnit, error) {
	if err := need(args, "device"); err != nil {
		return nil, err
	}
	lu, err := multipathLun(h, args["device"])
	if err != nil {
		return nil, err
	}
	if lu.Policy == nil || lu.Policy.GetHostMultipathInfoLogicalUnitPolicy().Policy != "VMW_PSP_RR" {
		return nil, fmt.Errorf("Device %s is not using the Round Robin path selection policy", args["device"])
	}
	return lu, nil
}

func setDevicePolicy(h *simulator.HostSystem, x *hostExtra, args map[string]string) error {
	if err := need(args, "device", "psp"); err != nil {
		return err
	}
	switch args["psp"] {
	case "VMW_PSP_RR", "VMW_PSP_MRU", "VMW_PSP_FIXED":
	default:
		return fmt.Errorf("Unable to set PSP: %s is not a PSP", args["psp"])
	}
	lu, err := multipathLun(h, args["device"])
	if err != nil {
		return err
	}
	lu.Policy = &types.HostMultipathInfoLogicalUnitPolicy{Policy: args["psp"]}
	delete(x.pspConfig, args["device"]) // a new policy has its own configuration
	if args["psp"] == "VMW_PSP_RR" {
		if _, ok := x.iops[args["device"]]; !ok {
			x.iops[args["device"]] = 1000 // Round Robin's default
		}
	} else {
		delete(x.iops, args["device"])
	}
	return nil
}

func setRoundRobin(h *simulator.HostSystem, x *hostExtra, args map[string]string) error {
	if err := need(args, "device", "type"); err != nil {
		return err
	}
	if _, err := rrDevice(h, args); err != nil {
		return err
	}
	switch args["type"] {
	case "default":
		x.iops[args["device"]] = 1000
	case "iops":
		n, err := strconv.Atoi(args["iops"])
		if err != nil || n < 1 {
			return fmt.Errorf("Invalid IOPS limit %q", args["iops"])
		}
		x.iops[args["device"]] = n
	default:
		return fmt.Errorf("Limit type %q is not emulated", args["type"])
	}
	// No longer switching by bytes or latency.
	delete(x.pspConfig, args["device"])
	return nil
}

func addSatpRule(h *simulator.HostSystem, x *hostExtra, args map[string]string) error {
	if err := need(args, "satp"); err != nil {
		return err
	}
	r := satpRule{satp: args["satp"], vendor: args["vendor"], model: args["model"],
		device: args["device"], driver: args["driver"], transport: args["transport"],
		claimOptions: args["claimoption"], psp: args["psp"], pspOptions: args["pspoption"],
		options: args["option"], description: args["description"], group: "user"}
	for _, o := range x.userRules {
		if o == r {
			return fmt.Errorf("Error adding SATP user rule: Duplicate user rule found for SATP %s", r.satp)
		}
	}
	x.userRules = append(x.userRules, r)
	return nil
}

// iscsiAdapter is the iSCSI adapter args name (-A), or esxcli's error.
func iscsiAdapter(h *simulator.HostSystem, args map[string]string) (*types.HostInternetScsiHba, error) {
	if err := need(args, "adapter"); err != nil {
		return nil, err
	}
	for _, a := range h.Config.StorageDevice.HostBusAdapter {
		if b, ok := a.(*types.HostInternetScsiHba); ok && b.Device == args["adapter"] {
			return b, nil
		}
	}
	return nil, fmt.Errorf("Unknown iSCSI adapter %s", args["adapter"])
}

// setOption sets key in opts (own value, not inherited); false if absent.
func setOption(opts []types.HostInternetScsiHbaParamValue, key string, v interface{}) bool {
	for i := range opts {
		if opts[i].Key == key {
			opts[i].Value = v
			opts[i].IsInherited = types.NewBool(false)
			return true
		}
	}
	return false
}

// follow gives the targets that inherit key the value v.
func follow(opts []types.HostInternetScsiHbaParamValue, key string, v interface{}) {
	for i := range opts {
		if opts[i].Key == key && opts[i].IsInherited != nil && *opts[i].IsInherited {
			opts[i].Value = v
		}
	}
}

func portal(address string, port int32) string { return fmt.Sprintf("%s:%d", address, port) }

func setIscsiParam(h *simulator.HostSystem, x *hostExtra, args map[string]string) error {
	if err := need(args, "adapter", "key", "value"); err != nil {
		return err
	}
	b, err := iscsiAdapter(h, args)
	if err != nil {
		return err
	}
	var v interface{} = args["value"]
	if args["key"] == "DelayedAck" {
		switch args["value"] {
		case "true", "false":
			v = args["value"] == "true"
		default:
			return fmt.Errorf("Invalid value %q for DelayedAck", args["value"])
		}
	}
	key, addr, name := args["key"], args["address"], args["name"]
	switch {
	case addr == "": // the adapter
		if !setOption(b.AdvancedOptions, key, v) {
			return fmt.Errorf("Unknown parameter %s", key)
		}
		for i := range b.ConfiguredSendTarget {
			follow(b.ConfiguredSendTarget[i].AdvancedOptions, key, v)
		}
		for i := range b.ConfiguredStaticTarget {
			if b.ConfiguredStaticTarget[i].Parent == b.Device || b.ConfiguredStaticTarget[i].Parent == "" {
				follow(b.ConfiguredStaticTarget[i].AdvancedOptions, key, v)
			}
		}
	case name == "": // a send target, and the static targets it found
		found := false
		for i := range b.ConfiguredSendTarget {
			t := &b.ConfiguredSendTarget[i]
			if portal(t.Address, t.Port) == addr {
				found = setOption(t.AdvancedOptions, key, v)
			}
		}
		if !found {
			return fmt.Errorf("Unknown send target %s on %s", addr, b.Device)
		}
		for i := range b.ConfiguredStaticTarget {
			if b.ConfiguredStaticTarget[i].Parent == addr {
				follow(b.ConfiguredStaticTarget[i].AdvancedOptions, key, v)
			}
		}
	default: // one static target
		found := false
		for i := range b.ConfiguredStaticTarget {
			t := &b.ConfiguredStaticTarget[i]
			if portal(t.Address, t.Port) == addr && t.IScsiName == name {
				found = setOption(t.AdvancedOptions, key, v)
			}
		}
		if !found {
			return fmt.Errorf("Unknown target %s %s on %s", addr, name, b.Device)
		}
	}
	return nil
}

// setMTU sets the MTU args give (-m) on the object args[arg] names, through set (false: there
// is none of that name, esxcli's "Unknown what NAME").
func setMTU(args map[string]string, arg, what string, set func(name string, mtu int32) bool) error {
	if err := need(args, arg); err != nil {
		return err
	}
	n, err := strconv.Atoi(args["mtu"])
	if err != nil || n < 1280 || n > 9000 {
		return fmt.Errorf("Invalid MTU %q", args["mtu"])
	}
	if !set(args[arg], int32(n)) {
		return fmt.Errorf("Unknown %s %s", what, args[arg])
	}
	return nil
}

func setVswitch(h *simulator.HostSystem, x *hostExtra, args map[string]string) error {
	return setMTU(args, "vswitchname", "virtual switch", func(name string, mtu int32) bool {
		for i := range h.Config.Network.Vswitch {
			if s := &h.Config.Network.Vswitch[i]; s.Name == name {
				s.Mtu, s.Spec.Mtu = mtu, mtu
				return true
			}
		}
		return false
	})
}

func setVmknic(h *simulator.HostSystem, x *hostExtra, args map[string]string) error {
	return setMTU(args, "interfacename", "interface", func(name string, mtu int32) bool {
		for i := range h.Config.Network.Vnic {
			if v := &h.Config.Network.Vnic[i]; v.Device == name {
				v.Spec.Mtu = mtu
				return true
			}
		}
		return false
	})
}

func setAdvanced(h *simulator.HostSystem, x *hostExtra, args map[string]string) error {
	if err := need(args, "option", "intvalue"); err != nil {
		return err
	}
	n, err := strconv.ParseInt(args["intvalue"], 10, 64)
	if err != nil {
		return fmt.Errorf("Invalid integer value %q", args["intvalue"])
	}
	key := strings.ReplaceAll(strings.TrimPrefix(args["option"], "/"), "/", ".")
	om, _ := simulator.Map.Get(*h.ConfigManager.AdvancedOption).(*simulator.OptionManager)
	if om == nil {
		return fmt.Errorf("no option manager")
	}
	for _, s := range om.Setting {
		if o := s.GetOptionValue(); o.Key == key {
			o.Value = n
			return nil
		}
	}
	return fmt.Errorf("Unable to find option %s", args["option"])
}

func setReclaim(h *simulator.HostSystem, x *hostExtra, args map[string]string) error {
	if err := need(args, "volumelabel", "reclaimpriority"); err != nil {
		return err
	}
	switch args["reclaimpriority"] {
	case "none", "low", "medium", "high":
	default:
		return fmt.Errorf("Invalid reclaim priority %q", args["reclaimpriority"])
	}
	for _, e := range simulator.Map.All("Datastore") {
		ds := e.(*simulator.Datastore)
		info, ok := ds.Info.(*types.VmfsDatastoreInfo)
		if !ok || info.Vmfs == nil || ds.Name != args["volumelabel"] {
			continue
		}
		mounted := false
		for _, m := range ds.Host {
			mounted = mounted || m.Key == h.Self
		}
		if !mounted {
			return fmt.Errorf("Volume %s is not mounted on this host", args["volumelabel"])
		}
		lock(ds, func() { info.Vmfs.UnmapPriority = args["reclaimpriority"] })
		return nil
	}
	return fmt.Errorf("Unable to find volume %s", args["volumelabel"])
}
