// Package ingesttest is the conformance suite of cloud.Ingester: the rules
// every cloud keeps for the events a gateway replays upstream (the cursor
// at the highest contiguous seq stored, replays stored once, the send
// window, a task's state moving only forward, dead letters, ownership,
// the welcome of Open: reset, snapshot, behind, and revocation). Exercise
// runs the same cases against each implementation, the PostgreSQL one in
// cloud/postgres and the in-memory one in cloud/cloudtest, so that tests
// written against the fast cloud hold against the real one.
package ingesttest
