package gatewaytest

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storeprint/storeprint/internal/clock"
	"github.com/storeprint/storeprint/internal/testwatch"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

// TaskJSON is a task as the POS API shows it.
type TaskJSON struct {
	TaskNo     string `json:"task_no"`
	Status     string `json:"status"`
	PrinterID  string `json:"printer_id"`
	Attempt    int    `json:"attempt"`
	LastError  string `json:"last_error"`
	Reason     string `json:"reason"`
	BackupFrom string `json:"backup_from"`
}

// OrderJSON is an order as the POS API answers it.
type OrderJSON struct {
	OrderID string `json:"order_id"`
	Tasks   []struct {
		TaskNo    string `json:"task_no"`
		Station   string `json:"station"`
		PrinterID string `json:"printer_id"`
		Status    string `json:"status"`
	} `json:"tasks"`
}

// PrinterJSON is a printer as GET /v1/printers shows it.
type PrinterJSON struct {
	ID        string   `json:"id"`
	Status    string   `json:"status"`
	Stations  []string `json:"stations"`
	Backup    string   `json:"backup"`
	Queue     int      `json:"queue"`
	InTrouble bool     `json:"in_trouble"`
	NoBackup  bool     `json:"no_backup_ready"`
	Word      string   `json:"word"`
	Failover  *struct {
		Active       bool   `json:"active"`
		Backup       string `json:"backup"`
		Acknowledged bool   `json:"acknowledged"`
	} `json:"failover"`
}

// Order is the body of POST /v1/orders: the order id at table A1 with one
// item for each station, in that order.
func Order(id string, stations ...string) map[string]any {
	var items []map[string]any
	for i, s := range stations {
		items = append(items, map[string]any{"name": fmt.Sprintf("宫保鸡丁 %d", i), "qty": i + 1, "station": s, "note": "少辣"})
	}
	return map[string]any{"order_id": id, "table": "A1", "items": items}
}

// Staff is the operator and reason of a person's action (a reprint, a
// failover acknowledged).
var Staff = map[string]string{"operator": "amy", "reason": "checked at the pass"}

// GetTask returns the task, failing the test unless it is answered 200.
func GetTask(t testing.TB, base, taskNo string) TaskJSON {
	t.Helper()
	var tj TaskJSON
	if code := Call(t, "GET", base+"/v1/tasks/"+taskNo, nil, &tj); code != 200 {
		t.Fatalf("GET task %s: status %d", taskNo, code)
	}
	return tj
}

// GetPrinter returns the printer as GET /v1/printers lists it, failing the
// test if it is not listed.
func GetPrinter(t testing.TB, base, id string) PrinterJSON {
	t.Helper()
	var ps []PrinterJSON
	if code := Call(t, "GET", base+"/v1/printers", nil, &ps); code != 200 {
		t.Fatalf("GET /v1/printers: %d", code)
	}
	for _, p := range ps {
		if p.ID == id {
			return p
		}
	}
	t.Fatalf("printer %s not listed", id)
	return PrinterJSON{}
}

// WaitUntil waits for cond to hold, checking it again every time the
// gateway at base says something changed (testwatch.Until), failing after
// timeout with cond's last word.
func WaitUntil(t testing.TB, base string, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	testwatch.Until(t, base, Token, timeout, cond)
}

// WaitStatus waits until the task reaches status, failing after timeout.
func WaitStatus(t testing.TB, base, taskNo, status string, timeout time.Duration) TaskJSON {
	t.Helper()
	var tj TaskJSON
	WaitUntil(t, base, timeout, func() (bool, string) {
		tj = GetTask(t, base, taskNo)
		return tj.Status == status, fmt.Sprintf("task %s is %s (last error %q), want %s", taskNo, tj.Status, tj.LastError, status)
	})
	return tj
}

// Settle waits until no task is queued, printing or waiting to retry, and
// returns every task.
func Settle(t testing.TB, base string, timeout time.Duration) []TaskJSON {
	t.Helper()
	var all []TaskJSON
	WaitUntil(t, base, timeout, func() (bool, string) {
		all = nil
		Call(t, "GET", base+"/v1/tasks?limit=100000", nil, &all)
		open := 0
		for _, tj := range all {
			switch tj.Status {
			case "queued", "printing", "retry_wait":
				open++
			}
		}
		return open == 0, fmt.Sprintf("%d tasks still open", open)
	})
	return all
}

// WaitPrinter waits until ok holds for the printer, failing after timeout.
func WaitPrinter(t testing.TB, base, id string, timeout time.Duration, ok func(PrinterJSON) bool) PrinterJSON {
	t.Helper()
	var p PrinterJSON
	WaitUntil(t, base, timeout, func() (bool, string) {
		p = GetPrinter(t, base, id)
		return ok(p), fmt.Sprintf("printer %s is %+v, not as wanted", id, p)
	})
	return p
}

// Paper is a simulated printer whose paper a test reads: a Sim, or the
// simulator behind any other driver (printertest).
type Paper interface {
	Printed() []printersim.Ticket
	WaitPrinted(ctx context.Context, n int) ([]printersim.Ticket, error)
}

// WaitPrinted waits for n tickets on the simulator's paper and returns
// them, failing after timeout.
func WaitPrinted(t testing.TB, p Paper, n int, timeout time.Duration) []printersim.Ticket {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	got, err := p.WaitPrinted(ctx, n)
	if err != nil {
		t.Fatalf("waiting for %d tickets: got %d: %v", n, len(p.Printed()), err)
	}
	return got
}

// CountPaper counts the tickets of the task among tickets.
func CountPaper(tickets []printersim.Ticket, taskNo string) int {
	n := 0
	for _, tk := range tickets {
		if tk.TaskNo == taskNo {
			n++
		}
	}
	return n
}

// MovingClock is the wall clock moved forward by hand: time passes as
// usual for the dispatcher, and a test can jump past a pairing code's
// ten minutes without waiting for them.
type MovingClock struct {
	clock.Real
	ahead atomic.Int64
}

// Now is the wall clock's time plus every Add so far.
func (c *MovingClock) Now() time.Time { return time.Now().Add(time.Duration(c.ahead.Load())) }

// Add moves the clock forward by d.
func (c *MovingClock) Add(d time.Duration) { c.ahead.Add(int64(d)) }
