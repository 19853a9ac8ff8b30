// unity-vslint: a small responder for the Dell EMC Unity Unisphere Management REST API, the
// resources vslint reads (loginSessionInfo, pool, lun) with their documented shapes and field
// names: basic authentication, the mod_sec_emc session cookie, the EMC-CSRF-TOKEN rule for
// POST and DELETE, fields= and compact=true, per_page/page paging with "links" (next) and
// entryCount. Its pools and LUNs back datastores of the vCenter simulator's "violations"
// scenario (tests/sim/scenario_violations.go): the LUN WWNs are those datastores' naa. names.
// There is no public Unity simulator; the shapes follow the REST API reference and the
// answers published in the test data of open-source Unity clients. Standard library only.
package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"simkit"
)

const (
	GiB = int64(1) << 30
	TiB = int64(1) << 40
)

type pool struct {
	ID, Name       string
	Total, Free    int64
	Subscribed     int64
	AlertThreshold int
	SnapUsed       int64
}

type lun struct {
	ID, Name, WWN, Pool string
	Total, Allocated    int64
	Thin                bool
}

// wwn writes the naa. name's 32 hex digits as Unity does: upper case, a colon between bytes.
func wwn(naa string) string {
	h := strings.ToUpper(strings.TrimPrefix(naa, "naa."))
	var b []string
	for i := 0; i+2 <= len(h); i += 2 {
		b = append(b, h[i:i+2])
	}
	return strings.Join(b, ":")
}

func pct(total int64, p int64) int64 { return total / 100 * p }

// The estate. Planted facts (each pool backs one datastore of the violations scenario through
// one LUN, except pool-unjoined, whose LUNs back nothing vCenter reports):
//
//	pool_1 pool-low      10 TiB,  8 % free, thin LUN -> ds-pool-low (60 % free): CRITICAL
//	pool_2 pool-ok       10 TiB, 50 % free, thin LUN -> ds-pool-ok (60 % free): TWIN, silent;
//	                     also holds 23 unattached thick filler LUNs (paging)
//	pool_3 pool-warn     10 TiB, 25 % free, thick LUN -> ds-pool-warn: WARNING
//	pool_4 pool-snap     10 TiB,  3 % free, thin LUN -> ds-pool-snap: CRITICAL, snapshots
//	                     and replication sessions invalidated
//	pool_5 pool-over     10 TiB, 60 % free, subscribed 200 %, thin -> ds-pool-over:
//	                     pool-subscription WARNING
//	pool_6 pool-unjoined 10 TiB,  2 % free, thin LUN on no datastore: no finding (not joined)
//	pool_7 pool-thick    10 TiB, 60 % free, subscribed 160 % by thick LUNs only -> ds-pool-thick:
//	                     TWIN of pool-subscription (thick LUNs reserve their space)
func estate() ([]pool, []lun) {
	naa := func(s string) string { return "naa.600601600000000000000000000000" + s }
	t := 10 * TiB
	pools := []pool{
		{"pool_1", "pool-low", t, pct(t, 8), pct(t, 95), 70, 200 * GiB},
		{"pool_2", "pool-ok", t, pct(t, 50), pct(t, 100), 70, 0},
		{"pool_3", "pool-warn", t, pct(t, 25), pct(t, 75), 60, 0},
		{"pool_4", "pool-snap", t, pct(t, 3), pct(t, 120), 70, 500 * GiB},
		{"pool_5", "pool-over", t, pct(t, 60), pct(t, 200), 70, 0},
		{"pool_6", "pool-unjoined", t, pct(t, 2), pct(t, 90), 70, 0},
		{"pool_7", "pool-thick", t, pct(t, 60), pct(t, 160), 70, 0},
	}
	luns := []lun{
		{"sv_1", "lun-ds-pool-low", wwn(naa("d1")), "pool_1", 601 * GiB, 240 * GiB, true},
		{"sv_2", "lun-ds-pool-ok", wwn(naa("d2")), "pool_2", 601 * GiB, 240 * GiB, true},
		{"sv_3", "lun-ds-pool-warn", wwn(naa("d3")), "pool_3", 601 * GiB, 601 * GiB, false},
		{"sv_4", "lun-ds-pool-snap", wwn(naa("d4")), "pool_4", 601 * GiB, 240 * GiB, true},
		{"sv_5", "lun-ds-pool-over", wwn(naa("d5")), "pool_5", 601 * GiB, 240 * GiB, true},
		{"sv_6", "lun-unjoined", wwn(naa("d6")), "pool_6", 601 * GiB, 240 * GiB, true},
		{"sv_7", "lun-ds-pool-thick", wwn(naa("d7")), "pool_7", 601 * GiB, 601 * GiB, false},
	}
	for i := 0; i < 23; i++ {
		luns = append(luns, lun{fmt.Sprintf("sv_%d", 100+i), fmt.Sprintf("lun-filler-%02d", i),
			wwn(fmt.Sprintf("naa.60060160aaaa0000%016x", i)), "pool_2", 100 * GiB, 100 * GiB, false})
	}
	return pools, luns
}

