package gateway

import (
	"context"
	"strings"

	"github.com/storeprint/storeprint"
)

// OrderResult is the answer to an accepted (or replayed) order.
type OrderResult struct {
	OrderID string       `json:"order_id"`
	Tasks   []TaskResult `json:"tasks"`
}

// TaskResult is one task of an order as the POS sees it.
type TaskResult struct {
	TaskNo    string            `json:"task_no"`
	Station   string            `json:"station"`
	PrinterID string            `json:"printer_id"`
	Status    storeprint.Status `json:"status"`
}

// AcceptOrder validates an order, splits it into one task per station and
// stores the tasks durably before returning. The same order again with the
// same content returns the stored tasks with created false; different
// content for the same order_id is ECONFLICT. The returned tasks show the
// state they were created in, so a replay answers the same body.
func (g *Gateway) AcceptOrder(ctx context.Context, o *storeprint.Order, source storeprint.Source) (res *OrderResult, created bool, err error) {
	if err := o.Validate(); err != nil {
		return nil, false, err
	}
	for i, it := range o.Items {
		if g.stations[it.Station] == nil {
			return nil, false, storeprint.Errorf(storeprint.EINVALID, "items[%d].station %q is not a station of this store (its stations: %s)", i, it.Station, g.stationNames())
		}
	}
	stations := o.Stations()
	digest := o.Digest()
	now := g.now()
	wake := map[string]bool{}
	err = g.store.Update(ctx, func(tx Tx) error {
		created = false
		res = &OrderResult{OrderID: o.OrderID, Tasks: []TaskResult{}}
		rec, err := tx.Order(o.OrderID)
		switch {
		case err == nil:
			if rec.Digest != digest {
				return storeprint.Errorf(storeprint.ECONFLICT, "order %q was already accepted with different content", o.OrderID)
			}
			for i, no := range rec.TaskNos {
				t, err := tx.Task(no)
				if isNotFound(err) && i < len(rec.Printers) {
					// Printed long ago and deleted by retention: the
					// record remembers it.
					station := strings.TrimPrefix(no, storeprint.TaskNo(o.OrderID, ""))
					res.Tasks = append(res.Tasks, TaskResult{TaskNo: no, Station: station, PrinterID: rec.Printers[i], Status: storeprint.StatusQueued})
					continue
				}
				if err != nil {
					return err
				}
				res.Tasks = append(res.Tasks, TaskResult{TaskNo: t.TaskNo, Station: t.Station, PrinterID: t.firstPrinter(), Status: storeprint.StatusQueued})
			}
			// A replay prints nothing; HQ counts the duplicates prevented.
			return tx.AppendAudit(&AuditEntry{
				Action: storeprint.ActionDuplicatePrevented, Operator: string(source), TaskNo: strings.Join(rec.TaskNos, ","),
				Reason: "order " + o.OrderID + " sent again with the same content",
			})
		case !isNotFound(err):
			return err
		}
		rec = &OrderRecord{OrderID: o.OrderID, Digest: digest, Source: source, CreatedAt: now}
		for _, s := range stations {
			no := storeprint.TaskNo(o.OrderID, s)
			if _, err := tx.Task(no); err == nil {
				return storeprint.Errorf(storeprint.ECONFLICT, "task %q already exists", no)
			} else if !isNotFound(err) {
				return err
			}
			printer, from := g.route(s)
			t := &Task{
				TaskNo: no, OrderID: o.OrderID, Station: s, PrinterID: printer, BackupFrom: from,
				Status: storeprint.StatusQueued, Source: source, Table: o.Table, Note: o.Note,
				Items: o.ItemsFor(s), Seq: tx.NextTaskSeq(), CreatedAt: now, NextAt: now,
				FirstPrinter: printer,
			}
			if err := tx.PutTask(t); err != nil {
				return err
			}
			rec.TaskNos = append(rec.TaskNos, no)
			rec.Printers = append(rec.Printers, printer)
			res.Tasks = append(res.Tasks, TaskResult{TaskNo: no, Station: s, PrinterID: printer, Status: storeprint.StatusQueued})
			wake[printer] = true
		}
		created = true
		return tx.PutOrder(rec)
	})
	if err != nil {
		return nil, false, err
	}
	for p := range wake {
		g.wakeForWork(p)
	}
	return res, created, nil
}

func (t *Task) firstPrinter() string {
	if t.FirstPrinter != "" {
		return t.FirstPrinter
	}
	return t.PrinterID
}

func (g *Gateway) stationNames() string {
	s := ""
	for i, st := range g.cfg.Stations {
		if i > 0 {
			s += ", "
		}
		s += st.Name
	}
	return s
}
