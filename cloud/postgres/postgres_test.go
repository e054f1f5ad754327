package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
	"github.com/storeprint/storeprint/cloud/postgres/pgtest"
	"github.com/storeprint/storeprint/sync"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// fixture is one test's database with every service on it.
type fixture struct {
	url      string
	db       *DB
	tenants  *TenantService
	stores   *StoreService
	gateways *GatewayService
	orders   *OrderService
	tasks    *TaskService
	commands *CommandService
	audits   *AuditService
	ingest   *IngestService
}

func setup(t testing.TB) *fixture {
	t.Helper()
	url := pgtest.NewDatabase(t)
	db, err := Open(context.Background(), url+"&pool_max_conns=24")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	stores := NewStoreService(db)
	stores.now = func() time.Time { return t0.Add(time.Hour) } // the events' day: their alerts are current
	return &fixture{
		url: url, db: db, tenants: NewTenantService(db), stores: stores, gateways: NewGatewayService(db),
		orders: NewOrderService(db), tasks: NewTaskService(db), commands: NewCommandService(db),
		audits: NewAuditService(db), ingest: NewIngestService(db),
	}
}

var adminCtx = cloud.NewContextWithActor(context.Background(), &cloud.Actor{Kind: cloud.ActorAdmin})

func tenantCtx(tenantID string) context.Context {
	return cloud.NewContextWithActor(context.Background(), &cloud.Actor{Kind: cloud.ActorTenant, TenantID: tenantID, TokenID: "test"})
}

// mustStore creates a tenant (if new) and a store with one gateway, and
// returns the gateway and its token.
func (f *fixture) mustStore(t testing.TB, tenantID, storeID string) (*cloud.Gateway, string) {
	t.Helper()
	if _, err := f.tenants.CreateTenant(adminCtx, &cloud.Tenant{ID: tenantID, Name: "Tenant " + tenantID}, cloud.Note{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.stores.CreateStore(adminCtx, &cloud.Store{ID: storeID, TenantID: tenantID, Name: "Store " + storeID}, cloud.Note{}); err != nil {
		t.Fatal(err)
	}
	gw, token, err := f.gateways.CreateGateway(adminCtx, storeID, cloud.Note{Reason: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return gw, token
}

// count returns a count(*) query's answer.
func (f *fixture) count(t testing.TB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := f.db.pool.QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// receipts reads the receipts of a store's tasks as the cloud's readers
// do, each as task_no:attempt:state@ its time in seconds past t0 (the
// receipts of receiptEvent are at their seq's second).
func (f *fixture) receipts(t testing.TB, storeID string, taskNos ...string) []string {
	t.Helper()
	var out []string
	for i, rs := range f.readReceipts(t, storeID, taskNos) {
		for _, r := range rs {
			out = append(out, fmt.Sprintf("%s:%d:%s@%d", taskNos[i], r.Attempt, r.State, int(r.At.Sub(t0).Seconds())))
		}
	}
	return out
}

// readReceipts reads the receipts of a store's tasks through
// receiptReader, each task's in its order.
func (f *fixture) readReceipts(t interface{ Fatalf(string, ...any) }, storeID string, taskNos []string) [][]*cloud.Receipt {
	storeIDs := make([]string, len(taskNos))
	for i := range storeIDs {
		storeIDs[i] = storeID
	}
	rr := newReceiptReader(storeIDs, taskNos)
	b := &pgx.Batch{}
	rr.queue(b)
	if err := f.db.pool.SendBatch(context.Background(), b).Close(); err != nil {
		t.Fatalf("read receipts: %v", err)
	}
	out := make([][]*cloud.Receipt, len(taskNos))
	for i := range taskNos {
		out[i] = rr.receipts(i)
	}
	return out
}

var t0 = time.Date(2026, 9, 23, 12, 0, 0, 0, time.UTC)

func event(seq uint64, kind, taskNo string, data any) sync.Event {
	b, err := json.Marshal(data)
	if err != nil {
		panic(err)
	}
	return sync.Event{Seq: seq, Kind: kind, TaskNo: taskNo, At: t0.Add(time.Duration(seq) * time.Second), Data: b}
}

func taskEvent(seq uint64, taskNo string, version uint64, status storeprint.Status) sync.Event {
	return event(seq, sync.KindTask, taskNo, sync.TaskEvent{
		TaskNo: taskNo, Version: version, OrderID: "o1", Station: "hot", PrinterID: "hot-1",
		Status: status, Attempt: int(version) / 2, Source: "pos",
		CreatedAt: t0, UpdatedAt: t0.Add(time.Duration(seq) * time.Second),
	})
}

func receiptEvent(seq uint64, taskNo string, attempt int, state storeprint.ReceiptState) sync.Event {
	return event(seq, sync.KindReceipt, taskNo, sync.ReceiptEvent{
		TaskNo: taskNo, Attempt: attempt, State: state, PrinterID: "hot-1", ProcessID: "0001",
		At: t0.Add(time.Duration(seq) * time.Second),
	})
}

func auditEvent(seq uint64, id string, action storeprint.AuditAction, taskNo string) sync.Event {
	return event(seq, sync.KindAudit, taskNo, sync.AuditEvent{
		ID: id, Action: action, Operator: "Li", Reason: "paper jam", TaskNo: taskNo,
		Before: json.RawMessage(`{"status":"failed"}`), After: json.RawMessage(`{"status":"queued"}`),
		At: t0.Add(time.Duration(seq) * time.Second),
	})
}

// lifecycle returns the events of n tasks printed once each: per task a
// queued, printing and done task event and three receipts, seq from first.
func lifecycle(first uint64, n int, prefix string) []sync.Event {
	var out []sync.Event
	seq := first
	next := func() uint64 { s := seq; seq++; return s }
	for i := 0; i < n; i++ {
		taskNo := fmt.Sprintf("order_%s%d_station_hot", prefix, i)
		out = append(out,
			taskEvent(next(), taskNo, 1, "queued"),
			taskEvent(next(), taskNo, 2, "printing"),
			receiptEvent(next(), taskNo, 1, storeprint.ReceiptPrepared),
			receiptEvent(next(), taskNo, 1, storeprint.ReceiptSubmitted),
			receiptEvent(next(), taskNo, 1, storeprint.ReceiptPrinted),
			taskEvent(next(), taskNo, 3, "done"),
		)
	}
	return out
}

func wantCode(t testing.TB, err error, code string) {
	t.Helper()
	if got := storeprint.ErrorCode(err); got != code {
		t.Fatalf("got error %v (code %q), want code %q", err, got, code)
	}
}

// ingestEvents ingests events of a gateway's first incarnation (the one
// made with the gateway) and returns the cursor.
func (f *fixture) ingestEvents(ctx context.Context, gatewayID, storeID string, events []sync.Event) (uint64, error) {
	res, err := f.ingest.Ingest(ctx, gatewayID, storeID, "", events)
	if err != nil {
		return 0, err
	}
	return res.Cursor, nil
}
