package postgres

import (
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/sync"
)

// batch is a batch of one incarnation's events in column form, in stored
// numbering (the gateway's seq plus the incarnation's offset): every event
// in the send window, each decoded or dead-lettered.
type batch struct {
	// Every event to store in task_events.
	seqs    []int64
	kinds   []string
	taskNos []string
	ats     []time.Time
	datas   []string

	items   map[int64]*item // by stored seq
	refused int             // seqs past the send window: neither stored nor claimed
}

// item is one event of the batch with what it decoded to, or why not.
type item struct {
	seq     int64 // stored numbering
	wire    uint64
	ev      *sync.Event
	d       sync.Decoded
	invalid string // why it could not be read; "" when it decoded
}

// maxDeadLetterData bounds the data kept of a dead-lettered event.
const maxDeadLetterData = 64 << 10

// decoded is one event of a batch decoded, or why it could not be.
type decoded struct {
	d   sync.Decoded
	err error
}

// decodeEvents decodes every event of a batch, before its transaction
// begins: the transaction holds its locks only for the database's work.
// Events the sync server checked as it read them (sync.CheckEvents) are
// not decoded again.
func decodeEvents(events []sync.Event) []decoded {
	out := make([]decoded, len(events))
	for i := range events {
		out[i].d, out[i].err = sync.DecodeEvent(&events[i])
	}
	return out
}

// newBatch takes the events of a batch after the cursor and within the send
// window past it, with what decodeEvents made of them. An event that does
// not decode is kept, made safe, to be dead-lettered: one bad event never
// refuses the batch. A seq sent twice counts once.
func newBatch(events []sync.Event, dec []decoded, c *cursorRow, now time.Time) *batch {
	b := &batch{items: make(map[int64]*item, len(events))}
	cursor := c.wire()
	for i := range events {
		ev := &events[i]
		if ev.Seq <= cursor {
			continue // stored already: a replay
		}
		if ev.Seq > cursor+sync.MaxWindow || ev.Seq >= incarnationBlock {
			b.refused++
			continue
		}
		seq := int64(ev.Seq) + c.offset
		if b.items[seq] != nil {
			continue
		}
		it := &item{seq: seq, wire: ev.Seq, ev: ev}
		d, err := dec[i].d, dec[i].err
		if err != nil {
			it.invalid = "the event could not be read: " + err.Error()
		}
		it.d = d
		b.items[seq] = it
		b.add(it, now)
	}
	return b
}

// add appends an item to the event columns: as sent when it decoded, else
// its kind, task_no and data made safe for PostgreSQL.
func (b *batch) add(it *item, now time.Time) {
	ev := it.ev
	at := ev.At
	if at.IsZero() {
		at = now
	}
	kind, taskNo, data := ev.Kind, ev.TaskNo, string(ev.Data)
	if len(ev.Data) == 0 {
		data = "null"
	}
	switch {
	case it.invalid != "":
		kind = safeText(kind, 64)
		quoted, _ := json.Marshal(safeText(string(ev.Data), maxDeadLetterData)) // a string always marshals
		data = string(quoted)
		if !storeprint.ValidTaskNo(taskNo) {
			taskNo = ""
		}
	case it.d.Task != nil:
		taskNo = it.d.Task.TaskNo
	case it.d.Receipt != nil:
		taskNo = it.d.Receipt.TaskNo
	}
	b.seqs = append(b.seqs, it.seq)
	b.kinds = append(b.kinds, kind)
	b.taskNos = append(b.taskNos, taskNo)
	b.ats = append(b.ats, at)
	b.datas = append(b.datas, data)
}

// safeText is s without what PostgreSQL's text cannot hold (NUL, invalid
// UTF-8), cut to at most max bytes on a character boundary.
func safeText(s string, max int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\x00", "\uFFFD")
	if len(s) <= max {
		return s
	}
	for max > 0 && !utf8.RuneStart(s[max]) {
		max--
	}
	return s[:max]
}

// fresh returns the items of the stored seqs, in seq order.
func (b *batch) fresh(seqs []int64) []*item {
	stored := make(map[int64]bool, len(seqs))
	for _, s := range seqs {
		stored[s] = true
	}
	out := make([]*item, 0, len(seqs))
	for _, s := range b.seqs {
		if stored[s] {
			out = append(out, b.items[s])
		}
	}
	return out
}
