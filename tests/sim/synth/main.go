// Command vcsim-synth answers the vSphere SOAP calls vslint (and a govmomi
// client) make, for a generated estate of any size: every object is computed
// from its index and the seed when a page is written, so memory does not
// grow with the estate. See README.md.
package main

import (
	"bufio"
	"compress/gzip"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/ioutil"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"simkit"
)

// gen renders objects of one state of the estate.
type gen struct {
	e   *estate
	now time.Time
}

type segment struct {
	typ    string
	lo, hi int
}

type cursor struct {
	segs     []segment
	paths    map[string][]string // by object type
	pageSize int
}

type server struct {
	user, password string
	gzip           bool
	pageCap        int

	mu       sync.Mutex
	g        *gen
	sessions map[string]bool
	views    map[string]string // view moref -> type
	tokens   map[string]*cursor
	next     int64

	requests, bytes int64 // atomic: SOAP requests answered, XML bytes written
	// atomic: RetrievePropertiesEx calls over a ContainerView (a full read)
	// and over objects named by moref (what an incremental round re-reads)
	retrieveView, retrieveObjects int64
	// atomic: milliseconds each per-host read (QueryOptions, QueryBoundVnics,
	// ExecuteSoap) waits before its answer (POST /synth/delay): a test stops
	// the daemon while a round's host reads are in flight, not before or after
	hostReadDelayMs int64

	pcs collectors // property collectors and their filters (filters.go)
}

func itoa(i int) string { return strconv.Itoa(i) }

func (s *server) cur() *gen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.g
}

func (s *server) newID() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	return s.next
}

const serviceVersions = `<?xml version="1.0" encoding="UTF-8" ?>
<namespaces version="1.0">
 <namespace>
  <name>urn:vim25</name>
  <version>7.0.3.0</version>
  <priorVersions>
   <version>6.7</version>
   <version>6.5</version>
  </priorVersions>
 </namespace>
</namespaces>
`

func main() {
	vms := flag.Int("vms", 300, "number of VMs")
	seed := flag.Uint64("seed", 1, "seed: the same seed and sizes give the same estate")
	vmsPerHost := flag.Int("vms-per-host", 100, "VMs per host")
	hostsPerCluster := flag.Int("hosts-per-cluster", 16, "hosts per cluster")
	vmsPerDS := flag.Int("vms-per-datastore", 25, "VMs per datastore")
	lunsPerHost := flag.Int("luns-per-host", 128, "SAN LUNs each host sees (at least its cluster's VMFS datastores)")
	pathsPerLun := flag.Int("paths-per-lun", 4, "paths per SAN LUN (1-4)")
	listen := flag.String("listen", "127.0.0.1:0", "listen address")
	user := flag.String("user", "vslint", "the only user that may log in")
	passwordFile := flag.String("password-file", "", "file holding the password (default vslint-secret)")
	gz := flag.Bool("gzip", true, "gzip answers for clients that send Accept-Encoding: gzip")
	pageCap := flag.Int("page-size", 0, "server-side cap on objects per page (0: the client's maxObjects)")
	truth := flag.String("truth", "", "write the counts a poll must store (JSON) to this file")
	stopAfter := flag.Int("stop-after-seconds", 0, "exit after this many seconds (0: run until signalled)")
	simkit.ParseFlags("vcsim-synth")

	password := simkit.Password(*passwordFile)
	e, err := newEstate(*seed, *vms, *vmsPerHost, *hostsPerCluster, *vmsPerDS, *lunsPerHost, *pathsPerLun)
	if err != nil {
		log.Fatal(err)
	}
	s := &server{user: *user, password: password, gzip: *gz, pageCap: *pageCap,
		g:        &gen{e: e, now: time.Now().UTC().Truncate(time.Second)},
		sessions: map[string]bool{}, views: map[string]string{}, tokens: map[string]*cursor{},
		pcs: collectors{m: map[string]*collector{}}}
	if *truth != "" {
		b, _ := json.MarshalIndent(map[string]interface{}{"counts": e.count(), "seed": *seed}, "", " ")
		if err := ioutil.WriteFile(*truth, append(b, '\n'), 0644); err != nil {
			log.Fatalf("-truth: %v", err)
		}
	}
	vmBytes, hostBytes := s.g.sampleSizes()
	log.Printf("estate: %d VMs, %d hosts in %d clusters, %d datastores, %d LUNs x %d paths per host; "+
		"about %d bytes per VM, %d per host", e.nVM, e.nHost, e.nCluster, e.nDS, e.clusterLuns(0),
		e.pathsPerLun, vmBytes, hostBytes)

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/sdk", s.handleSDK)
	mux.HandleFunc("/sdk/vimServiceVersions.xml", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/xml")
		io.WriteString(w, serviceVersions)
	})
	mux.HandleFunc("/synth/mutate", s.handleMutate)
	mux.HandleFunc("/synth/stats", s.handleStats)
	mux.HandleFunc("/synth/delay", s.handleDelay)
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	fmt.Printf("http://%s/sdk\n", ln.Addr())
	os.Stdout.Sync()

	simkit.CatchStop().Wait(*stopAfter)
	srv.Close()
}

