// Package testenv decides what a test does without a program it needs:
// PostgreSQL, Chromium, Wine, CUPS, socat, promtool, dpkg.
//
// The fast inner loop, go test -short ./..., leaves out the tests that need
// PostgreSQL, Chromium or Wine (Short), so it runs in minutes on any
// machine with Go. Outside CI, a test whose program is not installed
// skips, saying which and how to install it (Missing). In CI (CI=true,
// which .ci/run sets) a missing program fails its test: CI never passes by
// skipping what it could not run.
package testenv
