package main

import (
	"testing"
	"time"

	"github.com/storeprint/storeprint/internal/testwatch"
)

// waitUntil waits for cond to hold, checking it again every time the
// gateway says something changed (testwatch.Until).
func waitUntil(t testing.TB, base string, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	testwatch.Until(t, base, token, timeout, cond)
}
