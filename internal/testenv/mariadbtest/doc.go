// Package mariadbtest gives each test a private MariaDB database.
//
//	func TestMain(m *testing.M) { mariadbtest.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		db := mariadbtest.Start(t) // a fresh utf8mb4 database, dropped when t ends
//		db.ExecContext(ctx, "CREATE TABLE t (id BIGINT PRIMARY KEY)")
//	}
//
// StartDatabase returns the error instead of failing the test, and the
// database's DSN for code that opens its own handles.
//
// Under Main the tests of a binary share one mariadbd, started by
// internal/proc on first use: an empty data directory under the system
// temp directory, a free port on loopback, no grant tables (nothing to
// authenticate against) and no binary log, so it is ready in a second or
// two. It is killed, its directory removed, when the tests end. Without
// Main each test gets a server of its own, which is correct but slower. A
// package with other harnesses passes mariadbtest.Setup to their Main:
//
//	func TestMain(m *testing.M) { redistest.Main(m, mariadbtest.Setup, pgtest.Setup) }
//
// # A server of the test's own
//
// StartPrivate starts a mariadbd for one test, with server options of its
// own, and a database on it in the server's default character set, for
// tests that stall the server or depend on its settings:
//
//	d, srv, err := mariadbtest.StartPrivate(t, mariadbtest.Options{
//		ServerArgs: []string{"--character-set-server=latin1"},
//	})
//	if err != nil {
//		t.Fatal(err)
//	}
//	srv.Pause()  // SIGSTOP: connections stay open, nothing answers
//	// ... the app under test must time out, not hang ...
//	srv.Resume()
//
// When MYSQL_TEST_DSN is set (for example
// "root:pw@tcp(127.0.0.1:3306)/?multiStatements=false"), Start and
// StartDatabase use that server instead: each creates a uniquely named
// database there and drops only that one. StartPrivate then fails.
//
// When mariadbd is not installed the test fails with a message naming the
// package to install; `make test` installs it.
package mariadbtest
