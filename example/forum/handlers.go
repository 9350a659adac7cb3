package forum

import (
	"context"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/pulse-dev/pulse/entity"
)

// Limits on what clients send.
const (
	maxTitle = 200
	maxReply = 2000
	maxName  = 64
)

// idParam parses a positive id from the path.
func idParam(c echo.Context, name string) (int64, error) {
	id, err := strconv.ParseInt(c.Param(name), 10, 64)
	if err != nil || id <= 0 {
		return 0, badRequest(name + " must be a positive integer")
	}
	return id, nil
}

// created answers 201 {"id": id}, the id of a new row.
func created(c echo.Context, id int64) error {
	return c.JSON(http.StatusCreated, map[string]int64{"id": id})
}

// forUser answers a request on /users/:id: get's result for the user of
// the path as JSON, or 404 when there is no such user.
func forUser[T any](c echo.Context, get func(context.Context, int64) (T, error)) error {
	id, err := idParam(c, "id")
	if err != nil {
		return err
	}
	v, err := get(c.Request().Context(), id)
	if err != nil {
		return notFound(err, "user")
	}
	return c.JSON(http.StatusOK, v)
}

// viewPost counts a view of the post of the path and returns it, or 404
// when there is no such post.
func (a *App) viewPost(c echo.Context) (Post, error) {
	id, err := idParam(c, "id")
	if err != nil {
		return Post{}, err
	}
	p, err := a.ViewPost(c.Request().Context(), id)
	if err != nil {
		return p, notFound(err, "post")
	}
	return p, nil
}

func (a *App) createUser(c echo.Context) error {
	var body struct {
		Name string `json:"name"`
	}
	if err := decode(c, &body); err != nil {
		return err
	}
	name, err := text("name", body.Name, maxName, false)
	if err != nil {
		return err
	}
	id, err := a.CreateUser(c.Request().Context(), name)
	if err != nil {
		return err
	}
	return created(c, id)
}

func (a *App) getUser(c echo.Context) error { return forUser(c, a.GetUser) }

func (a *App) createPost(c echo.Context) error {
	var body struct {
		Author int64  `json:"author"`
		Title  string `json:"title"`
	}
	if err := decode(c, &body); err != nil {
		return err
	}
	if body.Author <= 0 {
		return badRequest("author must be a positive user id")
	}
	title, err := text("title", body.Title, maxTitle, false)
	if err != nil {
		return err
	}
	id, err := a.CreatePost(c.Request().Context(), body.Author, title)
	if err != nil {
		return notFound(err, "user")
	}
	return created(c, id)
}

func (a *App) listPosts(c echo.Context) error {
	posts, err := a.Posts(c.Request().Context(), 50)
	if err != nil {
		return err
	}
	if posts == nil {
		posts = []Post{}
	}
	return c.JSON(http.StatusOK, map[string]any{"posts": posts})
}

func (a *App) getPost(c echo.Context) error {
	p, err := a.viewPost(c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, p)
}

// likeBody is the body of a like; replyBody the body of a reply.
type (
	likeBody struct {
		User int64 `json:"user"`
	}
	replyBody struct {
		User int64  `json:"user"`
		Text string `json:"text"`
	}
)

// postAndBody reads the post id from the path and the body, whose user
// (a field of body) must be a positive id.
func postAndBody(c echo.Context, body any, user *int64) (int64, error) {
	id, err := idParam(c, "id")
	if err != nil {
		return 0, err
	}
	if err := decode(c, body); err != nil {
		return 0, err
	}
	if *user <= 0 {
		return 0, badRequest("user must be a positive user id")
	}
	return id, nil
}

func (a *App) like(c echo.Context) error {
	var body likeBody
	id, err := postAndBody(c, &body, &body.User)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	liked, err := a.Like(ctx, id, body.User)
	if err != nil {
		return notFound(err, "post or user")
	}
	counts, err := a.counters.Get(ctx, "post", id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"liked": liked, "likes": counts["likes"]})
}

func (a *App) follow(c echo.Context) error {
	id, err := idParam(c, "id")
	if err != nil {
		return err
	}
	target, err := idParam(c, "target")
	if err != nil {
		return err
	}
	if id == target {
		return badRequest("a user cannot follow themself")
	}
	followed, err := a.Follow(c.Request().Context(), id, target)
	if err != nil {
		return notFound(err, "user")
	}
	return c.JSON(http.StatusOK, map[string]bool{"followed": followed})
}

func (a *App) reply(c echo.Context) error {
	var body replyBody
	id, err := postAndBody(c, &body, &body.User)
	if err != nil {
		return err
	}
	msg, err := text("text", body.Text, maxReply, true)
	if err != nil {
		return err
	}
	rid, err := a.AddReply(c.Request().Context(), id, body.User, msg)
	if err != nil {
		return notFound(err, "post or user")
	}
	return created(c, rid)
}

func (a *App) reconcile(c echo.Context) error {
	fixes, err := a.Reconcile(c.Request().Context())
	if err != nil {
		return err
	}
	if fixes == nil {
		fixes = []entity.Fix{}
	}
	return c.JSON(http.StatusOK, map[string]any{"fixes": fixes})
}
