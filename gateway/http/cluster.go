package http

import (
	"bytes"
	"context"
	"io"
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
	// AwaitReady waits, a bounded while, until this node, if it leads,
	// has applied every entry of the terms before its own; an error says
	// it has not. A node that does not lead answers nil.
	AwaitReady(ctx context.Context) error
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
			if failed, ok := r.Context().Value(retryKey{}).(*error); ok {
				*failed = err // forward tries again
				return
			}
			leaderFailed(w, err)
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
		if h.forward(w, r) {
			return
		}
		// elected meanwhile
	}
	if !local(r.URL.Path) {
		// A leader elected moments ago answers from its store only once
		// the store holds what the leaders before it committed.
		if err := h.c.AwaitReady(r.Context()); err != nil {
			w.Header().Set("X-Content-Type-Options", "nosniff")
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": storeprint.ErrorMessage(err)})
			return
		}
	}
	h.s.ServeHTTP(w, r)
}

// leaderFailed answers 503: the way to the leader broke before it
// answered.
func leaderFailed(w http.ResponseWriter, err error) {
	msg := "the cluster's leader did not answer: " + err.Error()
	if ge, ok := err.(*storeprint.Error); ok {
		msg = ge.Message
	}
	writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": msg})
}

type retryKey struct{}

// forward passes r to the leader and reports whether it answered r;
// false means this node leads now and must serve r itself. A request
// that may be sent twice (a read, or an order, which the leader takes
// once by its order_id) is sent again, once, when the way to the
// leader broke before an answer (the leader fell silent, or another
// leads): the POS gets the new leader's answer, not a 503 that would
// send it to the box that is gone.
func (h *clusterHandler) forward(w http.ResponseWriter, r *http.Request) bool {
	if !repeatable(r) {
		h.proxy.ServeHTTP(w, r)
		return true
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, storeprint.MaxRequestLen+1))
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "read request body: " + err.Error()})
		return true
	}
	if len(body) > storeprint.MaxRequestLen {
		// The leader refuses it: no need to keep it for a second try.
		r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), r.Body))
		h.proxy.ServeHTTP(w, r)
		return true
	}
	for try := 0; ; try++ {
		r.Body = io.NopCloser(bytes.NewReader(body))
		if try == 1 {
			h.proxy.ServeHTTP(w, r)
			return true
		}
		var failed error
		h.proxy.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), retryKey{}, &failed)))
		if failed == nil || r.Context().Err() != nil {
			if failed != nil {
				leaderFailed(w, failed)
			}
			return true
		}
		if err := h.c.AwaitLeader(r.Context()); err != nil {
			leaderFailed(w, err)
			return true
		}
		if h.c.IsLeader() {
			r.Body = io.NopCloser(bytes.NewReader(body))
			return false
		}
	}
}

// repeatable reports whether r may reach the leader twice without
// effect: a read, or an order (taken once by its order_id).
func repeatable(r *http.Request) bool {
	switch {
	case r.Method == http.MethodGet, r.Method == http.MethodHead:
		return true
	case r.Method == http.MethodPost && r.URL.Path == "/v1/orders":
		return true
	}
	return false
}
