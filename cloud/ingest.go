package cloud

import (
	"context"
	"time"

	"github.com/storeprint/storeprint/sync"
)

// MaxIngestBatch bounds the events of one Ingest call.
const MaxIngestBatch = 10000

// MaxStates bounds the task states one handshake sends a gateway that is
// behind the cloud, and the tasks of one snapshot call.
const MaxStates = 50000

// LinkHello is what a gateway says of itself when its link comes up.
type LinkHello struct {
	Incarnation string // the data dir's id; "" for one made before incarnations
	LastSeq     uint64 // the newest event it wrote
	Compacted   uint64 // it removed its events up to here
	DownCursor  uint64 // the highest command seq it applied
	Resync      bool   // it takes states and redelivered commands, and sends snapshots
}

// LinkWelcome is the cloud's answer to a LinkHello.
type LinkWelcome struct {
	// Cursor is the highest contiguous seq stored, in the gateway's own
	// numbering: the outbox resumes after it.
	Cursor uint64
	// Snapshot: the cloud is behind what the gateway compacted (its
	// database was restored); the gateway sends a snapshot first.
	Snapshot bool
	// Behind: the gateway lost what the cloud has (its data dir was wiped
	// or restored from an older copy). States and Redeliver go to it
	// before anything else, and it holds its waiting tickets until then.
	Behind bool
	// States is the cloud's state of the tasks the gateway may hold in an
	// older state: those changed after its last seq, and those of the
	// redelivered orders.
	States []sync.TaskEvent
	// Redeliver are the cloud orders the store acknowledged once and lost
	// whose tickets are not all done or cancelled, in seq order.
	Redeliver []*Command
	// DownAfter is where the downstream queue goes on after Redeliver:
	// the gateway may move its down cursor to it.
	DownAfter uint64
	Reset     bool // a new incarnation of a gateway that reported before ("gateway data reset")
}

// IngestResult is what Ingest stored.
type IngestResult struct {
	Cursor      uint64            // the highest contiguous seq stored, in the gateway's numbering
	DeadLetters []sync.DeadLetter // events of the batch stored but not applied, with the reason
}

// Ingester takes the events a gateway replays upstream.
type Ingester interface {
	// Open starts a link of one incarnation of a gateway: it creates the
	// incarnation's cursor on its first link (a new incarnation of a
	// gateway that reported before is a "gateway data reset"), finds which
	// side is behind and says what to do about it. An unknown or revoked
	// gateway is EUNAUTHORIZED.
	Open(ctx context.Context, gatewayID, storeID string, h LinkHello) (*LinkWelcome, error)

	// Ingest stores a batch of an incarnation's events in one transaction
	// and returns the highest contiguous seq stored: the cursor the sync
	// link acks. It is idempotent: events already stored are skipped, so a
	// replayed batch changes nothing and returns the same cursor. A seq
	// past the cursor by more than sync.MaxWindow is refused (neither
	// stored nor claimed). An event that cannot be applied (malformed, a
	// task another live gateway of the store owns, a version jump past
	// sync.MaxVersionJump, a transition the table does not allow) is
	// stored as a dead letter with an alert, and the cursor moves past it.
	// A task's state only moves to a higher (incarnation rank, version).
	Ingest(ctx context.Context, gatewayID, storeID, incarnation string, events []sync.Event) (*IngestResult, error)

	// Snapshot applies part of a gateway's snapshot (every task it holds
	// with its receipts), version-forward and under the same ownership
	// rules. The final part moves the cursor to through, the seq the
	// snapshot stands for, and records "store resynchronised".
	Snapshot(ctx context.Context, gatewayID, storeID, incarnation string, s *SnapshotPart) (cursor uint64, err error)

	// Learned records that a gateway found behind applied the states it
	// was sent; until then every link of it hears them again.
	Learned(ctx context.Context, gatewayID, storeID, incarnation string) error
}

