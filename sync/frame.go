package sync

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/storeprint/storeprint"
)

// Frame types. The gateway sends hello, events, status, down_ack and ping
// frames; the cloud answers welcome, ack, down and error frames.
const (
	FrameHello   = "hello"    // gateway: who it is and what it has applied from the cloud
	FrameWelcome = "welcome"  // cloud: the cursor to resume the outbox from
	FrameEvents  = "events"   // gateway: a batch of outbox events in seq order
	FrameAck     = "ack"      // cloud: the highest contiguous seq stored
	FrameStatus  = "status"   // gateway: its printers as they are now
	FrameDown    = "down"     // cloud: commands for the store, in seq order
	FrameDownAck = "down_ack" // gateway: every command up to seq is durable
	FrameError   = "error"    // either side: why it closes the link
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

	Cursor   uint64          `json:"cursor,omitempty"`   // welcome, ack
	Events   []Event         `json:"events,omitempty"`   // events
	Printers []PrinterStatus `json:"printers,omitempty"` // status
	Commands []Command       `json:"commands,omitempty"` // down
	Seq      uint64          `json:"seq,omitempty"`      // down_ack
	Error    string          `json:"error,omitempty"`    // error
}

// PrinterStatus is one printer as the gateway last read it.
type PrinterStatus struct {
	ID       string                  `json:"printer_id"`
	Status   storeprint.PrinterState `json:"status"`
	Stations []string                `json:"stations"`
	Backup   string                  `json:"backup,omitempty"`
	Failover bool                    `json:"failover"` // its stations print on the backup now
	At       time.Time               `json:"at"`
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

// Decode parses a frame and checks its version and type.
func Decode(b []byte) (*Frame, error) {
	var f Frame
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("decode frame: %w", err)
	}
	if f.V != ProtocolVersion {
		return nil, fmt.Errorf("frame version %d, this side speaks %d", f.V, ProtocolVersion)
	}
	switch f.Type {
	case FrameHello, FrameWelcome, FrameEvents, FrameAck, FrameStatus, FrameDown, FrameDownAck, FrameError:
	default:
		return nil, fmt.Errorf("unknown frame type %q", f.Type)
	}
	return &f, nil
}

// Encode serializes a frame, setting its version.
func Encode(f *Frame) ([]byte, error) {
	f.V = ProtocolVersion
	b, err := json.Marshal(f)
	if err != nil {
		return nil, fmt.Errorf("encode frame: %w", err)
	}
	return b, nil
}
