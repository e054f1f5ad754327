package storeprint_test

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/storeprint/storeprint"
)

var update = flag.Bool("update", false, "rewrite docs/lifecycle.md from the transition table")

func TestCanTransition(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		from, to storeprint.Status
		want     bool
	}{
		{storeprint.StatusNew, storeprint.StatusQueued, true},
		{storeprint.StatusNew, storeprint.StatusDone, false},
		{storeprint.StatusQueued, storeprint.StatusPrinting, true},
		{storeprint.StatusPrinting, storeprint.StatusDone, true},
		{storeprint.StatusDone, storeprint.StatusQueued, false},
		{storeprint.StatusDone, storeprint.StatusDone, true}, // a copy counted on a done task
		{storeprint.StatusCancelled, storeprint.StatusQueued, false},
		{storeprint.StatusAttention, storeprint.StatusDone, true},
		{storeprint.StatusQueued, "lost", false},
		{"lost", storeprint.StatusQueued, false},
	} {
		if got := storeprint.CanTransition(tc.from, tc.to); got != tc.want {
			t.Errorf("%q → %q: got %v, want %v", tc.from, tc.to, got, tc.want)
		}
		if err := storeprint.CheckTransition(tc.from, tc.to); (err == nil) != tc.want {
			t.Errorf("%q → %q: CheckTransition says %v", tc.from, tc.to, err)
		}
	}
}

// TestTransitions_Complete: every status has a row, every edge starts where
// its row says, and every status can be reached from a new task.
func TestTransitions_Complete(t *testing.T) {
	t.Parallel()
	reached := map[storeprint.Status]bool{storeprint.StatusNew: true}
	next := []storeprint.Status{storeprint.StatusNew}
	for len(next) > 0 {
		s := next[0]
		next = next[1:]
		for _, tr := range storeprint.Transitions[s] {
			if tr.From != s {
				t.Errorf("row %q holds an edge from %q", s, tr.From)
			}
			if !tr.To.Valid() || tr.Why == "" {
				t.Errorf("edge %+v: unknown status or no reason", tr)
			}
			if !reached[tr.To] {
				reached[tr.To] = true
				next = append(next, tr.To)
			}
		}
	}
	for _, s := range storeprint.Statuses {
		if _, ok := storeprint.Transitions[s]; !ok {
			t.Errorf("status %q has no row in the table", s)
		}
		if !reached[s] {
			t.Errorf("status %q cannot be reached", s)
		}
	}
}

// TestTransitions_Diagram keeps docs/lifecycle.md in step with the table
// (go test -run Diagram -update . rewrites it).
func TestTransitions_Diagram(t *testing.T) {
	t.Parallel()
	got := lifecycle()
	const path = "docs/lifecycle.md"
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run Diagram -update . to write it)", err)
	}
	if string(want) != got {
		t.Fatalf("%s is out of date with storeprint.Transitions: run go test -run Diagram -update .", path)
	}
}

func lifecycle() string {
	var b strings.Builder
	b.WriteString("# Task lifecycle\n\n")
	b.WriteString("Generated from `storeprint.Transitions` (`status.go`) by `go test -run Diagram -update .`;\n")
	b.WriteString("a test fails when this file is out of date. The gateway checks every write\n")
	b.WriteString("of a task against the table, and the cloud every version it is told of. A\n")
	b.WriteString("change that keeps the status (a new route, a copy counted) is always allowed.\n\n")
	b.WriteString("```mermaid\nstateDiagram-v2\n")
	edges := [][3]string{}
	for _, from := range append([]storeprint.Status{storeprint.StatusNew}, storeprint.Statuses...) {
		for _, tr := range storeprint.Transitions[from] {
			f := string(tr.From)
			if tr.From == storeprint.StatusNew {
				f = "[*]"
			}
			edges = append(edges, [3]string{f, string(tr.To), tr.Why})
		}
	}
	for _, e := range edges {
		fmt.Fprintf(&b, "    %s --> %s: %s\n", e[0], e[1], e[2])
	}
	for _, s := range storeprint.Statuses {
		if s.Final() {
			fmt.Fprintf(&b, "    %s --> [*]\n", s)
		}
	}
	b.WriteString("```\n\n| from | to | why |\n|---|---|---|\n")
	for _, e := range edges {
		f := e[0]
		if f == "[*]" {
			f = "(new)"
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", f, e[1], e[2])
	}
	b.WriteString("\nReasons a task needs a person: ")
	for i, r := range storeprint.Reasons {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "`%s`", r)
	}
	b.WriteString(".\n")
	return b.String()
}
