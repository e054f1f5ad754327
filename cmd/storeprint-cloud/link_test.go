package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/gorilla/websocket"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud/postgres/pgtest"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/gateway/badger"
	"github.com/storeprint/storeprint/internal/chromium"
	"github.com/storeprint/storeprint/sync"
	synclink "github.com/storeprint/storeprint/sync/client"
)

// rawLink is a sync link spoken frame by frame, as a gateway would.
type rawLink struct {
	t    testing.TB
	conn *websocket.Conn
}

func dialLink(t testing.TB, base string, st store) *rawLink {
	t.Helper()
	url := "ws://" + strings.TrimPrefix(base, "http://") + sync.Path
	h := map[string][]string{"Authorization": {"Bearer " + st.token}, sync.HeaderGateway: {st.gatewayID}}
	conn, _, err := websocket.DefaultDialer.Dial(url, h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &rawLink{t: t, conn: conn}
}

func (l *rawLink) send(f *sync.Frame) {
	l.t.Helper()
	b, _ := sync.Encode(f)
	if err := l.conn.WriteMessage(websocket.TextMessage, b); err != nil {
		l.t.Fatal(err)
	}
}

func (l *rawLink) read() *sync.Frame {
	l.t.Helper()
	l.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, m, err := l.conn.ReadMessage()
	if err != nil {
		l.t.Fatal(err)
	}
	f, err := sync.Decode(m)
	if err != nil {
		l.t.Fatal(err)
	}
	return f
}

// hello opens the link of an incarnation and returns the welcome.
func (l *rawLink) hello(st store, incarnation string) *sync.Frame {
	l.t.Helper()
	l.send(&sync.Frame{Type: sync.FrameHello, GatewayID: st.gatewayID, StoreID: st.id, Incarnation: incarnation, Resync: true})
	f := l.read()
	if f.Type != sync.FrameWelcome {
		l.t.Fatalf("got %+v, want welcome", f)
	}
	return f
}

// events sends events and returns the cloud's ack.
func (l *rawLink) events(events ...sync.Event) *sync.Frame {
	l.t.Helper()
	l.send(&sync.Frame{Type: sync.FrameEvents, Events: events})
	f := l.read()
	if f.Type != sync.FrameAck {
		l.t.Fatalf("got %+v, want ack", f)
	}
	return f
}

func rawTask(seq uint64, taskNo string, version uint64, status storeprint.Status) sync.Event {
	now := time.Now().UTC()
	data, _ := json.Marshal(sync.TaskEvent{TaskNo: taskNo, Version: version, OrderID: "x", Station: "hot", PrinterID: "hot-1",
		Status: status, CreatedAt: now, UpdatedAt: now})
	return sync.Event{Seq: seq, Kind: sync.KindTask, TaskNo: taskNo, At: now, Data: data}
}

type cloudTask struct {
	Status   string `json:"status"`
	Version  uint64 `json:"version"`
	Receipts []struct {
		Attempt int    `json:"attempt"`
		State   string `json:"state"`
	} `json:"receipts"`
}

func getTask(t testing.TB, base, storeID, taskNo string) (cloudTask, int) {
	t.Helper()
	var task cloudTask
	code := do(t, adminToken, "GET", base+"/v1/stores/"+storeID+"/tasks/"+taskNo, nil, &task)
	return task, code
}

// The link never stops for one bad event: an event the cloud cannot apply
// is dead-lettered and alerted, acknowledged, and the events after it are
// delivered. A second gateway credential of the store cannot change the
// first one's tasks; a seq far past the cursor and a version jump are
// refused.
func TestSync_DeadLetters(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.NewDatabase(t)
	node := startCloud(t, dbURL, "127.0.0.1:0")
	a := createStore(t, node.base, "t1", "s-dl")
	l := dialLink(t, node.base, a)
	l.hello(a, "0123456789abcdef")
	now := time.Now().UTC()
	nul := sync.Event{Seq: 2, Kind: sync.KindTask, TaskNo: "order_n_station_hot", At: now,
		Data: json.RawMessage(`{"task_no":"order_n_station_hot","version":1,"status":"queued","last_error":"a\u0000b"}`)}
	ack := l.events(rawTask(1, "order_a_station_hot", 1, "queued"), nul, rawTask(3, "order_a_station_hot", 2, "printing"))
	if ack.Cursor != 3 || len(ack.DeadLetters) != 1 || ack.DeadLetters[0].Seq != 2 || !strings.Contains(ack.DeadLetters[0].Reason, "NUL") {
		t.Fatalf("got %+v, want the NUL event set aside and the cursor past it", ack)
	}
	if task, _ := getTask(t, node.base, a.id, "order_a_station_hot"); task.Status != "printing" {
		t.Fatalf("got %+v, want the event after the bad one applied", task)
	}
	var dash struct {
		Queue []struct {
			Kind    string `json:"kind"`
			StoreID string `json:"store_id"`
			Message string `json:"message"`
		} `json:"queue"`
		LinkEvents []struct {
			Kind string `json:"kind"`
		} `json:"link_events"`
	}
	do(t, adminToken, "GET", node.base+"/v1/dashboard", nil, &dash)
	if len(dash.Queue) != 1 || dash.Queue[0].Kind != "dead_letter" || !strings.Contains(dash.Queue[0].Message, "could not be applied") {
		t.Fatalf("got queue %+v, want the dead letter's alert", dash.Queue)
	}
	if len(dash.LinkEvents) != 1 || dash.LinkEvents[0].Kind != "dead_letter" {
		t.Fatalf("got link events %+v, want the dead letter", dash.LinkEvents)
	}

	// Far past the cursor: neither stored nor claimed.
	ack = l.events(rawTask(3+sync.MaxWindow+10, "order_far_station_hot", 1, "queued"))
	if ack.Cursor != 3 || len(ack.DeadLetters) != 0 {
		t.Fatalf("got %+v, want the far seq refused", ack)
	}
	if _, code := getTask(t, node.base, a.id, "order_far_station_hot"); code != 404 {
		t.Fatalf("got %d, want the far event not applied", code)
	}
	// A version jump.
	ack = l.events(rawTask(4, "order_a_station_hot", 4_000_000_000_000_000_000, "attention_required"))
	if ack.Cursor != 4 || len(ack.DeadLetters) != 1 || !strings.Contains(ack.DeadLetters[0].Reason, "version") {
		t.Fatalf("got %+v, want the version jump set aside", ack)
	}

	// A second gateway credential of the same store.
	var gw2 struct {
		GatewayID string `json:"gateway_id"`
		Token     string `json:"token"`
	}
	if code := do(t, adminToken, "POST", node.base+"/v1/admin/stores/"+a.id+"/gateways", map[string]string{"reason": "test"}, &gw2); code != 201 {
		t.Fatalf("second gateway: %d", code)
	}
	b := store{id: a.id, gatewayID: gw2.GatewayID, token: gw2.Token}
	l2 := dialLink(t, node.base, b)
	l2.hello(b, "fedcba9876543210")
	ack = l2.events(rawTask(1, "order_a_station_hot", 3, "done"), rawTask(2, "order_b_station_hot", 1, "queued"))
	if ack.Cursor != 2 || len(ack.DeadLetters) != 1 || !strings.Contains(ack.DeadLetters[0].Reason, "belongs to gateway "+a.gatewayID) {
		t.Fatalf("got %+v, want the other gateway's task refused", ack)
	}
	if task, _ := getTask(t, node.base, a.id, "order_a_station_hot"); task.Status != "printing" || task.Version != 2 {
		t.Fatalf("got %+v, want the first gateway's printing v2", task)
	}
	if task, _ := getTask(t, node.base, a.id, "order_b_station_hot"); task.Status != "queued" {
		t.Fatalf("got %+v, want the second gateway's own task", task)
	}
}

// notSentOnce is a printer whose first attempt stops after the prepared
// receipt, proving nothing was sent; later attempts print.
type notSentOnce struct{ calls int }

func (p *notSentOnce) Status(context.Context) (storeprint.PrinterStatus, error) {
	return storeprint.PrinterStatus{State: storeprint.PrinterReady}, nil
}

func (p *notSentOnce) Print(ctx context.Context, job *gateway.PrintJob) error {
	if err := job.Prepare(ctx, []byte("ticket")); err != nil {
		return &gateway.PrintError{Outcome: gateway.PrintNotSent, Err: err}
	}
	if p.calls++; p.calls == 1 {
		return &gateway.PrintError{Outcome: gateway.PrintNotSent, State: storeprint.PrinterReady, Err: errors.New("write refused before the first byte")}
	}
	return nil
}

func (p *notSentOnce) Close() error { return nil }

// An attempt refused after its prepared receipt (receipt not_sent)
// reaches the cloud and the link's pending count goes to 0.
func TestSync_NotSent(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.NewDatabase(t)
	node := startCloud(t, dbURL, "127.0.0.1:0")
	st := createStore(t, node.base, "t1", "s-ns")
	cfg := &gateway.Config{
		StoreID: st.id, Listen: "127.0.0.1:0", APITokens: []string{"token-123456789"},
		Cloud:    &gateway.CloudConfig{URL: "ws://" + strings.TrimPrefix(node.base, "http://") + sync.Path, Insecure: true, GatewayID: st.gatewayID, Token: st.token},
		Printers: []gateway.PrinterConfig{{ID: "hot-1", Driver: "tcp", Address: "127.0.0.1:9"}},
		Stations: []gateway.StationConfig{{Name: "hot", Printer: "hot-1"}},
	}
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	db, err := badger.Open(t.TempDir(), badger.Options{MinFreeBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	g, err := gateway.New(cfg, db, map[string]gateway.Printer{"hot-1": &notSentOnce{}}, gateway.Options{
		Logger: log, Backoff: []time.Duration{10 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	link := &synclink.Client{URL: cfg.Cloud.URL, GatewayID: st.gatewayID, Token: st.token, StoreID: st.id, Gateway: g, Logger: log}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{}, 2)
	go func() { g.Run(ctx); done <- struct{}{} }()
	go func() { link.Run(ctx); done <- struct{}{} }()
	t.Cleanup(func() { cancel(); <-done; <-done })
	if _, _, err := g.AcceptOrder(ctx, &storeprint.Order{OrderID: "ns1", Items: []storeprint.Item{{Name: "面", Qty: 1, Station: "hot"}}}, storeprint.SourcePOS); err != nil {
		t.Fatal(err)
	}
	changes, unsubscribe := g.Subscribe()
	defer unsubscribe()
	deadline := time.After(30 * time.Second)
	for {
		task, _ := getTask(t, node.base, st.id, "order_ns1_station_hot")
		ss, err := g.SyncState(ctx)
		if err != nil {
			t.Fatal(err)
		}
		notSent := false
		for _, r := range task.Receipts {
			notSent = notSent || (r.Attempt == 1 && r.State == "not_sent")
		}
		if task.Status == "done" && notSent && ss.Pending(link.State().Cursor) == 0 {
			return
		}
		select {
		case <-changes:
		case <-time.After(100 * time.Millisecond): // the cloud's answer changes nothing local
		case <-deadline:
			t.Fatalf("got cloud task %+v, pending %d; want done with attempt 1 not_sent and nothing pending", task, ss.Pending(link.State().Cursor))
		}
	}
}

// The dashboard shows what happened on a store's link in words: a gateway
// data reset with when, and an event set aside in the queue.
func TestBrowser_LinkEvents(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.NewDatabase(t)
	node := startCloud(t, dbURL, "127.0.0.1:0")
	st := createNamedStore(t, node.base, "acme", "acme-02", "人民广场店 People's Sq")
	l := dialLink(t, node.base, st)
	l.hello(st, "00000000000000aa")
	l.events(rawTask(1, "order_a_station_hot", 1, "queued"))
	l.conn.Close()
	l = dialLink(t, node.base, st)
	l.hello(st, "00000000000000bb") // the data dir wiped: a new incarnation
	bad := sync.Event{Seq: 1, Kind: sync.KindTask, At: time.Now(), Data: json.RawMessage(`{"task_no":"order_b_station_hot","version":1,"status":"lost"}`)}
	if ack := l.events(bad); len(ack.DeadLetters) != 1 {
		t.Fatalf("got %+v, want the event set aside", ack)
	}
	ctx := chromium.New(t, 1400, 1000)
	chromium.Within(t, ctx, 20*time.Second, "link events on the dashboard",
		chromedp.Navigate(node.base+"/?token="+adminToken),
		chromedp.WaitVisible(`#link [data-store="acme-02"][data-link="gateway_reset"]`),
		chromedp.WaitVisible(`#link [data-store="acme-02"][data-link="dead_letter"]`),
		chromedp.WaitVisible(`#queue [data-store="acme-02"][data-status="dead_letter"]`))
	text := eval[string](t, ctx, `document.querySelector('#link').innerText + document.querySelector('#queue').innerText`)
	for _, want := range []string{"Gateway data reset", "came back with new data", "Events set aside", "could not apply", "人民广场店"} {
		if !strings.Contains(text, want) {
			t.Errorf("the dashboard lacks %q:\n%s", want, text)
		}
	}
	chromium.Within(t, ctx, 5*time.Second, "switch language", chromedp.Click(`#lang`))
	if text := eval[string](t, ctx, `document.querySelector('#link').innerText`); !strings.Contains(text, "网关数据已重置") {
		t.Errorf("got %q, want the reset in Chinese", text)
	}
}
