package testenv

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

func TestCI(t *testing.T) {
	for v, want := range map[string]bool{
		"": false, "false": false, "0": false, "FALSE": false,
		"true": true, "1": true, "TRUE": true, "yes": true,
	} {
		if got := isCI(v); got != want {
			t.Errorf("CI=%q: got %v, want %v", v, got, want)
		}
	}
}

// helperEnv, when set, makes TestMissing_Helper the program-less test that
// TestMissing runs in a child process.
const helperEnv = "STOREPRINT_TESTENV_HELPER"

func TestMissing_Helper(t *testing.T) {
	if os.Getenv(helperEnv) == "" {
		t.Skip("run by TestMissing in a child process")
	}
	Missing(t, "frobnicator", errors.New("frobnicator not found in PATH"), "apt-get install -y frobnicator")
	t.Log("after Missing")
}

// TestMissing runs a test whose program is missing in a child process,
// with and without -short, in and out of CI: it skips only under -short
// outside CI, fails otherwise, and says what is missing and how to
// install it either way.
func TestMissing(t *testing.T) {
	for _, c := range []struct {
		name  string
		short bool
		ci    string
		want  string
		say   string
	}{
		{"ShortSkips", true, "", "--- SKIP", "-short skips the tests that need it"},
		{"ShortInCIFails", true, "true", "--- FAIL", "CI (CI=true) runs every test"},
		{"FullFails", false, "", "--- FAIL", "go test -short skips the tests that need it"},
		{"FullInCIFails", false, "true", "--- FAIL", "CI (CI=true) runs every test"},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := []string{"-test.run=^TestMissing_Helper$", "-test.v"}
			if c.short {
				args = append(args, "-test.short")
			}
			cmd := exec.Command(os.Args[0], args...)
			cmd.Env = append(os.Environ(), helperEnv+"=1", "CI="+c.ci)
			out, _ := cmd.CombinedOutput()
			got := string(out)
			for _, w := range []string{c.want, c.say, "frobnicator is not installed", "apt-get install -y frobnicator"} {
				if !strings.Contains(got, w) {
					t.Errorf("got output without %q:\n%s", w, got)
				}
			}
			if strings.Contains(got, "after Missing") {
				t.Errorf("the test went on after Missing:\n%s", got)
			}
		})
	}
}
