package testlog

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// JSONLines reads a log written with --log-format json: every line that
// is not blank is one JSON object with time (RFC 3339), level (DEBUG,
// INFO, WARN or ERROR) and msg. It returns the records in order, or an
// error naming the first line that is not one.
func JSONLines(log string) ([]map[string]any, error) {
	var recs []map[string]any
	for line := range strings.Lines(log) {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			return nil, fmt.Errorf("a line is not a JSON object: %w\n%s", err, line)
		}
		for _, k := range []string{"time", "level", "msg"} {
			if s, _ := rec[k].(string); s == "" {
				return nil, fmt.Errorf("a line lacks %s: %s", k, line)
			}
		}
		if _, err := time.Parse(time.RFC3339Nano, rec["time"].(string)); err != nil {
			return nil, fmt.Errorf("time: %w: %s", err, line)
		}
		switch rec["level"] {
		case "DEBUG", "INFO", "WARN", "ERROR":
		default:
			return nil, fmt.Errorf("level %v: %s", rec["level"], line)
		}
		recs = append(recs, rec)
	}
	return recs, nil
}
