package badger

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	bdg "github.com/dgraph-io/badger/v4"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
)

// Retention: done and cancelled tasks, their receipts and the audit log are
// deleted once old enough and stored by the cloud (gateway.Sweeper decides
// when); an order whose tasks are gone keeps a compact record for replays
// until order_ids_retention, indexed by acceptance time under
//
//	p/<8-byte unix nanos of acceptance>/<order_id>

const spacePurged = 'p'

// seqsFrom: tasks and audit entries stored without their event's seq
// count as of this one.
func (t *tx) seqsFrom() uint64 {
	b, err := t.get(metaSeqsFrom)
	if err != nil || len(b) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(b)
}

func (t *tx) PurgeTasks(status storeprint.Status, before time.Time, acked, after uint64, limit int) (gateway.PurgeResult, error) {
	var res gateway.PurgeResult
	if !status.Final() {
		return res, fmt.Errorf("purge: %q is not a final status", status)
	}
	from := t.seqsFrom()
	var old []storedTask
	res.Last, res.Done = after, true
	looked := 0
	err := t.scanFrom(prefix(spaceStatus, string(status)), seqKey(spaceStatus, after+1, string(status)), func(k, v []byte) (bool, error) {
		if len(old) >= limit || looked >= 4*limit {
			res.Done = false
			return false, nil
		}
		looked++
		var s storedTask
		b, err := t.get(key(spaceTask, string(v)))
		if errors.Is(err, bdg.ErrKeyNotFound) {
			return true, nil
		}
		if err == nil {
			err = decodeTask(b, &s)
		}
		if err != nil {
			return false, err
		}
		if !s.CreatedAt.Before(before) {
			return false, nil // accepted later: so is every task after it
		}
		res.Last = s.Seq
		es := s.EventSeq
		if es == 0 {
			es = from
		}
		if s.UpdatedAt.Before(before) && es <= acked {
			old = append(old, s)
		}
		return true, nil
	})
	if err != nil {
		return res, fmt.Errorf("purge %s tasks: %w", status, err)
	}
	for i := range old {
		if err := t.purgeTask(&old[i].Task); err != nil {
			return res, err
		}
		res.Purged++
	}
	return res, nil
}

// purgeTask deletes a task, its indexes and receipts, and keeps its
// order's record for replays.
func (t *tx) purgeTask(task *gateway.Task) error {
	t.del(key(spaceTask, task.TaskNo))
	t.del(seqKey(spaceStatus, task.Seq, string(task.Status)))
	if task.Status.Open() {
		t.del(seqKey(spaceQueue, task.Seq, task.PrinterID))
	}
	if err := t.addCount(task.Status, -1); err != nil {
		return err
	}
	for a := 1; a <= task.Attempt; a++ {
		t.del(receiptKey(task.TaskNo, a)) // attempts that wrote none cost nothing
	}
	if task.CopyOf != "" || task.OrderID == "" {
		return nil // copies and test pages are no order's tasks
	}
	o, err := t.Order(task.OrderID)
	if err != nil {
		if storeprint.ErrorCode(err) == storeprint.ENOTFOUND {
			return nil
		}
		return err
	}
	if len(o.Printers) != len(o.TaskNos) {
		// Written before records kept their printers: learn them now,
		// while the tasks are still here.
		o.Printers = make([]string, len(o.TaskNos))
		for i, no := range o.TaskNos {
			if no == task.TaskNo {
				o.Printers[i] = firstPrinter(task)
			} else if other, err := t.Task(no); err == nil {
				o.Printers[i] = firstPrinter(other)
			}
		}
	}
	gone := true
	for _, no := range o.TaskNos {
		if no == task.TaskNo {
			continue
		}
		if _, err := t.get(key(spaceTask, no)); err == nil {
			gone = false
		} else if !errors.Is(err, bdg.ErrKeyNotFound) {
			return err
		}
	}
	if !gone {
		return t.PutOrder(o)
	}
	// Every task of the order is gone: keep the record alone.
	if err := t.PutOrder(o); err != nil {
		return err
	}
	t.set(purgedKey(o.CreatedAt, o.OrderID), []byte{1})
	return nil
}

func firstPrinter(t *gateway.Task) string {
	if t.FirstPrinter != "" {
		return t.FirstPrinter
	}
	return t.PrinterID
}

func purgedKey(at time.Time, orderID string) []byte {
	k := []byte{spacePurged, 0}
	k = binary.BigEndian.AppendUint64(k, uint64(at.UnixNano()))
	return append(append(k, 0), orderID...)
}

func (t *tx) PurgeAudit(before time.Time, acked uint64, limit int) (gateway.PurgeResult, error) {
	res := gateway.PurgeResult{Done: true}
	from := t.seqsFrom()
	var seqs []uint64
	err := t.scan(prefix(spaceAudit), func(k, v []byte) (bool, error) {
		if len(seqs) >= limit {
			res.Done = false
			return false, nil
		}
		var a storedAudit
		if err := decode(v, &a); err != nil {
			return false, err
		}
		es := a.EventSeq
		if es == 0 {
			es = from
		}
		if !a.At.Before(before) || es > acked {
			return false, nil
		}
		seqs = append(seqs, a.Seq)
		res.Last = a.Seq
		return true, nil
	})
	if err != nil {
		return res, fmt.Errorf("purge audit: %w", err)
	}
	for _, s := range seqs {
		t.del(seqKey(spaceAudit, s))
	}
	res.Purged = len(seqs)
	return res, nil
}

