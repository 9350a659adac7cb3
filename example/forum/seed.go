package forum

import (
	"context"
	"fmt"
)

// The users and posts of a new forum; the demo traffic acts on them.
var seedUsers = []string{"alice", "bob", "carol", "dave", "erin"}

var seedPosts = []struct {
	author int64
	title  string
}{
	{1, "Welcome to the Pulse forum"},
	{2, "How do you count page views without a hot row?"},
	{3, "Redis as a cache, SQL as the truth"},
	{1, "Show us your dashboard"},
}

// Seed creates a few users and posts in an empty forum, through the same
// code the API uses, so their counts are right.
func (a *App) Seed(ctx context.Context) error {
	qctx, cancel := a.store.bound(ctx)
	defer cancel()
	var n int
	if err := a.store.db.QueryRowContext(qctx, "SELECT COUNT(*) FROM forum_users").Scan(&n); err != nil {
		return fmt.Errorf("forum: seed: %w", err)
	}
	if n > 0 {
		return nil
	}
	for _, name := range seedUsers {
		if _, err := a.CreateUser(ctx, name); err != nil {
			return err
		}
	}
	for _, p := range seedPosts {
		if _, err := a.CreatePost(ctx, p.author, p.title); err != nil {
			return err
		}
	}
	return nil
}
