package badger_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/gateway/badger"
)

func openReplica(t *testing.T) *badger.DB {
	t.Helper()
	db, err := badger.Open(t.TempDir(), badger.Options{MinFreeBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func hasOrder(t *testing.T, db *badger.DB, id string) bool {
	t.Helper()
	found := false
	if err := db.View(context.Background(), func(tx gateway.ReadTx) error {
		_, err := tx.Order(id)
		found = err == nil
		if storeprint.ErrorCode(err) == storeprint.ENOTFOUND {
			return nil
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return found
}

// A batch of updates recorded on one store and applied to two: each
// update sees the ones before it, a failing one leaves nothing, nothing
// is written until applied, an entry applies once, and an export carries
// the state to an empty store.
func TestDB_RecordBatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	leader, follower := openReplica(t), openReplica(t)
	put := func(id string) func(gateway.Tx) error {
		return func(tx gateway.Tx) error {
			return tx.PutOrder(&gateway.OrderRecord{OrderID: id, Digest: "d", CreatedAt: time.Now()})
		}
	}
	boom := errors.New("boom")
	ws, errs, n, err := leader.RecordBatch(ctx, []func(gateway.Tx) error{
		put("o1"),
		func(tx gateway.Tx) error { put("o2")(tx); return boom },
		func(tx gateway.Tx) error {
			if _, err := tx.Order("o1"); err != nil {
				return err // o3 is written only if o1 is seen
			}
			tx.AppendAudit(&gateway.AuditEntry{Action: "retry", Operator: "x", At: time.Now()})
			return put("o3")(tx)
		},
	})
	if err != nil || n != 3 || errs[0] != nil || !errors.Is(errs[1], boom) || errs[2] != nil {
		t.Fatalf("got n %d, errs %v, err %v; want 3, [nil boom nil], nil", n, errs, err)
	}
	if hasOrder(t, leader, "o1") {
		t.Fatal("recorded, not applied: o1 is in the store already")
	}
	b, _ := ws.MarshalBinary()
	var back badger.WriteSet
	if err := back.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	for _, db := range []*badger.DB{leader, follower} {
		for range 2 { // the second time is a replay: applied once
			if err := db.Apply(ctx, &back, 7); err != nil {
				t.Fatal(err)
			}
		}
		if !hasOrder(t, db, "o1") || hasOrder(t, db, "o2") || !hasOrder(t, db, "o3") {
			t.Errorf("got o1 %v o2 %v o3 %v, want o1 and o3", hasOrder(t, db, "o1"), hasOrder(t, db, "o2"), hasOrder(t, db, "o3"))
		}
		if i, _ := db.Applied(); i != 7 {
			t.Errorf("applied %d, want 7", i)
		}
	}
	var exp bytes.Buffer
	if err := follower.Export(&exp); err != nil {
		t.Fatal(err)
	}
	fresh := openReplica(t)
	if err := fresh.Import(ctx, &exp); err != nil {
		t.Fatal(err)
	}
	if !hasOrder(t, fresh, "o1") || !hasOrder(t, fresh, "o3") {
		t.Error("the import lacks o1 or o3")
	}
	var a, c []*gateway.AuditEntry
	leader.View(ctx, func(tx gateway.ReadTx) error { a, _ = tx.Audit(0, 10); return nil })
	fresh.View(ctx, func(tx gateway.ReadTx) error { c, _ = tx.Audit(0, 10); return nil })
	if len(a) != 1 || len(c) != 1 || a[0].Seq != c[0].Seq {
		t.Errorf("audit: leader %d entries, import %d, want the same one", len(a), len(c))
	}
	if i, _ := fresh.Applied(); i != 7 {
		t.Errorf("import: applied %d, want 7", i)
	}
}
