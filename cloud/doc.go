// Package cloud is the cloud service's domain: tenants, stores, gateways,
// tasks as HQ sees them, receipts, alerts, the append-only audit trail, the
// downstream queue of cloud-originated orders and commands, the Ingester
// that takes the events gateways replay upstream (with the handshake that
// finds a side behind the other, snapshots and dead letters), and the
// link events people see on the dashboard.
//
// The package holds types and the small interfaces the rest of the cloud
// consumes. Adapters live in subpackages named after what they wrap:
// cloud/postgres (PostgreSQL through pgx) implements the services and
// cloud/http serves them as the JSON API.
//
// Every service method acts for the Actor in its context (see
// NewContextWithActor): the admin sees every tenant, a tenant only its own
// stores, and an unknown or foreign store is ENOTFOUND, never its data.
package cloud
