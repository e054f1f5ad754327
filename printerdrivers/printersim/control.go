package printersim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Handler returns the control API, for changing faults from outside the
// process (storeprint printersim --control ADDR):
//
//	GET  /fault              → 200 {"fault":"none"}
//	PUT  /fault {"fault":F}  → 200 {"fault":F}; POST does the same
//	GET  /printed            → 200 [{"task_no","text","at"}, ...]
//
// Errors are 4xx with {"error":"..."} naming the problem: an unknown
// fault, malformed JSON, an unknown path or method.
func (p *Printer) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/fault", p.serveFault)
	mux.HandleFunc("/printed", p.servePrinted)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no such path %q (try /fault or /printed)", r.URL.Path))
	})
	return mux
}

type faultBody struct {
	Fault *Fault `json:"fault"`
}

func (p *Printer) serveFault(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
	case http.MethodPut, http.MethodPost:
		var body faultBody
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&body); err != nil {
			writeError(w, http.StatusBadRequest, "malformed JSON body: "+err.Error())
			return
		}
		if dec.More() {
			writeError(w, http.StatusBadRequest, "malformed JSON body: more than one value")
			return
		}
		if body.Fault == nil {
			writeError(w, http.StatusBadRequest, `"fault" is required`)
			return
		}
		f, err := ParseFault(string(*body.Fault))
		if err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		p.SetFault(f)
	default:
		w.Header().Set("Allow", "GET, PUT, POST")
		writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("method %s not allowed on /fault (GET, PUT or POST)", r.Method))
		return
	}
	writeJSON(w, http.StatusOK, map[string]Fault{"fault": p.Fault()})
}

func (p *Printer) servePrinted(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET")
		writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("method %s not allowed on /printed (GET)", r.Method))
		return
	}
	printed := p.Printed()
	if printed == nil {
		printed = []Ticket{}
	}
	writeJSON(w, http.StatusOK, printed)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	// An error here means the client went away: there is no one to tell.
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": strings.TrimSpace(msg)})
}
