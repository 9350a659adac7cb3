package forum

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/pulse-dev/pulse/entity"
)

// store runs the forum's own SQL on its tables (users, posts, likes,
// follows, replies), each statement within QueryTimeout.
type store struct {
	db      *sql.DB
	dialect entity.Dialect
	timeout time.Duration // Config.QueryTimeout: the database work of one request
}

// deadline bounds the forum's own SQL, as the counters bound theirs.
func (st store) deadline(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, st.timeout)
}

// bind adapts a query written with ? placeholders to the dialect.
func (st store) bind(query string) string { return st.dialect.Bind(query) }

// bound gives ctx a deadline QueryTimeout away unless it already has a
// nearer one: the bound of one App call's database work.
func (st store) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= st.timeout {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, st.timeout)
}

// queryRow reads one row, within QueryTimeout, into dest: query has ?
// placeholders for args. No row is ErrNotFound; other errors are
// wrapped with what before them.
func (st store) queryRow(ctx context.Context, what, query string, args []any, dest ...any) error {
	qctx, cancel := st.deadline(ctx)
	defer cancel()
	err := st.db.QueryRowContext(qctx, st.bind(query), args...).Scan(dest...)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}
