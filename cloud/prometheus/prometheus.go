package prometheus

import (
	"context"
	"runtime"
	stdsync "sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/storeprint/storeprint/cloud"
	"github.com/storeprint/storeprint/internal/version"
)

// FleetCacheFor is how long a node reuses the database's counts: several
// Prometheus servers scraping several nodes every few seconds cost the
// database one count a node at most this often.
const FleetCacheFor = 10 * time.Second

// Metrics is a cloud node's Prometheus registry.
type Metrics struct {
	reg         *prometheus.Registry
	ingested    prometheus.Counter
	deadLetters prometheus.Counter
	batches     prometheus.Histogram
}

// New returns a node's metrics with the program's version and the Go
// runtime's and process's collectors registered.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	info := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "storeprint_build_info",
		Help:        "Always 1; the labels say the program's version and the Go version it was built with.",
		ConstLabels: prometheus.Labels{"version": version.String(), "goversion": runtime.Version()},
	})
	info.Set(1)
	m.ingested = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "storeprint_cloud_ingested_events_total",
		Help: "Events of the gateways' outboxes this node stored and acknowledged (a batch sent again counts again).",
	})
	m.deadLetters = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "storeprint_cloud_dead_letters_total",
		Help: "Events this node stored but could not apply (set aside with an alert for a person).",
	})
	m.batches = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "storeprint_cloud_ingest_batch_seconds",
		Help:    "Time from a batch of events taking an ingest slot to its acknowledgement: the database's share of the sync link's lag.",
		Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30},
	})
	m.reg.MustRegister(info, m.ingested, m.deadLetters, m.batches,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Registry is where the node's other metrics (HTTP) register, and what
// /metrics serves.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Ingested counts a batch a link stored and acknowledged (sync/server's
// Observer).
func (m *Metrics) Ingested(events, deadLetters int, took time.Duration) {
	m.ingested.Add(float64(events))
	m.deadLetters.Add(float64(deadLetters))
	m.batches.Observe(took.Seconds())
}

// Links is the node's sync server as its gauges read it.
type Links interface {
	Links() int64                // links open on this node
	IngestLoad() (busy, all int) // ingest slots in use, and how many the node has
}

// AttachLinks adds the node's link gauges.
func (m *Metrics) AttachLinks(l Links) { m.reg.MustRegister(&linkCollector{l: l}) }

// AttachFleet adds the chain's counts, read from the database at most
// every FleetCacheFor; now is the clock of the cache (time.Now when nil).
func (m *Metrics) AttachFleet(f cloud.FleetService, now func() time.Time) {
	if now == nil {
		now = time.Now
	}
	m.reg.MustRegister(&fleetCollector{f: f, now: now})
}

var (
	descLinks     = prometheus.NewDesc("storeprint_cloud_links", "Sync links open on this node (sum over the nodes for the cloud's).", nil, nil)
	descSlotsBusy = prometheus.NewDesc("storeprint_cloud_ingest_slots_busy", "Ingest slots of this node in use: batches being stored.", nil, nil)
	descSlots     = prometheus.NewDesc("storeprint_cloud_ingest_slots", "Ingest slots this node has: batches it stores at once.", nil, nil)
	descStores    = prometheus.NewDesc("storeprint_cloud_stores", "Stores with a gateway credential by link state, as the database says (the same on every node).", []string{"state"}, nil)
	descAlerts    = prometheus.NewDesc("storeprint_cloud_alerts_open", "Alerts that need a person (not resolved, acknowledged or expired) by kind, as the database says (the same on every node).", []string{"kind"}, nil)
	descOldest    = prometheus.NewDesc("storeprint_cloud_alerts_oldest_seconds", "How long the oldest alert that needs a person has waited; 0 when none waits (the same on every node).", nil, nil)
	descFleetUp   = prometheus.NewDesc("storeprint_cloud_fleet_up", "1 when the last count of the chain from the database succeeded.", nil, nil)
)

type linkCollector struct{ l Links }

func (c *linkCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descLinks
	ch <- descSlotsBusy
	ch <- descSlots
}

func (c *linkCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(descLinks, prometheus.GaugeValue, float64(c.l.Links()))
	busy, all := c.l.IngestLoad()
	ch <- prometheus.MustNewConstMetric(descSlotsBusy, prometheus.GaugeValue, float64(busy))
	ch <- prometheus.MustNewConstMetric(descSlots, prometheus.GaugeValue, float64(all))
}

type fleetCollector struct {
	f   cloud.FleetService
	now func() time.Time

	mu   stdsync.Mutex // one count at a time; scrapes meanwhile wait for it
	last *cloud.Fleet
	at   time.Time
}

func (c *fleetCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descStores
	ch <- descAlerts
	ch <- descOldest
	ch <- descFleetUp
}

func (c *fleetCollector) Collect(ch chan<- prometheus.Metric) {
	f, ok := c.fleet()
	up := 0.0
	if ok {
		up = 1
	}
	ch <- prometheus.MustNewConstMetric(descFleetUp, prometheus.GaugeValue, up)
	if f == nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(descStores, prometheus.GaugeValue, float64(f.Online), "online")
	ch <- prometheus.MustNewConstMetric(descStores, prometheus.GaugeValue, float64(f.Stores-f.Online), "offline")
	for kind, n := range f.AlertsOpen {
		ch <- prometheus.MustNewConstMetric(descAlerts, prometheus.GaugeValue, float64(n), kind)
	}
	oldest := 0.0
	if !f.OldestAlert.IsZero() {
		oldest = max(0, f.At.Sub(f.OldestAlert).Seconds())
	}
	ch <- prometheus.MustNewConstMetric(descOldest, prometheus.GaugeValue, oldest)
}

// fleet returns the counts, from the cache while fresh; after a failed
// count it serves none (a stale count would hide that the database is
// gone) and says so.
func (c *fleetCollector) fleet() (*cloud.Fleet, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if c.last != nil && now.Sub(c.at) < FleetCacheFor && !now.Before(c.at) {
		return c.last, true
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	f, err := c.f.Fleet(ctx)
	if err != nil {
		c.last = nil
		return nil, false
	}
	c.last, c.at = f, now
	return f, true
}
