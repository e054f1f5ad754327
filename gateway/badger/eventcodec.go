package badger

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/sync"
)

// Every task change and every step of a print appends an outbox event,
// six or more a ticket, and each is written to the store's log once and
// read back once, to be sent. As JSON, with its envelope, a task's event
// took about 440 bytes and a receipt's about 390, half of what a ticket
// wrote to disk. The store keeps them compact instead, and reads them
// back as the same JSON, byte for byte (the cloud sees no difference):
//
//	3 | kind | task no | at | the event's data, field by field, in order
//
// The seq is the key's. Kind 1 is a task's event (sync.TaskEvent), 2 a
// receipt's (sync.ReceiptEvent); other kinds (audit entries, rare) are
// stored as JSON, as are events written by earlier releases (formatVersion).
// Strings are a uvarint length and their bytes; numbers uvarints; a time
// is its Unix seconds (varint), nanoseconds (uvarint) and zone offset in
// seconds (varint), so that it reads back as its JSON would; an optional
// time is a byte 0 (absent) or 1 and the time. A receipt's payload digest,
// when it is 64 lowercase hex digits, is kept as its 32 bytes (flag 1).
const compactEventVersion byte = 3

// Kinds of compact events.
const (
	compactTask    byte = 1
	compactReceipt byte = 2
)

// Flags of a compact receipt event.
const (
	receiptHexDigest = 1 << iota
	receiptReprint
)

// appendCompactTaskEvent appends the compact form of a task's event, or
// reports that its times need JSON (see compactTime).
func appendCompactTaskEvent(b []byte, taskNo string, at time.Time, e *sync.TaskEvent) ([]byte, bool) {
	printed := e.CreatedAt
	if e.PrintedAt != nil {
		printed = *e.PrintedAt
	}
	if !compactTime(at, e.CreatedAt, printed, e.UpdatedAt) {
		return b, false
	}
	b = append(b, compactEventVersion, compactTask)
	b = appendString(b, taskNo)
	b = appendTime(b, at)
	b = appendString(b, e.TaskNo)
	b = binary.AppendUvarint(b, e.Version)
	b = appendString(b, e.OrderID)
	b = appendString(b, e.Station)
	b = appendString(b, e.PrinterID)
	b = appendString(b, string(e.Status))
	b = binary.AppendVarint(b, int64(e.Attempt))
	b = appendString(b, e.LastError)
	b = appendString(b, string(e.Reason))
	b = appendString(b, string(e.Source))
	b = appendString(b, e.CopyOf)
	b = appendString(b, e.BackupFrom)
	b = appendTime(b, e.CreatedAt)
	b = appendOptTime(b, e.PrintedAt)
	return appendTime(b, e.UpdatedAt), true
}

// appendCompactReceiptEvent appends the compact form of a receipt's
// event, or reports that its times need JSON (see compactTime).
func appendCompactReceiptEvent(b []byte, taskNo string, at time.Time, e *sync.ReceiptEvent) ([]byte, bool) {
	if !compactTime(at, e.At) {
		return b, false
	}
	b = append(b, compactEventVersion, compactReceipt)
	b = appendString(b, taskNo)
	b = appendTime(b, at)
	flags := byte(0)
	digest := e.PayloadSHA256
	if d, ok := hexDigest(digest); ok {
		flags |= receiptHexDigest
		digest = d
	}
	if e.Reprint {
		flags |= receiptReprint
	}
	b = append(b, flags)
	b = appendString(b, e.TaskNo)
	b = binary.AppendVarint(b, int64(e.Attempt))
	b = appendString(b, string(e.State))
	b = appendString(b, e.PrinterID)
	b = appendString(b, digest)
	b = appendString(b, e.ProcessID)
	b = appendString(b, e.JobID)
	b = appendString(b, string(e.ConfirmedBy))
	return appendTime(b, e.At), true
}

// hexDigest returns the 32 bytes of a digest of 64 lowercase hex digits.
func hexDigest(s string) (string, bool) {
	if len(s) != 64 {
		return "", false
	}
	d, err := hex.DecodeString(s)
	if err != nil || hex.EncodeToString(d) != s {
		return "", false
	}
	return string(d), true
}

