package deploy

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Files are the dashboards and rules as shipped.
//
//go:embed grafana/*.json prometheus/*.yml
var Files embed.FS

// The programs whose metrics the dashboards and rules read.
const (
	Gateway = "gateway"
	Cloud   = "cloud"
)

// RuleGroups maps each rule group to the program whose metrics it reads.
var RuleGroups = map[string]string{"storeprint-gateway": Gateway, "storeprint-cloud": Cloud}

// Dashboards maps each dashboard file to the program it shows.
var Dashboards = map[string]string{"grafana/gateway.json": Gateway, "grafana/cloud.json": Cloud}

// Rules is a Prometheus rule file.
type Rules struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []Rule `yaml:"rules"`
	} `yaml:"groups"`
}

// Rule is one alerting or recording rule.
type Rule struct {
	Alert       string            `yaml:"alert"`
	Record      string            `yaml:"record"`
	Expr        string            `yaml:"expr"`
	For         string            `yaml:"for"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

// RuleFiles returns the rule files (not their tests), by name.
func RuleFiles() (map[string]*Rules, error) {
	names, err := fs.Glob(Files, "prometheus/*.yml")
	if err != nil {
		return nil, err
	}
	out := map[string]*Rules{}
	for _, n := range names {
		if strings.HasSuffix(n, "_test.yml") {
			continue
		}
		b, err := Files.ReadFile(n)
		if err != nil {
			return nil, err
		}
		var r Rules
		if err := yaml.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		out[n] = &r
	}
	return out, nil
}

// Uses returns the metric names (as exposed: a histogram's _bucket, _sum
// or _count) that the dashboards and the rules read, by program, sorted.
func Uses() (map[string][]string, error) {
	uses := map[string]map[string]bool{Gateway: {}, Cloud: {}}
	add := func(program, where string, names []string) error {
		if uses[program] == nil {
			return fmt.Errorf("%s: no program named %q", where, program)
		}
		for _, n := range names {
			uses[program][n] = true
		}
		return nil
	}
	files, err := RuleFiles()
	if err != nil {
		return nil, err
	}
	for name, r := range files {
		for _, g := range r.Groups {
			program, ok := RuleGroups[g.Name]
			if !ok {
				return nil, fmt.Errorf("%s: group %s: say in RuleGroups which program it reads", name, g.Name)
			}
			for _, rule := range g.Rules {
				if err := add(program, name, MetricNames(rule.Expr)); err != nil {
					return nil, err
				}
			}
		}
	}
	names, err := fs.Glob(Files, "grafana/*.json")
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		program, ok := Dashboards[name]
		if !ok {
			return nil, fmt.Errorf("%s: say in Dashboards which program it shows", name)
		}
		b, err := Files.ReadFile(name)
		if err != nil {
			return nil, err
		}
		var d any
		if err := json.Unmarshal(b, &d); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		var walkErr error
		walk(d, "", func(key, s string) {
			switch key {
			case "expr":
				walkErr = cmpOr(walkErr, add(program, name, MetricNames(s)))
			case "definition":
				if m := labelValuesRE.FindStringSubmatch(s); m != nil {
					walkErr = cmpOr(walkErr, add(program, name, []string{m[1]}))
				}
			}
		})
		if walkErr != nil {
			return nil, walkErr
		}
	}
	out := map[string][]string{}
	for p, set := range uses {
		for n := range set {
			out[p] = append(out[p], n)
		}
		slices.Sort(out[p])
	}
	return out, nil
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// walk calls fn with every string in v and the key it is under.
func walk(v any, key string, fn func(key, s string)) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			walk(x, k, fn)
		}
	case []any:
		for _, x := range v {
			walk(x, key, fn)
		}
	case string:
		fn(key, v)
	}
}

var (
	labelValuesRE = regexp.MustCompile(`label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)`)
	stringRE      = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|` + "`[^`]*`")
	matchersRE    = regexp.MustCompile(`\{[^}]*\}`)
	rangeRE       = regexp.MustCompile(`\[[^\]]*\]`)
	groupingRE    = regexp.MustCompile(`\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	variableRE    = regexp.MustCompile(`\$\{[^}]*\}|\$[a-zA-Z_][a-zA-Z0-9_]*`)
	identRE       = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
	numberRE      = regexp.MustCompile(`(^|[^a-zA-Z0-9_:.])[0-9][0-9.eE+-]*[a-zA-Z]*`)
)

// keywords of PromQL that are not metric names.
var keywords = []string{"and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring",
	"group_left", "group_right", "inf", "nan", "Inf", "NaN", "atan2"}

// MetricNames returns the metric names a PromQL expression reads: its
// identifiers that are not functions, keywords, label names or values,
// ranges, numbers or Grafana variables.
func MetricNames(expr string) []string {
	s := stringRE.ReplaceAllString(expr, " ")
	s = matchersRE.ReplaceAllString(s, " ")
	s = rangeRE.ReplaceAllString(s, " ")
	s = groupingRE.ReplaceAllString(s, " ")
	s = variableRE.ReplaceAllString(s, " ")
	s = numberRE.ReplaceAllString(s, "$1 ")
	var out []string
	for _, loc := range identRE.FindAllStringIndex(s, -1) {
		name := s[loc[0]:loc[1]]
		rest := strings.TrimLeft(s[loc[1]:], " \t\n")
		if strings.HasPrefix(rest, "(") || slices.Contains(keywords, name) || slices.Contains(out, name) {
			continue
		}
		out = append(out, name)
	}
	return out
}
