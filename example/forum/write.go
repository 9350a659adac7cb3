package forum

import (
	"context"
	"errors"
	"fmt"

	"github.com/pulse-dev/pulse/entity"
)

// CreateUser adds a user and returns its id. A new user has read
// everything there is so far.
func (a *App) CreateUser(ctx context.Context, name string) (int64, error) {
	ctx, cancel := a.store.bound(ctx)
	defer cancel()
	id, err := a.insertRow(ctx, "create user", func(ctx context.Context, tx *entity.Tx) (int64, error) {
		return insertID(ctx, tx.Tx, a.store.dialect, "INSERT INTO forum_users (name) VALUES (?)", name)
	})
	if err != nil {
		return 0, err
	}
	if err := a.counters.MarkRead(ctx, id, feed, nil); err != nil {
		return 0, fmt.Errorf("forum: create user: %w", err)
	}
	return id, nil
}

// CreatePost adds a post by author and counts it, in one transaction; it
// also lights every user's red dot, with one global write.
func (a *App) CreatePost(ctx context.Context, author int64, title string) (int64, error) {
	ctx, cancel := a.store.bound(ctx)
	defer cancel()
	if err := a.store.userExists(ctx, author); err != nil {
		return 0, err
	}
	return a.insertRow(ctx, "create post", func(ctx context.Context, tx *entity.Tx) (int64, error) {
		id, err := insertID(ctx, tx.Tx, a.store.dialect, "INSERT INTO forum_posts (author_id, title, created_at) VALUES (?, ?, ?)",
			author, title, a.now().Unix())
		if err != nil {
			return 0, err
		}
		if err := tx.Incr("user", author, "posts", 1); err != nil {
			return 0, err
		}
		return id, tx.Touch()
	})
}

// PublishNotice stores a system notice for every user: one row and one
// counter write, whatever the number of users.
func (a *App) PublishNotice(ctx context.Context, text string) (int64, error) {
	ctx, cancel := a.store.bound(ctx)
	defer cancel()
	return a.insertRow(ctx, "publish notice", func(ctx context.Context, tx *entity.Tx) (int64, error) {
		id, err := tx.PublishNotice()
		if err != nil {
			return 0, err
		}
		_, err = tx.ExecContext(ctx, a.store.bind("INSERT INTO forum_notices (id, body, created_at) VALUES (?, ?, ?)"), id, text, a.now().Unix())
		return id, err
	})
}

// AddReply stores a reply and counts it for the post and the replier, and
// as an unread reply for the post's author (unless they replied themself),
// all in one transaction.
func (a *App) AddReply(ctx context.Context, post, user int64, text string) (int64, error) {
	ctx, cancel := a.store.bound(ctx)
	defer cancel()
	author, err := a.postAndUser(ctx, post, user)
	if err != nil {
		return 0, err
	}
	return a.insertRow(ctx, "reply", func(ctx context.Context, tx *entity.Tx) (int64, error) {
		id, err := insertID(ctx, tx.Tx, a.store.dialect, "INSERT INTO forum_replies (post_id, user_id, body, created_at) VALUES (?, ?, ?, ?)",
			post, user, text, a.now().Unix())
		if err != nil {
			return 0, err
		}
		errs := []error{
			tx.Incr("post", post, "replies", 1),
			tx.Incr("user", user, "replies", 1),
		}
		if author != user {
			errs = append(errs, tx.Incr("message", author, "replies", 1))
		}
		return id, errors.Join(errs...)
	})
}

// Like records that user likes post; only the first like counts, and it
// commits with its count or not at all. It reports whether this call was
// that first like.
func (a *App) Like(ctx context.Context, post, user int64) (bool, error) {
	ctx, cancel := a.store.bound(ctx)
	defer cancel()
	if _, err := a.postAndUser(ctx, post, user); err != nil {
		return false, err
	}
	return a.addOnce(ctx, "like", likesTable, post, user, func(tx *entity.Tx) error {
		return tx.Incr("post", post, "likes", 1)
	})
}

// Follow records that user follows target; only the first follow counts.
// Target's earlier posts are not news in user's feed.
func (a *App) Follow(ctx context.Context, user, target int64) (bool, error) {
	ctx, cancel := a.store.bound(ctx)
	defer cancel()
	if err := a.store.userExists(ctx, user); err != nil {
		return false, err
	}
	if err := a.store.userExists(ctx, target); err != nil {
		return false, err
	}
	return a.addOnce(ctx, "follow", followsTable, user, target, func(tx *entity.Tx) error {
		return errors.Join(
			tx.Incr("user", user, "following", 1),
			tx.Incr("user", target, "followers", 1),
			tx.Incr("message", target, "followers", 1),
			tx.Followed(user, target, feed),
		)
	})
}

// postAndUser checks that post and user exist and returns the post's
// author.
func (a *App) postAndUser(ctx context.Context, post, user int64) (int64, error) {
	author, err := a.store.postAuthor(ctx, post)
	if err != nil {
		return 0, err
	}
	return author, a.store.userExists(ctx, user)
}

// insertRow runs insert, which stores one row and moves the counts it
// implies, in one transaction, and returns the row's id; what names the
// action in an error.
func (a *App) insertRow(ctx context.Context, what string, insert func(context.Context, *entity.Tx) (int64, error)) (int64, error) {
	var id int64
	err := a.counters.InTx(ctx, func(ctx context.Context, tx *entity.Tx) error {
		var err error
		id, err = insert(ctx, tx)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("forum: %s: %w", what, err)
	}
	return id, nil
}

// pairs is a table of pairs stored at most once, such as who likes what.
type pairs struct{ table, first, second string }

var (
	likesTable   = pairs{"forum_likes", "post_id", "user_id"}
	followsTable = pairs{"forum_follows", "user_id", "target_id"}
)

// addOnce stores the pair (x, y) in p unless it is there and, only if it
// was not, moves its counts with count, in one transaction. It reports
// whether this call stored the pair; what names the action in an error.
func (a *App) addOnce(ctx context.Context, what string, p pairs, x, y int64, count func(*entity.Tx) error) (bool, error) {
	var first bool
	err := a.counters.InTx(ctx, func(ctx context.Context, tx *entity.Tx) error {
		res, err := tx.ExecContext(ctx, insertOnce(a.store.dialect, p.table, p.first, p.second), x, y)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		if first = n > 0; !first {
			return nil
		}
		return count(tx)
	})
	if err != nil {
		return false, fmt.Errorf("forum: %s: %w", what, err)
	}
	return first, nil
}
