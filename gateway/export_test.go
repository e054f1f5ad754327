package gateway

import (
	"context"
	"time"
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
