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
		var pe toml.ParseError
		if errors.As(err, &pe) {
			if pe.LastKey != "" {
				return nil, storeprint.Errorf(storeprint.EINVALID, "line %d: %s: %s", pe.Position.Line, pe.LastKey, pe.Message)
			}
			return nil, storeprint.Errorf(storeprint.EINVALID, "line %d: %s", pe.Position.Line, pe.Message)
		}
		return nil, storeprint.Errorf(storeprint.EINVALID, "%v", err)
	}
	if u := md.Undecoded(); len(u) > 0 {
		keys := make([]string, len(u))
		for i, k := range u {
			keys[i] = k.String()
		}
		return nil, storeprint.Errorf(storeprint.EINVALID, "unknown key %s", strings.Join(keys, ", "))
	}
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &cfg, nil
}
