// unity-vslint: a small responder for the Dell EMC Unity Unisphere Management REST API, the
// resources vslint reads (loginSessionInfo, pool, lun, fcPort, ethernetPort, iscsiPortal,
// nasServer, fileInterface, filesystem, nfsShare, storageResource) with their documented shapes and field
// names: basic authentication, the mod_sec_emc session cookie, the EMC-CSRF-TOKEN rule for
// POST and DELETE, fields= and compact=true, per_page/page paging with "links" (next) and
// entryCount. Its pools and LUNs back datastores of the vCenter simulator's "violations"
// scenario (tests/sim/scenario_violations.go): the LUN WWNs are those datastores' naa. names.
// There is no public Unity simulator; the shapes follow the REST API reference and the
// answers published in the test data of open-source Unity clients. Standard library only.
package main

import (
	"bytes"
	"crypto/rand"
	"crypto/sha1"
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
//	pool_8 pool-nfs-low  10 TiB,  9 % free, no LUN: file system ds-nas-a1 -> the NFS datastore
//	                     ds-nas-a1: pool-free-space CRITICAL (see fileSystems())
//	pool_9 pool-vvol-low 10 TiB, 20 % free, no LUN: VVol datastore vvol-low -> ds-vvol-low:
//	                     pool-free-space WARNING (see storageResources())
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
		{"pool_8", "pool-nfs-low", t, pct(t, 9), pct(t, 80), 70, 0},
		{"pool_9", "pool-vvol-low", t, pct(t, 20), pct(t, 80), 70, 0},
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

// ethernetPort is an Ethernet front-end port: the storage processor it is on and its MTU
// (Unisphere: Settings > Access > Ethernet, where 000 §3.4.1 sets 9000).
type ethernetPort struct {
	ID, SP string
	MTU    int
}

// iscsiPortal is an iSCSI network portal: an address on an Ethernet port, served by that
// port's iSCSI node (its IQN).
type iscsiPortal struct {
	ID, Port, Address, IQN string
}

// The iSCSI side (tests/sim/scenario_seeds.go, host esx-iscsi-a, whose static target
// 10.0.1.21 is if_4): SP A's eth2 and SP B's eth2 and eth3 carry MTU 9000, SP A's eth3 1500.
//
//	if_4 10.0.1.21 spa_eth2 (9000)  paths of ...e5 and ...e6, esx-iscsi-a's static target
//	if_5 10.0.1.22 spa_eth3 (1500)  a path of ...e5: SP A twice -> multipath-redundancy
//	                                critical; MTU 1500 -> iscsi-jumbo-frames warning
//	if_6 10.0.1.23 spb_eth2 (9000)  a path of ...e6: SP A and SP B, TWIN
//	if_7 10.0.1.24 spb_eth3 (9000)  no host points at it
//	if_8 10.0.1.25 spb_eth4 (1500)  no host points at it: TWIN of the jumbo rule (only the
//	                                portals the hosts' targets and paths name are judged)
func ethernetPorts() []ethernetPort {
	return []ethernetPort{{"spa_eth2", "spa", 9000}, {"spa_eth3", "spa", 1500},
		{"spb_eth2", "spb", 9000}, {"spb_eth3", "spb", 9000}, {"spb_eth4", "spb", 1500}}
}

func iscsiPortals() []iscsiPortal {
	const node = "iqn.1992-04.com.emc:cx.lab."
	return []iscsiPortal{{"if_4", "spa_eth2", "10.0.1.21", node + "a0"},
		{"if_5", "spa_eth3", "10.0.1.22", node + "a1"}, {"if_6", "spb_eth2", "10.0.1.23", node + "b0"},
		{"if_7", "spb_eth3", "10.0.1.24", node + "b1"}, {"if_8", "spb_eth4", "10.0.1.25", node + "b2"}}
}

func (p ethernetPort) content() map[string]interface{} {
	return map[string]interface{}{
		"id": p.ID, "name": "SP " + strings.ToUpper(p.SP[2:]) + " Ethernet Port " + p.ID[len(p.ID)-1:],
		"storageProcessor": map[string]interface{}{"id": p.SP}, "mtu": p.MTU, "requestedMtu": p.MTU,
		"supportedMtus": []int{1280, 9000}, "isLinkUp": true, "speed": 10000,
		"health": map[string]interface{}{"value": 5, "descriptionIds": []string{"ALRT_PORT_LINK_UP"},
			"descriptions": []string{"The port is operating normally."}},
	}
}

func (p iscsiPortal) content() map[string]interface{} {
	return map[string]interface{}{
		"id": p.ID, "ethernetPort": map[string]interface{}{"id": p.Port},
		"iscsiNode": map[string]interface{}{"id": "iscsinode_" + p.Port, "name": p.IQN},
		"ipAddress": p.Address, "netmask": "255.255.255.0", "gateway": "10.0.1.1", "vlanId": 0,
		"ipProtocolVersion": 4,
	}
}

// nasServer is a NAS server: the SP it is meant to run on (homeSP) and the one it runs on, and
// whether it is a replication destination (-role dr).
type nasServer struct {
	ID, Name, HomeSP, CurrentSP string
	Destination                 bool
}

// fileInterface is a NAS server's network interface: the address its NFS exports are
// mounted from (a datastore's nas.remoteHost).
type fileInterface struct {
	ID, NasServer, Address string
}

// The NAS side (tests/sim/scenario_seeds.go): cluster-nas-onesp mounts ds-nas-a1 from
// 10.0.3.10 and ds-nas-a2 from 10.0.3.11, two NAS servers both homed on SP A -> nfs-server-
// redundancy warning naming SP A; cluster-nas-twosp mounts ds-nas-b1 from 10.0.3.10 (SP A)
// and ds-nas-b2 from 10.0.3.20 (SP B): TWIN. nas_3 runs on SP A after a failover, but its
// home is SP B: the guide's rule is about where it is placed.
func nasServers() ([]nasServer, []fileInterface) {
	servers := []nasServer{{"nas_1", "nas-spa-1", "spa", "spa", false}, {"nas_2", "nas-spa-2", "spa", "spa", false},
		{"nas_3", "nas-spb-1", "spb", "spa", false}}
	if leaky {
		for i := range servers {
			servers[i].Name += leakyDomain
		}
	}
	return servers,
		[]fileInterface{{"if_10", "nas_1", "10.0.3.10"}, {"if_11", "nas_2", "10.0.3.11"},
			{"if_12", "nas_3", "10.0.3.20"}}
}

// leaky is the -leaky flag: the array's pools, LUNs and NAS servers have names that say whose
// they are (a site, a host's FQDN, a domain), for the test that hunts what an anonymized
// capture leaks (tests/integration/test_record.py); the control's "names" lists them.
var leaky bool

const (
	leakySite   = "Frankfurt-DC2-"
	leakyHost   = "ESX-Prod01.Corp.Example.com-"
	leakyDomain = ".Corp.Example.com"
)

// names are the names of every pool, LUN and NAS server the array answers.
func (s *server) names() []string {
	var out []string
	for _, p := range s.pools {
		out = append(out, p.Name)
	}
	for _, l := range s.luns {
		out = append(out, l.Name)
	}
	servers, _ := nasServers()
	for _, n := range servers {
		out = append(out, n.Name)
	}
	return out
}

func (n nasServer) content() map[string]interface{} {
	return map[string]interface{}{
		"id": n.ID, "name": n.Name, "homeSP": map[string]interface{}{"id": n.HomeSP},
		"currentSP": map[string]interface{}{"id": n.CurrentSP}, "pool": map[string]interface{}{"id": "pool_2"},
		"isReplicationDestination": n.Destination, "sizeAllocated": 2952790016,
		"health": map[string]interface{}{"value": 5, "descriptionIds": []string{"ALRT_NAS_SERVER_OK"},
			"descriptions": []string{"The NAS server is operating normally."}},
	}
}

// fileSystem is a file system, exported by its NAS server as one NFS share of the same name
// (mounted as "<interface address>:/<name>").
type fileSystem struct {
	ID, Name, Pool, NasServer string
}

// fileSystems: the NFS datastores of tests/sim/scenario_seeds.go are mounted from
// <address>:/<datastore name>. ds-nas-a1's file system is in pool-nfs-low (9 % free, critical);
// the others in pool-ok (TWIN). fs-unmounted, on nas-spa-1 like ds-nas-a1, is in pool-unjoined
// (2 % free) but no datastore mounts its share: the share's path, not the server's address,
// joins a datastore to a file system. ds-nas-c1 (cluster-nas-reused, from nas-spa-2's
// 10.0.3.11) is in pool-ok; that cluster's ds-nas-c2 is mounted from 10.0.3.20, nas-spb-1's
// address, at a path no share holds (unless -vol-share). ds-nas-dns is in
// pool-ok, exported by nas-spb-1, but mounted by a host name (which vslint does not resolve).
func fileSystems() []fileSystem {
	return []fileSystem{{"fs_1", "ds-nas-a1", "pool_8", "nas_1"}, {"fs_2", "ds-nas-a2", "pool_2", "nas_2"},
		{"fs_3", "ds-nas-b1", "pool_2", "nas_1"}, {"fs_4", "ds-nas-b2", "pool_2", "nas_3"},
		{"fs_5", "fs-unmounted", "pool_6", "nas_1"}, {"fs_6", "ds-nas-c1", "pool_2", "nas_2"},
		{"fs_7", "ds-nas-dns", "pool_2", "nas_3"}}
}

// The replication destination of this array's file side (-role dr): a second Unity whose NAS
// servers keep the production servers' names, interface addresses and share names, as Unity's
// NAS server replication does, with every file system in its one pool, pool-dr, 2 % free. Its
// NAS servers say isReplicationDestination (unless -dr-destination=false: two arrays then
// export each share at one address). No port, portal or VVol datastore, and no LUN unless
// -dr-vmfs: then it holds a LUN of ds-pool-ok too, so that it is an array of the violations
// vCenter's storage as much as the production one is (which a tie between the two NAS servers
// of one share is otherwise broken by).
func drEstate(destination bool) ([]pool, []nasServer, []fileSystem) {
	t := 10 * TiB
	servers, _ := nasServers()
	for i := range servers {
		servers[i].Destination = destination
	}
	fss := fileSystems()
	for i := range fss {
		fss[i].Pool = "pool_1"
	}
	return []pool{{"pool_1", "pool-dr", t, pct(t, 2), pct(t, 80), 70, 0}}, servers, fss
}

func (f fileSystem) content() map[string]interface{} {
	return map[string]interface{}{
		"id": f.ID, "name": f.Name, "pool": map[string]interface{}{"id": f.Pool},
		"nasServer": map[string]interface{}{"id": f.NasServer}, "isThinEnabled": true,
		"sizeTotal": 600 * GiB, "type": 1, "storageResource": map[string]interface{}{"id": "res_" + f.ID},
	}
}

// nfsShare is the share of a file system; its id is the file system's with "NFSShare_".
type nfsShare struct{ fs fileSystem }

func (n nfsShare) content() map[string]interface{} {
	return map[string]interface{}{
		"id": "NFSShare_" + n.fs.ID, "name": n.fs.Name, "path": "/",
		"filesystem": map[string]interface{}{"id": n.fs.ID}, "type": 1, "role": 0,
	}
}

// storageResource: the VVol datastores (type 9 VVolDatastoreFS, 10 VVolDatastoreISCSI) with
// the UUID vSphere gives each (vmwareUUID; the simulator derives a datastore's from its name)
// and their pools, and a file system's resource (type 1), which is no VVol datastore.
type storageResource struct {
	ID, Name string
	Type     int
	UUID     string
	Pools    []string
}

// vvolUUID is the UUID the vCenter simulator gives the datastore called name
// (tests/sim/builder.go: the first 16 bytes of its name's SHA-1), written as RFC 4122 does.
func vvolUUID(name string) string {
	s := sha1.Sum([]byte(name))
	return fmt.Sprintf("%x-%x-%x-%x-%x", s[0:4], s[4:6], s[6:8], s[8:10], s[10:16])
}

func storageResources() []storageResource {
	return []storageResource{
		{"res_fs_5", "fs-unmounted", 1, "", []string{"pool_6"}},
		{"res_20", "vvol-low", 9, vvolUUID("ds-vvol-low"), []string{"pool_9"}},
		{"res_21", "vvol-ok", 10, vvolUUID("ds-vvol-ok"), []string{"pool_2"}},
	}
}

func (r storageResource) content() map[string]interface{} {
	var pools []map[string]interface{}
	for _, p := range r.Pools {
		pools = append(pools, map[string]interface{}{"id": p})
	}
	c := map[string]interface{}{"id": r.ID, "name": r.Name, "type": r.Type, "pools": pools,
		"sizeTotal": 2 * TiB, "isThinEnabled": true}
	if r.UUID != "" {
		c["vmwareUUID"] = r.UUID
	}
	return c
}

func (f fileInterface) content() map[string]interface{} {
	return map[string]interface{}{
		"id": f.ID, "nasServer": map[string]interface{}{"id": f.NasServer},
		"ipPort": map[string]interface{}{"id": "spa_eth2"}, "ipAddress": f.Address,
		"netmask": "255.255.255.0", "gateway": "10.0.3.1", "name": "if-" + f.Address, "role": 0,
		"isPreferred": true, "ipProtocolVersion": 4,
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
	fault     string // slow, drop, malformed, 401, http500, empty, huge, droplun
	faultAt   int    // the Nth instances read (1-based); 0 = every one
	faultLeft bool
	broken    string // a type whose every instances read answers broken JSON (control broken=TYPE)
	// How long a logout waits before it answers (control logout_delay_s=S): a logout that
	// does not answer while the daemon stops.
	logoutDelay time.Duration
	reads     int
	stats     map[string]int
	persist   bool
	paging    string // what a page says of the next: both (links and entryCount), links, count, none
	// The file side and the rest, per -role: production (the default) or dr (drEstate()).
	nas       []nasServer
	ifs       []fileInterface
	fss       []fileSystem
	fc        []fcPort
	eth       []ethernetPort
	portals   []iscsiPortal
	resources []storageResource
	noShares  bool // -no-shares: nfsShare is not served
	// -no-replication-field: nasServer reads naming isReplicationDestination are refused
	noReplField bool
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
	s.mu.Lock()
	broken := s.broken
	s.mu.Unlock()
	if broken != "" && r.Method == http.MethodGet && r.URL.Path == "/api/types/"+broken+"/instances" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.Write([]byte(`{"entries": [{"content": {"id": "x_1", "mtu": 90`))
		return
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
		s.stats["logouts_asked"]++
		delay := s.logoutDelay
		s.mu.Unlock()
		time.Sleep(delay)
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
		s.collection(w, r, "fcPort", contents(s.fc))
	case r.Method == http.MethodGet && r.URL.Path == "/api/types/ethernetPort/instances":
		s.collection(w, r, "ethernetPort", contents(s.eth))
	case r.Method == http.MethodGet && r.URL.Path == "/api/types/iscsiPortal/instances":
		s.collection(w, r, "iscsiPortal", contents(s.portals))
	case r.Method == http.MethodGet && r.URL.Path == "/api/types/nasServer/instances" && s.noReplField &&
		strings.Contains(r.URL.Query().Get("fields"), "isReplicationDestination"):
		// -no-replication-field: an OE that knows no such attribute refuses the whole read.
		unityError(w, http.StatusUnprocessableEntity, 131149828, "Invalid field name: isReplicationDestination")
	case r.Method == http.MethodGet && r.URL.Path == "/api/types/nasServer/instances":
		s.collection(w, r, "nasServer", contents(s.nas))
	case r.Method == http.MethodGet && r.URL.Path == "/api/types/fileInterface/instances":
		s.collection(w, r, "fileInterface", contents(s.ifs))
	case r.Method == http.MethodGet && r.URL.Path == "/api/types/filesystem/instances":
		s.collection(w, r, "filesystem", contents(s.fss))
	case r.Method == http.MethodGet && r.URL.Path == "/api/types/nfsShare/instances" && s.noShares:
		// -no-shares: an older Unity OE that serves no nfsShare type (vslint leaves it out).
		unityError(w, http.StatusNotFound, 131149829, "The requested resource does not exist.")
	case r.Method == http.MethodGet && r.URL.Path == "/api/types/nfsShare/instances":
		var shares []nfsShare
		for _, f := range s.fss {
			shares = append(shares, nfsShare{f})
		}
		s.collection(w, r, "nfsShare", contents(shares))
	case r.Method == http.MethodGet && r.URL.Path == "/api/types/storageResource/instances":
		s.collection(w, r, "storageResource", contents(s.resources))
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
	case "huge":
		// 200 with a well-formed answer larger than any client keeps (65 MiB of padding
		// in one string), streamed: vslint refuses it as too big.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		if _, err := w.Write([]byte(`{"entries": [], "pad": "`)); err != nil {
			return true
		}
		pad := bytes.Repeat([]byte("x"), 1<<20)
		for i := 0; i < 65; i++ {
			if _, err := w.Write(pad); err != nil {
				return true
			}
		}
		w.Write([]byte(`"}`))
		return true
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
	// fields=a,b.c: a member a that refers to another instance comes as its {"id"} alone,
	// b.c adds that instance's member c beside its id (Unisphere's nested fields).
	var fields map[string]bool
	nested := map[string][]string{}
	if f := q.Get("fields"); f != "" {
		fields = map[string]bool{"id": true}
		for _, n := range strings.Split(f, ",") {
			n = strings.TrimSpace(n)
			if dot := strings.IndexByte(n, '.'); dot > 0 {
				nested[n[:dot]] = append(nested[n[:dot]], n[dot+1:])
				n = n[:dot]
			}
			fields[n] = true
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
			if ref, ok := v.(map[string]interface{}); ok && fields != nil && fields[k] && ref["id"] != nil {
				sub := map[string]interface{}{"id": ref["id"]}
				for _, m := range nested[k] {
					if x, ok := ref[m]; ok {
						sub[m] = x
					}
				}
				c[k] = sub
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
// fault= empty: none); ?drop_lun=ID removes a LUN, ?pool=ID&free_pct=P changes a pool;
// ?logout_delay_s=S makes each logout answer S seconds late.
func (s *server) control(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Method == http.MethodPost {
		q := r.URL.Query()
		if _, ok := q["broken"]; ok {
			s.broken = q.Get("broken")
		}
		if v := q.Get("logout_delay_s"); v != "" {
			n, _ := strconv.Atoi(v)
			s.logoutDelay = time.Duration(n) * time.Second
		}
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
	stats := map[string]interface{}{"sessions": len(s.sessions), "issued": s.issued, "names": s.names()}
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
	fault := flag.String("fault", "", "KIND:N: answer the Nth instances read badly, once; N=0 every read (slow, drop, malformed, 401, http500, empty, huge, droplun)")
	paging := flag.String("paging", "both", "what a page says of the next: both (links and entryCount), links, count (entryCount only), none")
	stopAfter := flag.Int("stop-after-seconds", 0, "exit after this many seconds (0 = run until signalled)")
	flag.BoolVar(&leaky, "leaky", false, "pools, LUNs and NAS servers named after a site, a host and a domain (see the control's names)")
	role := flag.String("role", "production", "production (the violations scenario's array) or dr (its file side's replication destination, drEstate())")
	drDestination := flag.Bool("dr-destination", true, "with -role dr: the NAS servers say isReplicationDestination")
	drVMFS := flag.Bool("dr-vmfs", false, "with -role dr: also hold a LUN of ds-pool-ok (naa.6006016...d2)")
	noShares := flag.Bool("no-shares", false, "answer nfsShare reads with 404, as a Unity OE without the type")
	noReplField := flag.Bool("no-replication-field", false, "refuse nasServer reads that ask for isReplicationDestination (HTTP 422), as an older OE")
	volShare := flag.Bool("vol-share", false, "nas-spb-1 also exports a share vol (file system in pool-unjoined), which holds ds-nas-c2's /vol/ds-nas-c2")
	flag.Parse()

	password := simkit.Password(*passwordFile)
	s := &server{user: *user, password: password, pageCap: *pageCap, sessions: map[string]string{},
		stats: map[string]int{}, faultLeft: true, paging: *paging}
	switch *paging {
	case "both", "links", "count", "none":
	default:
		log.Fatalf("-paging %q: want both, links, count or none", *paging)
	}
	switch *role {
	case "production":
		s.pools, s.luns = estate()
		if leaky {
			for i := range s.pools {
				s.pools[i].Name = leakySite + s.pools[i].Name
			}
			for i := range s.luns {
				s.luns[i].Name = leakyHost + s.luns[i].Name
			}
		}
		s.nas, s.ifs = nasServers()
		s.fss, s.fc, s.eth, s.portals = fileSystems(), fcPorts(), ethernetPorts(), iscsiPortals()
		s.resources = storageResources()
		if *volShare {
			s.fss = append(s.fss, fileSystem{"fs_8", "vol", "pool_6", "nas_3"})
		}
	case "dr":
		s.pools, s.nas, s.fss = drEstate(*drDestination)
		_, s.ifs = nasServers()
		if *drVMFS {
			s.luns = []lun{{"sv_1", "lun-dr-ds-pool-ok", wwn("naa.600601600000000000000000000000d2"),
				"pool_1", 601 * GiB, 240 * GiB, true}}
		}
	default:
		log.Fatalf("-role %q: want production or dr", *role)
	}
	s.noShares, s.noReplField = *noShares, *noReplField
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
