package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
	"github.com/storeprint/storeprint/cloud/cloudtest"
	"github.com/storeprint/storeprint/sync"
	"github.com/storeprint/storeprint/sync/server"
)

// testLink is a gateway's side of a link to a server on an in-memory
// cloud: frames and pongs as the gateway receives them.
type testLink struct {
	gatewayID string
	conn      *websocket.Conn
	frames    chan *sync.Frame // closed when the link breaks
	pongs     chan struct{}
}

// recordingIngester is the in-memory cloud, telling each batch it is
// asked to store as the ingest starts.
type recordingIngester struct {
	*cloudtest.Cloud
	batches chan int // the events of each batch
}

func (r recordingIngester) Ingest(ctx context.Context, gatewayID, storeID, incarnation string, events []sync.Event) (*cloud.IngestResult, error) {
	r.batches <- len(events)
	return r.Cloud.Ingest(ctx, gatewayID, storeID, incarnation, events)
}

// setupLink starts a server on an in-memory cloud (readAhead as its
// ReadAheadBytes, 0 for the default), opens a link for a new gateway and
// reads its welcome.
func setupLink(t *testing.T, readAhead int64) (*cloudtest.Cloud, *testLink) {
	t.Helper()
	c, l, _ := setupRecorded(t, readAhead)
	return c, l
}

// setupRecorded is setupLink with the batches the server stores.
func setupRecorded(t *testing.T, readAhead int64) (*cloudtest.Cloud, *testLink, <-chan int) {
	t.Helper()
	c, url, batches := startServer(t, readAhead)
	return c, dialLink(t, c, url, "store-1"), batches
}

// startServer starts a server on an in-memory cloud (readAhead as its
// ReadAheadBytes, 0 for the default) and returns the cloud, the server's
// URL and the batches it stores.
func startServer(t *testing.T, readAhead int64) (*cloudtest.Cloud, string, <-chan int) {
	t.Helper()
	c := cloudtest.New()
	batches := make(chan int, 100)
	srv := &server.Server{Gateways: c, Ingester: recordingIngester{c, batches}, Commands: c, Notifier: c,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Poll: time.Hour, PingWait: 10 * time.Minute, ReadAheadBytes: readAhead}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	t.Cleanup(srv.Close)
	return c, hs.URL, batches
}

// dialLink opens a link for a new gateway of the store and reads its
// welcome.
func dialLink(t *testing.T, c *cloudtest.Cloud, url, storeID string) *testLink {
	t.Helper()
	gw, token, err := c.CreateGateway(context.Background(), storeID, cloud.Note{})
	if err != nil {
		t.Fatal(err)
	}
	conn := dial(t, url, gw.ID, token)
	l := &testLink{gatewayID: gw.ID, conn: conn, frames: make(chan *sync.Frame, 16), pongs: make(chan struct{}, 16)}
	conn.SetPongHandler(func(string) error { l.pongs <- struct{}{}; return nil })
	l.send(t, &sync.Frame{Type: sync.FrameHello, GatewayID: gw.ID, StoreID: gw.StoreID, Incarnation: "inc-1"})
	go func() {
		defer close(l.frames)
		for {
			typ, b, err := conn.ReadMessage()
			if err != nil || typ != websocket.TextMessage {
				return
			}
			f, err := sync.Decode(b)
			if err != nil {
				return
			}
			l.frames <- f
		}
	}()
	if f := l.next(t); f.Type != sync.FrameWelcome {
		t.Fatalf("got %s frame, want welcome", f.Type)
	}
	return l
}

// dial opens a link to the server at url with the gateway's credential.
func dial(t *testing.T, url, gatewayID, token string) *websocket.Conn {
	t.Helper()
	h := http.Header{"Authorization": {"Bearer " + token}, sync.HeaderGateway: {gatewayID}}
	conn, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(url, "http")+sync.Path, h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	// A link that does not answer within this fails the test rather than
	// hanging it.
	conn.SetReadDeadline(time.Now().Add(time.Minute))
	return conn
}

