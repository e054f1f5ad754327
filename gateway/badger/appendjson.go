package badger

import (
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/storeprint/storeprint/sync"
)

// The values every order and every print writes (a task, its state for
// the cloud, the outbox event around it) are encoded by hand: the same
// bytes as encoding/json (appendjson_test.go holds them to it), without
// its reflection, and without compacting the event's data a second time.

// appendStoredTask appends the JSON of a stored task.
func appendStoredTask(b []byte, st *storedTask) ([]byte, error) {
	t := &st.Task
	b = append(b, `{"task_no":`...)
	b = appendJSONString(b, t.TaskNo)
	b = append(b, `,"order_id":`...)
	b = appendJSONString(b, t.OrderID)
	b = append(b, `,"station":`...)
	b = appendJSONString(b, t.Station)
	b = append(b, `,"printer_id":`...)
	b = appendJSONString(b, t.PrinterID)
	if t.FirstPrinter != "" {
		b = append(b, `,"first_printer":`...)
		b = appendJSONString(b, t.FirstPrinter)
	}
	b = append(b, `,"status":`...)
	b = appendJSONString(b, string(t.Status))
	b = append(b, `,"attempt":`...)
	b = strconv.AppendInt(b, int64(t.Attempt), 10)
	b = append(b, `,"failures":`...)
	b = strconv.AppendInt(b, int64(t.Failures), 10)
	b = append(b, `,"last_error":`...)
	b = appendJSONString(b, t.LastError)
	b = appendOptString(b, `,"reason":`, string(t.Reason))
	b = appendOptString(b, `,"source":`, string(t.Source))
	b = appendOptString(b, `,"table":`, t.Table)
	b = appendOptString(b, `,"note":`, t.Note)
	b = append(b, `,"items":`...)
	if t.Items == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, it := range t.Items {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"name":`...)
			b = appendJSONString(b, it.Name)
			b = append(b, `,"qty":`...)
			b = strconv.AppendInt(b, int64(it.Qty), 10)
			b = append(b, `,"station":`...)
			b = appendJSONString(b, it.Station)
			b = appendOptString(b, `,"note":`, it.Note)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = appendOptString(b, `,"copy_of":`, t.CopyOf)
	if t.Reprint {
		b = append(b, `,"reprint":true`...)
	}
	b = appendOptInt(b, `,"copies":`, t.Copies)
	b = appendOptInt(b, `,"auto_reprints":`, t.AutoReprints)
	if t.StaleOK {
		b = append(b, `,"stale_ok":true`...)
	}
	b = appendOptString(b, `,"backup_from":`, t.BackupFrom)
	b = append(b, `,"seq":`...)
	b = strconv.AppendUint(b, t.Seq, 10)
	b = append(b, `,"version":`...)
	b = strconv.AppendUint(b, t.Version, 10)
	var err error
	b = append(b, `,"created_at":`...)
	if b, err = appendTime(b, t.CreatedAt); err != nil {
		return nil, err
	}
	b = append(b, `,"next_at":`...)
	if b, err = appendTime(b, t.NextAt); err != nil {
		return nil, err
	}
	b = append(b, `,"printed_at":`...)
	if t.PrintedAt == nil {
		b = append(b, "null"...)
	} else if b, err = appendTime(b, *t.PrintedAt); err != nil {
		return nil, err
	}
	b = append(b, `,"updated_at":`...)
	if b, err = appendTime(b, t.UpdatedAt); err != nil {
		return nil, err
	}
	b = appendOptString(b, `,"lease_token":`, t.LeaseToken)
	if !t.LeaseExpires.IsZero() {
		b = append(b, `,"lease_expires":`...)
		if b, err = appendTime(b, t.LeaseExpires); err != nil {
			return nil, err
		}
	}
	if st.EventSeq != 0 {
		b = append(b, `,"event_seq":`...)
		b = strconv.AppendUint(b, st.EventSeq, 10)
	}
	return append(b, '}'), nil
}

// appendTaskEvent appends the JSON of a task's state for the cloud.
func appendTaskEvent(b []byte, e *sync.TaskEvent) ([]byte, error) {
	b = append(b, `{"task_no":`...)
	b = appendJSONString(b, e.TaskNo)
	b = append(b, `,"version":`...)
	b = strconv.AppendUint(b, e.Version, 10)
	b = append(b, `,"order_id":`...)
	b = appendJSONString(b, e.OrderID)
	b = append(b, `,"station":`...)
	b = appendJSONString(b, e.Station)
	b = append(b, `,"printer_id":`...)
	b = appendJSONString(b, e.PrinterID)
	b = append(b, `,"status":`...)
	b = appendJSONString(b, string(e.Status))
	b = append(b, `,"attempt":`...)
	b = strconv.AppendInt(b, int64(e.Attempt), 10)
	b = appendOptString(b, `,"last_error":`, e.LastError)
	b = appendOptString(b, `,"reason":`, string(e.Reason))
	b = appendOptString(b, `,"source":`, string(e.Source))
	b = appendOptString(b, `,"copy_of":`, e.CopyOf)
	b = appendOptString(b, `,"backup_from":`, e.BackupFrom)
	var err error
	b = append(b, `,"created_at":`...)
	if b, err = appendTime(b, e.CreatedAt); err != nil {
		return nil, err
	}
	if e.PrintedAt != nil {
		b = append(b, `,"printed_at":`...)
		if b, err = appendTime(b, *e.PrintedAt); err != nil {
			return nil, err
		}
	}
	b = append(b, `,"updated_at":`...)
	if b, err = appendTime(b, e.UpdatedAt); err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// appendEvent appends the JSON of an outbox event. Its data must be
// compact JSON (as encoding/json writes it).
func appendEvent(b []byte, e *sync.Event) ([]byte, error) {
	b = append(b, `{"seq":`...)
	b = strconv.AppendUint(b, e.Seq, 10)
	b = append(b, `,"kind":`...)
	b = appendJSONString(b, e.Kind)
	b = appendOptString(b, `,"task_no":`, e.TaskNo)
	b = append(b, `,"at":`...)
	var err error
	if b, err = appendTime(b, e.At); err != nil {
		return nil, err
	}
	b = append(b, `,"data":`...)
	if e.Data == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, e.Data...)
	}
	return append(b, '}'), nil
}

func appendOptString(b []byte, name, s string) []byte {
	if s == "" {
		return b
	}
	return appendJSONString(append(b, name...), s)
}

func appendOptInt(b []byte, name string, n int) []byte {
	if n == 0 {
		return b
	}
	return strconv.AppendInt(append(b, name...), int64(n), 10)
}

// appendTime appends a time as encoding/json does (RFC 3339 with
// nanoseconds), and refuses the same times it refuses.
func appendTime(b []byte, t time.Time) ([]byte, error) {
	if y := t.Year(); y < 0 || y > 9999 {
		_, err := json.Marshal(t)
		return nil, err
	}
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"'), nil
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string, escaped as encoding/json
// escapes it: control characters, the HTML characters <, > and &, the
// line and paragraph separators U+2028 and U+2029, and invalid UTF-8 as
// U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
