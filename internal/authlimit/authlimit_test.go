package authlimit_test

import (
	"testing"
	"time"

	"github.com/storeprint/storeprint/internal/authlimit"
)

func TestLimiter_Fail(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	l := authlimit.New(5, 12*time.Second, func() time.Time { return now })
	for i := 0; i < 4; i++ {
		if l.Fail("10.0.0.1") {
			t.Fatalf("failure %d: got a wait, want none before 5", i+1)
		}
	}
	if !l.Fail("10.0.0.1") {
		t.Fatal("fifth failure: got no wait")
	}
	if d := l.Wait("10.0.0.1"); d != 12*time.Second {
		t.Fatalf("got wait %s, want 12s", d)
	}
	if d := l.Wait("10.0.0.2"); d != 0 {
		t.Fatalf("another address: got wait %s, want 0", d)
	}
	now = now.Add(6 * time.Second)
	if d := l.Wait("10.0.0.1"); d != 6*time.Second {
		t.Fatalf("6s later: got wait %s, want 6s", d)
	}
	if got := authlimit.RetryAfter(5500 * time.Millisecond); got != "6" {
		t.Fatalf("got Retry-After %q, want 6", got)
	}
	now = now.Add(6 * time.Second)
	if d := l.Wait("10.0.0.1"); d != 0 {
		t.Fatalf("12s later: got wait %s, want 0", d)
	}
}
