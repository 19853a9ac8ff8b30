package main

// vCenter's privileges, enforced: govmomi's simulator 0.24.2 keeps roles and
// permissions in its AuthorizationManager but checks none of them
// (simulator.go: "TODO: authz"). Here every SOAP call of an account other
// than the administrator (-user) is checked against the privileges its role
// grants on the object the call acts on, the way vCenter does, and refused
// with vCenter's fault: NoPermission naming the object and the privilege.
// Property reads are not refused as a whole: an object the account may not
// read (no System.Read on it) comes back with each asked property in the
// answer's missingSet, its fault a NoPermission, as vCenter answers. Only
// RetrievePropertiesEx's first page is filtered so: RetrieveProperties,
// ContinueRetrievePropertiesEx's later pages and WaitForUpdatesEx's updates
// are answered in full (vslint's pages of objects one account may not read
// are not tested).
//
// Sessions: a session cookie this simulator did not hand out at a Login it
// checked (a forged or forgotten one) gets vCenter's NotAuthenticated for
// anything but RetrieveServiceContent and Login. Login is the only way in:
// LoginByToken, LoginExtensionBy* and the rest are refused. A restricted
// account's request this file cannot parse is refused, not let through.
//
// Accounts: -account NAME[:ROLE] (repeatable) lets NAME log in with the same
// password as the administrator; with ROLE (a role name: ReadOnly, Admin,
// NoAccess, or one created by AddAuthorizationRole) NAME gets that role at
// the root folder, propagated, at start. Without one, NAME may log in and do
// nothing until someone with Authorization.ModifyPermissions (the
// administrator) gives it a permission through SetEntityPermissions, as
// govc's permissions.set does. Roles and permissions are the simulator's own
// AuthorizationManager's, so role.create / role.update / permissions.set
// through the API change what an account may do, from its next call on.
//
// Which privilege each method needs is methodPrivileges, from the vSphere Web
// Services API reference's "Required Privileges" (docs/vcenter-role.md cites
// each); a method missing from the table is refused to every account but the
// administrator, so a new call cannot pass unchecked.

