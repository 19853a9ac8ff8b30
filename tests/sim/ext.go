package main

// Managed objects and methods the stock simulator does not have:
//
//   - IscsiManager (one per host) answering QueryBoundVnics;
//   - HostSystem.RetrieveManagedMethodExecuter and
//     ReflectManagedMethodExecuter.ExecuteSoap, i.e. esxcli through vCenter,
//     answering vim.EsxCLI.storage.nmp.device.list and
//     vim.EsxCLI.storage.nmp.satp.rule.list, and the commands that change a
//     host that `vslint plan` writes (esxcli_set.go);
//   - a Datastore.RefreshDatastore that keeps planted sizes (the stock one
//     overwrites capacity/freeSpace with the temp directory's statfs).
//
// Methods on HostSystem and Datastore cannot be added without replacing
// those objects in the map with another Go type, which breaks the many
// `.(*simulator.HostSystem)` assertions inside the simulator. Instead the
// HTTP handler in front of /sdk rewrites the `_this` of those few requests
// to a companion object (type VslintHostExt / VslintDatastoreExt, same
// moref value) that implements the method. Session checks, SOAP decoding,
// faults and encoding stay the stock simulator's.

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"html"
	"io/ioutil"
	"log"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"simkit"
)

// ---- IscsiManager ----

// IscsiManager is a per-host iSCSI manager. Bound maps an HBA device
// (vmhba64) to the vmknics bound to it.
type IscsiManager struct {
	mo.IscsiManager
	host  types.ManagedObjectReference
	Bound map[string][]string
}

// QueryBoundVnics answers with one IscsiPortInfo per bound vmknic.
func (m *IscsiManager) QueryBoundVnics(ctx *simulator.Context, req *types.QueryBoundVnics) soap.HasFault {
	body := &methods.QueryBoundVnicsBody{}
	h, _ := simulator.Map.Get(m.host).(*simulator.HostSystem)
	vnics, ok := m.Bound[req.IScsiHbaName]
	if !ok || h == nil {
		body.Fault_ = simulator.Fault("iSCSI HBA not found: "+req.IScsiHbaName,
			&types.NotFound{})
		return body
	}
	res := &types.QueryBoundVnicsResponse{}
	for _, dev := range vnics {
		info := types.IscsiPortInfo{VnicDevice: dev, PathStatus: "active"}
		if h.Config != nil && h.Config.Network != nil {
			for i := range h.Config.Network.Vnic {
				v := h.Config.Network.Vnic[i]
				if v.Device != dev {
					continue
				}
				info.Vnic = &v
				info.PortgroupName = v.Portgroup
				if v.Spec.DistributedVirtualPort != nil {
					info.SwitchUuid = v.Spec.DistributedVirtualPort.SwitchUuid
					info.PortgroupKey = v.Spec.DistributedVirtualPort.PortgroupKey
				}
				for _, pg := range h.Config.Network.Portgroup {
					if pg.Spec.Name == v.Portgroup {
						info.SwitchName = pg.Spec.VswitchName
					}
				}
			}
		}
		res.Returnval = append(res.Returnval, info)
	}
	body.Res = res
	return body
}

// ---- esxcli over vCenter ----

// The request/response shapes of the internal (non-public) API, as the
// vSphere Web Services SDK and govmomi's own internal package define them.

type RetrieveManagedMethodExecuterRequest struct {
	This types.ManagedObjectReference `xml:"_this"`
}

type RetrieveManagedMethodExecuterResponse struct {
	Returnval *types.ManagedObjectReference `xml:"returnval,omitempty"`
}

type retrieveManagedMethodExecuterBody struct {
	Res    *RetrieveManagedMethodExecuterResponse
	Fault_ *soap.Fault
}

func (b *retrieveManagedMethodExecuterBody) Fault() *soap.Fault { return b.Fault_ }

type ReflectManagedMethodExecuterSoapArgument struct {
	types.DynamicData

	Name string `xml:"name"`
	Val  string `xml:"val"`
}

type ExecuteSoapRequest struct {
	This     types.ManagedObjectReference               `xml:"_this"`
	Moid     string                                     `xml:"moid"`
	Version  string                                     `xml:"version"`
	Method   string                                     `xml:"method"`
	Argument []ReflectManagedMethodExecuterSoapArgument `xml:"argument,omitempty"`
}

type ReflectManagedMethodExecuterSoapFault struct {
	types.DynamicData

	FaultMsg    string `xml:"faultMsg"`
	FaultDetail string `xml:"faultDetail,omitempty"`
}

