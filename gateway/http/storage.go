package http

import (
	"io"
	"net/http"
	"time"

	"github.com/storeprint/storeprint/gateway"
)

// SetStorage shows the data disk's free space and the store's last
// recovery on /healthz and the LAN page.
func (s *Server) SetStorage(state func() any) { s.storage = state }

func (s *Server) storageState() any {
	if s.storage == nil {
		return nil
	}
	return s.storage()
}

// SetBackup serves GET /v1/backup: a consistent backup of the store while
// the gateway runs (storeprint-gateway backup reads it).
func (s *Server) SetBackup(fn func(io.Writer) error) { s.backup = fn }

func (s *Server) getBackup(w http.ResponseWriter, r *http.Request) error {
	if s.backup == nil {
		return gateway.Errorf(gateway.ENOTFOUND, "backups are not served here")
	}
	name := "storeprint-" + s.g.Config().StoreID + "-" + time.Now().UTC().Format("20060102T150405Z") + ".backup"
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if err := s.backup(w); err != nil {
		// The answer has started: the client sees a backup cut short,
		// which its frame makes plain.
		s.log.Error("backup", "err", err)
	}
	return nil
}
