// Package mariadbtest gives each test a private MariaDB database.
//
// By default it starts one private mariadbd per test binary: an empty data
// directory under the system temp directory, a free port on loopback, no
// grant tables (nothing to authenticate against) and no binary log, so it
// is ready in a second or two. The server is shared by every test of the
// package and killed when the binary ends; each Start creates a uniquely
// named database on it and drops it when its test ends.
//
// Call Main from TestMain so the server is stopped and its directory
// removed at the end:
//
//	func TestMain(m *testing.M) { mariadbtest.Main(m) }
//
// Without Main, each test that calls Start gets a server of its own, which
// is correct but slower.
//
// When MYSQL_TEST_DSN is set (for example
// "root:pw@tcp(127.0.0.1:3306)/?multiStatements=false"), that server is used
// instead: Start creates a uniquely named database there and drops only
// that one.
//
// When mariadbd is not installed the test fails with a message naming the
// package to install; `make test` installs it.
package mariadbtest
