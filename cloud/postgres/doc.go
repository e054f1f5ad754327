// Package postgres implements the cloud's services on PostgreSQL through
// pgx v5: tenants, stores, gateways, cloud orders, tasks, commands, audit
// and the Ingester.
//
// Idempotency is enforced by unique constraints and INSERT ... ON CONFLICT,
// never by a check followed by an insert; ingest writes a batch with array
// (unnest) statements in one transaction; a task's row only moves to a
// higher version. Every store-scoped query carries the actor's tenant, so a
// tenant never reads or writes another tenant's stores, written into the
// statement only for a tenant (one statement per filter combination, never
// a catch-all "$n IS NULL OR" that pgx's cached statements would plan as a
// table scan). Nothing is kept in process memory between calls but the
// dashboard answers a node decoded, checked against the database on every
// call: any number of nodes may share a database.
//
// pgx errors are translated once, here (see interpret): no rows becomes
// ENOTFOUND, a unique violation ECONFLICT.
package postgres
