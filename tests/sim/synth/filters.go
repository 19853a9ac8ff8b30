package main

// Property filters and WaitForUpdatesEx, as far as vslint's incremental
// polling uses them (vsphere/updates.c): CreatePropertyCollector, one
// CreateFilter per type over a ContainerView with the type's paths,
// WaitForUpdatesEx with maxWaitSeconds and maxObjectUpdates (truncated
// answers), CancelWaitForUpdates, DestroyPropertyFilter and
// DestroyPropertyCollector.
//
// Nothing is stored per object here either. The estate changes in epochs
// (POST /synth/mutate?pct=N, estate.go): an object changed between epochs
// a and b when one of the epochs a..b-1 picked it, which is arithmetic. A
// version is "E" (everything up to epoch E was sent) or "A.B.K" (the change
// set from epoch A to B is being sent in truncated pieces, K updates of it
// sent so far; A is "i" for the first UpdateSet, every object as "enter").
// A version from no epoch of this estate is an InvalidCollectorVersion fault,
// as after a vCenter restart.

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

type filterSpec struct {
	ref   string
	segs  []segment           // what its view holds of its type
	paths map[string][]string // by object type
}

type collector struct {
	session string
	filters []*filterSpec
	cancel  chan struct{} // closed by CancelWaitForUpdates; replaced by the next wait
}

type collectors struct {
	sync.Mutex
	m map[string]*collector
}

// maxWait caps a WaitForUpdatesEx without maxWaitSeconds (vCenter waits
// until something changes; a benchmark must not hang on a lost change).
const maxWait = 10 * time.Minute

// handleFilters answers the methods of this file; false: not one of them.
func (s *server) handleFilters(w http.ResponseWriter, r *http.Request, m *node, key, this string) bool {
	switch m.name {
	case "CreatePropertyCollector":
		ref := "session[" + key[:8] + "]pc-" + strconv.FormatInt(s.newID(), 10)
		s.pcs.Lock()
		s.pcs.m[ref] = &collector{session: key, cancel: make(chan struct{})}
		s.pcs.Unlock()
		s.simple(w, r, m.name, `<returnval type="PropertyCollector">`+xmlEscape(ref)+`</returnval>`)
	case "DestroyPropertyCollector":
		if s.ownCollector(w, r, key, this) != nil {
			s.pcs.Lock()
			delete(s.pcs.m, this)
			s.pcs.Unlock()
			s.simple(w, r, m.name, "")
		}
	case "CreateFilter":
		s.createFilter(w, r, m, key, this)
	case "DestroyPropertyFilter":
		s.pcs.Lock()
		found := false
		for _, pc := range s.pcs.m {
			for k, f := range pc.filters {
				if f.ref == this && pc.session == key {
					pc.filters = append(pc.filters[:k:k], pc.filters[k+1:]...)
					found = true
					break
				}
			}
		}
		s.pcs.Unlock()
		if !found {
			s.sendFault(w, r, notFound("PropertyFilter", this))
			return true
		}
		s.simple(w, r, m.name, "")
	case "CancelWaitForUpdates":
		if pc := s.ownCollector(w, r, key, this); pc != nil {
			s.pcs.Lock()
			close(pc.cancel)
			pc.cancel = make(chan struct{})
			s.pcs.Unlock()
			s.simple(w, r, m.name, "")
		}
	case "WaitForUpdatesEx":
		if pc := s.ownCollector(w, r, key, this); pc != nil {
			s.waitForUpdates(w, r, m, pc)
		}
	default:
		return false
	}
	return true
}

// ownCollector is the caller's collector this, or nil after a fault: a
// collector of another session, or of a session that ended, is not found.
func (s *server) ownCollector(w http.ResponseWriter, r *http.Request, key, this string) *collector {
	s.pcs.Lock()
	pc := s.pcs.m[this]
	s.pcs.Unlock()
	if pc == nil || pc.session != key {
		s.sendFault(w, r, notFound("PropertyCollector", this))
		return nil
	}
	return pc
}

