package http

import (
	"context"
	"net"
	"net/http"
	"net/http/httputil"
	"strings"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
)

// Cluster is what the server asks of the node it runs on when the store
// runs on a cluster (gateway/raft).
type Cluster interface {
	State() gateway.ClusterState
	IsLeader() bool
	Witness() bool
	// DialLeader opens an authenticated connection to the leader, over
	// the cluster's own link.
	DialLeader(ctx context.Context) (net.Conn, error)
	// Forwarded is the listener of the requests followers pass on.
	Forwarded() net.Listener
	// AwaitLeader waits, a bounded while, until the cluster has a
	// leader that answers (this node or another); an error says why
	// there is none.
	AwaitLeader(ctx context.Context) error
}

// serveCluster serves the store's cluster: GET /v1/cluster answers here
// on every node; every other API request is served by the leader: a
// follower passes it over the cluster's link and answers what the leader
// answered, and answers 503 naming the reason when no leader answers. The
// witness serves no POS API.
func (s *Server) serveCluster() {
	c := s.Cluster
	h := &clusterHandler{s: s, c: c}
	h.proxy = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme, pr.Out.URL.Host = "http", "localhost"
			pr.Out.Host = "localhost" // the leader's host check: the request comes from its cluster
			pr.SetXForwarded()
		},
		Transport: &http.Transport{
			DialContext:           func(ctx context.Context, _, _ string) (net.Conn, error) { return c.DialLeader(ctx) },
			MaxIdleConns:          64,
			MaxIdleConnsPerHost:   64, // one host: the leader
			IdleConnTimeout:       30 * time.Second,
			ResponseHeaderTimeout: 30 * time.Second,
		},
		FlushInterval: -1, // live updates (GET /v1/events) pass at once
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			msg := "the cluster's leader did not answer: " + err.Error()
			if ge, ok := err.(*storeprint.Error); ok {
				msg = ge.Message
			}
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": msg})
		},
	}
	s.srv.Handler = h
	// Serve serves the forwarded requests too.
	s.fwd = &http.Server{
		Handler:           forwarded{h},
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          s.srv.ErrorLog,
	}
	s.srv.RegisterOnShutdown(func() { s.fwd.Close() })
}

// clusterRoutes registers GET /v1/cluster: this node's view of its
// cluster; 404 on a gateway that runs alone.
func (s *Server) clusterRoutes() {
	s.handle("GET /v1/cluster", storeprint.RolePOS, s.api(func(w http.ResponseWriter, r *http.Request) error {
		if s.Cluster == nil {
			return storeprint.Errorf(storeprint.ENOTFOUND, "this gateway runs alone: its config has no [cluster]")
		}
		writeJSON(w, http.StatusOK, s.Cluster.State())
		return nil
	}))
}

type clusterHandler struct {
	s     *Server
	c     Cluster
	proxy *httputil.ReverseProxy
}

type forwardedKey struct{}

// forwarded serves the requests a follower passed on: never passed on
// again.
type forwarded struct{ h *clusterHandler }

func (f forwarded) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), forwardedKey{}, true)))
}

// local reports whether a path is served by every node itself: its
// cluster, health, metrics and the LAN page's files.
func local(path string) bool {
	switch path {
	case "/v1/cluster", "/healthz", "/metrics", "/openapi.json", "/v1/words", "/":
		return true
	}
	return strings.HasPrefix(path, "/assets/")
}

func (h *clusterHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case local(r.URL.Path):
	case h.c.Witness():
		w.Header().Set("X-Content-Type-Options", "nosniff")
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "this node is the cluster's witness: it takes no orders and prints nothing; use a gateway node's address"})
		return
	case !h.c.IsLeader():
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if r.Context().Value(forwardedKey{}) != nil {
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "this node no longer leads the cluster; try again"})
			return
		}
		if !h.s.hosts.ok(r.Host) {
			break // refused (421) as on a single gateway
		}
		// While the nodes elect a new leader the request waits here for
		// it: a 503 now would send the POS to its other address, which
		// may be the box that is gone.
		if err := h.c.AwaitLeader(r.Context()); err != nil {
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": storeprint.ErrorMessage(err)})
			return
		}
		if h.c.IsLeader() {
			break // elected meanwhile
		}
		h.proxy.ServeHTTP(w, r)
		return
	}
	h.s.ServeHTTP(w, r)
}
