package sync

import (
	"strconv"

	"github.com/storeprint/storeprint/internal/jsonenc"
)

// The events every order and every print writes are encoded by hand: the
// same bytes as encoding/json, without its reflection, and without
// compacting an event's data a second time.

// AppendTaskEvent appends the JSON of a task's state for the cloud.
func AppendTaskEvent(b []byte, e *TaskEvent) ([]byte, error) {
	b = append(b, `{"task_no":`...)
	b = jsonenc.String(b, e.TaskNo)
	b = append(b, `,"version":`...)
	b = strconv.AppendUint(b, e.Version, 10)
	b = append(b, `,"order_id":`...)
	b = jsonenc.String(b, e.OrderID)
	b = append(b, `,"station":`...)
	b = jsonenc.String(b, e.Station)
	b = append(b, `,"printer_id":`...)
	b = jsonenc.String(b, e.PrinterID)
	b = append(b, `,"status":`...)
	b = jsonenc.String(b, string(e.Status))
	b = append(b, `,"attempt":`...)
	b = strconv.AppendInt(b, int64(e.Attempt), 10)
	b = jsonenc.OptString(b, `,"last_error":`, e.LastError)
	b = jsonenc.OptString(b, `,"reason":`, string(e.Reason))
	b = jsonenc.OptString(b, `,"source":`, string(e.Source))
	b = jsonenc.OptString(b, `,"copy_of":`, e.CopyOf)
	b = jsonenc.OptString(b, `,"backup_from":`, e.BackupFrom)
	var err error
	b = append(b, `,"created_at":`...)
	if b, err = jsonenc.Time(b, e.CreatedAt); err != nil {
		return nil, err
	}
	if e.PrintedAt != nil {
		b = append(b, `,"printed_at":`...)
		if b, err = jsonenc.Time(b, *e.PrintedAt); err != nil {
			return nil, err
		}
	}
	b = append(b, `,"updated_at":`...)
	if b, err = jsonenc.Time(b, e.UpdatedAt); err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// AppendEvent appends the JSON of an event. Its data must be compact
// JSON without the characters encoding/json escapes (as encoding/json
// writes it).
func AppendEvent(b []byte, e *Event) ([]byte, error) {
	b = append(b, `{"seq":`...)
	b = strconv.AppendUint(b, e.Seq, 10)
	b = append(b, `,"kind":`...)
	b = jsonenc.String(b, e.Kind)
	b = jsonenc.OptString(b, `,"task_no":`, e.TaskNo)
	b = append(b, `,"at":`...)
	var err error
	if b, err = jsonenc.Time(b, e.At); err != nil {
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
