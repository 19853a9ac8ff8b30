package main

import "strings"

// Alarm definitions (GetAlarm, Alarm.info) and PerformanceManager.perfCounter,
// which vslint reads to know which datastore usage alarms cover what. The
// counter ids are not vCenter's usual ones on purpose: a client must resolve
// them through perfCounter.

type alarmDef struct {
	name, systemName string
	enabled          bool
	entityType       string
	entity           string
	expr             string // the <expression> element
}

const usageCounter = 240 // disk.used.latest here

var alarmDefs = []alarmDef{
	{"Datastore usage on disk", "alarm.DatastoreDiskUsageAlarm", true, tFolder, rootFolder,
		`<expression xsi:type="OrAlarmExpression"><expression xsi:type="MetricAlarmExpression"><operator>isAbove</operator><type>Datastore</type><metric><counterId>240</counterId><instance></instance></metric><yellow>7000</yellow><red>9000</red></expression></expression>`},
	{"Host connection and power state", "alarm.HostConnectionStateAlarm", true, tFolder, rootFolder,
		`<expression xsi:type="OrAlarmExpression"><expression xsi:type="StateAlarmExpression"><operator>isEqual</operator><type>HostSystem</type><statePath>runtime.connectionState</statePath><red>notResponding</red></expression></expression>`},
	{"Cannot connect to storage", "alarm.StorageConnectivityAlarm", true, tFolder, rootFolder,
		`<expression xsi:type="OrAlarmExpression"><expression xsi:type="EventAlarmExpression"><eventType>EventEx</eventType><eventTypeId>vprob.storage.connectivity.lost</eventTypeId><objectType>HostSystem</objectType><status>red</status></expression></expression>`},
	{"Virtual machine CPU usage", "alarm.VmCPUUsageAlarm", true, tFolder, rootFolder,
		`<expression xsi:type="OrAlarmExpression"><expression xsi:type="MetricAlarmExpression"><operator>isAbove</operator><type>VirtualMachine</type><metric><counterId>2</counterId><instance></instance></metric><yellow>7500</yellow><yellowInterval>300</yellowInterval><red>9000</red><redInterval>300</redInterval></expression></expression>`},
}

// alarmProp answers one property of alarm i: the whole info, or one of its
// parts (vslint reads only the parts it uses, as a PropertyCollector allows).
func (s *gen) alarmProp(o *out, i int, p string) {
	a := alarmDefs[i]
	switch p {
	case "info":
		s.alarmInfo(o, i)
	case "info.name", "info.systemName":
		o.prop(p, "xsd:string")
		if p == "info.name" {
			o.s(a.name)
		} else {
			o.s(a.systemName)
		}
		o.endProp()
	case "info.enabled":
		o.prop(p, "xsd:boolean")
		o.b2(a.enabled)
		o.endProp()
	case "info.entity":
		o.propRef(p, a.entityType, a.entity)
	case "info.expression":
		const open = `<expression xsi:type="OrAlarmExpression">`
		o.prop(p, "OrAlarmExpression")
		o.s(strings.TrimSuffix(strings.TrimPrefix(a.expr, open), "</expression>"))
		o.endProp()
	}
}

func (s *gen) alarmInfo(o *out, i int) {
	a := alarmDefs[i]
	o.prop("info", "AlarmInfo")
	o.s("<name>")
	o.s(a.name)
	o.s("</name><systemName>")
	o.s(a.systemName)
	o.s("</systemName><description>")
	o.s(a.name)
	o.s("</description><enabled>")
	o.b2(a.enabled)
	o.s("</enabled>")
	o.s(a.expr)
	o.s("<setting><toleranceRange>0</toleranceRange><reportingFrequency>300</reportingFrequency></setting><key>")
	o.s(moref(tAlarm, i))
	o.s("</key>")
	o.ref("alarm", tAlarm, moref(tAlarm, i))
	o.ref("entity", a.entityType, a.entity)
	o.s("<lastModifiedTime>2024-01-15T10:00:00Z</lastModifiedTime><lastModifiedUser>VSPHERE.LOCAL\\Administrator</lastModifiedUser><creationEventId>0</creationEventId>")
	o.endProp()
}

// A vCenter has a few hundred counters; these groups and names, times the
// rollups, give a list of that order, with disk.used.latest at usageCounter.
var perfGroups = []struct {
	group, unit string
	names       []string
}{
	{"cpu", "percent", []string{"usage", "idle", "ready", "wait", "costop", "demand", "latency", "entitlement", "utilization", "coreUtilization"}},
	{"mem", "kiloBytes", []string{"usage", "granted", "active", "shared", "zero", "swapped", "consumed", "overhead", "vmmemctl", "compressed"}},
	{"disk", "kiloBytes", []string{"used", "provisioned", "capacity", "read", "write", "usage", "numberRead", "numberWrite", "totalLatency", "maxTotalLatency"}},
	{"net", "kiloBytesPerSecond", []string{"usage", "received", "transmitted", "packetsRx", "packetsTx", "droppedRx", "droppedTx", "bytesRx", "bytesTx", "errorsRx"}},
	{"datastore", "millisecond", []string{"read", "write", "totalReadLatency", "totalWriteLatency", "numberReadAveraged", "numberWriteAveraged", "datastoreIops", "sizeNormalizedDatastoreLatency", "datastoreReadIops", "datastoreWriteIops"}},
	{"sys", "second", []string{"uptime", "heartbeat", "resourceCpuUsage", "resourceMemConsumed", "resourceMemShared", "resourceCpuMaxLimited1", "resourceCpuMaxLimited5", "resourceMemAllocMin", "resourceMemAllocMax", "resourceFdUsage"}},
}

var perfRollups = []string{"none", "average", "minimum", "maximum", "summation", "latest"}

func perfCounters(o *out) {
	o.prop("perfCounter", "ArrayOfPerfCounterInfo")
	key := 0
	for _, g := range perfGroups {
		for _, n := range g.names {
			for _, r := range perfRollups {
				key++
				if key == usageCounter {
					// Keep the key where the alarm expects it, whatever the list's order.
					continue
				}
				perfCounter(o, key, g.group, g.unit, n, r)
			}
		}
	}
	perfCounter(o, usageCounter, "disk", "kiloBytes", "used", "latest")
	o.endProp()
}

func perfCounter(o *out, key int, group, unit, name, rollup string) {
	o.s("<PerfCounterInfo><key>")
	o.i(key)
	o.s("</key>")
	elementDescription(o, "nameInfo", name, group+" "+name, name)
	elementDescription(o, "groupInfo", group, group, group)
	elementDescription(o, "unitInfo", unit, unit, unit)
	o.s(`<rollupType>`)
	o.s(rollup)
	o.s(`</rollupType><statsType>absolute</statsType><level>1</level><perDeviceLevel>3</perDeviceLevel></PerfCounterInfo>`)
}

// elementDescription writes <tag xsi:type="ElementDescription"> with its label, summary and key.
func elementDescription(o *out, tag, label, summary, key string) {
	o.s("<" + tag + ` xsi:type="ElementDescription"><label>`)
	o.s(label)
	o.s("</label><summary>")
	o.s(summary)
	o.s("</summary><key>")
	o.s(key)
	o.s("</key></" + tag + ">")
}
