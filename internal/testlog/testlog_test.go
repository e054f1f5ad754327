package testlog_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storeprint/storeprint/internal/testlog"
)

// Lines written from many goroutines while the test reads all arrive
// whole (go test -race checks the reads).
func TestBuffer(t *testing.T) {
	t.Parallel()
	var b testlog.Buffer
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 100 {
				fmt.Fprintf(&b, "writer %d line %d\n", i, j)
				_ = b.String()
			}
		})
	}
	wg.Wait()
	if got := strings.Count(b.String(), "\n"); got != 800 {
		t.Errorf("got %d lines, want 800", got)
	}
	if !strings.Contains(b.String(), "writer 7 line 99\n") {
		t.Errorf("the last line of writer 7 is missing")
	}
}

// Next's channel is closed by the next write, not before: a test waiting
// on it sees every write.
func TestBuffer_Next(t *testing.T) {
	t.Parallel()
	var b testlog.Buffer
	text, changed := b.Next()
	if text != "" {
		t.Fatalf("got %q from an empty buffer", text)
	}
	select {
	case <-changed:
		t.Fatal("changed before any write")
	default:
	}
	written := make(chan struct{})
	go func() {
		defer close(written)
		for i := range 3 {
			fmt.Fprintf(&b, "line %d\n", i)
		}
	}()
	timeout := time.After(10 * time.Second)
	for !strings.Contains(text, "line 2\n") {
		select {
		case <-changed:
		case <-timeout:
			t.Fatalf("still %q after the writes", text)
		}
		text, changed = b.Next()
	}
	<-written
	if want := "line 0\nline 1\nline 2\n"; text != want {
		t.Errorf("got %q, want %q", text, want)
	}
}

func TestJSONLines(t *testing.T) {
	t.Parallel()
	const ok = `{"time":"2026-01-02T03:04:05.123Z","level":"INFO","msg":"up","store_id":"s-1"}`
	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		recs, err := testlog.JSONLines(ok + "\n\n" + strings.Replace(ok, "INFO", "WARN", 1) + "\n")
		if err != nil || len(recs) != 2 || recs[0]["store_id"] != "s-1" || recs[1]["level"] != "WARN" {
			t.Fatalf("got %v, %v; want the two records", recs, err)
		}
	})
	for name, line := range map[string]string{
		"ErrNotJSON": "time=2026-01-02T03:04:05Z level=INFO msg=up",
		"ErrNoMsg":   strings.Replace(ok, `"msg":"up"`, `"message":"up"`, 1),
		"ErrTime":    strings.Replace(ok, "2026-01-02T03:04:05.123Z", "yesterday", 1),
		"ErrLevel":   strings.Replace(ok, "INFO", "NOTICE", 1),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if _, err := testlog.JSONLines(ok + "\n" + line + "\n"); err == nil || !strings.Contains(err.Error(), line) {
				t.Fatalf("got %v, want an error naming the line %s", err, line)
			}
		})
	}
}
