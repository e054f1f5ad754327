package http

import (
	"net/http"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
)

// Kitchen displays: the screen at /kds/{display_id} (embedded, like the
// LAN page), the API it speaks, and GET /v1/displays.

// displayWaitMax bounds how long a screen's poll waits for a change: the
// screen's next poll is its next word, so a live screen is never silent
// longer than this.
const displayWaitMax = 2 * time.Second

func (s *Server) displayRoutes() {
	const pos, display = storeprint.RolePOS, storeprint.RoleDisplay
	s.handle("GET /v1/displays", pos, s.api(s.listDisplays))
	s.handle("POST /v1/displays/{display_id}/poll", display, s.api(s.pollDisplay))
	s.handle("POST /v1/tasks/{task_no}/bump", display, s.api(s.bumpTask))
	s.handle("POST /v1/tasks/{task_no}/recall", display, s.api(s.recallTask))
	s.routes = append(s.routes, "GET /kds/{display_id}")
	s.mux.HandleFunc("GET /kds/{display_id}", func(w http.ResponseWriter, r *http.Request) {
		if _, err := s.DisplayService.DisplayInfo(r.PathValue("display_id")); err != nil {
			writeError(w, r, s.log, err)
			return
		}
		w.Header().Set("Content-Security-Policy", csp)
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("Referrer-Policy", "no-referrer")
		http.ServeFileFS(w, r, web, "web/kds.html")
	})
}

// displayWait is how long a poll waits for a change: displayWaitMax, or
// less for a display whose offline_after is short, so that a live screen
// is never silent for long.
func (s *Server) displayWait(id string) time.Duration {
	for _, d := range s.Config.Displays {
		if d.ID == id {
			return min(displayWaitMax, d.OfflineAfter.Duration/3)
		}
	}
	return displayWaitMax
}

// mayUseDisplay refuses a display device another display.
func mayUseDisplay(r *http.Request, id string) error {
	p := principal(r)
	if p != nil && p.Role == storeprint.RoleDisplay && p.Display != id {
		return storeprint.Errorf(storeprint.EFORBIDDEN, "this device is display %s; it may not use display %s", p.Display, id)
	}
	return nil
}

func (s *Server) listDisplays(w http.ResponseWriter, r *http.Request) error {
	ds, err := s.DisplayService.Displays(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ds)
	return nil
}

// displayTicket is a ticket as a screen shows it.
type displayTicket struct {
	TaskNo    string            `json:"task_no"`
	OrderID   string            `json:"order_id"`
	Station   string            `json:"station"`
	Table     string            `json:"table,omitempty"`
	Note      string            `json:"note,omitempty"`
	Items     []storeprint.Item `json:"items"`
	Status    storeprint.Status `json:"status"`
	Shown     bool              `json:"shown"` // the screen reported it shown
	Reprint   bool              `json:"reprint,omitempty"`
	CopyOf    string            `json:"copy_of,omitempty"`
	CreatedAt time.Time         `json:"created_at"`
	AgeS      int64             `json:"age_s"` // since it was accepted
}

// displayView is the answer to a screen's poll.
type displayView struct {
	Display    gateway.DisplayInfo `json:"display"`
	Generation uint64              `json:"generation"`
	Tickets    []displayTicket     `json:"tickets"`
	Recalled   []displayTicket     `json:"recalled"`
	LastBumped string              `json:"last_bumped,omitempty"`
	PrintsOn   string              `json:"prints_on,omitempty"`
}

func (s *Server) viewDisplayTickets(ts []*gateway.Task) []displayTicket {
	out := make([]displayTicket, 0, len(ts))
	for _, t := range ts {
		out = append(out, displayTicket{
			TaskNo: t.TaskNo, OrderID: t.OrderID, Station: t.Station, Table: t.Table, Note: t.Note,
			Items: t.Items, Status: t.Status, Shown: t.Status == storeprint.StatusPrinting || t.Status == storeprint.StatusDone,
			Reprint: t.Reprint, CopyOf: t.CopyOf, CreatedAt: t.CreatedAt,
			AgeS: int64(s.DisplayService.Waited(t) / time.Second),
		})
	}
	return out
}