// fcPort is a Fibre Channel front-end port: wwn is the node WWN and the port WWN in one, as
// Unisphere gives it.
type fcPort struct {
	ID, WWN, SP string
}

// fcPorts are the array's FC ports (the seeds' rules whole, tests/sim/scenario_seeds.go): two
// per SP following the CLARiiON/VNX/Unity convention (50:06:01:60-67 SP A, 68-6f SP B), and two
// per SP whose WWNs no convention tells (58:cc:f0:...), which only this list places: LUN ...f5's
// paths end at SP A's two of those, ...f6's at one of SP A's and one of SP B's.
func fcPorts() []fcPort {
	const node = "50:06:01:60:C7:E0:1E:49:"
	return []fcPort{
		{"spa_fc4", node + "50:06:01:60:47:E4:1E:49", "spa"},
		{"spa_fc5", node + "50:06:01:61:47:E4:1E:49", "spa"},
		{"spb_fc4", node + "50:06:01:68:47:E4:1E:49", "spb"},
		{"spb_fc5", node + "50:06:01:69:47:E4:1E:49", "spb"},
		{"spa_iom_0_fc0", node + "58:CC:F0:98:49:20:0B:2A", "spa"},
		{"spa_iom_0_fc1", node + "58:CC:F0:98:49:21:0B:2A", "spa"},
		{"spb_iom_0_fc0", node + "58:CC:F0:98:49:28:0B:2A", "spb"},
		{"spb_iom_0_fc1", node + "58:CC:F0:98:49:29:0B:2A", "spb"},
	}
}

func (p fcPort) content() map[string]interface{} {
	return map[string]interface{}{
		"id": p.ID, "wwn": p.WWN, "storageProcessor": map[string]interface{}{"id": p.SP},
		"name": "FC Port " + p.ID, "currentSpeed": 16, "connectorType": 1,
		"health": map[string]interface{}{"value": 5, "descriptionIds": []string{"ALRT_PORT_LINK_UP"},
			"descriptions": []string{"The port is operating normally."}},
	}
}

func (p pool) content() map[string]interface{} {
	return map[string]interface{}{
		"id": p.ID, "name": p.Name, "sizeTotal": p.Total, "sizeFree": p.Free,
		"sizeUsed": p.Total - p.Free, "sizeSubscribed": p.Subscribed,
		"alertThreshold": p.AlertThreshold, "snapSizeUsed": p.SnapUsed,
		"snapSizeSubscribed": p.SnapUsed * 2, "description": "", "raidType": 1,
		"health": map[string]interface{}{"value": 5, "descriptionIds": []string{"ALRT_COMPONENT_OK"},
			"descriptions": []string{"The component is operating normally. No action is required."}},
	}
}

func (l lun) content() map[string]interface{} {
	return map[string]interface{}{
		"id": l.ID, "name": l.Name, "wwn": l.WWN, "pool": map[string]interface{}{"id": l.Pool},
		"sizeTotal": l.Total, "sizeAllocated": l.Allocated, "isThinEnabled": l.Thin, "type": 1,
		"health": map[string]interface{}{"value": 5, "descriptionIds": []string{"ALRT_VOL_OK"},
			"descriptions": []string{"The LUN is operating normally. No action is required."}},
	}
}