func (s *server) createFilter(w http.ResponseWriter, r *http.Request, m *node, key, this string) {
	pc := s.ownCollector(w, r, key, this)
	if pc == nil {
		return
	}
	spec := m.child("spec")
	if spec == nil {
		s.sendFault(w, r, invalidArgument("spec"))
		return
	}
	e := s.cur().e
	f := &filterSpec{ref: "session[" + key[:8] + "]filter-" + strconv.FormatInt(s.newID(), 10),
		paths: map[string][]string{}}
	for _, os := range spec.all("objectSet") {
		obj := os.child("obj")
		if obj == nil || obj.attrs["type"] != "ContainerView" {
			s.sendFault(w, r, invalidArgument("spec.objectSet.obj"))
			return
		}
		ref := strings.TrimSpace(obj.text)
		s.mu.Lock()
		vt, ok := s.views[ref]
		s.mu.Unlock()
		if !ok {
			s.sendFault(w, r, notFound("ContainerView", ref))
			return
		}
		for _, seg := range viewSegments(e, vt) {
			matched := false
			for _, p := range spec.all("propSet") {
				if !isA(seg.typ, p.textOf("type")) {
					continue
				}
				matched = true
				named, ok := s.pathSet(w, r, seg.typ, p)
				if !ok {
					return
				}
				f.paths[seg.typ] = append(f.paths[seg.typ], named...)
			}
			if matched && seg.hi > seg.lo {
				f.segs = append(f.segs, seg)
			}
		}
	}
	s.pcs.Lock()
	pc.filters = append(pc.filters, f)
	s.pcs.Unlock()
	s.simple(w, r, m.name, `<returnval type="PropertyFilter">`+xmlEscape(f.ref)+`</returnval>`)
}

// changedIn reports whether object i of typ changed in an epoch from a to
// b-1 (a < 0: the first UpdateSet, where everything is new).
func changedIn(e *estate, typ string, i, a, b int) bool {
	kind := 0
	switch typ {
	case tVM:
		kind = kVM
	case tDS:
		kind = kDS
	case tPod:
		// A datastore cluster's summary sums its datastores'.
		lo, hi := e.podMembers(i)
		for g := lo; g < hi; g++ {
			if changedIn(e, tDS, g, a, b) {
				return true
			}
		}
		return false
	default:
		return false
	}
	for ep := a; ep < b; ep++ {
		if int(e.h(kMutate, i, kind<<8|ep)%10000) < e.mutatePct[ep]*100 {
			return true
		}
	}
	return false
}

// changedPaths: what a mutation changes of an object of typ, among paths.
func changedPaths(typ string, paths []string) []string {
	var out []string
	for _, p := range paths {
		if (typ == tVM && p == "runtime.powerState") || ((typ == tDS || typ == tPod) && p == "summary") {
			out = append(out, p)
		}
	}
	return out
}

type version struct {
	from, to, sent int // from -1: the first UpdateSet
	partial        bool
}

func parseVersion(v string, epochs int) (version, bool) {
	if v == "" {
		return version{from: -1, to: epochs}, true
	}
	p := strings.Split(v, ".")
	num := func(x string) (int, bool) {
		n, err := strconv.Atoi(x)
		return n, err == nil && n >= 0 && n <= epochs && strconv.Itoa(n) == x
	}
	if len(p) == 1 {
		n, ok := num(p[0])
		return version{from: n, to: n}, ok
	}
	if len(p) != 3 {
		return version{}, false
	}
	from, ok1 := num(p[0])
	if p[0] == "i" {
		from, ok1 = -1, true
	}
	to, ok2 := num(p[1])
	sent, err := strconv.Atoi(p[2])
	return version{from: from, to: to, sent: sent, partial: true},
		ok1 && ok2 && err == nil && sent >= 0 && from < to+1
}

