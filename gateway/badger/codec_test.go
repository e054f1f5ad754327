package badger

import (
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
)

var update = flag.Bool("update", false, "rewrite the golden records in testdata/badger")

// golden returns the golden record testdata/badger/<name>.golden, which
// -update first rewrites with got.
func golden(t *testing.T, name string, got []byte) []byte {
	t.Helper()
	path := filepath.Join("..", "..", "testdata", "badger", name+".golden")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	return want
}

// TestCodec_Golden pins the bytes of every record the store keeps on
// disk. The records are the gateway's domain types, which the API also
// shows: renaming a JSON tag or a field there would silently change data
// already on disk. A change here is a change of the disk format: it needs
// a new formatVersion and a migration of what older releases wrote, and
// then the golden files are rewritten with -update.
func TestCodec_Golden(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	later := at.Add(2 * time.Second)
	for _, tc := range []struct {
		name string
		v    any
		zero func() any
	}{
		{"task", &gateway.Task{
			TaskNo: "order_1_station_hot", OrderID: "1", Station: "hot", PrinterID: "pass-1", FirstPrinter: "hot-1",
			Status: storeprint.StatusAttention, Attempt: 2, Failures: 1, LastError: "print uncertain", Reason: storeprint.ReasonUncertain,
			Source: storeprint.SourcePOS, Table: "A1", Note: "少辣",
			Items:  []storeprint.Item{{Name: "宫保鸡丁", Qty: 2, Station: "hot", Note: "no nuts"}},
			CopyOf: "", Reprint: true, Copies: 1, AutoReprints: 1, StaleOK: true, BackupFrom: "hot-1",
			Seq: 7, Version: 9, CreatedAt: at, NextAt: later, PrintedAt: &later, UpdatedAt: later,
			LeaseToken: "ab12", LeaseExpires: later,
		}, func() any { return new(gateway.Task) }},
		{"order", &gateway.OrderRecord{OrderID: "1", Digest: "d1", TaskNos: []string{"order_1_station_hot"}, Source: storeprint.SourceCloud, Voided: true, CreatedAt: at},
			func() any { return new(gateway.OrderRecord) }},
		{"receipt", &gateway.Receipt{
			TaskNo: "order_1_station_hot", Attempt: 2, State: storeprint.ReceiptSubmitted, PrinterID: "hot-1",
			PayloadSHA256: "beef", ProcessID: "0042", JobID: "17", Reprint: true, BackupFrom: "hot-1", Error: "no confirmation",
			PreparedAt: at, SubmittedAt: &later, PrintedAt: &later, ConfirmedAt: &later,
		}, func() any { return new(gateway.Receipt) }},
		{"audit", &gateway.AuditEntry{Seq: 3, Action: storeprint.ActionRetry, Operator: "amy", Reason: "jam", TaskNo: "order_1_station_hot",
			Before: `{"status":"failed"}`, After: `{"status":"queued"}`, At: at},
			func() any { return new(gateway.AuditEntry) }},
		{"failover", &gateway.Failover{PrinterID: "hot-1", Active: true, Backup: "pass-1", Since: at, Reason: "offline",
			Acknowledged: true, AckBy: "amy", AckAt: &later},
			func() any { return new(gateway.Failover) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := encode(tc.v)
			if err != nil {
				t.Fatal(err)
			}
			want := golden(t, tc.name, got)
			if string(got) != string(want) {
				t.Fatalf("the disk format of a %s changed:\ngot  %s\nwant %s", tc.name, got, want)
			}
			back := tc.zero()
			if err := decode(want, back); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back, tc.v) {
				t.Fatalf("a stored %s reads back as\n%+v\nwant\n%+v", tc.name, back, tc.v)
			}
		})
	}
}
