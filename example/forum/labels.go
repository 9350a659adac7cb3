package forum

import (
	"context"
	"fmt"
)

// Labels names entities for the dashboard: posts by title, users by name
// (a user's messages by the user's name).
func (a *App) Labels(ctx context.Context, kind string, ids []int64) (map[int64]string, error) {
	var query string
	switch kind {
	case "post":
		query = "SELECT id, title FROM forum_posts WHERE id IN ("
	case "user", "message":
		query = "SELECT id, name FROM forum_users WHERE id IN ("
	default:
		return nil, nil
	}
	out := map[int64]string{}
	if len(ids) == 0 {
		return out, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		if i > 0 {
			query += ", "
		}
		query += "?"
		args[i] = id
	}
	qctx, cancel := a.store.deadline(ctx)
	defer cancel()
	rows, err := a.store.db.QueryContext(qctx, a.store.bind(query+")"), args...)
	if err != nil {
		return nil, fmt.Errorf("forum: labels: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var name string
		if err := rows.Scan(&id, &name); err != nil {
			return nil, fmt.Errorf("forum: labels: %w", err)
		}
		out[id] = name
	}
	return out, rows.Err()
}
