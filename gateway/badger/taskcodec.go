package badger

import (
	"encoding/binary"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
)

// A task is written at each of its changes, three or more a ticket, with
// its ticket's content each time: as JSON about 600 bytes. The store
// keeps it compact instead, field by field in the order of gateway.Task,
// and reads it back as its JSON would read:
//
//	4 | flags | task no | order id | station | printer id | first printer |
//	status | attempt | failures | last error | reason | source | table |
//	note | items | copy of | copies | auto reprints | backup from | seq |
//	version | created at | next at | printed at | updated at | lease token |
//	lease expires | recalled at | event seq
//
// with strings, numbers and times as in compact events (see
// compactEventVersion); items as their number plus one (0: none, JSON
// null), each its name, quantity, station and note. Flags: 1 reprint, 2
// stale_ok. A task with a time or a string its JSON would not read back as
// itself (invalid UTF-8) stays JSON (formatVersion), as do tasks written
// by earlier releases.
const compactTaskVersion byte = 4

const (
	taskReprint = 1 << iota
	taskStaleOK
)

// appendCompactTask appends the compact form of a stored task, or
// reports that it needs JSON.
func appendCompactTask(b []byte, st *storedTask) ([]byte, bool) {
	t := &st.Task
	printed, recalled := t.CreatedAt, t.CreatedAt
	if t.PrintedAt != nil {
		printed = *t.PrintedAt
	}
	if t.RecalledAt != nil {
		recalled = *t.RecalledAt
	}
	if !compactTime(t.CreatedAt, t.NextAt, printed, t.UpdatedAt, t.LeaseExpires, recalled) ||
		!validUTF8(t.TaskNo, t.OrderID, t.Station, t.PrinterID, t.FirstPrinter, string(t.Status), t.LastError,
			string(t.Reason), string(t.Source), t.Table, t.Note, t.CopyOf, t.BackupFrom, t.LeaseToken) {
		return b, false
	}
	for _, it := range t.Items {
		if !validUTF8(it.Name, it.Station, it.Note) {
			return b, false
		}
	}
	flags := byte(0)
	if t.Reprint {
		flags |= taskReprint
	}
	if t.StaleOK {
		flags |= taskStaleOK
	}
	b = append(b, compactTaskVersion, flags)
	for _, s := range []string{t.TaskNo, t.OrderID, t.Station, t.PrinterID, t.FirstPrinter, string(t.Status)} {
		b = appendString(b, s)
	}
	b = binary.AppendVarint(b, int64(t.Attempt))
	b = binary.AppendVarint(b, int64(t.Failures))
	for _, s := range []string{t.LastError, string(t.Reason), string(t.Source), t.Table, t.Note} {
		b = appendString(b, s)
	}
	if t.Items == nil {
		b = append(b, 0)
	} else {
		b = binary.AppendUvarint(b, uint64(len(t.Items))+1)
		for _, it := range t.Items {
			b = appendString(b, it.Name)
			b = binary.AppendVarint(b, int64(it.Qty))
			b = appendString(appendString(b, it.Station), it.Note)
		}
	}
	b = appendString(b, t.CopyOf)
	b = binary.AppendVarint(b, int64(t.Copies))
	b = binary.AppendVarint(b, int64(t.AutoReprints))
	b = appendString(b, t.BackupFrom)
	b = binary.AppendUvarint(b, t.Seq)
	b = binary.AppendUvarint(b, t.Version)
	b = appendTime(b, t.CreatedAt)
	b = appendTime(b, t.NextAt)
	b = appendOptTime(b, t.PrintedAt)
	b = appendTime(b, t.UpdatedAt)
	b = appendString(b, t.LeaseToken)
	if t.LeaseExpires.IsZero() {
		b = appendTime(b, time.Time{}) // left out of its JSON: read back as the zero time
	} else {
		b = appendTime(b, t.LeaseExpires)
	}
	b = appendOptTime(b, t.RecalledAt)
	return binary.AppendUvarint(b, st.EventSeq), true
}

func validUTF8(ss ...string) bool {
	for _, s := range ss {
		if !utf8.ValidString(s) {
			return false
		}
	}
	return true
}

// decodeTask reads a stored task, compact or JSON, into st.
func decodeTask(b []byte, st *storedTask) error {
	if len(b) == 0 || b[0] != compactTaskVersion {
		return decode(b, st)
	}
	if len(b) < 2 {
		return fmt.Errorf("decode task: malformed")
	}
	flags := b[1]
	r := &compactReader{b: b[2:], ok: true}
	t := &st.Task
	*st = storedTask{}
	t.TaskNo, t.OrderID, t.Station, t.PrinterID, t.FirstPrinter = r.string(), r.string(), r.string(), r.string(), r.string()
	t.Status = storeprint.Status(r.string())
	t.Attempt, t.Failures = int(r.varint()), int(r.varint())
	t.LastError, t.Reason, t.Source = r.string(), storeprint.Reason(r.string()), storeprint.Source(r.string())
	t.Table, t.Note = r.string(), r.string()
	if n := r.uvarint(); n > 0 && r.ok {
		if n-1 > uint64(len(r.b)) {
			return fmt.Errorf("decode task: malformed")
		}
		t.Items = make([]storeprint.Item, n-1)
		for i := range t.Items {
			t.Items[i] = storeprint.Item{Name: r.string(), Qty: int(r.varint()), Station: r.string(), Note: r.string()}
		}
	}
	t.CopyOf, t.Reprint = r.string(), flags&taskReprint != 0
	t.Copies, t.AutoReprints = int(r.varint()), int(r.varint())
	t.StaleOK, t.BackupFrom = flags&taskStaleOK != 0, r.string()
	t.Seq, t.Version = r.uvarint(), r.uvarint()
	t.CreatedAt, t.NextAt, t.PrintedAt, t.UpdatedAt = r.time(), r.time(), r.optTime(), r.time()
	t.LeaseToken, t.LeaseExpires = r.string(), r.time()
	t.RecalledAt = r.optTime()
	st.EventSeq = r.uvarint()
	if !r.ok || len(r.b) != 0 {
		return fmt.Errorf("decode task: malformed")
	}
	return nil
}

// decodeGatewayTask is decodeTask for the task alone.
func decodeGatewayTask(b []byte, t *gateway.Task) error {
	var st storedTask
	if err := decodeTask(b, &st); err != nil {
		return err
	}
	*t = st.Task
	return nil
}
