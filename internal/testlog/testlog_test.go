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
