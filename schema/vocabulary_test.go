package schema_test

import (
	"context"
	"regexp"
	"slices"
	"testing"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
	"github.com/storeprint/storeprint/cloud/postgres/pgtest"
)

// TestVocabulary_Checks compares every CHECK list of the schema with the
// Go list it stands for: whatever the gateway can write, the cloud's
// tables accept, and nothing else.
func TestVocabulary_Checks(t *testing.T) {
	t.Parallel()
	url := pgtest.NewDatabase(t)
	ctx := context.Background()
	conn := connect(t, url)
	for _, tc := range []struct {
		constraint string
		want       []string
	}{
		{"print_tasks_status_check", append(strs(storeprint.Statuses), string(cloud.StatusPendingDelivery))},
		{"print_tasks_reason_check", append(strs(storeprint.Reasons), "")},
		{"receipts_state_check", strs(storeprint.ReceiptStates)},
		{"printers_status_check", strs(storeprint.PrinterStates)},
		{"downstream_kind_check", strs(storeprint.CommandKinds)},
		{"printers_word_check", append(strs(storeprint.TroubleWords), "")},
		{"printers_kind_check", strs(storeprint.TargetKinds)},
		{"link_events_kind_check", cloud.LinkEventKinds},
	} {
		t.Run(tc.constraint, func(t *testing.T) {
			var def string
			if err := conn.QueryRow(ctx, `
				SELECT pg_get_constraintdef(oid) FROM pg_constraint
				WHERE conname = $1 AND connamespace = 'public'::regnamespace`, tc.constraint).Scan(&def); err != nil {
				t.Fatalf("read %s: %v", tc.constraint, err)
			}
			got := checkList(def)
			slices.Sort(got)
			want := slices.Clone(tc.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("%s allows %q, the Go list is %q", tc.constraint, got, want)
			}
		})
	}
}

var quoted = regexp.MustCompile(`'([^']*)'::text`)

// checkList returns the strings of a CHECK (col IN (...)) definition.
func checkList(def string) []string {
	var out []string
	for _, m := range quoted.FindAllStringSubmatch(def, -1) {
		out = append(out, m[1])
	}
	return out
}

func strs[S ~string](list []S) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = string(s)
	}
	return out
}
