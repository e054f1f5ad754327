package server

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// readResult is one message as readBounded returned it.
type readResult struct {
	b    []byte
	size int64
	err  error
}

// setupReader runs readBounded on the server's side of a websocket for
// every message the returned connection sends.
func setupReader(t *testing.T) (*Server, *websocket.Conn, <-chan readResult) {
	t.Helper()
	s := &Server{Logger: slog.New(slog.DiscardHandler)}
	s.init()
	t.Cleanup(s.Close)
	got := make(chan readResult, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := s.upgrader.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer conn.Close()
		l := &link{s: s, conn: conn, drained: make(chan struct{}, 1), log: s.Logger}
		conn.SetReadLimit(1 << 30)
		for {
			_, b, size, err := l.readBounded(context.Background())
			got <- readResult{b, size, err}
			if err != nil {
				return
			}
			l.queued.Add(size)
		}
	}))
	t.Cleanup(srv.Close)
	conn, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return s, conn, got
}

func TestLink_ReadBounded(t *testing.T) {
	t.Parallel()
	next := func(t *testing.T, got <-chan readResult) readResult {
		t.Helper()
		fallback := time.NewTimer(30 * time.Second)
		defer fallback.Stop()
		select {
		case r := <-got:
			if r.err != nil {
				t.Fatal(r.err)
			}
			return r
		case <-fallback.C:
			t.Fatal("readBounded returned nothing")
			return readResult{}
		}
	}
	// A frame of a few bytes (a status frame) holds a part's room, not
	// room for the events frame the node expects: what it holds in
	// memory stays near what it holds of the budget.
	t.Run("SmallFrameHoldsOnePart", func(t *testing.T) {
		t.Parallel()
		_, conn, got := setupReader(t)
		msg := []byte(`{"v":1,"type":"status","printers":[]}`)
		if err := conn.WriteMessage(websocket.TextMessage, msg); err != nil {
			t.Fatal(err)
		}
		r := next(t, got)
		if !bytes.Equal(r.b, msg) {
			t.Fatalf("got %q, want %q", r.b, msg)
		}
		if cap(r.b) > frameChunk {
			t.Fatalf("got room for %d bytes for a frame of %d, want at most one part (%d)", cap(r.b), len(msg), frameChunk)
		}
		if want := readAheadSize(len(msg)); r.size != want {
			t.Fatalf("got %d of the budget held, want %d", r.size, want)
		}
	})
	// A frame past its first part is read whole, its first part
	// included, into room for the frame as held, and then one of the
	// usual size fits the room it was given without growing.
	t.Run("LargeFrameReadWhole", func(t *testing.T) {
		t.Parallel()
		s, conn, got := setupReader(t)
		for _, n := range []int{frameChunk, frameChunk + 1, 5*frameChunk + 123, usualFrame} {
			msg := bytes.Repeat([]byte("0123456789abcdef"), n/16+1)[:n]
			msg[0], msg[n-1] = '[', ']'
			if err := conn.WriteMessage(websocket.TextMessage, msg); err != nil {
				t.Fatal(err)
			}
			r := next(t, got)
			if !bytes.Equal(r.b, msg) {
				t.Fatalf("frame of %d bytes: got %d bytes, not the ones sent", n, len(r.b))
			}
			if want := readAheadSize(n); r.size != want {
				t.Fatalf("frame of %d bytes: got %d of the budget held, want %d", n, r.size, want)
			}
			if n == usualFrame && int64(cap(r.b)) > s.firstPart()/2+frameChunk {
				t.Fatalf("frame of %d bytes: got room for %d, want the room held at first (%d)", n, cap(r.b), s.firstPart()/2)
			}
		}
	})
}
