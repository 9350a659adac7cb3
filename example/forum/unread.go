package forum

import (
	"context"
	"fmt"

	"github.com/labstack/echo/v4"

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
func (a *App) followees(ctx context.Context, user int64) ([]int64, error) {
	qctx, cancel := a.deadline(ctx)
	defer cancel()
	rows, err := a.db.QueryContext(qctx, a.bind("SELECT target_id FROM forum_follows WHERE user_id = ? ORDER BY target_id LIMIT ?"), user, maxFollowed)
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
	if err := a.userExists(ctx, user); err != nil {
		return UnreadView{}, err
	}
	msgs, err := a.counters.Get(ctx, "message", user)
	if err != nil {
		return UnreadView{}, err
	}
	follows, err := a.followees(ctx, user)
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
	if err := a.userExists(ctx, user); err != nil {
		return UnreadView{}, err
	}
	for _, f := range []string{"replies", "followers"} {
		if err := a.counters.Reset(ctx, "message", user, f); err != nil {
			return UnreadView{}, err
		}
	}
	follows, err := a.followees(ctx, user)
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
	if err := a.userExists(ctx, user); err != nil {
		return nil, err
	}
	follows, err := a.followees(ctx, user)
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

func (a *App) unread(c echo.Context) error { return forUser(c, a.Unread) }

func (a *App) markRead(c echo.Context) error { return forUser(c, a.MarkRead) }

func (a *App) feedHandler(c echo.Context) error {
	return forUser(c, func(ctx context.Context, id int64) (map[string]any, error) {
		posts, err := a.Feed(ctx, id)
		return map[string]any{"user": id, "posts": posts}, err
	})
}

// createNotice publishes a system notice: POST /api/admin/notices
// {"text":"..."} answers 201 {"id":N}.
func (a *App) createNotice(c echo.Context) error {
	var body struct {
		Text string `json:"text"`
	}
	if err := decode(c, &body); err != nil {
		return err
	}
	msg, err := text("text", body.Text, maxNotice, true)
	if err != nil {
		return err
	}
	id, err := a.PublishNotice(c.Request().Context(), msg)
	if err != nil {
		return err
	}
	return created(c, id)
}
