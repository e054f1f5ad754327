package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
	"github.com/storeprint/storeprint/sync"
)

// Random batches from two gateways of a store, some sent again, with the
// first gateway's credential revoked at some point, and rows a snapshot
// writes: a task's receipts, as read, are the table's row of each step,
// else the first receipt event ingest accepted, never one it refused
// (another live gateway's task).
func TestReceiptReader_Model(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	if _, err := f.tenants.CreateTenant(adminCtx, &cloud.Tenant{ID: "acme", Name: "Acme"}, cloud.Note{}); err != nil {
		t.Fatal(err)
	}
	tasks := []string{"order_a_station_hot", "order_b_station_hot", "order_c_station_hot"}
	states := []storeprint.ReceiptState{storeprint.ReceiptPrepared, storeprint.ReceiptPrinted, storeprint.ReceiptNotSent}
	checks := 0
	rapid.Check(t, func(rt *rapid.T) {
		checks++
		storeID := fmt.Sprintf("m%d", checks)
		if _, err := f.stores.CreateStore(adminCtx, &cloud.Store{ID: storeID, TenantID: "acme", Name: storeID}, cloud.Note{}); err != nil {
			rt.Fatal(err)
		}
		var gws []string
		for range 2 {
			gw, _, err := f.gateways.CreateGateway(adminCtx, storeID, cloud.Note{Reason: "model"})
			if err != nil {
				rt.Fatal(err)
			}
			gws = append(gws, gw.ID)
		}

		type step struct {
			task    string
			attempt int
			state   storeprint.ReceiptState
		}
		type receipt struct {
			step
			mark string
			at   time.Time
		}
		var (
			sent    = [2][]sync.Event{} // each gateway's events so far, seq i+1 at i
			owner   = map[string]int{}  // task → 1 + its owner's index
			revoked bool
			table   = map[step]receipt{} // rows a snapshot wrote
			first   = map[step]receipt{} // the first accepted event of each step
			marks   int
		)
		next := func() (string, time.Time) {
			marks++
			return fmt.Sprintf("p%d", marks), t0.Add(time.Duration(marks) * time.Second)
		}
		// own is the ownership rule: whether gateway g may change task.
		own := func(g int, task string) bool {
			switch o := owner[task]; {
			case o == 0 || o == g+1:
				return true
			case o == 1 && revoked:
				owner[task] = g + 1 // taken over
				return true
			}
			return false
		}

		rt.Repeat(map[string]func(*rapid.T){
			"batch": func(rt *rapid.T) {
				g := rapid.IntRange(0, 1).Draw(rt, "gateway")
				if g == 0 && revoked {
					rt.Skip("a revoked gateway cannot ingest")
				}
				// Some of its events again, then new ones.
				again := rapid.IntRange(0, min(3, len(sent[g]))).Draw(rt, "again")
				batch := slices.Clone(sent[g][len(sent[g])-again:])
				for range rapid.IntRange(1, 6).Draw(rt, "new") {
					seq := uint64(len(sent[g]) + 1)
					task := rapid.SampledFrom(tasks).Draw(rt, "task")
					mark, at := next()
					var ev sync.Event
					if rapid.Bool().Draw(rt, "task event") {
						ev = taskEvent(seq, task, 1, "queued")
						ev.At = at
						if own(g, task) && owner[task] == 0 {
							owner[task] = g + 1
						}
					} else {
						s := step{task, rapid.IntRange(1, 2).Draw(rt, "attempt"), rapid.SampledFrom(states).Draw(rt, "state")}
						ev = event(seq, sync.KindReceipt, task, sync.ReceiptEvent{TaskNo: task, Attempt: s.attempt, State: s.state,
							PrinterID: "hot-1", ProcessID: mark, At: at})
						if _, seen := first[s]; own(g, task) && !seen {
							first[s] = receipt{s, mark, at}
						}
					}
					sent[g] = append(sent[g], ev)
					batch = append(batch, ev)
				}
				res, err := f.ingest.Ingest(ctx, gws[g], storeID, "", batch)
				if err != nil {
					rt.Fatal(err)
				}
				if res.Cursor != uint64(len(sent[g])) {
					rt.Fatalf("got cursor %d, want %d", res.Cursor, len(sent[g]))
				}
			},
			"revoke": func(rt *rapid.T) {
				if revoked {
					rt.Skip("revoked already")
				}
				if _, err := f.gateways.RevokeGateway(adminCtx, gws[0], cloud.Note{Reason: "box replaced"}); err != nil {
					rt.Fatal(err)
				}
				revoked = true
			},
			"snapshot row": func(rt *rapid.T) {
				s := step{rapid.SampledFrom(tasks).Draw(rt, "task"), rapid.IntRange(1, 2).Draw(rt, "attempt"), rapid.SampledFrom(states).Draw(rt, "state")}
				mark, at := next()
				tag, err := f.db.pool.Exec(ctx, `
					INSERT INTO receipts (store_id, task_no, attempt, state, printer_id, process_id, at, gateway_id, seq)
					VALUES ($1, $2, $3, $4, 'hot-1', $5, $6, $7, 0) ON CONFLICT DO NOTHING`,
					storeID, s.task, s.attempt, s.state, mark, at, gws[1])
				if err != nil {
					rt.Fatal(err)
				}
				if tag.RowsAffected() == 1 {
					table[s] = receipt{s, mark, at}
				}
			},
			"": func(rt *rapid.T) {
				var want []string
				for _, task := range tasks {
					var rs []receipt
					for s, r := range first {
						if s.task == task {
							if row, ok := table[s]; ok {
								r = row
							}
							rs = append(rs, r)
						}
					}
					for s, r := range table {
						if _, ok := first[s]; s.task == task && !ok {
							rs = append(rs, r)
						}
					}
					slices.SortFunc(rs, func(a, b receipt) int {
						if a.attempt != b.attempt {
							return a.attempt - b.attempt
						}
						return a.at.Compare(b.at)
					})
					for _, r := range rs {
						want = append(want, fmt.Sprintf("%s:%d:%s:%s", task, r.attempt, r.state, r.mark))
					}
				}
				got := readAll(rt, f, storeID, tasks)
				if strings.Join(got, " ") != strings.Join(want, " ") {
					rt.Fatalf("got receipts\n%v\nwant\n%v", got, want)
				}
			},
		})
	})
}

// readAll reads the receipts of a store's tasks, each as
// task_no:attempt:state:process_id.
func readAll(t interface{ Fatalf(string, ...any) }, f *fixture, storeID string, taskNos []string) []string {
	var out []string
	for i, rs := range f.readReceipts(t, storeID, taskNos) {
		for _, r := range rs {
			out = append(out, fmt.Sprintf("%s:%d:%s:%s", taskNos[i], r.Attempt, r.State, r.ProcessID))
		}
	}
	return out
}
