package badger

import (
	"strconv"

	"github.com/storeprint/storeprint/internal/jsonenc"
)

// Every order and every print writes a task: it is encoded by hand, the
// same bytes as encoding/json (appendjson_test.go holds it to them),
// without its reflection. Its events are encoded likewise (sync.AppendEvent).

// appendStoredTask appends the JSON of a stored task.
func appendStoredTask(b []byte, st *storedTask) ([]byte, error) {
	t := &st.Task
	b = append(b, `{"task_no":`...)
	b = jsonenc.String(b, t.TaskNo)
	b = append(b, `,"order_id":`...)
	b = jsonenc.String(b, t.OrderID)
	b = append(b, `,"station":`...)
	b = jsonenc.String(b, t.Station)
	b = append(b, `,"printer_id":`...)
	b = jsonenc.String(b, t.PrinterID)
	if t.FirstPrinter != "" {
		b = append(b, `,"first_printer":`...)
		b = jsonenc.String(b, t.FirstPrinter)
	}
	b = append(b, `,"status":`...)
	b = jsonenc.String(b, string(t.Status))
	b = append(b, `,"attempt":`...)
	b = strconv.AppendInt(b, int64(t.Attempt), 10)
	b = append(b, `,"failures":`...)
	b = strconv.AppendInt(b, int64(t.Failures), 10)
	b = append(b, `,"last_error":`...)
	b = jsonenc.String(b, t.LastError)
	b = jsonenc.OptString(b, `,"reason":`, string(t.Reason))
	b = jsonenc.OptString(b, `,"source":`, string(t.Source))
	b = jsonenc.OptString(b, `,"table":`, t.Table)
	b = jsonenc.OptString(b, `,"note":`, t.Note)
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
			b = jsonenc.String(b, it.Name)
			b = append(b, `,"qty":`...)
			b = strconv.AppendInt(b, int64(it.Qty), 10)
			b = append(b, `,"station":`...)
			b = jsonenc.String(b, it.Station)
			b = jsonenc.OptString(b, `,"note":`, it.Note)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = jsonenc.OptString(b, `,"copy_of":`, t.CopyOf)
	if t.Reprint {
		b = append(b, `,"reprint":true`...)
	}
	b = jsonenc.OptInt(b, `,"copies":`, t.Copies)
	b = jsonenc.OptInt(b, `,"auto_reprints":`, t.AutoReprints)
	if t.StaleOK {
		b = append(b, `,"stale_ok":true`...)
	}
	b = jsonenc.OptString(b, `,"backup_from":`, t.BackupFrom)
	b = append(b, `,"seq":`...)
	b = strconv.AppendUint(b, t.Seq, 10)
	b = append(b, `,"version":`...)
	b = strconv.AppendUint(b, t.Version, 10)
	var err error
	b = append(b, `,"created_at":`...)
	if b, err = jsonenc.Time(b, t.CreatedAt); err != nil {
		return nil, err
	}
	b = append(b, `,"next_at":`...)
	if b, err = jsonenc.Time(b, t.NextAt); err != nil {
		return nil, err
	}
	b = append(b, `,"printed_at":`...)
	if t.PrintedAt == nil {
		b = append(b, "null"...)
	} else if b, err = jsonenc.Time(b, *t.PrintedAt); err != nil {
		return nil, err
	}
	b = append(b, `,"updated_at":`...)
	if b, err = jsonenc.Time(b, t.UpdatedAt); err != nil {
		return nil, err
	}
	b = jsonenc.OptString(b, `,"lease_token":`, t.LeaseToken)
	if !t.LeaseExpires.IsZero() {
		b = append(b, `,"lease_expires":`...)
		if b, err = jsonenc.Time(b, t.LeaseExpires); err != nil {
			return nil, err
		}
	}
	if t.RecalledAt != nil {
		b = append(b, `,"recalled_at":`...)
		if b, err = jsonenc.Time(b, *t.RecalledAt); err != nil {
			return nil, err
		}
	}
	if st.EventSeq != 0 {
		b = append(b, `,"event_seq":`...)
		b = strconv.AppendUint(b, st.EventSeq, 10)
	}
	return append(b, '}'), nil
}
