package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var (
	mu    sync.Mutex
	dir   string
	built = map[string]*build{}
)

type build struct {
	once sync.Once
	path string
	err  error
}

// Build returns the path of the program at pkg (an import path, e.g.
// github.com/storeprint/storeprint/cmd/storeprint-gateway) built with the
// given build tags, building it on the first call.
func Build(t testing.TB, pkg string, tags ...string) string {
	t.Helper()
	key := pkg + " " + strings.Join(tags, ",")
	mu.Lock()
	if dir == "" {
		d, err := os.MkdirTemp("", "storeprint-testbin")
		if err != nil {
			mu.Unlock()
			t.Fatalf("testbin: %v", err)
		}
		dir = d
	}
	b := built[key]
	if b == nil {
		b = &build{path: filepath.Join(dir, fmt.Sprintf("%s-%d", path.Base(pkg), len(built)))}
		built[key] = b
	}
	mu.Unlock()
	b.once.Do(func() {
		args := []string{"build", "-o", b.path}
		if len(tags) > 0 {
			args = append(args, "-tags", strings.Join(tags, ","))
		}
		if out, err := exec.Command("go", append(args, pkg)...).CombinedOutput(); err != nil {
			b.err = fmt.Errorf("testbin: go build %s: %v\n%s", pkg, err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// Cleanup removes every program built. Call it after the tests ran.
func Cleanup() {
	mu.Lock()
	defer mu.Unlock()
	if dir != "" {
		os.RemoveAll(dir)
		dir = ""
	}
}
