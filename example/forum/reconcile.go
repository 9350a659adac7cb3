package forum

import (
	"context"
	"fmt"
	"time"

	"github.com/pulse-dev/pulse/entity"
)

// truth names, for each count the forum can recompute, the query that
// gives its true value per entity from the forum's own tables.
var truth = []struct {
	kind, field, query string
}{
	{"user", "following", "SELECT user_id, COUNT(*) FROM forum_follows GROUP BY user_id"},
	{"user", "followers", "SELECT target_id, COUNT(*) FROM forum_follows GROUP BY target_id"},
	{"user", "posts", "SELECT author_id, COUNT(*) FROM forum_posts GROUP BY author_id"},
	{"user", "replies", "SELECT user_id, COUNT(*) FROM forum_replies GROUP BY user_id"},
	{"post", "likes", "SELECT post_id, COUNT(*) FROM forum_likes GROUP BY post_id"},
	{"post", "replies", "SELECT post_id, COUNT(*) FROM forum_replies GROUP BY post_id"},
}

// Reconcile recomputes every count the forum's tables can vouch for and
// repairs those that drifted. Views and unread counts have no table to
// check them against and are left as they are. It runs under
// ReconcileTimeout.
func (a *App) Reconcile(ctx context.Context) ([]entity.Fix, error) {
	ctx, cancel := context.WithTimeout(ctx, ReconcileTimeout)
	defer cancel()
	var fixes []entity.Fix
	for _, t := range truth {
		f, err := a.counters.Reconcile(ctx, t.kind, t.field, a.store.source(t.query))
		fixes = append(fixes, f...)
		if err != nil {
			return fixes, err
		}
	}
	return fixes, nil
}

func (st store) source(query string) entity.Source {
	return func(ctx context.Context) (map[int64]int64, error) {
		rows, err := st.db.QueryContext(ctx, query)
		if err != nil {
			return nil, fmt.Errorf("forum: reconcile: %w", err)
		}
		defer rows.Close()
		out := map[int64]int64{}
		for rows.Next() {
			var id, n int64
			if err := rows.Scan(&id, &n); err != nil {
				return nil, fmt.Errorf("forum: reconcile: %w", err)
			}
			out[id] = n
		}
		return out, rows.Err()
	}
}

// RunReconciler reconciles at start and then every interval until ctx is
// done, logging each repair; a failed reconcile is retried a few seconds
// later, until the database answers.
func (a *App) RunReconciler(ctx context.Context, every time.Duration) {
	ticker := time.NewTicker(every)
	defer ticker.Stop()
	const retry = 2 * time.Second
	var again <-chan time.Time
	for {
		fixes, err := a.Reconcile(ctx)
		if err != nil && ctx.Err() == nil {
			a.logger.Error("reconcile failed", "err", err)
			again = time.After(retry)
		}
		for _, f := range fixes {
			a.logger.Warn("count repaired", "kind", f.Kind, "id", f.ID, "field", f.Field, "was", f.Was, "now", f.Now)
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		case <-again:
		}
		again = nil
	}
}