// setupGateway starts a server on an in-memory cloud with one gateway of
// store-1. open opens a link with the gateway's credential, says hello
// (cluster, if any, in it) and returns the link and the cloud's answer.
func setupGateway(t *testing.T) (c *cloudtest.Cloud, gw *cloud.Gateway, open func(cluster *sync.ClusterStatus) (*websocket.Conn, *sync.Frame)) {
	t.Helper()
	c, url, _ := startServer(t, 0)
	gw, token, err := c.CreateGateway(context.Background(), "store-1", cloud.Note{})
	if err != nil {
		t.Fatal(err)
	}
	return c, gw, func(cluster *sync.ClusterStatus) (*websocket.Conn, *sync.Frame) {
		t.Helper()
		conn := dial(t, url, gw.ID, token)
		b, err := sync.Encode(&sync.Frame{Type: sync.FrameHello, GatewayID: gw.ID, StoreID: gw.StoreID, Incarnation: "inc-1", Cluster: cluster})
		if err != nil {
			t.Fatal(err)
		}
		if err := conn.WriteMessage(websocket.TextMessage, b); err != nil {
			t.Fatal(err)
		}
		return conn, readFrame(t, conn)
	}
}

func (l *testLink) send(t *testing.T, f *sync.Frame) {
	t.Helper()
	b, err := sync.Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.conn.WriteMessage(websocket.TextMessage, b); err != nil {
		t.Fatal(err)
	}
}

// next returns the next frame the cloud sent.
func (l *testLink) next(t *testing.T) *sync.Frame {
	t.Helper()
	f, ok := <-l.frames
	if !ok {
		t.Fatal("the link broke")
	}
	return f
}

// events is a frame of task events from seq to seq+n-1.
func events(seq uint64, n int) *sync.Frame {
	f := &sync.Frame{Type: sync.FrameEvents}
	for i := range uint64(n) {
		no := fmt.Sprintf("order_%d_station_hot", seq+i)
		data, _ := json.Marshal(sync.TaskEvent{TaskNo: no, Version: 1, OrderID: fmt.Sprint(seq + i), Station: "hot",
			Status: storeprint.StatusQueued, CreatedAt: time.Unix(0, 0).UTC()})
		f.Events = append(f.Events, sync.Event{Seq: seq + i, Kind: sync.KindTask, TaskNo: no, Data: data})
	}
	return f
}

