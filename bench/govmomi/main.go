// Command govmomi-poll reads what vslint's poll reads, the way a govmomi
// (Go) client does it: the same views, the same property paths, the same
// pages (RetrievePropertiesEx + ContinueRetrievePropertiesEx, maxObjects),
// each page decoded into govmomi's mo types and kept (an inventory in
// memory, as a govmomi tool holds it), then the same per-host reads
// (QueryOptions, QueryBoundVnics, esxcli through ExecuteSoap, on 4
// connections like vslint) and the alarm reads. It stores nothing.
//
// Built from Debian's packaged govmomi in GOPATH mode (tests/sim/build.sh OUT CACHE bench/govmomi).
// usage: govmomi-poll -url URL -user U -password-file F -paths PATHS.json [-max-objects 500]
// PATHS.json maps each read ("VirtualMachine", ...) to its property paths, as
// vslint requests them (bench/bench_scale.py writes it from vsphere/*.c).
// It prints one JSON line: objects read, hosts, requests, seconds.
package main

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"flag"
	"fmt"
	"io/ioutil"
	"log"
	"net/url"
	"os"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

// The esxcli-through-vCenter methods are internal to govmomi; these are the
// same two request/response pairs, registered with the vim25 type table.
type retrieveMMERequest struct {
	This types.ManagedObjectReference `xml:"_this"`
}

type retrieveMMEResponse struct {
	Returnval *types.ManagedObjectReference `xml:"urn:vim25 returnval"`
}

type retrieveMMEBody struct {
	Req    *retrieveMMERequest  `xml:"urn:vim25 RetrieveManagedMethodExecuter"`
	Res    *retrieveMMEResponse `xml:"urn:vim25 RetrieveManagedMethodExecuterResponse"`
	Fault_ *soap.Fault          `xml:"http://schemas.xmlsoap.org/soap/envelope/ Fault,omitempty"`
}

func (b *retrieveMMEBody) Fault() *soap.Fault { return b.Fault_ }

type executeSoapRequest struct {
	This    types.ManagedObjectReference `xml:"_this"`
	Moid    string                       `xml:"moid"`
	Version string                       `xml:"version"`
	Method  string                       `xml:"method"`
}

type soapResult struct {
	Response string `xml:"response,omitempty"`
	Fault    *struct {
		FaultMsg string `xml:"faultMsg"`
	} `xml:"fault,omitempty"`
}

type executeSoapResponse struct {
	Returnval *soapResult `xml:"urn:vim25 returnval"`
}

type executeSoapBody struct {
	Req    *executeSoapRequest  `xml:"urn:vim25 ExecuteSoap"`
	Res    *executeSoapResponse `xml:"urn:vim25 ExecuteSoapResponse"`
	Fault_ *soap.Fault          `xml:"http://schemas.xmlsoap.org/soap/envelope/ Fault,omitempty"`
}

func (b *executeSoapBody) Fault() *soap.Fault { return b.Fault_ }

func init() {
	types.Add("RetrieveManagedMethodExecuter", reflect.TypeOf((*retrieveMMERequest)(nil)).Elem())
	types.Add("ExecuteSoap", reflect.TypeOf((*executeSoapRequest)(nil)).Elem())
}

// esxcli's answer: <obj xsi:type="ArrayOfDataObject"><DataObject>...fields...</DataObject>...
type esxcliDoc struct {
	Objects []struct {
		Fields []struct {
			XMLName xml.Name
			Value   string `xml:",chardata"`
		} `xml:",any"`
	} `xml:"DataObject"`
}

var requests int64

type counting struct{ soap.RoundTripper }

func (c counting) RoundTrip(ctx context.Context, req, res soap.HasFault) error {
	atomic.AddInt64(&requests, 1)
	return c.RoundTripper.RoundTrip(ctx, req, res)
}

// read is one of vslint's reads: a view of a type and the paths it asks for.
type read struct {
	Type  string   `json:"type"`
	Paths []string `json:"paths"`
}

