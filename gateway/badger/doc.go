// Package badger keeps the gateway's durable state in a local Badger
// database: tasks and their per-printer FIFO queues, orders, receipts, the
// audit log and the sync outbox.
//
// All writes go through one writer goroutine that applies every waiting
// update in one Badger transaction and commits it with one fsync of
// Badger's write-ahead log (group commit, see walSync). The syncer syncs
// a commit and answers its updates while the writer runs the next batch's
// updates (see syncer); the witness of the commit follows (see
// witnesser). Readers never see a commit before it is on disk. Each update sees the writes of the updates before
// it in the batch and its own; an update that fails leaves nothing behind.
//
// Key layout (every key starts with a one-letter space and a zero byte; ids
// never contain a zero byte):
//
//	t/<task_no>                    task
//	o/<order_id>                   order record
//	q/<printer>/<seq>              open task of a printer, FIFO by acceptance
//	s/<status>/<seq>               task by status
//	r/<task_no>/<attempt>          receipt of one attempt
//	a/<seq>                        audit entry
//	e/<seq>                        outbox event
//	f/<printer>                    failover state
//	m/<name>                       counters and format version
//	D/<device_id>                  paired device (device.go)
//	H/<token_sha256>               device id by the hash of its token
//
// Sequence numbers are 8-byte big-endian, so key order is numeric order and
// the next due task of a printer is the first key under its q/ prefix.
// Values start with a format version byte followed by JSON.
package badger
