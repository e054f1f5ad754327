// Package testbin builds the project's programs for end-to-end tests that
// run them as real processes: each program once per test binary, removed
// again when the tests end (call Cleanup from TestMain).
package testbin
