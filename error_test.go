package storeprint_test

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/storeprint/storeprint"
)

func TestHTTPStatus(t *testing.T) {
	t.Parallel()
	for code, want := range map[string]int{
		storeprint.EINVALID:       http.StatusBadRequest,
		storeprint.EUNAUTHORIZED:  http.StatusUnauthorized,
		storeprint.EFORBIDDEN:     http.StatusForbidden,
		storeprint.ENOTFOUND:      http.StatusNotFound,
		storeprint.ECONFLICT:      http.StatusConflict,
		storeprint.EUNPROCESSABLE: http.StatusUnprocessableEntity,
		storeprint.ETOOLARGE:      http.StatusRequestEntityTooLarge,
		storeprint.ETOOMANY:       http.StatusTooManyRequests,
		storeprint.EUNAVAILABLE:   http.StatusServiceUnavailable,
		storeprint.EINTERNAL:      http.StatusInternalServerError,
		"no_such_code":            http.StatusInternalServerError,
	} {
		if got := storeprint.HTTPStatus(code); got != want {
			t.Errorf("HTTPStatus(%q): got %d, want %d", code, got, want)
		}
	}
}

func TestErrorCode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		err       error
		code, msg string
	}{
		{"Nil", nil, "", "internal error"},
		{"Coded", storeprint.Errorf(storeprint.ENOTFOUND, "no task %q", "t1"), storeprint.ENOTFOUND, `no task "t1"`},
		{"Wrapped", fmt.Errorf("load: %w", storeprint.Errorf(storeprint.ECONFLICT, "taken")), storeprint.ECONFLICT, "taken"},
		{"Invalid", storeprint.Invalidf("bad id"), storeprint.EINVALID, "bad id"},
		{"Other", errors.New("disk on fire"), storeprint.EINTERNAL, "internal error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := storeprint.ErrorCode(tc.err); got != tc.code {
				t.Errorf("ErrorCode: got %q, want %q", got, tc.code)
			}
			if got := storeprint.ErrorMessage(tc.err); got != tc.msg {
				t.Errorf("ErrorMessage: got %q, want %q", got, tc.msg)
			}
		})
	}
}