type ReflectManagedMethodExecuterSoapResult struct {
	types.DynamicData

	Response string                                 `xml:"response,omitempty"`
	Fault    *ReflectManagedMethodExecuterSoapFault `xml:"fault,omitempty"`
}

type ExecuteSoapResponse struct {
	Returnval *ReflectManagedMethodExecuterSoapResult `xml:"returnval,omitempty"`
}

type executeSoapBody struct {
	Res    *ExecuteSoapResponse
	Fault_ *soap.Fault
}

func (b *executeSoapBody) Fault() *soap.Fault { return b.Fault_ }

func init() {
	types.Add("RetrieveManagedMethodExecuter", reflect.TypeOf((*RetrieveManagedMethodExecuterRequest)(nil)).Elem())
	types.Add("ExecuteSoap", reflect.TypeOf((*ExecuteSoapRequest)(nil)).Elem())
	types.Add("ReflectManagedMethodExecuterSoapArgument", reflect.TypeOf((*ReflectManagedMethodExecuterSoapArgument)(nil)).Elem())
}

// hostExtra is what the harness knows about a host beyond mo.HostSystem.
type hostExtra struct {
	// iops is the Round Robin IOPS limit per canonical name (RR LUNs only).
	iops map[string]int
	// pspConfig is a device's PathSelectionPolicyDeviceConfig where it is
	// not what its policy and iops imply (latency or bytes Round Robin).
	pspConfig map[string]string
	// refuseEsxcli makes ExecuteSoap fail with a fault.
	refuseEsxcli bool
	// userRules are the host's SATP claim rules of RuleGroup "user"
	// (esxcli storage nmp satp rule add); the system ones are systemRules.
	userRules []satpRule
}

var hostExtras = map[types.ManagedObjectReference]*hostExtra{}

func extraFor(host types.ManagedObjectReference) *hostExtra {
	x := hostExtras[host]
	if x == nil {
		x = &hostExtra{iops: map[string]int{}, pspConfig: map[string]string{}}
		hostExtras[host] = x
	}
	return x
}

// VslintHostExt carries the HostSystem methods the stock host lacks.
type VslintHostExt struct {
	Self types.ManagedObjectReference
	host types.ManagedObjectReference
}

func (h *VslintHostExt) Reference() types.ManagedObjectReference { return h.Self }

// RetrieveManagedMethodExecuter returns the host's executer.
func (h *VslintHostExt) RetrieveManagedMethodExecuter(ctx *simulator.Context, req *RetrieveManagedMethodExecuterRequest) soap.HasFault {
	ref := types.ManagedObjectReference{Type: "ReflectManagedMethodExecuter", Value: "ha-mme-" + h.host.Value}
	return &retrieveManagedMethodExecuterBody{Res: &RetrieveManagedMethodExecuterResponse{Returnval: &ref}}
}

// ManagedMethodExecuter answers ExecuteSoap for one host.
type ManagedMethodExecuter struct {
	Self types.ManagedObjectReference
	host types.ManagedObjectReference
}

func (e *ManagedMethodExecuter) Reference() types.ManagedObjectReference { return e.Self }

const (
	nmpDeviceMoid   = "ha-cli-handler-storage-nmp-device"
	nmpDeviceMethod = "vim.EsxCLI.storage.nmp.device.list"
	satpRuleMoid    = "ha-cli-handler-storage-nmp-satp-rule"
	satpRuleMethod  = "vim.EsxCLI.storage.nmp.satp.rule.list"
)

