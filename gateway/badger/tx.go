package badger

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	bdg "github.com/dgraph-io/badger/v4"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/sync"
)

var (
	_ gateway.Tx     = (*tx)(nil)
	_ gateway.ReadTx = (*tx)(nil)
)

// tx reads a Badger transaction through an overlay of its own pending
// writes. Read-only transactions have no overlay. Writes land in the overlay
// and reach the Badger transaction only when the update succeeds.
type tx struct {
	txn     *bdg.Txn
	overlay map[string]write
	// read holds what this update read from the transaction below its
	// overlay (nil: not there), so that neither reading it again nor the
	// digest goes back to Badger.
	read map[string][]byte
	ctr  counters // counters as this update sees them
	from counters // the counters before this update: what it numbers above them is new
	now  func() time.Time
}

// write is a pending write of a key: a nil value deletes it. The key is
// kept as made, to hand to Badger as it is.
type write struct{ k, v []byte }

// storedTask is a task as stored: with the seq of the outbox event of its
// latest state (0 in values written before it was kept).
type storedTask struct {
	gateway.Task
	EventSeq uint64 `json:"event_seq,omitempty"`
}

// storedAudit is an audit entry as stored, with the seq of its outbox event.
type storedAudit struct {
	gateway.AuditEntry
	EventSeq uint64 `json:"event_seq,omitempty"`
}

// counters are the store's sequence numbers: each is the last one used.
type counters struct {
	task, event, audit uint64
}

func (t *tx) get(k []byte) ([]byte, error) {
	if t.overlay != nil {
		if w, ok := t.overlay[string(k)]; ok {
			if w.v == nil {
				return nil, bdg.ErrKeyNotFound
			}
			return w.v, nil
		}
	}
	if v, ok := t.read[string(k)]; ok {
		// Read before in this update: the transaction below has not
		// changed since.
		if v == nil {
			return nil, bdg.ErrKeyNotFound
		}
		return v, nil
	}
	item, err := t.txn.Get(k)
	if err != nil {
		if t.read != nil && errors.Is(err, bdg.ErrKeyNotFound) {
			t.read[string(k)] = nil
		}
		return nil, err
	}
	v, err := item.ValueCopy(nil)
	if err == nil && t.read != nil {
		t.read[string(k)] = v
	}
	return v, err
}

func (t *tx) set(k, v []byte) {
	t.overlay[string(k)] = write{k, v}
}

func (t *tx) del(k []byte) {
	t.overlay[string(k)] = write{k, nil}
}

// scan calls fn for each key with the prefix in key order, merging the
// overlay over the transaction, until fn returns false.
func (t *tx) scan(p []byte, fn func(k, v []byte) (bool, error)) error {
	return t.scanFrom(p, p, fn)
}

// scanFrom is scan starting at the first key >= start.
func (t *tx) scanFrom(p, start []byte, fn func(k, v []byte) (bool, error)) error {
	// Overlay keys under the prefix from start, sorted.
	var ov []string
	for k := range t.overlay {
		if bytes.HasPrefix([]byte(k), p) && k >= string(start) {
			ov = append(ov, k)
		}
	}
	sort.Strings(ov)

	opts := bdg.DefaultIteratorOptions
	opts.Prefix, opts.PrefetchValues = p, false // values sit in the tree: read as iterated, not 100 ahead
	it := t.txn.NewIterator(opts)
	defer it.Close()
	it.Seek(start)
	i := 0
	for {
		var k []byte
		var fromOverlay bool
		switch {
		case it.Valid() && i < len(ov):
			ik := it.Item().Key()
			c := bytes.Compare([]byte(ov[i]), ik)
			if c <= 0 {
				k, fromOverlay = []byte(ov[i]), true
				if c == 0 {
					it.Next() // the overlay shadows the stored value
				}
			} else {
				k = it.Item().KeyCopy(nil)
			}
		case it.Valid():
			k = it.Item().KeyCopy(nil)
		case i < len(ov):
			k, fromOverlay = []byte(ov[i]), true
		default:
			return nil
		}
		var v []byte
		if fromOverlay {
			v = t.overlay[ov[i]].v
			i++
			if v == nil {
				continue // deleted
			}
		} else {
			var err error
			if v, err = it.Item().ValueCopy(nil); err != nil {
				return fmt.Errorf("read %q: %w", k, err)
			}
			if t.read != nil {
				t.read[string(k)] = v
			}
			it.Next()
		}
		more, err := fn(k, v)
		if err != nil || !more {
			return err
		}
	}
}

func (t *tx) Task(taskNo string) (*gateway.Task, error) {
	task, err := t.task(taskNo)
	if err == nil && task == nil {
		return nil, notFound("task", taskNo)
	}
	return task, err
}

