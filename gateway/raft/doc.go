// Package raft runs a store's gateway on a cluster of nodes (two gateways
// and a witness) that keep one replicated store, on
// github.com/hashicorp/raft: the leader records each update's writes,
// the log carries them to a majority, and every node's Badger store
// (gateway/badger) applies them in log order. The nodes talk over TCP and
// authenticate each other with the cluster's secret.
package raft
