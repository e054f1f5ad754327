package main

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
)

// The comparison at the heart of reconcile: the store's tasks against the
// cloud's, each difference with what would repair it. Nothing here does
// I/O; reconcile.go reads both sides and prints the result.

// taskState is a task as one side knows it.
type taskState struct {
	OrderID string            `json:"-"`
	Status  storeprint.Status `json:"status"`
	Attempt int               `json:"attempt"`
}

func (s *taskState) String() string {
	if s == nil {
		return "-"
	}
	if s.Attempt == 0 {
		return string(s.Status)
	}
	return fmt.Sprintf("%s, attempt %d", s.Status, s.Attempt)
}

// kind is how a task differs between the store and the cloud.
type kind string

const (
	kindMissingInCloud kind = "missing_in_cloud" // the store has it, the cloud never heard of it
	kindMissingAtStore kind = "missing_at_store" // the cloud has it, the store does not
	kindStatus         kind = "status"           // both have it, in different statuses
	kindAttempt        kind = "attempt"          // same status, different attempt numbers
)

// kinds in the order a summary lists them.
var kinds = []kind{kindMissingAtStore, kindMissingInCloud, kindStatus, kindAttempt}

func (k kind) words() string {
	switch k {
	case kindMissingAtStore:
		return "missing at the store"
	case kindMissingInCloud:
		return "missing in the cloud"
	case kindStatus:
		return "different status"
	default:
		return "different attempt"
	}
}

// repair is what brings a difference back in line.
type repair string

const (
	// repairDeliver: a cloud order the store never got; --apply posts the
	// order to the gateway's POS API, which accepts an order_id once.
	repairDeliver repair = "deliver"
	// repairLink: the cloud is behind the store; the gateway's outbox
	// holds the events and the sync link replays them.
	repairLink repair = "link"
	// repairPerson: nothing automatic is safe; a person looks.
	repairPerson repair = "person"
)

// difference is one task whose state differs.
type difference struct {
	TaskNo  string     `json:"task_no"`
	OrderID string     `json:"order_id"`
	Kind    kind       `json:"kind"`
	Gateway *taskState `json:"gateway"` // nil: the store has no such task
	Cloud   *taskState `json:"cloud"`   // nil: the cloud has no such task
	Repair  repair     `json:"repair"`
	Note    string     `json:"note"` // the repair in words
}

// linkState is the gateway's sync link as its /healthz shows it.
type linkState struct {
	Configured bool      `json:"configured"` // false: the gateway has no [cloud] section
	Connected  bool      `json:"connected"`
	Since      time.Time `json:"since,omitzero"`
	Cursor     uint64    `json:"cursor"`   // highest seq the cloud acknowledged
	LastSeq    uint64    `json:"last_seq"` // the gateway's newest event
	Pending    uint64    `json:"pending"`  // events the cloud does not have yet
	LastError  string    `json:"last_error,omitempty"`
	// Incarnation is the gateway's data dir; Resync its last catching up.
	Incarnation string       `json:"incarnation"`
	Resync      *resyncState `json:"resync,omitempty"`
}

// behind reports whether the cloud may not know all the store knows.
func (l linkState) behind() bool { return l.Configured && (!l.Connected || l.Pending > 0) }

// note says in a sentence what the link's state means for the differences.
func (l linkState) note() string {
	switch {
	case !l.Configured:
		return "the gateway has no cloud link configured ([cloud] in its config): the cloud hears nothing from it"
	case l.Pending > 0:
		return fmt.Sprintf("the link is %s behind; differences may clear by themselves", plural(int(l.Pending), "event"))
	case !l.Connected:
		return "the link is down; cloud orders wait for it"
	}
	return ""
}

// describe is the link's state in words, for people.
func (l linkState) describe() string {
	if !l.Configured {
		return "not configured"
	}
	var b strings.Builder
	if l.Connected {
		b.WriteString("connected")
	} else {
		b.WriteString("down")
	}
	if !l.Since.IsZero() {
		fmt.Fprintf(&b, " since %s", l.Since.Local().Format(time.DateTime))
	}
	if !l.Connected && l.LastError != "" {
		fmt.Fprintf(&b, " (%s)", l.LastError)
	}
	fmt.Fprintf(&b, "; cloud acknowledged event %d of %d, %d pending", l.Cursor, l.LastSeq, l.Pending)
	return b.String()
}

