package server_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	stdsync "sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/storeprint/storeprint/cloud"
	"github.com/storeprint/storeprint/cloud/cloudtest"
	"github.com/storeprint/storeprint/sync"
	"github.com/storeprint/storeprint/sync/server"
)

// A gateway credential has one live link: a new link replaces the old,
// which is closed with a reason naming the new link's address; links
// replacing each other from two addresses more than
// cloud.SharedReplacements times say the credential is shared.
func TestServer_OneLinkPerCredential(t *testing.T) {
	t.Parallel()
	_, _, open := setupGateway(t)
	old, welcome := open(nil)
	if welcome.Type != sync.FrameWelcome || welcome.CredentialShared {
		t.Fatalf("got %s frame, shared %v, want a welcome, not shared", welcome.Type, welcome.CredentialShared)
	}
	for i := range cloud.SharedReplacements + 1 {
		conn, welcome := open(nil)
		if welcome.Type != sync.FrameWelcome {
			t.Fatalf("got %s frame, want a welcome", welcome.Type)
		}
		f := readFrame(t, old)
		if f.Type != sync.FrameError || f.Code != sync.ErrorReplaced || !strings.Contains(f.Error, conn.LocalAddr().String()) {
			t.Fatalf("replacement %d: the old link got %s %q %q, want error replaced naming %s", i+1, f.Type, f.Code, f.Error, conn.LocalAddr())
		}
		if _, _, err := old.ReadMessage(); err == nil {
			t.Fatal("the replaced link is still open")
		}
		wantShared := i+1 > cloud.SharedReplacements
		if welcome.CredentialShared != wantShared || f.CredentialShared != wantShared {
			t.Fatalf("replacement %d: got shared %v in the welcome and %v in the error, want %v",
				i+1, welcome.CredentialShared, f.CredentialShared, wantShared)
		}
		old = conn
	}
}

func readFrame(t *testing.T, conn *websocket.Conn) *sync.Frame {
	t.Helper()
	_, b, err := conn.ReadMessage()
	if err != nil {
		t.Fatal(err)
	}
	f, err := sync.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// Bad gateway credentials on the sync link are counted per address and
// logged without the token: past 10, 429 with Retry-After. A valid
// credential from the same address is served all the same.
func TestServer_BadCredentials(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := cloudtest.New()
	gw, token, err := c.CreateGateway(ctx, "store-1", cloud.Note{})
	if err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	var mu stdsync.Mutex
	srv := &server.Server{Gateways: c, Ingester: c, Commands: c, Notifier: c,
		Logger: slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
			mu.Lock()
			defer mu.Unlock()
			return logs.Write(p)
		}), nil)), Poll: time.Hour, PingWait: 10 * time.Minute}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	t.Cleanup(srv.Close)
	url := "ws" + strings.TrimPrefix(hs.URL, "http") + sync.Path
	dial := func(tok string) (*websocket.Conn, *http.Response, error) {
		return websocket.DefaultDialer.Dial(url, http.Header{"Authorization": {"Bearer " + tok}, sync.HeaderGateway: {gw.ID}})
	}
	const guess = "spg1.store-1.guessed"
	for i := range server.BadCredBurst + 5 {
		want := http.StatusUnauthorized
		if i >= server.BadCredBurst {
			want = http.StatusTooManyRequests
		}
		_, resp, err := dial(guess)
		if err == nil || resp == nil || resp.StatusCode != want || (want == 429) != (resp.Header.Get("Retry-After") != "") {
			t.Fatalf("bad credential %d: got %v %v, want %d", i+1, resp, err, want)
		}
	}
	conn, _, err := dial(token)
	if err != nil {
		t.Fatalf("a valid credential after %d bad ones from its address: %v", server.BadCredBurst+5, err)
	}
	conn.Close()
	mu.Lock()
	log := logs.String()
	mu.Unlock()
	if strings.Count(log, "bad gateway credentials") != server.BadCredBurst+5 || strings.Contains(log, guess) || strings.Contains(log, token) {
		t.Fatalf("want every bad credential logged without its token, got:\n%s", log)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
