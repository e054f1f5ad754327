package http

import (
	"net"
	"testing"

	"github.com/storeprint/storeprint/gateway"
)

func TestHostCheck(t *testing.T) {
	t.Parallel()
	h := newHostCheck(&gateway.Config{Listen: "0.0.0.0:8080", Hostnames: []string{"Gateway.Local."}})
	h.listening("10.9.8.7:8080")
	for host, want := range map[string]bool{
		"localhost": true, "localhost:8080": true, "127.0.0.1:1": true, "127.5.5.5": true, "[::1]:8080": true,
		"gateway.local": true, "GATEWAY.LOCAL.:8080": true, "10.9.8.7:8080": true,
		"": false, "evil.example": false, "gateway.local.evil.example": false, "0.0.0.0": false,
		"localhost.evil.example": false, "192.0.2.1": false,
	} {
		if got := h.ok(host); got != want {
			t.Errorf("Host %q: got %v, want %v", host, got, want)
		}
	}
}

func FuzzHostCheck(f *testing.F) {
	h := newHostCheck(&gateway.Config{Listen: "127.0.0.1:8080", Hostnames: []string{"gateway.local"}})
	for _, s := range []string{"localhost:8080", "[::1]:80", "gateway.local", "evil.example", "192.0.2.1:1", "[", ":"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, host string) {
		if h.ok(host) {
			n := normalHost(host)
			if !h.names[n] && !isLoopbackOrLocal(n) {
				t.Fatalf("accepted %q (%q)", host, n)
			}
		}
	})
}

func isLoopbackOrLocal(host string) bool {
	ip := net.ParseIP(host)
	return ip != nil && (ip.IsLoopback() || machineAddrs()[ip.String()])
}
