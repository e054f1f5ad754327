package sync

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"time"
	"unicode/utf8"
)

// The cloud reads every event twice over, the frame that carries it and
// then its data, and a chain back from an outage sends millions of them.
// The frames and data the gateway writes have one shape: flat objects of
// known keys, strings without escapes. The scanner below reads that shape
// directly; anything else (an escape, an unknown or differently cased
// key, a null, a number that is not a plain unsigned integer, a nested
// value where a flat one goes) makes it give up, and encoding/json reads
// the input instead, so what is accepted, refused and how it decodes is
// always encoding/json's. The tests hold the two to the same answers.

// scanner reads JSON from b at i.
type scanner struct {
	b []byte
	i int
	// compact: note in spaced whether white space was skipped between
	// tokens.
	compact, spaced bool
	strs            *strs // nil: every text is a new string
}

// strs keeps the last strings read, for the texts a batch repeats (a
// task's number in each of its events, its order, station, printer and
// status), so that reading a frame does not allocate each again.
type strs struct {
	recent [16]string
	next   int
}

func (c *strs) get(v []byte) string {
	if c == nil || len(v) == 0 {
		return string(v)
	}
	for _, s := range &c.recent {
		if s == string(v) {
			return s
		}
	}
	s := string(v)
	c.recent[c.next] = s
	c.next = (c.next + 1) % len(c.recent)
	return s
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func (s *scanner) ws() {
	if s.i < len(s.b) && s.b[s.i] > ' ' {
		return // the usual case: no white space
	}
	from := s.i
	for s.i < len(s.b) && isSpace(s.b[s.i]) {
		s.i++
	}
	if s.compact && s.i > from {
		s.spaced = true
	}
}

// next skips white space and reports whether the next byte is c, taking
// it if so.
func (s *scanner) next(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// end reports whether only white space is left.
func (s *scanner) end() bool {
	s.ws()
	return s.i == len(s.b)
}

// str reads a string without escapes or control characters, in valid
// UTF-8, and returns its contents.
func (s *scanner) str() ([]byte, bool) {
	if !s.next('"') {
		return nil, false
	}
	b, from := s.b, s.i
	i, high := plainRun(b, from)
	if i == len(b) || b[i] != '"' {
		return nil, false // an escape, a control character or the end
	}
	s.i = i + 1
	v := b[from:i]
	return v, high < utf8.RuneSelf || utf8.Valid(v)
}

// plainRun returns where the bytes from i on stop being plain (or len(b))
// and the bits set in any byte before it. It reads eight bytes at a time
// while none of them is a quote, a backslash or a control character.
func plainRun(b []byte, i int) (int, byte) {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	var high uint64
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		q, bs := w^(ones*'"'), w^(ones*'\\')
		// A byte of zero in q or bs, or a byte below 0x20 in w.
		if ((q-ones)&^q|(bs-ones)&^bs|(w-ones*0x20)&^w)&highs != 0 {
			break
		}
		high |= w
	}
	h := byte(high | high>>8 | high>>16 | high>>24 | high>>32 | high>>40 | high>>48 | high>>56)
	for i < len(b) && plain[b[i]] {
		h |= b[i]
		i++
	}
	return i, h
}

// plain is the bytes a string holds as they are: all but the quote, the
// backslash and control characters.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// text reads a string as str does, as a Go string.
func (s *scanner) text() (string, bool) {
	v, ok := s.str()
	return s.strs.get(v), ok
}

// textTo reads a string as text does into v, of any string type.
func textTo[T ~string](s *scanner, v *T) bool {
	t, ok := s.text()
	*v = T(t)
	return ok
}

// uint reads a plain unsigned integer that fits in 63 bits.
func (s *scanner) uint() (uint64, bool) {
	s.ws()
	from := s.i
	var n uint64
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		if n > (1<<63-1)/10 {
			return 0, false
		}
		n = n*10 + uint64(s.b[s.i]-'0')
		s.i++
	}
	digits := s.i - from
	if digits == 0 || (digits > 1 && s.b[from] == '0') || n > 1<<63-1 {
		return 0, false
	}
	if s.i < len(s.b) && (s.b[s.i] == '.' || s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		return 0, false
	}
	return n, true
}

// uintTo reads a plain unsigned integer as uint does into n.
func (s *scanner) uintTo(n *uint64) bool {
	var ok bool
	*n, ok = s.uint()
	return ok
}

// intTo reads a plain unsigned integer that fits in an int into n.
func (s *scanner) intTo(n *int) bool {
	u, ok := s.uint()
	*n = int(u)
	return ok && u <= math.MaxInt
}

