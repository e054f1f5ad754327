package prometheus

import (
	"context"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
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
		Help: "Print attempts by outcome: printed, not_sent, not_ready, uncertain, fenced.",
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
	m.reg.MustRegister(m.timeToPaper, m.attempts, m.retries, m.syncs, m.synced, m.updates,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Attach adds the gauges read from the gateway at scrape time.
func (m *Metrics) Attach(g *gateway.Gateway) {
	m.g = g
	m.reg.MustRegister(&stateCollector{g: g})
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
)

type stateCollector struct{ g *gateway.Gateway }

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descQueue, descTasks, descUp, descFail, descStore} {
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
