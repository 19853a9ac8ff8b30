// Package simkit holds what the test harness's Go programs share (the vCenter simulator
// tests/sim, the synthetic responder tests/sim/synth, the Unity responder tests/sim/unity):
// the password they accept, their TLS certificate, and what both vCenter simulators report of a
// VMFS volume (VmfsVersion). tests/sim/build.sh puts
// tests/sim/gopath first on GOPATH, so they import it as "simkit".
package simkit

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"flag"
	"fmt"
	"log"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// ParseFlags parses the command line and makes the log name the program and time its lines
// to the microsecond.
func ParseFlags(name string) {
	flag.Parse()
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)
	log.SetPrefix(name + ": ")
}

// Password is the password in the file path (-password-file; its line end dropped), or
// vslint-secret when path is empty; a file that cannot be read ends the program.
func Password(path string) string {
	if path == "" {
		return "vslint-secret"
	}
	b, err := os.ReadFile(path)
	if err != nil {
		log.Fatalf("-password-file: %v", err)
	}
	return strings.TrimRight(string(b), "\r\n")
}

// SelfSignedCert is a fresh ECDSA P-256 self-signed certificate named name for the loopback
// names and extraHost (a name or an address; "" for none), and its PEM. net/http/httptest's
// LocalhostCert is RSA-1024, which OpenSSL at security level 2 (Debian's default, and so
// libcurl) rejects with "EE certificate key too weak". It lives only in memory (and where the
// caller writes the PEM).
func SelfSignedCert(name, extraHost string) (tls.Certificate, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: name, Organization: []string{"vslint test harness"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1"), net.IPv6loopback},
	}
	if extraHost != "" {
		if ip := net.ParseIP(extraHost); ip != nil {
			if !ip.IsLoopback() {
				tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
			}
		} else if extraHost != "localhost" {
			tmpl.DNSNames = append(tmpl.DNSNames, extraHost)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key},
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}

// TLSConfig serves cert with TLS 1.2 or later.
func TLSConfig(cert tls.Certificate) *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
}

// UseTLS makes srv serve HTTPS with a fresh certificate (SelfSignedCert(name, extraHost)),
// written as PEM to certOut when it is not "", for clients to trust; a failure ends the
// program.
func UseTLS(srv *http.Server, name, extraHost, certOut string) {
	cert, pem, err := SelfSignedCert(name, extraHost)
	if err != nil {
		log.Fatal(err)
	}
	if certOut != "" {
		if err := os.WriteFile(certOut, pem, 0o644); err != nil {
			log.Fatal(err)
		}
	}
	srv.TLSConfig = TLSConfig(cert)
}

// Stop catches SIGINT and SIGTERM from its making on (a signal while the program starts up
// waits for Wait).
type Stop chan os.Signal

// CatchStop starts catching the stop signals.
func CatchStop() Stop {
	s := make(Stop, 2)
	signal.Notify(s, syscall.SIGINT, syscall.SIGTERM)
	return s
}

// Wait returns at the first stop signal, or after seconds (0: never), saying which in the log.
func (s Stop) Wait(seconds int) {
	var timeout <-chan time.Time
	if seconds > 0 {
		timeout = time.After(time.Duration(seconds) * time.Second)
	}
	select {
	case sig := <-s:
		log.Printf("%s: stopping", sig)
	case <-timeout:
		log.Printf("-stop-after-seconds %d reached: stopping", seconds)
	}
}

// VmfsVersion is the version string ESXi reports for a VMFS volume of major version major
// (VmfsDatastoreInfo.vmfs.version): "5.81" for VMFS5, "6.82" for VMFS6.
func VmfsVersion(major int) string {
	if major == 5 {
		return "5.81"
	}
	return "6.82"
}

// CutAnswer takes the connection of w over and answers as a broken network or server would:
// nothing at all when status is 0; else the status line, ctype, and either a Content-Length
// of announced (>= 0) followed by body alone, or (announced < 0) body as one chunk with no
// last chunk. The connection is returned open (nil when it could not be taken): the caller
// closes it, at once or after holding it.
func CutAnswer(w http.ResponseWriter, status int, ctype string, body []byte, announced int64) net.Conn {
	hj, ok := w.(http.Hijacker)
	if !ok {
		return nil
	}
	conn, buf, err := hj.Hijack()
	if err != nil {
		return nil
	}
	if status == 0 {
		return conn
	}
	fmt.Fprintf(buf, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\n", status, http.StatusText(status), ctype)
	if announced >= 0 {
		fmt.Fprintf(buf, "Content-Length: %d\r\n\r\n", announced)
		buf.Write(body)
	} else {
		fmt.Fprintf(buf, "Transfer-Encoding: chunked\r\n\r\n")
		if len(body) > 0 {
			fmt.Fprintf(buf, "%x\r\n", len(body))
			buf.Write(body)
			buf.WriteString("\r\n")
		}
	}
	buf.Flush()
	return conn
}
