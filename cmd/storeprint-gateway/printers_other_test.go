//go:build !windows

package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storeprint/storeprint/gateway/gatewaytest"
)

// A spooler printer on a system without the Windows spooler stops the
// gateway at start with an error naming the printer.
func TestMain_SpoolerOffWindows(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "gateway.toml")
	cfg := "store_id = \"store-test\"\ndata_dir = " + quote(filepath.Join(t.TempDir(), "data")) + "\nlisten = \"127.0.0.1:0\"\napi_tokens = [\"" + gatewaytest.Token + "\"]\n" +
		"\n[[printers]]\nid = \"x\"\ndriver = \"spooler\"\naddress = \"Kitchen\"\ntrust_spooler = true\n" +
		"\n[[stations]]\nname = \"hot\"\nprinter = \"x\"\n"
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	m := NewMain()
	m.Stderr = io.Discard
	if err := m.ParseFlags([]string{"run", "--config", path}); err != nil {
		t.Fatal(err)
	}
	err := m.run(context.Background())
	if cerr := m.Close(); cerr != nil {
		t.Errorf("Close: %v", cerr)
	}
	if err == nil || !strings.Contains(err.Error(), `printers[0] (id "x").driver: "spooler" is only available on Windows`) {
		t.Fatalf("got %v, want a start-up error naming printer x and the spooler", err)
	}
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `\`, `\\`) + `"` }

// A spooler printer must say whether Windows' "job complete" counts as
// printed: without trust_spooler the gateway does not start, and the error
// names the key and both choices in one line.
func TestMain_SpoolerWithoutTrust(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "gateway.toml")
	cfg := "store_id = \"store-test\"\ndata_dir = " + quote(filepath.Join(t.TempDir(), "data")) + "\nlisten = \"127.0.0.1:0\"\napi_tokens = [\"" + gatewaytest.Token + "\"]\n" +
		"\n[[printers]]\nid = \"x\"\ndriver = \"spooler\"\naddress = \"Kitchen\"\n" +
		"\n[[stations]]\nname = \"hot\"\nprinter = \"x\"\n"
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	m := NewMain()
	m.Stderr = io.Discard
	err := m.ParseFlags([]string{"run", "--config", path})
	if err == nil {
		err = m.run(context.Background())
		if cerr := m.Close(); cerr != nil {
			t.Errorf("Close: %v", cerr)
		}
	}
	if err == nil {
		t.Fatal("got nil, want an error: a spooler printer without trust_spooler")
	}
	msg := err.Error()
	for _, want := range []string{`printers[0] (id "x").trust_spooler`, "true", "false"} {
		if !strings.Contains(msg, want) {
			t.Errorf("got %q, want %q in it", msg, want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("got %q, want one line", msg)
	}
}
