package badger

import (
	"reflect"
	"unsafe"

	bdg "github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/ristretto/v2/z"
)

// Badger builds its tables (a memtable written out, a compaction's new
// tables) in buffers that it takes from a pool and gives back when the
// table is written, to reuse. The pool keeps up to 8 of them, each as
// large as the largest table it ever built: a memtable's, several MiB.
// In a burst, every compaction's builders take those, so the pool alone
// kept tens of MiB resident, the most of the gateway's memory at its
// peak. The store gives back to the collector what the pool holds after
// each batch it commits and each check of the disk (builderPool.drain):
// builders then start from small buffers and grow to what their table
// needs, and the memory of one written out is the collector's again.
//
// Badger does not export its pool. It is found by name (allocPool) and
// only read: TestBuilderPool, which opens a store and looks for it, fails
// on a Badger release that renames or drops it.
type builderPool struct {
	pool *z.AllocatorPool
	free reflect.Value // the pool's channel of free allocators, for its length
}

// findBuilderPool finds Badger's pool of table builders' buffers; the
// zero builderPool (none found) does nothing.
func findBuilderPool(db *bdg.DB) builderPool {
	f := reflect.ValueOf(db).Elem().FieldByName("allocPool")
	if !f.IsValid() || f.Kind() != reflect.Pointer || f.Type() != reflect.TypeFor[*z.AllocatorPool]() || f.IsNil() {
		return builderPool{}
	}
	p := (*z.AllocatorPool)(unsafe.Pointer(f.Pointer()))
	free := reflect.ValueOf(p).Elem().FieldByName("allocCh")
	if !free.IsValid() || free.Kind() != reflect.Chan {
		return builderPool{}
	}
	return builderPool{pool: p, free: free}
}

// drain releases the buffers waiting in the pool.
func (b builderPool) drain() {
	if b.pool == nil {
		return
	}
	for n := b.free.Len(); n > 0; n-- {
		b.pool.Get(0, "drained").Release()
	}
}
