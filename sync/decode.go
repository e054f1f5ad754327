package sync

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/storeprint/storeprint"
)

// Bounds an event must keep.
const (
	MaxSeq     = 1 << 62 // seqs and versions fit PostgreSQL's bigint with room
	MaxVersion = 1 << 62
	MaxText    = 4096 // characters in an error, reason or operator
	// MaxWindow bounds how far past the cloud's cursor a gateway may send:
	// the cloud refuses (does not store, does not claim) a seq beyond it.
	MaxWindow = 50000
	// MaxVersionJump bounds how far a task's version may move past the
	// version the cloud holds from the same incarnation: a task changes a
	// few times, never millions. A larger jump is dead-lettered.
	MaxVersionJump = 10000
)

// Decoded is an event's data, checked: exactly one field is set for the
// known kinds, none for a kind from a newer gateway.
type Decoded struct {
	Task    *TaskEvent
	Receipt *ReceiptEvent
	Audit   *AuditEvent
}

// DecodeEvent checks one outbox event the way the cloud does before it
// stores it, and decodes its data. The gateway's tests run every event it
// writes through it: whatever the gateway writes, the cloud accepts.
//
// A kind this side does not know is accepted when its data is valid JSON:
// a newer gateway's event is stored and applied by a newer cloud.
func DecodeEvent(ev *Event) (Decoded, error) {
	if ev.checked != nil {
		return ev.checked.d, ev.checked.err
	}
	return decodeEvent(ev, nil)
}

// checked is what DecodeEvent made of an event.
type checked struct {
	d   Decoded
	err error
}

// CheckEvents decodes each event with DecodeEvent ahead of its use and
// keeps the result with the event, so that DecodeEvent on it later (on
// the event or a copy of it) answers without decoding again: a reader of
// frames calls it so that decoding overlaps the work on the batch before.
// The events must not change afterwards.
func CheckEvents(events []Event) {
	done, c := make([]checked, len(events)), &strs{}
	for i := range events {
		done[i].d, done[i].err = decodeEvent(&events[i], c)
		events[i].checked = &done[i]
	}
}

// decodeEvent is DecodeEvent, reusing the strings c keeps (nil: none).
func decodeEvent(ev *Event, c *strs) (Decoded, error) {
	var d Decoded
	if ev.Seq == 0 || ev.Seq > MaxSeq {
		return d, fmt.Errorf("seq %d is out of range", ev.Seq)
	}
	if ev.At.IsZero() {
		return d, fmt.Errorf("event %d: at is required", ev.Seq)
	}
	if err := checkText("task_no", ev.TaskNo); err != nil {
		return d, fmt.Errorf("event %d: %w", ev.Seq, err)
	}
	data := ev.Data
	if len(data) == 0 {
		data = json.RawMessage("null")
	}
	// PostgreSQL's text and jsonb hold no NUL character.
	if bytes.IndexByte(data, 0) >= 0 || hasEscapedNUL(data) {
		return d, fmt.Errorf("event %d: data holds a NUL character", ev.Seq)
	}
	if !utf8.Valid(data) {
		return d, fmt.Errorf("event %d: data is not valid UTF-8", ev.Seq)
	}
	// The known kinds' data is checked as it is decoded (by the scanner,
	// or by json.Unmarshal, which checks all of it before it decodes any).
	known := ev.Kind == KindTask || ev.Kind == KindReceipt || ev.Kind == KindAudit
	if !known && !json.Valid(data) {
		return d, fmt.Errorf("event %d: data is not valid JSON", ev.Seq)
	}
	var err error
	switch ev.Kind {
	case KindTask:
		d.Task = new(TaskEvent)
		if !scanTask(data, d.Task, c) {
			*d.Task = TaskEvent{}
			err = json.Unmarshal(data, d.Task)
		}
		if err == nil {
			err = d.Task.check(ev)
		}
	case KindReceipt:
		d.Receipt = new(ReceiptEvent)
		if !scanReceipt(data, d.Receipt, c) {
			*d.Receipt = ReceiptEvent{}
			err = json.Unmarshal(data, d.Receipt)
		}
		if err == nil {
			err = d.Receipt.check(ev)
		}
	case KindAudit:
		d.Audit = new(AuditEvent)
		if err = json.Unmarshal(data, d.Audit); err == nil {
			err = d.Audit.check(ev)
		}
	case "":
		err = fmt.Errorf("kind is required")
	default:
		err = storeprint.CheckID("kind", ev.Kind) // a newer gateway's kind reads like one
	}
	if err != nil {
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) {
			return Decoded{}, fmt.Errorf("event %d: data is not valid JSON", ev.Seq)
		}
		return Decoded{}, fmt.Errorf("event %d (%s): %w", ev.Seq, ev.Kind, err)
	}
	return d, nil
}

