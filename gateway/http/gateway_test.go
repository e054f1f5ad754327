package http_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/gateway/badger"
	gwhttp "github.com/storeprint/storeprint/gateway/http"
	"github.com/storeprint/storeprint/gateway/toml"
	"github.com/storeprint/storeprint/internal/clock"
	"github.com/storeprint/storeprint/printerdrivers/cloudprnt"
	"github.com/storeprint/storeprint/printerdrivers/tcp"
)

// The tests of this package serve a real gateway on a real Badger store,
// with printers on the printer simulator over real sockets.

// gw is a gateway served over HTTP: set Clock or Stderr before it starts.
type gw struct {
	Clock  clock.Clock // the system's when nil
	Stderr io.Writer   // the log, as text; discarded when nil
	HTTP   *gwhttp.Server
}

// runGateway serves a gateway with the configuration cfg (TOML) on
// 127.0.0.1 until the test ends; each opt may change it before it starts.
// It returns the gateway and its base URL.
func runGateway(t testing.TB, cfg string, opts ...func(*gw)) (*gw, string) {
	t.Helper()
	m := &gw{}
	for _, o := range opts {
		o(m)
	}
	c, err := toml.Parse(cfg)
	if err != nil {
		t.Fatal(err)
	}
	logTo := m.Stderr
	if logTo == nil {
		logTo = io.Discard
	}
	log := slog.New(slog.NewTextHandler(logTo, nil))
	store, err := badger.Open(c.DataDir, badger.Options{Logger: log, MinFreeBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	printers := map[string]gateway.Printer{}
	for _, pc := range c.Printers {
		printers[pc.ID] = tcp.New(pc, c.StoreID)
	}
	g, err := gateway.New(c, store, printers, gateway.Options{Logger: log, Clock: m.Clock})
	if err != nil {
		t.Fatal(err)
	}
	store.OnHealthChange(g.Notify)
	store.OnQuietSync(g.Notify)
	m.HTTP = &gwhttp.Server{
		Config: c, Tokens: c.APITokens, Logger: log, Now: g.Now,
		Health: g, Changes: g, OrderService: g, TaskService: g, PrinterService: g, AuditService: g,
		DeviceService: g, BoardService: g, DisplayService: g,
		Storage: store, Backup: store,
		// No CloudPRNT printer: every poll is answered as wrong credentials.
		CloudPRNT: cloudprnt.NewServer(cloudprnt.ServerOptions{Logger: log, Now: g.Now}),
	}
	if err := m.HTTP.Listen(c.Listen); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	gdone, hdone := make(chan error, 1), make(chan error, 1)
	go func() { gdone <- g.Run(ctx) }()
	go func() { hdone <- m.HTTP.Serve() }()
	t.Cleanup(func() {
		sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer scancel()
		if err := m.HTTP.Shutdown(sctx); err != nil {
			t.Errorf("shut down: %v", err)
		}
		cancel()
		for _, done := range []chan error{hdone, gdone} {
			if err := <-done; err != nil {
				t.Errorf("serve: %v", err)
			}
		}
		for id, p := range printers {
			if err := p.Close(); err != nil {
				t.Errorf("close printer %s: %v", id, err)
			}
		}
		if err := store.Close(); err != nil {
			t.Errorf("close store: %v", err)
		}
	})
	return m, m.HTTP.URL()
}