// sampleSizes renders VM 0 and host 0 with every property, to say how large objects are.
func (g *gen) sampleSizes() (int64, int64) {
	var n [2]int64
	for k, typ := range []string{tVM, tHost} {
		o := newOut(ioutil.Discard)
		g.writeObject(o, "objects", typ, 0, propNames[typ])
		o.flush()
		n[k] = o.n
	}
	return n[0], n[1]
}

// POST /synth/mutate?pct=N: about N % of VMs (power state) and datastores
// (free space) change, the hook for incremental polling.
func (s *server) handleMutate(w http.ResponseWriter, r *http.Request) {
	pct, err := strconv.Atoi(r.URL.Query().Get("pct"))
	if r.Method != http.MethodPost || err != nil || pct < 0 || pct > 100 {
		http.Error(w, "POST /synth/mutate?pct=0..100", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	e := *s.g.e
	e.mutatePct = append(append([]int(nil), e.mutatePct...), pct)
	s.g = &gen{e: &e, now: s.g.now}
	s.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// POST /synth/delay?host_reads_ms=N: every per-host read answers N ms late.
func (s *server) handleDelay(w http.ResponseWriter, r *http.Request) {
	ms, err := strconv.Atoi(r.URL.Query().Get("host_reads_ms"))
	if r.Method != http.MethodPost || err != nil || ms < 0 || ms > 600000 {
		http.Error(w, "POST /synth/delay?host_reads_ms=0..600000", http.StatusBadRequest)
		return
	}
	atomic.StoreInt64(&s.hostReadDelayMs, int64(ms))
	w.WriteHeader(http.StatusNoContent)
}

func (s *server) handleStats(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	sessions := len(s.sessions)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, "{\"requests\": %d, \"bytes\": %d, \"retrieve_view\": %d, \"retrieve_objects\": %d, \"sessions\": %d}\n",
		atomic.LoadInt64(&s.requests), atomic.LoadInt64(&s.bytes),
		atomic.LoadInt64(&s.retrieveView), atomic.LoadInt64(&s.retrieveObjects), sessions)
}

// answer is one SOAP answer being written: plain or gzip, always streamed.
type answer struct {
	w  http.ResponseWriter
	gz *gzip.Writer
	bw *bufio.Writer
	o  *out
}

func (s *server) begin(w http.ResponseWriter, r *http.Request, status int) *answer {
	a := &answer{w: w}
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	var dst io.Writer = w
	if s.gzip && strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		w.Header().Set("Content-Encoding", "gzip")
		a.gz, _ = gzip.NewWriterLevel(w, gzip.BestSpeed)
		dst = a.gz
	}
	w.WriteHeader(status)
	a.o = newOut(dst)
	a.o.s(envHead)
	return a
}

func (s *server) end(a *answer) {
	a.o.s(envTail)
	a.o.flush()
	if a.gz != nil {
		a.gz.Close()
	}
	atomic.AddInt64(&s.bytes, a.o.n)
}

// pathSet returns the property paths propSet p names for typ, or answers
// InvalidProperty for the first one typ does not have and returns false.
func (s *server) pathSet(w http.ResponseWriter, r *http.Request, typ string, p *node) ([]string, bool) {
	var paths []string
	for _, ps := range p.all("pathSet") {
		path := strings.TrimSpace(ps.text)
		if !knownProp(typ, path) {
			s.sendFault(w, r, &fault{msg: "A specified parameter was not correct: " + path,
				typ: "InvalidProperty", detail: "<name>" + xmlEscape(path) + "</name>"})
			return nil, false
		}
		paths = append(paths, path)
	}
	return paths, true
}

func (s *server) sendFault(w http.ResponseWriter, r *http.Request, f *fault) {
	a := s.begin(w, r, http.StatusInternalServerError)
	a.o.b = a.o.b[:0] // the fault carries its own envelope
	a.o.b = append(a.o.b, f.xml()...)
	a.o.flush()
	if a.gz != nil {
		a.gz.Close()
	}
	atomic.AddInt64(&s.bytes, a.o.n)
}

func notAuthenticated() *fault {
	return &fault{msg: "The session is not authenticated.", typ: "NotAuthenticated",
		detail: `<object type="Folder">group-d1</object><privilegeId>System.View</privilegeId>`}
}

func notFound(typ, ref string) *fault {
	return &fault{msg: "The object '" + typ + ":" + ref + "' has already been deleted or has not been completely created",
		typ: "ManagedObjectNotFound", detail: `<obj type="` + xmlEscape(typ) + `">` + xmlEscape(ref) + `</obj>`}
}

func invalidArgument(prop string) *fault {
	return &fault{msg: "A specified parameter was not correct: " + prop, typ: "InvalidArgument",
		detail: "<invalidProperty>" + xmlEscape(prop) + "</invalidProperty>"}
}

func (s *server) handleSDK(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST SOAP requests here", http.StatusMethodNotAllowed)
		return
	}
	atomic.AddInt64(&s.requests, 1)
	body, err := ioutil.ReadAll(io.LimitReader(r.Body, 16<<20))
	if err != nil {
		return
	}
	root, err := parseXML(body)
	var m *node
	if err == nil {
		m = soapMethod(root)
	}
	if m == nil {
		s.sendFault(w, r, &fault{msg: "Unable to parse the request", typ: "InvalidRequest"})
		return
	}
	this := m.child("_this")
	thisRef := ""
	if this != nil {
		thisRef = strings.TrimSpace(this.text)
	}
	switch m.name {
	case "RetrieveServiceContent":
		s.serviceContent(w, r)
		return
	case "Login":
		s.login(w, r, m)
		return
	}
	key := sessionKey(r)
	s.mu.Lock()
	ok := s.sessions[key]
	s.mu.Unlock()
	if !ok {
		s.sendFault(w, r, notAuthenticated())
		return
	}
	switch m.name {
	case "QueryOptions", "QueryBoundVnics", "ExecuteSoap":
		if d := atomic.LoadInt64(&s.hostReadDelayMs); d > 0 {
			time.Sleep(time.Duration(d) * time.Millisecond)
		}
	}
	switch m.name {
	case "Logout":
		s.mu.Lock()
		delete(s.sessions, key)
		s.mu.Unlock()
		s.dropCollectors(key)
		s.simple(w, r, "Logout", "")
	case "CurrentTime":
		s.simple(w, r, "CurrentTime", "<returnval>"+time.Now().UTC().Format(time.RFC3339)+"</returnval>")
	case "CreateContainerView":
		s.createView(w, r, m, key)
	case "DestroyView":
		s.mu.Lock()
		_, ok := s.views[thisRef]
		delete(s.views, thisRef)
		s.mu.Unlock()
		if !ok {
			s.sendFault(w, r, notFound("ContainerView", thisRef))
			return
		}
		s.simple(w, r, "DestroyView", "")
	case "RetrievePropertiesEx", "RetrieveProperties":
		s.retrieve(w, r, m)
	case "ContinueRetrievePropertiesEx":
		token := m.textOf("token")
		s.mu.Lock()
		c := s.tokens[token]
		delete(s.tokens, token)
		s.mu.Unlock()
		if c == nil {
			s.sendFault(w, r, invalidArgument("token"))
			return
		}
		a := s.begin(w, r, http.StatusOK)
		a.o.s(`<ContinueRetrievePropertiesExResponse xmlns="urn:vim25">`)
		s.page(a.o, c)
		a.o.s(`</ContinueRetrievePropertiesExResponse>`)
		s.end(a)
	case "CancelRetrievePropertiesEx":
		s.mu.Lock()
		delete(s.tokens, m.textOf("token"))
		s.mu.Unlock()
		s.simple(w, r, "CancelRetrievePropertiesEx", "")
	case "GetAlarm":
		var b strings.Builder
		ent := m.child("entity")
		if ent == nil || strings.TrimSpace(ent.text) == rootFolder {
			for i := range alarmDefs {
				b.WriteString(`<returnval type="Alarm">` + moref(tAlarm, i) + `</returnval>`)
			}
		}
		s.simple(w, r, "GetAlarm", b.String())
	case "QueryOptions":
		s.queryOptions(w, r, thisRef, m.textOf("name"))
	case "QueryBoundVnics":
		s.boundVnics(w, r, thisRef, m.textOf("iScsiHbaName"))
	case "RetrieveManagedMethodExecuter":
		h, ok := hostIndex(s.cur().e, "host-", thisRef)
		if !ok {
			s.sendFault(w, r, notFound("HostSystem", thisRef))
			return
		}
		s.simple(w, r, "RetrieveManagedMethodExecuter",
			`<returnval type="ReflectManagedMethodExecuter">ha-mme-`+itoa(h+1)+`</returnval>`)
	case "ExecuteSoap":
		s.executeSoap(w, r, thisRef, m.textOf("moid"), m.textOf("method"))
	default:
		if s.handleFilters(w, r, m, key, thisRef) {
			return
		}
		s.sendFault(w, r, &fault{msg: "Method " + m.name + " is not implemented by vcsim-synth",
			typ: "NotImplemented"})
	}
}

