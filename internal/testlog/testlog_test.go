package testlog_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/storeprint/storeprint/internal/testlog"
)

// Lines written from many goroutines while the test reads all arrive
// whole (go test -race checks the reads).
func TestBuffer(t *testing.T) {
	t.Parallel()
	var b testlog.Buffer
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 100 {
				fmt.Fprintf(&b, "writer %d line %d\n", i, j)
				_ = b.String()
			}
		})
	}
	wg.Wait()
	if got := strings.Count(b.String(), "\n"); got != 800 {
		t.Errorf("got %d lines, want 800", got)
	}
	if !strings.Contains(b.String(), "writer 7 line 99\n") {
		t.Errorf("the last line of writer 7 is missing")
	}
}
