package main

// The control endpoint: tests change the simulated estate while vslint
// watches it, the way an admin or a failure would, without a SOAP client.
//
//	POST /vslint-sim/host?name=esx-san-1&esxcli=refuse|allow
//	POST /vslint-sim/host?name=esx-san-1&connection=connected|disconnected|notResponding
//	POST /vslint-sim/datastore?name=ds-clean-01&free=BYTES[&capacity=BYTES]
//	    (a datastore filling up, freed, or grown; its datastore cluster's sums follow)
//	    or &free_pct=N (free space as a percentage of the capacity, e.g. 5)
//	POST /vslint-sim/host?name=esx-san-1&vnic=vmk1&mtu=9000 (a vmknic's MTU)
//	POST /vslint-sim/vm?name=vm-new&host=esx-san-1&datastore=ds-lab-01
//	    [&disks=N&gib=N&format=thin|lazyzeroedthick|eagerzeroedthick
//	    &controller=pvscsi|lsilogic|lsilogicsas&power=on|off]
//	    (a VM created on a host with its disks on a datastore; control_vm.go)
//	POST /vslint-sim/sessions (every session ends, as when vCenter restarts)
//	POST /vslint-sim/collector-version (the next WaitForUpdatesEx answers an
//	    InvalidCollectorVersion fault, as after a vCenter restart or failover)
//	GET  /vslint-sim/stats: {"retrieve_view": N, "retrieve_objects": N}, the
//	    RetrievePropertiesEx calls over a ContainerView and over objects by moref
//	GET  /vslint-sim/sessions: ["KEY", ...], the session cookies seen since the
//	    last POST /vslint-sim/sessions
//
// Answers 204 on success, 400 with a one-line reason otherwise. Changes go
// through simulator.Map.Update, so WaitForUpdatesEx sees them too.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"
)

const controlPrefix = "/vslint-sim/"

// controlMu guards what the control endpoint changes in hostExtras while
// the SOAP handlers read it.
var controlMu sync.Mutex

func hostByName(name string) *simulator.HostSystem {
	for _, e := range simulator.Map.All("HostSystem") {
		if h, ok := e.(*simulator.HostSystem); ok && h.Name == name {
			return h
		}
	}
	return nil
}

func refusesEsxcli(host types.ManagedObjectReference) bool {
	controlMu.Lock()
	defer controlMu.Unlock()
	return extraFor(host).refuseEsxcli
}

func controlHost(r *http.Request) error {
	name := r.FormValue("name")
	h := hostByName(name)
	if h == nil {
		return fmt.Errorf("no host %q", name)
	}
	switch v := r.FormValue("esxcli"); v {
	case "":
	case "refuse", "allow":
		controlMu.Lock()
		extraFor(h.Reference()).refuseEsxcli = v == "refuse"
		controlMu.Unlock()
	default:
		return fmt.Errorf("esxcli must be refuse or allow, not %q", v)
	}
	switch v := types.HostSystemConnectionState(r.FormValue("connection")); v {
	case "":
	case types.HostSystemConnectionStateConnected, types.HostSystemConnectionStateDisconnected,
		types.HostSystemConnectionStateNotResponding:
		simulator.Map.WithLock(h, func() {
			simulator.Map.Update(h, []types.PropertyChange{
				{Name: "runtime.connectionState", Val: v},
				{Name: "summary.runtime.connectionState", Val: v},
			})
		})
	default:
		return fmt.Errorf("connection must be connected, disconnected or notResponding, not %q", v)
	}
	if dev := r.FormValue("vnic"); dev != "" {
		mtu, err := strconv.Atoi(r.FormValue("mtu"))
		if err != nil || mtu < 576 || mtu > 9000 {
			return fmt.Errorf("mtu must be a number from 576 to 9000, not %q", r.FormValue("mtu"))
		}
		found := false
		simulator.Map.WithLock(h, func() {
			if h.Config == nil || h.Config.Network == nil {
				return
			}
			vnics := append([]types.HostVirtualNic(nil), h.Config.Network.Vnic...)
			for i := range vnics {
				if vnics[i].Device == dev {
					spec := vnics[i].Spec
					spec.Mtu = int32(mtu)
					vnics[i].Spec = spec
					found = true
				}
			}
			if found {
				simulator.Map.Update(h, []types.PropertyChange{{Name: "config.network.vnic", Val: vnics}})
			}
		})
		if !found {
			return fmt.Errorf("host %q has no vmknic %q", name, dev)
		}
	}
	return nil
}

func datastoreByName(name string) *simulator.Datastore {
	for _, e := range simulator.Map.All("Datastore") {
		if d, ok := e.(*simulator.Datastore); ok && d.Name == name {
			return d
		}
	}
	return nil
}

// bytesParam is the whole number of bytes in parameter key, keep when it is absent.
func bytesParam(r *http.Request, key string, keep int64) (int64, error) {
	v := r.FormValue(key)
	if v == "" {
		return keep, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s must be a whole number of bytes, not %q", key, v)
	}
	return n, nil
}

