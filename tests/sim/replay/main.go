// vcsim-replay: serves a capture written by `vslint record` (a .tar.gz, or the directory it
// unpacks to) as the vCenter it was recorded from, and the Unity arrays' REST answers beside
// it, so that `vslint collect` and `vslint check` run against a user's estate offline. Each
// request gets the recorded answer for the same method and body (paging tokens included,
// since they are in the body); the Login is accepted whatever the user and password (the
// capture holds neither); a request that was never recorded gets a SOAP fault naming its
// method. An exchange that failed is replayed as it failed: its status and body (a SOAP
// fault, an HTTP error), or its answer cut where the connection closed (the manifest's ninth
// column, "closed after N of M bytes"), so that the failure a user recorded is reproduced.
// Standard library only.
package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"simkit"
)

// exchange is one line of manifest.tsv with its files.
type exchange struct {
	seq, source, proto, method, path string
	status                           int
	answer                           []byte
	outcome                          string // "" when the answer came whole; else how it ended
}

type replay struct {
	mu      sync.Mutex
	answers map[string][]*exchange // key -> the recorded answers, in order
	served  map[string]int         // key -> how many of them were served
	array   string                 // the source label served under /api
	misses  int
}

// secrets are the elements `vslint record` empties (util/capture.c): emptied in the requests
// that come in too, so that a Login with any user and password matches the recorded one.
var secrets = regexp.MustCompile(`<(password|userName|token|samlToken|sessionId)(\s[^>]*)?>[^<]*</`)

// bodyRe is the inside of soapenv:Body: what a request asks, whatever its envelope declares.
var bodyRe = regexp.MustCompile(`(?s)<(?:[A-Za-z0-9_]+:)?Body[^>]*>(.*)</(?:[A-Za-z0-9_]+:)?Body>`)

func normalize(body []byte) string {
	if m := bodyRe.FindSubmatch(body); m != nil {
		body = m[1]
	}
	return string(secrets.ReplaceAll(body, []byte("<$1$2>(removed)</")))
}

var methodRe = regexp.MustCompile(`Body>\s*<(?:[A-Za-z0-9_]+:)?([A-Za-z0-9_]+)`)

func soapMethod(body []byte) string {
	if m := methodRe.FindSubmatch(body); m != nil {
		return string(m[1])
	}
	return "unknown"
}

func key(source, proto, method, path, body string) string {
	return source + "\x00" + proto + "\x00" + method + "\x00" + path + "\x00" + body
}

// readCapture loads the files of a capture: a .tar.gz, or a directory holding manifest.tsv
// (or a vslint-capture directory that does).
func readCapture(path string) (map[string][]byte, error) {
	files := map[string][]byte{}
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		if _, err := os.Stat(filepath.Join(path, "manifest.tsv")); err != nil {
			path = filepath.Join(path, "vslint-capture")
		}
		ents, err := os.ReadDir(path)
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			b, err := os.ReadFile(filepath.Join(path, e.Name()))
			if err != nil {
				return nil, err
			}
			files[e.Name()] = b
		}
		return files, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: not a gzip archive: %v", path, err)
	}
	t := tar.NewReader(z)
	for {
		h, err := t.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		b, err := io.ReadAll(t)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %v", path, h.Name, err)
		}
		files[filepath.Base(h.Name)] = b
	}
	return files, nil
}

