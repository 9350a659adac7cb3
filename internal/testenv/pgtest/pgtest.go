package pgtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver

	"github.com/pulse-dev/pulse/internal/testenv/harness"
	"github.com/pulse-dev/pulse/internal/testenv/proc"
)

// EnvDSN names the environment variable that points tests at an existing
// server, e.g. postgres://user:pass@127.0.0.1:5432/postgres?sslmode=disable.
const EnvDSN = "POSTGRES_TEST_DSN"

// Database is one private database for one test; its DSN is a
// postgres:// URL.
type Database = harness.Database

var shared = harness.NewShared(startServer, (*server).stop)

// Main runs the tests with pgtest's Setup, and the others given, and exits
// with the tests' status:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
func Main(m *testing.M, others ...harness.Setup) {
	harness.Run(m, append([]harness.Setup{Setup}, others...)...)
}

// Setup makes Start share one server per test binary, started on first
// use; teardown stops it. Without it each test gets a server of its own.
func Setup() (teardown func(), err error) { return shared.Setup() }

// Start returns a private database for tb, dropped when tb ends.
func Start(tb testing.TB) *sql.DB {
	tb.Helper()
	d, err := StartDatabase(tb)
	if err != nil {
		tb.Fatal(err)
	}
	return d.DB
}

// StartDatabase is Start returning the error instead of failing tb.
func StartDatabase(tb testing.TB) (*Database, error) {
	tb.Helper()
	base, err := baseURL(tb)
	if err != nil {
		return nil, err
	}
	d, err := harness.NewDatabase(tb, harness.DatabaseSpec{
		Driver: "pgx",
		Admin:  base.String(),
		Create: func(name string) string {
			return "CREATE DATABASE " + name + " ENCODING 'UTF8' TEMPLATE template0"
		},
		Drop: func(name string) string { return "DROP DATABASE IF EXISTS " + name + " WITH (FORCE)" },
		DSN: func(name string) string {
			u := *base
			u.Path = "/" + name
			return u.String()
		},
	})
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	return d, nil
}

// Installed reports whether initdb and postgres can be found or
// POSTGRES_TEST_DSN is set.
func Installed() bool {
	if os.Getenv(EnvDSN) != "" {
		return true
	}
	_, err := binDir()
	return err == nil
}

// baseURL is the server's postgres database: POSTGRES_TEST_DSN's, the
// shared server's, or one of tb's own.
func baseURL(tb testing.TB) (*url.URL, error) {
	if dsn := os.Getenv(EnvDSN); dsn != "" {
		u, err := url.Parse(dsn)
		if err != nil {
			return nil, fmt.Errorf("pgtest: %s: %w", EnvDSN, err)
		}
		return u, nil
	}
	s, err := shared.Get(tb)
	if err != nil {
		return nil, err
	}
	return s.url(), nil
}

// binDir finds the directory holding initdb and postgres: on PATH, or the
// newest /usr/lib/postgresql/<version>/bin (Debian keeps them there).
func binDir() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if _, err := exec.LookPath("postgres"); err == nil {
			return filepath.Dir(p), nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "postgres")); err == nil {
			return d, nil
		}
	}
	return "", errors.New("pgtest: initdb and postgres not found: install them (apt-get install postgresql) or run `make test`, which does")
}

func version(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

// server is one postgres of a temporary directory.
type server struct {
	dir  string
	proc *proc.Process
}

// credential is who the server runs as: the postgres user when the tests
// run as root (postgres refuses root), else the tests' own user.
func credential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, errors.New("pgtest: running as root, and there is no postgres user to run the server as (apt-get install postgresql creates it)")
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func startServer() (*server, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	cred, err := credential()
	if err != nil {
		return nil, err
	}
	dir, err := initDir(bin, cred)
	if err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	p, err := proc.Start(context.Background(), proc.Config{
		Binary: filepath.Join(bin, "postgres"),
		Dir:    dir,
		Args: func(port int) []string {
			return []string{
				"-D", data,
				"-p", strconv.Itoa(port),
				"-k", dir, // the socket goes here, not in /var/run
				"-c", "listen_addresses=127.0.0.1",
				"-c", "fsync=off",
				"-c", "synchronous_commit=off",
				"-c", "full_page_writes=off",
				"-c", "max_connections=300",
				"-c", "shared_buffers=32MB",
			}
		},
		Ready: func(ctx context.Context, port int) error {
			return harness.Ping(ctx, "pgx", portURL(port).String())
		},
		StartTimeout: 60 * time.Second,
		Credential:   cred,
	})
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	return &server{dir: dir, proc: p}, nil
}

// initDir makes a temporary directory for the server, owned by cred, with
// a data directory made by initdb.
func initDir(bin string, cred *syscall.Credential) (string, error) {
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return "", fmt.Errorf("pgtest: temp dir: %w", err)
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			os.RemoveAll(dir)
			return "", fmt.Errorf("pgtest: chown temp dir: %w", err)
		}
	}
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", filepath.Join(dir, "data"), "-U", "postgres", "--auth=trust",
		"-E", "UTF8", "--locale=C", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("pgtest: initdb: %w\n%s", err, out)
	}
	return dir, nil
}

func (s *server) url() *url.URL { return portURL(s.proc.Port()) }

func portURL(port int) *url.URL {
	return &url.URL{Scheme: "postgres", User: url.User("postgres"),
		Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Path: "/postgres", RawQuery: "sslmode=disable"}
}

// stop kills the server (its data is thrown away) and removes its
// directory.
func (s *server) stop() {
	s.proc.Kill()
	os.RemoveAll(s.dir)
}
