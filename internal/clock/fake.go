package clock

import (
	"context"
	"sort"
	"sync"
	"time"
)

// Fake is a clock for tests. Its time moves only when told: Advance moves
// both readings and fires the timers that fall due; StepWall moves the wall
// clock alone, as NTP or a person would. Waiting on signals instead of
// sleeping, a test calls WaitTimers to learn that the code under test is
// parked on a timer before it advances the clock.
type Fake struct {
	mu      sync.Mutex
	wall    time.Time
	mono    time.Duration
	timers  []*fakeTimer
	changed chan struct{} // closed and replaced when the set of timers changes
}

var _ Clock = (*Fake)(nil)

// NewFake returns a fake clock whose wall clock reads wall.
func NewFake(wall time.Time) *Fake {
	return &Fake{wall: wall, mono: time.Hour, changed: make(chan struct{})}
}

func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.wall
}

func (f *Fake) Mono() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mono
}

func (f *Fake) NewTimer(d time.Duration) Timer {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := &fakeTimer{f: f, at: f.mono + d, c: make(chan time.Time, 1)}
	if d <= 0 {
		t.c <- f.wall
		return t
	}
	f.timers = append(f.timers, t)
	f.signal()
	return t
}

// Advance moves both readings forward by d, firing every timer that falls
// due on the way, in order.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	end := f.mono + d
	sort.SliceStable(f.timers, func(i, j int) bool { return f.timers[i].at < f.timers[j].at })
	for len(f.timers) > 0 && f.timers[0].at <= end {
		t := f.timers[0]
		f.timers = f.timers[1:]
		f.wall = f.wall.Add(t.at - f.mono)
		f.mono = t.at
		select {
		case t.c <- f.wall:
		default:
		}
	}
	f.wall = f.wall.Add(end - f.mono)
	f.mono = end
	f.signal()
}

// StepWall moves the wall clock by d (back when negative) and leaves the
// monotonic reading and every timer alone.
func (f *Fake) StepWall(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.wall = f.wall.Add(d)
}

// Timers returns the number of timers waiting to fire.
func (f *Fake) Timers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.timers)
}

// Next returns how long until the next timer fires, and false when none
// waits.
func (f *Fake) Next() (time.Duration, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.timers) == 0 {
		return 0, false
	}
	next := f.timers[0].at
	for _, t := range f.timers[1:] {
		next = min(next, t.at)
	}
	return next - f.mono, true
}

// WaitTimers blocks until at least n timers wait to fire, or ctx is done.
func (f *Fake) WaitTimers(ctx context.Context, n int) error {
	for {
		f.mu.Lock()
		ok, ch := len(f.timers) >= n, f.changed
		f.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
	}
}

func (f *Fake) signal() {
	close(f.changed)
	f.changed = make(chan struct{})
}

type fakeTimer struct {
	f  *Fake
	at time.Duration
	c  chan time.Time
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

func (t *fakeTimer) Stop() bool {
	f := t.f
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, x := range f.timers {
		if x == t {
			f.timers = append(f.timers[:i], f.timers[i+1:]...)
			f.signal()
			return true
		}
	}
	return false
}
