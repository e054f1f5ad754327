package http

import (
	"context"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
)

// The services the server consumes, each the few methods its handlers
// call; the gateway (package gateway) is every one of them.

// HealthService tells whether the store can take writes.
type HealthService interface {
	Health() error
}

// Changes signals the gateway's changes: Subscribe's channel receives
// after each, and Generation moves on with each.
type Changes interface {
	Subscribe() (<-chan struct{}, func())
	Generation() uint64
}

// OrderService takes the POS's orders (POST /v1/orders and /v1/orders/...).
type OrderService interface {
	AcceptOrder(ctx context.Context, o *storeprint.Order, source storeprint.Source) (res *gateway.OrderResult, created bool, err error)
	Order(ctx context.Context, orderID string) (*gateway.OrderState, error)
	Void(ctx context.Context, orderID string, a gateway.Actor) (*gateway.VoidResult, error)
}

// TaskService serves /v1/tasks and a station's stale tickets.
type TaskService interface {
	Task(ctx context.Context, taskNo string) (*gateway.Task, error)
	Tasks(ctx context.Context, status storeprint.Status, limit int) ([]*gateway.Task, error)
	TasksAfter(ctx context.Context, after string, limit int) ([]*gateway.Task, error)
	Receipts(ctx context.Context, taskNo string) ([]*gateway.Receipt, error)
	Retry(ctx context.Context, taskNo string, a gateway.Actor) (*gateway.RetryResult, error)
	Reprint(ctx context.Context, taskNo string, a gateway.Actor) (*gateway.Task, error)
	Resolve(ctx context.Context, taskNo, outcome string, a gateway.Actor) (*gateway.Task, error)
	PrintStale(ctx context.Context, station string, a gateway.Actor) ([]*gateway.Task, error)
}

// PrinterService serves /v1/printers.
type PrinterService interface {
	Printers(ctx context.Context) ([]gateway.PrinterInfo, error)
	AckFailover(ctx context.Context, id, operator, reason string) (*gateway.Failover, error)
	Failback(ctx context.Context, id, operator, reason string, force bool) (*gateway.Failover, error)
	TestPage(ctx context.Context, printerID string, a gateway.Actor) (*gateway.Task, error)
}

// AuditService serves GET /v1/audit.
type AuditService interface {
	Audit(ctx context.Context, after uint64, limit int) ([]*gateway.AuditEntry, error)
}

// DeviceService knows the paired devices: it authenticates their tokens
// and serves pairing and /v1/devices.
type DeviceService interface {
	AuthenticateDevice(ctx context.Context, token string) (*gateway.Device, error)
	TouchDevice(ctx context.Context, deviceID string, at time.Time) error
	Device(ctx context.Context, deviceID string) (*gateway.Device, error)
	Devices(ctx context.Context) ([]*gateway.Device, error)
	RevokeDevice(ctx context.Context, deviceID string, a gateway.Actor) (*gateway.Device, error)
	AddDisplayDevice(ctx context.Context, role storeprint.Role, name, display string, a gateway.Actor) (*gateway.Device, string, error)
	PairingDisplay(role storeprint.Role, display, name string) (string, error)
	AuditPairing(ctx context.Context, c *gateway.PairingCode, a gateway.Actor) error
}

// BoardService serves the LAN page's board (GET /v1/board and its live
// updates).
type BoardService interface {
	Board(ctx context.Context) (*gateway.Board, error)
	// Waited is how long a task has waited since it was accepted.
	Waited(t *gateway.Task) time.Duration
}

// DisplayService serves the kitchen displays.
type DisplayService interface {
	Displays(ctx context.Context) ([]gateway.DisplayInfo, error)
	DisplayInfo(id string) (gateway.DisplayInfo, error)
	DisplayHeard(ctx context.Context, id string) error
	Shown(ctx context.Context, id string, taskNos []string) (int, error)
	ShowTickets(ctx context.Context, id string) (*gateway.DisplayTickets, error)
	Bump(ctx context.Context, taskNo string, a gateway.DisplayAction) (*gateway.Task, error)
	Recall(ctx context.Context, taskNo string, a gateway.DisplayAction) (*gateway.Task, error)
	Waited(t *gateway.Task) time.Duration
}
