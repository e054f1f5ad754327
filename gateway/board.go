package gateway

import (
	"context"
	"fmt"
	"time"

	"github.com/storeprint/storeprint"
)

// Board is everything the kitchen's LAN page shows, read in one snapshot.
type Board struct {
	StoreID  string                    `json:"store_id"`
	Printers []PrinterInfo             `json:"printers"`
	Displays []DisplayInfo             `json:"displays"` // kitchen screens
	Stations []StationBoard            `json:"stations"`
	Alerts   []*Task                   `json:"alerts"` // failed and attention_required tasks, oldest first
	Counts   map[storeprint.Status]int `json:"counts"`
	Storage  string                    `json:"storage_error,omitempty"`
	At       time.Time                 `json:"at"`
}

// StationBoard is one station's queue.
type StationBoard struct {
	Name       string  `json:"name"`
	Printer    string  `json:"printer"`               // where its tickets print now
	BackupFrom string  `json:"backup_from,omitempty"` // its own printer, when failed over
	Queue      []*Task `json:"queue"`                 // open tasks, oldest first
}

// maxBoardTasks bounds each list on the board.
const maxBoardTasks = 200

// Board returns the LAN page's snapshot.
func (g *Gateway) Board(ctx context.Context) (*Board, error) {
	b := &Board{StoreID: g.cfg.StoreID, At: g.now(), Alerts: []*Task{}}
	if err := g.store.Health(); err != nil {
		b.Storage = storeprint.ErrorMessage(err)
	}
	var err error
	if b.Printers, err = g.Printers(ctx); err != nil {
		return nil, err
	}
	if b.Displays, err = g.Displays(ctx); err != nil {
		return nil, err
	}
	if b.Counts, err = g.CountByStatus(ctx); err != nil {
		return nil, err
	}
	err = g.store.View(ctx, func(tx ReadTx) error {
		byStation := map[string][]*Task{}
		targets := make([]string, 0, len(g.cfg.Printers)+len(g.cfg.Displays))
		for _, pc := range g.cfg.Printers {
			targets = append(targets, pc.ID)
		}
		for _, dc := range g.cfg.Displays {
			targets = append(targets, dc.ID)
		}
		for _, id := range targets {
			open, err := tx.Open(id, maxBoardTasks)
			if err != nil {
				return err
			}
			for _, t := range open {
				byStation[t.Station] = append(byStation[t.Station], t)
			}
		}
		for _, st := range g.cfg.Stations {
			p, from := g.route(st.Name)
			q := byStation[st.Name]
			if q == nil {
				q = []*Task{}
			}
			b.Stations = append(b.Stations, StationBoard{Name: st.Name, Printer: p, BackupFrom: from, Queue: q})
		}
		for _, s := range []storeprint.Status{storeprint.StatusAttention, storeprint.StatusFailed} {
			ts, err := tx.ByStatus(s, maxBoardTasks)
			if err != nil {
				return err
			}
			b.Alerts = append(b.Alerts, ts...)
		}
		return nil
	})
	return b, err
}

// TestPage queues a test page on one printer, through the same durable,
// confirmed path as a ticket. It never moves to a backup.
func (g *Gateway) TestPage(ctx context.Context, printerID string, a Actor) (*Task, error) {
	if g.pcfg[printerID] == nil {
		return nil, storeprint.Errorf(storeprint.ENOTFOUND, "printer %q not found", printerID)
	}
	if a.Operator == "" {
		a.Operator = "staff"
	}
	if err := a.validate(); err != nil {
		return nil, err
	}
	var t *Task
	err := g.store.Update(ctx, func(tx Tx) error {
		now := g.now()
		seq := tx.NextTaskSeq()
		t = &Task{
			TaskNo: fmt.Sprintf("testpage_%s_%d", printerID, seq), OrderID: "test", PrinterID: printerID,
			FirstPrinter: printerID, Status: storeprint.StatusQueued, Source: storeprint.SourceTestPage, StaleOK: true,
			Items: []storeprint.Item{{Name: "TEST PAGE 测试页", Qty: 1, Note: "printer " + printerID + " · " + a.Operator}},
			Seq:   seq, CreatedAt: now, NextAt: now,
		}
		if err := tx.PutTask(t); err != nil {
			return err
		}
		return tx.AppendAudit(&AuditEntry{Action: storeprint.ActionTestPage, Operator: a.Operator, Reason: a.Reason, TaskNo: t.TaskNo})
	})
	if err != nil {
		return nil, err
	}
	g.wake(printerID)
	return t, nil
}
