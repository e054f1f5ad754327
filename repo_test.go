package storeprint_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestTrackedFileSizes keeps build output out of the repository: a tracked
// file over 1 MiB fails the build unless it is an image or a golden file
// under testdata/. A clone stays small, and a binary committed by mistake
// is caught before it lands in history for good.
func TestTrackedFileSizes(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("git", "ls-files", "-z").Output()
	if err != nil {
		if testing.Short() {
			t.Skipf("not a git checkout (git ls-files: %v)", err)
		}
		t.Fatalf("git ls-files: %v: the check needs a git checkout", err)
	}
	const limit = 1 << 20
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if name == "" || allowedLarge(name) {
			continue
		}
		fi, err := os.Stat(name)
		if err != nil {
			continue // deleted in the work tree, not yet committed
		}
		if fi.Size() > limit {
			t.Errorf("%s is %d bytes: a tracked file over 1 MiB that is neither an image nor a golden file", name, fi.Size())
		}
	}
}

func allowedLarge(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp":
		return true
	}
	return strings.HasPrefix(name, "testdata/") || strings.Contains(name, "/testdata/")
}

// subjectsFrom is the commit from which every commit subject keeps the
// rule below; history before it is left as it was written.
const subjectsFrom = "5298736f5a4621ec3cb5a300b92c99337b4f3c3c"

// subjectRule is a commit subject's shape: its scope spelled as the
// package path or file it changes (several joined by ", "), a colon, a
// space, then what the change does.
var subjectRule = regexp.MustCompile(`^[A-Za-z0-9_./-]+(, [A-Za-z0-9_./-]+)*: \S`)

// TestCommitSubjects keeps commit subjects readable in one line of git log
// --oneline: at most 72 characters, in the shape "scope: what it does".
func TestCommitSubjects(t *testing.T) {
	t.Parallel()
	if err := exec.Command("git", "cat-file", "-e", subjectsFrom+"^{commit}").Run(); err != nil {
		t.Skipf("the history does not reach %.12s (not a git checkout, or a shallow clone): nothing to check", subjectsFrom)
	}
	out, err := exec.Command("git", "log", "--no-merges", "--format=%h %s", subjectsFrom+"..HEAD").Output()
	if err != nil {
		t.Fatalf("git log: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line == "" {
			continue
		}
		hash, subject, _ := strings.Cut(line, " ")
		if n := utf8.RuneCountInString(subject); n > 72 {
			t.Errorf("commit %s: the subject is %d characters, over 72: %q", hash, n, subject)
		}
		if !subjectRule.MatchString(subject) {
			t.Errorf("commit %s: the subject %q is not \"scope: what it does\" (scope: the package path, e.g. gateway/badger)", hash, subject)
		}
	}
}
