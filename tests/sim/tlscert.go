package main

// The simulator's default TLS certificate (net/http/httptest's
// LocalhostCert) is RSA-1024, which OpenSSL at security level 2 (Debian's
// default, and so libcurl) rejects with "EE certificate key too weak".
// Generate a fresh ECDSA P-256 self-signed certificate for the loopback
// names instead; it lives only in memory (and in -cert-out when asked).

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"time"
)

func selfSignedCert(extraHost string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "vcsim-vslint", Organization: []string{"vslint test harness"}},
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
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
