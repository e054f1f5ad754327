package toml

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
)

// A [[printers]] entry holds the keys every printer has (the fields of
// gateway.PrinterConfig) and the keys of its driver, which the driver
// registered as the toml tags of its options (gateway.DriverOptions). The
// document is decoded twice: once into gateway.Config, which leaves the
// driver keys undecoded, and once with each printer as a table of
// undecoded values, from which each printer's driver keys are decoded
// into its driver's options.

// printerTables is the document's printers, each as its keys' values.
type printerTables struct {
	Printers []map[string]toml.Primitive `toml:"printers"`
}

// driverKeys returns the key names of the registered drivers' options,
// each with the drivers that have it, sorted.
func driverKeys() map[string][]string {
	keys := map[string][]string{}
	for _, name := range gateway.DriverNames() {
		for k := range fields(reflect.New(reflect.TypeOf(gateway.NewDriverOptions(name))).Elem()) {
			keys[k] = append(keys[k], name)
		}
	}
	return keys
}

// fields returns the fields of the struct v by their toml keys, those of
// embedded structs included.
func fields(v reflect.Value) map[string]reflect.Value {
	out := map[string]reflect.Value{}
	if v.Kind() != reflect.Struct {
		return out
	}
	for i := 0; i < v.NumField(); i++ {
		f := v.Type().Field(i)
		if !f.IsExported() {
			continue
		}
		if f.Anonymous && f.Type.Kind() == reflect.Struct && f.Tag.Get("toml") == "" {
			for k, fv := range fields(v.Field(i)) {
				out[k] = fv
			}
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if name == "" || name == "-" {
			continue
		}
		out[strings.ToLower(name)] = v.Field(i)
	}
	return out
}

// isDriverKey reports whether an undecoded key is a printer's key of
// some driver: the driver options decode it.
func isDriverKey(k toml.Key, keys map[string][]string) bool {
	return len(k) == 2 && k[0] == "printers" && keys[strings.ToLower(k[1])] != nil
}

// decodeOptions decodes the driver keys of printer i, whose keys' values
// are t, into the options of its driver. A printer whose driver is
// missing or unknown keeps none (Validate names its driver); a key of
// another driver is an error naming the key and the drivers that have it.
func decodeOptions(md toml.MetaData, i int, p *gateway.PrinterConfig, t map[string]toml.Primitive, keys map[string][]string) error {
	opts := gateway.NewDriverOptions(p.Driver)
	if opts == nil {
		return nil
	}
	v := reflect.New(reflect.TypeOf(opts)).Elem()
	v.Set(reflect.ValueOf(opts))
	own := fields(v)
	names := make([]string, 0, len(t))
	for k := range t {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		// Keys match their fields' tags in any case, as the document's
		// other keys match gateway.Config's.
		lk := strings.ToLower(k)
		if keys[lk] == nil {
			continue // a common key, or unknown (reported before)
		}
		f, ok := own[lk]
		if !ok {
			return storeprint.Errorf(storeprint.EINVALID, "%s.%s: only for driver = %s", printerKey(i, p), k, quoted(keys[lk]))
		}
		if err := md.PrimitiveDecode(t[k], f.Addr().Interface()); err != nil {
			line, msg := decodeError(err)
			if line > 0 {
				return storeprint.Errorf(storeprint.EINVALID, "line %d: %s.%s: %s", line, printerKey(i, p), k, msg)
			}
			return storeprint.Errorf(storeprint.EINVALID, "%s.%s: %s", printerKey(i, p), k, msg)
		}
	}
	p.Options = v.Interface().(gateway.DriverOptions)
	return nil
}

// printerKey names printer i as Config.Validate does.
func printerKey(i int, p *gateway.PrinterConfig) string {
	if p.ID == "" {
		return fmt.Sprintf("printers[%d]", i)
	}
	return fmt.Sprintf("printers[%d] (id %q)", i, p.ID)
}

// quoted writes drivers as `"a"`, `"a" or "b"`, `"a", "b" or "c"`.
func quoted(drivers []string) string {
	q := make([]string, len(drivers))
	for i, d := range drivers {
		q[i] = fmt.Sprintf("%q", d)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// decodeError is the problem a decode error names, without the
// package's prefix and the key it names its own way
// (`toml: line 13 (last key "printers.baud"): incompatible types: ...`),
// and the line it names, or 0.
func decodeError(err error) (line int, msg string) {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		return pe.Position.Line, pe.Message
	}
	if m := tomlPrefix.FindStringSubmatch(err.Error()); m != nil {
		line, _ = strconv.Atoi(m[1])
		return line, err.Error()[len(m[0]):]
	}
	return 0, err.Error()
}

var tomlPrefix = regexp.MustCompile(`^toml: (?:line (\d+) )?(?:\(last key "[^"]*"\): )?`)