// task is Task with nil for a task not there, and nothing made for it:
// every new task is looked up so.
func (t *tx) task(taskNo string) (*gateway.Task, error) {
	b, err := t.get(key(spaceTask, taskNo))
	if errors.Is(err, bdg.ErrKeyNotFound) {
		return nil, nil
	}
	if err == nil {
		task := new(gateway.Task)
		if err = decodeGatewayTask(b, task); err == nil {
			return task, nil
		}
	}
	return nil, fmt.Errorf("read task %q: %w", taskNo, err)
}

// notFound is the ENOTFOUND of the thing with the id, quoted as %q
// quotes; made at once for the plain ids every order's lookups miss on.
func notFound(thing, id string) *storeprint.Error {
	for i := 0; i < len(id); i++ {
		if c := id[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return &storeprint.Error{Code: storeprint.ENOTFOUND, Message: thing + " " + strconv.Quote(id) + " not found"}
		}
	}
	return &storeprint.Error{Code: storeprint.ENOTFOUND, Message: thing + ` "` + id + `" not found`}
}

func (t *tx) getValue(k []byte, v any) error {
	b, err := t.get(k)
	if err != nil {
		return err
	}
	return decode(b, v)
}

func (t *tx) Order(orderID string) (*gateway.OrderRecord, error) {
	b, err := t.get(key(spaceOrder, orderID))
	if err != nil {
		if errors.Is(err, bdg.ErrKeyNotFound) {
			return nil, notFound("order", orderID)
		}
		return nil, fmt.Errorf("read order %q: %w", orderID, err)
	}
	if len(b) > 0 && b[0] == compactOrderVersion {
		return decodeCompactOrder(orderID, b)
	}
	var o gateway.OrderRecord
	if err := decode(b, &o); err != nil {
		return nil, fmt.Errorf("read order %q: %w", orderID, err)
	}
	return &o, nil
}

func (t *tx) Receipt(taskNo string, attempt int) (*gateway.Receipt, error) {
	var r gateway.Receipt
	b, err := t.get(receiptKey(taskNo, attempt))
	if err == nil {
		err = decodeReceipt(b, &r)
	}
	if err != nil {
		if errors.Is(err, bdg.ErrKeyNotFound) {
			return nil, storeprint.Errorf(storeprint.ENOTFOUND, "no receipt for %q attempt %d", taskNo, attempt)
		}
		return nil, fmt.Errorf("read receipt %q/%d: %w", taskNo, attempt, err)
	}
	return &r, nil
}

func (t *tx) Receipts(taskNo string) ([]*gateway.Receipt, error) {
	var out []*gateway.Receipt
	err := t.scan(prefix(spaceReceipt, taskNo), func(_, v []byte) (bool, error) {
		var r gateway.Receipt
		if err := decodeReceipt(v, &r); err != nil {
			return false, err
		}
		out = append(out, &r)
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("read receipts of %q: %w", taskNo, err)
	}
	return out, nil
}

// tasksAt resolves index entries (values are task numbers) to tasks.
func (t *tx) tasksAt(p []byte, limit int) ([]*gateway.Task, error) {
	var out []*gateway.Task
	err := t.scan(p, func(_, v []byte) (bool, error) {
		task, err := t.Task(string(v))
		if err != nil {
			return false, err
		}
		out = append(out, task)
		return limit <= 0 || len(out) < limit, nil
	})
	return out, err
}

func (t *tx) Head(printerID string) (*gateway.Task, error) {
	tasks, err := t.tasksAt(prefix(spaceQueue, printerID), 1)
	if err != nil || len(tasks) == 0 {
		return nil, err
	}
	return tasks[0], nil
}

func (t *tx) Open(printerID string, limit int) ([]*gateway.Task, error) {
	return t.tasksAt(prefix(spaceQueue, printerID), limit)
}

func (t *tx) ByStatus(status storeprint.Status, limit int) ([]*gateway.Task, error) {
	if status == "" {
		var out []*gateway.Task
		err := t.scan(prefix(spaceTask), func(_, v []byte) (bool, error) {
			var task gateway.Task
			if err := decodeGatewayTask(v, &task); err != nil {
				return false, err
			}
			out = append(out, &task)
			return limit <= 0 || len(out) < limit, nil
		})
		sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
		return out, err
	}
	return t.tasksAt(prefix(spaceStatus, string(status)), limit)
}

// Count reads the status's counter, kept by PutTask, so counting costs the
// same however many tasks a store has printed.
func (t *tx) Count(status storeprint.Status) (int, error) {
	n, err := t.counter(status)
	return int(n), err
}

func statusCountKey(s storeprint.Status) []byte { return key(spaceMeta, "count", string(s)) }

func (t *tx) counter(s storeprint.Status) (int64, error) {
	b, err := t.get(statusCountKey(s))
	if errors.Is(err, bdg.ErrKeyNotFound) {
		return 0, nil
	}
	if err != nil || len(b) != 8 {
		return 0, fmt.Errorf("read count of %s: bad value %v", s, err)
	}
	return int64(binary.BigEndian.Uint64(b)), nil
}

func (t *tx) addCount(s storeprint.Status, d int64) error {
	n, err := t.counter(s)
	if err != nil {
		return err
	}
	t.set(statusCountKey(s), binary.BigEndian.AppendUint64(nil, uint64(n+d)))
	return nil
}

func (t *tx) CountOpen(printerID string) (int, error) {
	return t.count(prefix(spaceQueue, printerID))
}

func (t *tx) count(p []byte) (int, error) {
	n := 0
	if t.overlay == nil {
		opts := bdg.DefaultIteratorOptions
		opts.Prefix, opts.PrefetchValues = p, false
		it := t.txn.NewIterator(opts)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			n++
		}
		return n, nil
	}
	err := t.scan(p, func(_, _ []byte) (bool, error) { n++; return true, nil })
	return n, err
}

