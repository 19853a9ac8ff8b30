package main

// The esxcli reads a `vslint plan` step makes before it changes anything,
// as ExecuteSoap answers them: a list is an ArrayOfDataObject of records, a
// get one record, each field an element named as esxcli's structure names
// it (the keyvalue formatter prints STRUCT.FIELD.TYPE=VALUE from these).
//
//	storage nmp psp roundrobin deviceconfig get   device
//	iscsi adapter param get                       adapter
//	iscsi adapter discovery sendtarget param get  adapter, address
//	iscsi adapter target portal param get         adapter, address, name
//	network vswitch standard list                 [vswitchname]
//	network ip interface list
//	system settings advanced list                 [option]
//	storage vmfs reclaim config get               volumelabel
//
// (storage nmp device list and storage nmp satp rule list are ext.go's.)

import (
	"fmt"
	"html"
	"strings"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"
)

type field struct{ name, value string }

// record is one esxcli structure: its type name and fields in order.
type record struct {
	typ    string
	fields []field
}

type esxcliGet struct {
	list bool // an array of records, else one
	run  func(h *simulator.HostSystem, x *hostExtra, args map[string]string) ([]record, error)
}

var esxcliGets = map[string]esxcliGet{
	"storage.nmp.psp.roundrobin.deviceconfig.get":  {false, getRoundRobin},
	"iscsi.adapter.param.get":                      {true, getIscsiParams},
	"iscsi.adapter.discovery.sendtarget.param.get": {true, getIscsiParams},
	"iscsi.adapter.target.portal.param.get":        {true, getIscsiParams},
	"network.vswitch.standard.list":                {true, listVswitches},
	"network.ip.interface.list":                    {true, listVmknics},
	"system.settings.advanced.list":                {true, listAdvanced},
	"storage.vmfs.reclaim.config.get":              {false, getReclaim},
}

// esxcliGetFor is the read of a moid/method pair, or nil.
func esxcliGetFor(moid, method string) *esxcliGet {
	cmd := strings.TrimPrefix(method, "vim.EsxCLI.")
	g, ok := esxcliGets[cmd]
	if !ok || cmd == method {
		return nil
	}
	ns := cmd[:strings.LastIndex(cmd, ".")]
	if moid != "ha-cli-handler-"+strings.ReplaceAll(ns, ".", "-") {
		return nil
	}
	return &g
}

// renderRecords writes the escaped document ExecuteSoap returns.
func renderRecords(list bool, recs []record) string {
	var b strings.Builder
	esc := html.EscapeString
	head := `<obj xmlns:vim25="urn:vim25" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" versionId="5.0" xsi:type="%s">`
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	fields := func(r record) {
		for _, f := range r.fields {
			b.WriteString("<" + f.name + ">" + esc(f.value) + "</" + f.name + ">")
		}
	}
	if list {
		fmt.Fprintf(&b, head, "ArrayOfDataObject")
		for _, r := range recs {
			b.WriteString(`<DataObject xsi:type="` + r.typ + `">`)
			fields(r)
			b.WriteString("</DataObject>\n")
		}
	} else {
		fmt.Fprintf(&b, head, recs[0].typ)
		fields(recs[0])
	}
	b.WriteString("</obj>")
	return b.String()
}

func getRoundRobin(h *simulator.HostSystem, x *hostExtra, args map[string]string) ([]record, error) {
	if _, err := rrDevice(h, args); err != nil {
		return nil, err
	}
	iops, ok := x.iops[args["device"]]
	typ := "Iops"
	if !ok || iops == 1000 {
		iops, typ = 1000, "Default"
	}
	// A device switching by bytes or latency says so, whatever its IOPS limit.
	if cfg := x.pspConfig[args["device"]]; strings.Contains(cfg, "policy=bytes") {
		typ = "Bytes"
	} else if strings.Contains(cfg, "policy=latency") {
		typ = "Latency"
	}
	return []record{{"VimEsxCLIstoragenmppsproundrobindeviceconfiggetRoundRobinConfig", []field{
		{"ByteLimit", "10485760"}, {"Device", args["device"]},
		{"IOOperationLimit", fmt.Sprint(iops)}, {"LimitType", typ},
		{"UseActiveUnoptimizedPaths", "false"}}}}, nil
}

func optionValue(v interface{}) string { return fmt.Sprint(v) }

func paramRecords(opts []types.HostInternetScsiHbaParamValue) []record {
	var out []record
	for _, o := range opts {
		inherit := o.IsInherited != nil && *o.IsInherited
		out = append(out, record{"VimEsxCLIiscsiadapterparamgetParameter", []field{
			{"Current", optionValue(o.Value)}, {"Default", optionValue(o.Value)},
			{"ID", o.Key}, {"Inherit", fmt.Sprint(inherit)}, {"Max", "na"}, {"Min", "na"},
			{"Name", o.Key}, {"Settable", "true"}}})
	}
	return out
}

