package forum

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// postsAPI serves /api/posts: listing and creating posts, and a post's
// views, likes and replies.
type postsAPI struct{ app *App }

func (h postsAPI) list(c echo.Context) error {
	posts, err := h.app.Posts(c.Request().Context(), 50)
	if err != nil {
		return err
	}
	if posts == nil {
		posts = []Post{}
	}
	return c.JSON(http.StatusOK, map[string]any{"posts": posts})
}

func (h postsAPI) create(c echo.Context) error {
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
	id, err := h.app.CreatePost(c.Request().Context(), body.Author, title)
	if err != nil {
		return notFound(err, "user")
	}
	return created(c, id)
}

func (h postsAPI) get(c echo.Context) error {
	p, err := viewPost(c, h.app)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, p)
}

func (h postsAPI) like(c echo.Context) error {
	var body likeBody
	id, err := postAndBody(c, &body, &body.User)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	liked, err := h.app.Like(ctx, id, body.User)
	if err != nil {
		return notFound(err, "post or user")
	}
	counts, err := h.app.counters.Get(ctx, "post", id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"liked": liked, "likes": counts["likes"]})
}

func (h postsAPI) reply(c echo.Context) error {
	var body replyBody
	id, err := postAndBody(c, &body, &body.User)
	if err != nil {
		return err
	}
	msg, err := text("text", body.Text, maxReply, true)
	if err != nil {
		return err
	}
	rid, err := h.app.AddReply(c.Request().Context(), id, body.User, msg)
	if err != nil {
		return notFound(err, "post or user")
	}
	return created(c, rid)
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
