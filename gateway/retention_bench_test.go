package gateway_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/gateway/badger"
	"github.com/storeprint/storeprint/internal/clock"
)

// lifecycle stores n two-ticket orders (hot and cold) the way the gateway
// does, accepted at the fake clock's now and printed: the order and its
// tasks, the attempt leased, the receipt prepared, submitted and printed,
// the task done. Orders are numbered from `from`.
func lifecycle(b testing.TB, store gateway.Store, now time.Time, from, n int) {
	b.Helper()
	const chunk = 100
	for i := from; i < from+n; i += chunk {
		err := store.Update(context.Background(), func(tx gateway.Tx) error {
			for j := i; j < min(i+chunk, from+n); j++ {
				o := &storeprint.Order{OrderID: fmt.Sprintf("A%07d", j), Table: "T12", Items: []storeprint.Item{
					{Name: "宫保鸡丁", Qty: 1, Station: "hot", Note: "少辣"}, {Name: "鱼香肉丝", Qty: 2, Station: "hot"},
					{Name: "凉拌黄瓜", Qty: 1, Station: "cold"}, {Name: "酸梅汤", Qty: 2, Station: "cold", Note: "去冰"}}}
				rec := &gateway.OrderRecord{OrderID: o.OrderID, Digest: o.Digest(), Source: storeprint.SourcePOS, CreatedAt: now}
				for _, st := range []string{"hot", "cold"} {
					no := storeprint.TaskNo(o.OrderID, st)
					p := st + "-1"
					t := &gateway.Task{TaskNo: no, OrderID: o.OrderID, Station: st, PrinterID: p, FirstPrinter: p,
						Status: storeprint.StatusQueued, Source: storeprint.SourcePOS, Table: o.Table, Items: o.ItemsFor(st),
						Seq: tx.NextTaskSeq(), CreatedAt: now, NextAt: now}
					if err := tx.PutTask(t); err != nil {
						return err
					}
					rec.TaskNos, rec.Printers = append(rec.TaskNos, no), append(rec.Printers, p)
					t.Status, t.Attempt, t.LeaseToken, t.LeaseExpires = storeprint.StatusPrinting, 1, "0123456789abcdef0123456789abcdef", now.Add(30*time.Second)
					if err := tx.PutTask(t); err != nil {
						return err
					}
					r := &gateway.Receipt{TaskNo: no, Attempt: 1, State: storeprint.ReceiptPrepared, PrinterID: p,
						PayloadSHA256: "9f2b6e1c9d0a4b3f8e7d6c5b4a39281706f5e4d3c2b1a0f9e8d7c6b5a4938271", ProcessID: "4821", PreparedAt: now}
					if err := tx.PutReceipt(r); err != nil {
						return err
					}
					r.State, r.SubmittedAt = storeprint.ReceiptSubmitted, &now
					if err := tx.PutReceipt(r); err != nil {
						return err
					}
					r.State, r.PrintedAt = storeprint.ReceiptPrinted, &now
					if err := tx.PutReceipt(r); err != nil {
						return err
					}
					t.Status, t.PrintedAt, t.LeaseToken, t.LeaseExpires = storeprint.StatusDone, &now, "", time.Time{}
					if err := tx.PutTask(t); err != nil {
						return err
					}
				}
				if err := tx.PutOrder(rec); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBytesPerTask measures the disk space one printed ticket takes
// once the store has compacted: standalone (the outbox trimmed) and linked
// (every event acknowledged by the cloud, printed receipts confirmed).
func BenchmarkBytesPerTask(b *testing.B) {
	for _, linked := range []bool{false, true} {
		name := "standalone"
		if linked {
			name = "linked"
		}
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			fake := clock.NewFake(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
			g, _, store, dir := setupRetention(b, fake, badger.Options{}, linked)
			const orders = 10000
			lifecycle(b, store, fake.Now(), 0, orders)
			if linked {
				for i := 0; i < 2; i++ { // the confirmations are events too
					st, err := g.SyncState(ctx)
					if err != nil {
						b.Fatal(err)
					}
					if err := g.OutboxAcked(ctx, st.Last); err != nil {
						b.Fatal(err)
					}
				}
			} else if r := g.NewSweeper(gateway.SweeperOptions{Clock: fake}).Sweep(ctx); r.Err != nil {
				b.Fatal(r.Err)
			}
			if err := store.ReclaimSpace(); err != nil {
				b.Fatal(err)
			}
			per := float64(diskUsage(b, dir)) / (2 * orders)
			b.Logf("%s: %.0f bytes on disk per ticket (%d tickets)", name, per, 2*orders)
			b.ReportMetric(per, "bytes/ticket")
		})
	}
}

// BenchmarkRetention_TwoYears simulates a store at seed 000's load, 800
// tickets an hour for 12 hours a day (400 orders of two tickets an hour),
// standalone, with the default retention (30 days of tickets, 400 days of
// order ids), one sweep a day: day after day through the real store and
// sweeper, STOREPRINT_BENCH_DAYS days (default 45). Tickets stop growing
// the data dir after 30 days; only the compact order-id records grow on,
// until day 400. The two-year figure adds their measured daily growth up
// to day 400 to the last day's size; with STOREPRINT_BENCH_DAYS=730 it is
// measured instead.
func BenchmarkRetention_TwoYears(b *testing.B) {
	days := 45
	if s := os.Getenv("STOREPRINT_BENCH_DAYS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 32 {
			b.Fatalf("STOREPRINT_BENCH_DAYS=%q: want a number of days, at least 32", s)
		}
		days = n
	}
	ctx := context.Background()
	fake := clock.NewFake(time.Date(2026, 1, 1, 8, 0, 0, 0, time.UTC))
	g, _, store, dir := setupRetention(b, fake, badger.Options{}, false)
	s := g.NewSweeper(gateway.SweeperOptions{Clock: fake, Reclaim: store.ReclaimSpace})
	start := time.Now()
	var size31, sizeLast int64
	n := 0
	for day := 1; day <= days; day++ {
		for h := 0; h < 12; h++ {
			lifecycle(b, store, fake.Now(), n, 400)
			n += 400
			fake.Advance(time.Hour)
		}
		fake.Advance(12 * time.Hour)
		if r := s.Sweep(ctx); r.Err != nil {
			b.Fatal(r.Err)
		}
		sizeLast = diskUsage(b, dir)
		if day == 31 {
			size31 = sizeLast
		}
		if day%15 == 0 || day == days {
			b.Logf("day %d: %d tickets so far, data dir %.0f MiB (%s)", day, 2*n, float64(sizeLast)/(1<<20), time.Since(start).Round(time.Second))
		}
	}
	twoYears := float64(sizeLast)
	if days < 400 && days > 31 {
		perDay := float64(sizeLast-size31) / float64(days-31)
		twoYears += perDay * float64(400-days)
		b.Logf("order-id records grow the data dir by %.0f KiB a day until day 400", perDay/1024)
	}
	b.Logf("two years at 800 tickets an hour, 12 hours a day: data dir %.0f MiB", twoYears/(1<<20))
	b.ReportMetric(float64(sizeLast)/(1<<20), fmt.Sprintf("day%d-MiB", days))
	b.ReportMetric(twoYears/(1<<20), "two-years-MiB")
}
