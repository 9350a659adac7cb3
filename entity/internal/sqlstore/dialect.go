// Package sqlstore holds the SQL of the entity counters: the tables of
// each dialect, the statements, and the runner that bounds and retries
// them. It knows nothing of caches; the entity package decides what runs
// when.
package sqlstore

import (
	"strconv"
	"strings"
)

// Dialect names an SQL flavour; the values match entity.Dialect's.
type Dialect string

// The dialects.
const (
	MySQL    Dialect = "mysql"
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

// Tables names the five tables: the counters and, next to it, the
// write-behind batches applied, the entities whose cache entry is stale,
// the global sequences of the unread counts and the users' read marks.
type Tables struct {
	Table, Batches, Stale, Seqs, Marks string
}

func tablesFor(table string) Tables {
	return Tables{Table: table, Batches: table + "_batches", Stale: table + "_stale",
		Seqs: table + "_seqs", Marks: table + "_marks"}
}

// mysqlSchema is the DDL for MySQL and MariaDB: ASCII binary names, the
// rest utf8mb4 like the app's own tables.
func mysqlSchema(t Tables) []string {
	const ascii = "VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL"
	const tail = ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci"
	return []string{
		"CREATE TABLE IF NOT EXISTS " + t.Table + ` (
  kind ` + ascii + `,
  entity_id BIGINT NOT NULL,
  field ` + ascii + `,
  slot SMALLINT NOT NULL DEFAULT 0,
  value BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (kind, entity_id, field, slot),
  KEY by_field (kind, field, entity_id)
` + tail,
		"CREATE TABLE IF NOT EXISTS " + t.Batches + ` (
  batch_id ` + ascii + ` PRIMARY KEY,
  applied_at BIGINT NOT NULL,
  KEY by_time (applied_at)
` + tail,
		"CREATE TABLE IF NOT EXISTS " + t.Stale + ` (
  kind ` + ascii + `,
  entity_id BIGINT NOT NULL,
  seq BIGINT NOT NULL DEFAULT 1,
  PRIMARY KEY (kind, entity_id)
` + tail,
		"CREATE TABLE IF NOT EXISTS " + t.Seqs + ` (
  name ` + ascii + ` PRIMARY KEY,
  value BIGINT NOT NULL DEFAULT 0
` + tail,
		"CREATE TABLE IF NOT EXISTS " + t.Marks + ` (
  user_id BIGINT NOT NULL,
  name ` + ascii + `,
  value BIGINT NOT NULL,
  seen_at BIGINT NOT NULL,
  PRIMARY KEY (user_id, name),
  KEY by_seen (seen_at)
` + tail,
	}
}

// standardSchema is the DDL for SQLite and PostgreSQL, which differ only
// in column types and SQLite's WITHOUT ROWID.
func standardSchema(t Tables, d Dialect) []string {
	text, id, suffix := "TEXT NOT NULL", "INTEGER NOT NULL", ") WITHOUT ROWID"
	if d == Postgres {
		text, id, suffix = `VARCHAR(64) COLLATE "C" NOT NULL`, "BIGINT NOT NULL", ")"
	}
	return []string{
		"CREATE TABLE IF NOT EXISTS " + t.Table + ` (
  kind ` + text + `,
  entity_id ` + id + `,
  field ` + text + `,
  slot ` + id + ` DEFAULT 0,
  value ` + id + ` DEFAULT 0,
  PRIMARY KEY (kind, entity_id, field, slot)
` + suffix,
		"CREATE INDEX IF NOT EXISTS " + t.Table + "_by_field ON " + t.Table + " (kind, field, entity_id)",
		"CREATE TABLE IF NOT EXISTS " + t.Batches + ` (
  batch_id ` + text + ` PRIMARY KEY,
  applied_at ` + id + `
)`,
		"CREATE INDEX IF NOT EXISTS " + t.Batches + "_by_time ON " + t.Batches + " (applied_at)",
		"CREATE TABLE IF NOT EXISTS " + t.Stale + ` (
  kind ` + text + `,
  entity_id ` + id + `,
  seq ` + id + ` DEFAULT 1,
  PRIMARY KEY (kind, entity_id)
` + suffix,
		"CREATE TABLE IF NOT EXISTS " + t.Seqs + ` (
  name ` + text + ` PRIMARY KEY,
  value ` + id + ` DEFAULT 0
)`,
		"CREATE TABLE IF NOT EXISTS " + t.Marks + ` (
  user_id ` + id + `,
  name ` + text + `,
  value ` + id + `,
  seen_at ` + id + `,
  PRIMARY KEY (user_id, name)
` + suffix,
		"CREATE INDEX IF NOT EXISTS " + t.Marks + "_by_seen ON " + t.Marks + " (seen_at)",
	}
}

// Bind rewrites ? placeholders as $1, $2... for PostgreSQL. The query
// must hold no other question marks.
func Bind(d Dialect, s string) string {
	if d != Postgres || !strings.Contains(s, "?") {
		return s
	}
	var b strings.Builder
	n := 0
	for _, r := range s {
		if r == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func placeholders(b *strings.Builder, n int) {
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('?')
	}
}
