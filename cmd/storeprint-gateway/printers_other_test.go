//go:build !windows

package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A spooler printer on a system without the Windows spooler stops the
// gateway at start with an error naming the printer.
func TestMain_SpoolerOffWindows(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "gateway.toml")
	cfg := "store_id = \"store-test\"\ndata_dir = " + quote(filepath.Join(t.TempDir(), "data")) + "\nlisten = \"127.0.0.1:0\"\napi_tokens = [\"" + token + "\"]\n" +
		"\n[[printers]]\nid = \"x\"\ndriver = \"spooler\"\naddress = \"Kitchen\"\n" +
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
