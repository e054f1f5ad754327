package cloud

import "github.com/storeprint/storeprint"

// The cloud's errors are the coded errors of package storeprint, shared
// with the other side, with their one table of HTTP statuses
// (storeprint.HTTPStatus).
type Error = storeprint.Error

// Error codes (see storeprint.EINVALID and the others).
const (
	EINVALID       = storeprint.EINVALID
	EUNAUTHORIZED  = storeprint.EUNAUTHORIZED
	EFORBIDDEN     = storeprint.EFORBIDDEN
	ENOTFOUND      = storeprint.ENOTFOUND
	ECONFLICT      = storeprint.ECONFLICT
	EUNPROCESSABLE = storeprint.EUNPROCESSABLE
	ETOOLARGE      = storeprint.ETOOLARGE
	ETOOMANY       = storeprint.ETOOMANY
	EUNAVAILABLE   = storeprint.EUNAVAILABLE
	EINTERNAL      = storeprint.EINTERNAL
)

// Errorf returns a coded error with a formatted message.
func Errorf(code, format string, args ...any) *Error { return storeprint.Errorf(code, format, args...) }

// ErrorCode returns the code of a coded error in err's chain, or EINTERNAL.
func ErrorCode(err error) string { return storeprint.ErrorCode(err) }

// ErrorMessage returns the client-safe message of err, or "internal error".
func ErrorMessage(err error) string { return storeprint.ErrorMessage(err) }
