package mariadbtest

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// EnvDSN names the environment variable that points tests at an existing
// server instead of a private one.
const EnvDSN = "MYSQL_TEST_DSN"

// Database is one private database for one test.
type Database struct {
	// DB is open on the database, closed when the test ends.
	DB *sql.DB
	// DSN opens more handles on the same database.
	DSN string
	// Name is the database (schema) name.
	Name string
}

var (
	sharedMu     sync.Mutex
	shared       *server // the package-wide server when Main runs
	underMain    bool
	startFailure error // a failed shared start is not retried by every test
)

// Main runs the tests and then stops the shared server, if one was
// started, before exiting with the tests' status.
func Main(m *testing.M) {
	UseShared()
	code := m.Run()
	Stop()
	os.Exit(code)
}

// UseShared makes Start share one server per test binary, stopped by Stop;
// Main does this for you. A TestMain that sets up more than MariaDB calls
// UseShared before m.Run and Stop after.
func UseShared() {
	sharedMu.Lock()
	underMain = true
	sharedMu.Unlock()
}

// Stop stops the shared server, if one was started.
func Stop() {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if shared != nil {
		shared.stop()
		shared = nil
	}
}

// Options configures a private server.
type Options struct {
	// ServerArgs are passed to mariadbd after the defaults, so they win,
	// e.g. "--character-set-server=latin1".
	ServerArgs []string
}

// Server is a private mariadbd of one test.
type Server struct{ s *server }

// Signal sends sig to the server process, e.g. SIGSTOP and SIGCONT to
// stall it.
func (s *Server) Signal(sig syscall.Signal) error {
	return s.s.cmd.Process.Signal(sig)
}

// Pause stops the server with SIGSTOP and returns once the kernel reports
// it stopped (the signal is asynchronous), as a hung database would be.
func (s *Server) Pause() error {
	if err := s.Signal(syscall.SIGSTOP); err != nil {
		return err
	}
	stat := filepath.Join("/proc", strconv.Itoa(s.s.cmd.Process.Pid), "stat")
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(stat)
		if err != nil {
			return nil // no /proc: trust the signal
		}
		// The state follows the parenthesised command name.
		if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) && b[i+2] == 'T' {
			return nil
		}
		time.Sleep(5 * time.Millisecond)
	}
	return errors.New("mariadbtest: mariadbd did not stop within 10 s of SIGSTOP")
}

// Resume continues a paused server.
func (s *Server) Resume() error { return s.Signal(syscall.SIGCONT) }

// StartPrivate starts a server of tb's own with opts, stopped when tb
// ends, and returns a database on it created with the server's default
// character set (so what a test sees is what an app's own tables say).
func StartPrivate(tb testing.TB, opts Options) (*Database, *Server, error) {
	tb.Helper()
	if os.Getenv(EnvDSN) != "" {
		return nil, nil, fmt.Errorf("mariadbtest: a private server is needed, and %s points at a shared one", EnvDSN)
	}
	s, err := startServer(opts.ServerArgs...)
	if err != nil {
		return nil, nil, err
	}
	tb.Cleanup(func() {
		_ = s.cmd.Process.Signal(syscall.SIGCONT)
		s.stop()
	})
	base := s.config()
	name := "pulse_test_" + randomHex(6)
	admin, err := sql.Open("mysql", base.FormatDSN())
	if err != nil {
		return nil, nil, fmt.Errorf("mariadbtest: open: %w", err)
	}
	defer admin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE `"+name+"`"); err != nil {
		return nil, nil, fmt.Errorf("mariadbtest: create database: %w", err)
	}
	cfg := base.Clone()
	cfg.DBName = name
	dsn := cfg.FormatDSN()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		return nil, nil, fmt.Errorf("mariadbtest: open %s: %w", name, err)
	}
	tb.Cleanup(func() { db.Close() })
	return &Database{DB: db, DSN: dsn, Name: name}, &Server{s: s}, nil
}

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
	name := "pulse_test_" + randomHex(6)
	admin, err := sql.Open("mysql", base.FormatDSN())
	if err != nil {
		return nil, fmt.Errorf("mariadbtest: open: %w", err)
	}
	defer admin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE `"+name+"` CHARACTER SET utf8mb4"); err != nil {
		return nil, fmt.Errorf("mariadbtest: create database: %w", err)
	}
	cfg := base.Clone()
	cfg.DBName = name
	dsn := cfg.FormatDSN()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		return nil, fmt.Errorf("mariadbtest: open %s: %w", name, err)
	}
	tb.Cleanup(func() {
		db.Close()
		drop, err := sql.Open("mysql", base.FormatDSN())
		if err != nil {
			return
		}
		defer drop.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := drop.ExecContext(ctx, "DROP DATABASE IF EXISTS `"+name+"`"); err != nil {
			tb.Logf("mariadbtest: drop database %s: %v", name, err)
		}
	})
	return &Database{DB: db, DSN: dsn, Name: name}, nil
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
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if !underMain {
		s, err := startServer()
		if err != nil {
			return nil, err
		}
		tb.Cleanup(s.stop)
		return s.config(), nil
	}
	if startFailure != nil {
		return nil, startFailure
	}
	if shared == nil {
		s, err := startServer()
		if err != nil {
			startFailure = err
			return nil, err
		}
		shared = s
	}
	return shared.config(), nil
}

// server is one mariadbd process.
type server struct {
	dir  string
	port int
	cmd  *exec.Cmd
	log  *bytes.Buffer
	done chan struct{}
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
	port, err := freePort()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	args := []string{
		"--no-defaults",
		"--datadir=" + data,
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
	args = append(args, extra...)
	if os.Geteuid() == 0 {
		args = append(args, "--user=root")
	}
	args = append(args, extra...)
	s := &server{dir: dir, port: port, log: &bytes.Buffer{}, done: make(chan struct{})}
	s.cmd = exec.Command(bin, args...)
	s.cmd.Stdout = s.log
	s.cmd.Stderr = s.log
	// Its own process group, so a signal meant for the test binary does not
	// reach it, and killed by the kernel if the test binary dies first.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("mariadbtest: start %s: %w", bin, err)
	}
	go func() { _ = s.cmd.Wait(); close(s.done) }()

	db, err := sql.Open("mysql", s.config().FormatDSN())
	if err != nil {
		s.stop()
		return nil, fmt.Errorf("mariadbtest: open: %w", err)
	}
	defer db.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err = db.PingContext(ctx)
		cancel()
		if err == nil {
			return s, nil
		}
		select {
		case <-s.done:
			msg := s.errorLog()
			s.stop()
			return nil, fmt.Errorf("mariadbtest: mariadbd exited during startup: %v\n%s", s.cmd.ProcessState, msg)
		default:
		}
		if time.Now().After(deadline) {
			msg := s.errorLog()
			s.stop()
			return nil, fmt.Errorf("mariadbtest: mariadbd on port %d did not answer: %v\n%s", port, err, msg)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

func (s *server) config() *mysql.Config {
	cfg := mysql.NewConfig()
	cfg.User = "root"
	cfg.Net = "tcp"
	cfg.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port))
	cfg.Timeout = 5 * time.Second
	return cfg
}

func (s *server) errorLog() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "error.log"))
	return s.log.String() + string(b)
}

// stop kills the server (its data is thrown away, so there is nothing to
// shut down cleanly) and removes its directory.
func (s *server) stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
		}
	}
	os.RemoveAll(s.dir)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("mariadbtest: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = crand.Read(b)
	return hex.EncodeToString(b)
}