// hasEscapedNUL reports whether data holds the escape \u0000 (its hex
// digits in either case), without a lower-cased copy of data.
func hasEscapedNUL(data []byte) bool {
	for {
		i := bytes.Index(data, []byte(`\u00`))
		if i < 0 {
			return false
		}
		data = data[i+4:]
		if len(data) >= 2 && data[0] == '0' && data[1] == '0' {
			return true
		}
	}
}

// CheckTask checks a task state that travels outside an event (snapshot
// and states frames) with the rules of DecodeEvent; times left out become at.
func CheckTask(t *TaskEvent, at time.Time) error { return t.check(&Event{At: at}) }

// CheckReceipt is CheckTask for a receipt.
func CheckReceipt(r *ReceiptEvent, at time.Time) error { return r.check(&Event{At: at}) }

func (t *TaskEvent) check(ev *Event) error {
	switch {
	case t.TaskNo == "":
		return fmt.Errorf("task_no is required")
	case ev.TaskNo != "" && ev.TaskNo != t.TaskNo:
		return fmt.Errorf("task_no %q does not match the event's %q", t.TaskNo, ev.TaskNo)
	case t.Version == 0 || t.Version > MaxVersion:
		return fmt.Errorf("task version %d is out of range", t.Version)
	case !t.Status.Valid():
		return fmt.Errorf("unknown task status %q (known: %s)", t.Status, storeprint.StatusList())
	case !t.Reason.Valid():
		return fmt.Errorf("unknown reason %q", t.Reason)
	case !t.Source.Valid():
		return fmt.Errorf("unknown source %q", t.Source)
	case t.Attempt < 0:
		return fmt.Errorf("attempt %d is negative", t.Attempt)
	}
	if err := storeprint.CheckTaskNo("task_no", t.TaskNo); err != nil {
		return err
	}
	if err := checkIDs("order_id", t.OrderID, "station", t.Station, "printer_id", t.PrinterID, "backup_from", t.BackupFrom); err != nil {
		return err
	}
	if t.CopyOf != "" {
		if err := storeprint.CheckTaskNo("copy_of", t.CopyOf); err != nil {
			return err
		}
	}
	if err := checkText("last_error", t.LastError); err != nil {
		return err
	}
	t.CreatedAt = orAt(t.CreatedAt, ev.At)
	t.UpdatedAt = orAt(t.UpdatedAt, ev.At)
	return nil
}

func (r *ReceiptEvent) check(ev *Event) error {
	switch {
	case r.TaskNo == "":
		return fmt.Errorf("task_no is required")
	case ev.TaskNo != "" && ev.TaskNo != r.TaskNo:
		return fmt.Errorf("task_no %q does not match the event's %q", r.TaskNo, ev.TaskNo)
	case r.Attempt < 0:
		return fmt.Errorf("attempt %d is negative", r.Attempt)
	case !r.State.Valid():
		return fmt.Errorf("unknown receipt state %q", r.State)
	}
	if err := storeprint.CheckTaskNo("task_no", r.TaskNo); err != nil {
		return err
	}
	if err := checkIDs("printer_id", r.PrinterID); err != nil {
		return err
	}
	if err := checkTexts("payload_sha256", r.PayloadSHA256, "process_id", r.ProcessID, "job_id", r.JobID); err != nil {
		return err
	}
	if r.ConfirmedBy != "" {
		// A newer gateway's word is kept; it must read like one.
		if err := storeprint.CheckID("confirmed_by", string(r.ConfirmedBy)); err != nil {
			return err
		}
	}
	r.At = orAt(r.At, ev.At)
	return nil
}

func (a *AuditEvent) check(ev *Event) error {
	if a.ID == "" || a.Action == "" {
		return fmt.Errorf("an audit event needs an id and an action")
	}
	// An action this side does not know is kept: the trail records what a
	// newer gateway did. It must still read like one.
	if err := storeprint.CheckID("action", string(a.Action)); err != nil {
		return err
	}
	if err := checkTexts("id", a.ID, "operator", a.Operator, "reason", a.Reason, "task_no", a.TaskNo); err != nil {
		return err
	}
	a.At = orAt(a.At, ev.At)
	return nil
}

// checkIDs checks the ids that are set, given as name, value pairs.
func checkIDs(pairs ...string) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] == "" {
			continue
		}
		if err := storeprint.CheckID(pairs[i], pairs[i+1]); err != nil {
			return err
		}
	}
	return nil
}

// checkTexts is checkText for name, value pairs.
func checkTexts(pairs ...string) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		if err := checkText(pairs[i], pairs[i+1]); err != nil {
			return err
		}
	}
	return nil
}

func checkText(name, s string) error {
	switch {
	case strings.IndexByte(s, 0) >= 0:
		return fmt.Errorf("%s holds a NUL character", name)
	case !utf8.ValidString(s):
		return fmt.Errorf("%s is not valid UTF-8", name)
	case utf8.RuneCountInString(s) > MaxText:
		return fmt.Errorf("%s is longer than %d characters", name, MaxText)
	}
	return nil
}

func orAt(t, at time.Time) time.Time {
	if t.IsZero() {
		return at
	}
	return t
}
