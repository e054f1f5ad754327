package http

import (
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/storeprint/storeprint"
)

// Ids in paths and queries follow the gateway's id rules (package
// storeprint); anything else is a 400 naming the parameter, checked here
// before any service or the database sees it.

// pathIDs are the path parameters that hold an id, and taskNos those that
// hold a task_no.
var (
	pathIDs     = []string{"tenant_id", "store_id", "gateway_id", "order_id", "printer_id", "token_id"}
	pathTaskNos = []string{"task_no"}
	queryIDs    = map[string]bool{"tenant_id": true, "store_id": true}
	// queryTaskNos may be empty: ?after= starts at the first page.
	queryTaskNos = map[string]bool{"after": true}
)

// checkIDs answers 400 for a path or query parameter that breaks the id
// rules, and for any query value that holds a NUL or invalid UTF-8.
func checkIDs(h func(http.ResponseWriter, *http.Request) error) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		if err := checkRequestIDs(r); err != nil {
			return err
		}
		return h(w, r)
	}
}

func checkRequestIDs(r *http.Request) error {
	for _, name := range pathIDs {
		if strings.Contains(r.Pattern, "{"+name+"}") {
			if err := storeprint.CheckID(name, r.PathValue(name)); err != nil {
				return err
			}
		}
	}
	for _, name := range pathTaskNos {
		if strings.Contains(r.Pattern, "{"+name+"}") {
			if err := storeprint.CheckTaskNo(name, r.PathValue(name)); err != nil {
				return err
			}
		}
	}
	for name, values := range r.URL.Query() {
		for _, v := range values {
			if err := checkQueryValue(name, v); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkQueryValue(name, v string) error {
	switch {
	case !utf8.ValidString(name) || strings.IndexByte(name, 0) >= 0:
		return storeprint.Errorf(storeprint.EINVALID, "a query parameter's name holds a NUL byte or invalid UTF-8")
	case queryIDs[name]:
		if v == "" {
			return nil
		}
		return storeprint.CheckID(name, v)
	case queryTaskNos[name]:
		if v == "" {
			return nil
		}
		return storeprint.CheckTaskNo(name, v)
	case strings.IndexByte(v, 0) >= 0:
		return storeprint.Errorf(storeprint.EINVALID, "%s contains a NUL byte", name)
	case !utf8.ValidString(v):
		return storeprint.Errorf(storeprint.EINVALID, "%s is not valid UTF-8", name)
	}
	return nil
}
