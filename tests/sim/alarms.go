package main

// AlarmManager and Alarm objects, which vcsim 0.24.2 lacks (its service
// content names an AlarmManager that has no methods): GetAlarm lists the
// alarm definitions (all of them without an entity, else those defined on
// that entity), and each Alarm's "info" (AlarmInfo: name, enabled, the entity
// it is defined on, its expression) is read through the property collector
// like any other property. Metric conditions name their counter by the
// counterId the simulator's PerformanceManager gives the counter here; as on
// a real vCenter, vslint has to resolve it (QueryPerfCounter) to know what an
// alarm watches.
//
// -refuse-alarms makes GetAlarm fail with NoPermission, as for an account
// without the right to read alarms: vslint must record a gap, not "no alarm".

import (
	"flag"
	"fmt"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

var refuseAlarms = flag.Bool("refuse-alarms", false, "GetAlarm fails with NoPermission")

// AlarmManager answers GetAlarm from its list of alarm definitions.
type AlarmManager struct {
	mo.AlarmManager
	alarms []types.ManagedObjectReference
}

// GetAlarm lists the alarms defined on req.Entity, or every alarm without one.
func (m *AlarmManager) GetAlarm(ctx *simulator.Context, req *types.GetAlarm) soap.HasFault {
	body := &methods.GetAlarmBody{}
	if *refuseAlarms {
		body.Fault_ = simulator.Fault("Permission to perform this operation was denied.",
			&types.NoPermission{Object: m.Self, PrivilegeId: "System.View"})
		return body
	}
	res := &types.GetAlarmResponse{}
	for _, ref := range m.alarms {
		a, ok := simulator.Map.Get(ref).(*Alarm)
		if ok && (req.Entity == nil || a.Info.Entity == *req.Entity) {
			res.Returnval = append(res.Returnval, ref)
		}
	}
	body.Res = res
	return body
}

// Alarm is one alarm definition; the property collector serves its info.
type Alarm struct {
	mo.Alarm
}

// alarmManager returns the harness's AlarmManager, replacing the stock
// object of the service content's moref on first use.
func alarmManager() *AlarmManager {
	ref := *vpxServiceContent().AlarmManager
	if m, ok := simulator.Map.Get(ref).(*AlarmManager); ok {
		return m
	}
	m := &AlarmManager{}
	m.Self = ref
	simulator.Map.Put(m)
	return m
}

// counterID is the key of the PerformanceManager's counter group.name.rollup.
func counterID(group, name, rollup string) int32 {
	pm := simulator.Map.Get(*vpxServiceContent().PerfManager).(*simulator.PerformanceManager)
	for _, c := range pm.PerfCounter {
		if c.GroupInfo.GetElementDescription().Key == group &&
			c.NameInfo.GetElementDescription().Key == name && string(c.RollupType) == rollup {
			return c.Key
		}
	}
	panic(fmt.Sprintf("no performance counter %s.%s.%s", group, name, rollup))
}

// metric is a MetricAlarmExpression on a datastore counter; 0 leaves a
// threshold unset.
func metric(name string, yellow, red int32) types.BaseAlarmExpression {
	return &types.MetricAlarmExpression{
		Operator: types.MetricAlarmOperatorIsAbove,
		Type:     "Datastore",
		Metric:   types.PerfMetricId{CounterId: counterID("disk", name, "latest")},
		Yellow:   yellow,
		Red:      red,
	}
}

// usage is the condition of vCenter's "Datastore usage on disk" alarm, in
// hundredths of a percent (7500 = 75 %).
func usage(yellow, red int32) types.BaseAlarmExpression { return metric("used", yellow, red) }

// inaccessible is a state condition: red when the datastore is inaccessible.
func inaccessible() types.BaseAlarmExpression {
	return &types.StateAlarmExpression{Operator: types.StateAlarmOperatorIsEqual, Type: "Datastore",
		StatePath: "summary.accessible", Red: "false"}
}

// anyOf is the OrAlarmExpression vCenter wraps an alarm's triggers in.
func anyOf(e ...types.BaseAlarmExpression) types.BaseAlarmExpression {
	return &types.OrAlarmExpression{Expression: e}
}

// addAlarm defines an alarm on entity.
func (w *world) addAlarm(entity mo.Reference, name, systemName string, enabled bool,
	expr types.BaseAlarmExpression) *Alarm {
	m := alarmManager()
	a := &Alarm{}
	a.Self.Type = "Alarm"
	simulator.Map.Put(a) // assigns alarm-N
	lock(a, func() {
		a.Info = types.AlarmInfo{
			AlarmSpec: types.AlarmSpec{Name: name, SystemName: systemName, Enabled: enabled,
				Description: name, Expression: expr,
				Setting: &types.AlarmSetting{ReportingFrequency: 300}},
			Key: a.Self.Value, Alarm: a.Self, Entity: entity.Reference(),
			LastModifiedTime: w.now, LastModifiedUser: "VSPHERE.LOCAL\\Administrator",
		}
	})
	lock(m, func() { m.alarms = append(m.alarms, a.Self) })
	return a
}

// alarmNamed finds an alarm by name.
func alarmNamed(name string) *Alarm {
	for _, ref := range alarmManager().alarms {
		if a := simulator.Map.Get(ref).(*Alarm); a.Info.Name == name {
			return a
		}
	}
	panic("no alarm " + name)
}

// rootFolder is the inventory's root ("Datacenters").
func (w *world) rootFolder() *simulator.Folder {
	return simulator.Map.Get(w.c.ServiceContent.RootFolder).(*simulator.Folder)
}

// plantCleanAlarms gives an estate vCenter's default datastore usage alarm at
// the root, set to vslint's thresholds (70 % / 90 % used), and a host alarm
// with no datastore condition at all.
func plantCleanAlarms(w *world) {
	root := w.rootFolder()
	w.addAlarm(root, "Datastore usage on disk", "alarm.DatastoreDiskUsageAlarm", true,
		anyOf(usage(7000, 9000)))
	w.addAlarm(root, "Host connection and power state", "alarm.HostConnectionStateAlarm", true,
		anyOf(&types.StateAlarmExpression{Operator: types.StateAlarmOperatorIsEqual,
			Type: "HostSystem", StatePath: "runtime.connectionState", Red: "notResponding"}))
}

// plantViolationAlarms: see the datastore-alarms section of
// scenario_violations.go's header.
func plantViolationAlarms(w *world) {
	def := alarmNamed("Datastore usage on disk")
	lock(def, func() {
		def.Info.Enabled = false
		def.Info.Expression = anyOf(usage(7500, 8500))
	})
	w.addAlarm(w.dc, "Datastore usage (DC0)", "", true, anyOf(usage(7000, 9000)))

	dcObj, err := object.NewRootFolder(w.c).CreateDatacenter(w.ctx, "DC-remote")
	must(err)
	dc := simulator.Map.Get(dcObj.Reference()).(*simulator.Datacenter)
	folders, err := dcObj.Folders(w.ctx)
	must(err)
	top := simulator.Map.Get(folders.DatastoreFolder.Reference()).(*simulator.Folder)
	sub := func(parent *simulator.Folder, name string) *simulator.Folder {
		f, err := object.NewFolder(w.c, parent.Self).CreateFolder(w.ctx, name)
		must(err)
		return simulator.Map.Get(f.Reference()).(*simulator.Folder)
	}
	c := 600 * GiB
	// ds puts a datastore (mounted nowhere: DC0's hosts cannot see DC-remote)
	// into folder, or into pod when pod is set.
	ds := func(name string, folder *simulator.Folder, pod *simulator.StoragePod) *simulator.Datastore {
		d := w.addDatastore(dsSpec{name: name, capacity: c, free: pct(c, 50), pod: pod})
		w.moveToDatacenter(d, dc, folder)
		return d
	}

	ds("ds-alarm-disabled", top, nil)

	high := sub(top, "fld-alarm-high")
	w.addAlarm(high, "Datastore usage (lax)", "", true, anyOf(usage(8000, 9500), inaccessible()))
	ds("ds-alarm-high", high, nil)

	prov := ds("ds-alarm-provisioned", top, nil)
	w.addAlarm(prov, "Datastore overcommitment", "", true, anyOf(metric("provisioned", 7000, 9000)))

	and := ds("ds-alarm-and", top, nil)
	w.addAlarm(and, "Datastore usage while accessible", "", true,
		&types.AndAlarmExpression{Expression: []types.BaseAlarmExpression{usage(7000, 9000),
			&types.StateAlarmExpression{Operator: types.StateAlarmOperatorIsEqual, Type: "Datastore",
				StatePath: "summary.accessible", Red: "true"}}})

	ok := sub(top, "fld-alarm-ok")
	w.addAlarm(ok, "Datastore usage (remote)", "", true, anyOf(usage(7000, 9000)))
	ds("ds-alarm-folder-ok", ok, nil)
	ds("ds-alarm-nested-ok", sub(ok, "fld-alarm-ok-sub"), nil)

	own := ds("ds-alarm-own-ok", top, nil)
	w.addAlarm(own, "Datastore usage (own)", "", true, anyOf(usage(6500, 8500)))

	p, err := object.NewFolder(w.c, top.Self).CreateStoragePod(w.ctx, "pod-alarm")
	must(err)
	pod := simulator.Map.Get(p.Reference()).(*simulator.StoragePod)
	lock(pod, func() { pod.Summary.Name = "pod-alarm" })
	w.pods["pod-alarm"] = pod
	w.addAlarm(pod, "Datastore usage (pod)", "", true, anyOf(usage(7000, 9000)))
	ds("ds-alarm-pod-ok", nil, pod)

	split := ds("ds-alarm-split", top, nil)
	w.addAlarm(split, "Datastore usage warning", "", true, anyOf(usage(7000, 0)))
	w.addAlarm(split, "Datastore usage critical", "", true, anyOf(usage(0, 9000)))
}

// moveToDatacenter moves a datastore that addDatastore put in DC0 to dc:
// into folder, or (folder nil) leaving it in the datastore cluster it is in.
func (w *world) moveToDatacenter(d *simulator.Datastore, dc *simulator.Datacenter, folder *simulator.Folder) {
	lock(w.dc, func() { w.dc.Datastore = without(w.dc.Datastore, d.Self) })
	lock(dc, func() { dc.Datastore = append(dc.Datastore, d.Self) })
	if folder == nil {
		return
	}
	old := simulator.Map.Get(*d.Parent).(*simulator.Folder)
	lock(old, func() { old.ChildEntity = without(old.ChildEntity, d.Self) })
	lock(folder, func() { folder.ChildEntity = append(folder.ChildEntity, d.Self) })
	lock(d, func() { d.Parent = &folder.Self })
}

func without(refs []types.ManagedObjectReference, r types.ManagedObjectReference) []types.ManagedObjectReference {
	var out []types.ManagedObjectReference
	for _, x := range refs {
		if x != r {
			out = append(out, x)
		}
	}
	return out
}