func controlDatastore(r *http.Request) error {
	name := r.FormValue("name")
	d := datastoreByName(name)
	if d == nil {
		return fmt.Errorf("no datastore %q", name)
	}
	var err error
	simulator.Map.WithLock(d, func() {
		var capacity, free int64
		if capacity, err = bytesParam(r, "capacity", d.Summary.Capacity); err != nil {
			return
		}
		if free, err = bytesParam(r, "free", d.Summary.FreeSpace); err != nil {
			return
		}
		if v := r.FormValue("free_pct"); v != "" {
			var pct float64
			if _, e := fmt.Sscanf(v, "%g", &pct); e != nil || pct < 0 || pct > 100 {
				err = fmt.Errorf("free_pct must be a number from 0 to 100, not %q", v)
				return
			}
			free = int64(float64(capacity) * pct / 100)
		}
		if free > capacity {
			err = fmt.Errorf("free (%d) is more than capacity (%d)", free, capacity)
			return
		}
		dc, df := capacity-d.Summary.Capacity, free-d.Summary.FreeSpace
		simulator.Map.Update(d, []types.PropertyChange{
			{Name: "summary.capacity", Val: capacity},
			{Name: "summary.freeSpace", Val: free},
		})
		if d.Parent != nil {
			if pod, ok := simulator.Map.Get(*d.Parent).(*simulator.StoragePod); ok {
				simulator.Map.WithLock(pod, func() {
					simulator.Map.Update(pod, []types.PropertyChange{
						{Name: "summary.capacity", Val: pod.Summary.Capacity + dc},
						{Name: "summary.freeSpace", Val: pod.Summary.FreeSpace + df},
					})
				})
			}
		}
	})
	return err
}

// invalidVersionNext makes the next WaitForUpdatesEx fail with
// InvalidCollectorVersion (wrapSDK), once.
var invalidVersionNext int32

const invalidVersionFault = `<?xml version="1.0" encoding="UTF-8"?>
<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><soapenv:Body><soapenv:Fault><faultcode>ServerFaultCode</faultcode><faultstring>The collector version is not valid.</faultstring><detail><InvalidCollectorVersionFault xmlns="urn:vim25" xsi:type="InvalidCollectorVersion"></InvalidCollectorVersionFault></detail></soapenv:Fault></soapenv:Body></soapenv:Envelope>`

// invalidVersion answers a WaitForUpdatesEx with the fault when one is due.
func invalidVersion(w http.ResponseWriter, body []byte) bool {
	if !bytes.Contains(body, []byte("<WaitForUpdatesEx")) ||
		!atomic.CompareAndSwapInt32(&invalidVersionNext, 1, 0) {
		return false
	}
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	w.WriteHeader(http.StatusInternalServerError)
	_, _ = w.Write([]byte(invalidVersionFault))
	return true
}

// seenSessions holds the session cookies of the SOAP requests seen (wrapSDK
// notes them): the simulator has no list of its sessions to end.
var seenSessions = struct {
	sync.Mutex
	keys map[string]bool
}{keys: make(map[string]bool)}

func noteSession(r *http.Request) {
	if c, err := r.Cookie("vmware_soap_session"); err == nil && c.Value != "" {
		seenSessions.Lock()
		seenSessions.keys[c.Value] = true
		seenSessions.Unlock()
	}
}

// dropSessions ends every session, as a vCenter restart does.
func dropSessions() {
	seenSessions.Lock()
	keys := seenSessions.keys
	seenSessions.keys = make(map[string]bool)
	seenSessions.Unlock()
	forgetSessions()
	other := &simulator.Context{Session: &simulator.Session{}}
	other.Session.Key = "vcsim-vslint-dropper"
	for k := range keys {
		// One at a time: an id already gone (logged out) fails its call only.
		simulator.Map.SessionManager().TerminateSession(other,
			&types.TerminateSession{SessionId: []string{strings.Trim(k, "\"")}})
	}
}

func serveControl(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && strings.TrimPrefix(r.URL.Path, controlPrefix) == "stats" {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, "{\"retrieve_view\": %d, \"retrieve_objects\": %d}\n",
			atomic.LoadInt64(&retrieveStats.view), atomic.LoadInt64(&retrieveStats.objects))
		return
	}
	if r.Method == http.MethodGet && strings.TrimPrefix(r.URL.Path, controlPrefix) == "sessions" {
		// The session cookies handed out, for the tests that look for them where they must
		// not be (a capture of vslint record).
		seenSessions.Lock()
		keys := []string{}
		for k := range seenSessions.keys {
			keys = append(keys, strings.Trim(k, "\""))
		}
		seenSessions.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(keys)
		return
	}
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	var err error
	switch strings.TrimPrefix(r.URL.Path, controlPrefix) {
	case "host":
		err = controlHost(r)
	case "datastore":
		err = controlDatastore(r)
	case "vm":
		err = controlVM(r)
	case "sessions":
		dropSessions()
	case "collector-version":
		atomic.StoreInt32(&invalidVersionNext, 1)
	default:
		err = fmt.Errorf("unknown control %q", r.URL.Path)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
