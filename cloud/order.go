package cloud

import (
	"context"

	"github.com/storeprint/storeprint"
)

// OrderResult is the answer to an order: the same shape as the POS API's.
type OrderResult struct {
	OrderID string       `json:"order_id"`
	Tasks   []*OrderTask `json:"tasks"`
}

// OrderTask is one station's ticket of an order.
type OrderTask struct {
	TaskNo    string            `json:"task_no"`
	Station   string            `json:"station"`
	PrinterID string            `json:"printer_id"` // empty: the store maps stations to printers
	Status    storeprint.Status `json:"status"`
}

// NewOrderResult returns the answer to a cloud order as accepted: one task
// per station, pending delivery to the store. A replay of the order gets
// the same answer; the task's later states are read with TaskService.
func NewOrderResult(o *storeprint.Order) *OrderResult {
	r := &OrderResult{OrderID: o.OrderID, Tasks: []*OrderTask{}}
	for _, st := range o.Stations() {
		r.Tasks = append(r.Tasks, &OrderTask{
			TaskNo:  storeprint.TaskNo(o.OrderID, st),
			Station: st,
			Status:  StatusPendingDelivery,
		})
	}
	return r
}

// OrderService accepts cloud-originated orders (delivery, online) for a
// store's gateway to print.
type OrderService interface {
	// CreateOrder validates the order (storeprint.Order.Validate) and stores
	// it with its tasks and its downstream command in one transaction. The
	// same order again reports created false and the same result; the same
	// order_id with other content is ECONFLICT, as is a task_no the store
	// already has. Once the store's gateway has reported its printers,
	// an order for a station none of them serves is EUNPROCESSABLE,
	// naming the station.
	CreateOrder(ctx context.Context, storeID string, o *storeprint.Order) (res *OrderResult, created bool, err error)

	// FindOrder returns a cloud order as it was accepted: the body to post
	// again, to the cloud or to the store's POS API, as a replay. An
	// unknown order, or one of another tenant's store, is ENOTFOUND.
	FindOrder(ctx context.Context, storeID, orderID string) (*storeprint.Order, error)
}