func (s *server) waitForUpdates(w http.ResponseWriter, r *http.Request, m *node, pc *collector) {
	opts := m.child("options")
	wait, limit := -1, 0
	if v := opts.textOf("maxWaitSeconds"); v != "" {
		wait, _ = strconv.Atoi(v)
	}
	if v := opts.textOf("maxObjectUpdates"); v != "" {
		limit, _ = strconv.Atoi(v)
	}
	g := s.cur()
	vs := m.textOf("version")
	v, ok := parseVersion(vs, len(g.e.mutatePct))
	if !ok {
		s.sendFault(w, r, &fault{msg: "The collector version is not valid.", typ: "InvalidCollectorVersion"})
		return
	}
	if !v.partial && v.from >= 0 {
		// Caught up: wait for the next epoch, maxWaitSeconds or a cancel.
		s.pcs.Lock()
		cancel := pc.cancel
		s.pcs.Unlock()
		d := maxWait
		if wait >= 0 {
			d = time.Duration(wait) * time.Second
		}
		deadline := time.Now().Add(d)
		for len(g.e.mutatePct) == v.from {
			if !time.Now().Before(deadline) {
				s.simple(w, r, m.name, "") // no returnval: nothing changed in time
				return
			}
			select {
			case <-cancel:
				s.sendFault(w, r, &fault{msg: "The task was canceled by a user.", typ: "RequestCanceled"})
				return
			case <-time.After(50 * time.Millisecond):
			}
			g = s.cur()
		}
		v.to = len(g.e.mutatePct)
	}
	s.pcs.Lock()
	filters := append([]*filterSpec(nil), pc.filters...)
	s.pcs.Unlock()

	a := s.begin(w, r, http.StatusOK)
	o := a.o
	o.s(`<WaitForUpdatesExResponse xmlns="urn:vim25"><returnval>`)
	written, skipped, truncated := 0, 0, false
	// The version comes before the filter sets, as in vCenter's answers, and
	// depends on whether this answer holds the rest of the change set: a
	// counting pass first (no rendering, no memory).
	total := 0
	for _, f := range filters {
		for _, seg := range f.segs {
			for i := seg.lo; i < seg.hi; i++ {
				if v.from < 0 || changedIn(g.e, seg.typ, i, v.from, v.to) {
					total++
				}
			}
		}
	}
	next := strconv.Itoa(v.to)
	if limit > 0 && total-v.sent > limit {
		truncated = true
		from := "i"
		if v.from >= 0 {
			from = strconv.Itoa(v.from)
		}
		next = fmt.Sprintf("%s.%d.%d", from, v.to, v.sent+limit)
	}
	o.s("<version>")
	o.s(next)
	o.s("</version>")
	for _, f := range filters {
		open := false
		for _, seg := range f.segs {
			kind := "modify"
			paths := changedPaths(seg.typ, f.paths[seg.typ])
			if v.from < 0 {
				kind, paths = "enter", f.paths[seg.typ]
			}
			for i := seg.lo; i < seg.hi && !(limit > 0 && written == limit); i++ {
				if v.from >= 0 && !changedIn(g.e, seg.typ, i, v.from, v.to) {
					continue
				}
				if skipped < v.sent {
					skipped++
					continue
				}
				if !open {
					o.s(`<filterSet><filter type="PropertyFilter">`)
					o.s(f.ref)
					o.s(`</filter>`)
					open = true
				}
				o.s("<objectSet><kind>")
				o.s(kind)
				o.s(`</kind><obj type="`)
				o.s(seg.typ)
				o.s(`">`)
				o.s(moref(seg.typ, i))
				o.s("</obj>")
				o.change = true
				for _, p := range paths {
					g.writeProp(o, seg.typ, i, p)
				}
				o.change = false
				o.s("</objectSet>")
				written++
			}
		}
		if open {
			o.s("</filterSet>")
		}
	}
	if truncated {
		o.s("<truncated>true</truncated>")
	}
	o.s(`</returnval></WaitForUpdatesExResponse>`)
	s.end(a)
}

// dropCollectors forgets the collectors of a session that ended.
func (s *server) dropCollectors(key string) {
	s.pcs.Lock()
	for ref, pc := range s.pcs.m {
		if pc.session == key {
			close(pc.cancel)
			delete(s.pcs.m, ref)
		}
	}
	s.pcs.Unlock()
}

// countRetrieve counts a RetrievePropertiesEx by what it names (GET
// /synth/stats): a ContainerView, or objects by moref.
func countRetrieve(s *server, m *node) {
	for _, spec := range m.all("specSet") {
		for _, os := range spec.all("objectSet") {
			if obj := os.child("obj"); obj != nil && obj.attrs["type"] == "ContainerView" {
				atomic.AddInt64(&s.retrieveView, 1)
				return
			}
		}
	}
	atomic.AddInt64(&s.retrieveObjects, 1)
}
