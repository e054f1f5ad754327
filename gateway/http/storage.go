package http

import (
	"net/http"
	"time"

	"github.com/storeprint/storeprint/gateway"
)

func (s *Server) storageState() any {
	if s.Storage == nil {
		return nil
	}
	return s.Storage()
}

// getBackup serves GET /v1/backup: a consistent backup of the store while
// the gateway runs (storeprint-gateway backup reads it).
func (s *Server) getBackup(w http.ResponseWriter, r *http.Request) error {
	if s.Backup == nil {
		return gateway.Errorf(gateway.ENOTFOUND, "backups are not served here")
	}
	name := "storeprint-" + s.Config.StoreID + "-" + time.Now().UTC().Format("20060102T150405Z") + ".backup"
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if err := s.Backup(w); err != nil {
		// The answer has started: the client sees a backup cut short,
		// which its frame makes plain.
		s.log.Error("backup", "err", err)
	}
	return nil
}
