// Package pgtest gives tests a private PostgreSQL: one server per test
// binary, started with initdb and postgres in a temporary directory on a
// free port, and a fresh database per test, dropped when the test ends.
// POSTGRES_TEST_DSN points the tests at an existing server instead.
//
// Run as root, postgres refuses to start, so the server then runs as the
// postgres user, which owns the temporary directory.
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		db := pgtest.Start(t)
//		...
//	}
package pgtest
