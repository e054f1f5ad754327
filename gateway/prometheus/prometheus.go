package prometheus

import (
	"context"
	"net/http"
	"runtime"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/internal/version"
)

var (
	_ gateway.Observer      = (*Metrics)(nil)
	_ gateway.StoreObserver = (*Metrics)(nil)
)

// Metrics is the gateway's Prometheus registry.
type Metrics struct {
	reg         *prometheus.Registry
	timeToPaper *prometheus.HistogramVec
	attempts    *prometheus.CounterVec
	retries     *prometheus.CounterVec
	syncs       prometheus.Histogram
	synced      prometheus.Counter
	updates     prometheus.Histogram
	g           *gateway.Gateway
}

// buildInfo is storeprint_build_info: always 1, labelled with the
// program's version and the Go it was built with, so a dashboard counts
// the versions a rollout has reached.
func buildInfo() prometheus.Collector {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "storeprint_build_info",
		Help:        "Always 1; the labels say the program's version and the Go version it was built with.",
		ConstLabels: prometheus.Labels{"version": version.String(), "goversion": runtime.Version()},
	})
	g.Set(1)
	return g
}

// New returns the gateway's metrics. Call Attach once the gateway exists.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.timeToPaper = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "storeprint_time_to_paper_seconds",
		Help:    "Time from accepting a task to the printer's confirmation.",
		Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 900, 1800},
	}, []string{"printer"})
	m.attempts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "storeprint_print_attempts_total",
		Help: "Print attempts by outcome: printed, not_sent, not_ready, uncertain, fenced, abandoned.",
	}, []string{"printer", "outcome"})
	m.retries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "storeprint_retries_total",
		Help: "Failed attempts known not to have printed, scheduled for retry.",
	}, []string{"printer"})
	// From a tenth of a millisecond (a fast SSD) to seconds (a worn SD
	// card, a disk nearly full).
	disk := []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5}
	m.syncs = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "storeprint_storage_sync_seconds",
		Help:    "Time each sync of the store's log to disk took; one sync makes every update committed meanwhile durable.",
		Buckets: disk,
	})
	m.synced = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "storeprint_storage_synced_updates_total",
		Help: "Updates made durable by the syncs (divided by the syncs' count: updates a sync).",
	})
	m.updates = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "storeprint_storage_update_seconds",
		Help:    "Time from asking the store for an update (an order, a print's progress) to its answer, once durable or refused.",
		Buckets: disk,
	})
	m.reg.MustRegister(m.timeToPaper, m.attempts, m.retries, m.syncs, m.synced, m.updates, buildInfo(),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Outcomes are the outcomes of an attempt storeprint_print_attempts_total
// counts.
var Outcomes = []string{"printed", "not_sent", "not_ready", "uncertain", "fenced", "abandoned"}

// Attach adds the gauges read from the gateway at scrape time, and starts
// each printer's counters and time to paper at zero, so that a rate or an
// alert on them works from the first scrape, before anything happened.
func (m *Metrics) Attach(g *gateway.Gateway) {
	m.g = g
	m.reg.MustRegister(&stateCollector{g: g})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ps, _ := g.Printers(ctx) // without them, the series appear as they happen
	for _, p := range ps {
		m.timeToPaper.WithLabelValues(p.ID)
		m.retries.WithLabelValues(p.ID)
		for _, o := range Outcomes {
			m.attempts.WithLabelValues(p.ID, o)
		}
	}
}

// LinkState is the sync link as the metrics read it at scrape time.
type LinkState struct {
	Up     bool   // a link to the cloud is live
	Cursor uint64 // the highest seq the cloud acknowledged on it
}

// AttachLink adds the sync link's gauges: whether it is up, how many
// events the cloud has not acknowledged and how old the oldest of them
// is. A gateway without a cloud has no link and serves none of them.
func (m *Metrics) AttachLink(state func() LinkState) {
	m.reg.MustRegister(&linkCollector{g: m.g, state: state})
}

// DiskState is the data disk as the metrics read it at scrape time; ok is
// false when its free space cannot be read.
type DiskState func() (free, reserve uint64, ok bool)

// AttachDisk adds the data disk's free space and the reserve below which
// the gateway refuses new orders.
func (m *Metrics) AttachDisk(disk DiskState) {
	m.reg.MustRegister(&diskCollector{disk: disk})
}

// Handler serves the metrics.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

func (m *Metrics) Printed(printerID string, d time.Duration) {
	m.timeToPaper.WithLabelValues(printerID).Observe(d.Seconds())
}

func (m *Metrics) Attempt(printerID, outcome string) {
	m.attempts.WithLabelValues(printerID, outcome).Inc()
}

func (m *Metrics) Retry(printerID string) { m.retries.WithLabelValues(printerID).Inc() }

func (m *Metrics) Synced(d time.Duration, updates int) {
	m.syncs.Observe(d.Seconds())
	m.synced.Add(float64(updates))
}

func (m *Metrics) Updated(d time.Duration) { m.updates.Observe(d.Seconds()) }

var (
	descQueue = prometheus.NewDesc("storeprint_queue_depth", "Open tasks waiting for or printing on a printer.", []string{"printer"}, nil)
	descTasks = prometheus.NewDesc("storeprint_tasks", "Tasks by status.", []string{"status"}, nil)
	descUp    = prometheus.NewDesc("storeprint_printer_status", "1 for the printer's current status.", []string{"printer", "status"}, nil)
	descFail  = prometheus.NewDesc("storeprint_printer_failover", "1 while a printer's stations print on its backup.", []string{"printer"}, nil)
	descStore = prometheus.NewDesc("storeprint_storage_ok", "1 while storage writes succeed.", nil, nil)
	descRoute = prometheus.NewDesc("storeprint_station_printer", "1 for each station and the printer its tickets go to now: its own, or its backup while failed over (join with storeprint_queue_depth on printer for the queue by station).", []string{"station", "printer"}, nil)

	descLinkUp  = prometheus.NewDesc("storeprint_sync_link_up", "1 while the sync link to the cloud is live, 0 while not.", nil, nil)
	descPending = prometheus.NewDesc("storeprint_sync_pending_events", "Events written and not yet acknowledged by the cloud.", nil, nil)
	descOldest  = prometheus.NewDesc("storeprint_sync_oldest_pending_seconds", "Age of the oldest event the cloud has not acknowledged; 0 when none waits.", nil, nil)

	descFree    = prometheus.NewDesc("storeprint_storage_free_bytes", "Free space on the data disk, as last read.", nil, nil)
	descReserve = prometheus.NewDesc("storeprint_storage_reserve_bytes", "Free space the gateway keeps: below it new orders are refused.", nil, nil)
)

type stateCollector struct{ g *gateway.Gateway }

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descQueue, descTasks, descUp, descFail, descStore, descRoute} {
		ch <- d
	}
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ps, err := c.g.Printers(ctx)
	if err == nil {
		for _, p := range ps {
			ch <- prometheus.MustNewConstMetric(descQueue, prometheus.GaugeValue, float64(p.Queue), p.ID)
			for _, s := range []storeprint.PrinterState{storeprint.PrinterReady, storeprint.PrinterOffline, storeprint.PrinterPaperEnd, storeprint.PrinterCoverOpen, storeprint.PrinterUnknown} {
				v := 0.0
				if p.Status == s {
					v = 1
				}
				ch <- prometheus.MustNewConstMetric(descUp, prometheus.GaugeValue, v, p.ID, string(s))
			}
			v := 0.0
			if p.Failover != nil && p.Failover.Active {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(descFail, prometheus.GaugeValue, v, p.ID)
			to := p.ID // where the printer's stations print now
			if p.Failover != nil && p.Failover.Active && p.Failover.Backup != "" {
				to = p.Failover.Backup
			}
			for _, st := range p.Stations {
				ch <- prometheus.MustNewConstMetric(descRoute, prometheus.GaugeValue, 1, st, to)
			}
		}
	}
	if counts, err := c.g.CountByStatus(ctx); err == nil {
		for _, s := range storeprint.Statuses {
			ch <- prometheus.MustNewConstMetric(descTasks, prometheus.GaugeValue, float64(counts[s]), string(s))
		}
	}
	ok := 1.0
	if c.g.Health() != nil {
		ok = 0
	}
	ch <- prometheus.MustNewConstMetric(descStore, prometheus.GaugeValue, ok)
}

