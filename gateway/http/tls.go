package http

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/storeprint/storeprint/gateway"
)

// SelfSignedDir is where tls = "self-signed" keeps its certificate, under
// data_dir: cert.pem and key.pem.
const SelfSignedDir = "tls"

// selfSignedFor is how long a self-signed certificate is valid.
const selfSignedFor = 10 * 365 * 24 * time.Hour

// loadTLS returns the TLS configuration the gateway's config asks for, and
// the SHA-256 fingerprint of its certificate; nil for plain HTTP.
func loadTLS(cfg *gateway.Config) (*tls.Config, string, error) {
	certFile, keyFile := cfg.TLSCert, cfg.TLSKey
	key := "tls_cert"
	if cfg.TLS == gateway.TLSSelfSigned {
		dir := filepath.Join(cfg.DataDir, SelfSignedDir)
		certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
		key = "tls"
		if err := ensureSelfSigned(cfg, certFile, keyFile); err != nil {
			return nil, "", fmt.Errorf("tls = %q: %w", gateway.TLSSelfSigned, err)
		}
	}
	if certFile == "" {
		return nil, "", nil
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, "", fmt.Errorf("%s: load %s and %s: %w", key, certFile, keyFile, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, Fingerprint(cert.Certificate[0]), nil
}

// Fingerprint is the SHA-256 of a DER certificate as browsers show it:
// upper-case hex bytes joined by colons.
func Fingerprint(der []byte) string {
	sum := sha256.Sum256(der)
	parts := make([]string, len(sum))
	for i, b := range sum {
		parts[i] = fmt.Sprintf("%02X", b)
	}
	return strings.Join(parts, ":")
}

// ensureSelfSigned makes a certificate and key once; later starts keep
// them, so a device that pinned the fingerprint goes on trusting it.
func ensureSelfSigned(cfg *gateway.Config, certFile, keyFile string) error {
	_, certErr := os.Stat(certFile)
	_, keyErr := os.Stat(keyFile)
	if certErr == nil && keyErr == nil {
		return nil
	}
	if !errors.Is(certErr, os.ErrNotExist) && certErr != nil {
		return certErr
	}
	if err := os.MkdirAll(filepath.Dir(certFile), 0o700); err != nil {
		return err
	}
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("make key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return fmt.Errorf("make serial: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "storeprint gateway " + cfg.StoreID, Organization: []string{"storeprint"}},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(selfSignedFor),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	tmpl.DNSNames = append(tmpl.DNSNames, cfg.Hostnames...)
	if h, err := os.Hostname(); err == nil && h != "" {
		tmpl.DNSNames = append(tmpl.DNSNames, h)
	}
	for a := range machineAddrs() {
		if ip := net.ParseIP(a); ip != nil && !ip.IsLoopback() && !ip.IsLinkLocalUnicast() {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		return fmt.Errorf("make certificate: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return fmt.Errorf("encode key: %w", err)
	}
	// The key first: a certificate on disk always has its key.
	if err := writeAtomic(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return err
	}
	return writeAtomic(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
}

func writeAtomic(path string, b []byte, mode os.FileMode) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, mode)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
