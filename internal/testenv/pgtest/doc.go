// Package pgtest gives tests a private PostgreSQL database each.
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		db := pgtest.Start(t) // a fresh database, dropped when t ends
//		db.ExecContext(ctx, "CREATE TABLE t (v TEXT)")
//	}
//
// StartDatabase returns the error instead of failing the test (so a
// benchmark can skip), and the database's DSN, a postgres:// URL, for code
// that opens its own handles:
//
//	d, err := pgtest.StartDatabase(b)
//	if err != nil {
//		b.Skip(err)
//	}
//	app := open(d.DSN)
//
// Under Main the tests of a binary share one server: initdb then postgres
// (fsync off) in a temporary directory on a free port, started by
// internal/proc on first use and killed, its directory removed, when the
// tests end. Without Main each test gets a server of its own, which is
// correct but slower. A package with other harnesses passes pgtest.Setup
// to their Main:
//
//	func TestMain(m *testing.M) { mariadbtest.Main(m, pgtest.Setup) }
//
// Run as root, postgres refuses to start, so the server then runs as the
// postgres user, which owns the temporary directory.
//
// POSTGRES_TEST_DSN points the tests at an existing server instead: each
// database is created there and only it is dropped.
package pgtest
