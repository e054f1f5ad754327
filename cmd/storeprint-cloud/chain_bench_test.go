package main

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/storeprint/storeprint/cloud/postgres/pgtest"
	"github.com/storeprint/storeprint/sync"
	synclink "github.com/storeprint/storeprint/sync/client"
)

// BenchmarkReplayBacklog measures how fast one gateway's backlog of
// 100,000 events (back from a long outage) reaches PostgreSQL through the
// sync link, from connect to the last acknowledgement, against the same
// rows inserted raw on one connection (see BenchmarkChainReconnect).
func BenchmarkReplayBacklog(b *testing.B) {
	const backlog = 100000
	events := backlogEvents(backlog)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dbURL := pgtest.NewDatabase(b)
		nodes := startBenchNodes(b, dbURL, 1)
		stores := createStores(b, nodes[0].base, fmt.Sprintf("r%d", i), 1)
		rawTable(b, dbURL, "raw_events")
		raw, _ := rawInsert(b, dbURL, "raw_events", stores, events, synclink.DefaultBatchSize, 1)
		b.StartTimer()
		res := replayAll(b, nodes, stores, events)
		b.StopTimer()
		checkIngested(b, dbURL, 1, backlog)
		rawRate, rate := float64(backlog)/raw.Seconds(), float64(backlog)/res.total.Seconds()
		fmt.Printf("replay: one gateway, %d events\n", backlog)
		fmt.Printf("  raw unnest, 1 connection: %6.2fs  %8.0f rows/s\n", raw.Seconds(), rawRate)
		fmt.Printf("  through the link:         %6.2fs  %8.0f events/s  %.2f x raw (aim >= 0.5: %s)\n", res.total.Seconds(), rate, rate/rawRate, aim(rate/rawRate >= 0.5))
		b.ReportMetric(rate, "events/s")
		b.ReportMetric(rate/rawRate, "x-raw")
		b.ReportMetric(res.total.Seconds(), "s-to-clear")
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
