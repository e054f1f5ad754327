package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The store's binary must not pull in the cloud's database driver.
func TestDeps(t *testing.T) {
	t.Parallel()
	for _, goos := range []string{"linux", "windows"} {
		cmd := exec.Command("go", "list", "-deps", ".")
		cmd.Env = append(cmd.Environ(), "GOOS="+goos)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list: %v", err)
		}
		for _, dep := range strings.Fields(string(out)) {
			if strings.HasPrefix(dep, "github.com/jackc/pgx") || strings.HasPrefix(dep, "github.com/storeprint/storeprint/cloud") {
				t.Errorf("GOOS=%s: storeprint-gateway imports %s", goos, dep)
			}
		}
	}
}
