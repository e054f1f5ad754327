package toml

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
)

// Load reads, defaults and validates a configuration file. Errors name the
// file, the key and the problem.
func Load(path string) (*gateway.Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	cfg, err := Parse(string(b))
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	return cfg, nil
}

// Parse decodes, defaults and validates a configuration.
func Parse(s string) (*gateway.Config, error) {
	var cfg gateway.Config
	md, err := toml.Decode(s, &cfg)
	if err != nil {
		return nil, decodeErr(err)
	}
	dk := driverKeys()
	var unknown []string
	for _, k := range md.Undecoded() {
		if !isDriverKey(k, dk) {
			unknown = append(unknown, k.String())
		}
	}
	if len(unknown) > 0 {
		return nil, storeprint.Errorf(storeprint.EINVALID, "unknown key %s", strings.Join(unknown, ", "))
	}
	var pt printerTables
	pmd, err := toml.Decode(s, &pt)
	if err != nil {
		return nil, decodeErr(err)
	}
	for i := range cfg.Printers {
		if err := decodeOptions(pmd, i, &cfg.Printers[i], pt.Printers[i], dk); err != nil {
			return nil, err
		}
	}
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &cfg, nil
}

// decodeErr names the line and the key of an error decoding the document.
func decodeErr(err error) error {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		if pe.LastKey != "" {
			return storeprint.Errorf(storeprint.EINVALID, "line %d: %s: %s", pe.Position.Line, pe.LastKey, pe.Message)
		}
		return storeprint.Errorf(storeprint.EINVALID, "line %d: %s", pe.Position.Line, pe.Message)
	}
	return storeprint.Errorf(storeprint.EINVALID, "%v", err)
}