// boolean reads true or false into v.
func (s *scanner) boolean(v *bool) bool {
	switch {
	case s.literal("true"):
		*v = true
	case s.literal("false"):
		*v = false
	default:
		return false
	}
	return true
}

// time reads a string as time.Time's UnmarshalJSON does.
func (s *scanner) time(t *time.Time) bool {
	s.ws()
	from := s.i
	if _, ok := s.str(); !ok {
		return false
	}
	return t.UnmarshalJSON(s.b[from:s.i]) == nil
}

// literal reads word (true, false, null) if it comes next.
func (s *scanner) literal(word string) bool {
	s.ws()
	if len(s.b)-s.i >= len(word) && string(s.b[s.i:s.i+len(word)]) == word {
		s.i += len(word)
		return true
	}
	return false
}

// object reads an object, calling field for each key with the scanner at
// its value; field reads the value and reports whether it could.
func (s *scanner) object(field func(key []byte) bool) bool {
	return s.next('{') && s.list('}', func() bool {
		key, ok := s.str()
		return ok && s.next(':') && field(key)
	})
}

// list reads the items of an array or an object, its opening bracket
// taken, up to its closing one: item reads one item and reports whether
// it could.
func (s *scanner) list(closing byte, item func() bool) bool {
	if s.next(closing) {
		return true
	}
	for {
		if !item() {
			return false
		}
		if s.next(closing) {
			return true
		}
		if !s.next(',') {
			return false
		}
	}
}

// maxScanDepth bounds the nesting the scanner follows in a raw value;
// deeper input goes to encoding/json.
const maxScanDepth = 64

// value skips one JSON value of any kind, checking it as encoding/json
// does, and returns it.
func (s *scanner) value(depth int) ([]byte, bool) {
	s.ws()
	from := s.i
	if s.i >= len(s.b) || depth > maxScanDepth {
		return nil, false
	}
	ok := false
	switch c := s.b[s.i]; {
	case c == '{':
		ok = s.object(func([]byte) bool { _, ok := s.value(depth + 1); return ok })
	case c == '[':
		ok = s.array(depth)
	case c == '"':
		ok = s.rawString()
	case c == '-' || (c >= '0' && c <= '9'):
		ok = s.number()
	default:
		ok = s.literal("true") || s.literal("false") || s.literal("null")
	}
	return s.b[from:s.i], ok
}

func (s *scanner) array(depth int) bool {
	s.i++ // [
	return s.list(']', func() bool {
		_, ok := s.value(depth + 1)
		return ok
	})
}

// rawString skips a string, escapes and all (any bytes but control
// characters, as encoding/json's scanner takes them).
func (s *scanner) rawString() bool {
	s.i++ // "
	for s.i < len(s.b) {
		s.i, _ = plainRun(s.b, s.i)
		if s.i == len(s.b) {
			return false
		}
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return true
		case c < 0x20:
			return false
		case c == '\\':
			s.i++
			if s.i >= len(s.b) {
				return false
			}
			switch s.b[s.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i++
			case 'u':
				if len(s.b)-s.i < 5 {
					return false
				}
				for _, h := range s.b[s.i+1 : s.i+5] {
					if !isHex(h) {
						return false
					}
				}
				s.i += 5
			default:
				return false
			}
		default:
			s.i++
		}
	}
	return false
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// number skips a number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) number() bool {
	if s.b[s.i] == '-' {
		s.i++
	}
	if s.i >= len(s.b) {
		return false
	}
	if s.b[s.i] == '0' {
		s.i++
	} else if !s.digits() {
		return false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if !s.digits() {
			return false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if !s.digits() {
			return false
		}
	}
	return true
}

func (s *scanner) digits() bool {
	from := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > from
}

// scanEventsFrame reads an events frame of the gateway's shape into f.
func scanEventsFrame(b []byte, f *Frame) bool {
	s := &scanner{b: b, strs: &strs{}}
	events := false // a second events array decodes into the first in encoding/json
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "v":
			return s.intTo(&f.V)
		case "type":
			return textTo(s, &f.Type)
		case "events":
			if events {
				return false
			}
			events = true
			return s.events(f)
		}
		return false
	}) && s.end() && f.Type == FrameEvents
}

func (s *scanner) events(f *Frame) bool {
	if !s.next('[') {
		return false
	}
	f.Events = []Event{}
	return s.list(']', func() bool {
		f.Events = append(f.Events, Event{})
		return s.event(&f.Events[len(f.Events)-1])
	})
}

