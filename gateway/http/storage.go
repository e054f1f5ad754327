package http

import (
	"context"
	"io"
	"net/http"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
)

// Link tells the sync link's state (sync/client), for /healthz and the
// LAN page; nil when there is no link now (on a cluster's follower).
type Link interface {
	LinkState(ctx context.Context) *LinkState
}

// LinkState is the sync link as /healthz and the LAN page show it.
type LinkState struct {
	Connected bool `json:"connected"`
	// CredentialShared: the cloud said the gateway's credential is in
	// use on another box too.
	CredentialShared bool   `json:"credential_shared"`
	Cursor           uint64 `json:"cursor"` // highest seq the cloud acknowledged
	Incarnation      string `json:"incarnation"`
	LastError        string `json:"last_error"`
	// LastSeq is the newest outbox event and Pending how many the cloud
	// has not acknowledged; absent when the store could not say.
	LastSeq *uint64     `json:"last_seq,omitempty"`
	Pending *uint64     `json:"pending,omitempty"`
	Resync  *LinkResync `json:"resync"` // the last catching up since start
	Since   time.Time   `json:"since"`
}

// LinkResync is one catching up of a side found behind the other.
type LinkResync struct {
	Kind  string    `json:"kind"`  // "snapshot" or "learned"
	Tasks int       `json:"tasks"` // tasks sent, or states learned
	At    time.Time `json:"at"`
}

// Storage tells the data disk's free space and the store's last recovery
// (gateway/badger), for /healthz and the LAN page.
type Storage interface {
	// Disk is the free space as last read, nil when it cannot be read.
	Disk() *gateway.DiskState
	// Recovery is the last recovery, nil when the store never had one.
	Recovery() *gateway.Recovery
}

// StorageState is the data disk and the store's last recovery.
type StorageState struct {
	Disk     *gateway.DiskState `json:"disk,omitempty"`     // nil when it cannot be read
	Recovery *gateway.Recovery  `json:"recovery,omitempty"` // nil when the store never had one
}

// Backup writes a consistent backup of the store while the gateway runs
// (gateway/badger), for GET /v1/backup.
type Backup interface {
	WriteBackup(w io.Writer, storeID string) error
}

func (s *Server) linkState(ctx context.Context) *LinkState {
	if s.Link == nil {
		return nil
	}
	return s.Link.LinkState(ctx)
}

func (s *Server) storageState() *StorageState {
	if s.Storage == nil {
		return nil
	}
	return &StorageState{Disk: s.Storage.Disk(), Recovery: s.Storage.Recovery()}
}

// getBackup serves GET /v1/backup: a consistent backup of the store while
// the gateway runs (storeprint-gateway backup reads it).
func (s *Server) getBackup(w http.ResponseWriter, r *http.Request) error {
	if s.Backup == nil {
		return storeprint.Errorf(storeprint.ENOTFOUND, "backups are not served here")
	}
	name := "storeprint-" + s.Config.StoreID + "-" + time.Now().UTC().Format("20060102T150405Z") + ".backup"
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if err := s.Backup.WriteBackup(w, s.Config.StoreID); err != nil {
		// The answer has started: the client sees a backup cut short,
		// which its frame makes plain.
		s.log.Error("backup", "err", err)
	}
	return nil
}