// StagedIngester is an Ingester that takes a batch in two steps, so that
// a link can store the events of its next batch while the one before is
// still being applied. Stage begins the batch's transaction and stores
// its events; the StagedBatch applies them, moves the cursor and commits
// (Finish), or gives them up (Abort). A link finishes its batches in the
// order it staged them, each once the one before has finished; Stage
// then Finish is Ingest.
type StagedIngester interface {
	Ingester
	Stage(ctx context.Context, gatewayID, storeID, incarnation string, events []sync.Event) (StagedBatch, error)
}

// StagedBatch is a batch whose events are stored, not yet committed.
type StagedBatch interface {
	// Finish is the rest of Ingest: it applies the batch, moves the
	// cursor and commits. It ends the batch, whatever it returns.
	Finish(ctx context.Context) (*IngestResult, error)
	// Abort gives the batch up; after Finish, it does nothing.
	Abort()
}

// SnapshotPart is one frame of a gateway's snapshot.
type SnapshotPart struct {
	Tasks    []sync.TaskEvent
	Receipts []sync.ReceiptEvent
	Final    bool
	Through  uint64 // final: the gateway's compacted seq
	Total    int    // final: the tasks of the whole snapshot
}

// Link event kinds: what happened on a store's link that people should
// know of.
const (
	LinkGatewayReset   = "gateway_reset"  // a gateway came back with new data (wiped, or a new box on the same credential)
	LinkResynchronised = "resynchronised" // the cloud was behind (its database restored) and took a snapshot
	LinkGatewayBehind  = "gateway_behind" // the gateway was behind (restored from an older copy) and learned the cloud's states
	LinkTakeOver       = "take_over"      // the store's next gateway took over the tasks of a revoked one
	LinkDeadLetter     = "dead_letter"    // events stored but not applied
)

// LinkEventKinds lists every link event kind.
var LinkEventKinds = []string{LinkGatewayReset, LinkResynchronised, LinkGatewayBehind, LinkTakeOver, LinkDeadLetter}

// LinkEvent is one thing that happened on a store's link.
type LinkEvent struct {
	StoreID     string    `json:"store_id"`
	StoreName   string    `json:"store_name,omitempty"`
	ID          string    `json:"event_id"`
	Kind        string    `json:"kind"`
	GatewayID   string    `json:"gateway_id"`
	Incarnation string    `json:"incarnation"`
	Count       int64     `json:"count"` // tasks or events concerned
	Message     string    `json:"message"`
	At          time.Time `json:"at"`
}

// Incarnation is one data dir of a gateway as the cloud knows it.
type Incarnation struct {
	GatewayID   string    `json:"gateway_id"`
	Incarnation string    `json:"incarnation"`
	Cursor      uint64    `json:"cursor"` // in the gateway's numbering
	Rank        int64     `json:"rank"`   // higher: newer; its task states win
	Revoked     bool      `json:"revoked"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// DeadLetter is an event the cloud stored and could not apply.
type DeadLetter struct {
	GatewayID   string    `json:"gateway_id"`
	Incarnation string    `json:"incarnation"`
	Seq         uint64    `json:"seq"` // as the gateway sent it
	Kind        string    `json:"kind"`
	TaskNo      string    `json:"task_no,omitempty"`
	Reason      string    `json:"reason"`
	Data        string    `json:"data"`
	ReceivedAt  time.Time `json:"received_at"`
}

// StoreLink is a store's sync link as IT sees it: every incarnation of its
// gateways, the recent link events and dead letters.
type StoreLink struct {
	StoreID      string         `json:"store_id"`
	Incarnations []*Incarnation `json:"incarnations"` // newest rank first
	Events       []*LinkEvent   `json:"events"`       // newest first
	DeadLetters  []*DeadLetter  `json:"dead_letters"` // newest first
}

// MaxLinkList bounds the events and dead letters of a StoreLink.
const MaxLinkList = 100

// LinkService reads a store's link for people.
type LinkService interface {
	// FindLink returns the store's link; an unknown or foreign store is
	// ENOTFOUND.
	FindLink(ctx context.Context, storeID string) (*StoreLink, error)
}
