package gateway

import (
	"errors"
	"fmt"

	"github.com/storeprint/storeprint"
)

// Error codes. The HTTP layer maps each to one status in one table.
const (
	EINVALID      = "invalid"      // bad input: 400
	ENOTFOUND     = "not_found"    // 404
	ECONFLICT     = "conflict"     // 409
	EUNAUTHORIZED = "unauthorized" // 401
	EFORBIDDEN    = "forbidden"    // 403: a valid token whose role may not do this
	ETOOMANY      = "too_many"     // 429: too many failed tries from one address
	ETOOLARGE     = "too_large"    // 413
	EUNAVAILABLE  = "unavailable"  // 503: storage trouble, shutting down
	EINTERNAL     = "internal"     // 500
)

// Error is the gateway's coded error. Message is safe to show to a client.
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("gateway: %s: %s", e.Code, e.Message) }

// Errorf returns a coded error with a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of a coded error in err's chain (EINVALID for
// a broken rule of package storeprint), or EINTERNAL.
func ErrorCode(err error) string {
	if e, ok := err.(*Error); ok {
		return e.Code // most are not wrapped: no errors.As, which allocates
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	var inv *storeprint.InvalidError
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
	var inv *storeprint.InvalidError
	if errors.As(err, &inv) {
		return inv.Message
	}
	return "internal error"
}
