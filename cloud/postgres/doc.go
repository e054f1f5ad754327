// Package postgres implements the cloud's services on PostgreSQL through
// pgx v5: tenants, stores, gateways, cloud orders, tasks, commands, audit
// and the Ingester.
//
// Idempotency is enforced by unique constraints and INSERT ... ON CONFLICT,
// never by a check followed by an insert; ingest writes a batch with array
// (unnest) statements in one transaction; a task's row only moves to a
// higher version. Every store-scoped query carries the actor's tenant, so a
// tenant never reads or writes another tenant's stores. Nothing is kept in
// process memory between calls: any number of nodes may share a database.
//
// pgx errors are translated once, here (see interpret): no rows becomes
// ENOTFOUND, a unique violation ECONFLICT.
package postgres
