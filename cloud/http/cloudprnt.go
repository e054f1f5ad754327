package http

import (
	"context"
	"net/http"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
	"github.com/storeprint/storeprint/printerdrivers/cloudprnt/protocol"
)

// cloudprntRoutes serves Star CloudPRNT printers of stores without a
// gateway at /v1/cloudprnt/{store_id}, behind each printer's own token
// (its CloudPRNT password, as HTTP Basic auth), and their registration.
func (s *Server) cloudprntRoutes(plain func(string, http.Handler), api func(string, func(http.ResponseWriter, *http.Request) error)) {
	if s.CloudPRNTService == nil {
		return
	}
	h := protocol.HandlerWith(cloudprntQueue{s.CloudPRNTService}, protocol.HandlerOptions{Logger: s.Logger, Now: s.Now})
	for _, method := range []string{"POST", "GET", "DELETE"} {
		plain(method+" /v1/cloudprnt/{store_id}", h)
	}
	api("POST /v1/admin/stores/{store_id}/cloudprnt-printers", s.handleCreateCloudPRNTPrinter)
}

// POST /v1/admin/stores/{store_id}/cloudprnt-printers
// {"printer_id","mac","stations","confirm_timeout","reason","operator"} →
// 201 {"store_id","printer_id","mac","stations","created_at","token"}
func (s *Server) handleCreateCloudPRNTPrinter(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		PrinterID      string   `json:"printer_id"`
		MAC            string   `json:"mac"`
		Stations       []string `json:"stations"`
		ConfirmTimeout string   `json:"confirm_timeout"` // a Go duration; default 30s
		cloud.Note
	}
	if err := decode(w, r, &req, false); err != nil {
		return err
	}
	p := &cloud.CloudPRNTPrinter{StoreID: r.PathValue("store_id"), PrinterID: req.PrinterID, MAC: req.MAC, Stations: req.Stations}
	if req.ConfirmTimeout != "" {
		d, err := time.ParseDuration(req.ConfirmTimeout)
		if err != nil {
			return storeprint.Errorf(storeprint.EINVALID, "confirm_timeout %q is not a duration like \"30s\"", req.ConfirmTimeout)
		}
		p.ConfirmTimeout = d
	}
	token, err := s.CloudPRNTService.CreateCloudPRNTPrinter(r.Context(), p, req.Note)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, struct {
		*cloud.CloudPRNTPrinter
		Token string `json:"token"`
	}{p, token})
	return nil
}

// cloudprntQueue finds a request's printer: the store in the path, the
// MAC address, the token as the Basic auth password.
type cloudprntQueue struct{ svc cloud.CloudPRNTService }

func (q cloudprntQueue) Printer(ctx context.Context, r *http.Request, mac string) (protocol.Printer, error) {
	storeID := r.PathValue("store_id")
	if !storeprint.ValidID(storeID) {
		return nil, protocol.ErrUnknownPrinter
	}
	_, token, ok := r.BasicAuth()
	if !ok || token == "" {
		return nil, protocol.ErrUnauthorized
	}
	p, err := q.svc.AuthenticateCloudPRNT(ctx, storeID, mac, token)
	switch storeprint.ErrorCode(err) {
	case "":
	case storeprint.ENOTFOUND:
		return nil, protocol.ErrUnknownPrinter
	case storeprint.EUNAUTHORIZED:
		return nil, protocol.ErrUnauthorized
	default:
		return nil, err
	}
	return cloudprntPrinter{svc: q.svc, p: p}, nil
}

// cloudprntPrinter is one printer's side of the protocol on the service.
type cloudprntPrinter struct {
	svc cloud.CloudPRNTService
	p   *cloud.CloudPRNTPrinter
}

func (c cloudprntPrinter) Poll(ctx context.Context, poll *protocol.Poll) (*protocol.Offer, error) {
	st := protocol.State(poll.StatusCode)
	token, err := c.svc.PollCloudPRNT(ctx, c.p, cloud.CloudPRNTPoll{StatusCode: poll.StatusCode, State: st.State, Printing: poll.PrintingInProgress})
	if err != nil || token == "" {
		return nil, err
	}
	return &protocol.Offer{Token: token, MediaTypes: []string{protocol.MediaText}}, nil
}

func (c cloudprntPrinter) Fetch(ctx context.Context, token, mediaType string) ([]byte, func(error), error) {
	if mediaType != protocol.MediaText {
		return nil, nil, protocol.ErrMediaType
	}
	body, err := c.svc.FetchCloudPRNT(ctx, c.p, token)
	if storeprint.ErrorCode(err) == storeprint.ENOTFOUND {
		return nil, nil, protocol.ErrNoJob
	}
	if err != nil {
		return nil, nil, err
	}
	return body, func(werr error) {
		// Recorded even if the printer hung up meanwhile.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_ = c.svc.FetchedCloudPRNT(ctx, c.p, token, werr) // a missing submitted receipt leaves the attempt to its timeout
	}, nil
}

func (c cloudprntPrinter) Confirm(ctx context.Context, token, code string) error {
	err := c.svc.ConfirmCloudPRNT(ctx, c.p, token, code)
	if storeprint.ErrorCode(err) == storeprint.ENOTFOUND {
		return protocol.ErrNoJob
	}
	return err
}
