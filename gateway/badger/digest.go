package badger

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/cespare/xxhash/v2"
)

// digest sums up every stored key and value, so that the store can tell at
// start whether what it reads is exactly what it last committed: a sum of
// a 64-bit hash of each pair (order does not matter, and a pair is taken
// out again by subtracting it), the number of keys and the number of
// tasks. The writer keeps it up to date with every commit; Open adds up
// what is on disk and compares.
type digest struct {
	Sum, Keys, Tasks uint64
}

func hashKV(k, v []byte) uint64 {
	var h xxhash.Digest
	h.Reset()
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(k)))
	_, _ = h.Write(n[:])
	_, _ = h.Write(k)
	_, _ = h.Write(v)
	return h.Sum64()
}

func (d *digest) add(k, v []byte) {
	d.Sum += hashKV(k, v)
	d.Keys++
	if isTaskKey(k) {
		d.Tasks++
	}
}

func (d *digest) remove(k, v []byte) {
	d.Sum -= hashKV(k, v)
	d.Keys--
	if isTaskKey(k) {
		d.Tasks--
	}
}

func isTaskKey(k []byte) bool { return len(k) > 2 && k[0] == spaceTask && k[1] == 0 }

// volatile keys change with every commit or are the store's own
// bookkeeping; the digest leaves them out. Counts and named counters
// (m/count/..., m/user/...) are data and count.
func volatile(k []byte) bool {
	if len(k) < 2 || k[0] != spaceMeta || k[1] != 0 {
		return false
	}
	rest := k[2:]
	return !bytes.HasPrefix(rest, []byte("count\x00")) && !bytes.HasPrefix(rest, []byte("user\x00"))
}

func (d digest) String() string {
	return fmt.Sprintf("%d keys (%d tasks), sum %016x", d.Keys, d.Tasks, d.Sum)
}

// commitState is what every commit records, in the store (metaCommit) and
// in the witness: the commit's number and the digest after it.
type commitState struct {
	Gen uint64
	digest
}

func (c commitState) encode() []byte {
	b := make([]byte, 0, 32)
	for _, v := range []uint64{c.Gen, c.Sum, c.Keys, c.Tasks} {
		b = binary.BigEndian.AppendUint64(b, v)
	}
	return b
}

func decodeCommitState(b []byte) (commitState, error) {
	if len(b) != 32 {
		return commitState{}, fmt.Errorf("commit state: %d bytes, want 32", len(b))
	}
	u := func(i int) uint64 { return binary.BigEndian.Uint64(b[8*i:]) }
	return commitState{Gen: u(0), digest: digest{Sum: u(1), Keys: u(2), Tasks: u(3)}}, nil
}
