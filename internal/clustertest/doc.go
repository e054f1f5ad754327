// Package clustertest lays out a store's cluster for end-to-end tests:
// two gateways, gw-a and gw-b, and a witness, wit, with each node's
// [cluster] section of the gateway configuration (Sections) and free
// addresses for their cluster traffic (Addr).
package clustertest