// ExecuteSoap implements vim.EsxCLI.storage.nmp.device.list and
// vim.EsxCLI.storage.nmp.satp.rule.list.
func (e *ManagedMethodExecuter) ExecuteSoap(ctx *simulator.Context, req *ExecuteSoapRequest) soap.HasFault {
	body := &executeSoapBody{}
	x := extraFor(e.host)
	if refusesEsxcli(e.host) {
		body.Fault_ = simulator.Fault("Permission to perform this operation was denied.",
			&types.NoPermission{Object: e.host, PrivilegeId: "Host.Config.Settings"})
		return body
	}
	nmp := req.Moid == nmpDeviceMoid && req.Method == nmpDeviceMethod
	rules := req.Moid == satpRuleMoid && req.Method == satpRuleMethod
	if set := esxcliSetFor(req.Moid, req.Method); set != nil {
		return e.runCommand(req, func(h *simulator.HostSystem, args map[string]string) (string, error) {
			return esxcliTrue, set(h, x, args)
		})
	}
	if get := esxcliGetFor(req.Moid, req.Method); get != nil {
		return e.runCommand(req, func(h *simulator.HostSystem, args map[string]string) (string, error) {
			recs, err := get.run(h, x, args)
			if err != nil {
				return "", err
			}
			return renderRecords(get.list, recs), nil
		})
	}
	if !nmp && !rules {
		body.Res = &ExecuteSoapResponse{Returnval: &ReflectManagedMethodExecuterSoapResult{
			Fault: &ReflectManagedMethodExecuterSoapFault{
				FaultMsg: fmt.Sprintf("Unknown method %s on %s", req.Method, req.Moid),
			},
		}}
		return body
	}
	h, _ := simulator.Map.Get(e.host).(*simulator.HostSystem)
	if h == nil {
		body.Fault_ = simulator.Fault("", &types.ManagedObjectNotFound{Obj: e.host})
		return body
	}
	resp := ""
	if nmp {
		resp = nmpDeviceList(h, x)
	} else {
		resp = satpRuleList(x)
	}
	body.Res = &ExecuteSoapResponse{Returnval: &ReflectManagedMethodExecuterSoapResult{
		Response: resp,
	}}
	return body
}

// esxcliTrue is what a command that changes the host answers.
const esxcliTrue = `<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
	`<obj xmlns:vim25="urn:vim25" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" versionId="5.0" xsi:type="xsd:boolean">true</obj>`

// runCommand runs one emulated esxcli command (esxcli_set.go, esxcli_get.go)
// under the host's lock; its error is esxcli's message in fault.faultMsg.
func (e *ManagedMethodExecuter) runCommand(req *ExecuteSoapRequest, run func(h *simulator.HostSystem, args map[string]string) (string, error)) soap.HasFault {
	body := &executeSoapBody{}
	h, _ := simulator.Map.Get(e.host).(*simulator.HostSystem)
	if h == nil {
		body.Fault_ = simulator.Fault("", &types.ManagedObjectNotFound{Obj: e.host})
		return body
	}
	args, err := esxcliArgs(req)
	out := ""
	if err == nil {
		lock(h, func() {
			controlMu.Lock()
			defer controlMu.Unlock()
			out, err = run(h, args)
		})
	}
	res := &ReflectManagedMethodExecuterSoapResult{}
	if err != nil {
		res.Fault = &ReflectManagedMethodExecuterSoapFault{FaultMsg: err.Error()}
	} else {
		res.Response = out
	}
	body.Res = &ExecuteSoapResponse{Returnval: res}
	return body
}

// satpRule is one SATP claim rule as esxcli lists it.
type satpRule struct {
	satp, device, vendor, model, driver, transport, options string
	group, claimOptions, psp, pspOptions, description       string
}

// systemRules are a few of the claim rules every ESXi 6.7 host ships with
// (RuleGroup "system"): none gives DGC or EMC LUNs Round Robin with iops=1;
// the ALUA rule without a vendor sets MRU, the PURE one is another vendor's.
var systemRules = []satpRule{
	{satp: "VMW_SATP_ALUA", group: "system", claimOptions: "tpgs_on", psp: "VMW_PSP_MRU",
		description: "Any array with ALUA support"},
	{satp: "VMW_SATP_ALUA", vendor: "PURE", model: "FlashArray", group: "system", psp: "VMW_PSP_RR",
		pspOptions: "iops=1", description: "PURE FlashArray IO Operation Limit Rule"},
	{satp: "VMW_SATP_ALUA_CX", vendor: "DGC", group: "system", claimOptions: "tpgs_on",
		description: "CLARiiON array in ALUA mode"},
	{satp: "VMW_SATP_CX", vendor: "DGC", group: "system", claimOptions: "tpgs_off",
		description: "All non-ALUA Clariion Arrays"},
	{satp: "VMW_SATP_SYMM", vendor: "EMC", model: "SYMMETRIX", group: "system",
		description: "EMC Symmetrix"},
	{satp: "VMW_SATP_DEFAULT_AA", vendor: "IBM", model: "^2810XIV*", group: "system",
		claimOptions: "tpgs_off", psp: "VMW_PSP_RR", description: "IBM 2810XIV"},
	{satp: "VMW_SATP_DEFAULT_AA", transport: "fc", group: "system", description: "Fibre Channel Devices"},
	{satp: "VMW_SATP_LOCAL", transport: "usb", group: "system", description: "USB Devices"},
}

