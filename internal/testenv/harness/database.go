package harness

import (
	"context"
	crand "crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"testing"
	"time"
)

// Database is one private database for one test.
type Database struct {
	// DB is open on the database, closed when the test ends.
	DB *sql.DB
	// DSN opens more handles on the same database.
	DSN string
	// Name is the database name.
	Name string
}

// DatabaseSpec says how to make a database on one server.
type DatabaseSpec struct {
	// Driver is the database/sql driver name, e.g. "pgx" or "mysql".
	Driver string
	// Admin is the DSN of the server without a database.
	Admin string
	// Create and Drop are the statements that create and drop the
	// database named by their argument; Drop may be nil.
	Create, Drop func(name string) string
	// DSN is the DSN of the database named by its argument.
	DSN func(name string) string
}

// NewDatabase creates a uniquely named database as spec says and opens
// it. When tb ends the handle is closed and the database dropped, unless
// Drop is nil: a server of tb's own goes with its databases.
func NewDatabase(tb testing.TB, spec DatabaseSpec) (*Database, error) {
	tb.Helper()
	name := "pulse_test_" + randomHex(6)
	if err := exec(spec.Driver, spec.Admin, spec.Create(name)); err != nil {
		return nil, fmt.Errorf("create database: %w", err)
	}
	dsn := spec.DSN(name)
	db, err := sql.Open(spec.Driver, dsn)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", name, err)
	}
	tb.Cleanup(func() {
		db.Close()
		if spec.Drop == nil {
			return
		}
		if err := exec(spec.Driver, spec.Admin, spec.Drop(name)); err != nil {
			tb.Logf("drop database %s: %v", name, err)
		}
	})
	return &Database{DB: db, DSN: dsn, Name: name}, nil
}

// exec runs one statement on a connection of its own.
func exec(driver, dsn, stmt string) error {
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = db.ExecContext(ctx, stmt)
	return err
}

// Ping is a readiness probe for a SQL server: nil once a connection
// answers.
func Ping(ctx context.Context, driver, dsn string) error {
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	return db.PingContext(ctx)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = crand.Read(b)
	return hex.EncodeToString(b)
}