func (t *tx) TasksAfter(after string, limit int) ([]*gateway.Task, error) {
	start := prefix(spaceTask)
	if after != "" {
		start = append(key(spaceTask, after), 0) // the first key after it
	}
	var out []*gateway.Task
	err := t.scanFrom(prefix(spaceTask), start, func(_, v []byte) (bool, error) {
		var task gateway.Task
		if err := decodeGatewayTask(v, &task); err != nil {
			return false, err
		}
		out = append(out, &task)
		return limit <= 0 || len(out) < limit, nil
	})
	return out, err
}

func (t *tx) Failover(printerID string) (*gateway.Failover, error) {
	var f gateway.Failover
	if err := t.getValue(key(spaceFailover, printerID), &f); err != nil {
		if errors.Is(err, bdg.ErrKeyNotFound) {
			return nil, nil
		}
		return nil, fmt.Errorf("read failover of %q: %w", printerID, err)
	}
	return &f, nil
}

func (t *tx) Audit(after uint64, limit int) ([]*gateway.AuditEntry, error) {
	var out []*gateway.AuditEntry
	err := t.scanFrom(prefix(spaceAudit), seqKey(spaceAudit, after+1), func(k, v []byte) (bool, error) {
		var a gateway.AuditEntry
		if err := decode(v, &a); err != nil {
			return false, err
		}
		out = append(out, &a)
		return limit <= 0 || len(out) < limit, nil
	})
	return out, err
}

func (t *tx) Outbox(after uint64, limit int) ([]sync.Event, error) {
	var out []sync.Event
	err := t.scanFrom(prefix(spaceEvent), seqKey(spaceEvent, after+1), func(k, v []byte) (bool, error) {
		if len(k) != 10 {
			return false, fmt.Errorf("read outbox: bad key %q", k)
		}
		e, err := decodeEvent(binary.BigEndian.Uint64(k[2:]), v)
		if err != nil {
			return false, err
		}
		out = append(out, e)
		return limit <= 0 || len(out) < limit, nil
	})
	return out, err
}

// Writes.

func (t *tx) put(k []byte, v any) error {
	b, err := encode(v)
	if err != nil {
		return err
	}
	t.set(k, b)
	return nil
}

func (t *tx) PutTask(task *gateway.Task) error {
	if !task.Status.Valid() {
		return fmt.Errorf("put task %q: invalid status %q", task.TaskNo, task.Status)
	}
	old, err := t.task(task.TaskNo)
	if err != nil {
		return err
	}
	from := storeprint.StatusNew
	if old != nil {
		from = old.Status
	}
	if err := storeprint.CheckTransition(from, task.Status); err != nil {
		return fmt.Errorf("put task %q: %w", task.TaskNo, err)
	}
	if old == nil || old.Status != task.Status {
		if err := t.addCount(task.Status, 1); err != nil {
			return err
		}
		if old != nil {
			if err := t.addCount(old.Status, -1); err != nil {
				return err
			}
		}
	}
	if old != nil {
		if old.Seq != task.Seq {
			return fmt.Errorf("put task %q: seq changed from %d to %d", task.TaskNo, old.Seq, task.Seq)
		}
		t.del(seqKey(spaceStatus, old.Seq, string(old.Status)))
		if old.Status.Open() {
			t.del(seqKey(spaceQueue, old.Seq, old.PrinterID))
		}
		task.Version = old.Version + 1
	} else {
		task.Version = 1
	}
	task.UpdatedAt = t.now()
	// The task remembers the seq of the event that tells its state, so
	// retention knows when the cloud has it.
	st := &storedTask{Task: *task, EventSeq: t.ctr.event + 1}
	b, ok := appendCompactTask(make([]byte, 0, 256), st)
	if !ok {
		var err error
		if b, err = appendStoredTask(append(make([]byte, 0, 768), formatVersion), st); err != nil {
			return fmt.Errorf("encode value: %w", err)
		}
	}
	t.set(key(spaceTask, task.TaskNo), b)
	t.set(seqKey(spaceStatus, task.Seq, string(task.Status)), []byte(task.TaskNo))
	if task.Status.Open() {
		t.set(seqKey(spaceQueue, task.Seq, task.PrinterID), []byte(task.TaskNo))
	}
	e := task.Event()
	at := t.now()
	if b, ok := appendCompactTaskEvent(make([]byte, 0, 160), task.TaskNo, at, &e); ok {
		t.ctr.event++
		t.set(seqKey(spaceEvent, t.ctr.event), b)
		return nil
	}
	data, err := sync.AppendTaskEvent(make([]byte, 0, 512), &e)
	if err != nil {
		return fmt.Errorf("encode event: %w", err)
	}
	return t.appendEventData(sync.KindTask, task.TaskNo, at, data)
}

