package cloud

import (
	"errors"
	"fmt"

	"github.com/storeprint/storeprint"
)

// Error codes. The HTTP layer maps each to one status in one table.
const (
	EINVALID       = "invalid"       // bad input: 400
	EUNAUTHORIZED  = "unauthorized"  // missing or bad credential: 401
	EFORBIDDEN     = "forbidden"     // a valid credential that may not do this: 403
	ENOTFOUND      = "not_found"     // 404, also for another tenant's data
	ECONFLICT      = "conflict"      // 409
	EUNPROCESSABLE = "unprocessable" // 422: well formed, but the store cannot act on it
	ETOOLARGE      = "too_large"     // 413
	ETOOMANY       = "too_many"      // 429: too many failed tries from one address
	EUNAVAILABLE   = "unavailable"   // 503: database trouble, shutting down
	EINTERNAL      = "internal"      // 500
)

// Error is the cloud's coded error. Message is safe to show to a client.
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("cloud: %s: %s", e.Code, e.Message) }

// Errorf returns a coded error with a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of a coded error in err's chain (EINVALID for
// a broken rule of package storeprint), or EINTERNAL.
func ErrorCode(err error) string {
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
