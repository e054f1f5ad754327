package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud/postgres/pgtest"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/gateway/badger"
	"github.com/storeprint/storeprint/printerdrivers/tcp"
	"github.com/storeprint/storeprint/sync"
	synclink "github.com/storeprint/storeprint/sync/client"
)

// backlogGateway is a gateway whose outbox holds n events, as after a long
// outage: n tasks accepted while the cloud was away.
func backlogGateway(b *testing.B, st store, n int) *gateway.Gateway {
	b.Helper()
	cfg := &gateway.Config{
		StoreID: st.id, Listen: "127.0.0.1:0", APITokens: []string{posToken},
		Printers: []gateway.PrinterConfig{{ID: "hot-1", Driver: "tcp", Address: "127.0.0.1:9"}},
		Stations: []gateway.StationConfig{{Name: "hot", Printer: "hot-1"}},
	}
	cfg.SetDefaults()
	db, err := badger.Open(b.TempDir(), badger.Options{MinFreeBytes: 1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	g, err := gateway.New(cfg, db, map[string]gateway.Printer{"hot-1": tcp.New(cfg.Printers[0], st.id)}, gateway.Options{Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	// Each task adds two events: its state and its printed receipt.
	for i := 0; i < n/2; {
		err := db.Update(context.Background(), func(tx gateway.Tx) error {
			for j := 0; j < 1000 && i+j < n/2; j++ {
				no := fmt.Sprintf("order_b%07d_station_hot", i+j)
				t := &gateway.Task{TaskNo: no, OrderID: fmt.Sprintf("b%07d", i+j), Station: "hot", PrinterID: "hot-1",
					Status: storeprint.StatusDone, Attempt: 1, Seq: tx.NextTaskSeq(), CreatedAt: now, PrintedAt: &now,
					Items: []storeprint.Item{{Name: "牛肉面", Qty: 1, Station: "hot"}}}
				if err := tx.PutTask(t); err != nil {
					return err
				}
				if err := tx.PutReceipt(&gateway.Receipt{TaskNo: no, Attempt: 1, State: storeprint.ReceiptPrinted, PrinterID: "hot-1",
					PayloadSHA256: "00", ProcessID: "0001", PreparedAt: now, PrintedAt: &now}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		i += 1000
	}
	return g
}

// BenchmarkReplayBacklog measures how fast a backlog of 100,000 events
// (a gateway back from a long outage) reaches PostgreSQL through the sync
// link: events/s from connect to the last acknowledgement.
func BenchmarkReplayBacklog(b *testing.B) {
	const backlog = 100000
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dbURL := pgtest.NewDatabase(b)
		node := startCloud(b, dbURL, "127.0.0.1:0")
		st := createStore(b, node.base, "t1", fmt.Sprintf("s-bench-%d", i))
		g := backlogGateway(b, st, backlog)
		c := &synclink.Client{URL: "ws://" + strings.TrimPrefix(node.base, "http://") + sync.Path, GatewayID: st.gatewayID,
			Token: st.token, StoreID: st.id, Gateway: g, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
		ctx, cancel := context.WithCancel(context.Background())
		b.StartTimer()
		start := time.Now()
		done := make(chan struct{})
		go func() { c.Run(ctx); close(done) }()
		for c.State().Cursor < backlog {
			time.Sleep(5 * time.Millisecond)
		}
		el := time.Since(start)
		b.StopTimer()
		cancel()
		<-done
		b.ReportMetric(float64(backlog)/el.Seconds(), "events/s")
		b.ReportMetric(el.Seconds(), "s-to-clear")
		node.close()
	}
}

// BenchmarkIdleLinks measures the memory one cloud node holds for 1,000
// idle gateway links.
func BenchmarkIdleLinks(b *testing.B) {
	const links = 1000
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dbURL := pgtest.NewDatabase(b)
		node := startCloud(b, dbURL, "127.0.0.1:0")
		st := createStore(b, node.base, "t1", fmt.Sprintf("s-idle-%d", i))
		url := "ws://" + strings.TrimPrefix(node.base, "http://") + sync.Path
		before := heap()
		var conns []*websocket.Conn
		for j := 0; j < links; j++ {
			h := map[string][]string{"Authorization": {"Bearer " + st.token}, sync.HeaderGateway: {st.gatewayID}}
			conn, _, err := websocket.DefaultDialer.Dial(url, h)
			if err != nil {
				b.Fatalf("link %d: %v", j, err)
			}
			hello, _ := sync.Encode(&sync.Frame{Type: sync.FrameHello, GatewayID: st.gatewayID, StoreID: st.id})
			if err := conn.WriteMessage(websocket.TextMessage, hello); err != nil {
				b.Fatal(err)
			}
			if _, _, err := conn.ReadMessage(); err != nil { // welcome
				b.Fatal(err)
			}
			conns = append(conns, conn)
		}
		for node.m.Sync.Links() < links {
			time.Sleep(10 * time.Millisecond)
		}
		after := heap()
		// The client side of each link lives in this process too; count
		// it by measuring a second set of client connections alone is not
		// possible, so report the whole difference: an upper bound.
		b.ReportMetric(float64(after-before)/links, "B/link")
		for _, c := range conns {
			c.Close()
		}
		node.close()
	}
}

func heap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse + m.StackInuse
}
