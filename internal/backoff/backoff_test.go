package backoff_test

import (
	"testing"
	"time"

	"github.com/storeprint/storeprint/internal/backoff"
)

func TestBackoff_Wait(t *testing.T) {
	t.Parallel()
	steps := backoff.Backoff{Steps: []time.Duration{5 * time.Second, 15 * time.Second, time.Minute}}
	doubling := backoff.Backoff{Min: 500 * time.Millisecond, Max: 15 * time.Second}
	for _, tc := range []struct {
		name string
		b    backoff.Backoff
		n    int
		want time.Duration
	}{
		{"StepsFirst", steps, 1, 5 * time.Second},
		{"StepsThird", steps, 3, time.Minute},
		{"StepsLastRepeats", steps, 9, time.Minute},
		{"StepsZeroIsFirst", steps, 0, 5 * time.Second},
		{"DoublingFirst", doubling, 1, 500 * time.Millisecond},
		{"DoublingFourth", doubling, 4, 4 * time.Second},
		{"DoublingCapped", doubling, 30, 15 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.b.Base(tc.n); got != tc.want {
				t.Fatalf("Base(%d): got %v, want %v", tc.n, got, tc.want)
			}
			for i := 0; i < 200; i++ {
				got := tc.b.Wait(tc.n)
				if lo, hi := tc.want*8/10, tc.want*12/10; got < lo || got > hi {
					t.Fatalf("Wait(%d): got %v, want within ±20%% of %v", tc.n, got, tc.want)
				}
			}
		})
	}
	t.Run("NoJitter", func(t *testing.T) {
		b := backoff.Backoff{Min: time.Second, Max: 30 * time.Second, Jitter: -1}
		if got := b.Wait(3); got != 4*time.Second {
			t.Fatalf("got %v, want exactly 4s", got)
		}
		if got := b.Longest(); got != 30*time.Second {
			t.Fatalf("Longest: got %v, want 30s", got)
		}
	})
	t.Run("Rand", func(t *testing.T) {
		// The injected source decides the spread: draw 0 is the shortest
		// wait, 0.5 the step itself, and the same draws give the same waits.
		for _, tc := range []struct {
			u    float64
			want time.Duration
		}{{0, 4 * time.Second}, {0.5, 5 * time.Second}, {0.75, 5500 * time.Millisecond}} {
			b := steps
			b.Rand = func() float64 { return tc.u }
			if got := b.Wait(1); got != tc.want {
				t.Fatalf("Wait(1) with draw %v: got %v, want %v", tc.u, got, tc.want)
			}
		}
	})
	if got, want := steps.Longest(), 72*time.Second; got != want {
		t.Fatalf("Longest: got %v, want %v", got, want)
	}
}
