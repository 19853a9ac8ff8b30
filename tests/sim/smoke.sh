#!/bin/sh
# Smoke test for vcsim-vslint: build, start "violations" with -page-size 5,
# log in, page through RetrievePropertiesEx/ContinueRetrievePropertiesEx with
# curl, check every property path vslint reads comes back (no missingSet),
# check the emulated methods, stop with SIGTERM and check nothing is left
# behind. usage: tests/sim/smoke.sh [WORKDIR]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -ge 1 ]; then work=$1; own=0; else work=$(mktemp -d "${TMPDIR:-/tmp}/vcsim-smoke.XXXXXX"); own=1; fi
mkdir -p "$work"
bin="$work/vcsim-vslint"
fail() { echo "FAIL: $*" >&2; [ -n "${pid:-}" ] && kill "$pid" 2>/dev/null; exit 1; }

"$here/build.sh" "$bin" "$work/gocache"

tmpbase=${TMPDIR:-/tmp}
before=$(ls -1 "$tmpbase" | grep -E '^(govcsim-|vcsim-)' | grep -v '^vcsim-smoke' | sort || true)

"$bin" -scenario violations -page-size 5 -truth "$work/truth.json" >"$work/stdout" 2>"$work/stderr" &
pid=$!
i=0
while [ ! -s "$work/stdout" ]; do
	i=$((i + 1))
	[ $i -gt 300 ] && fail "simulator did not print its URL"
	kill -0 "$pid" 2>/dev/null || fail "simulator exited: $(cat "$work/stderr")"
	sleep 0.1
done
url=$(head -n 1 "$work/stdout")
case "$url" in http://127.0.0.1:*/sdk) ;; *) fail "unexpected URL line: $url" ;; esac
[ -s "$work/truth.json" ] || fail "no truth file"
echo "simulator at $url"

jar="$work/cookies"
soap() {
	curl -sS -b "$jar" -c "$jar" -H 'Content-Type: text/xml; charset=utf-8' \
		-H 'SOAPAction: urn:vim25/7.0' --data-binary @- "$url" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:vim25="urn:vim25">
<soapenv:Body>$1</soapenv:Body></soapenv:Envelope>
EOF
}
count() { grep -o "$1" | wc -l | tr -d ' '; }

# Wrong password: InvalidLogin.
soap '<vim25:Login><vim25:_this type="SessionManager">SessionManager</vim25:_this><vim25:userName>vslint</vim25:userName><vim25:password>nope</vim25:password></vim25:Login>' |
	grep -q 'InvalidLoginFault' || fail "bad password was not refused"
soap '<vim25:Login><vim25:_this type="SessionManager">SessionManager</vim25:_this><vim25:userName>vslint</vim25:userName><vim25:password>vslint-secret</vim25:password></vim25:Login>' |
	grep -q 'LoginResponse' || fail "login failed"

view() {
	soap "<vim25:CreateContainerView><vim25:_this type=\"ViewManager\">ViewManager</vim25:_this><vim25:container type=\"Folder\">group-d1</vim25:container><vim25:type>$1</vim25:type><vim25:recursive>true</vim25:recursive></vim25:CreateContainerView>" |
		sed -n 's/.*<returnval type="ContainerView">\([^<]*\)<.*/\1/p'
}
# retrieve VIEW TYPE MAXOBJECTS PATH...
retrieve() {
	v=$1 t=$2 max=$3
	shift 3
	paths=""
	for p in "$@"; do paths="$paths<vim25:pathSet>$p</vim25:pathSet>"; done
	soap "<vim25:RetrievePropertiesEx><vim25:_this type=\"PropertyCollector\">propertyCollector</vim25:_this><vim25:specSet><vim25:propSet><vim25:type>$t</vim25:type>$paths</vim25:propSet><vim25:objectSet><vim25:obj type=\"ContainerView\">$v</vim25:obj><vim25:skip>true</vim25:skip><vim25:selectSet xsi:type=\"vim25:TraversalSpec\"><vim25:name>view</vim25:name><vim25:type>ContainerView</vim25:type><vim25:path>view</vim25:path><vim25:skip>false</vim25:skip></vim25:selectSet></vim25:objectSet></vim25:specSet><vim25:options><vim25:maxObjects>$max</vim25:maxObjects></vim25:options></vim25:RetrievePropertiesEx>"
}
cont() {
	soap "<vim25:ContinueRetrievePropertiesEx><vim25:_this type=\"PropertyCollector\">propertyCollector</vim25:_this><vim25:token>$1</vim25:token></vim25:ContinueRetrievePropertiesEx>"
}
token() { sed -n 's/.*<token>\([^<]*\)<\/token>.*/\1/p'; }

