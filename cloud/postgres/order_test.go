package postgres

import (
	"context"
	"reflect"
	"strings"
	stdsync "sync"
	"testing"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
	"github.com/storeprint/storeprint/sync"
)

func newOrder(id string) *storeprint.Order {
	return &storeprint.Order{OrderID: id, Table: "T1", Items: []storeprint.Item{
		{Name: "宫保鸡丁", Qty: 1, Station: "hot"},
		{Name: "Beer", Qty: 2, Station: "bar"},
	}}
}

func TestOrderService_CreateOrder(t *testing.T) {
	t.Parallel()
	f := setup(t)
	gw, _ := f.mustStore(t, "acme", "s1")
	f.mustStore(t, "globex", "g1")
	ctx := tenantCtx("acme")

	t.Run("OK", func(t *testing.T) {
		res, created, err := f.orders.CreateOrder(ctx, "s1", newOrder("d1"))
		if err != nil || !created {
			t.Fatalf("got created %v err %v, want true nil", created, err)
		}
		want := []*cloud.OrderTask{
			{TaskNo: "order_d1_station_bar", Station: "bar", Status: cloud.StatusPendingDelivery},
			{TaskNo: "order_d1_station_hot", Station: "hot", Status: cloud.StatusPendingDelivery},
		}
		if !reflect.DeepEqual(res.Tasks, want) {
			t.Fatalf("got tasks %+v, want %+v", res.Tasks, want)
		}
		task, err := f.tasks.FindTask(ctx, "s1", "order_d1_station_hot")
		if err != nil || task.Status != cloud.StatusPendingDelivery || task.Source != "cloud" {
			t.Fatalf("got task %+v err %v, want pending_delivery from the cloud", task, err)
		}
		cmds, err := f.commands.Downstream(context.Background(), "s1", 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(cmds) != 1 || cmds[0].Seq != 1 || cmds[0].Kind != storeprint.CommandOrder || cmds[0].Order == nil ||
			cmds[0].Order.Digest() != newOrder("d1").Digest() {
			t.Fatalf("got downstream %+v, want the order at seq 1", cmds)
		}
	})
	t.Run("Replay", func(t *testing.T) {
		res, created, err := f.orders.CreateOrder(ctx, "s1", newOrder("d1"))
		if err != nil || created || len(res.Tasks) != 2 {
			t.Fatalf("got %+v created %v err %v, want the same tasks, false, nil", res, created, err)
		}
		if n := f.count(t, `SELECT count(*) FROM downstream WHERE store_id = 's1'`); n != 1 {
			t.Fatalf("got %d downstream rows, want 1", n)
		}
	})
	t.Run("ErrConflict", func(t *testing.T) {
		o := newOrder("d1")
		o.Items[0].Qty = 3
		_, _, err := f.orders.CreateOrder(ctx, "s1", o)
		wantCode(t, err, storeprint.ECONFLICT)
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		o := newOrder("d2")
		o.Items = nil
		_, _, err := f.orders.CreateOrder(ctx, "s1", o)
		wantCode(t, err, storeprint.EINVALID)
		if storeprint.ErrorMessage(err) != "items must not be empty" {
			t.Fatalf("got message %q", storeprint.ErrorMessage(err))
		}
	})
	t.Run("ErrUnknownStore", func(t *testing.T) {
		_, _, err := f.orders.CreateOrder(adminCtx, "nowhere", newOrder("d3"))
		wantCode(t, err, storeprint.ENOTFOUND)
	})
	t.Run("ErrOtherTenant", func(t *testing.T) {
		_, _, err := f.orders.CreateOrder(tenantCtx("globex"), "s1", newOrder("d4"))
		wantCode(t, err, storeprint.ENOTFOUND)
		_, _, err = f.orders.CreateOrder(tenantCtx("globex"), "s1", newOrder("d1")) // exists, not theirs
		wantCode(t, err, storeprint.ENOTFOUND)
		if n := f.count(t, `SELECT count(*) FROM cloud_orders WHERE order_id = 'd4'`); n != 0 {
			t.Fatalf("got %d orders, want 0", n)
		}
	})
	t.Run("ErrTaskOfPOS", func(t *testing.T) {
		// The store's POS printed order p1 first; the same order_id from
		// the cloud would reuse its task_no.
		if _, err := f.ingestEvents(context.Background(), gw.ID, "s1", []sync.Event{taskEvent(1, "order_p1_station_hot", 1, "queued")}); err != nil {
			t.Fatal(err)
		}
		_, _, err := f.orders.CreateOrder(ctx, "s1", newOrder("p1"))
		wantCode(t, err, storeprint.ECONFLICT)
		if n := f.count(t, `SELECT count(*) FROM cloud_orders WHERE order_id = 'p1'`); n != 0 {
			t.Fatalf("got %d orders, want 0: nothing written", n)
		}
		if n := f.count(t, `SELECT count(*) FROM print_tasks WHERE task_no = 'order_p1_station_bar'`); n != 0 {
			t.Fatalf("got %d bar tasks, want 0: nothing written", n)
		}
	})
	t.Run("ErrUnknownStation", func(t *testing.T) {
		// Once the gateway has reported its printers, a station none of
		// them serves is refused at once, named; before, the order waits
		// for the gateway to decide (OK above).
		if err := f.gateways.UpdatePrinters(context.Background(), "s1", gw.ID, []*cloud.Printer{
			{ID: "hot-1", Status: storeprint.PrinterReady, Stations: []string{"hot"}},
			{ID: "pass-1", Status: storeprint.PrinterReady, Stations: []string{"pass"}},
		}); err != nil {
			t.Fatal(err)
		}
		_, _, err := f.orders.CreateOrder(ctx, "s1", newOrder("d5"))
		wantCode(t, err, storeprint.EUNPROCESSABLE)
		if msg := storeprint.ErrorMessage(err); !strings.Contains(msg, `"bar"`) || strings.Contains(msg, `"hot"`) {
			t.Fatalf("got message %q, want it to name the station bar", msg)
		}
		if n := f.count(t, `SELECT count(*) FROM cloud_orders WHERE order_id = 'd5'`) + f.count(t, `SELECT count(*) FROM print_tasks WHERE order_id = 'd5'`); n != 0 {
			t.Fatalf("got %d rows of order d5, want nothing written", n)
		}
		o := newOrder("d6")
		o.Items[1].Station = "pass"
		if _, created, err := f.orders.CreateOrder(ctx, "s1", o); err != nil || !created {
			t.Fatalf("an order for reported stations: got created %v err %v", created, err)
		}
		// A replay of an order accepted before stays a replay.
		if _, created, err := f.orders.CreateOrder(ctx, "s1", newOrder("d1")); err != nil || created {
			t.Fatalf("replay of d1: got created %v err %v, want a replay", created, err)
		}
		// The gateway is replaced by CloudPRNT printers the cloud drives:
		// each serves its stations, or every station when it names none.
		if _, err := f.gateways.RevokeGateway(adminCtx, gw.ID, cloud.Note{Reason: "the store prints from the cloud now"}); err != nil {
			t.Fatal(err)
		}
		cp := NewCloudPRNTService(f.db)
		if _, err := cp.CreateCloudPRNTPrinter(adminCtx, &cloud.CloudPRNTPrinter{StoreID: "s1", PrinterID: "bar-1", MAC: "00:11:62:00:00:01", Stations: []string{"bar"}}, cloud.Note{Reason: "bar printer"}); err != nil {
			t.Fatal(err)
		}
		if _, created, err := f.orders.CreateOrder(ctx, "s1", newOrder("d8")); err != nil || !created {
			t.Fatalf("an order for hot and the CloudPRNT printer's bar: got created %v err %v", created, err)
		}
		o = newOrder("d9")
		o.Items[1].Station = "grill"
		_, _, err = f.orders.CreateOrder(ctx, "s1", o)
		wantCode(t, err, storeprint.EUNPROCESSABLE)
		if _, err := cp.CreateCloudPRNTPrinter(adminCtx, &cloud.CloudPRNTPrinter{StoreID: "s1", PrinterID: "all-1", MAC: "00:11:62:00:00:02"}, cloud.Note{Reason: "prints everything"}); err != nil {
			t.Fatal(err)
		}
		if _, created, err := f.orders.CreateOrder(ctx, "s1", o); err != nil || !created {
			t.Fatalf("an order for grill with a CloudPRNT printer of every station: got created %v err %v", created, err)
		}
	})
}

// TestOrderService_CreateOrder_Concurrent sends the same order from 20
// clients at once: one creates it, the others get the same answer, and
// the database holds one of each row.
func TestOrderService_CreateOrder_Concurrent(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.mustStore(t, "acme", "s1")
	const clients = 20
	type result struct {
		res     *cloud.OrderResult
		created bool
		err     error
	}
	results := make([]result, clients)
	start := make(chan struct{})
	var wg stdsync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			res, created, err := f.orders.CreateOrder(tenantCtx("acme"), "s1", newOrder("race"))
			results[i] = result{res, created, err}
		}()
	}
	close(start)
	wg.Wait()
	created := 0
	for i, r := range results {
		if r.err != nil {
			t.Fatalf("client %d: %v", i, r.err)
		}
		if r.created {
			created++
		}
		if !reflect.DeepEqual(r.res, results[0].res) {
			t.Fatalf("client %d got %+v, want %+v", i, r.res, results[0].res)
		}
	}
	if created != 1 {
		t.Fatalf("got %d creations, want exactly 1", created)
	}
	for _, q := range []string{
		`SELECT count(*) FROM cloud_orders WHERE order_id = 'race'`,
		`SELECT count(*) FROM print_tasks WHERE task_no = 'order_race_station_hot'`,
		`SELECT count(*) FROM print_tasks WHERE task_no = 'order_race_station_bar'`,
		`SELECT count(*) FROM downstream WHERE command_id = 'order:race'`,
	} {
		if n := f.count(t, q); n != 1 {
			t.Errorf("%s: got %d, want 1", q, n)
		}
	}
	if n := f.count(t, `SELECT last_seq FROM downstream_cursors WHERE store_id = 's1'`); n != 1 {
		t.Errorf("got downstream last_seq %d, want 1: no seq is skipped", n)
	}
}