type server struct {
	mu        sync.Mutex
	user      string
	password  string
	pageCap   int
	sessions  map[string]string // cookie -> CSRF token
	issued    []string          // every cookie and CSRF token handed out (control: "issued")
	pools     []pool
	luns      []lun
	fault     string // slow, drop, malformed, 401, http500
	faultAt   int    // the Nth instances read (1-based); 0 = every one
	faultLeft bool
	reads     int
	stats     map[string]int
	persist   bool
	paging    string // what a page says of the next: both (links and entryCount), links, count, none
}

func randHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func writeJSON(w http.ResponseWriter, status int, v interface{}) {
	w.Header().Set("Content-Type", "application/json; version=1.0;charset=UTF-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// The error body Unity sends: {"error": {"errorCode", "httpStatusCode", "messages", "created"}}.
func unityError(w http.ResponseWriter, status int, code int, msg string) {
	writeJSON(w, status, map[string]interface{}{"error": map[string]interface{}{
		"errorCode": code, "httpStatusCode": status,
		"messages": []map[string]string{{"en-US": msg}},
		"created":  time.Now().UTC().Format("2006-01-02T15:04:05.000Z")}})
}

func (s *server) count(k string) {
	s.mu.Lock()
	s.stats[k]++
	s.mu.Unlock()
}

// authenticated: the session cookie, or basic authentication (which opens a session).
func (s *server) authenticate(w http.ResponseWriter, r *http.Request) (string, bool) {
	if c, err := r.Cookie("mod_sec_emc"); err == nil {
		s.mu.Lock()
		_, ok := s.sessions[c.Value]
		s.mu.Unlock()
		if ok {
			return c.Value, true
		}
	}
	if u, p, ok := r.BasicAuth(); ok {
		if u == s.user && p == s.password {
			id := randHex(16)
			s.mu.Lock()
			s.sessions[id] = randHex(24)
			s.issued = append(s.issued, id, s.sessions[id])
			s.stats["logins"]++
			s.mu.Unlock()
			http.SetCookie(w, &http.Cookie{Name: "mod_sec_emc", Value: id, Path: "/", HttpOnly: true, Secure: r.TLS != nil})
			return id, true
		}
		s.count("login_failures")
	}
	unityError(w, http.StatusUnauthorized, 131044353, "Unauthorized")
	return "", false
}

func (s *server) handle(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("X-EMC-REST-CLIENT") != "true" {
		s.count("missing_rest_client_header")
		unityError(w, http.StatusUnauthorized, 131044353, "Unauthorized: the X-EMC-REST-CLIENT header is required")
		return
	}
	sid, ok := s.authenticate(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	token := s.sessions[sid]
	s.mu.Unlock()
	// The CSRF rule: every POST and DELETE carries the session's EMC-CSRF-TOKEN.
	if r.Method == http.MethodPost || r.Method == http.MethodDelete {
		if r.Header.Get("EMC-CSRF-TOKEN") != token {
			s.count("csrf_rejected")
			unityError(w, http.StatusUnauthorized, 131044353, "Unauthorized: EMC-CSRF-TOKEN missing or wrong")
			return
		}
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/api/types/loginSessionInfo/instances":
		w.Header().Set("EMC-CSRF-TOKEN", token)
		s.collection(w, r, "loginSessionInfo", []map[string]interface{}{{
			"id": s.user, "domain": "Local", "user": map[string]string{"id": "user_" + s.user},
			"roles": []map[string]string{{"id": "operator"}}, "idleTimeout": 3600,
			"isPasswordChangeRequired": false}})
	case r.Method == http.MethodPost && r.URL.Path == "/api/types/loginSessionInfo/action/logout":
		s.mu.Lock()
		delete(s.sessions, sid)
		s.stats["logouts"]++
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]interface{}{"logoutOK": "true"})
	case r.Method == http.MethodGet && r.URL.Path == "/api/types/pool/instances":
		if !s.injectFault(w, sid) {
			s.collection(w, r, "pool", contents(s.pools))
		}
	case r.Method == http.MethodGet && r.URL.Path == "/api/types/lun/instances":
		if !s.injectFault(w, sid) {
			s.collection(w, r, "lun", contents(s.luns))
		}
	case r.Method == http.MethodGet && r.URL.Path == "/api/types/fcPort/instances":
		// No fault here: the faults count pool and LUN reads, as the fault tests expect.
		s.collection(w, r, "fcPort", contents(fcPorts()))
	default:
		unityError(w, http.StatusNotFound, 131149829, "The requested resource does not exist.")
	}
}

// contents is the REST content of every pool or LUN in xs, in order.
func contents[T interface{ content() map[string]interface{} }](xs []T) []map[string]interface{} {
	var items []map[string]interface{}
	for _, x := range xs {
		items = append(items, x.content())
	}
	return items
}

// injectFault answers the planted fault on its read; true when it did.
func (s *server) injectFault(w http.ResponseWriter, sid string) bool {
	s.mu.Lock()
	s.reads++
	hit := s.fault != "" && (s.faultAt == 0 || (s.faultLeft && s.reads == s.faultAt))
	if hit && s.faultAt != 0 {
		s.faultLeft = false
	}
	kind := s.fault
	s.mu.Unlock()
	if !hit {
		return false
	}
	s.count("faults")
	switch kind {
	case "slow":
		time.Sleep(120 * time.Second)
		return true
	case "drop":
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				c.Close()
			}
		}
		return true
	case "malformed":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.Write([]byte(`{"@base": "https://unity/api/types/pool/instances", "entries": [{"content": {"id": "pool_1", "sizeFree": 12`))
		return true
	case "401":
		// The session ends in the middle of the poll (idle timeout, a restarted management
		// server): this read, and every later one of that cookie, is refused.
		s.mu.Lock()
		delete(s.sessions, sid)
		s.mu.Unlock()
		unityError(w, http.StatusUnauthorized, 131044353, "Unauthorized")
		return true
	case "http500":
		unityError(w, http.StatusInternalServerError, 131149825, "Internal error.")
		return true
	case "droplun":
		// A LUN is deleted just before this read: the pages after it shift by one.
		s.mu.Lock()
		s.luns = s.luns[1:]
		s.mu.Unlock()
		return false
	case "empty":
		// 200 with no body at all, as a proxy in front of the array may answer.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		return true
	}
	return false
}

