package client_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	stdsync "sync"
	"testing"
	"time"

	"github.com/storeprint/storeprint/sync"
	"github.com/storeprint/storeprint/sync/client"
)

// gatewayStub stands in for the store's gateway: the link under test never
// reaches it when the cloud refuses.
type gatewayStub struct{}

func (gatewayStub) OutboxEvents(context.Context, uint64, int) ([]sync.Event, error)   { return nil, nil }
func (gatewayStub) OutboxAcked(context.Context, uint64) error                         { return nil }
func (gatewayStub) Hello(context.Context) (sync.Hello, error)                         { return sync.Hello{}, nil }
func (gatewayStub) ApplyDown(context.Context, []sync.Command, uint64) (uint64, error) { return 0, nil }
func (gatewayStub) ApplyStates(context.Context, []sync.TaskEvent) ([]sync.TaskEvent, error) {
	return nil, nil
}
func (gatewayStub) Learned() {}
func (gatewayStub) Snapshot(context.Context, string, int) ([]sync.TaskEvent, []sync.ReceiptEvent, error) {
	return nil, nil, nil
}
func (gatewayStub) PrinterStatuses(context.Context) ([]sync.PrinterStatus, error) { return nil, nil }
func (gatewayStub) Subscribe() (<-chan struct{}, func())                          { return nil, func() {} }

// A refused link is retried with backoff, shows why, sends its credentials
// in headers (never in the URL), and stops with its context.
func TestClient_Run(t *testing.T) {
	t.Parallel()
	var mu stdsync.Mutex
	var seen []*http.Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r)
		mu.Unlock()
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer srv.Close()
	c := &client.Client{
		URL: "ws" + strings.TrimPrefix(srv.URL, "http") + sync.Path, GatewayID: "gw-1", Token: "secret-token",
		StoreID: "s1", Gateway: gatewayStub{}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		MinBackoff: 10 * time.Millisecond, MaxBackoff: 20 * time.Millisecond,
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := len(seen)
		mu.Unlock()
		if n >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("got %d connection attempts, want retries", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
	st := c.State()
	if st.Connected || !strings.Contains(st.LastError, "refused") {
		t.Fatalf("got state %+v, want not connected with the refusal", st)
	}
	mu.Lock()
	defer mu.Unlock()
	r := seen[0]
	if r.Header.Get("Authorization") != "Bearer secret-token" || r.Header.Get(sync.HeaderGateway) != "gw-1" {
		t.Fatalf("got headers %v, want the gateway id and bearer token", r.Header)
	}
	if strings.Contains(r.URL.String(), "secret") {
		t.Fatalf("the token is in the URL: %s", r.URL)
	}
}
