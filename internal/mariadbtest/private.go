package mariadbtest

import (
	"syscall"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// PrivateServer is a mariadbd of one test alone, for tests that stop it
// or start it with options of their own. It ignores MYSQL_TEST_DSN.
type PrivateServer struct {
	s *server
}

// StartPrivateServer starts a mariadbd for tb, killed when tb ends. args
// are extra server options, such as "--character-set-server=latin1"; they
// override the defaults.
func StartPrivateServer(tb testing.TB, args ...string) (*PrivateServer, error) {
	tb.Helper()
	s, err := startServer(args...)
	if err != nil {
		return nil, err
	}
	p := &PrivateServer{s: s}
	tb.Cleanup(func() {
		p.Resume()
		s.stop()
	})
	return p, nil
}

// Config is the connection to the server without a database.
func (p *PrivateServer) Config() *mysql.Config { return p.s.config() }

// Pause stops the server with SIGSTOP: connections stay open and nothing
// answers, as on a hung host.
func (p *PrivateServer) Pause() { _ = syscall.Kill(p.s.cmd.Process.Pid, syscall.SIGSTOP) }

// Resume continues a paused server.
func (p *PrivateServer) Resume() { _ = syscall.Kill(p.s.cmd.Process.Pid, syscall.SIGCONT) }
