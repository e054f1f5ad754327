package main

import (
	"context"
	"strings"
	"testing"

	"github.com/storeprint/storeprint/internal/version"
)

func TestMain_Version(t *testing.T) {
	t.Parallel()
	for _, arg := range []string{"version", "--version"} {
		t.Run(arg, func(t *testing.T) {
			m, out := newMain(nil)
			if err := m.ParseFlags([]string{arg}); err != nil {
				t.Fatal(err)
			}
			if err := m.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			if want := "storeprint-cloud " + version.String() + " (go"; !strings.HasPrefix(out.String(), want) {
				t.Fatalf("got %q, want it to start with %q", out, want)
			}
		})
	}
	t.Run("ErrExtraArg", func(t *testing.T) {
		m, _ := newMain(nil)
		if err := m.ParseFlags([]string{"version", "now"}); err == nil || !strings.Contains(err.Error(), `"now"`) {
			t.Fatalf("got %v, want an error naming the argument", err)
		}
	})
}

// Each command's --help describes that command.
func TestMain_CommandHelp(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cmd           string
		want, notWant []string
	}{
		{"run", []string{"Usage: storeprint-cloud run", "--listen", "--admin-token", "--migrate=false", "STOREPRINT_ADMIN_TOKEN", "Exit status"}, nil},
		{"migrate", []string{"Usage: storeprint-cloud migrate", "--database-url", "DATABASE_URL"}, []string{"--admin-token", "--listen"}},
		{"version", []string{"Usage: storeprint-cloud version"}, []string{"--database-url"}},
	} {
		t.Run(tc.cmd, func(t *testing.T) {
			m, out := newMain(nil)
			if err := m.ParseFlags([]string{tc.cmd, "--help"}); err != errHelp {
				t.Fatalf("got %v, want errHelp", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("help does not mention %q:\n%s", w, out)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(out.String(), w) {
					t.Errorf("help mentions %q, which is not %s's:\n%s", w, tc.cmd, out)
				}
			}
		})
	}
}