func load(path, array string) (*replay, error) {
	files, err := readCapture(path)
	if err != nil {
		return nil, err
	}
	manifest, ok := files["manifest.tsv"]
	if !ok {
		return nil, fmt.Errorf("%s: no manifest.tsv: not a vslint capture", path)
	}
	r := &replay{answers: map[string][]*exchange{}, served: map[string]int{}, array: array}
	sc := bufio.NewScanner(bytes.NewReader(manifest))
	line := 0
	for sc.Scan() {
		line++
		f := strings.Split(sc.Text(), "\t")
		// Captures of vslint before failed exchanges were recorded have no ninth column.
		if len(f) != 8 && len(f) != 9 {
			return nil, fmt.Errorf("%s: manifest.tsv line %d: %d fields, want 8 or 9", path, line, len(f))
		}
		e := &exchange{seq: f[0], source: f[1], proto: f[2], method: f[3], path: f[4]}
		if len(f) == 9 && f[8] != "-" {
			if _, _, err := parseOutcome(f[8]); err != nil {
				return nil, fmt.Errorf("%s: manifest.tsv line %d: %v", path, line, err)
			}
			e.outcome = f[8]
		}
		fmt.Sscanf(f[5], "%d", &e.status)
		var req []byte
		if f[6] != "-" {
			if req, ok = files[f[6]]; !ok {
				return nil, fmt.Errorf("%s: manifest.tsv line %d: no file %s", path, line, f[6])
			}
		}
		if f[7] != "-" {
			if e.answer, ok = files[f[7]]; !ok {
				return nil, fmt.Errorf("%s: manifest.tsv line %d: no file %s", path, line, f[7])
			}
		}
		body := ""
		if e.proto == "soap" {
			body = normalize(req)
		} else if req != nil {
			body = string(req)
		}
		k := key(e.source, e.proto, e.method, e.path, body)
		r.answers[k] = append(r.answers[k], e)
	}
	return r, sc.Err()
}

// next is the answer for k: the recorded ones in turn, and round again, so that a poll made
// twice (a second `vslint collect`) gets the same answers in the same order both times: a
// request made twice in one poll (a view created twice) gets its first answer first again.
func (r *replay) next(k string) *exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	list := r.answers[k]
	if len(list) == 0 {
		r.misses++
		return nil
	}
	i := r.served[k] % len(list)
	r.served[k]++
	return list[i]
}

const faultFmt = `<?xml version="1.0" encoding="UTF-8"?>
<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><soapenv:Body><soapenv:Fault><faultcode>ServerFaultCode</faultcode><faultstring>vcsim-replay: no recorded answer for %s with this request</faultstring><detail><NotImplementedFault xmlns="urn:vim25" xsi:type="NotImplemented"></NotImplementedFault></detail></soapenv:Fault></soapenv:Body></soapenv:Envelope>`

var (
	closedOfRe = regexp.MustCompile(`^closed after (\d+) of (\d+) bytes$`)
	closedRe   = regexp.MustCompile(`^closed after (\d+) bytes$`)
	stoppedRe  = regexp.MustCompile(`^vslint stopped reading after (\d+) bytes$`)
	timedOutRe = regexp.MustCompile(`^timed out after (\d+) bytes$`)
)

// The most blanks served after an answer vslint stopped reading: above any of its limits
// (arrays/unity.c's 64 MiB, the SOAP transport's).
const stoppedPadMax = 1 << 30

// parseOutcome reads the ninth column of manifest.tsv (util/capture.c's
// vsl_capture_outcome()): the kind of ending ("closed", "stopped", "timeout",
// "none") and the length the answer announced (-1: none).
func parseOutcome(s string) (string, int64, error) {
	var announced int64 = -1
	switch {
	case closedOfRe.MatchString(s):
		fmt.Sscanf(closedOfRe.FindStringSubmatch(s)[2], "%d", &announced)
		return "closed", announced, nil
	case closedRe.MatchString(s):
		return "closed", -1, nil
	case stoppedRe.MatchString(s):
		return "stopped", -1, nil
	case timedOutRe.MatchString(s):
		return "timeout", -1, nil
	case strings.HasPrefix(s, "no answer"):
		return "none", -1, nil
	}
	return "", 0, fmt.Errorf("unknown outcome %q", s)
}

// answer writes e as it was recorded: whole, or ended the way its transfer ended.
func answer(w http.ResponseWriter, e *exchange) {
	kind, announced, _ := parseOutcome(e.outcome)
	if e.outcome == "" {
		w.WriteHeader(e.status)
		w.Write(e.answer)
		return
	}
	if kind == "stopped" {
		// vslint refused the answer partway: malformed (it stops again inside what it
		// read) or larger than its limit (what it kept stays under the limit, the piece
		// that crossed it was refused): what it read is served, then blanks until it stops
		// reading, so that it stops for the same reason, not at a cut it never saw. Bounded,
		// so that a client which reads on is not fed forever.
		w.WriteHeader(e.status)
		if _, err := w.Write(e.answer); err != nil {
			return
		}
		pad := bytes.Repeat([]byte(" "), 64<<10)
		for n := 0; n < stoppedPadMax; n += len(pad) {
			if _, err := w.Write(pad); err != nil {
				return
			}
		}
		return
	}
	status := e.status
	if kind == "none" {
		status = 0
	}
	conn := simkit.CutAnswer(w, status, w.Header().Get("Content-Type"), e.answer, announced)
	if conn == nil {
		return
	}
	if kind == "timeout" {
		// Nothing more comes until the client gives up.
		io.Copy(io.Discard, conn)
	}
	conn.Close()
}

