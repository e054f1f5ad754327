package storeprint

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Id rules. An order_id, station, printer, store, tenant or gateway id is
// 1-64 characters of letters, digits, '-', '_' and '.', and neither "."
// nor "..", which name a path's own folder and its parent wherever an id
// goes into a URL or a file name; a task_no, made of them, is at most
// MaxTaskNoLen of the same characters.
const (
	MaxIDLen      = 64
	MaxTaskNoLen  = 200
	IDPattern     = `^[A-Za-z0-9._-]{1,64}$`
	TaskNoPattern = `^[A-Za-z0-9._-]{1,200}$`
)

// ValidID reports whether s is a valid id.
func ValidID(s string) bool { return validChars(s, MaxIDLen) }

// ValidTaskNo reports whether s is a valid task_no.
func ValidTaskNo(s string) bool { return validChars(s, MaxTaskNoLen) }

func validChars(s string, max int) bool {
	if len(s) < 1 || len(s) > max || s == "." || s == ".." {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.':
		default:
			return false
		}
	}
	return true
}

// CheckID returns nil for a valid id, else an *InvalidError naming the
// parameter and what is wrong with the value.
func CheckID(name, s string) error { return checkChars(name, s, MaxIDLen) }

// CheckTaskNo is CheckID for a task_no.
func CheckTaskNo(name, s string) error { return checkChars(name, s, MaxTaskNoLen) }

func checkChars(name, s string, max int) error {
	switch {
	case validChars(s, max):
		return nil
	case s == "":
		return Invalidf("%s is required", name)
	case strings.IndexByte(s, 0) >= 0:
		return Invalidf("%s contains a NUL byte", name)
	case !utf8.ValidString(s):
		return Invalidf("%s is not valid UTF-8", name)
	case utf8.RuneCountInString(s) > max:
		return Invalidf("%s is longer than %d characters", name, max)
	case s == "." || s == "..":
		return Invalidf("%s %q is not an id: \".\" and \"..\" are refused", name, s)
	}
	return Invalidf("%s %q must be 1-%d characters of letters, digits, '-', '_' or '.'", name, s, max)
}

// TaskNo is the idempotency key of one station's ticket of one order.
func TaskNo(orderID, station string) string {
	return "order_" + orderID + "_station_" + station
}

// CopyTaskNo is the task_no of the n-th deliberate copy of a task.
func CopyTaskNo(taskNo string, n int) string { return fmt.Sprintf("%s_copy_%d", taskNo, n) }

// InvalidError is input that breaks one of the rules here. Each side maps
// it to its own invalid-input code; Message is safe to show to a client.
type InvalidError struct{ Message string }

func (e *InvalidError) Error() string { return e.Message }

// Invalidf returns an *InvalidError with a formatted message.
func Invalidf(format string, args ...any) error {
	return &InvalidError{Message: fmt.Sprintf(format, args...)}
}

// NewProcessID returns four random ASCII digits: the id of one attempt's
// confirmation request (ESC/POS GS ( H), which the printer answers with the
// same digits once everything sent before it has printed.
func NewProcessID() string { return RandomDigits(4) }