func main() {
	rawURL := flag.String("url", "", "SDK URL")
	user := flag.String("user", "vslint", "user")
	pwFile := flag.String("password-file", "", "password file")
	pathsFile := flag.String("paths", "", "JSON: {\"reads\": [{type, paths}], \"option\": NAME}")
	maxObjects := flag.Int("max-objects", 500, "maxObjects per page")
	readers := flag.Int("readers", 4, "connections for the per-host reads")
	flag.Parse()

	pw, err := ioutil.ReadFile(*pwFile)
	if err != nil {
		log.Fatal(err)
	}
	var spec struct {
		Reads  []read `json:"reads"`
		Option string `json:"option"`
	}
	b, err := ioutil.ReadFile(*pathsFile)
	if err == nil {
		err = json.Unmarshal(b, &spec)
	}
	if err != nil {
		log.Fatalf("-paths: %v", err)
	}
	u, err := url.Parse(*rawURL)
	if err != nil {
		log.Fatal(err)
	}
	u.User = url.UserPassword(*user, strings.TrimRight(string(pw), "\r\n"))

	ctx := context.Background()
	t0 := time.Now()
	c, err := govmomi.NewClient(ctx, u, true)
	if err != nil {
		log.Fatalf("login: %v", err)
	}
	c.Client.RoundTripper = counting{c.Client.RoundTripper}
	atomic.AddInt64(&requests, 2)

	// The inventory, kept as govmomi tools keep it.
	inventory := map[string][]interface{}{}
	vm := view.NewManager(c.Client)
	for _, rd := range spec.Reads {
		v, err := vm.CreateContainerView(ctx, c.ServiceContent.RootFolder, []string{rd.Type}, true)
		if err != nil {
			log.Fatalf("view %s: %v", rd.Type, err)
		}
		objs, err := retrieve(ctx, c.Client, rd, []types.ObjectSpec{{
			Obj: v.Reference(), Skip: types.NewBool(true),
			SelectSet: []types.BaseSelectionSpec{&types.TraversalSpec{Type: "ContainerView", Path: "view"}},
		}}, *maxObjects)
		if err != nil {
			log.Fatalf("read %s: %v", rd.Type, err)
		}
		inventory[rd.Type] = append(inventory[rd.Type], objs...)
		if err := v.Destroy(ctx); err != nil {
			log.Fatalf("destroy view: %v", err)
		}
	}

	// Per host: the advanced option, the iSCSI bindings, esxcli on hosts with SAN LUNs.
	var hosts []mo.HostSystem
	for _, o := range inventory["HostSystem"] {
		hosts = append(hosts, o.(mo.HostSystem))
	}
	work := make(chan *mo.HostSystem)
	var wg sync.WaitGroup
	var esxcliRows int64
	for k := 0; k < *readers; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Its own connection, sharing the session.
			sc := c.Client.Client.NewServiceClient(c.Client.Client.URL().Path, "vim25")
			vc := &vim25.Client{Client: sc, ServiceContent: c.ServiceContent, RoundTripper: counting{sc}}
			for h := range work {
				n, err := readHost(ctx, vc, h, spec.Option)
				if err != nil {
					log.Fatalf("host %s: %v", h.Name, err)
				}
				atomic.AddInt64(&esxcliRows, int64(n))
			}
		}()
	}
	for i := range hosts {
		work <- &hosts[i]
	}
	close(work)
	wg.Wait()

	// Alarms: the root folder, every alarm's info, the performance counters.
	root, err := retrieve(ctx, c.Client, read{Type: "Folder", Paths: []string{"name", "parent", "childType"}},
		[]types.ObjectSpec{{Obj: c.ServiceContent.RootFolder, Skip: types.NewBool(false)}}, *maxObjects)
	if err != nil {
		log.Fatalf("root folder: %v", err)
	}
	inventory["root"] = root
	alarms, err := methods.GetAlarm(ctx, c.Client, &types.GetAlarm{This: *c.ServiceContent.AlarmManager})
	if err != nil {
		log.Fatalf("GetAlarm: %v", err)
	}
	var os_ []types.ObjectSpec
	for _, a := range alarms.Returnval {
		os_ = append(os_, types.ObjectSpec{Obj: a, Skip: types.NewBool(false)})
	}
	if len(os_) > 0 {
		al, err := retrieve(ctx, c.Client, read{Type: "Alarm", Paths: []string{"info"}}, os_, *maxObjects)
		if err != nil {
			log.Fatalf("alarms: %v", err)
		}
		inventory["Alarm"] = al
	}
	pc, err := retrieve(ctx, c.Client, read{Type: "PerformanceManager", Paths: []string{"perfCounter"}},
		[]types.ObjectSpec{{Obj: *c.ServiceContent.PerfManager, Skip: types.NewBool(false)}}, *maxObjects)
	if err != nil {
		log.Fatalf("perfCounter: %v", err)
	}
	inventory["PerformanceManager"] = pc
	_ = c.Logout(ctx)
	n := 0
	for _, v := range inventory {
		n += len(v)
	}
	out, _ := json.Marshal(map[string]interface{}{"objects": n, "hosts": len(hosts), "esxcli_rows": esxcliRows,
		"requests": atomic.LoadInt64(&requests) + 1, "seconds": time.Since(t0).Seconds()})
	fmt.Println(string(out))
	os.Exit(0)
}

