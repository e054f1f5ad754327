// Package client is the gateway's half of the sync link: it replays the
// gateway's outbox to the cloud in seq order, resumes from the cloud's
// cursor after any break, applies the commands the cloud sends down, and
// reports printer states. Printing never waits on it.
//
// A session runs in steps, a file each: the handshake (handshake.go,
// resync.go for the snapshot to a cloud behind), the send window with
// acknowledgement and compaction (window.go), printer status (status.go),
// and the cloud's frames, its commands and states (read.go). Between
// sessions the client waits on internal/backoff's schedule; every timer is
// on Client.Clock, so tests drive time (cloud/cloudtest is the cloud they
// link to).
//
// Crash recovery: the outbox lives in the gateway's Badger store and is
// only compacted up to a cursor the cloud acknowledged, so every state the
// disk can be in is safe:
//
//   - events written, never sent: sent after the next connect;
//   - sent, not acknowledged (link or process died): the cloud's welcome
//     cursor says where to resume; the cloud skips what it already stored;
//   - acknowledged, not yet compacted: sent again only if the cloud's
//     cursor is lower, which it is not; compaction happens on the next ack;
//   - a command applied, its cursor not stored: applying is idempotent
//     (orders by order_id, make-up prints of done tasks are no-ops), and a
//     copy and its cursor are stored in one transaction.
package client