func (r *replay) serve(w http.ResponseWriter, q *http.Request) {
	body, err := io.ReadAll(io.LimitReader(q.Body, 64<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	path := q.URL.RequestURI()
	switch {
	case q.Method == http.MethodPost && q.URL.Path == "/sdk":
		method := soapMethod(body)
		e := r.next(key("vcenter", "soap", method, path, normalize(body)))
		w.Header().Set("Content-Type", "text/xml; charset=utf-8")
		if e == nil {
			log.Printf("no recorded answer for %s: %s", method, body)
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(w, faultFmt, method)
			return
		}
		if method == "Login" {
			http.SetCookie(w, &http.Cookie{Name: "vmware_soap_session", Value: "replay", Path: "/"})
		}
		answer(w, e)
	case strings.HasPrefix(q.URL.Path, "/sdk/"):
		e := r.next(key("vcenter", "get", "GET", path, ""))
		if e == nil {
			log.Printf("no recorded answer for GET %s", path)
			http.NotFound(w, q)
			return
		}
		answer(w, e)
	default:
		var b string
		if len(body) > 0 {
			b = string(body)
		}
		e := r.next(key(r.array, "rest", q.Method, path, b))
		w.Header().Set("Content-Type", "application/json")
		// The session's cookie and CSRF token were not recorded; the client needs them again.
		http.SetCookie(w, &http.Cookie{Name: "mod_sec_emc", Value: "replay", Path: "/"})
		w.Header().Set("EMC-CSRF-TOKEN", "replay-csrf-token")
		if e == nil {
			log.Printf("no recorded answer for %s %s", q.Method, path)
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintf(w, `{"error":{"errorCode":131149829,"httpStatusCode":404,"messages":[{"en-US":"vcsim-replay: no recorded answer for %s %s"}]}}`, q.Method, strings.ReplaceAll(path, `"`, `'`))
			return
		}
		answer(w, e)
	}
}

func main() {
	capture := flag.String("capture", "", "the capture: FILE.tar.gz from vslint record, or the directory it unpacks to")
	listen := flag.String("listen", "127.0.0.1:0", "listen address (host:port)")
	array := flag.String("array", "array1", "the capture's array served under /api (array1, array2, ...)")
	useTLS := flag.Bool("tls", false, "serve HTTPS with a fresh self-signed certificate")
	certOut := flag.String("cert-out", "", "write the certificate (PEM) here (with -tls)")
	stopAfter := flag.Int("stop-after-seconds", 0, "exit after this many seconds (0 = run until signalled)")
	simkit.ParseFlags("vcsim-replay")
	if *capture == "" {
		log.Fatal("-capture FILE.tar.gz|DIR is required")
	}
	r, err := load(*capture, *array)
	if err != nil {
		log.Fatal(err)
	}
	stop := simkit.CatchStop()
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(r.serve)}
	scheme := "http"
	if *useTLS {
		scheme = "https"
		host, _, _ := net.SplitHostPort(*listen)
		simkit.UseTLS(srv, "vcsim-replay", host, *certOut)
	}
	fmt.Printf("%s://%s/sdk\n", scheme, ln.Addr().String())
	os.Stdout.Sync()
	go func() {
		if *useTLS {
			err = srv.ServeTLS(ln, "", "")
		} else {
			err = srv.Serve(ln)
		}
		if err != http.ErrServerClosed {
			log.Fatal(err)
		}
	}()
	stop.Wait(*stopAfter)
	srv.Close()
	r.mu.Lock()
	log.Printf("%d requests had no recorded answer", r.misses)
	r.mu.Unlock()
}