// collection answers a type's instances: fields= (id always), compact=true (no per-entry
// metadata), per_page/page (capped at the server's page size) with self/next links and
// entryCount when with_entrycount=true.
func (s *server) collection(w http.ResponseWriter, r *http.Request, typ string, items []map[string]interface{}) {
	q := r.URL.Query()
	perPage := 2000
	if v, err := strconv.Atoi(q.Get("per_page")); err == nil && v > 0 {
		perPage = v
	}
	if s.pageCap > 0 && perPage > s.pageCap {
		perPage = s.pageCap
	}
	page := 1
	if v, err := strconv.Atoi(q.Get("page")); err == nil && v > 0 {
		page = v
	}
	var fields map[string]bool
	if f := q.Get("fields"); f != "" {
		fields = map[string]bool{"id": true}
		for _, n := range strings.Split(f, ",") {
			fields[strings.TrimSpace(n)] = true
		}
	}
	compact := strings.EqualFold(q.Get("compact"), "true")
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	base := fmt.Sprintf("%s://%s/api/types/%s/instances", scheme, r.Host, typ)
	from, to := (page-1)*perPage, page*perPage
	if from > len(items) {
		from = len(items)
	}
	if to > len(items) {
		to = len(items)
	}
	entries := []interface{}{}
	for _, it := range items[from:to] {
		c := map[string]interface{}{}
		for k, v := range it {
			if fields == nil || fields[k] {
				c[k] = v
			}
		}
		e := map[string]interface{}{"content": c}
		if !compact {
			e["@base"] = strings.Replace(base, "/types/"+typ+"/instances", "/instances/"+typ, 1)
			e["updated"] = time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
			e["links"] = []map[string]string{{"rel": "self", "href": "/" + it["id"].(string)}}
		}
		entries = append(entries, e)
	}
	links := []map[string]string{{"rel": "self", "href": fmt.Sprintf("&page=%d", page)}}
	if to < len(items) {
		links = append(links, map[string]string{"rel": "next", "href": fmt.Sprintf("&page=%d", page+1)})
	}
	doc := map[string]interface{}{
		"@base":   base + "?per_page=" + strconv.Itoa(perPage) + "&compact=" + strconv.FormatBool(compact),
		"updated": time.Now().UTC().Format("2006-01-02T15:04:05.000Z"),
		"entries": entries,
	}
	// -paging: arrays and releases differ in what they send; a client must page through
	// every combination.
	if s.paging == "both" || s.paging == "links" {
		doc["links"] = links
	}
	if strings.EqualFold(q.Get("with_entrycount"), "true") && (s.paging == "both" || s.paging == "count") {
		doc["entryCount"] = len(items)
	}
	s.count("pages")
	writeJSON(w, http.StatusOK, doc)
}

