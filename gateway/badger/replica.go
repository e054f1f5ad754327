package badger

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"

	bdg "github.com/dgraph-io/badger/v4"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
)

// A replicated store (gateway/raft) builds each node's store from one log
// of write-sets: the leader records what updates write without
// committing it (RecordBatch), the log carries the write-set to every node,
// and each node applies it (Apply) in log order. Every node's store then
// holds the same keys, counters and digest; only what is the node's own
// (its witness, its last commit, its recovery) differs.

// WriteSet is what one update wrote: each key's new value (nil: deleted)
// and the store's sequence counters after it.
type WriteSet struct {
	Keys, Values       [][]byte
	Task, Event, Audit uint64
}

var (
	errRecorded = errors.New("recorded")
	// metaApplied is the index of the last log entry applied; a node
	// applies an entry once, even when the log is replayed to it.
	metaApplied = key(spaceMeta, "applied")
)

// RecordBatch runs fns in turn as Update would, each against everything
// committed and the writes of the fns before it that succeeded, and
// returns their writes together, committing nothing: one log entry for
// many updates. errs[i]
// is fn i's error (its writes are left out). It runs the first n of fns;
// those after would not fit in one transaction with them, and go in the
// next batch.
func (d *DB) RecordBatch(ctx context.Context, fns []func(gateway.Tx) error) (ws *WriteSet, errs []error, n int, err error) {
	err = d.Update(gateway.WithoutSync(ctx), func(gtx gateway.Tx) error {
		t := gtx.(*tx)
		errs, n, ws = make([]error, len(fns)), 0, nil
		recorded := 0
		for i, fn := range fns {
			overlay, ctr := maps.Clone(t.overlay), t.ctr
			err := callFn(fn, t)
			if err == nil {
				if s, c := t.size(); s > d.txnBytes/2 || c > d.txnCount/2 || int64(t.largest()) >= valueThreshold(d.opts.txnMemtable()) {
					if recorded > 0 {
						t.overlay, t.ctr = overlay, ctr
						break // for the next batch
					}
					err = storeprint.Errorf(storeprint.ETOOLARGE, "update too large to store in one transaction (%d bytes)", s)
				}
			}
			if err != nil {
				t.overlay, t.ctr = overlay, ctr
				errs[i] = err
			} else {
				recorded++
			}
			n = i + 1
		}
		ws = &WriteSet{Task: t.ctr.task, Event: t.ctr.event, Audit: t.ctr.audit}
		for _, w := range t.overlay {
			ws.Keys, ws.Values = append(ws.Keys, w.k), append(ws.Values, w.v)
		}
		return errRecorded
	})
	if errors.Is(err, errRecorded) {
		return ws, errs, n, nil
	}
	return nil, nil, 0, err
}

// Apply writes a write-set as log entry index, durably, unless the store
// applied that entry already.
func (d *DB) Apply(ctx context.Context, ws *WriteSet, index uint64) error {
	return d.Update(ctx, func(gtx gateway.Tx) error {
		t := gtx.(*tx)
		if applied, err := t.applied(); err != nil || index <= applied {
			return err
		}
		for i, k := range ws.Keys {
			t.overlay[string(k)] = write{k, ws.Values[i]}
		}
		t.ctr = counters{task: ws.Task, event: ws.Event, audit: ws.Audit}
		t.set(metaApplied, binary.BigEndian.AppendUint64(nil, index))
		return nil
	})
}

// Applied returns the index of the last log entry the store applied.
func (d *DB) Applied() (uint64, error) {
	v := d.acquire()
	if v == nil {
		return 0, storeprint.Errorf(storeprint.EUNAVAILABLE, "store is closed")
	}
	defer d.release(v)
	return (&tx{txn: v.txn}).applied()
}

func (t *tx) applied() (uint64, error) {
	b, err := t.get(metaApplied)
	if errors.Is(err, bdg.ErrKeyNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if len(b) != 8 {
		return 0, fmt.Errorf("read applied index: bad value")
	}
	return binary.BigEndian.Uint64(b), nil
}

// MarshalBinary encodes the write-set for the log.
func (ws *WriteSet) MarshalBinary() ([]byte, error) {
	n := 3 * binary.MaxVarintLen64
	for i := range ws.Keys {
		n += len(ws.Keys[i]) + len(ws.Values[i]) + 1 + 2*binary.MaxVarintLen64
	}
	b := make([]byte, 0, n)
	b = binary.AppendUvarint(b, ws.Task)
	b = binary.AppendUvarint(b, ws.Event)
	b = binary.AppendUvarint(b, ws.Audit)
	for i, k := range ws.Keys {
		b = appendKV(b, k, ws.Values[i])
	}
	return b, nil
}

func appendKV(b, k, v []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(k)))
	b = append(b, k...)
	if v == nil {
		return append(b, 0)
	}
	b = append(b, 1)
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

// UnmarshalBinary decodes a write-set made by MarshalBinary.
func (ws *WriteSet) UnmarshalBinary(b []byte) error {
	r := &byteReader{b: b}
	ws.Task, ws.Event, ws.Audit = r.uvarint(), r.uvarint(), r.uvarint()
	ws.Keys, ws.Values = nil, nil
	for r.err == nil && len(r.b) > 0 {
		k, v := r.kv()
		ws.Keys, ws.Values = append(ws.Keys, k), append(ws.Values, v)
	}
	return r.err
}