import (
	"bytes"
	"encoding/xml"
	"flag"
	"fmt"
	"html"
	"log"
	"net/http"
	"strings"
	"sync"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// accountList is the -account flag's values.
type accountList []string

func (a *accountList) String() string     { return strings.Join(*a, ",") }
func (a *accountList) Set(s string) error { *a = append(*a, s); return nil }

var accountFlags accountList

func init() {
	flag.Var(&accountFlags, "account", "NAME[:ROLE]: another account that may log in (same password), "+
		"held to its permissions; with ROLE, that role at the root folder, propagated (repeatable)")
}

// where a method's privilege is checked.
type scope int

const (
	onRoot scope = iota // the root folder (managers, views, the collector)
	onThis              // the entity _this names
	onHost              // the host a per-host manager or executer belongs to
)

type privilegeNeed struct {
	privilege string
	where     scope
}

// methodPrivileges: the privilege each method vslint (or the role scripts)
// calls needs, and where vCenter checks it.
var methodPrivileges = map[string]privilegeNeed{
	"RetrieveServiceContent":       {"System.Anonymous", onRoot},
	"Login":                        {"System.Anonymous", onRoot},
	"Logout":                       {"System.Anonymous", onRoot},
	"SessionIsActive":              {"Sessions.ValidateSession", onRoot},
	"CurrentTime":                  {"System.Anonymous", onRoot},
	"RetrieveProperties":           {"System.Anonymous", onRoot},
	"RetrievePropertiesEx":         {"System.Anonymous", onRoot},
	"ContinueRetrievePropertiesEx": {"System.Anonymous", onRoot},
	"CancelRetrievePropertiesEx":   {"System.Anonymous", onRoot},
	"CreatePropertyCollector":      {"System.View", onRoot},
	"DestroyPropertyCollector":     {"System.View", onRoot},
	"CreateFilter":                 {"System.View", onRoot},
	"DestroyPropertyFilter":        {"System.View", onRoot},
	"WaitForUpdatesEx":             {"System.View", onRoot},
	"CreateContainerView":          {"System.View", onRoot},
	"DestroyView":                  {"System.View", onRoot},
	"GetAlarm":                     {"System.View", onRoot},
	"RetrieveEntityPermissions":    {"System.Read", onRoot},
	"RetrieveAllPermissions":       {"System.View", onRoot},
	"AddAuthorizationRole":         {"Authorization.ModifyRoles", onRoot},
	"UpdateAuthorizationRole":      {"Authorization.ModifyRoles", onRoot},
	"RemoveAuthorizationRole":      {"Authorization.ModifyRoles", onRoot},
	"SetEntityPermissions":         {"Authorization.ModifyPermissions", onRoot},
	"RemoveEntityPermission":       {"Authorization.ModifyPermissions", onRoot},
	"QueryOptions":                 {"System.Read", onHost},
	"RefreshDatastore":             {"System.Read", onThis},
	// Internal interface: not in the reference (docs/vcenter-role.md says
	// what is and is not confirmed about these two).
	"RetrieveManagedMethodExecuter": {"System.Read", onThis},
	"ExecuteSoap":                   {"Host.Config.Settings", onHost},
	// The reference gives Host.Config.Storage for every IscsiManager method.
	"QueryBoundVnics": {"Host.Config.Storage", onHost},
}

// authz maps session cookies to the accounts that logged in with them.
var authz = struct {
	sync.Mutex
	admin    string
	password string
	accounts map[string]bool   // lower-cased account names
	sessions map[string]string // cookie value (unquoted) -> account
}{accounts: map[string]bool{}, sessions: map[string]string{}}

// setupAccounts records the accounts and plants the -account roles. It runs
// after the scenario is planted, before the server answers.
func setupAccounts(admin, password string) error {
	authz.admin, authz.password = admin, password
	root := rootFolder()
	var perms []types.Permission
	for _, a := range accountFlags {
		name, role := a, ""
		if i := strings.LastIndex(a, ":"); i >= 0 {
			name, role = a[:i], a[i+1:]
		}
		if name == "" || strings.EqualFold(name, admin) {
			return fmt.Errorf("-account %q: want NAME[:ROLE], NAME not the -user administrator", a)
		}
		authz.accounts[strings.ToLower(name)] = true
		if role == "" {
			continue
		}
		id, ok := roleID(role)
		if !ok {
			return fmt.Errorf("-account %q: no role %q", a, role)
		}
		perms = append(perms, types.Permission{Entity: &root, Principal: name, RoleId: id, Propagate: true})
	}
	if len(perms) > 0 {
		am := authManager()
		simulator.Map.WithLock(am, func() {
			// vcsim's SetEntityPermissions replaces the entity's list: keep
			// the administrators' permissions.
			all := append(entityPermissions(am, root), perms...)
			am.SetEntityPermissions(&types.SetEntityPermissions{Entity: root, Permission: all})
		})
	}
	return nil
}

func authManager() *simulator.AuthorizationManager {
	si := simulator.Map.Get(vim25.ServiceInstance).(*simulator.ServiceInstance)
	return simulator.Map.Get(*si.Content.AuthorizationManager).(*simulator.AuthorizationManager)
}

func rootFolder() types.ManagedObjectReference {
	si := simulator.Map.Get(vim25.ServiceInstance).(*simulator.ServiceInstance)
	return si.Content.RootFolder
}

// entityPermissions are the permissions defined on e itself; the caller
// holds am's lock.
func entityPermissions(am *simulator.AuthorizationManager, e types.ManagedObjectReference) []types.Permission {
	res, _ := am.RetrieveEntityPermissions(&types.RetrieveEntityPermissions{Entity: e}).(*methods.RetrieveEntityPermissionsBody)
	if res == nil || res.Res == nil {
		return nil
	}
	return res.Res.Returnval
}

// roleID finds a role by name in the AuthorizationManager's role list.
func roleID(name string) (int32, bool) {
	am := authManager()
	var id int32
	found := false
	simulator.Map.WithLock(am, func() {
		for _, r := range am.RoleList {
			if r.Name == name {
				id, found = r.RoleId, true
			}
		}
	})
	return id, found
}

// restricted reports whether user is held to its permissions: every account
// but the administrator, who holds Admin everywhere as vCenter's
// administrator@vsphere.local does (and whom a permissions.set at the root,
// which replaces vcsim's list there, must not lock out).
func restricted(user string) bool {
	authz.Lock()
	defer authz.Unlock()
	return user != "" && !strings.EqualFold(user, authz.admin)
}

// privileges are the privileges user holds on entity e: those of the role of
// the nearest permission for user on e or, propagated, on an ancestor of e.
func privileges(user string, e types.ManagedObjectReference) map[string]bool {
	am := authManager()
	got := map[string]bool{}
	simulator.Map.WithLock(am, func() {
		role, found := int32(0), false
		for level, cur := 0, &e; cur != nil && !found; level++ {
			for _, p := range entityPermissions(am, *cur) {
				if !p.Group && strings.EqualFold(p.Principal, user) && (level == 0 || p.Propagate) {
					role, found = p.RoleId, true
				}
			}
			ent, ok := simulator.Map.Get(*cur).(mo.Entity)
			if !ok {
				break
			}
			cur = ent.Entity().Parent
		}
		if !found {
			return
		}
		for _, r := range am.RoleList {
			if r.RoleId == role {
				for _, id := range r.Privilege {
					got[id] = true
				}
			}
		}
	})
	return got
}

// may reports whether user holds privilege on e. System.Anonymous is in
// every role vCenter creates, and a session exists only after a login.
func may(user, privilege string, e types.ManagedObjectReference) bool {
	if !restricted(user) || privilege == "System.Anonymous" {
		return true
	}
	return privileges(user, e)[privilege]
}

// hostOf is the host a per-host object belongs to: its advanced option
// manager, its IscsiManager, its esxcli executer, or the host itself.
func hostOf(ref types.ManagedObjectReference) (types.ManagedObjectReference, bool) {
	switch ref.Type {
	case "HostSystem":
		return ref, true
	case "VslintHostExt":
		return types.ManagedObjectReference{Type: "HostSystem", Value: ref.Value}, true
	case "ReflectManagedMethodExecuter":
		if e, ok := simulator.Map.Get(ref).(*ManagedMethodExecuter); ok {
			return e.host, true
		}
	case "IscsiManager":
		if m, ok := simulator.Map.Get(ref).(*IscsiManager); ok {
			return m.host, true
		}
	case "OptionManager":
		for _, o := range simulator.Map.All("HostSystem") {
			h, ok := o.(*simulator.HostSystem)
			if ok && h.ConfigManager.AdvancedOption != nil && *h.ConfigManager.AdvancedOption == ref {
				return h.Self, true
			}
		}
	}
	return types.ManagedObjectReference{}, false
}

// soapCall is the method element of a SOAP request and what it holds.
type soapCall struct {
	method string
	this   types.ManagedObjectReference
	fields map[string]string // the text of the method's child elements
}

// parseCall reads the method, its _this and its simple arguments.
func parseCall(body []byte) (soapCall, bool) {
	call := soapCall{fields: map[string]string{}}
	d := xml.NewDecoder(bytes.NewReader(body))
	depth, inBody, field := 0, false, ""
	var text strings.Builder
	for {
		tok, err := d.Token()
		if err != nil {
			// Cut short or not XML: not read, whatever came first.
			return call, false
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			switch {
			case t.Name.Local == "Body" && !inBody:
				inBody = true
				depth = 0
			case inBody && depth == 1:
				call.method = t.Name.Local
			case inBody && depth == 2:
				field = t.Name.Local
				text.Reset()
				if field == "_this" {
					for _, a := range t.Attr {
						if a.Name.Local == "type" {
							call.this.Type = a.Value
						}
					}
				}
			}
		case xml.CharData:
			if inBody && depth == 2 {
				text.Write(t)
			}
		case xml.EndElement:
			if inBody && depth == 2 && field != "" {
				if field == "_this" {
					call.this.Value = strings.TrimSpace(text.String())
				} else if _, seen := call.fields[field]; !seen {
					call.fields[field] = text.String()
				}
				field = ""
			}
			if inBody && depth == 1 {
				return call, true
			}
			depth--
		}
	}
}

// sessionCookie is the request's vmware_soap_session value, unquoted.
func sessionCookie(r *http.Request) string {
	if c, err := r.Cookie("vmware_soap_session"); err == nil {
		return strings.Trim(c.Value, "\"")
	}
	return ""
}

// forgetSessions drops the cookie map (dropSessions ends them all).
func forgetSessions() {
	authz.Lock()
	authz.sessions = map[string]string{}
	authz.Unlock()
}

// enforce answers a call the caller may not make with vCenter's fault and
// reports true; false lets the request through. Logins are checked here
// (the simulator itself accepts any name, see main.go), and a successful one
// remembers which account holds the new session's cookie.
func enforce(w http.ResponseWriter, r *http.Request, body []byte, next http.Handler) bool {
	cookie := sessionCookie(r)
	authz.Lock()
	user, known := authz.sessions[cookie]
	authz.Unlock()
	// The administrator's calls (all of them in most tests) are not parsed twice.
	if (known || cookie == "") && !restricted(user) && !bytes.Contains(body, []byte("Login")) {
		return false
	}
	call, ok := parseCall(body)
	if !ok {
		if !restricted(user) && (known || cookie == "") {
			return false
		}
		log.Printf("authz: a request of %q this simulator cannot parse: refused", user)
		writeFault(w, "Permission to perform this operation was denied (vcsim-vslint could not read the request).",
			"NoPermission", "")
		return true
	}
	if strings.HasPrefix(call.method, "Login") && call.method != "Login" {
		log.Printf("authz: %s refused: only Login is checked", call.method)
		writeFault(w, "Cannot complete login: vcsim-vslint accepts only Login.", "InvalidLogin", "")
		return true
	}
	if cookie != "" && !known && call.method != "Login" && call.method != "RetrieveServiceContent" {
		log.Printf("authz: %s with a session cookie no checked Login gave: NotAuthenticated", call.method)
		writeFault(w, "The session is not authenticated.", "NotAuthenticated", "")
		return true
	}
	if call.method == "Login" {
		user, pass := call.fields["userName"], call.fields["password"]
		authz.Lock()
		known := strings.EqualFold(user, authz.admin) || authz.accounts[strings.ToLower(user)]
		good := known && pass == authz.password
		authz.Unlock()
		if !good {
			writeFault(w, "Cannot complete login due to an incorrect user name or password.",
				"InvalidLogin", "")
			return true
		}
		next.ServeHTTP(w, r)
		resp := http.Response{Header: w.Header()}
		given := false
		for _, c := range resp.Cookies() {
			if c.Name == "vmware_soap_session" {
				authz.Lock()
				authz.sessions[strings.Trim(c.Value, "\"")] = user
				authz.Unlock()
				given = true
			}
		}
		// A login on a session the simulator kept (no new cookie): that
		// cookie is now this account's.
		if !given && cookie != "" {
			authz.Lock()
			authz.sessions[cookie] = user
			authz.Unlock()
		}
		return true
	}
	if !restricted(user) {
		return false
	}
	n, listed := methodPrivileges[call.method]
	if !listed {
		log.Printf("authz: %s called %s, which the privilege table does not list: refused", user, call.method)
		writeFault(w, fmt.Sprintf("Permission to perform this operation was denied (%s is not in vcsim-vslint's privilege table).", call.method),
			"NoPermission", noPermissionDetail(call.this, ""))
		return true
	}
	on := rootFolder()
	switch n.where {
	case onThis:
		on = call.this
		if h, ok := hostOf(call.this); ok {
			on = h
		}
	case onHost:
		h, ok := hostOf(call.this)
		if !ok {
			return false // not a host's: the simulator answers as it does
		}
		on = h
	}
	if may(user, n.privilege, on) {
		return false
	}
	log.Printf("authz: %s may not %s on %s (needs %s)", user, call.method, on.Value, n.privilege)
	writeFault(w, "Permission to perform this operation was denied.", "NoPermission",
		noPermissionDetail(on, n.privilege))
	return true
}

func noPermissionDetail(obj types.ManagedObjectReference, privilege string) string {
	return fmt.Sprintf(`<object type="%s">%s</object><privilegeId>%s</privilegeId>`,
		html.EscapeString(obj.Type), html.EscapeString(obj.Value), html.EscapeString(privilege))
}

// writeFault answers a SOAP fault of type kind (InvalidLogin, NoPermission)
// as the simulator encodes its own.
func writeFault(w http.ResponseWriter, msg, kind, detail string) {
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	w.WriteHeader(http.StatusInternalServerError)
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>`+
		`<soapenv:Envelope xmlns:soapenc="http://schemas.xmlsoap.org/soap/encoding/" xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">`+
		`<soapenv:Body><soapenv:Fault><faultcode>ServerFaultCode</faultcode><faultstring>%s</faultstring>`+
		`<detail><%sFault xmlns="urn:vim25" xsi:type="%s">%s</%sFault></detail></soapenv:Fault></soapenv:Body></soapenv:Envelope>`,
		html.EscapeString(msg), kind, kind, detail, kind)
}

// filterReadable replaces the properties of each object user may not read
// (no System.Read on it) by a missingSet entry per property, each with a
// NoPermission fault, as vCenter answers such a read.
func filterReadable(user string, objs []types.ObjectContent) {
	if !restricted(user) {
		return
	}
	root := rootFolder()
	for i := range objs {
		o := &objs[i]
		on := o.Obj
		if _, ok := simulator.Map.Get(on).(mo.Entity); !ok {
			on = root // managers and alarms: checked at the root, as vCenter does
		}
		if may(user, "System.Read", on) {
			continue
		}
		for _, p := range o.PropSet {
			o.MissingSet = append(o.MissingSet, types.MissingProperty{
				Path: p.Name,
				Fault: types.LocalizedMethodFault{
					Fault:            &types.NoPermission{Object: o.Obj, PrivilegeId: "System.Read"},
					LocalizedMessage: "Permission to perform this operation was denied.",
				},
			})
		}
		o.PropSet = nil
	}
}
