package badger

import (
	"testing"

	"github.com/dgraph-io/ristretto/v2/z"
)

// The store finds Badger's pool of table builders' buffers (by a name
// Badger does not export), and draining it empties it.
func TestBuilderPool(t *testing.T) {
	t.Parallel()
	d, err := Open(t.TempDir(), Options{MinFreeBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	p := d.builders
	if p.pool == nil {
		t.Fatal("Badger's pool of table builders' buffers (DB.allocPool) not found: has Badger renamed it?")
	}
	for range 3 {
		p.pool.Return(z.NewAllocator(1<<20, "test"))
	}
	if n := p.free.Len(); n == 0 || n > 3 {
		t.Fatalf("got %d buffers waiting in the pool, want 3 (or fewer, once Badger released some)", n)
	}
	p.drain()
	if n := p.free.Len(); n != 0 {
		t.Fatalf("drained: got %d buffers waiting in the pool, want 0", n)
	}
}
