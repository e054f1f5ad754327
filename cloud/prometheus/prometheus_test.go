package prometheus_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/storeprint/storeprint/cloud"
	"github.com/storeprint/storeprint/cloud/prometheus"
)

// fleetCounter answers Fleet with its fields and counts the calls.
type fleetCounter struct {
	f     cloud.Fleet
	err   error
	calls int
}

func (c *fleetCounter) Fleet(context.Context) (*cloud.Fleet, error) {
	c.calls++
	if c.err != nil {
		return nil, c.err
	}
	f := c.f
	return &f, nil
}

type links struct{ n int64 }

func (l links) Links() int64                { return l.n }
func (l links) IngestLoad() (busy, all int) { return 3, 4 }

// The chain's counts are read from the database at most every
// FleetCacheFor however often the node is scraped; a failed count serves
// storeprint_cloud_fleet_up 0 and no stale counts.
func TestMetrics_Fleet(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	now := at
	fc := &fleetCounter{f: cloud.Fleet{Stores: 5, Online: 3, AlertsOpen: map[string]int64{"failed": 2, "dead_letter": 0},
		OldestAlert: at.Add(-90 * time.Second), At: at}}
	m := prometheus.New()
	m.AttachFleet(fc, func() time.Time { return now })
	m.AttachLinks(links{n: 7})
	m.Ingested(10, 1, 20*time.Millisecond)
	m.Ingested(5, 0, 30*time.Millisecond)

	want := `
# HELP storeprint_cloud_alerts_oldest_seconds How long the oldest alert that needs a person has waited; 0 when none waits (the same on every node).
# TYPE storeprint_cloud_alerts_oldest_seconds gauge
storeprint_cloud_alerts_oldest_seconds 90
# HELP storeprint_cloud_alerts_open Alerts that need a person (not resolved, acknowledged or expired) by kind, as the database says (the same on every node).
# TYPE storeprint_cloud_alerts_open gauge
storeprint_cloud_alerts_open{kind="dead_letter"} 0
storeprint_cloud_alerts_open{kind="failed"} 2
# HELP storeprint_cloud_dead_letters_total Events this node stored but could not apply (set aside with an alert for a person).
# TYPE storeprint_cloud_dead_letters_total counter
storeprint_cloud_dead_letters_total 1
# HELP storeprint_cloud_fleet_up 1 when the last count of the chain from the database succeeded.
# TYPE storeprint_cloud_fleet_up gauge
storeprint_cloud_fleet_up 1
# HELP storeprint_cloud_ingest_slots Ingest slots this node has: batches it stores at once.
# TYPE storeprint_cloud_ingest_slots gauge
storeprint_cloud_ingest_slots 4
# HELP storeprint_cloud_ingest_slots_busy Ingest slots of this node in use: batches being stored.
# TYPE storeprint_cloud_ingest_slots_busy gauge
storeprint_cloud_ingest_slots_busy 3
# HELP storeprint_cloud_ingested_events_total Events of the gateways' outboxes this node stored and acknowledged (a batch sent again counts again).
# TYPE storeprint_cloud_ingested_events_total counter
storeprint_cloud_ingested_events_total 15
# HELP storeprint_cloud_links Sync links open on this node (sum over the nodes for the cloud's).
# TYPE storeprint_cloud_links gauge
storeprint_cloud_links 7
# HELP storeprint_cloud_stores Stores with a gateway credential by link state, as the database says (the same on every node).
# TYPE storeprint_cloud_stores gauge
storeprint_cloud_stores{state="offline"} 2
storeprint_cloud_stores{state="online"} 3
`
	names := []string{"storeprint_cloud_alerts_oldest_seconds", "storeprint_cloud_alerts_open", "storeprint_cloud_dead_letters_total",
		"storeprint_cloud_fleet_up", "storeprint_cloud_ingest_slots", "storeprint_cloud_ingest_slots_busy",
		"storeprint_cloud_ingested_events_total", "storeprint_cloud_links", "storeprint_cloud_stores"}
	if got := gather(t, m.Registry(), names...); got != strings.TrimPrefix(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if got := gather(t, m.Registry(), "storeprint_cloud_ingest_batch_seconds"); !strings.Contains(got, "storeprint_cloud_ingest_batch_seconds_count 2\n") {
		t.Errorf("ingest batch histogram: got\n%s\nwant two batches", got)
	}
	if got := gather(t, m.Registry(), "storeprint_build_info"); !strings.Contains(got, `goversion="go`) || !strings.HasSuffix(got, "} 1\n") {
		t.Errorf("build info: got\n%s", got)
	}

	t.Run("Cached", func(t *testing.T) {
		now = at.Add(prometheus.FleetCacheFor - time.Second)
		if _, err := m.Registry().Gather(); err != nil {
			t.Fatal(err)
		}
		if fc.calls != 1 {
			t.Fatalf("got %d counts for two scrapes within %s, want 1", fc.calls, prometheus.FleetCacheFor)
		}
		now = at.Add(prometheus.FleetCacheFor)
		if _, err := m.Registry().Gather(); err != nil {
			t.Fatal(err)
		}
		if fc.calls != 2 {
			t.Fatalf("got %d counts, want a second one once the first is %s old", fc.calls, prometheus.FleetCacheFor)
		}
	})

	t.Run("ErrDatabase", func(t *testing.T) {
		fc.err = errors.New("database gone")
		now = now.Add(prometheus.FleetCacheFor)
		want := `
# HELP storeprint_cloud_fleet_up 1 when the last count of the chain from the database succeeded.
# TYPE storeprint_cloud_fleet_up gauge
storeprint_cloud_fleet_up 0
`
		if got := gather(t, m.Registry(), "storeprint_cloud_fleet_up", "storeprint_cloud_stores", "storeprint_cloud_alerts_open"); got != strings.TrimPrefix(want, "\n") {
			t.Fatalf("got\n%s\nwant\n%s", got, want)
		}
	})
}

// gather renders the named families of reg in the text format, in name
// order.
func gather(t *testing.T, reg prom.Gatherer, names ...string) string {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, mf := range mfs {
		for _, n := range names {
			if mf.GetName() == n {
				if _, err := expfmt.MetricFamilyToText(&b, mf); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	return b.String()
}
