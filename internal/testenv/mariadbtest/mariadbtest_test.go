package mariadbtest_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/pulse-dev/pulse/internal/testenv/mariadbtest"
)

func TestMain(m *testing.M) { mariadbtest.Main(m) }

func TestPrivateDatabases(t *testing.T) {
	ctx := context.Background()
	var first *mariadbtest.Database
	t.Run("first", func(t *testing.T) {
		d, err := mariadbtest.StartDatabase(t)
		if err != nil {
			t.Fatal(err)
		}
		first = d
		if _, err := d.DB.ExecContext(ctx, "CREATE TABLE t (id BIGINT PRIMARY KEY, n BIGINT NOT NULL)"); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 2; i++ {
			if _, err := d.DB.ExecContext(ctx, "INSERT INTO t VALUES (1, 1) ON DUPLICATE KEY UPDATE n = n + 1"); err != nil {
				t.Fatal(err)
			}
		}
		var n int64
		if err := d.DB.QueryRowContext(ctx, "SELECT n FROM t WHERE id = 1").Scan(&n); err != nil || n != 2 {
			t.Fatalf("n = %d, %v; want 2", n, err)
		}
		var name string
		if err := d.DB.QueryRowContext(ctx, "SELECT DATABASE()").Scan(&name); err != nil || name != d.Name {
			t.Fatalf("connected to %q (%v), want %q", name, err, d.Name)
		}
	})
	second := mariadbtest.Start(t)
	var name string
	if err := second.QueryRowContext(ctx, "SELECT DATABASE()").Scan(&name); err != nil {
		t.Fatal(err)
	}
	if name == first.Name {
		t.Fatalf("two tests share database %q", name)
	}
	// The first test's database was dropped when it ended.
	var n int
	if err := second.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = ?", first.Name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("database %s still exists after its test ended", first.Name)
	}
	// The DSN opens the same database.
	cfg, err := mysql.ParseDSN(first.DSN)
	if err != nil || cfg.DBName != first.Name {
		t.Fatalf("DSN %q names database %q (%v), want %q", first.DSN, cfg.DBName, err, first.Name)
	}
	other, err := sql.Open("mysql", first.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.PingContext(ctx); err == nil {
		t.Errorf("DSN of a dropped database still connects")
	}
}

func TestStartPrivate(t *testing.T) {
	d, srv, err := mariadbtest.StartPrivate(t, mariadbtest.Options{ServerArgs: []string{"--character-set-server=latin1", "--collation-server=latin1_swedish_ci"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var charset string
	if err := d.DB.QueryRowContext(ctx, "SELECT @@character_set_database").Scan(&charset); err != nil || charset != "latin1" {
		t.Fatalf("database character set %q, %v; want the server's latin1", charset, err)
	}
	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	stalled, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if _, err := d.DB.ExecContext(stalled, "SELECT 1"); err == nil {
		t.Fatal("a paused server answered")
	}
	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}
	if err := d.DB.PingContext(ctx); err != nil {
		t.Fatalf("after Resume: %v", err)
	}
}
