package http

import "net/http"

// HandleCloudPRNT serves the Star CloudPRNT endpoint at /v1/cloudprnt
// with h (printerdrivers/cloudprnt). It has its own authentication (a
// printer's MAC address, and its password as HTTP Basic auth): the API
// tokens do not apply to it.
func (s *Server) HandleCloudPRNT(h http.Handler) {
	for _, method := range []string{"POST", "GET", "DELETE"} {
		s.handle(method+" /v1/cloudprnt", "", h) // no token: the protocol authenticates the printer
	}
}
