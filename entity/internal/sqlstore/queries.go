package sqlstore

import "strings"

// queries holds the SQL of one dialect and table, with ? placeholders
// already rewritten for dialects that number them.
type queries struct {
	schema     []string
	incr       string // kind, id, field, slot, delta, delta
	upsertHead string // multi-row increment: head, then "(?, ?, ?, ?, ?)" per row, then upsertTail
	upsertTail string
	lockSuffix string // " FOR UPDATE" where the dialect has it
	sum        string // SUM(value) as a BIGINT

	reset    string // kind, id, field
	top      string // kind, field, n
	sums     string // kind, field: stored value per entity
	value    string // kind, id, field: one counter's value
	subtract string // value, kind, id, field, slot
	foldRows string // kind, field, limit

	markApplied string // batch id, time; affects no row if the batch was applied
	prune       string // time
	markStale   string // kind, id
	listStale   string // limit
	dropStale   string // kind, id, seq

	seqNext   string // name: add 1 to a sequence
	seqSet    string // value, name, value: raise a value (the red dot's time)
	seqGet    string // name
	seqLock   string // name, locking the row where the dialect can
	seqInit   string // name: insert a sequence at 0 if missing
	seqPair   string // name, name
	markSet   string // user, name, value, seen
	markAdd   string // delta, user, name
	markList  string // user
	markPrune string // seen cutoff
}

func newQueries(d Dialect, t Tables) queries {
	var q queries
	q.sum = "SUM(value)"
	if d == Postgres {
		q.sum = "CAST(SUM(value) AS BIGINT)"
	}
	q.upsertHead = "INSERT INTO " + t.Table + " (kind, entity_id, field, slot, value) VALUES "
	if d == MySQL {
		q.mysql(t)
	} else {
		q.standard(t, d)
	}
	q.reset = "UPDATE " + t.Table + " SET value = 0 WHERE kind = ? AND entity_id = ? AND field = ? AND value <> 0"
	q.top = "SELECT entity_id, " + q.sum + " AS total FROM " + t.Table +
		" WHERE kind = ? AND field = ? GROUP BY entity_id HAVING SUM(value) <> 0 ORDER BY total DESC, entity_id ASC LIMIT ?"
	q.sums = "SELECT entity_id, " + q.sum + " FROM " + t.Table + " WHERE kind = ? AND field = ? GROUP BY entity_id"
	q.value = "SELECT " + q.sum + " FROM " + t.Table + " WHERE kind = ? AND entity_id = ? AND field = ?"
	q.subtract = "UPDATE " + t.Table + " SET value = value - ? WHERE kind = ? AND entity_id = ? AND field = ? AND slot = ?"
	q.foldRows = "SELECT entity_id, slot, value FROM " + t.Table +
		" WHERE kind = ? AND field = ? AND slot > 0 AND value <> 0 ORDER BY entity_id, slot LIMIT ?" + q.lockSuffix
	q.prune = "DELETE FROM " + t.Batches + " WHERE applied_at < ?"
	q.listStale = "SELECT kind, entity_id, seq FROM " + t.Stale + " ORDER BY kind, entity_id LIMIT ?"
	q.dropStale = "DELETE FROM " + t.Stale + " WHERE kind = ? AND entity_id = ? AND seq = ?"
	q.seqNext = "UPDATE " + t.Seqs + " SET value = value + 1 WHERE name = ?"
	q.seqSet = "UPDATE " + t.Seqs + " SET value = ? WHERE name = ? AND value < ?"
	q.seqGet = "SELECT value FROM " + t.Seqs + " WHERE name = ?"
	q.seqLock = q.seqGet + q.lockSuffix
	q.seqPair = "SELECT name, value FROM " + t.Seqs + " WHERE name IN (?, ?)"
	q.markAdd = "UPDATE " + t.Marks + " SET value = value + ? WHERE user_id = ? AND name = ?"
	q.markList = "SELECT name, value FROM " + t.Marks + " WHERE user_id = ?"
	q.markPrune = "DELETE FROM " + t.Marks + " WHERE seen_at < ?"
	for _, p := range []*string{&q.incr, &q.reset, &q.top, &q.sums, &q.value, &q.subtract, &q.foldRows,
		&q.markApplied, &q.prune, &q.markStale, &q.listStale, &q.dropStale,
		&q.seqNext, &q.seqSet, &q.seqGet, &q.seqLock, &q.seqInit, &q.seqPair,
		&q.markSet, &q.markAdd, &q.markList, &q.markPrune} {
		*p = Bind(d, *p)
	}
	return q
}

