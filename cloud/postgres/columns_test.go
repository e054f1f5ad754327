package postgres

import (
	"context"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// The columns written directly reach PostgreSQL as the values pgx writes
// element by element: the same arrays, compared by PostgreSQL.
func TestColumns_SameAsPgx(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	zones := []*time.Location{time.UTC, time.FixedZone("", 8*3600), time.FixedZone("", -(3*3600 + 1800))}
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 20).Draw(t, "n")
		texts, int8s, int4s, times := make([]string, n), make([]int64, n), make([]int32, n), make([]time.Time, n)
		for i := range n {
			texts[i] = rapid.StringMatching(`[a-z0-9_\-\.é"\\{},' ]{0,40}`).Draw(t, "text")
			int8s[i] = rapid.Int64().Draw(t, "int8")
			int4s[i] = rapid.Int32().Draw(t, "int4")
			// From year 1 to 9999, at any nanosecond, in any of the zones.
			times[i] = time.Unix(rapid.Int64Range(-62135596800, 253402300799).Draw(t, "unix"), rapid.Int64Range(0, 999999999).Draw(t, "nanos")).
				In(rapid.SampledFrom(zones).Draw(t, "zone"))
		}
		var same bool
		var got []string
		err := f.db.pool.QueryRow(ctx, `
			SELECT $1::text[] = $5::text[] AND $2::bigint[] = $6::bigint[] AND $3::int[] = $7::int[] AND $4::timestamptz[] = $8::timestamptz[],
			       ARRAY(SELECT unnest($1::text[]))`,
			textColumn(texts), int8Column(int8s), int4Column(int4s), timeColumn(times),
			texts, int8s, int4s, times).Scan(&same, &got)
		if err != nil {
			t.Fatal(err)
		}
		if !same || len(got) != n {
			t.Fatalf("the columns written directly differ from pgx's: %q", got)
		}
		for i := range got {
			if got[i] != texts[i] {
				t.Fatalf("text %d: got %q, want %q", i, got[i], texts[i])
			}
		}
	})
}
