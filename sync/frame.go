package sync

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/storeprint/storeprint"
)

// Frame types. The gateway sends hello, events, snapshot, status,
// down_ack, states (final: learned) and ping frames; the cloud answers
// welcome, ack, states, down and error frames.
//
// After the handshake either side may find the other behind:
//
//   - the cloud behind (its database restored): the welcome's cursor is
//     below what the gateway compacted. The gateway sends snapshot frames,
//     every task it holds with its receipts, the last one final with the
//     seq the snapshot stands for (cursor); the cloud acks it and the
//     event stream resumes after it.
//   - the gateway behind (its data dir restored from an older copy, or
//     wiped): the welcome says behind. The cloud sends states frames (its
//     newer state of tasks the gateway may hold), then the cloud orders
//     the store lost, then a final states frame. The gateway prints
//     nothing it held from before the link came up until that final frame
//     (bounded by a start-up grace), and answers it with a final states
//     frame of its own: until then every link of it hears them again.
//
// Both only happen with a gateway whose hello says resync: an older
// gateway gets the frames of protocol 1 alone.
const (
	FrameHello    = "hello"    // gateway: who it is and what it has applied from the cloud
	FrameWelcome  = "welcome"  // cloud: the cursor to resume the outbox from
	FrameEvents   = "events"   // gateway: a batch of outbox events in seq order
	FrameAck      = "ack"      // cloud: the highest contiguous seq stored
	FrameStatus   = "status"   // gateway: its printers as they are now
	FrameDown     = "down"     // cloud: commands for the store, in seq order
	FrameDownAck  = "down_ack" // gateway: every command up to seq is durable
	FrameError    = "error"    // either side: why it closes the link
	FrameSnapshot = "snapshot" // gateway: tasks and receipts it holds, when the cloud is behind
	FrameStates   = "states"   // cloud: its newer state of tasks, when the gateway is behind
)

// Handshake headers of the websocket upgrade.
const (
	HeaderGateway = "X-Storeprint-Gateway" // the gateway id; the token goes in Authorization: Bearer
)

// Path is where the cloud serves the sync link.
const Path = "/v1/sync"

// Frame is one websocket text message. Only the fields of its type are set.
type Frame struct {
	V    int    `json:"v"`
	Type string `json:"type"`

	GatewayID  string `json:"gateway_id,omitempty"`  // hello
	StoreID    string `json:"store_id,omitempty"`    // hello, welcome
	Version    string `json:"version,omitempty"`     // hello: the gateway's software version
	DownCursor uint64 `json:"down_cursor,omitempty"` // hello: highest command seq applied
	// Incarnation is the data dir's random id, made when it was created
	// (empty for one created before incarnations).
	Incarnation string `json:"incarnation,omitempty"` // hello
	LastSeq     uint64 `json:"last_seq,omitempty"`    // hello: newest outbox event written
	Compacted   uint64 `json:"compacted,omitempty"`   // hello: outbox events removed up to here
	Resync      bool   `json:"resync,omitempty"`      // hello, welcome: this side sends and takes snapshot and states frames

	// Cursor is the highest contiguous seq stored (welcome, ack), the seq
	// a final snapshot stands for, or the down cursor the store may move
	// to after the commands of a down frame.
	Cursor      uint64          `json:"cursor,omitempty"`
	Behind      bool            `json:"behind,omitempty"`       // welcome: states frames come first
	Events      []Event         `json:"events,omitempty"`       // events
	DeadLetters []DeadLetter    `json:"dead_letters,omitempty"` // ack: events stored but not applied
	Tasks       []TaskEvent     `json:"tasks,omitempty"`        // snapshot, states
	Receipts    []ReceiptEvent  `json:"receipts,omitempty"`     // snapshot
	Final       bool            `json:"final,omitempty"`        // snapshot, states: the last frame of the set
	Printers    []PrinterStatus `json:"printers,omitempty"`     // status
	Cluster     *ClusterStatus  `json:"cluster,omitempty"`      // hello, status: the leader's view of its cluster; nil alone
	Commands    []Command       `json:"commands,omitempty"`     // down
	Seq         uint64          `json:"seq,omitempty"`          // down_ack
	Error       string          `json:"error,omitempty"`        // error
	Code        string          `json:"code,omitempty"`         // error: ErrorReplaced, or empty
	// CredentialShared says the gateway's credential is in use on more
	// than one box: its links replaced each other from two addresses
	// (welcome, error).
	CredentialShared bool `json:"credential_shared,omitempty"`
}

// Error frame codes.
const (
	// ErrorReplaced closes a link that a newer link of the same
	// credential replaced: a gateway credential has one live link.
	ErrorReplaced = "replaced"
)