func (t *tx) PurgeOrders(before time.Time, limit int) (gateway.PurgeResult, error) {
	res := gateway.PurgeResult{Done: true}
	var keys [][]byte
	err := t.scan([]byte{spacePurged, 0}, func(k, _ []byte) (bool, error) {
		if len(keys) >= limit {
			res.Done = false
			return false, nil
		}
		if len(k) < 11 || int64(binary.BigEndian.Uint64(k[2:10])) >= before.UnixNano() {
			return false, nil
		}
		keys = append(keys, append([]byte(nil), k...))
		return true, nil
	})
	if err != nil {
		return res, fmt.Errorf("purge order records: %w", err)
	}
	for _, k := range keys {
		t.del(k)
		t.del(key(spaceOrder, string(k[11:])))
	}
	res.Purged = len(keys)
	return res, nil
}

func (t *tx) PurgeOutbox(upTo uint64, limit int) (gateway.PurgeResult, error) {
	res := gateway.PurgeResult{Done: true}
	var seqs []uint64
	err := t.scan(prefix(spaceEvent), func(k, _ []byte) (bool, error) {
		seq := binary.BigEndian.Uint64(k[2:])
		if seq > upTo {
			return false, nil
		}
		if len(seqs) >= limit {
			res.Done = false
			return false, nil
		}
		seqs = append(seqs, seq)
		return true, nil
	})
	if err != nil {
		return res, fmt.Errorf("trim the outbox: %w", err)
	}
	for _, seq := range seqs {
		t.DeleteEvent(seq)
	}
	res.Purged = len(seqs)
	if len(seqs) > 0 {
		res.Last = seqs[len(seqs)-1]
	}
	return res, nil
}

// The compact order record, as orders are stored (records of an earlier
// release are JSON, and become compact once every task of the order is
// gone):
//
//	2 | unix nanos (varint) | flags | source | digest | number of tasks |
//	per task: station, first printer
//
// strings as a uvarint length and bytes. Flags: 1 voided, 2 the digest is
// 64 hex digits stored as its 32 bytes. Task numbers follow from the order
// id and the stations.
const compactOrderVersion byte = 2

const (
	compactVoided    = 1
	compactHexDigest = 2
)

func encodeCompactOrder(o *gateway.OrderRecord) ([]byte, bool) {
	flags := byte(0)
	if o.Voided {
		flags |= compactVoided
	}
	digest := o.Digest
	if d, err := hex.DecodeString(o.Digest); err == nil && len(d) == 32 && hex.EncodeToString(d) == o.Digest {
		flags |= compactHexDigest
		digest = string(d)
	}
	b := []byte{compactOrderVersion}
	b = binary.AppendVarint(b, o.CreatedAt.UnixNano())
	b = append(b, flags)
	b = appendString(b, string(o.Source))
	b = appendString(b, digest)
	b = binary.AppendUvarint(b, uint64(len(o.TaskNos)))
	pfx := storeprint.TaskNo(o.OrderID, "")
	for i, no := range o.TaskNos {
		station, ok := strings.CutPrefix(no, pfx)
		if !ok || station == "" {
			return nil, false
		}
		p := ""
		if i < len(o.Printers) {
			p = o.Printers[i]
		}
		b = appendString(appendString(b, station), p)
	}
	return b, true
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// compactReader reads a compact record, failing once for good.
type compactReader struct {
	b  []byte
	ok bool
}

func (r *compactReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.ok = false
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *compactReader) string() string {
	n := r.uvarint()
	if !r.ok || n > uint64(len(r.b)) {
		r.ok = false
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

func decodeCompactOrder(orderID string, b []byte) (*gateway.OrderRecord, error) {
	bad := fmt.Errorf("decode order record %q: malformed", orderID)
	if len(b) < 2 || b[0] != compactOrderVersion {
		return nil, bad
	}
	ns, n := binary.Varint(b[1:])
	if n <= 0 || len(b) < 1+n+1 {
		return nil, bad
	}
	flags := b[1+n]
	r := &compactReader{b: b[2+n:], ok: true}
	o := &gateway.OrderRecord{OrderID: orderID, CreatedAt: time.Unix(0, ns).UTC(), Voided: flags&compactVoided != 0}
	o.Source = storeprint.Source(r.string())
	o.Digest = r.string()
	if flags&compactHexDigest != 0 {
		o.Digest = hex.EncodeToString([]byte(o.Digest))
	}
	count := r.uvarint()
	if !r.ok || count > uint64(len(r.b)) {
		return nil, bad
	}
	for i := uint64(0); i < count && r.ok; i++ {
		station, printer := r.string(), r.string()
		o.TaskNos = append(o.TaskNos, storeprint.TaskNo(orderID, station))
		o.Printers = append(o.Printers, printer)
	}
	if !r.ok || len(r.b) != 0 {
		return nil, bad
	}
	return o, nil
}
