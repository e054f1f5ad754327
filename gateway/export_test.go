package gateway

import "context"

// StaleComplete and StaleRelease let tests act as a worker holding an old
// lease of a task.
func (g *Gateway) StaleComplete(ctx context.Context, taskNo string, attempt int, token string) error {
	return g.complete(ctx, &lease{taskNo: taskNo, attempt: attempt, token: token})
}

func (g *Gateway) StaleRelease(ctx context.Context, taskNo string, attempt int, token string) error {
	return g.release(ctx, &lease{taskNo: taskNo, attempt: attempt, token: token}, context.Canceled, true)
}
