package postgres

import (
	"context"
	"fmt"
	stdsync "sync"
	"sync/atomic"
	"testing"

	"github.com/storeprint/storeprint/sync"
)

// BenchmarkIngest measures the ingest of batches of gateway events, each
// task's lifecycle as a gateway replays it: queued, printing, three
// receipts, done. Large batches are a gateway catching up after an outage;
// many-gateways is the steady state of a chain, many stores each sending a
// few events at a time in parallel. Run with:
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
				cursor, err := f.ingestEvents(ctx, gw.ID, "s1", batches[i])
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
			if _, err := f.ingestEvents(ctx, gw.ID, "s1", batch); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := f.ingestEvents(ctx, gw.ID, "s1", batch); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N*size)/b.Elapsed().Seconds(), "events/s")
		})
	}

	b.Run("first-delivery/many-gateways/batch=12", func(b *testing.B) {
		const gateways = 64
		f := setup(b)
		ids := make([]string, gateways)
		for i := range ids {
			gw, _ := f.mustStore(b, "acme", fmt.Sprintf("s%d", i))
			ids[i] = gw.ID
		}
		ctx := context.Background()
		var next atomic.Int64
		var mu stdsync.Mutex
		var failed error
		b.SetParallelism(gateways / 2) // GOMAXPROCS(2) x 32 = one goroutine per gateway
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			i := int(next.Add(1)) - 1
			store, gw := fmt.Sprintf("s%d", i%gateways), ids[i%gateways]
			seq := uint64(1)
			for n := 0; pb.Next(); n++ {
				batch := lifecycle(seq, 2, fmt.Sprintf("p%d_%d_", i, n))
				seq += uint64(len(batch))
				if _, err := f.ingestEvents(ctx, gw, store, batch); err != nil {
					mu.Lock()
					failed = err
					mu.Unlock()
					return
				}
			}
		})
		b.StopTimer()
		if failed != nil {
			b.Fatal(failed)
		}
		b.ReportMetric(float64(b.N*12)/b.Elapsed().Seconds(), "events/s")
	})
}
