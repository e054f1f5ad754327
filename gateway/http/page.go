package http

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
)

// web holds the LAN page; every asset is embedded so the page works with
// the internet down.
//
//go:embed web
var web embed.FS

// csp allows nothing but this gateway.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

func (s *Server) pageRoutes() {
	assets, err := fs.Sub(web, "web")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	files := http.FileServerFS(assets)
	s.routes = append(s.routes, "GET /{$}", "GET /assets/")
	s.mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", csp)
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("Referrer-Policy", "no-referrer")
		http.ServeFileFS(w, r, assets, "index.html")
	})
	s.mux.Handle("GET /assets/", http.StripPrefix("/assets/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", csp)
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})))
}

func (s *Server) getBoard(w http.ResponseWriter, r *http.Request) error {
	b, err := s.BoardService.Board(r.Context())
	if err != nil {
		return err
	}
	v := s.viewBoard(b)
	v.Cloud, v.StorageState = s.linkState(r.Context()), s.storageState()
	writeJSON(w, http.StatusOK, v)
	return nil
}

// boardView is the board with tasks in the API's shape.
type boardView struct {
	StoreID      string                    `json:"store_id"`
	Printers     []gateway.PrinterInfo     `json:"printers"`
	Displays     []gateway.DisplayInfo     `json:"displays"`
	Stations     []stationView             `json:"stations"`
	Alerts       []taskView                `json:"alerts"`
	Counts       map[storeprint.Status]int `json:"counts"`
	Storage      string                    `json:"storage_error,omitempty"`
	StorageState *StorageState             `json:"storage,omitempty"` // free space and the last recovery
	Cloud        *LinkState                `json:"cloud,omitempty"`
	At           time.Time                 `json:"at"`
}

type stationView struct {
	Name       string     `json:"name"`
	Printer    string     `json:"printer"`
	BackupFrom string     `json:"backup_from,omitempty"`
	Queue      []taskView `json:"queue"`
}

func viewTasks(ts []*gateway.Task) []taskView {
	out := make([]taskView, 0, len(ts))
	for _, t := range ts {
		out = append(out, viewTask(t))
	}
	return out
}

// viewBoard is the board as the LAN page reads it, each ticket with how
// long it has waited.
func (s *Server) viewBoard(b *gateway.Board) boardView {
	v := boardView{StoreID: b.StoreID, Printers: b.Printers, Displays: b.Displays, Alerts: s.viewWaiting(b.Alerts), Counts: b.Counts, Storage: b.Storage, At: b.At}
	for _, st := range b.Stations {
		v.Stations = append(v.Stations, stationView{Name: st.Name, Printer: st.Printer, BackupFrom: st.BackupFrom, Queue: s.viewWaiting(st.Queue)})
	}
	return v
}

func (s *Server) viewWaiting(ts []*gateway.Task) []taskView {
	out := viewTasks(ts)
	for i, t := range ts {
		waited := int64(s.BoardService.Waited(t) / time.Second)
		out[i].WaitedS = &waited
	}
	return out
}

// board returns the current board, read once per change however many
// pages are open.
func (s *Server) board(ctx context.Context) (*gateway.Board, error) {
	gen := s.Changes.Generation()
	s.boardMu.Lock()
	defer s.boardMu.Unlock()
	if s.boardCache != nil && s.boardGen == gen {
		b := *s.boardCache
		b.Storage = "" // read the storage state now, not from the cache
		if err := s.Health.Health(); err != nil {
			b.Storage = storeprint.ErrorMessage(err)
		}
		return &b, nil
	}
	b, err := s.BoardService.Board(ctx)
	if err != nil {
		return nil, err
	}
	// Read at gen: a change during the read moved the generation, so the
	// next caller reads again.
	s.boardCache, s.boardGen = b, gen
	return b, nil
}

// events streams the board as server-sent events: once at the start, again
// within 100 ms of every change, and every 15 s.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeError(w, r, s.log, storeprint.Errorf(storeprint.EINTERNAL, "streaming unsupported"))
		return
	}
	changes, cancel := s.Changes.Subscribe()
	defer cancel()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	p := principal(r)
	send := func() bool {
		// A revocation is a change: every stream sends, so a revoked
		// device's stream ends within moments.
		if p != nil && p.DeviceID != "" {
			if _, err := s.DeviceService.Device(r.Context(), p.DeviceID); err != nil {
				return false
			}
		}
		b, err := s.board(r.Context())
		if err != nil {
			s.log.Error("board for live update", "err", err)
			return r.Context().Err() == nil
		}
		v := s.viewBoard(b)
		v.Cloud, v.StorageState = s.linkState(r.Context()), s.storageState()
		j, err := json.Marshal(v)
		if err != nil {
			s.log.Error("encode board", "err", err)
			return false
		}
		if _, err := fmt.Fprintf(w, "event: board\ndata: %s\n\n", j); err != nil {
			return false
		}
		flusher.Flush()
		return true
	}
	if !send() {
		return
	}
	ping := time.NewTicker(15 * time.Second)
	defer ping.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.closing:
			return
		case <-ping.C:
			// Resend now and then: ages move on, and a proxy between
			// here and the page may close a silent stream.
			if !send() {
				return
			}
		case <-changes:
			// Let a burst of changes settle into one update.
			t := time.NewTimer(100 * time.Millisecond)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
				return
			}
			select {
			case <-changes:
			default:
			}
			if !send() {
				return
			}
		}
	}
}