// mysql sets the upserts of MySQL and MariaDB.
func (q *queries) mysql(t Tables) {
	q.schema = mysqlSchema(t)
	q.incr = q.upsertHead + "(?, ?, ?, ?, ?) ON DUPLICATE KEY UPDATE value = value + ?"
	q.upsertTail = " ON DUPLICATE KEY UPDATE value = value + VALUES(value)"
	q.lockSuffix = " FOR UPDATE"
	q.markApplied = "INSERT IGNORE INTO " + t.Batches + " (batch_id, applied_at) VALUES (?, ?)"
	q.markStale = "INSERT INTO " + t.Stale + " (kind, entity_id, seq) VALUES (?, ?, 1) ON DUPLICATE KEY UPDATE seq = seq + 1"
	q.seqInit = "INSERT IGNORE INTO " + t.Seqs + " (name, value) VALUES (?, 0)"
	q.markSet = "INSERT INTO " + t.Marks + " (user_id, name, value, seen_at) VALUES (?, ?, ?, ?)" +
		" ON DUPLICATE KEY UPDATE value = VALUES(value), seen_at = VALUES(seen_at)"
}

// standard sets the upserts of SQLite and PostgreSQL (ON CONFLICT).
func (q *queries) standard(t Tables, d Dialect) {
	q.schema = standardSchema(t, d)
	// PostgreSQL resolves a bare column in DO UPDATE to the table, but
	// naming it is clearer and works in both.
	conflict := " ON CONFLICT (kind, entity_id, field, slot) DO UPDATE SET value = " + t.Table + ".value + "
	q.incr = q.upsertHead + "(?, ?, ?, ?, ?)" + conflict + "?"
	q.upsertTail = conflict + "excluded.value"
	q.markApplied = "INSERT INTO " + t.Batches + " (batch_id, applied_at) VALUES (?, ?) ON CONFLICT (batch_id) DO NOTHING"
	q.markStale = "INSERT INTO " + t.Stale + " (kind, entity_id, seq) VALUES (?, ?, 1)" +
		" ON CONFLICT (kind, entity_id) DO UPDATE SET seq = " + t.Stale + ".seq + 1"
	q.seqInit = "INSERT INTO " + t.Seqs + " (name, value) VALUES (?, 0) ON CONFLICT (name) DO NOTHING"
	q.markSet = "INSERT INTO " + t.Marks + " (user_id, name, value, seen_at) VALUES (?, ?, ?, ?)" +
		" ON CONFLICT (user_id, name) DO UPDATE SET value = excluded.value, seen_at = excluded.seen_at"
	if d == Postgres {
		q.lockSuffix = " FOR UPDATE"
	}
}

// load is the read of cold entities: every field's sum over its slots, and
// for each write-behind batch named, in the same statement (one snapshot),
// a row (0, batch id, 1) if it has been applied.
func (s *Store) loadQuery(n, batches int) string {
	var b strings.Builder
	b.WriteString("SELECT entity_id, field, " + s.q.sum + " FROM ")
	b.WriteString(s.Table)
	b.WriteString(" WHERE kind = ? AND entity_id IN (")
	placeholders(&b, n)
	b.WriteString(") GROUP BY entity_id, field")
	if batches > 0 {
		b.WriteString(" UNION ALL SELECT 0, batch_id, 1 FROM ")
		b.WriteString(s.Batches)
		b.WriteString(" WHERE batch_id IN (")
		placeholders(&b, batches)
		b.WriteString(")")
	}
	return s.Bind(b.String())
}

// lockRowsQuery selects the slot rows of some entities' field, locking
// them where the dialect can.
func (s *Store) lockRowsQuery(n int) string {
	var b strings.Builder
	b.WriteString("SELECT entity_id, value FROM ")
	b.WriteString(s.Table)
	b.WriteString(" WHERE kind = ? AND field = ? AND entity_id IN (")
	placeholders(&b, n)
	b.WriteString(")")
	b.WriteString(s.q.lockSuffix)
	return s.Bind(b.String())
}
