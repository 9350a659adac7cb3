package mariadbtest

import (
	"fmt"
	"os"
	"testing"
)

// Options configures a private server.
type Options struct {
	// ServerArgs are passed to mariadbd after the defaults, so they win,
	// e.g. "--character-set-server=latin1".
	ServerArgs []string
}

// Server is a private mariadbd of one test, for tests that stall it or
// start it with options of their own.
type Server struct{ s *server }

// StartPrivate starts a server of tb's own with opts, killed when tb
// ends, and returns a database on it created with the server's default
// character set (so what a test sees is what an app's own tables say). It
// refuses to run when MYSQL_TEST_DSN points at a shared server.
func StartPrivate(tb testing.TB, opts Options) (*Database, *Server, error) {
	tb.Helper()
	if os.Getenv(EnvDSN) != "" {
		return nil, nil, fmt.Errorf("mariadbtest: a private server is needed, and %s points at a shared one", EnvDSN)
	}
	s, err := startServer(opts.ServerArgs...)
	if err != nil {
		return nil, nil, err
	}
	// Registered before the database's cleanup, so it runs after it.
	tb.Cleanup(s.stop)
	d, err := newDatabase(tb, s.config(), "", false)
	if err != nil {
		return nil, nil, err
	}
	return d, &Server{s: s}, nil
}

// Pause stops the server with SIGSTOP and returns once the kernel reports
// it stopped (the signal is asynchronous): connections stay open and
// nothing answers, as on a hung host.
func (s *Server) Pause() error { return s.s.proc.Pause() }

// Resume continues a paused server.
func (s *Server) Resume() error { return s.s.proc.Resume() }
