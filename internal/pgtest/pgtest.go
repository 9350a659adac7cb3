package pgtest

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"database/sql"
	"encoding/hex"
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
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
)

// EnvDSN names the environment variable that points tests at an existing
// server, e.g. postgres://user:pass@127.0.0.1:5432/postgres?sslmode=disable.
const EnvDSN = "POSTGRES_TEST_DSN"

// Database is one private database for one test.
type Database struct {
	// DB is open on the database, closed when the test ends.
	DB *sql.DB
	// URL opens more handles on the same database (a postgres:// URL).
	URL string
	// Name is the database name.
	Name string
}

var (
	sharedMu     sync.Mutex
	shared       *server
	underMain    bool
	startFailure error
)

// Main runs the tests and then stops the shared server, if one was
// started, before exiting with the tests' status.
func Main(m *testing.M) {
	sharedMu.Lock()
	underMain = true
	sharedMu.Unlock()
	code := m.Run()
	Stop()
	os.Exit(code)
}

// Stop stops the shared server, for a TestMain that does more than Main.
func Stop() {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if shared != nil {
		shared.stop()
		shared = nil
	}
}

// UseShared makes Start share one server per test binary, stopped by Stop;
// Main does this for you.
func UseShared() {
	sharedMu.Lock()
	underMain = true
	sharedMu.Unlock()
}

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
	name := "pulse_test_" + randomHex(6)
	admin, err := sql.Open("pgx", base.String())
	if err != nil {
		return nil, fmt.Errorf("pgtest: open: %w", err)
	}
	defer admin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name+" ENCODING 'UTF8' TEMPLATE template0"); err != nil {
		return nil, fmt.Errorf("pgtest: create database: %w", err)
	}
	u := *base
	u.Path = "/" + name
	db, err := sql.Open("pgx", u.String())
	if err != nil {
		return nil, fmt.Errorf("pgtest: open %s: %w", name, err)
	}
	tb.Cleanup(func() {
		db.Close()
		drop, err := sql.Open("pgx", base.String())
		if err != nil {
			return
		}
		defer drop.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := drop.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			tb.Logf("pgtest: drop database %s: %v", name, err)
		}
	})
	return &Database{DB: db, URL: u.String(), Name: name}, nil
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

func baseURL(tb testing.TB) (*url.URL, error) {
	if dsn := os.Getenv(EnvDSN); dsn != "" {
		u, err := url.Parse(dsn)
		if err != nil {
			return nil, fmt.Errorf("pgtest: %s: %w", EnvDSN, err)
		}
		return u, nil
	}
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if !underMain {
		s, err := startServer()
		if err != nil {
			return nil, err
		}
		tb.Cleanup(s.stop)
		return s.url(), nil
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
	return shared.url(), nil
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

type server struct {
	dir  string
	port int
	cmd  *exec.Cmd
	log  *bytes.Buffer
	done chan struct{}
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
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, fmt.Errorf("pgtest: temp dir: %w", err)
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("pgtest: chown temp dir: %w", err)
		}
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "--auth=trust",
		"-E", "UTF8", "--locale=C", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("pgtest: initdb: %w\n%s", err, out)
	}
	port, err := freePort()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s := &server{dir: dir, port: port, log: &bytes.Buffer{}, done: make(chan struct{})}
	s.cmd = exec.Command(filepath.Join(bin, "postgres"),
		"-D", data,
		"-p", strconv.Itoa(port),
		"-k", dir, // the socket goes here, not in /var/run
		"-c", "listen_addresses=127.0.0.1",
		"-c", "fsync=off",
		"-c", "synchronous_commit=off",
		"-c", "full_page_writes=off",
		"-c", "max_connections=300",
		"-c", "shared_buffers=32MB",
	)
	s.cmd.Stdout = s.log
	s.cmd.Stderr = s.log
	// Its own process group, so a signal meant for the test binary does not
	// reach it, and killed by the kernel if the test binary dies first.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: cred}
	if err := s.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("pgtest: start postgres: %w", err)
	}
	go func() { _ = s.cmd.Wait(); close(s.done) }()

	db, err := sql.Open("pgx", s.url().String())
	if err != nil {
		s.stop()
		return nil, fmt.Errorf("pgtest: open: %w", err)
	}
	defer db.Close()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err = db.PingContext(ctx)
		cancel()
		if err == nil {
			return s, nil
		}
		select {
		case <-s.done:
			msg := s.log.String()
			s.stop()
			return nil, fmt.Errorf("pgtest: postgres exited during startup: %v\n%s", s.cmd.ProcessState, msg)
		default:
		}
		if time.Now().After(deadline) {
			msg := s.log.String()
			s.stop()
			return nil, fmt.Errorf("pgtest: postgres on port %d did not answer: %v\n%s", port, err, msg)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *server) url() *url.URL {
	return &url.URL{Scheme: "postgres", User: url.User("postgres"),
		Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)), Path: "/postgres", RawQuery: "sslmode=disable"}
}

// stop kills the server (its data is thrown away) and removes its
// directory.
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
		return 0, fmt.Errorf("pgtest: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = crand.Read(b)
	return hex.EncodeToString(b)
}