// compare lists every task whose state differs between the store (gw) and
// the cloud (cl), by task_no, each with its repair given the link's state.
func compare(gw, cl map[string]*taskState, link linkState) []difference {
	var out []difference
	for no, g := range gw {
		c := cl[no]
		d := difference{TaskNo: no, OrderID: g.OrderID, Gateway: g, Cloud: c}
		switch {
		case c == nil:
			d.Kind = kindMissingInCloud
		case c.Status != g.Status:
			d.Kind = kindStatus
		case c.Attempt != g.Attempt:
			d.Kind = kindAttempt
		default:
			continue
		}
		out = append(out, d)
	}
	for no, c := range cl {
		if gw[no] == nil {
			out = append(out, difference{TaskNo: no, OrderID: c.OrderID, Kind: kindMissingAtStore, Cloud: c})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].TaskNo < out[j].TaskNo })
	for i := range out {
		out[i].Repair, out[i].Note = repairFor(&out[i], link)
	}
	return out
}

// repairFor decides how d can be repaired. The gateway is the truth about
// a task it has: the cloud only mirrors what the link reported. A task the
// store does not have is safe to deliver only when the cloud itself is
// still waiting to deliver it (pending_delivery): the gateway accepts an
// order_id once, so a delivery racing the link prints nothing twice.
func repairFor(d *difference, link linkState) (repair, string) {
	if d.Kind == kindMissingAtStore {
		if d.Cloud.Status == cloud.StatusPendingDelivery {
			note := "--apply delivers order " + d.OrderID + " through the gateway"
			if link.Configured && link.Connected {
				note += " (unless the link does first)"
			}
			return repairDeliver, note
		}
		return repairPerson, fmt.Sprintf("a person: the cloud saw it %s, the store has no such task (gateway data replaced?)", d.Cloud.Status)
	}
	// The cloud lacks the task or has an older state of it.
	switch {
	case !link.Configured:
		return repairPerson, "a person: the gateway has no cloud link to send it"
	case link.Pending > 0 && link.Connected:
		return repairLink, "the sync link is replaying it"
	case link.Pending > 0:
		return repairLink, "the sync link replays it once connected"
	}
	return repairPerson, "nothing pending on the link: run again; if it stays, the cloud missed an event"
}

// check is one comparison of the two sides.
type check struct {
	At           time.Time     `json:"at"`
	Link         linkState     `json:"link"`
	LinkBehind   bool          `json:"link_behind"`
	LinkNote     string        `json:"link_note,omitempty"`
	GatewayTasks int           `json:"gateway_tasks"`
	CloudTasks   int           `json:"cloud_tasks"`
	Differences  []difference  `json:"differences"`
	Counts       map[kind]int  `json:"counts"`
	Incarnations *incarnations `json:"incarnations,omitempty"`
}

func newCheck(gw, cl map[string]*taskState, link linkState, at time.Time) *check {
	c := &check{
		At: at, Link: link, LinkBehind: link.behind(), LinkNote: link.note(),
		GatewayTasks: len(gw), CloudTasks: len(cl),
		Differences: compare(gw, cl, link), Counts: map[kind]int{},
	}
	if c.Differences == nil {
		c.Differences = []difference{}
	}
	for _, d := range c.Differences {
		c.Counts[d.Kind]++
	}
	return c
}

// inSync reports whether every task was compared and none differs.
func (c *check) inSync() bool { return len(c.Differences) == 0 }

// summary is the check in one line.
func (c *check) summary() string {
	if c.inSync() {
		return fmt.Sprintf("in sync: %s, the same at the store and in the cloud", plural(c.GatewayTasks, "task"))
	}
	var b strings.Builder
	b.WriteString(plural(len(c.Differences), "difference"))
	var parts []string
	for _, k := range kinds {
		if n := c.Counts[k]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, k.words()))
		}
	}
	if len(parts) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(parts, ", "))
	}
	fmt.Fprintf(&b, " between %s at the store and %d in the cloud", plural(c.GatewayTasks, "task"), c.CloudTasks)
	if c.LinkNote != "" {
		b.WriteString("; " + c.LinkNote)
	}
	return b.String()
}

// plural is "1 task", "2 tasks".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
