package http

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/storeprint/storeprint"
)

// metrics are the server's Prometheus metrics, on its own registry so that
// several servers can run in one process (tests).
type metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	orders   *prometheus.CounterVec
	commands *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "storeprint_cloud_http_requests_total",
			Help: "HTTP requests by route pattern and status code.",
		}, []string{"route", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "storeprint_cloud_http_request_duration_seconds",
			Help:    "HTTP request duration by route pattern.",
			Buckets: prometheus.DefBuckets,
		}, []string{"route"}),
		orders: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "storeprint_cloud_orders_total",
			Help: "Cloud-originated orders by result: created or replayed.",
		}, []string{"result"}),
		commands: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "storeprint_cloud_commands_total",
			Help: "Commands queued for stores' gateways by kind.",
		}, []string{"kind"}),
	}
	reg.MustRegister(m.requests, m.duration, m.orders, m.commands)
	// Every result and kind from zero: a rate or an alert on them works
	// before the first order.
	for _, r := range []string{"created", "replayed"} {
		m.orders.WithLabelValues(r)
	}
	for _, k := range storeprint.CommandKinds {
		m.commands.WithLabelValues(string(k))
	}
	return m
}
