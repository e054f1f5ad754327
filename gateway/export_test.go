package gateway

import (
	"context"
	"runtime"
	"time"

	"github.com/storeprint/storeprint/internal/clock"
)

// StaleComplete and StaleRelease let tests act as a worker holding an old
// lease of a task.
func (g *Gateway) StaleComplete(ctx context.Context, taskNo string, attempt int, token string) error {
	return g.complete(ctx, &lease{taskNo: taskNo, attempt: attempt, token: token})
}

func (g *Gateway) StaleRelease(ctx context.Context, taskNo string, attempt int, token string) error {
	return g.release(ctx, &lease{taskNo: taskNo, attempt: attempt, token: token}, context.Canceled, true)
}

// Boot and Step drive the gateway without its goroutines, one step of one
// printer's queue at a time, for the model test: Boot does what Run does
// before it starts the workers, Step one pass of a worker's loop (it
// returns how long the worker would wait).
func (g *Gateway) Boot(ctx context.Context) error { return g.boot(ctx) }

func (g *Gateway) Step(ctx context.Context, printerID string) time.Duration {
	return g.workers[printerID].step(ctx)
}

// CheckDisplays runs one pass of the display watcher: silent screens fail
// over.
func (g *Gateway) CheckDisplays(ctx context.Context) { g.checkDisplays(ctx) }

// TimesHeld is the heap the gateway's in-memory times hold for n tasks
// accepted by this process and waiting (the gateway keeps them for as
// long as its tasks wait), in bytes a task.
func TimesHeld(n int) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s := newTimes(clock.NewFake(time.Date(2026, 12, 1, 11, 0, 0, 0, time.UTC)), time.Minute)
	for i := range n {
		s.accepted(uint64(i+1), 0)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(s)
	return float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(n)
}
