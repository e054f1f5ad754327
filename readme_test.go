package storeprint_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadme_FrontDoor keeps README.md a front door: short enough to read
// whole, with the two commands, and a link to every page under docs/, so
// that nothing written there is out of reach.
func TestReadme_FrontDoor(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	if n := strings.Count(readme, "\n"); n > 250 {
		t.Errorf("README.md is %d lines, over 250: move the detail to a page under docs/", n)
	}
	for _, cmd := range []string{"make demo", "make test", "make test-short", "make bench"} {
		if !strings.Contains(readme, cmd) {
			t.Errorf("README.md does not say %q", cmd)
		}
	}
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) == 0 {
		t.Fatal("no pages under docs/")
	}
	for _, p := range pages {
		if !strings.Contains(readme, "]("+p+")") && !strings.Contains(readme, "]("+p+"#") {
			t.Errorf("README.md does not link %s", p)
		}
	}
}
