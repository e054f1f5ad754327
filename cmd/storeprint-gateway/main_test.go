package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// The tests of this package run the real program, in this process or as
// its own; gatewaytest writes their configurations and speaks the POS API.

// writeConfig writes a configuration (TOML, gatewaytest.Config) to a file
// of its own and returns the path, as the program's --config takes it.
func writeConfig(t testing.TB, toml string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "gateway.toml")
	if err := os.WriteFile(path, []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// runGateway runs the real program in this process until the test ends;
// each opt may change the program before it starts.
func runGateway(t testing.TB, cfgPath string, opts ...func(*Main)) (*Main, string) {
	t.Helper()
	m, stop := startGateway(t, cfgPath, opts...)
	t.Cleanup(stop)
	return m, m.HTTP.URL()
}

// launch runs m on the configuration at cfgPath and returns once it
// serves, with the function that stops it and the channel its end comes
// on.
func launch(t testing.TB, m *Main, cfgPath string) (context.CancelFunc, <-chan error) {
	t.Helper()
	if err := m.ParseFlags([]string{"run", "--config", cfgPath}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.run(ctx) }()
	select {
	case <-m.Ready():
	case err := <-done:
		cancel()
		t.Fatalf("gateway did not start: %v", err)
	}
	return cancel, done
}

// startGateway starts the real program in this process and returns it
// with the function that stops it, for a test that restarts it.
func startGateway(t testing.TB, cfgPath string, opts ...func(*Main)) (*Main, func()) {
	t.Helper()
	m := NewMain()
	m.Stderr = io.Discard
	if testing.Verbose() {
		m.Stderr = os.Stderr
	}
	for _, o := range opts {
		o(m)
	}
	cancel, done := launch(t, m, cfgPath)
	return m, func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("gateway run: %v", err)
		}
		if err := m.Close(); err != nil {
			t.Errorf("gateway close: %v", err)
		}
	}
}