func TestOrderService_FindOrder(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.mustStore(t, "acme", "s1")
	f.mustStore(t, "globex", "g1")
	ctx := tenantCtx("acme")
	o := newOrder("d1")
	o.Note = "no peanuts"
	o.Items[0].Note = "mild"
	if _, _, err := f.orders.CreateOrder(ctx, "s1", o); err != nil {
		t.Fatal(err)
	}

	t.Run("OK", func(t *testing.T) {
		got, err := f.orders.FindOrder(ctx, "s1", "d1")
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, o) || got.Digest() != o.Digest() {
			t.Fatalf("got %+v, want %+v", got, o)
		}
		// Posted again, it is a replay.
		if _, created, err := f.orders.CreateOrder(ctx, "s1", got); err != nil || created {
			t.Fatalf("posting the order found: created %v err %v, want a replay", created, err)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		_, err := f.orders.FindOrder(ctx, "s1", "d2")
		wantCode(t, err, storeprint.ENOTFOUND)
		_, err = f.orders.FindOrder(adminCtx, "nowhere", "d1")
		wantCode(t, err, storeprint.ENOTFOUND)
	})
	t.Run("ErrOtherTenant", func(t *testing.T) {
		_, err := f.orders.FindOrder(tenantCtx("globex"), "s1", "d1")
		wantCode(t, err, storeprint.ENOTFOUND)
	})
	t.Run("ErrNoActor", func(t *testing.T) {
		_, err := f.orders.FindOrder(context.Background(), "s1", "d1")
		wantCode(t, err, storeprint.EUNAUTHORIZED)
	})
}
