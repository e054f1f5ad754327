package gateway

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// The units of the configuration: durations that may count days, and
// sizes in bytes with their units.

// Duration is a time.Duration written as a Go duration string ("30m"),
// with "d" for days of 24 hours ("30d", "1d12h").
type Duration struct{ time.Duration }

func (d *Duration) UnmarshalText(b []byte) error {
	v, err := ParseDuration(string(b))
	if err != nil {
		return err
	}
	d.Duration = v
	return nil
}

func (d Duration) MarshalText() ([]byte, error) { return []byte(FormatDuration(d.Duration)), nil }

// ParseDuration reads a Go duration ("90s", "1h30m") that may also count
// whole days ("30d", "400d", "1d12h").
func ParseDuration(s string) (time.Duration, error) {
	bad := fmt.Errorf("%q is not a duration like \"30s\", \"30m\" or \"30d\"", s)
	rest, days := s, int64(0)
	if i := strings.IndexByte(s, 'd'); i >= 0 {
		n, err := strconv.ParseInt(s[:i], 10, 64)
		if err != nil || n < 0 || s[:i] == "" || s[0] == '+' {
			return 0, bad
		}
		if n > int64(math.MaxInt64/Day) {
			return 0, fmt.Errorf("%q is too long (at most %dd)", s, int64(math.MaxInt64/Day))
		}
		days, rest = n, s[i+1:]
		if rest == "" {
			return time.Duration(days) * Day, nil
		}
		if rest[0] == '-' || rest[0] == '+' {
			return 0, bad
		}
	}
	v, err := time.ParseDuration(rest)
	if err != nil {
		return 0, bad
	}
	if days > 0 {
		if v < 0 || v > time.Duration(math.MaxInt64)-time.Duration(days)*Day {
			return 0, bad
		}
		v += time.Duration(days) * Day
	}
	return v, nil
}

// FormatDuration writes d as ParseDuration reads it: whole days as "30d",
// anything else as Go does ("1h30m0s").
func FormatDuration(d time.Duration) string {
	if d > 0 && d%Day == 0 {
		return strconv.FormatInt(int64(d/Day), 10) + "d"
	}
	return d.String()
}

// ByteSize is a size in bytes, written as a number of bytes or with a
// unit: "512KiB", "8MiB", "1GiB" (also KB, MB, GB as powers of 1000).
type ByteSize int64

// UnmarshalTOML implements toml.Unmarshaler: a string with a unit, or a
// plain integer of bytes.
func (b *ByteSize) UnmarshalTOML(v any) error {
	switch x := v.(type) {
	case int64:
		if x < 0 {
			return fmt.Errorf("%d is not a size (it is negative)", x)
		}
		*b = ByteSize(x)
		return nil
	case string:
		n, err := ParseByteSize(x)
		if err != nil {
			return err
		}
		*b = n
		return nil
	}
	return fmt.Errorf("%v is not a size like \"8MiB\"", v)
}

func (b ByteSize) MarshalText() ([]byte, error) { return []byte(b.String()), nil }

// String writes the size with the largest binary unit that divides it.
func (b ByteSize) String() string {
	for _, u := range []struct {
		name string
		n    ByteSize
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if b != 0 && b%u.n == 0 {
			return strconv.FormatInt(int64(b/u.n), 10) + u.name
		}
	}
	return strconv.FormatInt(int64(b), 10) + "B"
}

var byteUnits = map[string]int64{
	"": 1, "b": 1,
	"k": 1 << 10, "kib": 1 << 10, "kb": 1000,
	"m": 1 << 20, "mib": 1 << 20, "mb": 1000 * 1000,
	"g": 1 << 30, "gib": 1 << 30, "gb": 1000 * 1000 * 1000,
}

// ParseByteSize reads "8MiB", "512KiB", "1GiB", "100MB" or "4096".
func ParseByteSize(s string) (ByteSize, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	unit, ok := byteUnits[strings.ToLower(strings.TrimSpace(t[i:]))]
	if i == 0 || !ok {
		return 0, fmt.Errorf("%q is not a size like \"8MiB\", \"512KiB\" or \"1GiB\"", s)
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil || n > math.MaxInt64/unit {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return ByteSize(n * unit), nil
}
