package printerdrivers_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestPipeline_OnePrepare checks that the confirmed-print steps are written
// once: of all the non-test Go files under printerdrivers/, only the
// pipeline calls a print job's Prepare. A driver that calls it itself has
// its own copy of the steps.
func TestPipeline_OnePrepare(t *testing.T) {
	var callers []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Prepare" {
				callers = append(callers, path)
				return false
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(callers) != 1 || callers[0] != "pipeline.go" {
		t.Fatalf("got Prepare called in %q, want only in pipeline.go", callers)
	}
}
