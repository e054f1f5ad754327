// Package badger keeps the gateway's durable state in a local Badger
// database: tasks and their per-printer FIFO queues, orders, receipts, the
// audit log and the sync outbox.
//
// All writes go through one writer goroutine that applies every waiting
// update in one Badger transaction and commits it. The syncer makes the
// commits durable with one fsync of Badger's write-ahead log for all that
// were made since the last (group commit, see walSync) and answers their
// updates, while the writer goes on with the next batches (see syncer);
// the witness of the commit follows with a later flush. An update that
// needs no sync of its own (gateway.WithoutSync) rides on the next one
// that does. Readers read the
// newest synced commit and never wait for a sync (see view). Each update
// sees the writes of the updates before it, synced or not, and its own; an
// update that fails leaves nothing behind.
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