// POST /v1/displays/{display_id}/poll {"shown":[task_no...],"generation":N}
// is the screen's word: it says which tickets it shows now (each waiting
// one becomes delivered), and gets its tickets back, at once when
// anything changed since generation, else after the next change or
// displayWaitMax.
func (s *Server) pollDisplay(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("display_id")
	if err := mayUseDisplay(r, id); err != nil {
		return err
	}
	var body struct {
		Shown      []string `json:"shown"`
		Generation uint64   `json:"generation"`
	}
	if err := decode(w, r, &body, true); err != nil {
		return err
	}
	ctx := r.Context()
	changes, cancel := s.Changes.Subscribe()
	defer cancel()
	if err := s.DisplayService.DisplayHeard(ctx, id); err != nil {
		return err
	}
	if _, err := s.DisplayService.Shown(ctx, id, body.Shown); err != nil {
		return err
	}
	if body.Generation != 0 && body.Generation == s.Changes.Generation() {
		t := time.NewTimer(s.displayWait(id))
		select {
		case <-changes:
		case <-t.C:
		case <-ctx.Done():
		case <-s.closing:
		}
		t.Stop()
		// The end of the wait is a word from the screen too.
		if err := s.DisplayService.DisplayHeard(ctx, id); err != nil {
			return err
		}
	}
	gen := s.Changes.Generation()
	show, err := s.DisplayService.ShowTickets(ctx, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, displayView{
		Display: show.Display, Generation: gen, Tickets: s.viewDisplayTickets(show.Open),
		Recalled: s.viewDisplayTickets(show.Recalled), LastBumped: show.LastBumped, PrintsOn: show.PrintsOn,
	})
	return nil
}

// displayAction reads {"display_id"} and checks the device may use it.
func displayAction(w http.ResponseWriter, r *http.Request) (gateway.DisplayAction, error) {
	var body struct {
		DisplayID string `json:"display_id"`
	}
	if err := decode(w, r, &body, false); err != nil {
		return gateway.DisplayAction{}, err
	}
	if body.DisplayID == "" {
		return gateway.DisplayAction{}, storeprint.Errorf(storeprint.EINVALID, "display_id is required: the screen the ticket is bumped or recalled on")
	}
	if err := storeprint.CheckID("display_id", body.DisplayID); err != nil {
		return gateway.DisplayAction{}, err
	}
	if err := mayUseDisplay(r, body.DisplayID); err != nil {
		return gateway.DisplayAction{}, err
	}
	p := principal(r)
	return gateway.DisplayAction{DisplayID: body.DisplayID, Operator: p.String(), Device: p.DeviceID}, nil
}

// POST /v1/tasks/{task_no}/bump {"display_id"}: the ticket is done.
func (s *Server) bumpTask(w http.ResponseWriter, r *http.Request) error {
	a, err := displayAction(w, r)
	if err != nil {
		return err
	}
	if err := s.DisplayService.DisplayHeard(r.Context(), a.DisplayID); err != nil {
		return err
	}
	t, err := s.DisplayService.Bump(r.Context(), r.PathValue("task_no"), a)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, viewTask(t))
	return nil
}

// POST /v1/tasks/{task_no}/recall {"display_id"}: a bumped ticket shows
// again.
func (s *Server) recallTask(w http.ResponseWriter, r *http.Request) error {
	a, err := displayAction(w, r)
	if err != nil {
		return err
	}
	if err := s.DisplayService.DisplayHeard(r.Context(), a.DisplayID); err != nil {
		return err
	}
	t, err := s.DisplayService.Recall(r.Context(), r.PathValue("task_no"), a)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, viewTask(t))
	return nil
}