type byteReader struct {
	b   []byte
	err error
}

func (r *byteReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errors.New("write-set: bad number")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *byteReader) bytes(n uint64) []byte {
	if r.err != nil || uint64(len(r.b)) < n {
		r.err = errors.New("write-set: cut short")
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

func (r *byteReader) kv() (k, v []byte) {
	k = r.bytes(r.uvarint())
	flag := r.bytes(1)
	if r.err != nil || flag[0] == 0 {
		return k, nil
	}
	return k, append([]byte{}, r.bytes(r.uvarint())...)
}

// replicated reports whether a key is part of the state every node
// shares: not the node's own bookkeeping (its commit, witness, recovery,
// counters, format), which each node keeps for itself.
func replicated(k []byte) bool {
	return !volatile(k) || string(k) == string(metaSeqsFrom)
}

const exportMagic = "STOREPRINT-REPLICA 1\n"

// Export writes every replicated key of the store, as of its newest
// synced commit, with the counters and the applied index: a snapshot of
// the replicated state for a node that is far behind (see Import).
func (d *DB) Export(w io.Writer) error {
	v := d.acquire()
	if v == nil {
		return storeprint.Errorf(storeprint.EUNAVAILABLE, "store is closed")
	}
	defer d.release(v)
	t := &tx{txn: v.txn}
	applied, err := t.applied()
	if err != nil {
		return err
	}
	var ctr [3]uint64
	for i, k := range [][]byte{metaTaskSeq, metaEventSeq, metaAuditSeq} {
		b, err := t.get(k)
		if err == nil && len(b) == 8 {
			ctr[i] = binary.BigEndian.Uint64(b)
		} else if err != nil && !errors.Is(err, bdg.ErrKeyNotFound) {
			return err
		}
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	head := []byte(exportMagic)
	for _, n := range []uint64{applied, ctr[0], ctr[1], ctr[2]} {
		head = binary.AppendUvarint(head, n)
	}
	if _, err := bw.Write(head); err != nil {
		return err
	}
	it := v.txn.NewIterator(bdg.DefaultIteratorOptions)
	defer it.Close()
	var buf []byte
	for it.Rewind(); it.Valid(); it.Next() {
		k := it.Item().Key()
		if !replicated(k) {
			continue
		}
		val, err := it.Item().ValueCopy(nil)
		if err != nil {
			return fmt.Errorf("export %q: %w", k, err)
		}
		buf = appendKV(buf[:0], k, val)
		if _, err := bw.Write(binary.AppendUvarint(nil, uint64(len(buf)))); err != nil {
			return err
		}
		if _, err := bw.Write(buf); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// Import replaces the store's replicated state with an export: keys it
// does not hold are deleted, the rest written, in transactions of the
// store's usual size. The applied index is written last, so an import
// cut short is made again from the start.
func (d *DB) Import(ctx context.Context, r io.Reader) error {
	br := bufio.NewReaderSize(r, 256<<10)
	magic := make([]byte, len(exportMagic))
	if _, err := io.ReadFull(br, magic); err != nil || string(magic) != exportMagic {
		return errors.New("import: not a replica export")
	}
	var head [4]uint64
	for i := range head {
		n, err := binary.ReadUvarint(br)
		if err != nil {
			return fmt.Errorf("import: %w", err)
		}
		head[i] = n
	}
	want := map[string][]byte{}
	for {
		n, err := binary.ReadUvarint(br)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("import: %w", err)
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(br, b); err != nil {
			return fmt.Errorf("import: %w", err)
		}
		rd := &byteReader{b: b}
		k, v := rd.kv()
		if rd.err != nil {
			return fmt.Errorf("import: %w", rd.err)
		}
		want[string(k)] = v
	}
	var writes []write
	v := d.acquire()
	if v == nil {
		return storeprint.Errorf(storeprint.EUNAVAILABLE, "store is closed")
	}
	it := v.txn.NewIterator(bdg.IteratorOptions{})
	for it.Rewind(); it.Valid(); it.Next() {
		k := it.Item().KeyCopy(nil)
		if _, keep := want[string(k)]; !keep && replicated(k) {
			writes = append(writes, write{k, nil})
		}
	}
	it.Close()
	d.release(v)
	for k, val := range want {
		writes = append(writes, write{[]byte(k), val})
	}
	for first := true; first || len(writes) > 0; first = false {
		n, size := 0, 0
		for n < len(writes) && n < d.txnCount/2 && size < d.txnBytes/2 {
			size += len(writes[n].k) + len(writes[n].v) + entryOverhead
			n++
		}
		chunk := writes[:n]
		writes = writes[n:]
		last := len(writes) == 0
		err := d.Update(ctx, func(gtx gateway.Tx) error {
			t := gtx.(*tx)
			for _, w := range chunk {
				t.overlay[string(w.k)] = w
			}
			if last {
				t.ctr = counters{task: head[1], event: head[2], audit: head[3]}
				t.set(metaApplied, binary.BigEndian.AppendUint64(nil, head[0]))
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("import: %w", err)
		}
	}
	return nil
}