func getIscsiParams(h *simulator.HostSystem, x *hostExtra, args map[string]string) ([]record, error) {
	b, err := iscsiAdapter(h, args)
	if err != nil {
		return nil, err
	}
	addr, name := args["address"], args["name"]
	switch {
	case addr == "":
		return paramRecords(b.AdvancedOptions), nil
	case name == "":
		for _, t := range b.ConfiguredSendTarget {
			if portal(t.Address, t.Port) == addr {
				return paramRecords(t.AdvancedOptions), nil
			}
		}
		return nil, fmt.Errorf("Unknown send target %s on %s", addr, b.Device)
	default:
		for _, t := range b.ConfiguredStaticTarget {
			if portal(t.Address, t.Port) == addr && t.IScsiName == name {
				return paramRecords(t.AdvancedOptions), nil
			}
		}
		return nil, fmt.Errorf("Unknown target %s %s on %s", addr, name, b.Device)
	}
}

func listVswitches(h *simulator.HostSystem, x *hostExtra, args map[string]string) ([]record, error) {
	var out []record
	for _, s := range h.Config.Network.Vswitch {
		if args["vswitchname"] != "" && s.Name != args["vswitchname"] {
			continue
		}
		out = append(out, record{"VimEsxCLInetworkvswitchstandardlistVirtualSwitch", []field{
			{"Name", s.Name}, {"Class", "cswitch"}, {"NumPorts", fmt.Sprint(s.NumPorts)},
			{"MTU", fmt.Sprint(s.Mtu)}, {"CDPStatus", "listen"}}})
	}
	if args["vswitchname"] != "" && out == nil {
		return nil, fmt.Errorf("Unknown virtual switch %s", args["vswitchname"])
	}
	return out, nil
}

func listVmknics(h *simulator.HostSystem, x *hostExtra, args map[string]string) ([]record, error) {
	var out []record
	for _, v := range h.Config.Network.Vnic {
		mtu := v.Spec.Mtu
		if mtu == 0 {
			mtu = 1500
		}
		out = append(out, record{"VimEsxCLInetworkipinterfacelistInterface", []field{
			{"Name", v.Device}, {"MACAddress", v.Spec.Mac}, {"Enabled", "true"},
			{"Portgroup", v.Portgroup}, {"NetstackInstance", "defaultTcpipStack"},
			{"MTU", fmt.Sprint(mtu)}}})
	}
	return out, nil
}

func listAdvanced(h *simulator.HostSystem, x *hostExtra, args map[string]string) ([]record, error) {
	om, _ := simulator.Map.Get(*h.ConfigManager.AdvancedOption).(*simulator.OptionManager)
	if om == nil {
		return nil, fmt.Errorf("no option manager")
	}
	var out []record
	for _, s := range om.Setting {
		o := s.GetOptionValue()
		path := "/" + strings.ReplaceAll(o.Key, ".", "/")
		if args["option"] != "" && path != args["option"] {
			continue
		}
		r := record{"VimEsxCLIsystemsettingsadvancedlistOption", []field{{"Path", path}}}
		switch v := o.Value.(type) {
		case int64, int32, int:
			r.fields = append(r.fields, field{"Type", "integer"}, field{"IntValue", fmt.Sprint(v)})
		default:
			r.fields = append(r.fields, field{"Type", "string"}, field{"StringValue", fmt.Sprint(v)})
		}
		out = append(out, r)
	}
	if args["option"] != "" && out == nil {
		return nil, fmt.Errorf("Unable to find option %s", args["option"])
	}
	return out, nil
}

func getReclaim(h *simulator.HostSystem, x *hostExtra, args map[string]string) ([]record, error) {
	if err := need(args, "volumelabel"); err != nil {
		return nil, err
	}
	for _, e := range simulator.Map.All("Datastore") {
		ds := e.(*simulator.Datastore)
		info, ok := ds.Info.(*types.VmfsDatastoreInfo)
		if !ok || info.Vmfs == nil || ds.Name != args["volumelabel"] {
			continue
		}
		prio := info.Vmfs.UnmapPriority
		if prio == "" {
			prio = "low" // VMFS6's default
		}
		return []record{{"VimEsxCLIstoragevmfsreclaimconfiggetReclaimConfig", []field{
			{"ReclaimGranularity", "1048576"}, {"ReclaimMethod", "priority"},
			{"ReclaimPriority", prio}, {"ReclaimBandwidth", "0"}}}}, nil
	}
	return nil, fmt.Errorf("Unable to find volume %s", args["volumelabel"])
}
