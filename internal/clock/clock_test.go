package clock_test

import (
	"context"
	"testing"
	"time"

	"github.com/storeprint/storeprint/internal/clock"
)

func TestFake_Advance(t *testing.T) {
	t.Parallel()
	wall := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	f := clock.NewFake(wall)
	a, b := f.NewTimer(2*time.Second), f.NewTimer(time.Second)
	f.Advance(time.Second)
	select {
	case got := <-b.C():
		if want := wall.Add(time.Second); !got.Equal(want) {
			t.Fatalf("got %v, want %v", got, want)
		}
	default:
		t.Fatal("the 1s timer did not fire after 1s")
	}
	select {
	case <-a.C():
		t.Fatal("the 2s timer fired after 1s")
	default:
	}
	f.Advance(time.Second)
	<-a.C()
	if got := f.Timers(); got != 0 {
		t.Fatalf("got %d timers waiting, want 0", got)
	}
}

func TestFake_StepWall(t *testing.T) {
	t.Parallel()
	wall := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	f := clock.NewFake(wall)
	mono := f.Mono()
	tm := f.NewTimer(time.Second)
	f.StepWall(-10 * time.Minute)
	if got, want := f.Now(), wall.Add(-10*time.Minute); !got.Equal(want) {
		t.Fatalf("got wall %v, want %v", got, want)
	}
	if f.Mono() != mono {
		t.Fatal("a wall step moved the monotonic reading")
	}
	f.StepWall(time.Hour)
	select {
	case <-tm.C():
		t.Fatal("a wall step fired a timer")
	default:
	}
	f.Advance(time.Second)
	<-tm.C()
}

func TestFake_WaitTimers(t *testing.T) {
	t.Parallel()
	f := clock.NewFake(time.Now())
	done := make(chan bool)
	go func() { done <- clock.Sleep(context.Background(), f, time.Minute) }()
	if err := f.WaitTimers(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	if d, ok := f.Next(); !ok || d != time.Minute {
		t.Fatalf("got next %v %v, want 1m", d, ok)
	}
	f.Advance(time.Minute)
	if !<-done {
		t.Fatal("Sleep returned false after its time passed")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := f.WaitTimers(ctx, 5); err == nil {
		t.Fatal("WaitTimers returned nil for a cancelled context with no timers")
	}
}

func TestFake_Stop(t *testing.T) {
	t.Parallel()
	f := clock.NewFake(time.Now())
	tm := f.NewTimer(time.Second)
	if !tm.Stop() {
		t.Fatal("Stop of a waiting timer returned false")
	}
	f.Advance(time.Hour)
	select {
	case <-tm.C():
		t.Fatal("a stopped timer fired")
	default:
	}
	if tm.Stop() {
		t.Fatal("Stop of a stopped timer returned true")
	}
}
