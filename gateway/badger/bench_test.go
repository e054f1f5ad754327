package badger_test

import (
	"context"
	"fmt"
	"sort"
	stdsync "sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/gateway/badger"
)

// BenchmarkDB_Update measures durable updates from concurrent writers,
// each storing one task as an order does: updates/s and latency.
func BenchmarkDB_Update(b *testing.B) {
	db, _ := setup(b)
	ctx := context.Background()
	lat := make([]time.Duration, b.N)
	var next atomic.Int64
	var wg stdsync.WaitGroup
	items := []storeprint.Item{{Name: "宫保鸡丁", Qty: 1, Station: "hot", Note: "少辣"}}
	b.ResetTimer()
	start := time.Now()
	for c := 0; c < 16; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= b.N {
					return
				}
				t0 := time.Now()
				err := db.Update(ctx, func(tx gateway.Tx) error {
					t := newTask(tx, fmt.Sprintf("order_%d_station_hot", i), "p1")
					t.Items = items
					return tx.PutTask(t)
				})
				lat[i] = time.Since(t0)
				if err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(b.N)/el.Seconds(), "updates/s")
	b.ReportMetric(float64(lat[b.N/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[min(b.N-1, b.N*99/100)].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(lat[b.N-1].Microseconds())/1000, "max-ms")
}

// BenchmarkDB_Order measures the update an accepted order makes, from 16
// concurrent POS connections: the lookups that find the order new, its
// two tasks and its record, durable. Besides updates/s it reports the CPU
// of this process an order cost (the store's writer, Badger, the syncs)
// and, with allocs/op, what it gave the collector.
func BenchmarkDB_Order(b *testing.B) {
	db, _ := setup(b)
	ctx := context.Background()
	var next atomic.Int64
	var wg stdsync.WaitGroup
	now := time.Now()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0, start := badger.ProcessCPU(), time.Now()
	for range 16 {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= b.N {
					return
				}
				id := fmt.Sprintf("b%d", i)
				err := db.Update(ctx, func(tx gateway.Tx) error { return badger.PutOrder(tx, id, now) })
				if err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	el, cpu := time.Since(start), badger.ProcessCPU()-cpu0
	b.StopTimer()
	b.ReportMetric(float64(b.N)/el.Seconds(), "orders/s")
	if cpu > 0 {
		b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/order")
	}
}
