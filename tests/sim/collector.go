package main

// Property collector paging and container-view fixes that govmomi's
// simulator 0.24.2 lacks.
//
// Stock RetrievePropertiesEx ignores RetrieveOptions.maxObjects, never
// returns a token and has no ContinueRetrievePropertiesEx. Real vCenter
// pages, so vslint's paging code would never be exercised. PagingCollector
// replaces the root PropertyCollector in simulator.Map; the simulator makes a
// per-session copy of it with reflect.New (see simulator.Session.Get), which
// is why the stock collector is embedded by value, not by pointer.

import (
	"fmt"
	"log"
	"sync"
	"sync/atomic"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

// expireAfterReads is the -expire-session-after flag: on that numbered
// RetrievePropertiesEx/ContinueRetrievePropertiesEx call (counted over the
// whole run, 0 = never) the caller's session is terminated and the call
// fails with NotAuthenticated, as when a real vCenter's session times out in
// the middle of a paged read. It happens once.
var expireAfterReads int64

var reads int64

// expireNow reports whether this read is the one that expires the session,
// and if so terminates the session of ctx.
func expireNow(ctx *simulator.Context) *soap.Fault {
	if expireAfterReads <= 0 || atomic.AddInt64(&reads, 1) != expireAfterReads {
		return nil
	}
	// TerminateSession refuses the caller's own session, so ask as someone else.
	other := &simulator.Context{Session: &simulator.Session{}}
	other.Session.Key = "vcsim-vslint-expirer"
	ctx.Map.SessionManager().TerminateSession(other,
		&types.TerminateSession{SessionId: []string{ctx.Session.Key}})
	log.Printf("session %s expired on read %d (-expire-session-after)", ctx.Session.Key, expireAfterReads)
	return simulator.Fault("The session is not authenticated.", &types.NotAuthenticated{})
}

// retrieveStats counts RetrievePropertiesEx calls by what they name: a
// ContainerView (what a full read of vslint does, one per type) or objects by
// moref (what an incremental round re-reads). GET /vslint-sim/stats answers
// them, so a test can tell a full read from an incremental one.
var retrieveStats struct {
	view, objects int64
}

func countRetrieve(r *types.RetrievePropertiesEx) {
	for _, spec := range r.SpecSet {
		for _, os := range spec.ObjectSet {
			if os.Obj.Type == "ContainerView" {
				atomic.AddInt64(&retrieveStats.view, 1)
				return
			}
		}
	}
	atomic.AddInt64(&retrieveStats.objects, 1)
}

// serverPageSize is the -page-size flag: the server-side cap on objects per
// page (0 = no cap).
var serverPageSize = 100

type pendingResult struct {
	objects  []types.ObjectContent
	pageSize int
	typ      string // the objects' type, for -fault KIND:N:METHOD:TYPE
}

// endlessToken is the -endless-token flag: a paged result never ends; once
// its objects are served, every ContinueRetrievePropertiesEx answers no
// object and the same token again, as a broken server would, forever.
var endlessToken bool

// pageType is the type of the objects a token pages through ("" when none).
func pageType(token string) string {
	pages.Lock()
	defer pages.Unlock()
	if p, ok := pages.pending[token]; ok {
		return p.typ
	}
	return ""
}

var pages = struct {
	sync.Mutex
	next    int64
	pending map[string]*pendingResult
}{pending: make(map[string]*pendingResult)}

// PagingCollector is the root PropertyCollector with paging.
type PagingCollector struct {
	simulator.PropertyCollector
}

func effectivePageSize(opts types.RetrieveOptions) int {
	n := 0
	if opts.MaxObjects > 0 {
		n = int(opts.MaxObjects)
	}
	if serverPageSize > 0 && (n == 0 || serverPageSize < n) {
		n = serverPageSize
	}
	return n
}

// takePage cuts the first page off objs; when more remain it stores them
// under a new token.
func takePage(objs []types.ObjectContent, size int) ([]types.ObjectContent, string) {
	if size <= 0 || len(objs) <= size {
		return objs, ""
	}
	pages.Lock()
	defer pages.Unlock()
	pages.next++
	token := fmt.Sprintf("%d", pages.next)
	pages.pending[token] = &pendingResult{objects: objs[size:], pageSize: size, typ: objs[0].Obj.Type}
	return objs[:size], token
}

func invalidToken(token string) *soap.Fault {
	return simulator.Fault(fmt.Sprintf("A specified parameter was not correct: token %q", token),
		&types.InvalidArgument{InvalidProperty: "token"})
}

// RetrievePropertiesEx returns at most the effective page size objects and a
// token when more remain.
func (pc *PagingCollector) RetrievePropertiesEx(ctx *simulator.Context, r *types.RetrievePropertiesEx) soap.HasFault {
	if f := expireNow(ctx); f != nil {
		return &methods.RetrievePropertiesExBody{Fault_: f}
	}
	countRetrieve(r)
	res := pc.PropertyCollector.RetrievePropertiesEx(ctx, r)
	body, ok := res.(*methods.RetrievePropertiesExBody)
	if !ok || body.Fault_ != nil || body.Res == nil || body.Res.Returnval == nil {
		return res
	}
	rr := body.Res.Returnval
	if len(rr.Objects) == 0 {
		// vCenter answers an empty result with no returnval at all.
		body.Res.Returnval = nil
		return body
	}
	filterReadable(ctx.Session.UserName, rr.Objects)
	rr.Objects, rr.Token = takePage(rr.Objects, effectivePageSize(r.Options))
	return body
}

// ContinueRetrievePropertiesEx returns the next page for a token.
func (pc *PagingCollector) ContinueRetrievePropertiesEx(ctx *simulator.Context, r *types.ContinueRetrievePropertiesEx) soap.HasFault {
	body := &methods.ContinueRetrievePropertiesExBody{}
	if f := expireNow(ctx); f != nil {
		body.Fault_ = f
		return body
	}
	pages.Lock()
	p, ok := pages.pending[r.Token]
	if !ok {
		pages.Unlock()
		body.Fault_ = invalidToken(r.Token)
		return body
	}
	n := p.pageSize
	if n > len(p.objects) {
		n = len(p.objects)
	}
	objs := p.objects[:n]
	p.objects = p.objects[n:]
	token := r.Token
	if len(p.objects) == 0 && !endlessToken {
		delete(pages.pending, r.Token)
		token = ""
	}
	pages.Unlock()
	body.Res = &types.ContinueRetrievePropertiesExResponse{
		Returnval: types.RetrieveResult{Token: token, Objects: objs},
	}
	return body
}

// CancelRetrievePropertiesEx drops the rest of a paged result.
func (pc *PagingCollector) CancelRetrievePropertiesEx(ctx *simulator.Context, r *types.CancelRetrievePropertiesEx) soap.HasFault {
	body := &methods.CancelRetrievePropertiesExBody{}
	pages.Lock()
	_, ok := pages.pending[r.Token]
	delete(pages.pending, r.Token)
	pages.Unlock()
	if !ok {
		body.Fault_ = invalidToken(r.Token)
		return body
	}
	body.Res = &types.CancelRetrievePropertiesExResponse{}
	return body
}

func pendingTokens() int {
	pages.Lock()
	defer pages.Unlock()
	return len(pages.pending)
}

// PodAwareViewManager fixes ContainerView traversal: the stock walk does not
// descend into StoragePod objects, so datastores inside a datastore cluster
// would be missing from a recursive Datastore view on the root folder.
type PodAwareViewManager struct {
	simulator.ViewManager
}

func isAncestor(root types.ManagedObjectReference, e mo.Entity) bool {
	for p := e.Entity().Parent; p != nil; {
		if *p == root {
			return true
		}
		obj, ok := simulator.Map.Get(*p).(mo.Entity)
		if !ok {
			return false
		}
		p = obj.Entity().Parent
	}
	return false
}

// CreateContainerView adds the children of StoragePods under the container.
func (m *PodAwareViewManager) CreateContainerView(ctx *simulator.Context, req *types.CreateContainerView) soap.HasFault {
	res := m.ViewManager.CreateContainerView(ctx, req)
	body, ok := res.(*methods.CreateContainerViewBody)
	if !ok || body.Fault_ != nil || body.Res == nil {
		return res
	}
	cv, ok := ctx.Session.Get(body.Res.Returnval).(*simulator.ContainerView)
	if !ok {
		return res
	}
	want := func(t string) bool {
		if len(req.Type) == 0 {
			return true
		}
		for _, x := range req.Type {
			if x == t || x == "ManagedEntity" {
				return true
			}
		}
		return false
	}
	seen := make(map[types.ManagedObjectReference]bool, len(cv.View))
	for _, r := range cv.View {
		seen[r] = true
	}
	for _, e := range simulator.Map.All("StoragePod") {
		pod := e.(*simulator.StoragePod)
		inScope := pod.Self == req.Container ||
			(req.Recursive && isAncestor(req.Container, pod))
		if !inScope {
			continue
		}
		for _, c := range pod.ChildEntity {
			if want(c.Type) && !seen[c] {
				seen[c] = true
				cv.View = append(cv.View, c)
			}
		}
	}
	return body
}

func installCollectorAndViews() {
	content := simulator.Map.Get(vpxServiceContent().PropertyCollector)
	pc := &PagingCollector{}
	pc.Self = content.Reference()
	simulator.Map.Put(pc)

	vmRef := vpxServiceContent().ViewManager
	if stock, ok := simulator.Map.Get(*vmRef).(*simulator.ViewManager); ok {
		simulator.Map.Put(&PodAwareViewManager{*stock})
	}
}