// control: GET returns the counters; POST ?fault=KIND&at=N plants a fault (at=0: every read,
// fault= empty: none); ?drop_lun=ID removes a LUN, ?pool=ID&free_pct=P changes a pool.
func (s *server) control(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Method == http.MethodPost {
		q := r.URL.Query()
		if _, ok := q["fault"]; ok {
			s.fault = q.Get("fault")
			s.faultAt, _ = strconv.Atoi(q.Get("at"))
			s.faultLeft = true
			s.reads = 0
		}
		if id := q.Get("pool"); id != "" {
			p, err := strconv.Atoi(q.Get("free_pct"))
			for i := range s.pools {
				if s.pools[i].ID == id && err == nil {
					s.pools[i].Free = pct(s.pools[i].Total, int64(p))
				}
			}
		}
		if id := q.Get("drop_lun"); id != "" {
			for i := range s.luns {
				if s.luns[i].ID == id {
					s.luns = append(s.luns[:i], s.luns[i+1:]...)
					break
				}
			}
		}
	}
	stats := map[string]interface{}{"sessions": len(s.sessions), "issued": s.issued}
	for k, v := range s.stats {
		stats[k] = v
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(stats)
}

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "listen address (host:port)")
	useTLS := flag.Bool("tls", false, "serve HTTPS with a fresh self-signed certificate")
	certOut := flag.String("cert-out", "", "write the certificate (PEM) here (with -tls)")
	user := flag.String("user", "vslint", "the only user name that may log in")
	passwordFile := flag.String("password-file", "", "file holding the password (default: vslint-secret)")
	pageCap := flag.Int("page-size", 10, "server-side cap on instances per page (0 = none)")
	fault := flag.String("fault", "", "KIND:N: answer the Nth instances read badly, once; N=0 every read (slow, drop, malformed, 401, http500, empty, droplun)")
	paging := flag.String("paging", "both", "what a page says of the next: both (links and entryCount), links, count (entryCount only), none")
	stopAfter := flag.Int("stop-after-seconds", 0, "exit after this many seconds (0 = run until signalled)")
	flag.Parse()

	password := simkit.Password(*passwordFile)
	s := &server{user: *user, password: password, pageCap: *pageCap, sessions: map[string]string{},
		stats: map[string]int{}, faultLeft: true, paging: *paging}
	switch *paging {
	case "both", "links", "count", "none":
	default:
		log.Fatalf("-paging %q: want both, links, count or none", *paging)
	}
	s.pools, s.luns = estate()
	if *fault != "" {
		parts := strings.SplitN(*fault, ":", 2)
		s.fault = parts[0]
		if len(parts) == 2 {
			s.faultAt, _ = strconv.Atoi(parts[1])
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/_vslint/control", s.control)
	mux.HandleFunc("/", s.handle)
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{Handler: mux}
	scheme := "http"
	if *useTLS {
		scheme = "https"
		simkit.UseTLS(srv, "unity-vslint", "", *certOut)
	}
	fmt.Printf("%s://%s\n", scheme, ln.Addr().String())
	os.Stdout.Sync()
	if *stopAfter > 0 {
		go func() { time.Sleep(time.Duration(*stopAfter) * time.Second); os.Exit(0) }()
	}
	if *useTLS {
		log.Fatal(srv.ServeTLS(ln, "", ""))
	}
	log.Fatal(srv.Serve(ln))
}
