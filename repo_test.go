package storeprint_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
