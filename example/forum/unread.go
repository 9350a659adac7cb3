package forum

import (
	"context"
	"fmt"

	"github.com/pulse-dev/pulse/entity"
)

// Limits of the unread counts and the feed.
const (
	maxNotice   = 2000
	feedPosts   = 20
	maxFollowed = entity.DefaultMaxFollowees
)

// UnreadView is what GET /api/users/:id/unread answers.
type UnreadView struct {
	User   int64            `json:"user"`
	Unread map[string]int64 `json:"unread"`
	Dot    bool             `json:"dot"`
}

// followees lists whom user follows, at most maxFollowed of them.
func (st store) followees(ctx context.Context, user int64) ([]int64, error) {
	qctx, cancel := st.deadline(ctx)
	defer cancel()
	rows, err := st.db.QueryContext(qctx, st.bind("SELECT target_id FROM forum_follows WHERE user_id = ? ORDER BY target_id LIMIT ?"), user, maxFollowed)
	if err != nil {
		return nil, fmt.Errorf("forum: followees of %d: %w", user, err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("forum: followees of %d: %w", user, err)
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// Unread returns a user's unread counts: replies and followers (per-user
// counters), notices and feed (no per-user writes), and the red dot.
func (a *App) Unread(ctx context.Context, user int64) (UnreadView, error) {
	if err := a.store.userExists(ctx, user); err != nil {
		return UnreadView{}, err
	}
	msgs, err := a.counters.Get(ctx, "message", user)
	if err != nil {
		return UnreadView{}, err
	}
	follows, err := a.store.followees(ctx, user)
	if err != nil {
		return UnreadView{}, err
	}
	u, err := a.counters.Unread(ctx, user, feed, follows)
	if err != nil {
		return UnreadView{}, err
	}
	return UnreadView{User: user, Dot: u.Dot, Unread: map[string]int64{
		"replies":   msgs["replies"],
		"followers": msgs["followers"],
		"notices":   u.Notices,
		"feed":      u.Feed,
	}}, nil
}

// MarkRead clears every unread count of one user.
func (a *App) MarkRead(ctx context.Context, user int64) (UnreadView, error) {
	if err := a.store.userExists(ctx, user); err != nil {
		return UnreadView{}, err
	}
	for _, f := range []string{"replies", "followers"} {
		if err := a.counters.Reset(ctx, "message", user, f); err != nil {
			return UnreadView{}, err
		}
	}
	follows, err := a.store.followees(ctx, user)
	if err != nil {
		return UnreadView{}, err
	}
	if err := a.counters.MarkRead(ctx, user, feed, follows); err != nil {
		return UnreadView{}, err
	}
	return a.Unread(ctx, user)
}

// Feed returns the newest posts of the users user follows and marks the
// feed read.
func (a *App) Feed(ctx context.Context, user int64) ([]Post, error) {
	if err := a.store.userExists(ctx, user); err != nil {
		return nil, err
	}
	follows, err := a.store.followees(ctx, user)
	if err != nil {
		return nil, err
	}
	// The mark goes first: a post made while the page is built is unread
	// next time rather than lost.
	if err := a.counters.MarkFeedRead(ctx, user, feed, follows); err != nil {
		return nil, err
	}
	posts, err := a.postsWhere(ctx, "p.author_id IN (SELECT target_id FROM forum_follows WHERE user_id = ?)", []any{user}, feedPosts)
	if posts == nil && err == nil {
		posts = []Post{}
	}
	return posts, err
}
