package postgres

import (
	"context"
	"testing"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
	"github.com/storeprint/storeprint/sync"
)

func TestCommandService_Submit(t *testing.T) {
	t.Parallel()
	f := setup(t)
	gw, _ := f.mustStore(t, "acme", "s1")
	f.mustStore(t, "globex", "g1")
	ctx := context.Background()
	if _, err := f.ingestEvents(ctx, gw.ID, "s1", []sync.Event{
		taskEvent(1, "order_f_station_hot", 5, "failed"),
		taskEvent(2, "order_d_station_hot", 3, "done"),
	}); err != nil {
		t.Fatal(err)
	}
	if err := f.gateways.UpdatePrinters(ctx, "s1", gw.ID, []*cloud.Printer{
		{ID: "hot-1", Status: storeprint.PrinterOffline, Stations: []string{"hot"}, Backup: "pass-1", Failover: true},
		{ID: "pass-1", Status: storeprint.PrinterReady},
	}); err != nil {
		t.Fatal(err)
	}
	acme := tenantCtx("acme")

	t.Run("Retry", func(t *testing.T) {
		c, created, err := f.commands.Submit(acme, "s1", &cloud.CommandRequest{
			Kind: storeprint.CommandRetry, TaskNo: "order_f_station_hot", Note: cloud.Note{Reason: "paper loaded", Operator: "Wang"},
		})
		if err != nil || !created {
			t.Fatalf("got created %v err %v, want true nil", created, err)
		}
		if c.Seq != 1 || c.Kind != storeprint.CommandRetry || c.CreatedBy != "tenant:acme/token:test" {
			t.Fatalf("got %+v", c)
		}
		if n := f.count(t, `SELECT count(*) FROM audit_events WHERE action = $1 AND operator = 'Wang' AND reason = 'paper loaded'
			AND before->>'status' = 'failed' AND (after->>'seq')::int = 1`, storeprint.ActionCloudRetry); n != 1 {
			t.Fatalf("got %d retry audit events, want 1 with before and after", n)
		}
	})
	t.Run("Reprint", func(t *testing.T) {
		c, _, err := f.commands.Submit(adminCtx, "s1", &cloud.CommandRequest{
			ID: "rp-1", Kind: storeprint.CommandReprint, TaskNo: "order_d_station_hot", Note: cloud.Note{Reason: "customer lost it"},
		})
		if err != nil || c.Seq != 2 {
			t.Fatalf("got %+v %v, want seq 2", c, err)
		}
		again, created, err := f.commands.Submit(adminCtx, "s1", &cloud.CommandRequest{
			ID: "rp-1", Kind: storeprint.CommandReprint, TaskNo: "order_d_station_hot",
		})
		if err != nil || created || again.Seq != 2 {
			t.Fatalf("replay: got %+v created %v err %v, want seq 2, false, nil", again, created, err)
		}
		_, _, err = f.commands.Submit(adminCtx, "s1", &cloud.CommandRequest{ID: "rp-1", Kind: storeprint.CommandRetry, TaskNo: "order_f_station_hot"})
		wantCode(t, err, storeprint.ECONFLICT)
		if n := f.count(t, `SELECT count(*) FROM audit_events WHERE action = $1`, storeprint.ActionCloudReprint); n != 1 {
			t.Fatalf("got %d reprint audit events, want 1", n)
		}
	})
	t.Run("FailoverAck", func(t *testing.T) {
		c, _, err := f.commands.Submit(acme, "s1", &cloud.CommandRequest{Kind: storeprint.CommandFailoverAck, PrinterID: "hot-1"})
		if err != nil || c.Seq != 3 || c.PrinterID != "hot-1" {
			t.Fatalf("got %+v %v", c, err)
		}
		if n := f.count(t, `SELECT count(*) FROM audit_events WHERE action = $1 AND before->>'failover' = 'true'`, storeprint.ActionCloudFailoverAck); n != 1 {
			t.Fatalf("got %d failover audit events, want 1", n)
		}
		_, _, err = f.commands.Submit(acme, "s1", &cloud.CommandRequest{Kind: storeprint.CommandFailoverAck, PrinterID: "pass-1"})
		wantCode(t, err, storeprint.ECONFLICT)
	})
	t.Run("ErrRetryDone", func(t *testing.T) {
		_, _, err := f.commands.Submit(acme, "s1", &cloud.CommandRequest{Kind: storeprint.CommandRetry, TaskNo: "order_d_station_hot"})
		wantCode(t, err, storeprint.ECONFLICT)
	})
	t.Run("ErrUnknownTask", func(t *testing.T) {
		_, _, err := f.commands.Submit(acme, "s1", &cloud.CommandRequest{Kind: storeprint.CommandReprint, TaskNo: "nope"})
		wantCode(t, err, storeprint.ENOTFOUND)
	})
	t.Run("ErrOtherTenant", func(t *testing.T) {
		_, _, err := f.commands.Submit(tenantCtx("globex"), "s1", &cloud.CommandRequest{Kind: storeprint.CommandRetry, TaskNo: "order_f_station_hot"})
		wantCode(t, err, storeprint.ENOTFOUND)
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		_, _, err := f.commands.Submit(acme, "s1", &cloud.CommandRequest{Kind: "explode"})
		wantCode(t, err, storeprint.EINVALID)
	})
	t.Run("NothingWrittenOnError", func(t *testing.T) {
		if n := f.count(t, `SELECT last_seq FROM downstream_cursors WHERE store_id = 's1'`); n != 3 {
			t.Fatalf("got last_seq %d, want 3: refused commands allocate no seq", n)
		}
	})
}

func TestCommandService_Downstream(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.mustStore(t, "acme", "s1")
	ctx := context.Background()
	for _, id := range []string{"o1", "o2", "o3"} {
		if _, _, err := f.orders.CreateOrder(adminCtx, "s1", newOrder(id)); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("After", func(t *testing.T) {
		got, err := f.commands.Downstream(ctx, "s1", 1, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0].Seq != 2 || got[0].Order.OrderID != "o2" || got[1].Seq != 3 {
			t.Fatalf("got %+v, want o2 and o3", got)
		}
	})
	t.Run("Ack", func(t *testing.T) {
		if err := f.commands.AckDownstream(ctx, "s1", 2); err != nil {
			t.Fatal(err)
		}
		if err := f.commands.AckDownstream(ctx, "s1", 1); err != nil {
			t.Fatal(err)
		}
		if n := f.count(t, `SELECT acked_seq FROM downstream_cursors WHERE store_id = 's1'`); n != 2 {
			t.Fatalf("got acked %d, want 2: the ack never moves back", n)
		}
		wantCode(t, f.commands.AckDownstream(ctx, "s1", 9), storeprint.EINVALID)
	})
}