func (s *scanner) event(ev *Event) bool {
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "seq":
			return s.uintTo(&ev.Seq)
		case "kind":
			return textTo(s, &ev.Kind)
		case "task_no":
			return textTo(s, &ev.TaskNo)
		case "at":
			return s.time(&ev.At)
		case "data":
			v, ok := s.value(0)
			ev.Data = json.RawMessage(v[:len(v):len(v)]) // within the frame: see Decode
			return ok
		}
		return false
	})
}

// scanTask reads a task event's data of the gateway's shape into t.
func scanTask(b []byte, t *TaskEvent, c *strs) bool {
	s := &scanner{b: b, strs: c}
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "task_no":
			return textTo(s, &t.TaskNo)
		case "version":
			return s.uintTo(&t.Version)
		case "order_id":
			return textTo(s, &t.OrderID)
		case "station":
			return textTo(s, &t.Station)
		case "printer_id":
			return textTo(s, &t.PrinterID)
		case "status":
			return textTo(s, &t.Status)
		case "attempt":
			return s.intTo(&t.Attempt)
		case "last_error":
			return textTo(s, &t.LastError)
		case "reason":
			return textTo(s, &t.Reason)
		case "source":
			return textTo(s, &t.Source)
		case "copy_of":
			return textTo(s, &t.CopyOf)
		case "backup_from":
			return textTo(s, &t.BackupFrom)
		case "created_at":
			return s.time(&t.CreatedAt)
		case "printed_at":
			if s.literal("null") {
				t.PrintedAt = nil
				return true
			}
			t.PrintedAt = new(time.Time)
			return s.time(t.PrintedAt)
		case "updated_at":
			return s.time(&t.UpdatedAt)
		}
		return false
	}) && s.end()
}

// scanReceipt reads a receipt event's data of the gateway's shape into r.
func scanReceipt(b []byte, r *ReceiptEvent, c *strs) bool {
	s := &scanner{b: b, strs: c}
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "task_no":
			return textTo(s, &r.TaskNo)
		case "attempt":
			return s.intTo(&r.Attempt)
		case "state":
			return textTo(s, &r.State)
		case "printer_id":
			return textTo(s, &r.PrinterID)
		case "payload_sha256":
			return textTo(s, &r.PayloadSHA256)
		case "process_id":
			return textTo(s, &r.ProcessID)
		case "job_id":
			return textTo(s, &r.JobID)
		case "reprint":
			return s.boolean(&r.Reprint)
		case "confirmed_by":
			return textTo(s, &r.ConfirmedBy)
		case "at":
			return s.time(&r.At)
		}
		return false
	}) && s.end()
}

// appendEventsFrame writes an events frame as encoding/json would, for
// the frames the gateway sends: events whose data is compact JSON with
// nothing to escape. It reports false for anything else, and the frame
// goes to encoding/json.
func appendEventsFrame(b []byte, f *Frame) ([]byte, bool) {
	rest := *f
	rest.V, rest.Events = 0, nil
	if f.Type != FrameEvents || len(f.Events) == 0 || !reflect.DeepEqual(rest, Frame{Type: FrameEvents}) {
		return nil, false
	}
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, int64(f.V), 10)
	b = append(b, `,"type":"events","events":[`...)
	for i := range f.Events {
		if i > 0 {
			b = append(b, ',')
		}
		if !compactData(f.Events[i].Data) {
			return nil, false
		}
		var err error
		if b, err = AppendEvent(b, &f.Events[i]); err != nil {
			return nil, false
		}
	}
	return append(b, "]}"...), true
}

// eventsFrameSize is about the bytes of an events frame of events.
func eventsFrameSize(events []Event) int {
	n := 64
	for i := range events {
		n += len(events[i].Kind) + len(events[i].TaskNo) + len(events[i].Data) + 96
	}
	return n
}

// compactData reports whether encoding/json writes data (a
// json.RawMessage) as it is, nil as null: valid JSON without white space between its
// tokens and without the characters it escapes (<, >, &, U+2028, U+2029).
func compactData(data []byte) bool {
	if data == nil {
		return true // null
	}
	for i, c := range data {
		if c == '<' || c == '>' || c == '&' || (c == 0xE2 && i+2 < len(data) && data[i+1] == 0x80 && data[i+2]&^1 == 0xA8) {
			return false
		}
	}
	s := &scanner{b: data, compact: true}
	_, ok := s.value(0)
	return ok && s.i == len(data) && !s.spaced
}
