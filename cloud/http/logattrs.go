package http

import "net/http"

// logIDs are the ids a request's log lines carry as attributes, from its
// route's path, under the keys both programs' logs use: a chain's logs,
// gathered in one place, are searched by store, ticket, printer and
// gateway.
var logIDs = []string{"store_id", "task_no", "printer_id", "gateway_id"}

// idAttrs returns the request's ids as log attributes.
func idAttrs(r *http.Request) []any {
	var out []any
	for _, k := range logIDs {
		if v := r.PathValue(k); v != "" {
			out = append(out, k, v)
		}
	}
	return out
}
