package http_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// The server takes the gateway as the small interfaces it consumes
// (service.go, storage.go), never as the concrete *gateway.Gateway: a
// handler reaches only the methods its interface names, and the server
// can be served by anything that has them.
func TestServer_NamesNoGateway(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		gw := "" // the name gateway is imported as in f
		for _, imp := range f.Imports {
			if path, _ := strconv.Unquote(imp.Path.Value); path == "github.com/storeprint/storeprint/gateway" {
				gw = "gateway"
				if imp.Name != nil {
					gw = imp.Name.Name
				}
			}
		}
		if gw == "" {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "Gateway" {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == gw {
					t.Errorf("%s: names %s.Gateway; take the interface the handler needs instead", fset.Position(sel.Pos()), gw)
				}
			}
			return true
		})
	}
}