// Hello is what a gateway's hello frame says of the store's data.
type Hello struct {
	Incarnation string
	LastSeq     uint64 // newest outbox event written
	Compacted   uint64 // outbox removed up to here
	DownCursor  uint64 // highest command seq applied
}

// DeadLetter is an event the cloud stored and acknowledged but could not
// apply (a malformed event, a task of another gateway, an impossible
// version or transition). The cloud keeps it with the reason and raises
// an alert; the link goes on past it.
type DeadLetter struct {
	Seq    uint64 `json:"seq"`
	Reason string `json:"reason"`
}

// PrinterStatus is one printer as the gateway last read it.
type PrinterStatus struct {
	ID       string                  `json:"printer_id"`
	Status   storeprint.PrinterState `json:"status"`
	Stations []string                `json:"stations"`
	Backup   string                  `json:"backup,omitempty"`
	Failover bool                    `json:"failover"` // its stations print on the backup now
	// Word is its trouble in words when it answers ready and is in trouble
	// all the same (it cuts off while printing, or does not confirm).
	Word storeprint.Word `json:"word,omitempty"`
	At   time.Time       `json:"at"`
	// Kind is "display" for a kitchen screen, whose status is ready while
	// the screen speaks and offline while it is silent; empty (or
	// "printer") for a printer.
	Kind storeprint.TargetKind `json:"kind,omitempty"`
	// A display's tickets: Open waiting or on the screen, not bumped; of
	// those, Shown on the screen and Stale past their station's
	// stale_after. Zero for a printer.
	Open  int `json:"open,omitempty"`
	Shown int `json:"shown,omitempty"`
	Stale int `json:"stale,omitempty"`
}

// ClusterStatus is a store's cluster as the node that reports it sees it:
// its own id and role, the leader, the term, and each member's state
// ("up", "down" or "unknown", as GET /v1/cluster names them).
type ClusterStatus struct {
	NodeID  string          `json:"node_id"`
	Role    string          `json:"role"`
	Leader  string          `json:"leader"`
	Term    uint64          `json:"term"`
	Members []ClusterMember `json:"members"`
}

// ClusterMember is one node of a store's cluster: its state, and its
// role as the reporting node knows it ("leader", "follower", "candidate"
// or "witness"; empty from a gateway that does not say).
type ClusterMember struct {
	NodeID string `json:"node_id"`
	State  string `json:"state"`
	Role   string `json:"role,omitempty"`
}

// Command is one entry of a store's downstream queue. Seq grows by one per
// store; the gateway acks a seq once everything up to it is durable.
type Command struct {
	Seq       uint64                 `json:"seq"`
	ID        string                 `json:"command_id"`
	Kind      storeprint.CommandKind `json:"kind"`
	TaskNo    string                 `json:"task_no,omitempty"`
	PrinterID string                 `json:"printer_id,omitempty"`
	DeviceID  string                 `json:"device_id,omitempty"` // device_revoke
	Order     json.RawMessage        `json:"order,omitempty"`
	Operator  string                 `json:"operator,omitempty"`
	Reason    string                 `json:"reason,omitempty"`
	CreatedAt time.Time              `json:"created_at"`
}

// MaxFrameBytes bounds one frame; batches are sized well below it.
const MaxFrameBytes = 16 << 20

// Decode parses a frame and checks its version and type. The data of an
// events frame's events may be slices of b: b must not change afterwards.
func Decode(b []byte) (*Frame, error) {
	var f Frame
	if !scanEventsFrame(b, &f) {
		f = Frame{}
		if err := json.Unmarshal(b, &f); err != nil {
			return nil, fmt.Errorf("decode frame: %w", err)
		}
	}
	if f.V != ProtocolVersion {
		return nil, fmt.Errorf("frame version %d, this side speaks %d", f.V, ProtocolVersion)
	}
	switch f.Type {
	case FrameHello, FrameWelcome, FrameEvents, FrameAck, FrameStatus, FrameDown, FrameDownAck, FrameError,
		FrameSnapshot, FrameStates:
	default:
		return nil, fmt.Errorf("unknown frame type %q", f.Type)
	}
	return &f, nil
}

// Encode serializes a frame, setting its version.
func Encode(f *Frame) ([]byte, error) {
	f.V = ProtocolVersion
	if b, ok := appendEventsFrame(make([]byte, 0, eventsFrameSize(f.Events)), f); ok {
		return b, nil
	}
	b, err := json.Marshal(f)
	if err != nil {
		return nil, fmt.Errorf("encode frame: %w", err)
	}
	return b, nil
}
