package main

// Adding a VM while vslint watches: CreateVM_Task and CloneVM_Task of
// govmomi's simulator 0.24 crash in the planted scenarios, so the control
// endpoint builds the VM the way the scenarios do (fillVM) and registers it
// the way the simulator's own createVM task does: the folder lists it before
// simulator.Map.Put (ContainerView.PutObject finds new objects through their
// parent's childEntity), Put announces it to every property collector (an
// "enter" for the filters whose views hold it), and its host, datastores and
// resource pool list it through simulator.Map.Update (a "modify" of each).

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"
)

// liveWorld is the planted world, for the controls that add objects to it.
var liveWorld *world

func (w *world) addVMLive(s vmSpec) *simulator.VirtualMachine {
	vm := &simulator.VirtualMachine{}
	vm.Name = s.name
	vm.Self.Type = "VirtualMachine"
	simulator.Map.NewEntity(vm)
	folder := simulator.Map.Get(w.folders.VmFolder.Reference()).(*simulator.Folder)
	vm.Parent = &folder.Self
	pool, dsRefs := w.fillVM(vm, s)
	lock(folder, func() { folder.ChildEntity = append(folder.ChildEntity, vm.Self) })
	simulator.Map.Put(vm)

	if !s.template {
		lock(pool, func() {
			simulator.Map.Update(pool, []types.PropertyChange{{Name: "vm", Val: append(append([]types.ManagedObjectReference(nil), pool.Vm...), vm.Self)}})
		})
	}
	lock(s.host, func() {
		simulator.Map.Update(s.host, []types.PropertyChange{{Name: "vm", Val: append(append([]types.ManagedObjectReference(nil), s.host.Vm...), vm.Self)}})
	})
	for _, r := range dsRefs {
		ds := simulator.Map.Get(r).(*simulator.Datastore)
		lock(ds, func() {
			simulator.Map.Update(ds, []types.PropertyChange{{Name: "vm", Val: append(append([]types.ManagedObjectReference(nil), ds.Vm...), vm.Self)}})
		})
	}
	w.vms[s.name] = vm
	return vm
}

// intParam is parameter key as a whole number from lo to hi, def when absent.
func intParam(r *http.Request, key string, def, lo, hi int) (int, error) {
	v := r.FormValue(key)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("%s must be a whole number from %d to %d, not %q", key, lo, hi, v)
	}
	return n, nil
}

func controlVM(r *http.Request) error {
	w := liveWorld
	name := r.FormValue("name")
	if name == "" {
		return fmt.Errorf("name is missing")
	}
	controlMu.Lock()
	defer controlMu.Unlock()
	if w.vms[name] != nil {
		return fmt.Errorf("a VM %q exists already", name)
	}
	h := hostByName(r.FormValue("host"))
	if h == nil {
		return fmt.Errorf("no host %q", r.FormValue("host"))
	}
	ds := datastoreByName(r.FormValue("datastore"))
	if ds == nil {
		return fmt.Errorf("no datastore %q", r.FormValue("datastore"))
	}
	n, err := intParam(r, "disks", 1, 1, 15)
	if err != nil {
		return err
	}
	gib, err := intParam(r, "gib", 40, 1, 65536)
	if err != nil {
		return err
	}
	format, err := choice(r, "format", "lazyzeroedthick", "thin", "lazyzeroedthick", "eagerzeroedthick")
	if err != nil {
		return err
	}
	ctrl, err := choice(r, "controller", "pvscsi", "pvscsi", "lsilogic", "lsilogicsas")
	if err != nil {
		return err
	}
	power, err := choice(r, "power", "", "on", "off")
	if err != nil {
		return err
	}
	guest, err := choice(r, "guest", "other3xLinux64Guest", "other3xLinux64Guest", "rhel8_64Guest",
		"windows2019srv_64Guest")
	if err != nil {
		return err
	}
	s := vmSpec{name: name, host: h, poweredOff: power == "off", guestId: guest,
		controllers: []ctrlSpec{{kind: ctrl}}}
	for i := 0; i < n; i++ {
		s.disks = append(s.disks, diskSpec{ds: ds, gib: int64(gib), format: format})
	}
	w.addVMLive(s)
	return nil
}

// choice returns the form value key, def when it is absent, or an error that
// lists the values allowed.
func choice(r *http.Request, key, def string, allowed ...string) (string, error) {
	v := r.FormValue(key)
	if v == "" {
		return def, nil
	}
	for _, a := range allowed {
		if v == a {
			return v, nil
		}
	}
	last := len(allowed) - 1
	return "", fmt.Errorf("%s must be %s or %s, not %q", key, strings.Join(allowed[:last], ", "),
		allowed[last], v)
}
