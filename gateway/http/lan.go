package http

import (
	"net"
	"net/http"
	"strings"
	stdsync "sync"
	"time"

	"github.com/storeprint/storeprint/gateway"
)

// hostCheck accepts the Host names a LAN client may use for the gateway:
// the listen address, localhost, the machine's own addresses and the
// configured hostnames. Anything else is a page that reached the gateway
// under a name of its own (DNS rebinding) and is refused.
type hostCheck struct {
	names map[string]bool // names and addresses always accepted

	mu        stdsync.Mutex
	addrs     map[string]bool // the machine's addresses, read again on a miss
	refreshed time.Time
}

// addrsRefresh bounds how often the machine's addresses are read again
// when a Host is not among them (a DHCP lease may change them).
const addrsRefresh = 5 * time.Second

func newHostCheck(cfg *gateway.Config) *hostCheck {
	h := &hostCheck{names: map[string]bool{"localhost": true, "127.0.0.1": true, "::1": true}}
	for _, n := range cfg.Hostnames {
		h.names[normalHost(n)] = true
	}
	h.listening(cfg.Listen)
	return h
}

// listening adds the host of a listen address (a name or a specified IP).
func (h *hostCheck) listening(addr string) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		return
	}
	h.names[normalHost(host)] = true
}

// normalHost is a host without port, brackets, case or a trailing dot.
func normalHost(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	return strings.TrimSuffix(strings.ToLower(host), ".")
}

func (h *hostCheck) ok(hostport string) bool {
	host := normalHost(hostport)
	if host == "" {
		return false
	}
	if h.names[host] {
		return true
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return false
	}
	if ip.IsLoopback() {
		return true
	}
	key := ip.String()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.addrs[key] {
		return true
	}
	if time.Since(h.refreshed) < addrsRefresh {
		return false
	}
	h.refreshed = time.Now()
	h.addrs = machineAddrs()
	return h.addrs[key]
}

// machineAddrs lists the IP addresses of the machine's interfaces.
func machineAddrs() map[string]bool {
	out := map[string]bool{}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return out
	}
	for _, a := range addrs {
		var ip net.IP
		switch v := a.(type) {
		case *net.IPNet:
			ip = v.IP
		case *net.IPAddr:
			ip = v.IP
		}
		if ip != nil {
			out[ip.String()] = true
		}
	}
	return out
}

// CORS for a browser POS on another origin.
const (
	corsMethods = "GET, POST, DELETE"
	corsHeaders = "Authorization, Content-Type"
	corsMaxAge  = "600"
)

// cors adds the CORS headers for an allowed origin, and answers a
// preflight itself; it reports whether the request is answered. A page of
// another origin gets no CORS headers at all, so the browser keeps its
// answers from it (and a preflight from it is refused).
func (s *Server) cors(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	preflight := r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
	if origin == "" {
		return false
	}
	h := w.Header()
	h.Add("Vary", "Origin")
	if !s.origins[origin] {
		if preflight {
			writeJSON(w, http.StatusForbidden, map[string]string{"error": "origin " + origin + " is not in the gateway's allowed_origins"})
			return true
		}
		return false
	}
	h.Set("Access-Control-Allow-Origin", origin)
	h.Set("Access-Control-Expose-Headers", "Retry-After")
	if !preflight {
		return false
	}
	h.Add("Vary", "Access-Control-Request-Method")
	h.Add("Vary", "Access-Control-Request-Headers")
	h.Set("Access-Control-Allow-Methods", corsMethods)
	h.Set("Access-Control-Allow-Headers", corsHeaders)
	// Private Network Access: a page on a public origin may reach the
	// gateway on the store's LAN.
	h.Set("Access-Control-Allow-Private-Network", "true")
	h.Set("Access-Control-Max-Age", corsMaxAge)
	w.WriteHeader(http.StatusNoContent)
	return true
}
