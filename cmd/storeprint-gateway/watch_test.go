package main

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// waitUntil waits for cond to hold, checking it at once and again every
// time the gateway says something changed: it follows the gateway's own
// change stream (GET /v1/events), the one the LAN page follows, instead of
// sleeping between polls. It fails the test after timeout, with what cond
// last said.
func waitUntil(t testing.TB, base string, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	changes := watch(t, ctx, base)
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

// watch returns a channel that receives a value after every change the
// gateway reports, until ctx ends. The stream is open before it returns,
// so no change after the call is missed.
func watch(t testing.TB, ctx context.Context, base string) <-chan struct{} {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, "GET", base+"/v1/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET /v1/events: %v", err)
	}
	if resp.StatusCode != 200 {
		resp.Body.Close()
		t.Fatalf("GET /v1/events: status %d", resp.StatusCode)
	}
	ch := make(chan struct{}, 1)
	go func() {
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "data:") {
				select {
				case ch <- struct{}{}:
				default:
				}
			}
		}
	}()
	return ch
}
