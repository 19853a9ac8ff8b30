// Command vcsim-vslint is the vCenter simulator harness for vslint's tests:
// govmomi's simulator (vcsim) with planted scenarios and the vCenter
// behaviour vslint relies on that the stock simulator lacks (paging,
// iSCSI, SAN LUNs, esxcli, per-host advanced options). See README.md.
package main

import (
	"bufio"
	"context"
	"encoding/pem"
	"flag"
	"fmt"
	"io/ioutil"
	"log"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/vmware/govmomi/simulator"

	"simkit"
)

func renameFile(from, to string) error { return os.Rename(from, to) }

func main() {
	scenario := flag.String("scenario", "clean", "clean | violations | edges | gate | leaky | scale:N")
	listen := flag.String("listen", "127.0.0.1:0", "listen address (host:port)")
	pageSize := flag.Int("page-size", 100, "server-side cap on objects per RetrievePropertiesEx page (0 = none)")
	useTLS := flag.Bool("tls", false, "serve HTTPS")
	certOut := flag.String("cert-out", "", "write the server certificate (PEM) to this file (with -tls)")
	user := flag.String("user", "vslint", "the administrator's user name (every privilege everywhere; see -account)")
	passwordFile := flag.String("password-file", "", "file holding the password (default: vslint-secret)")
	truthFile := flag.String("truth", "", "write the truth JSON document here after planting")
	expireAfter := flag.Int64("expire-session-after", 0, "terminate the session on this numbered property-collector read, once (0 = never)")
	gz := flag.Bool("gzip", false, "gzip-compress SOAP answers for clients that accept it, as vCenter does")
	fault := flag.String("fault", "", "KIND:N[:METHOD[:TYPE]]: answer the Nth property read (of METHOD, of objects of TYPE) badly, once (truncate, malformed, drop, http500, lose, stall)")
	endless := flag.Bool("endless-token", false, "paged reads never end: past the last object, every ContinueRetrievePropertiesEx answers no object and the token again")
	stopAfter := flag.Int("stop-after-seconds", 0, "exit after this many seconds (0 = run until signalled)")
	simkit.ParseFlags("vcsim-vslint")

	password := simkit.Password(*passwordFile)
	serverPageSize = *pageSize
	expireAfterReads = *expireAfter
	gzipAnswers = *gz
	endlessToken = *endless
	if err := parseFault(*fault); err != nil {
		log.Fatal(err)
	}

	kind, n, err := parseScenario(*scenario)
	if err != nil {
		log.Fatal(err)
	}

	// Stop signals are caught from the start so that a signal during
	// planting still cleans up.
	stop := simkit.CatchStop()

	start := time.Now()
	model := simulator.VPX()
	model.Datacenter = 1
	model.Cluster = 0
	model.ClusterHost = 0
	model.Host = 0
	model.Datastore = 0
	model.Machine = 0
	model.Portgroup = 0
	model.Autostart = false
	if err := model.Create(); err != nil {
		log.Fatalf("model: %v", err)
	}
	defer model.Remove()

	installCollectorAndViews()
	w, err := newWorld(context.Background(), model)
	if err != nil {
		log.Fatalf("world: %v", err)
	}
	switch kind {
	case "clean":
		buildClean(w)
	case "violations":
		buildViolations(w)
	case "edges":
		buildEdges(w)
	case "gate":
		buildGate(w)
	case "leaky":
		buildLeaky(w)
	case "scale":
		buildScale(w, n)
	}
	registerCompanions()
	liveWorld = w
	log.Printf("scenario %s planted in %s: %d hosts, %d datastores, %d VMs",
		*scenario, time.Since(start).Round(time.Millisecond), len(w.hosts), len(w.datastores), len(w.vms))

	if *truthFile != "" {
		if err := writeTruth(*truthFile, *scenario); err != nil {
			log.Fatalf("truth: %v", err)
		}
	}

	if err := setupAccounts(*user, password); err != nil {
		log.Fatal(err)
	}
	// No user here: the simulator then takes any name, and authz.go's
	// enforce() checks each login against -user and -account.
	model.Service.Listen = &url.URL{Host: *listen}
	if *useTLS {
		host, _, _ := net.SplitHostPort(*listen)
		cert, _, err := simkit.SelfSignedCert("vcsim-vslint", host)
		if err != nil {
			log.Fatalf("tls: %v", err)
		}
		model.Service.TLS = simkit.TLSConfig(cert)
	}
	srv := model.Service.NewServer()
	// Nobody knows the URL yet: swap in the handler that routes the
	// emulated methods (see ext.go) before printing it.
	srv.Config.Handler = wrapSDK(srv.Config.Handler)

	if *useTLS && *certOut != "" {
		cert := srv.Certificate()
		b := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw})
		if err := ioutil.WriteFile(*certOut, b, 0644); err != nil {
			log.Fatalf("-cert-out: %v", err)
		}
	}

	u := *srv.URL
	u.User = nil
	out := bufio.NewWriter(os.Stdout)
	fmt.Fprintln(out, u.String())
	_ = out.Flush()
	log.Printf("serving %s (user %q, page size %d, tls %v)", u.String(), *user, serverPageSize, *useTLS)

	stop.Wait(*stopAfter)
	srv.Close()
	model.Remove()
	log.Printf("stopped")
	os.Exit(0)
}

func parseScenario(s string) (string, int, error) {
	switch {
	case s == "clean" || s == "violations" || s == "edges" || s == "gate" || s == "leaky":
		return s, 0, nil
	case strings.HasPrefix(s, "scale:"):
		n, err := strconv.Atoi(strings.TrimPrefix(s, "scale:"))
		if err != nil || n < 1 {
			return "", 0, fmt.Errorf("bad scenario %q: want scale:N with N >= 1", s)
		}
		return "scale", n, nil
	}
	return "", 0, fmt.Errorf("unknown scenario %q (clean | violations | edges | gate | leaky | scale:N)", s)
}
