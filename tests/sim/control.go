package main

// The control endpoint: tests change the simulated estate while vslint
// watches it, the way an admin or a failure would, without a SOAP client.
//
//	POST /vslint-sim/host?name=esx-san-1&esxcli=refuse|allow
//	POST /vslint-sim/host?name=esx-san-1&connection=connected|disconnected|notResponding
//	POST /vslint-sim/datastore?name=ds-1&free_pct=5   (fill it to 5 % free)
//
// Answers 204 on success, 400 with a one-line reason otherwise. Changes go
// through simulator.Map.Update, so WaitForUpdatesEx sees them too.

import (
	"fmt"
	"net/http"
	"strings"
	"sync"

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
	return nil
}

func controlDatastore(r *http.Request) error {
	name := r.FormValue("name")
	var ds *simulator.Datastore
	for _, e := range simulator.Map.All("Datastore") {
		if d, ok := e.(*simulator.Datastore); ok && d.Name == name {
			ds = d
		}
	}
	if ds == nil {
		return fmt.Errorf("no datastore %q", name)
	}
	if v := r.FormValue("free_pct"); v != "" {
		var pct float64
		if _, err := fmt.Sscanf(v, "%g", &pct); err != nil || pct < 0 || pct > 100 {
			return fmt.Errorf("free_pct must be a number from 0 to 100, not %q", v)
		}
		simulator.Map.WithLock(ds, func() {
			summary := ds.Summary
			summary.FreeSpace = int64(float64(summary.Capacity) * pct / 100)
			simulator.Map.Update(ds, []types.PropertyChange{{Name: "summary", Val: summary}})
		})
	}
	return nil
}

func serveControl(w http.ResponseWriter, r *http.Request) {
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
	default:
		err = fmt.Errorf("unknown control %q", r.URL.Path)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
