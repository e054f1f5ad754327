package storeprint_test

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/storeprint/storeprint"
)

func TestRandomBytes(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, 16, 32} {
		if got := len(storeprint.RandomBytes(n)); got != n {
			t.Errorf("len(RandomBytes(%d)) = %d, want %d", n, got, n)
		}
	}
	if a, b := storeprint.RandomHex(16), storeprint.RandomHex(16); a == b {
		t.Errorf("two RandomHex(16) are the same: %s", a)
	}
}

func TestRandomHex(t *testing.T) {
	t.Parallel()
	got := storeprint.RandomHex(8)
	if !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(got) {
		t.Errorf("RandomHex(8) = %q, want 16 hex digits", got)
	}
}

func TestRandomDigits(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 6, 12} {
		got := storeprint.RandomDigits(n)
		if !regexp.MustCompile(fmt.Sprintf(`^[0-9]{%d}$`, n)).MatchString(got) {
			t.Errorf("RandomDigits(%d) = %q, want %d digits", n, got, n)
		}
	}
}

func TestNewProcessID(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 200 {
		id := storeprint.NewProcessID()
		if !regexp.MustCompile(`^[0-9]{4}$`).MatchString(id) {
			t.Fatalf("NewProcessID() = %q, want four digits", id)
		}
		seen[id] = true
	}
	if len(seen) < 100 {
		t.Errorf("200 process ids gave %d distinct ones, want them random", len(seen))
	}
}