# Paging: 86 VMs, maxObjects 5 -> pages of 5 with a token until the last.
vmview=$(view VirtualMachine)
[ -n "$vmview" ] || fail "CreateContainerView failed"
retrieve "$vmview" VirtualMachine 5 name >"$work/page1.xml"
[ "$(count '<objects>' <"$work/page1.xml")" = 5 ] || fail "first page does not hold 5 objects"
tok=$(token <"$work/page1.xml")
[ -n "$tok" ] || fail "no token returned"
total=5
pages=1
while [ -n "$tok" ]; do
	cont "$tok" >"$work/page.xml"
	n=$(count '<objects>' <"$work/page.xml")
	[ "$n" -ge 1 ] && [ "$n" -le 5 ] || fail "continuation page holds $n objects"
	total=$((total + n))
	pages=$((pages + 1))
	tok=$(token <"$work/page.xml")
done
want=$(sed -n 's/.*"vm": \([0-9]*\).*/\1/p' "$work/truth.json" | head -n 1)
[ "$total" = "$want" ] || fail "paged $total VMs, truth says $want"
echo "paging: $total VMs in $pages pages"
cont "$(token <"$work/page1.xml")" | grep -q 'InvalidArgumentFault' || fail "spent token not refused"
retrieve "$vmview" VirtualMachine 5 name | token >"$work/tok"
soap "<vim25:CancelRetrievePropertiesEx><vim25:_this type=\"PropertyCollector\">propertyCollector</vim25:_this><vim25:token>$(cat "$work/tok")</vim25:token></vim25:CancelRetrievePropertiesEx>" |
	grep -q 'CancelRetrievePropertiesExResponse' || fail "cancel failed"
cont "$(cat "$work/tok")" | grep -q 'InvalidArgumentFault' || fail "cancelled token still works"

# Every property vslint reads comes back, with xsi:type on polymorphic values.
check_paths() {
	t=$1
	shift
	v=$(view "$t")
	retrieve "$v" "$t" 0 "$@" >"$work/$t.xml"
	tk=$(token <"$work/$t.xml")
	while [ -n "$tk" ]; do
		cont "$tk" >"$work/page.xml"
		cat "$work/page.xml" >>"$work/$t.xml"
		tk=$(token <"$work/page.xml")
	done
	grep -q '<missingSet>' "$work/$t.xml" && fail "$t: missingSet in $(grep -o '<missingSet>.\{0,200\}' "$work/$t.xml" | head -n 1)"
	grep -q '<objects>' "$work/$t.xml" || fail "$t: no objects"
	true
}
check_paths VirtualMachine name config.hardware.device config.version config.template runtime.powerState \
	summary.runtime.faultToleranceState snapshot datastore runtime.host
check_paths Datastore name summary info vm parent
check_paths StoragePod name summary childEntity
check_paths HostSystem name parent config.network.vnic config.network.vswitch config.network.portgroup \
	config.network.pnic config.storageDevice.hostBusAdapter config.storageDevice.scsiLun \
	config.storageDevice.multipathInfo configManager.advancedOption configManager.iscsiManager
check_paths DistributedVirtualSwitch name uuid config
for ty in ParaVirtualSCSIController VirtualLsiLogicController VirtualLsiLogicSASController VirtualDiskFlatVer2BackingInfo VirtualDiskRawDiskMappingVer1BackingInfo; do
	grep -q "type=\"$ty\"" "$work/VirtualMachine.xml" || fail "no xsi:type $ty"
done
for ty in VmfsDatastoreInfo NasDatastoreInfo; do
	grep -q "type=\"$ty\"" "$work/Datastore.xml" || fail "no xsi:type $ty"
done
for ty in HostInternetScsiHba HostFibreChannelHba HostScsiDisk HostMultipathInfoFixedLogicalUnitPolicy; do
	grep -q "type=\"$ty\"" "$work/HostSystem.xml" || fail "no xsi:type $ty"