// hostRules is what the host's esxcli lists: its user rules, then the
// system ones.
func hostRules(x *hostExtra) []satpRule {
	return append(append([]satpRule{}, x.userRules...), systemRules...)
}

// satpRuleList renders the esxcli answer: one DataObject per claim rule,
// every field present (empty when the rule does not set it).
func satpRuleList(x *hostExtra) string {
	var b strings.Builder
	esc := html.EscapeString
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<obj xmlns:vim25="urn:vim25" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" versionId="5.0" xsi:type="ArrayOfDataObject">` + "\n")
	for _, r := range hostRules(x) {
		b.WriteString(`<DataObject xsi:type="VimEsxCLIstoragenmpsatprulelistSatpRule">`)
		for _, f := range []struct{ name, value string }{
			{"ClaimOptions", r.claimOptions}, {"DefaultPSP", r.psp}, {"Description", r.description},
			{"Device", r.device}, {"Driver", r.driver}, {"Model", r.model}, {"Name", r.satp},
			{"Options", r.options}, {"PSPOptions", r.pspOptions}, {"RuleGroup", r.group},
			{"Transport", r.transport}, {"Vendor", r.vendor},
		} {
			b.WriteString("<" + f.name + ">" + esc(f.value) + "</" + f.name + ">")
		}
		b.WriteString("</DataObject>\n")
	}
	b.WriteString("</obj>")
	return b.String()
}

// nmpDeviceList renders the esxcli answer from the host's multipath info:
// one DataObject per SAN (non-local) LUN.
func nmpDeviceList(h *simulator.HostSystem, x *hostExtra) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<obj xmlns:vim25="urn:vim25" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" versionId="5.0" xsi:type="ArrayOfDataObject">` + "\n")
	for _, l := range hostLuns(h) {
		if l.local || l.plugin != "NMP" {
			continue // esxcli's nmp namespace lists only NMP's devices
		}
		esc := html.EscapeString
		cfg := ""
		switch l.policy {
		case "VMW_PSP_RR":
			iops, ok := x.iops[l.canonical]
			if !ok {
				iops = 1000
			}
			cfg = fmt.Sprintf("{policy=rr,iops=%d,bytes=10485760,useANO=0; lastPathIndex=0: NumIOsPending=0,numBytesPending=0}", iops)
		case "VMW_PSP_FIXED":
			cfg = "{preferred=" + l.pathNames()[0] + ";current=" + l.pathNames()[0] + "}"
		case "VMW_PSP_MRU":
			cfg = "Current Path=" + l.pathNames()[0]
		}
		if c, ok := x.pspConfig[l.canonical]; ok {
			cfg = c
		}
		var working []string
		for _, p := range l.paths {
			if p.state == "active" {
				working = append(working, p.name)
			}
		}
		b.WriteString(`<DataObject xsi:type="VimEsxCLIstoragenmpdevicelistNMPDevice">`)
		b.WriteString("<Device>" + esc(l.canonical) + "</Device>")
		b.WriteString("<DeviceDisplayName>" + esc(l.displayName) + "</DeviceDisplayName>")
		b.WriteString("<IsBootUSBDevice>false</IsBootUSBDevice>")
		b.WriteString("<IsLocalSASDevice>false</IsLocalSASDevice>")
		b.WriteString("<IsUSB>false</IsUSB>")
		b.WriteString("<PathSelectionPolicy>" + esc(l.policy) + "</PathSelectionPolicy>")
		b.WriteString("<PathSelectionPolicyDeviceConfig>" + esc(cfg) + "</PathSelectionPolicyDeviceConfig>")
		b.WriteString("<PathSelectionPolicyDeviceCustomConfig></PathSelectionPolicyDeviceCustomConfig>")
		b.WriteString("<StorageArrayType>" + esc(l.satp) + "</StorageArrayType>")
		b.WriteString("<StorageArrayTypeDeviceConfig>{implicit_support=on; explicit_support=off; explicit_allow=on; alua_followover=on; action_OnRetryErrors=off;}</StorageArrayTypeDeviceConfig>")
		b.WriteString("<WorkingPaths>" + esc(strings.Join(working, ", ")) + "</WorkingPaths>")
		b.WriteString("</DataObject>\n")
	}
	b.WriteString("</obj>")
	return b.String()
}

// ---- Datastore.RefreshDatastore ----

