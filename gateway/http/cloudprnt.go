package http

// cloudPRNTRoutes serves the Star CloudPRNT endpoint at /v1/cloudprnt with
// the CloudPRNT field. It has its own authentication (a printer's MAC
// address, and its password as HTTP Basic auth): the API tokens do not
// apply to it.
func (s *Server) cloudPRNTRoutes() {
	for _, method := range []string{"POST", "GET", "DELETE"} {
		s.handle(method+" /v1/cloudprnt", "", s.CloudPRNT) // no token: the protocol authenticates the printer
	}
}
