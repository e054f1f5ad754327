package badgertest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	bdg "github.com/dgraph-io/badger/v4"
)

// After FlipTable the table holds other entries, or cannot be read.
func TestFlipTable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db, err := bdg.Open(bdg.DefaultOptions(dir).WithLogger(nil))
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(txn *bdg.Txn) error {
		for i := range 5000 {
			if err := txn.Set(fmt.Appendf(nil, "task/order_%05d_station_hot", i), fmt.Appendf(nil, `{"status":"done","n":%d}`, i)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	tables, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
	if len(tables) == 0 {
		t.Fatal("no table written")
	}
	path := tables[0]
	before, _ := os.ReadFile(path)
	want, err := entries(filepath.Join(t.TempDir(), "000001.sst"), before)
	if err != nil {
		t.Fatal(err)
	}
	at := FlipTable(t, path, int64(len(before)/2))
	after, _ := os.ReadFile(path)
	if n := diff(before, after); n != 1 || after[at] != before[at]^0x5a {
		t.Fatalf("%d bytes differ, want the one at %d", n, at)
	}
	if got, err := entries(filepath.Join(t.TempDir(), "000001.sst"), after); err == nil && bytes.Equal(got, want) {
		t.Fatalf("the flip at %d left every entry as it was", at)
	}
}

func diff(a, b []byte) int {
	n := 0
	for i := range a {
		if a[i] != b[i] {
			n++
		}
	}
	return n
}