func (s *server) simple(w http.ResponseWriter, r *http.Request, method, inner string) {
	a := s.begin(w, r, http.StatusOK)
	a.o.s("<" + method + `Response xmlns="urn:vim25">`)
	a.o.s(inner)
	a.o.s("</" + method + "Response>")
	s.end(a)
}

func sessionKey(r *http.Request) string {
	c, err := r.Cookie("vmware_soap_session")
	if err != nil {
		return ""
	}
	return strings.Trim(c.Value, `"`)
}

func (s *server) serviceContent(w http.ResponseWriter, r *http.Request) {
	const sc = `<returnval><rootFolder type="Folder">group-d1</rootFolder><propertyCollector type="PropertyCollector">propertyCollector</propertyCollector><viewManager type="ViewManager">ViewManager</viewManager>` +
		`<about><name>VMware vCenter Server</name><fullName>VMware vCenter Server 7.0.3 build-20150588 (vcsim-synth)</fullName><vendor>VMware, Inc.</vendor><version>7.0.3</version><build>20150588</build><localeVersion>INTL</localeVersion><localeBuild>000</localeBuild><osType>linux-x64</osType><productLineId>vpx</productLineId><apiType>VirtualCenter</apiType><apiVersion>7.0.3.0</apiVersion><instanceUuid>8f2d7a6e-6c43-4d4f-9a39-0c5e0d1e2a11</instanceUuid><licenseProductName>VMware VirtualCenter Server</licenseProductName><licenseProductVersion>7.0</licenseProductVersion></about>` +
		`<setting type="OptionManager">VpxSettings</setting><userDirectory type="UserDirectory">UserDirectory</userDirectory><sessionManager type="SessionManager">SessionManager</sessionManager><authorizationManager type="AuthorizationManager">AuthorizationManager</authorizationManager><serviceManager type="ServiceManager">ServiceMgr</serviceManager><perfManager type="PerformanceManager">PerfMgr</perfManager><alarmManager type="AlarmManager">AlarmManager</alarmManager><eventManager type="EventManager">EventManager</eventManager><taskManager type="TaskManager">TaskManager</taskManager><extensionManager type="ExtensionManager">ExtensionManager</extensionManager><searchIndex type="SearchIndex">SearchIndex</searchIndex><fileManager type="FileManager">FileManager</fileManager><virtualDiskManager type="VirtualDiskManager">virtualDiskManager</virtualDiskManager><dvSwitchManager type="DistributedVirtualSwitchManager">DVSManager</dvSwitchManager></returnval>`
	s.simple(w, r, "RetrieveServiceContent", sc)
}

