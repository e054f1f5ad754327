package testenv

import (
	"os"
	"strconv"
	"testing"
)

// CI reports whether the tests run in CI: the variable CI set to a true
// value (CI services set CI=true, and so does .ci/run). Any other
// non-empty value but a false one counts as CI too, so that a typo never
// makes CI lenient.
func CI() bool {
	return isCI(os.Getenv("CI"))
}

func isCI(v string) bool {
	if v == "" {
		return false
	}
	b, err := strconv.ParseBool(v)
	return err != nil || b
}

// MaySkip reports whether a test may skip for a missing program: anywhere
// but in CI.
func MaySkip() bool {
	return !CI()
}

// Missing ends a test that needs program, which is not installed (err
// says how it was looked for; install says how to install it): it skips
// the test, or fails it in CI.
func Missing(t testing.TB, program string, err error, install string) {
	t.Helper()
	if MaySkip() {
		t.Skipf("%s is not installed (%v): skipped; to run the tests that need it: %s", program, err, install)
	}
	t.Fatalf("%s is not installed (%v): %s (.ci/run installs it); in CI (CI=true) a missing program fails its tests", program, err, install)
}

// Short skips the test under -short: it needs what (PostgreSQL, Chromium,
// Wine), which the fast inner loop leaves out.
func Short(t testing.TB, what string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("needs %s: -short leaves it out (go test without -short, or make test, runs it)", what)
	}
}
