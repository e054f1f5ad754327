package testenv

import (
	"os"
	"strconv"
	"testing"
)

// CI reports whether the tests run in CI: the variable CI set to a true
// value (CI services set CI=true). Any other non-empty value but a false
// one counts as CI too, so that a typo never makes CI lenient.
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

// MaySkip reports whether a test may skip for a missing program: under
// -short, and not in CI. Flags must have been parsed (in TestMain, call
// flag.Parse first).
func MaySkip() bool {
	return testing.Short() && !CI()
}

// Missing ends a test that needs program, which is not installed (err
// says how it was looked for; install says how to install it). Under
// -short outside CI it skips the test; otherwise it fails it.
func Missing(t testing.TB, program string, err error, install string) {
	t.Helper()
	if MaySkip() {
		t.Skipf("%s is not installed (%v): -short skips the tests that need it; to run them: %s", program, err, install)
	}
	why := "go test -short skips the tests that need it"
	if CI() {
		why = "CI (CI=true) runs every test"
	}
	t.Fatalf("%s is not installed (%v): %s (.ci/run installs it); %s", program, err, install, why)
}