func (s *server) login(w http.ResponseWriter, r *http.Request, m *node) {
	if m.textOf("userName") != s.user || m.child("password") == nil || m.child("password").text != s.password {
		s.sendFault(w, r, &fault{msg: "Cannot complete login due to an incorrect user name or password.",
			typ: "InvalidLogin"})
		return
	}
	var b [16]byte
	rand.Read(b[:])
	key := hex.EncodeToString(b[:])
	s.mu.Lock()
	s.sessions[key] = true
	s.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: "vmware_soap_session", Value: `"` + key + `"`, Path: "/", HttpOnly: true})
	now := time.Now().UTC().Format(time.RFC3339)
	s.simple(w, r, "Login", `<returnval><key>`+key+`</key><userName>VSPHERE.LOCAL\`+xmlEscape(s.user)+
		`</userName><fullName>`+xmlEscape(s.user)+`</fullName><loginTime>`+now+`</loginTime><lastActiveTime>`+now+
		`</lastActiveTime><locale>en</locale><messageLocale>en</messageLocale><extensionSession>false</extensionSession><ipAddress>127.0.0.1</ipAddress><userAgent>`+
		xmlEscape(r.UserAgent())+`</userAgent><callCount>0</callCount></returnval>`)
}

func (s *server) createView(w http.ResponseWriter, r *http.Request, m *node, key string) {
	types := m.all("type")
	if len(types) != 1 {
		s.sendFault(w, r, invalidArgument("type"))
		return
	}
	id := s.newID()
	ref := "session[" + key[:8] + "]view-" + strconv.FormatInt(id, 10)
	s.mu.Lock()
	s.views[ref] = strings.TrimSpace(types[0].text)
	s.mu.Unlock()
	s.simple(w, r, "CreateContainerView", `<returnval type="ContainerView">`+xmlEscape(ref)+`</returnval>`)
}

// viewSegments lists what a recursive view of the root holds of a type.
func viewSegments(e *estate, typ string) []segment {
	switch typ {
	case tVM:
		return []segment{{tVM, 0, e.nVM}}
	case tHost:
		return []segment{{tHost, 0, e.nHost}}
	case tDS:
		return []segment{{tDS, 0, e.nDS}}
	case tPod:
		return []segment{{tPod, 0, e.nCluster}}
	case tDVS, "DistributedVirtualSwitch":
		return []segment{{tDVS, 0, e.nDVS}}
	case tCluster, "ComputeResource":
		return []segment{{tCluster, 0, e.nCluster}}
	case tDC:
		return []segment{{tDC, 0, 1}}
	case tFolder:
		// Below the root: the datacenter's folders, and datastore clusters (a StoragePod is a Folder).
		return []segment{{tFolder, 1, len(folders)}, {tPod, 0, e.nCluster}}
	}
	return nil
}

// isA reports whether objects of type obj are of the declared type typ.
func isA(obj, typ string) bool {
	switch {
	case obj == typ, typ == "ManagedEntity" && obj != tAlarm && obj != tPerf:
		return true
	case typ == tFolder:
		return obj == tPod
	case typ == "DistributedVirtualSwitch":
		return obj == tDVS
	case typ == "ComputeResource":
		return obj == tCluster
	}
	return false
}

// objectRef parses a moref this estate holds.
func objectRef(e *estate, typ, ref string) (segment, bool) {
	switch typ {
	case tFolder:
		for i, f := range folders {
			if f.moref == ref {
				return segment{tFolder, i, i + 1}, true
			}
		}
		if i, ok := hostIndex(e, "group-p", ref); ok && i < e.nCluster {
			return segment{tPod, i, i + 1}, true
		}
		return segment{}, false
	case tDC:
		return segment{tDC, 0, 1}, ref == "datacenter-2"
	case tPerf:
		return segment{tPerf, 0, 1}, ref == "PerfMgr"
	case "DistributedVirtualSwitch":
		typ = tDVS
	}
	prefix, ok := morefPrefix[typ]
	if !ok {
		return segment{}, false
	}
	i, ok := hostIndex(e, prefix, ref)
	n := map[string]int{tVM: e.nVM, tHost: e.nHost, tDS: e.nDS, tPod: e.nCluster, tDVS: e.nDVS,
		tCluster: e.nCluster, tAlarm: len(alarmDefs)}[typ]
	if !ok || i >= n {
		return segment{}, false
	}
	return segment{typ, i, i + 1}, true
}

// hostIndex parses PREFIX<n> (n >= 1) into n-1.
func hostIndex(e *estate, prefix, ref string) (int, bool) {
	if !strings.HasPrefix(ref, prefix) {
		return 0, false
	}
	n, err := strconv.Atoi(ref[len(prefix):])
	if err != nil || n < 1 {
		return 0, false
	}
	return n - 1, true
}

func (s *server) retrieve(w http.ResponseWriter, r *http.Request, m *node) {
	e := s.cur().e
	c := &cursor{paths: map[string][]string{}}
	countRetrieve(s, m)
	for _, spec := range m.all("specSet") {
		var props []*node
		props = append(props, spec.all("propSet")...)
		for _, os := range spec.all("objectSet") {
			obj := os.child("obj")
			if obj == nil {
				s.sendFault(w, r, invalidArgument("obj"))
				return
			}
			typ, ref := obj.attrs["type"], strings.TrimSpace(obj.text)
			var segs []segment
			if typ == "ContainerView" {
				s.mu.Lock()
				vt, ok := s.views[ref]
				s.mu.Unlock()
				if !ok {
					s.sendFault(w, r, notFound(typ, ref))
					return
				}
				segs = viewSegments(e, vt)
			} else {
				seg, ok := objectRef(e, typ, ref)
				if !ok {
					s.sendFault(w, r, notFound(typ, ref))
					return
				}
				segs = []segment{seg}
			}
			for _, seg := range segs {
				matched := false
				for _, p := range props {
					pt := p.textOf("type")
					if !isA(seg.typ, pt) {
						continue
					}
					matched = true
					var paths []string
					if p.textOf("all") == "true" {
						paths = propNames[seg.typ]
					}
					named, ok := s.pathSet(w, r, seg.typ, p)
					if !ok {
						return
					}
					paths = append(paths, named...)
					// Once per type: a spec naming many objects repeats
					// its propSet for each, not its properties.
					for _, path := range paths {
						if !hasString(c.paths[seg.typ], path) {
							c.paths[seg.typ] = append(c.paths[seg.typ], path)
						}
					}
				}
				if matched && seg.hi > seg.lo {
					c.segs = append(c.segs, seg)
				}
			}
		}
	}
	if m.name == "RetrieveProperties" {
		a := s.begin(w, r, http.StatusOK)
		a.o.s(`<RetrievePropertiesResponse xmlns="urn:vim25">`)
		g := s.cur()
		for _, seg := range c.segs {
			for i := seg.lo; i < seg.hi; i++ {
				g.writeObject(a.o, "returnval", seg.typ, i, c.paths[seg.typ])
			}
		}
		a.o.s(`</RetrievePropertiesResponse>`)
		s.end(a)
		return
	}
	c.pageSize, _ = strconv.Atoi(m.child("options").textOf("maxObjects"))
	if s.pageCap > 0 && (c.pageSize <= 0 || c.pageSize > s.pageCap) {
		c.pageSize = s.pageCap
	}
	a := s.begin(w, r, http.StatusOK)
	a.o.s(`<RetrievePropertiesExResponse xmlns="urn:vim25">`)
	s.page(a.o, c)
	a.o.s(`</RetrievePropertiesExResponse>`)
	s.end(a)
}

func hasString(list []string, x string) bool {
	for _, y := range list {
		if y == x {
			return true
		}
	}
	return false
}

// page writes the next page of c: a returnval with a token when more remain
// (before the objects, as vCenter does), none at all when nothing is left.
func (s *server) page(o *out, c *cursor) {
	total := 0
	for _, seg := range c.segs {
		total += seg.hi - seg.lo
	}
	if total == 0 {
		return
	}
	n := total
	if c.pageSize > 0 && c.pageSize < n {
		n = c.pageSize
	}
	// What this page writes, and what stays for the token.
	var now, rest []segment
	left := n
	for _, seg := range c.segs {
		if left == 0 {
			rest = append(rest, seg)
			continue
		}
		k := seg.hi - seg.lo
		if k > left {
			now = append(now, segment{seg.typ, seg.lo, seg.lo + left})
			rest = append(rest, segment{seg.typ, seg.lo + left, seg.hi})
			left = 0
		} else {
			now = append(now, seg)
			left -= k
		}
	}
	o.s("<returnval>")
	if len(rest) > 0 {
		token := strconv.FormatInt(s.newID(), 10)
		s.mu.Lock()
		s.tokens[token] = &cursor{segs: rest, paths: c.paths, pageSize: c.pageSize}
		s.mu.Unlock()
		o.s("<token>")
		o.s(token)
		o.s("</token>")
	}
	g := s.cur()
	for _, seg := range now {
		for i := seg.lo; i < seg.hi; i++ {
			g.writeObject(o, "objects", seg.typ, i, c.paths[seg.typ])
		}
	}
	o.s("</returnval>")
}

func (s *server) queryOptions(w http.ResponseWriter, r *http.Request, this, name string) {
	e := s.cur().e
	h, ok := hostIndex(e, "EsxHostAdvSettings-", this)
	if !ok || h >= e.nHost {
		s.sendFault(w, r, notFound("OptionManager", this))
		return
	}
	ebd := 1
	if e.h(kHost, h, 1)%10 == 0 {
		ebd = 0
	}
	opts := []struct{ key, typ, val string }{
		{"VMFS3.EnableBlockDelete", "xsd:long", itoa(ebd)},
		{"Disk.MaxLUN", "xsd:long", "1024"},
		{"Disk.SchedNumReqOutstanding", "xsd:long", "32"},
		{"Misc.APDHandlingEnable", "xsd:long", "1"},
	}
	var b strings.Builder
	for _, o := range opts {
		if name == "" || name == o.key || (strings.HasSuffix(name, ".") && strings.HasPrefix(o.key, name)) {
			b.WriteString(`<returnval xsi:type="OptionValue"><key>` + o.key + `</key><value xsi:type="` + o.typ + `">` + o.val + `</value></returnval>`)
		}
	}
	if b.Len() == 0 {
		s.sendFault(w, r, &fault{msg: "A specified parameter was not correct: " + name, typ: "InvalidName",
			detail: "<name>" + xmlEscape(name) + "</name>"})
		return
	}
	s.simple(w, r, "QueryOptions", b.String())
}

func (s *server) boundVnics(w http.ResponseWriter, r *http.Request, this, hba string) {
	g := s.cur()
	e := g.e
	h, ok := hostIndex(e, "iscsiManager-", this)
	if !ok || h >= e.nHost {
		s.sendFault(w, r, notFound("IscsiManager", this))
		return
	}
	if !e.hostIscsi(h) || hba != "vmhba64" {
		s.sendFault(w, r, &fault{msg: "An error occurred during host configuration: no iSCSI adapter " + hba,
			typ: "IscsiFaultInvalidVnic"})
		return
	}
	a := s.begin(w, r, http.StatusOK)
	a.o.s(`<QueryBoundVnicsResponse xmlns="urn:vim25"><returnval><vnicDevice>vmk2</vnicDevice><vnic>`)
	// the HostVirtualNic without its element name
	o := newOut(ioutil.Discard)
	g.vnic(o, h, "vmk2", "iSCSI-1", 9000, 30, "", 0)
	inner := string(o.b)
	inner = strings.TrimSuffix(strings.TrimPrefix(inner, "<HostVirtualNic>"), "</HostVirtualNic>")
	a.o.s(inner)
	a.o.s(`</vnic><switchName>vSwitch1</switchName><portgroupName>iSCSI-1</portgroupName><portgroupKey>key-vim.host.PortGroup-iSCSI-1</portgroupKey><portKey>33554466</portKey><opaqueNetworkId></opaqueNetworkId><opaqueNetworkType></opaqueNetworkType><pathStatus>active</pathStatus><compliantStatus><status>compliant</status></compliantStatus></returnval></QueryBoundVnicsResponse>`)
	s.end(a)
}

func (s *server) executeSoap(w http.ResponseWriter, r *http.Request, this, moid, method string) {
	g := s.cur()
	h, ok := hostIndex(g.e, "ha-mme-", this)
	if !ok || h >= g.e.nHost {
		s.sendFault(w, r, notFound("ReflectManagedMethodExecuter", this))
		return
	}
	a := s.begin(w, r, http.StatusOK)
	a.o.s(`<ExecuteSoapResponse xmlns="urn:vim25"><returnval>`)
	switch {
	case moid == "ha-cli-handler-storage-nmp-device" && method == "vim.EsxCLI.storage.nmp.device.list":
		a.o.s("<response>")
		g.nmpDevices(a.o, h)
		a.o.s("</response>")
	case moid == "ha-cli-handler-storage-nmp-satp-rule" && method == "vim.EsxCLI.storage.nmp.satp.rule.list":
		a.o.s("<response>")
		g.satpRuleList(a.o)
		a.o.s("</response>")
	default:
		a.o.s("<fault><faultMsg>Unknown method " + xmlEscape(moid+" "+method) + "</faultMsg><faultDetail></faultDetail></fault>")
	}
	a.o.s(`</returnval></ExecuteSoapResponse>`)
	s.end(a)
}