// VslintDatastoreExt keeps planted datastore values on RefreshDatastore.
type VslintDatastoreExt struct {
	Self types.ManagedObjectReference
}

func (d *VslintDatastoreExt) Reference() types.ManagedObjectReference { return d.Self }

// RefreshDatastore succeeds without touching capacity or free space.
func (d *VslintDatastoreExt) RefreshDatastore(ctx *simulator.Context, req *types.RefreshDatastore) soap.HasFault {
	return &methods.RefreshDatastoreBody{Res: &types.RefreshDatastoreResponse{}}
}

// ---- HTTP rewrite ----

var thisRe = regexp.MustCompile(`(<(?:[A-Za-z0-9_]+:)?_this\b[^>]*\btype=")(HostSystem|Datastore)("[^>]*>)`)

// rewriteThis points _this of the emulated methods at the companion object.
func rewriteThis(body []byte) []byte {
	var to string
	switch {
	case bytes.Contains(body, []byte("RetrieveManagedMethodExecuter")):
		to = "VslintHostExt"
	case bytes.Contains(body, []byte("RefreshDatastore")):
		to = "VslintDatastoreExt"
	default:
		return body
	}
	return thisRe.ReplaceAllFunc(body, func(m []byte) []byte {
		sub := thisRe.FindSubmatch(m)
		if (to == "VslintHostExt" && string(sub[2]) != "HostSystem") ||
			(to == "VslintDatastoreExt" && string(sub[2]) != "Datastore") {
			return m
		}
		return []byte(string(sub[1]) + to + string(sub[3]))
	})
}

// faultKind and faultRead are the -fault flag (KIND:N, KIND:N:METHOD or
// KIND:N:METHOD:TYPE): the Nth property read (RetrievePropertiesEx or
// ContinueRetrievePropertiesEx, or only METHOD when given, and only reads of
// objects of TYPE when given, e.g. Alarm; counted over the run) is answered
// badly, once, the way a broken network or server would:
//
//	truncate   the first half of the answer, then the connection closes
//	malformed  the whole answer with one element's start tag broken
//	drop       the connection closes before the request is handled (as when a
//	           server closes an idle keep-alive connection just as a request
//	           arrives): a client that retries on a fresh connection loses nothing
//	http500    HTTP 500 with an HTML error page instead of SOAP
//	lose       the request is handled (a paged result moves on), then the
//	           connection closes without an answer: a client that re-sends
//	           the request gets the page after the lost one
//	stall      no answer at all until the client goes away (at most 10
//	           minutes): a read in progress, for a test that interrupts it
var (
	faultKind   string
	faultRead   int64
	faultMethod string // "" = both methods
	faultType   string // "" = reads of any type
	faultReads  int64
)

var tokenRe = regexp.MustCompile(`<(?:[A-Za-z0-9_]+:)?token>([^<]*)</`)

// readsType reports whether the property read in body is of objects of typ:
// the propSet's type of a RetrievePropertiesEx, the type its token pages
// through for a ContinueRetrievePropertiesEx.
func readsType(body []byte, cont bool, typ string) bool {
	if !cont {
		return bytes.Contains(body, []byte("<type>"+typ+"</type>"))
	}
	m := tokenRe.FindSubmatch(body)
	return m != nil && pageType(string(m[1])) == typ
}

func parseFault(s string) error {
	if s == "" {
		return nil
	}
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 4 {
		return fmt.Errorf("-fault %q: want KIND:N, KIND:N:METHOD or KIND:N:METHOD:TYPE", s)
	}
	if len(parts) == 4 {
		faultType = parts[3]
	}
	n, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil || n < 1 {
		return fmt.Errorf("-fault %q: N must be a positive number", s)
	}
	switch parts[0] {
	case "truncate", "malformed", "drop", "http500", "lose", "stall":
	default:
		return fmt.Errorf("-fault %q: KIND is truncate, malformed, drop, http500, lose or stall", s)
	}
	if len(parts) >= 3 {
		switch parts[2] {
		case "RetrievePropertiesEx", "ContinueRetrievePropertiesEx":
		default:
			return fmt.Errorf("-fault %q: METHOD is RetrievePropertiesEx or ContinueRetrievePropertiesEx", s)
		}
		faultMethod = parts[2]
	}
	faultKind, faultRead = parts[0], n
	return nil
}

