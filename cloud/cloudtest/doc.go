// Package cloudtest is an in-memory cloud for tests of the sync link that
// need no PostgreSQL: Cloud implements cloud.Ingester, cloud.CommandService
// and cloud.GatewayService, and sync/server's Notifier, so a real
// sync/server.Server runs real websocket links against it.
//
// It keeps the ingest rules of the PostgreSQL cloud, held to them by the
// conformance suite in cloud/ingesttest: a cursor per gateway incarnation
// at the highest contiguous seq stored, replays stored once, the send
// window, a task's state moving only to a higher (rank, version) within
// the version bound and the transition table, ownership of tasks, dead
// letters, a snapshot for a cloud behind the gateway, states for a
// gateway behind the cloud, revocation, and a downstream queue with its
// ack. It keeps none of the rest (tenants, actors, audit, alerts,
// receipts, redelivery of lost orders). It records what the links did for
// tests to check, and signals every change so that a test waits with
// Wait, never with a sleep.
package cloudtest