func TestServer_ReadAhead(t *testing.T) {
	t.Parallel()
	// While a batch waits for the cloud, the link still reads the
	// gateway's frames behind it and answers its pings.
	t.Run("PingAnsweredWhileIngestWaits", func(t *testing.T) {
		t.Parallel()
		c, l := setupLink(t, 0)
		release := c.Hold()
		defer release()
		l.send(t, events(1, 10))
		if err := l.conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(10*time.Second)); err != nil {
			t.Fatal(err)
		}
		fallback := time.NewTimer(30 * time.Second)
		defer fallback.Stop()
		select {
		case <-l.pongs:
		case <-fallback.C:
			t.Fatal("got no pong while the batch waited for the cloud")
		}
		release()
		if f := l.next(t); f.Type != sync.FrameAck || f.Cursor != 10 {
			t.Fatalf("got %s frame with cursor %d, want ack 10", f.Type, f.Cursor)
		}
	})
	// Events frames read while a batch waits are stored together, in
	// the order they came, and acked once.
	t.Run("WaitingFramesStoredTogether", func(t *testing.T) {
		t.Parallel()
		c, l, batches := setupRecorded(t, 0)
		release := c.Hold()
		defer release()
		l.send(t, events(1, 10))
		if n := <-batches; n != 10 {
			t.Fatalf("got a first batch of %d events, want 10", n)
		}
		for i := range uint64(4) {
			l.send(t, events(11+10*i, 10))
		}
		// The pong comes once the frames before the ping were read.
		if err := l.conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(10*time.Second)); err != nil {
			t.Fatal(err)
		}
		<-l.pongs
		release()
		if n := <-batches; n != 40 {
			t.Fatalf("got a second batch of %d events, want the 40 that waited", n)
		}
		for _, want := range []uint64{10, 50} {
			if f := l.next(t); f.Type != sync.FrameAck || f.Cursor != want {
				t.Fatalf("got %s frame with cursor %d, want ack %d", f.Type, f.Cursor, want)
			}
		}
		if got := c.Link(l.gatewayID, "inc-1"); got.Cursor != 50 || len(got.Events) != 50 {
			t.Fatalf("got cursor %d with %d events stored, want 50 and 50", got.Cursor, len(got.Events))
		}
		for i, e := range c.Link(l.gatewayID, "inc-1").Events {
			if e.Seq != uint64(i+1) {
				t.Fatalf("got event %d stored as the %dth, want them in order", e.Seq, i+1)
			}
		}
	})
	// A link whose own frames, waiting for the cloud, hold the budget
	// waits for them rather than closing: a gateway catching up is held
	// back, not cut off.
	t.Run("OwnBacklogWaits", func(t *testing.T) {
		t.Parallel()
		c, l, batches := setupRecorded(t, 1<<20)
		release := c.Hold()
		defer release()
		f := events(1, 1000)
		b, _ := sync.Encode(f)
		if 2*len(b) < 1<<18 {
			t.Fatalf("a frame of %d bytes, want more than a quarter of the budget", len(b))
		}
		l.send(t, f)
		<-batches // the first batch waits for the cloud, holding its budget
		for i := range uint64(4) {
			l.send(t, events(1001+1000*i, 1000))
		}
		release()
		want := uint64(5000)
		for {
			f := l.next(t)
			if f.Type != sync.FrameAck {
				t.Fatalf("got %s frame, want acks", f.Type)
			}
			if f.Cursor == want {
				break
			}
		}
	})
	// A link's frame of the size it sent before waits for room for all
	// of it in the node's budget, however full other links' frames keep
	// it, rather than being read in part and its link closed for want of
	// room for the rest: with a chain's gateways reconnecting at once,
	// the node's links take turns instead of breaking.
	t.Run("UsualFrameWaitsForRoom", func(t *testing.T) {
		t.Parallel()
		const budget, chunk = 4 << 20, 64 << 10 // the server's part of a frame
		c, url, _ := startServer(t, budget)
		x := dialLink(t, c, url, "store-x")
		xn := eventsOfSize(t, 150<<10) // more than two parts
		x.send(t, events(1, xn))
		x.wantAck(t, uint64(xn))

		release := c.Hold()
		defer release()
		// Frames of one part each, waiting for the cloud, leave free less
		// than a part and the reserve (an eighth of the budget) past one
		// part of X's frame, yet room for the whole of it.
		an := eventsOfSize(t, 50<<10)
		b, _ := sync.Encode(events(1, an))
		held := int64(2 * len(b)) // what each holds: its bytes and its decoded events
		frames := 0
		for budget-int64(frames)*held >= 2*chunk+2*chunk+budget/8 {
			frames++
		}
		if free := budget - int64(frames)*held; free < 2*4*chunk {
			t.Fatalf("%d bytes left free, want room for X's frame", free)
		}
		for i := 0; i < frames; i += 16 { // within a link's read-ahead frames
			a := dialLink(t, c, url, fmt.Sprintf("store-a%d", i))
			for j := range uint64(min(16, frames-i)) {
				a.send(t, events(1+j*uint64(an), an))
			}
			a.ping(t) // the pong comes once the frames before it were read
		}
		x.send(t, events(uint64(xn)+1, xn))
		x.ping(t)
		release()
		x.wantAck(t, uint64(2*xn))
	})

	// While a link's reader waits for room in the budget, its gateway's
	// pings wait unread behind its frames: the node tells the gateway it
	// is alive with pongs of its own, so the link is not taken for dead.
	t.Run("KeepAliveWhileWaitingForRoom", func(t *testing.T) {
		t.Parallel()
		c := cloudtest.New()
		srv := &server.Server{Gateways: c, Ingester: c, Commands: c, Notifier: c,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Poll: time.Hour, PingWait: 3 * time.Second, ReadAheadBytes: 1 << 20}
		hs := httptest.NewServer(srv)
		t.Cleanup(hs.Close)
		t.Cleanup(srv.Close)
		l := dialLink(t, c, hs.URL, "store-1")
		release := c.Hold()
		defer release()
		n := eventsOfSize(t, 100<<10)
		frames := make([][]byte, 10) // twice the budget
		for i := range frames {
			frames[i], _ = sync.Encode(events(1+uint64(i*n), n))
		}
		go func() {
			for _, b := range frames {
				if l.conn.WriteMessage(websocket.TextMessage, b) != nil {
					return
				}
			}
		}()
		fallback := time.NewTimer(30 * time.Second)
		defer fallback.Stop()
		select {
		case <-l.pongs: // unasked for
		case <-fallback.C:
			t.Fatal("got no pong while the link waited for room")
		}
		release()
		l.wantAck(t, uint64(len(frames)*n))
	})

	// A frame larger than what the node's read budget has free closes
	// its link, before it is read whole.
	t.Run("FrameOverTheBudgetClosesItsLink", func(t *testing.T) {
		t.Parallel()
		_, l := setupLink(t, 1<<20)
		l.send(t, events(1, 10))
		if f := l.next(t); f.Type != sync.FrameAck || f.Cursor != 10 {
			t.Fatalf("got %s frame with cursor %d, want ack 10", f.Type, f.Cursor)
		}
		big := &sync.Frame{Type: sync.FrameStatus}
		for i := range 20000 {
			big.Printers = append(big.Printers, sync.PrinterStatus{ID: fmt.Sprintf("printer-%d", i), Status: storeprint.PrinterReady, Stations: []string{"hot"}})
		}
		b, _ := sync.Encode(big)
		if len(b) < 1<<20 {
			t.Fatalf("the frame is %d bytes, want more than the budget", len(b))
		}
		_ = l.conn.WriteMessage(websocket.TextMessage, b)
		for f := range l.frames {
			t.Fatalf("got a %s frame, want the link closed", f.Type)
		}
		var ce *websocket.CloseError
		if _, _, err := l.conn.ReadMessage(); !errors.As(err, &ce) || ce.Code != websocket.CloseMessageTooBig {
			t.Fatalf("got %v, want close 1009", err)
		}
	})
}

// eventsOfSize returns the number of events of a frame of events about
// size bytes long.
func eventsOfSize(t *testing.T, size int) int {
	t.Helper()
	for n := 10; ; n += 10 {
		b, err := sync.Encode(events(1, n))
		if err != nil {
			t.Fatal(err)
		}
		if len(b) >= size {
			return n
		}
	}
}

// ping pings the cloud and waits for its pong, which comes once the
// frames sent before were read.
func (l *testLink) ping(t *testing.T) {
	t.Helper()
	if err := l.conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(10*time.Second)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-l.pongs:
	case _, ok := <-l.frames:
		if !ok {
			t.Fatal("the link broke")
		}
		t.Fatal("got a frame, want a pong")
	}
}

// wantAck reads the cloud's acks until one for cursor.
func (l *testLink) wantAck(t *testing.T, cursor uint64) {
	t.Helper()
	for {
		f := l.next(t)
		if f.Type != sync.FrameAck || f.Cursor > cursor {
			t.Fatalf("got %s frame with cursor %d, want acks up to %d", f.Type, f.Cursor, cursor)
		}
		if f.Cursor == cursor {
			return
		}
	}
}