done
grep -q 'type="VMwareDVSConfigInfo"' "$work/DistributedVirtualSwitch.xml" || fail "no VMwareDVSConfigInfo"
grep -q '<maxMtu>1500</maxMtu>' "$work/DistributedVirtualSwitch.xml" || fail "no maxMtu"
grep -q 'type="VirtualMachineFaultToleranceState">running<' "$work/VirtualMachine.xml" || fail "no FT state"
echo "property paths: ok"

# esx-san-1: esxcli through vCenter; esx-san-noesxcli refuses.
hostref() { sed -n "/\"name\": \"$1\"/{x;p;d;};x" "$work/truth.json" | sed -n 's/.*"moref": "\(host-[0-9]*\)".*/\1/p' | head -n 1; }
san1=$(hostref esx-san-1)
noesx=$(hostref esx-san-noesxcli)
[ -n "$san1" ] && [ -n "$noesx" ] || fail "hosts not found in truth"
mme=$(soap "<vim25:RetrieveManagedMethodExecuter><vim25:_this type=\"HostSystem\">$san1</vim25:_this></vim25:RetrieveManagedMethodExecuter>" |
	sed -n 's/.*<returnval type="ReflectManagedMethodExecuter">\([^<]*\)<.*/\1/p')
[ -n "$mme" ] || fail "RetrieveManagedMethodExecuter failed"
esxcli() {
	soap "<vim25:ExecuteSoap><vim25:_this type=\"ReflectManagedMethodExecuter\">$1</vim25:_this><vim25:moid>ha-cli-handler-storage-nmp-device</vim25:moid><vim25:version>urn:vim25/5.0</vim25:version><vim25:method>vim.EsxCLI.storage.nmp.device.list</vim25:method></vim25:ExecuteSoap>"
}
esxcli "$mme" >"$work/esxcli.xml"
grep -q 'iops=1000' "$work/esxcli.xml" || fail "esxcli: no iops=1000 device"
grep -q 'VimEsxCLIstoragenmpdevicelistNMPDevice' "$work/esxcli.xml" || fail "esxcli: no NMPDevice"
mme2=$(soap "<vim25:RetrieveManagedMethodExecuter><vim25:_this type=\"HostSystem\">$noesx</vim25:_this></vim25:RetrieveManagedMethodExecuter>" |
	sed -n 's/.*<returnval type="ReflectManagedMethodExecuter">\([^<]*\)<.*/\1/p')
esxcli "$mme2" | grep -q 'NoPermissionFault' || fail "esx-san-noesxcli did not refuse esxcli"
soap "<vim25:QueryBoundVnics><vim25:_this type=\"IscsiManager\">iscsiManager-$(hostref esx-iscsi-a)</vim25:_this><vim25:iScsiHbaName>vmhba64</vim25:iScsiHbaName></vim25:QueryBoundVnics>" |
	grep -q '<vnicDevice>vmk1</vnicDevice>' || fail "QueryBoundVnics"
soap "<vim25:QueryOptions><vim25:_this type=\"ManagedObjectReference\">EsxHostAdvSettings-$(hostref esx-noblockdelete)</vim25:_this><vim25:name>VMFS3.EnableBlockDelete</vim25:name></vim25:QueryOptions>" |
	grep -q '<value xmlns:XMLSchema-instance="http://www.w3.org/2001/XMLSchema-instance" XMLSchema-instance:type="xsd:long">0</value>' ||
	soap "<vim25:QueryOptions><vim25:_this type=\"OptionManager\">EsxHostAdvSettings-$(hostref esx-noblockdelete)</vim25:_this><vim25:name>VMFS3.EnableBlockDelete</vim25:name></vim25:QueryOptions>" | grep -q '>0</value>' ||
	fail "QueryOptions VMFS3.EnableBlockDelete"
echo "emulated methods: ok"

kill -TERM "$pid"
wait "$pid" || fail "simulator exited with status $?"
pid=
after=$(ls -1 "$tmpbase" | grep -E '^(govcsim-|vcsim-)' | grep -v '^vcsim-smoke' | sort || true)
[ "$before" = "$after" ] || fail "temp files left behind: $after"
echo "smoke: PASS"
if [ "$own" = 1 ]; then rm -rf "$work"; fi
