package http_test

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storeprint/storeprint/gateway/gatewaytest"
	gwhttp "github.com/storeprint/storeprint/gateway/http"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

// pinned is a client that trusts exactly the certificate it saw first and
// reports that certificate's fingerprint.
func pinned(t *testing.T) (*http.Client, *string) {
	seen := new(string)
	tr := &http.Transport{TLSClientConfig: &tls.Config{
		InsecureSkipVerify: true, // a self-signed certificate: trust is its fingerprint, checked below
		VerifyConnection: func(cs tls.ConnectionState) error {
			*seen = gwhttp.Fingerprint(cs.PeerCertificates[0].Raw)
			return nil
		},
	}}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Timeout: 30 * time.Second, Transport: gatewaytest.API.Transport(tr)}, seen
}

// tls = "self-signed": HTTPS on listen with a certificate made once and
// kept in the data dir; its fingerprint is the one the LAN page and the
// pairing answers show. tls_cert and tls_key serve a given certificate.
func TestServer_TLS(t *testing.T) {
	t.Parallel()
	hot := gatewaytest.StartSim(t, printersim.FaultNone)
	dataDir := t.TempDir()
	printers, stations := []gatewaytest.PrinterConf{{ID: "hot-1", Addr: hot.Addr}}, []gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}}
	cfg := gatewaytest.ConfigTop(t, dataDir, "tls = \"self-signed\"\n", printers, stations)

	get := func(t *testing.T, c *http.Client, url, tok string, out any) int {
		t.Helper()
		return gatewaytest.CallWith(t, c, tok, "GET", url, nil, out)
	}
	var print1 string
	t.Run("SelfSigned", func(t *testing.T) {
		m, base := runGateway(t, cfg)
		if !strings.HasPrefix(base, "https://") {
			t.Fatalf("got base %s, want https", base)
		}
		c, seen := pinned(t)
		var me struct {
			TLSFingerprint string `json:"tls_fingerprint"`
		}
		if code := get(t, c, base+"/v1/me", gatewaytest.Token, &me); code != 200 {
			t.Fatalf("GET /v1/me over HTTPS: got %d", code)
		}
		if me.TLSFingerprint == "" || me.TLSFingerprint != *seen || me.TLSFingerprint != m.HTTP.TLSFingerprint() {
			t.Fatalf("the page shows fingerprint %q, the connection's certificate is %q", me.TLSFingerprint, *seen)
		}
		pem, err := os.ReadFile(filepath.Join(dataDir, gwhttp.SelfSignedDir, "cert.pem"))
		if err != nil {
			t.Fatalf("the certificate is not kept in the data dir: %v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			t.Fatal("cert.pem holds no certificate")
		}
		// Pinned to the kept certificate, a strict client connects too.
		strict := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
		defer strict.CloseIdleConnections()
		if code := get(t, &http.Client{Transport: gatewaytest.API.Transport(strict)}, base+"/healthz", "", nil); code != 200 {
			t.Fatalf("verified against cert.pem: got %d", code)
		}
		var p struct {
			TLSFingerprint string `json:"tls_fingerprint"`
			URL            string `json:"url"`
		}
		gatewaytest.CallWith(t, c, gatewaytest.Token, "POST", base+"/v1/pairing", map[string]string{"role": "pos"}, &p)
		if p.TLSFingerprint != *seen || !strings.HasPrefix(p.URL, "https://") {
			t.Fatalf("pairing answer: got %+v, want fingerprint %s and an https URL", p, *seen)
		}
		print1 = *seen
	})
	if print1 == "" {
		t.FailNow()
	}

	t.Run("Kept", func(t *testing.T) {
		// Another start on the same data dir serves the same certificate.
		_, base := runGateway(t, cfg)
		c, seen := pinned(t)
		if code := get(t, c, base+"/healthz", "", nil); code != 200 || *seen != print1 {
			t.Fatalf("second start: got %d with fingerprint %q, want %q", code, *seen, print1)
		}
	})
	t.Run("CertFiles", func(t *testing.T) {
		dir := filepath.Join(dataDir, gwhttp.SelfSignedDir)
		top := "tls_cert = " + tomlString(filepath.Join(dir, "cert.pem")) + "\ntls_key = " + tomlString(filepath.Join(dir, "key.pem")) + "\n"
		_, base := runGateway(t, gatewaytest.ConfigTop(t, t.TempDir(), top, printers, stations))
		c, seen := pinned(t)
		if code := get(t, c, base+"/healthz", "", nil); code != 200 || *seen != print1 {
			t.Fatalf("tls_cert: got %d with fingerprint %q, want %q", code, *seen, print1)
		}
	})
}

func tomlString(s string) string { return `"` + strings.ReplaceAll(s, `\`, `\\`) + `"` }