// retrieve reads every page of one property filter and decodes each object.
func retrieve(ctx context.Context, c *vim25.Client, rd read, objs []types.ObjectSpec, maxObjects int) ([]interface{}, error) {
	req := types.RetrievePropertiesEx{
		This: c.ServiceContent.PropertyCollector,
		SpecSet: []types.PropertyFilterSpec{{
			ObjectSet: objs,
			PropSet:   []types.PropertySpec{{Type: rd.Type, PathSet: rd.Paths}},
		}},
		Options: types.RetrieveOptions{MaxObjects: int32(maxObjects)},
	}
	res, err := methods.RetrievePropertiesEx(ctx, c, &req)
	if err != nil {
		return nil, err
	}
	var all []interface{}
	for res != nil && res.Returnval != nil {
		for _, oc := range res.Returnval.Objects {
			v, err := mo.ObjectContentToType(oc)
			if err != nil {
				return nil, err
			}
			all = append(all, v)
		}
		token := res.Returnval.Token
		if token == "" {
			break
		}
		cres, err := methods.ContinueRetrievePropertiesEx(ctx, c, &types.ContinueRetrievePropertiesEx{
			This: c.ServiceContent.PropertyCollector, Token: token})
		if err != nil {
			return nil, err
		}
		res = &types.RetrievePropertiesExResponse{Returnval: &cres.Returnval}
	}
	return all, nil
}

func readHost(ctx context.Context, c *vim25.Client, h *mo.HostSystem, option string) (int, error) {
	cm := h.ConfigManager
	if cm.AdvancedOption != nil {
		if _, err := methods.QueryOptions(ctx, c, &types.QueryOptions{This: *cm.AdvancedOption, Name: option}); err != nil {
			return 0, err
		}
	}
	san := false
	if h.Config != nil && h.Config.StorageDevice != nil {
		for _, a := range h.Config.StorageDevice.HostBusAdapter {
			if is, ok := a.(*types.HostInternetScsiHba); ok && cm.IscsiManager != nil {
				if _, err := methods.QueryBoundVnics(ctx, c, &types.QueryBoundVnics{This: *cm.IscsiManager, IScsiHbaName: is.Device}); err != nil {
					return 0, err
				}
			}
		}
		for _, l := range h.Config.StorageDevice.ScsiLun {
			if d, ok := l.(*types.HostScsiDisk); ok && d.LocalDisk != nil && !*d.LocalDisk {
				san = true
			}
		}
	}
	if !san {
		return 0, nil
	}
	var mb retrieveMMEBody
	mb.Req = &retrieveMMERequest{This: h.Self}
	if err := c.RoundTrip(ctx, &mb, &mb); err != nil {
		return 0, err
	}
	if mb.Res == nil || mb.Res.Returnval == nil {
		return 0, fmt.Errorf("no managed method executer")
	}
	rows := 0
	for _, cmd := range [][2]string{
		{"ha-cli-handler-storage-nmp-device", "vim.EsxCLI.storage.nmp.device.list"},
		{"ha-cli-handler-storage-nmp-satp-rule", "vim.EsxCLI.storage.nmp.satp.rule.list"},
	} {
		var eb executeSoapBody
		eb.Req = &executeSoapRequest{This: *mb.Res.Returnval, Moid: cmd[0], Version: "urn:vim25/5.0", Method: cmd[1]}
		if err := c.RoundTrip(ctx, &eb, &eb); err != nil {
			return 0, err
		}
		if eb.Res == nil || eb.Res.Returnval == nil || eb.Res.Returnval.Response == "" {
			return 0, fmt.Errorf("esxcli %s: no response", cmd[1])
		}
		var doc esxcliDoc
		if err := xml.Unmarshal([]byte(eb.Res.Returnval.Response), &doc); err != nil {
			return 0, fmt.Errorf("esxcli %s: %v", cmd[1], err)
		}
		rows += len(doc.Objects)
	}
	return rows, nil
}
