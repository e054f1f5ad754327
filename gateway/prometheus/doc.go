// Package prometheus exposes the gateway's measurements in the Prometheus
// text format: queue depth per printer, tasks by status, printer status,
// time to paper, attempts by outcome and retries, and how long the store's
// syncs and updates take.
package prometheus
