// Package pgtest gives tests a real PostgreSQL: the server at
// STOREPRINT_TEST_DATABASE_URL when it is set, otherwise a throwaway
// cluster started with initdb and pg_ctl (from PATH or
// /usr/lib/postgresql/*/bin) in a temporary directory on a free port, and
// stopped when the test binary ends. Running as root, the cluster runs as
// the postgres user (initdb refuses root).
//
// Each test gets its own database, copied from a template database that is
// migrated once per test binary, so tests are independent and run in
// parallel:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
//	func TestX(t *testing.T) {
//		url := pgtest.NewDatabase(t)
//		...
//	}
package pgtest
