// Package testwatch lets tests wait on a running gateway's own change
// stream (GET /v1/events, the one the LAN page follows) instead of
// sleeping between polls.
package testwatch

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"
)

// Until waits for cond to hold, checking it at once and again every time
// the gateway at base says something changed: a task, a printer, the sync
// link, the data disk. token is a bearer token the stream accepts. It
// fails the test after timeout with what cond last said.
func Until(t testing.TB, base, token string, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	changes := Watch(t, ctx, base, token)
	for {
		if ok, _ := cond(); ok {
			return
		}
		select {
		case <-changes:
		case <-ctx.Done():
			ok, last := cond()
			if ok {
				return
			}
			t.Fatalf("not within %s: %s", timeout, last)
		}
	}
}

// Watch returns a channel that receives a value after every change the
// gateway reports, until ctx ends. The stream is open before it returns,
// so no change after the call is missed. A stream that ends (the gateway
// restarted, say) is opened again, as a browser's EventSource does, and
// counts as a change.
func Watch(t testing.TB, ctx context.Context, base, token string) <-chan struct{} {
	t.Helper()
	body, err := open(ctx, base, token)
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan struct{}, 1)
	signal := func() {
		select {
		case ch <- struct{}{}:
		default: // a signal is already pending
		}
	}
	go func() {
		for {
			if body != nil {
				follow(body, signal)
				body.Close()
				signal()
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(100 * time.Millisecond): // as a browser waits before it reconnects
			}
			body, _ = open(ctx, base, token)
		}
	}()
	return ch
}

func open(ctx context.Context, base, token string) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", base+"/v1/events", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET /v1/events: %w", err)
	}
	if resp.StatusCode != 200 {
		resp.Body.Close()
		return nil, fmt.Errorf("GET /v1/events: status %d", resp.StatusCode)
	}
	return resp.Body, nil
}

// follow calls signal for every event on the stream until it ends. Lines
// may be of any length (a board of thousands of tickets): only their
// start is looked at.
func follow(body io.Reader, signal func()) {
	r := bufio.NewReader(body)
	start := true
	for {
		line, more, err := r.ReadLine()
		if err != nil {
			return
		}
		if start && bytes.HasPrefix(line, []byte("data:")) {
			signal()
		}
		start = !more
	}
}
