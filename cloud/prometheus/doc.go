// Package prometheus holds the cloud node's Prometheus registry: the
// program's version (storeprint_build_info), the sync links open on this
// node and what they ingested, and the chain's counts read from the
// database (stores online, alerts that need a person), cached briefly so
// that every node of a cloud can be scraped often without loading the
// database. cloud/http adds its HTTP metrics to the same registry.
// docs/operations.md says what each means and what to do.
package prometheus
