package badger

import (
	"os"
	"reflect"
	"strings"
	"time"
	"unsafe"

	bdg "github.com/dgraph-io/badger/v4"

	"github.com/storeprint/storeprint/gateway"
)

// Badger sizes two things from its MemTableSize: the largest transaction
// (15 % of it), and when the memtable taking writes is full and written
// out as a table. The largest order needs a transaction of 1.2 MiB, 15 %
// of 8 MiB (gateway.TxnMemtableSize); but a burst holds two memtables in
// memory, each with room for one more transaction beyond its size, and
// the one being written out a second time in its table builder, which
// holds every block both as it is and compressed. At 8 MiB that was
// most of the gateway's memory at the peak of a burst.
//
// So Badger is opened with a memtable of at least 8 MiB (txnMemtable),
// and then told to write its memtables out at the store's own size
// (writeOutAt): each is then memtable_size plus 2.4 MiB of room, not
// 10.4 MiB, and its table builder needs half as much.

// txnMemtable is the memtable size Badger is opened with: the store's,
// or gateway.TxnMemtableSize if that is larger.
func (o Options) txnMemtable() int64 { return max(o.MemtableSize, int64(gateway.TxnMemtableSize)) }

// writeOutAt has Badger write a memtable out once it holds size bytes,
// and reports whether it could. Badger has no option for it: the size is
// a field of its unexported options (and of the memtable's own copy),
// found by name and only ever lowered. TestWriteOutAt, which counts the
// tables a store writes, fails on a Badger release that renames it or
// stops reading it.
//
// Badger's compactors and the goroutine that writes memtables out read
// those options; nothing else does until the next write. So writeOutAt
// runs before the store's first write, once the memtables Badger
// replayed at open are written out (their logs gone from dir; given up
// on after wait, leaving Badger's size), with the compactors stopped.
func writeOutAt(db *bdg.DB, dir string, size int64, wait time.Duration) bool {
	v := reflect.ValueOf(db).Elem()
	opt := int64Field(v.FieldByName("opt"), "MemTableSize")
	mt := v.FieldByName("mt")
	if opt == nil || !mt.IsValid() || mt.Kind() != reflect.Pointer || mt.IsNil() {
		return false
	}
	cur := int64Field(mt.Elem().FieldByName("opt"), "MemTableSize")
	if cur == nil {
		return false
	}
	if size >= *opt {
		return true
	}
	for deadline := time.Now().Add(wait); logsIn(dir) > 1; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
	}
	// Badger deletes a replayed memtable's log after adding its table to
	// L0 under the level's lock: reading the levels (which takes it) puts
	// the writing out, and its reading of the options, before the change.
	_ = db.Levels()
	stopCompactions(db)
	defer startCompactions(db)
	*opt, *cur = size, size
	return true
}

// int64Field is the address of the int64 field name of the struct s
// (addressable), or nil.
func int64Field(s reflect.Value, name string) *int64 {
	if !s.IsValid() || s.Kind() != reflect.Struct {
		return nil
	}
	f := s.FieldByName(name)
	if !f.IsValid() || f.Kind() != reflect.Int64 || !f.CanAddr() {
		return nil
	}
	return (*int64)(unsafe.Pointer(f.UnsafeAddr()))
}

// logsIn counts the memtables' write-ahead logs in dir: one, the log of
// the memtable taking writes, once those replayed at open are written
// out.
func logsIn(dir string) int {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".mem") {
			n++
		}
	}
	return n
}
