// Package prometheus exposes the gateway's measurements in the Prometheus
// text format: queue depth per printer, tasks by status, printer status,
// time to paper, attempts by outcome and retries, how long the store's
// syncs and updates take, the data disk's free space, the sync link's
// state and backlog, and the program's version (storeprint_build_info).
// docs/operations.md says what each means and what to do.
package prometheus
