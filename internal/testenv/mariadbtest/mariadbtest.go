package mariadbtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/pulse-dev/pulse/internal/testenv/harness"
	"github.com/pulse-dev/pulse/internal/testenv/proc"
)

// EnvDSN names the environment variable that points tests at an existing
// server instead of a private one.
const EnvDSN = "MYSQL_TEST_DSN"

// Database is one private database for one test.
type Database = harness.Database

// shared is the package-wide server once Setup ran.
var shared = harness.NewShared(func() (*server, error) { return startServer() }, (*server).stop)

// Main runs the tests with mariadbtest's Setup, and the others given, and
// exits with the tests' status:
//
//	func TestMain(m *testing.M) { mariadbtest.Main(m) }
func Main(m *testing.M, others ...harness.Setup) {
	harness.Run(m, append([]harness.Setup{Setup}, others...)...)
}

// Setup makes Start share one server per test binary, started on first
// use; teardown stops it. Without it each test gets a server of its own.
func Setup() (teardown func(), err error) { return shared.Setup() }

// Start returns a private database for tb, dropped when tb ends. It fails
// tb when no server can be had.
func Start(tb testing.TB) *sql.DB {
	tb.Helper()
	d, err := StartDatabase(tb)
	if err != nil {
		tb.Fatal(err)
	}
	return d.DB
}

// StartDatabase is Start returning the error instead of failing tb, so a
// benchmark can skip when MariaDB is not available.
func StartDatabase(tb testing.TB) (*Database, error) {
	tb.Helper()
	base, err := baseConfig(tb)
	if err != nil {
		return nil, err
	}
	return newDatabase(tb, base, " CHARACTER SET utf8mb4", true)
}

// newDatabase creates a database on the server of base, with options
// after its name, dropped when tb ends if drop is set.
func newDatabase(tb testing.TB, base *mysql.Config, options string, drop bool) (*Database, error) {
	tb.Helper()
	spec := harness.DatabaseSpec{
		Driver: "mysql",
		Admin:  base.FormatDSN(),
		Create: func(name string) string { return "CREATE DATABASE `" + name + "`" + options },
		DSN: func(name string) string {
			cfg := base.Clone()
			cfg.DBName = name
			return cfg.FormatDSN()
		},
	}
	if drop {
		spec.Drop = func(name string) string { return "DROP DATABASE IF EXISTS `" + name + "`" }
	}
	d, err := harness.NewDatabase(tb, spec)
	if err != nil {
		return nil, fmt.Errorf("mariadbtest: %w", err)
	}
	return d, nil
}

// Installed reports whether mariadbd can be found or MYSQL_TEST_DSN is set.
func Installed() bool {
	if os.Getenv(EnvDSN) != "" {
		return true
	}
	_, err := binary()
	return err == nil
}

// baseConfig is the connection to the server without a database: the one
// of MYSQL_TEST_DSN, the shared server, or a server of tb's own.
func baseConfig(tb testing.TB) (*mysql.Config, error) {
	if dsn := os.Getenv(EnvDSN); dsn != "" {
		cfg, err := mysql.ParseDSN(dsn)
		if err != nil {
			return nil, fmt.Errorf("mariadbtest: %s: %w", EnvDSN, err)
		}
		cfg.DBName = ""
		return cfg, nil
	}
	s, err := shared.Get(tb)
	if err != nil {
		return nil, err
	}
	return s.config(), nil
}

// server is one mariadbd of a temporary directory.
type server struct {
	dir  string
	proc *proc.Process
}

func binary() (string, error) {
	for _, name := range []string{"mariadbd", "mysqld"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	for _, p := range []string{"/usr/sbin/mariadbd", "/usr/sbin/mysqld"} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", errors.New("mariadbtest: mariadbd not found: install it (apt-get install mariadb-server) or run `make test`, which does")
}

// startServer starts a mariadbd; extra server options follow the defaults
// and so override them.
func startServer(extra ...string) (*server, error) {
	bin, err := binary()
	if err != nil {
		return nil, err
	}
	// A short path: the socket path must fit in 108 bytes.
	dir, err := os.MkdirTemp("", "mariadbtest-")
	if err != nil {
		return nil, fmt.Errorf("mariadbtest: temp dir: %w", err)
	}
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("mariadbtest: data dir: %w", err)
	}
	p, err := proc.Start(context.Background(), proc.Config{
		Binary:   bin,
		Dir:      dir,
		Args:     func(port int) []string { return append(args(dir, port), extra...) },
		ErrorLog: "error.log",
		Ready: func(ctx context.Context, port int) error {
			return harness.Ping(ctx, "mysql", portConfig(port).FormatDSN())
		},
		StartTimeout: 30 * time.Second,
	})
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("mariadbtest: %w", err)
	}
	return &server{dir: dir, proc: p}, nil
}

// args are mariadbd's options for a server of dir on port.
func args(dir string, port int) []string {
	a := []string{
		"--no-defaults",
		"--datadir=" + filepath.Join(dir, "data"),
		"--socket=" + filepath.Join(dir, "sock"),
		"--pid-file=" + filepath.Join(dir, "pid"),
		"--tmpdir=" + dir,
		"--port=" + strconv.Itoa(port),
		"--bind-address=127.0.0.1",
		// An empty data directory has no mysql.* tables: without grant
		// tables the server starts on it directly, no install step needed,
		// and accepts any user.
		"--skip-grant-tables",
		"--skip-name-resolve",
		"--skip-log-bin",
		"--performance-schema=OFF",
		"--innodb-buffer-pool-size=64M",
		"--innodb-log-file-size=16M",
		"--max-connections=300",
		"--character-set-server=utf8mb4",
		"--log-error=" + filepath.Join(dir, "error.log"),
	}
	if os.Geteuid() == 0 {
		a = append(a, "--user=root")
	}
	return a
}

func (s *server) config() *mysql.Config { return portConfig(s.proc.Port()) }

func portConfig(port int) *mysql.Config {
	cfg := mysql.NewConfig()
	cfg.User = "root"
	cfg.Net = "tcp"
	cfg.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	cfg.Timeout = harness.Hang // dial only: a guard against a hang
	return cfg
}

// stop kills the server (its data is thrown away, so there is nothing to
// shut down cleanly) and removes its directory.
func (s *server) stop() {
	s.proc.Kill()
	os.RemoveAll(s.dir)
}
