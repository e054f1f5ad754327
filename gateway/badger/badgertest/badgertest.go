// Package badgertest damages a store's files for tests the way a disk
// does, where the store reads them.
package badgertest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	bdg "github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/table"
	"github.com/dgraph-io/ristretto/v2/z"
)

// FlipTable flips one byte (xor 0x5a) of the table at path: the first at
// or after off whose flip changes what the table holds, its entries, or
// makes it unreadable. A table has bytes no read covers, and a flip there
// leaves every entry and checksum as it was: the store is whole, and a
// test that wants damage would find none. It returns the offset flipped.
func FlipTable(t testing.TB, path string, off int64) int64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(t.TempDir(), "000001.sst") // a table's name, as Badger's reader wants
	want, err := entries(tmp, b)
	if err != nil {
		t.Fatalf("%s before the flip: %v", path, err)
	}
	for at := off; at < int64(len(b)); at++ {
		b[at] ^= 0x5a
		if got, err := entries(tmp, b); err != nil || !bytes.Equal(got, want) {
			if err := os.WriteFile(path, b, 0o600); err != nil {
				t.Fatal(err)
			}
			if at > off {
				t.Logf("%s: a flip at %d to %d changes nothing read; flipped at %d", filepath.Base(path), off, at-1, at)
			}
			return at
		}
		b[at] ^= 0x5a
	}
	t.Fatalf("%s: no flip from %d on changes what the table holds", path, off)
	return 0
}

// entries writes b to path and reads it as a table of the store's options,
// every block's checksum verified: its keys and values, one after another.
func entries(path string, b []byte) (out []byte, err error) {
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return nil, err
	}
	mf, err := z.OpenMmapFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	var tb *table.Table
	defer func() {
		// Badger's reader panics on some damage (an index it cannot parse).
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("unreadable: %v", r)
		}
		if tb != nil {
			_ = tb.MmapFile.Close(-1)
		} else {
			_ = mf.Close(-1)
		}
	}()
	o := bdg.DefaultOptions("") // the store keeps Badger's compression and block size
	tb, err = table.OpenTable(mf, table.Options{ReadOnly: true, ChkMode: options.OnTableAndBlockRead,
		Compression: o.Compression, BlockSize: o.BlockSize, BloomFalsePositive: o.BloomFalsePositive})
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	it := tb.NewIterator(0)
	defer it.Close()
	for it.Rewind(); it.Valid(); it.Next() {
		buf.Write(it.Key())
		buf.Write(it.ValueCopy().Value)
	}
	return buf.Bytes(), nil
}

// CopyTree copies the directory from, files and folders, into to: a copy
// taken while a store is open is what a crash at that moment leaves.
func CopyTree(t testing.TB, from, to string) {
	t.Helper()
	err := filepath.Walk(from, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if fi.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o700)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}
