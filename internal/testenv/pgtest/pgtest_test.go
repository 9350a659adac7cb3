package pgtest

import (
	"context"
	"testing"
)

func TestMain(m *testing.M) { Main(m) }

func TestPrivateDatabases(t *testing.T) {
	a, b := Start(t), Start(t)
	ctx := context.Background()
	if _, err := a.ExecContext(ctx, "CREATE TABLE t (v TEXT)"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.ExecContext(ctx, "INSERT INTO t VALUES ($1)", "数える 🙂"); err != nil {
		t.Fatal(err)
	}
	var v string
	if err := a.QueryRowContext(ctx, "SELECT v FROM t").Scan(&v); err != nil || v != "数える 🙂" {
		t.Fatalf("round trip = %q, %v", v, err)
	}
	// The other test database does not see the table.
	if _, err := b.ExecContext(ctx, "SELECT * FROM t"); err == nil {
		t.Fatal("a second database saw the first one's table")
	}
}