// decodeEvent reads an outbox event as stored, compact or JSON.
func decodeEvent(seq uint64, v []byte) (sync.Event, error) {
	var e sync.Event
	if len(v) == 0 || v[0] != compactEventVersion {
		err := decode(v, &e)
		return e, err
	}
	bad := fmt.Errorf("decode event %d: malformed", seq)
	if len(v) < 2 {
		return e, bad
	}
	kind := v[1]
	r := &compactReader{b: v[2:], ok: true}
	e.Seq = seq
	e.TaskNo = r.string()
	e.At = r.time()
	var err error
	switch kind {
	case compactTask:
		e.Kind = sync.KindTask
		te := sync.TaskEvent{TaskNo: r.string(), Version: r.uvarint(), OrderID: r.string(), Station: r.string(),
			PrinterID: r.string(), Status: storeprint.Status(r.string()), Attempt: int(r.varint()),
			LastError: r.string(), Reason: storeprint.Reason(r.string()), Source: storeprint.Source(r.string()),
			CopyOf: r.string(), BackupFrom: r.string(), CreatedAt: r.time(), PrintedAt: r.optTime(), UpdatedAt: r.time()}
		if r.ok && len(r.b) == 0 {
			e.Data, err = sync.AppendTaskEvent(make([]byte, 0, 384), &te)
		}
	case compactReceipt:
		e.Kind = sync.KindReceipt
		flags := r.byte()
		re := sync.ReceiptEvent{TaskNo: r.string(), Attempt: int(r.varint()), State: storeprint.ReceiptState(r.string()),
			PrinterID: r.string(), PayloadSHA256: r.string(), ProcessID: r.string(), JobID: r.string(),
			Reprint: flags&receiptReprint != 0, ConfirmedBy: storeprint.Confirm(r.string()), At: r.time()}
		if flags&receiptHexDigest != 0 {
			re.PayloadSHA256 = hex.EncodeToString([]byte(re.PayloadSHA256))
		}
		if r.ok && len(r.b) == 0 {
			e.Data, err = json.Marshal(&re)
		}
	default:
		return e, bad
	}
	if err != nil {
		return e, fmt.Errorf("decode event %d: %w", seq, err)
	}
	if !r.ok || len(r.b) != 0 {
		return e, bad
	}
	return e, nil
}

// appendTime appends a time as the compact records keep it: one whose
// RFC 3339 text reads back as the same instant (see compactTime).
func appendTime(b []byte, t time.Time) []byte {
	_, off := t.Zone()
	b = binary.AppendVarint(b, t.Unix())
	b = binary.AppendUvarint(b, uint64(t.Nanosecond()))
	return binary.AppendVarint(b, int64(off))
}

func appendOptTime(b []byte, t *time.Time) []byte {
	if t == nil {
		return append(b, 0)
	}
	return appendTime(append(b, 1), *t)
}

// compactTime reports whether a time's JSON reads back as the same
// instant, which a compact record then keeps: a year of four digits and
// a zone offset of whole minutes below a day. Others (in no event the
// gateway makes) go on being stored as JSON, which refuses or rounds them
// as it always did.
func compactTime(ts ...time.Time) bool {
	for _, t := range ts {
		_, off := t.Zone()
		if y := t.Year(); y < 0 || y > 9999 || off%60 != 0 || off <= -24*3600 || off >= 24*3600 {
			return false
		}
	}
	return true
}

func (r *compactReader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.ok = false
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *compactReader) byte() byte {
	if len(r.b) == 0 {
		r.ok = false
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

// time reads a time as its RFC 3339 text would parse: in UTC at offset
// zero, in the local zone where that has the offset then, else in a
// fixed zone.
func (r *compactReader) time() time.Time {
	sec, nsec, off := r.varint(), r.uvarint(), r.varint()
	if !r.ok || nsec >= 1e9 {
		r.ok = false
		return time.Time{}
	}
	t := time.Unix(sec, int64(nsec))
	if off == 0 {
		return t.UTC()
	}
	if l := t.In(time.Local); zoneOffset(l) == int(off) {
		return l
	}
	return t.In(time.FixedZone("", int(off)))
}

func zoneOffset(t time.Time) int {
	_, off := t.Zone()
	return off
}

func (r *compactReader) optTime() *time.Time {
	switch r.byte() {
	case 0:
		return nil
	case 1:
		t := r.time()
		return &t
	}
	r.ok = false
	return nil
}
