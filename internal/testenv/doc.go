// Package testenv decides what a test does when a program it needs is not
// installed: PostgreSQL, Chromium, Wine, CUPS, socat, promtool.
//
// The whole suite (make test, and CI) needs them all, and a missing one
// fails the test that needs it with how to install it. The fast inner
// loop, go test -short ./..., runs on a machine without them: there a
// missing program skips the tests that need it, saying which and why. In
// CI (CI=true) a missing program fails even under -short, so that CI
// never passes by skipping.
package testenv
