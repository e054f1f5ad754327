package clock

import (
	"context"
	"time"
)

// Clock tells the time and makes timers.
type Clock interface {
	// Now is the wall clock.
	Now() time.Time
	// Mono is a monotonic reading: only differences between two readings
	// mean anything, and it never steps.
	Mono() time.Duration
	// NewTimer returns a timer that fires once d of monotonic time has
	// passed.
	NewTimer(d time.Duration) Timer
}

// Timer is a one-shot timer, like time.Timer.
type Timer interface {
	C() <-chan time.Time
	// Stop prevents the timer from firing; it reports whether it stopped
	// it before it fired.
	Stop() bool
}

// Sleep waits for d on c, or until ctx is done; it reports whether the full
// d passed.
func Sleep(ctx context.Context, c Clock, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := c.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C():
		return true
	}
}

// Real is the system clock.
type Real struct{}

var start = time.Now()

func (Real) Now() time.Time { return time.Now() }

// Mono is the time since the process started, on the monotonic clock.
func (Real) Mono() time.Duration { return time.Since(start) }

func (Real) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time { return r.t.C }
func (r realTimer) Stop() bool          { return r.t.Stop() }

var _ Clock = Real{}
