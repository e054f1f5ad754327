package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/storeprint/storeprint/internal/testlog"
	"github.com/storeprint/storeprint/internal/version"
)

func TestVersion(t *testing.T) {
	t.Parallel()
	for _, arg := range []string{"version", "--version"} {
		t.Run(arg, func(t *testing.T) {
			m, stdout, _ := setup(t, arg)
			if err := m.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			if want := "storeprint " + version.String() + " (go"; !strings.HasPrefix(stdout.String(), want) {
				t.Fatalf("got %q, want it to start with %q", stdout.String(), want)
			}
		})
	}
	t.Run("Help", func(t *testing.T) {
		m := NewMain()
		stdout := new(testlog.Buffer)
		m.Stdout = stdout
		if err := m.ParseFlags([]string{"version", "--help"}); !errors.Is(err, errHelp) {
			t.Fatalf("got %v, want errHelp", err)
		}
		if !strings.Contains(stdout.String(), "Usage: storeprint version") {
			t.Fatalf("got %q", stdout.String())
		}
	})
	t.Run("ErrExtraArg", func(t *testing.T) {
		m := NewMain()
		if err := m.ParseFlags([]string{"version", "now"}); err == nil || !strings.Contains(err.Error(), `"now"`) {
			t.Fatalf("got %v, want an error naming the argument", err)
		}
	})
}