type linkCollector struct {
	g     *gateway.Gateway
	state func() LinkState
}

func (c *linkCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descLinkUp
	ch <- descPending
	ch <- descOldest
}

// Collect reads the outbox's two counters and its oldest unacknowledged
// event: a few keys, whatever the backlog.
func (c *linkCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.state()
	up := 0.0
	if st.Up {
		up = 1
	}
	ch <- prometheus.MustNewConstMetric(descLinkUp, prometheus.GaugeValue, up)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ss, err := c.g.SyncState(ctx)
	if err != nil {
		return
	}
	pending := ss.Pending(st.Cursor)
	ch <- prometheus.MustNewConstMetric(descPending, prometheus.GaugeValue, float64(pending))
	age := 0.0
	if pending > 0 {
		events, err := c.g.OutboxEvents(ctx, max(st.Cursor, ss.Acked), 1)
		if err != nil {
			return
		}
		if len(events) > 0 {
			age = max(0, c.g.Now().Sub(events[0].At).Seconds())
		}
	}
	ch <- prometheus.MustNewConstMetric(descOldest, prometheus.GaugeValue, age)
}

type diskCollector struct{ disk DiskState }

func (c *diskCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descFree
	ch <- descReserve
}

func (c *diskCollector) Collect(ch chan<- prometheus.Metric) {
	free, reserve, ok := c.disk()
	if !ok {
		return
	}
	ch <- prometheus.MustNewConstMetric(descFree, prometheus.GaugeValue, float64(free))
	ch <- prometheus.MustNewConstMetric(descReserve, prometheus.GaugeValue, float64(reserve))
}
