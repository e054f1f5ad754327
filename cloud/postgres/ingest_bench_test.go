package postgres

import (
	"context"
	"fmt"
	"testing"

	"github.com/storeprint/storeprint/sync"
)

// BenchmarkIngest measures the ingest of batches of gateway events, each
// task's lifecycle as a gateway replays it: queued, printing, three
// receipts, done. Run with:
//
//	go test -run '^$' -bench BenchmarkIngest -benchtime 50x ./cloud/postgres/
func BenchmarkIngest(b *testing.B) {
	for _, size := range []int{600, 3000} {
		tasks := size / 6
		b.Run(fmt.Sprintf("first-delivery/batch=%d", size), func(b *testing.B) {
			f := setup(b)
			gw, _ := f.mustStore(b, "acme", "s1")
			ctx := context.Background()
			seq := uint64(1)
			batches := make([][]sync.Event, b.N)
			for i := range batches {
				batches[i] = lifecycle(seq, tasks, fmt.Sprintf("b%d_", i))
				seq += uint64(len(batches[i]))
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				cursor, err := f.ingest.Ingest(ctx, gw.ID, "s1", batches[i])
				if err != nil {
					b.Fatal(err)
				}
				if want := batches[i][len(batches[i])-1].Seq; cursor != want {
					b.Fatalf("got cursor %d, want %d", cursor, want)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N*size)/b.Elapsed().Seconds(), "events/s")
		})
		b.Run(fmt.Sprintf("replay/batch=%d", size), func(b *testing.B) {
			f := setup(b)
			gw, _ := f.mustStore(b, "acme", "s1")
			ctx := context.Background()
			batch := lifecycle(1, tasks, "r")
			if _, err := f.ingest.Ingest(ctx, gw.ID, "s1", batch); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := f.ingest.Ingest(ctx, gw.ID, "s1", batch); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N*size)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
