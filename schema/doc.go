// Package schema holds the cloud's PostgreSQL schema as numbered SQL
// migrations embedded in the binary, and applies them with golang-migrate
// (pgx v5 driver, iofs source). `storeprint-cloud migrate` and the start of
// `storeprint-cloud run` call Up.
//
// Every table is ready for Citus: it carries store_id (or tenant_id for the
// tables that belong to a tenant rather than a store) and every primary key
// and unique constraint starts with that column.
package schema
