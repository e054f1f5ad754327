// Package server is the cloud's half of the sync link: it authenticates a
// store's gateway, stores the events it replays (deduplicated by the
// database), acknowledges the highest contiguous seq stored, and sends the
// store's downstream commands. Any number of nodes can serve the same
// database: the tables are the truth, and a PostgreSQL notification only
// wakes the node holding a store's link.
package server
