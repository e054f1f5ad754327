package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
	"github.com/storeprint/storeprint/sync"
)

// bumpEvent is a bump's audit event at a time of its own.
func bumpEvent(seq uint64, id, taskNo string, at time.Time) sync.Event {
	ev := event(seq, sync.KindAudit, taskNo, sync.AuditEvent{ID: id, Action: storeprint.ActionBump, Operator: "device:dev-1",
		Reason: "bumped on display kds-hot", TaskNo: taskNo, At: at})
	ev.At = at
	return ev
}

// The time from order to bump per station, today and by hour: the first
// bump of each done task counts (a bump after a recall does not), tasks
// ordered before today do not, and a foreign store is not found.
func TestDashboardService_BumpTimes(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	gw, _ := f.mustStore(t, "acme", "a1")
	f.mustStore(t, "globex", "g1")
	ds := newDashboard(f)
	var events []sync.Event
	seq := uint64(0)
	next := func() uint64 { seq++; return seq }
	for i, took := range []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute} {
		no := "order_b" + string(rune('0'+i)) + "_station_hot"
		created := t0.Add(time.Duration(i) * time.Minute)
		events = append(events, dayTask(next(), no, "done", "", created, took), bumpEvent(next(), "b"+no, no, created.Add(took)))
	}
	// A recalled ticket bumped again an hour later: its first bump counts.
	events = append(events, bumpEvent(next(), "again", "order_b0_station_hot", t0.Add(time.Hour)))
	// Ordered yesterday.
	old := t0.Add(-13 * time.Hour)
	events = append(events, dayTask(next(), "order_old_station_hot", "done", "", old, time.Minute), bumpEvent(next(), "old", "order_old_station_hot", old.Add(time.Minute)))
	if _, err := f.ingestEvents(ctx, gw.ID, "a1", events); err != nil {
		t.Fatal(err)
	}
	since := t0.Add(-12 * time.Hour) // midnight
	got, err := ds.BumpTimes(tenantCtx("acme"), "a1", cloud.DashboardFilter{Since: since})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Stations) != 1 || got.Stations[0].Station != "hot" {
		t.Fatalf("got %+v, want station hot", got.Stations)
	}
	hot := got.Stations[0]
	if hot.Count != 3 || hot.MedianS != 120 || hot.P90S != 240 {
		t.Fatalf("got %+v, want 3 tickets, median 120 s, p90 240 s", hot.BumpStats)
	}
	if len(hot.Hours) != 1 || !hot.Hours[0].Hour.Equal(t0) || hot.Hours[0].Count != 3 {
		t.Fatalf("got hours %+v, want the 12:00 hour with 3 tickets", hot.Hours)
	}
	if _, err := ds.BumpTimes(tenantCtx("globex"), "a1", cloud.DashboardFilter{Since: since}); storeprint.ErrorCode(err) != storeprint.ENOTFOUND {
		t.Fatalf("another tenant's store: got %v, want not found", err)
	}
}
