package forum

import (
	"context"
	"fmt"

	"github.com/pulse-dev/pulse/entity"
)

// Post is a post as pages and the API show it.
type Post struct {
	ID      int64         `json:"id"`
	Author  int64         `json:"author"`
	Name    string        `json:"author_name"`
	Title   string        `json:"title"`
	Created int64         `json:"created"`
	Counts  entity.Counts `json:"counts"`
	Replies []Reply       `json:"replies,omitempty"`
}

// Reply is a reply to a post.
type Reply struct {
	ID      int64  `json:"id"`
	User    int64  `json:"user"`
	Name    string `json:"user_name"`
	Text    string `json:"text"`
	Created int64  `json:"created"`
}

// User is a user with their counts.
type User struct {
	ID     int64         `json:"id"`
	Name   string        `json:"name"`
	Counts entity.Counts `json:"counts"`
}

// ViewPost counts a view of a post and returns it with its counts and
// replies. The view is buffered: no SQL or Redis write on this request,
// yet the counts returned include it.
func (a *App) ViewPost(ctx context.Context, id int64) (Post, error) {
	ctx, cancel := a.store.bound(ctx)
	defer cancel()
	p := Post{ID: id}
	err := a.store.queryRow(ctx, fmt.Sprintf("forum: post %d", id), `SELECT p.author_id, u.name, p.title, p.created_at
		FROM forum_posts p JOIN forum_users u ON u.id = p.author_id WHERE p.id = ?`, []any{id},
		&p.Author, &p.Name, &p.Title, &p.Created)
	if err != nil {
		return p, err
	}
	if err := a.counters.Incr(ctx, "post", id, "views", 1); err != nil {
		return p, err
	}
	if p.Counts, err = a.counters.Get(ctx, "post", id); err != nil {
		return p, err
	}
	p.Replies, err = a.store.replies(ctx, id)
	return p, err
}

// replies lists the replies to a post, oldest first.
func (st store) replies(ctx context.Context, post int64) ([]Reply, error) {
	qctx, cancel := st.deadline(ctx)
	defer cancel()
	rows, err := st.db.QueryContext(qctx, st.bind(`SELECT r.id, r.user_id, u.name, r.body, r.created_at
		FROM forum_replies r JOIN forum_users u ON u.id = r.user_id WHERE r.post_id = ? ORDER BY r.id`), post)
	if err != nil {
		return nil, fmt.Errorf("forum: replies of %d: %w", post, err)
	}
	defer rows.Close()
	var out []Reply
	for rows.Next() {
		var r Reply
		if err := rows.Scan(&r.ID, &r.User, &r.Name, &r.Text, &r.Created); err != nil {
			return out, fmt.Errorf("forum: replies of %d: %w", post, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return out, fmt.Errorf("forum: replies of %d: %w", post, err)
	}
	return out, nil
}

// Posts lists the newest posts with their counts, read in one batch.
func (a *App) Posts(ctx context.Context, limit int) ([]Post, error) {
	return a.postsWhere(ctx, "", nil, limit)
}

// postsWhere lists the newest posts matching where (a condition on p with
// ? placeholders), with their counts read in one batch.
func (a *App) postsWhere(ctx context.Context, where string, args []any, limit int) ([]Post, error) {
	ctx, cancel := a.store.bound(ctx)
	defer cancel()
	posts, ids, err := a.store.queryPosts(ctx, where, args, limit)
	if err != nil {
		return nil, err
	}
	counts, err := a.counters.BatchGet(ctx, "post", ids)
	if err != nil {
		return nil, err
	}
	for i := range posts {
		posts[i].Counts = counts[i]
	}
	return posts, nil
}

// queryPosts reads the posts of postsWhere, without their counts, and
// their ids.
func (st store) queryPosts(ctx context.Context, where string, args []any, limit int) ([]Post, []int64, error) {
	qctx, cancel := st.deadline(ctx)
	defer cancel()
	query := `SELECT p.id, p.author_id, u.name, p.title, p.created_at
		FROM forum_posts p JOIN forum_users u ON u.id = p.author_id`
	if where != "" {
		query += " WHERE " + where
	}
	query += " ORDER BY p.id DESC LIMIT ?"
	rows, err := st.db.QueryContext(qctx, st.bind(query), append(args, limit)...)
	if err != nil {
		return nil, nil, fmt.Errorf("forum: posts: %w", err)
	}
	defer rows.Close()
	var posts []Post
	var ids []int64
	for rows.Next() {
		var p Post
		if err := rows.Scan(&p.ID, &p.Author, &p.Name, &p.Title, &p.Created); err != nil {
			return nil, nil, fmt.Errorf("forum: posts: %w", err)
		}
		posts = append(posts, p)
		ids = append(ids, p.ID)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("forum: posts: %w", err)
	}
	return posts, ids, nil
}

// GetUser returns a user with their counts.
func (a *App) GetUser(ctx context.Context, id int64) (User, error) {
	ctx, cancel := a.store.bound(ctx)
	defer cancel()
	u := User{ID: id}
	err := a.store.queryRow(ctx, fmt.Sprintf("forum: user %d", id), "SELECT name FROM forum_users WHERE id = ?", []any{id}, &u.Name)
	if err != nil {
		return u, err
	}
	u.Counts, err = a.counters.Get(ctx, "user", id)
	return u, err
}

func (st store) userExists(ctx context.Context, id int64) error {
	var one int
	return st.queryRow(ctx, "forum", "SELECT 1 FROM forum_users WHERE id = ?", []any{id}, &one)
}

func (st store) postAuthor(ctx context.Context, id int64) (int64, error) {
	var author int64
	err := st.queryRow(ctx, fmt.Sprintf("forum: post %d", id), "SELECT author_id FROM forum_posts WHERE id = ?", []any{id}, &author)
	return author, err
}
