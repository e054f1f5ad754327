package cloud

import (
	"context"
	"time"
)

// Fleet is the chain as the database holds it, counted for monitoring:
// the same on every node of the cloud, whichever node is asked.
type Fleet struct {
	// Stores is the stores with a gateway credential not revoked: those
	// that are expected to be linked.
	Stores int64
	// Online is those of Stores whose gateway has a live link (on any
	// node) heard from within OnlineWindow.
	Online int64
	// AlertsOpen counts the alerts that need a person (not resolved, not
	// acknowledged, raised within the alert TTL), by kind.
	AlertsOpen map[string]int64
	// OldestAlert is when the oldest of them was raised; zero when none.
	OldestAlert time.Time
	At          time.Time // when the database counted them
}

// AlertKinds are the kinds of alert the cloud raises; Fleet counts every
// one of them, zero or not, and any other kind it finds.
var AlertKinds = []string{"failed", "attention_required", "command_refused", "dead_letter", AlertCredentialShared, AlertClusterNodeDown}

// FleetService counts the chain for monitoring. Its answer is bounded
// work whatever the chain's size: a few counts over partial indexes, no
// row per store.
type FleetService interface {
	Fleet(ctx context.Context) (*Fleet, error)
}
