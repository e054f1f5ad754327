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

// helperEnv, when set, makes the helper tests below run: TestMissing and
// TestShort run them in a child process.
const helperEnv = "STOREPRINT_TESTENV_HELPER"

func TestMissing_Helper(t *testing.T) {
	if os.Getenv(helperEnv) == "" {
		t.Skip("run by TestMissing in a child process")
	}
	Missing(t, "frobnicator", errors.New("frobnicator not found in PATH"), "apt-get install -y frobnicator")
	t.Log("after Missing")
}

func TestShort_Helper(t *testing.T) {
	if os.Getenv(helperEnv) == "" {
		t.Skip("run by TestShort in a child process")
	}
	Short(t, "Frobnicator")
	t.Log("after Short")
}

// child runs the helper test in a child process with -short or not and CI
// set to ci, and returns its output.
func child(t *testing.T, helper string, short bool, ci string) string {
	t.Helper()
	args := []string{"-test.run=^" + helper + "$", "-test.v"}
	if short {
		args = append(args, "-test.short")
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), helperEnv+"=1", "CI="+ci)
	out, _ := cmd.CombinedOutput()
	return string(out)
}

// A missing program skips its test outside CI, with or without -short,
// and fails it in CI; either way the output says what is missing and how
// to install it, and the test goes no further.
func TestMissing(t *testing.T) {
	for _, c := range []struct {
		name  string
		short bool
		ci    string
		want  string
		say   string
	}{
		{"Skips", false, "", "--- SKIP", "skipped; to run the tests that need it"},
		{"ShortSkips", true, "", "--- SKIP", "skipped; to run the tests that need it"},
		{"CIFails", false, "true", "--- FAIL", "in CI (CI=true) a missing program fails its tests"},
		{"ShortInCIFails", true, "true", "--- FAIL", "in CI (CI=true) a missing program fails its tests"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := child(t, "TestMissing_Helper", c.short, c.ci)
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

// Short skips under -short, in CI or not, saying what it leaves out, and
// does nothing otherwise.
func TestShort(t *testing.T) {
	for _, c := range []struct {
		name  string
		short bool
		ci    string
		want  string
		say   string
	}{
		{"Skips", true, "", "--- SKIP", "needs Frobnicator: -short leaves it out"},
		{"SkipsInCI", true, "true", "--- SKIP", "needs Frobnicator: -short leaves it out"},
		{"Runs", false, "", "--- PASS", "after Short"},
		{"RunsInCI", false, "true", "--- PASS", "after Short"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := child(t, "TestShort_Helper", c.short, c.ci); !strings.Contains(got, c.want) || !strings.Contains(got, c.say) {
				t.Errorf("got output without %q and %q:\n%s", c.want, c.say, got)
			}
		})
	}
}
