package storeprint_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDeps keeps the shape of the house: the shared words import nothing
// of the project, and neither the cloud, the sync link nor the ticket
// encoders import the gateway (they share the words of package storeprint
// instead).
func TestDeps(t *testing.T) {
	t.Parallel()
	const module = "github.com/storeprint/storeprint"
	for _, tc := range []struct {
		pkgs    string
		allowed func(dep string) bool
	}{
		{".", func(dep string) bool { return dep == module }},
		{"./cloud/...", func(dep string) bool { return !strings.HasPrefix(dep, module+"/gateway") }},
		{"./sync/...", func(dep string) bool { return !strings.HasPrefix(dep, module+"/gateway") }},
		{"./printerdrivers/escpos", func(dep string) bool { return !strings.HasPrefix(dep, module+"/gateway") }},
		{"./printerdrivers/starprnt", func(dep string) bool { return !strings.HasPrefix(dep, module+"/gateway") }},
	} {
		out, err := exec.Command("go", "list", "-deps", "-test=false", tc.pkgs).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", tc.pkgs, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			if (dep == module || strings.HasPrefix(dep, module+"/")) && !tc.allowed(dep) {
				t.Errorf("%s imports %s", tc.pkgs, dep)
			}
		}
	}
}
