package storeprint

import (
	"errors"
	"fmt"
	"net/http"
)

// Error codes, shared by the gateway and the cloud. HTTPStatus maps each
// to one HTTP status.
const (
	EINVALID       = "invalid"       // bad input: 400
	EUNAUTHORIZED  = "unauthorized"  // missing or bad credential: 401
	EFORBIDDEN     = "forbidden"     // a valid credential that may not do this: 403
	ENOTFOUND      = "not_found"     // 404, also for another tenant's data
	ECONFLICT      = "conflict"      // 409
	EUNPROCESSABLE = "unprocessable" // 422: well formed, but the store cannot act on it
	ETOOLARGE      = "too_large"     // 413
	ETOOMANY       = "too_many"      // 429: too many failed tries from one address
	EUNAVAILABLE   = "unavailable"   // 503: storage or database trouble, shutting down
	EINTERNAL      = "internal"      // 500
)

// statuses is the one table from error codes to HTTP statuses.
var statuses = map[string]int{
	EINVALID:       http.StatusBadRequest,
	EUNAUTHORIZED:  http.StatusUnauthorized,
	EFORBIDDEN:     http.StatusForbidden,
	ENOTFOUND:      http.StatusNotFound,
	ECONFLICT:      http.StatusConflict,
	EUNPROCESSABLE: http.StatusUnprocessableEntity,
	ETOOLARGE:      http.StatusRequestEntityTooLarge,
	ETOOMANY:       http.StatusTooManyRequests,
	EUNAVAILABLE:   http.StatusServiceUnavailable,
	EINTERNAL:      http.StatusInternalServerError,
}

// HTTPStatus is the HTTP status an error code is answered with; an
// unknown code is an internal error (500).
func HTTPStatus(code string) int {
	if s, ok := statuses[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// Error is a coded error of the gateway or the cloud. Message is safe to
// show to a client.
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Errorf returns a coded error with a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of a coded error in err's chain (EINVALID for
// an *InvalidError), "" for nil, or EINTERNAL.
func ErrorCode(err error) string {
	if e, ok := err.(*Error); ok {
		return e.Code // most are not wrapped: no errors.As, which allocates
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	var inv *InvalidError
	if errors.As(err, &inv) {
		return EINVALID
	}
	if err == nil {
		return ""
	}
	return EINTERNAL
}

// ErrorMessage returns the client-safe message of err, or "internal error".
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	var inv *InvalidError
	if errors.As(err, &inv) {
		return inv.Message
	}
	return "internal error"
}