// injectFault answers r badly if it is the read -fault names; false otherwise.
func injectFault(w http.ResponseWriter, r *http.Request, body []byte, next http.Handler) bool {
	cont := bytes.Contains(body, []byte("ContinueRetrievePropertiesEx"))
	first := !cont && bytes.Contains(body, []byte("RetrievePropertiesEx"))
	switch {
	case faultKind == "", !first && !cont,
		faultMethod == "RetrievePropertiesEx" && !first,
		faultMethod == "ContinueRetrievePropertiesEx" && !cont,
		faultType != "" && !readsType(body, cont, faultType):
		return false
	}
	if atomic.AddInt64(&faultReads, 1) != faultRead {
		return false
	}
	log.Printf("injecting fault %s on property read %d", faultKind, faultRead)
	if faultKind == "drop" {
		hijack(w, nil, 0)
		return true
	}
	if faultKind == "stall" {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Minute):
		}
		return true
	}
	rec := httptest.NewRecorder()
	next.ServeHTTP(rec, r)
	out := rec.Body.Bytes()
	switch faultKind {
	case "lose":
		hijack(w, nil, 0)
	case "truncate":
		hijack(w, out[:len(out)/2], len(out))
	case "malformed":
		bad := bytes.Replace(out, []byte("<propSet>"), []byte("<propSet<"), 1)
		w.Header().Set("Content-Type", "text/xml; charset=utf-8")
		w.WriteHeader(rec.Code)
		_, _ = w.Write(bad)
	case "http500":
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte("<html><body><h1>500 Internal Server Error</h1></body></html>"))
	}
	return true
}

// hijack takes the connection over, writes an HTTP header announcing length
// bytes and then only write (nothing at all when write is nil), and closes it.
func hijack(w http.ResponseWriter, write []byte, length int) {
	status := http.StatusOK
	if write == nil {
		status = 0
	}
	if conn := simkit.CutAnswer(w, status, "text/xml; charset=utf-8", write, int64(length)); conn != nil {
		_ = conn.Close()
	}
}

// gzipAnswers is the -gzip flag: SOAP answers are gzip-compressed for clients
// that send Accept-Encoding: gzip, as vCenter does.
var gzipAnswers bool

type gzipResponseWriter struct {
	http.ResponseWriter
	gz *gzip.Writer
}

func (g gzipResponseWriter) WriteHeader(code int) {
	g.Header().Del("Content-Length")
	g.Header().Set("Content-Encoding", "gzip")
	g.ResponseWriter.WriteHeader(code)
}

func (g gzipResponseWriter) Write(b []byte) (int, error) { return g.gz.Write(b) }

func wantsGzip(r *http.Request) bool {
	for _, v := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		if strings.TrimSpace(strings.SplitN(v, ";", 2)[0]) == "gzip" {
			return true
		}
	}
	return false
}

func wrapSDK(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, controlPrefix) {
			serveControl(w, r)
			return
		}
		if gzipAnswers && wantsGzip(r) {
			gz := gzip.NewWriter(w)
			defer gz.Close()
			w = gzipResponseWriter{ResponseWriter: w, gz: gz}
		}
		if r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/sdk") {
			noteSession(r)
			body, err := ioutil.ReadAll(r.Body)
			_ = r.Body.Close()
			if err != nil {
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			// The privilege check sees the call as the client made it,
			// before _this is pointed at a companion object.
			checked := body
			body = rewriteThis(body)
			r.Body = ioutil.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
			if enforce(w, r, checked, next) || invalidVersion(w, body) || injectFault(w, r, body, next) {
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// registerCompanions adds the companion objects for every host and
// datastore, and the per-host executer.
func registerCompanions() {
	for _, e := range simulator.Map.All("HostSystem") {
		ref := e.Reference()
		simulator.Map.Put(&VslintHostExt{Self: types.ManagedObjectReference{Type: "VslintHostExt", Value: ref.Value}, host: ref})
		simulator.Map.Put(&ManagedMethodExecuter{Self: types.ManagedObjectReference{Type: "ReflectManagedMethodExecuter", Value: "ha-mme-" + ref.Value}, host: ref})
	}
	for _, e := range simulator.Map.All("Datastore") {
		ref := e.Reference()
		simulator.Map.Put(&VslintDatastoreExt{Self: types.ManagedObjectReference{Type: "VslintDatastoreExt", Value: ref.Value}})
	}
}

// sortedKeys is a small helper for deterministic output.
func sortedKeys(m map[string][]string) []string {
	var k []string
	for s := range m {
		k = append(k, s)
	}
	sort.Strings(k)
	return k
}