// PutOrder stores the record compact (see encodeCompactOrder), or as JSON
// if its task numbers do not follow from its id and stations.
func (t *tx) PutOrder(o *gateway.OrderRecord) error {
	if b, ok := encodeCompactOrder(o); ok {
		t.set(key(spaceOrder, o.OrderID), b)
		return nil
	}
	return t.put(key(spaceOrder, o.OrderID), o)
}

func (t *tx) PutReceipt(r *gateway.Receipt) error {
	if b, ok := appendCompactReceipt(make([]byte, 0, 128), r); ok {
		t.set(receiptKey(r.TaskNo, r.Attempt), b)
	} else if err := t.put(receiptKey(r.TaskNo, r.Attempt), r); err != nil {
		return err
	}
	e := r.Event()
	at := t.now()
	if b, ok := appendCompactReceiptEvent(make([]byte, 0, 128), r.TaskNo, at, &e); ok {
		t.ctr.event++
		t.set(seqKey(spaceEvent, t.ctr.event), b)
		return nil
	}
	data, err := jsonMarshal(e)
	if err != nil {
		return err
	}
	return t.appendEventData(sync.KindReceipt, r.TaskNo, at, data)
}

func (t *tx) AppendAudit(a *gateway.AuditEntry) error {
	t.ctr.audit++
	a.Seq = t.ctr.audit
	if a.At.IsZero() {
		a.At = t.now()
	}
	if err := t.put(seqKey(spaceAudit, a.Seq), storedAudit{AuditEntry: *a, EventSeq: t.ctr.event + 1}); err != nil {
		return err
	}
	data, err := jsonMarshal(a.Event())
	if err != nil {
		return err
	}
	return t.appendEventData(sync.KindAudit, a.TaskNo, t.now(), data)
}

func (t *tx) PutFailover(f *gateway.Failover) error {
	return t.put(key(spaceFailover, f.PrinterID), f)
}

func (t *tx) NextTaskSeq() uint64 {
	t.ctr.task++
	return t.ctr.task
}

// appendEventData appends an outbox event of compact JSON data, as JSON
// (see compactEventVersion for the events kept compact).
func (t *tx) appendEventData(kind, taskNo string, at time.Time, data []byte) error {
	t.ctr.event++
	b, err := sync.AppendEvent(append(make([]byte, 0, len(data)+128), formatVersion), &sync.Event{
		Seq: t.ctr.event, Kind: kind, TaskNo: taskNo, At: at, Data: data,
	})
	if err != nil {
		return fmt.Errorf("encode value: %w", err)
	}
	t.set(seqKey(spaceEvent, t.ctr.event), b)
	return nil
}

func (t *tx) Meta(name string) (uint64, error) {
	b, err := t.get(key(spaceMeta, "user", name))
	if errors.Is(err, bdg.ErrKeyNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", name, err)
	}
	if len(b) != 8 {
		return 0, fmt.Errorf("read %s: bad value", name)
	}
	return binary.BigEndian.Uint64(b), nil
}

func (t *tx) SetMeta(name string, v uint64) {
	t.set(key(spaceMeta, "user", name), binary.BigEndian.AppendUint64(nil, v))
}

func (t *tx) DeleteEvent(seq uint64) {
	t.del(seqKey(spaceEvent, seq))
}

func (t *tx) LastEventSeq() (uint64, error) {
	if t.overlay != nil {
		return t.ctr.event, nil
	}
	b, err := t.get(metaEventSeq)
	if errors.Is(err, bdg.ErrKeyNotFound) {
		return 0, nil
	}
	if err != nil || len(b) != 8 {
		return 0, fmt.Errorf("read event seq: bad value %v", err)
	}
	return binary.BigEndian.Uint64(b), nil
}
