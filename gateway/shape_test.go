package gateway_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/storeprint/storeprint/gateway"
)

// driverKeys returns the keys of every registered driver's options (the
// toml tags of their fields, embedded structs' included) and the names of
// those fields.
func driverKeys(t *testing.T) (keys, fields map[string]string) {
	t.Helper()
	keys, fields = map[string]string{}, map[string]string{}
	var walk func(driver string, typ reflect.Type)
	walk = func(driver string, typ reflect.Type) {
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			if f.Anonymous && f.Type.Kind() == reflect.Struct {
				walk(driver, f.Type)
				continue
			}
			if k, _, _ := strings.Cut(f.Tag.Get("toml"), ","); k != "" && k != "-" {
				keys[k] = driver
				fields[f.Name] = driver
			}
		}
	}
	for _, name := range gateway.DriverNames() {
		typ := reflect.TypeOf(gateway.NewDriverOptions(name))
		if typ.Kind() != reflect.Struct {
			t.Fatalf("driver %q registered options of type %s, want a struct whose toml tags name its keys", name, typ)
		}
		walk(name, typ)
	}
	for _, want := range []string{"confirm", "baud", "data_bits", "parity", "stop_bits", "flow", "trust_spooler", "devid", "job_log", "mac", "password", "emulation"} {
		if keys[want] == "" {
			t.Fatalf("no registered driver has the key %s; the shape check would prove nothing", want)
		}
	}
	return keys, fields
}

// The gateway's config holds the keys every printer has; each driver's
// own keys are its options' (gateway.DriverOptions).
func TestPrinterConfig_NoDriverKeys(t *testing.T) {
	t.Parallel()
	keys, fields := driverKeys(t)
	typ := reflect.TypeFor[gateway.PrinterConfig]()
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		k, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if d := keys[k]; d != "" {
			t.Errorf("PrinterConfig.%s is driver %q's key %s", f.Name, d, k)
		}
		if d := fields[f.Name]; d != "" {
			t.Errorf("PrinterConfig.%s is a field of driver %q's options", f.Name, d)
		}
	}
}

// No code of the gateway (gateway/ and its packages, tests aside) tells
// drivers apart by name: no switch case and no comparison with a string
// equal to a registered driver's name. What it needs of a driver goes
// through the driver's options.
func TestGateway_NoDriverNames(t *testing.T) {
	t.Parallel()
	names := gateway.DriverNames()
	if len(names) < 5 {
		t.Fatalf("registered drivers %v: the check would prove little", names)
	}
	var found []string
	isName := func(e ast.Expr) bool {
		lit, ok := e.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return false
		}
		s, err := strconv.Unquote(lit.Value)
		return err == nil && slices.Contains(names, s)
	}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CaseClause:
				for _, e := range n.List {
					if isName(e) {
						found = append(found, fset.Position(e.Pos()).String()+": case "+e.(*ast.BasicLit).Value)
					}
				}
			case *ast.BinaryExpr:
				if (n.Op == token.EQL || n.Op == token.NEQ) && (isName(n.X) || isName(n.Y)) {
					found = append(found, fset.Position(n.Pos()).String()+": comparison with a driver name")
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Error(f)
	}
}
