// Package cloudtest is an in-memory cloud for tests of the sync link that
// need no PostgreSQL: Cloud implements cloud.Ingester, cloud.CommandService
// and cloud.GatewayService, and sync/server's Notifier, so a real
// sync/server.Server runs real websocket links against it.
//
// It keeps the rules the link relies on (a cursor per gateway incarnation
// at the highest contiguous seq stored, replays stored once, the send
// window, a snapshot for a cloud behind the gateway, states for a gateway
// behind the cloud, revocation, a downstream queue with its ack) and none
// of the rest (tenants, actors, audit, ownership of tasks, redelivery of
// lost orders): the cloud's own rules are tested in cloud/postgres. It
// records what the links did for tests to check, and signals every change
// so that a test waits with Wait, never with a sleep.
package cloudtest
