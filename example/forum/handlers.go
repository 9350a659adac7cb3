package forum

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/pulse-dev/pulse/entity"
)

// Limits on what clients send.
const (
	maxTitle = 200
	maxReply = 2000
	maxName  = 64
	maxBody  = 16 << 10
)

// Register mounts the forum's pages and JSON API on e.
func (a *App) Register(e *echo.Echo) {
	e.GET("/", a.homePage)
	e.GET("/posts", a.postsPage)
	e.GET("/posts/:id", a.postPage)

	api := e.Group("/api")
	api.POST("/users", a.createUser)
	api.GET("/users/:id", a.getUser)
	api.POST("/users/:id/follow/:target", a.follow)
	api.GET("/users/:id/unread", a.unread)
	api.POST("/users/:id/unread/read", a.markRead)
	api.GET("/users/:id/feed", a.feedHandler)
	api.GET("/posts", a.listPosts)
	api.POST("/posts", a.createPost)
	api.GET("/posts/:id", a.getPost)
	api.POST("/posts/:id/like", a.like)
	api.POST("/posts/:id/replies", a.reply)
	api.POST("/admin/reconcile", a.reconcile)
	api.POST("/admin/notices", a.createNotice)
}

// ErrorHandler answers every error as JSON {"error": "..."}, with the
// status of an *echo.HTTPError, and hides the text of unexpected errors.
func ErrorHandler(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	code, msg := http.StatusInternalServerError, "internal error"
	var he *echo.HTTPError
	switch {
	case errors.As(err, &he):
		code = he.Code
		if m, ok := he.Message.(string); ok {
			msg = m
		} else {
			msg = http.StatusText(code)
		}
	case errors.Is(err, ErrNotFound):
		code, msg = http.StatusNotFound, err.Error()
	case Unavailable(err):
		code, msg = http.StatusServiceUnavailable, "the database is not answering; try again shortly"
	default:
		c.Logger().Error(err)
	}
	if c.Request().Method == http.MethodHead {
		err = c.NoContent(code)
	} else {
		err = c.JSON(code, map[string]string{"error": msg})
	}
	if err != nil {
		c.Logger().Error(err)
	}
}

func badRequest(msg string) error { return echo.NewHTTPError(http.StatusBadRequest, msg) }

// idParam parses a positive id from the path.
func idParam(c echo.Context, name string) (int64, error) {
	id, err := strconv.ParseInt(c.Param(name), 10, 64)
	if err != nil || id <= 0 {
		return 0, badRequest(name + " must be a positive integer")
	}
	return id, nil
}

// decode reads a small JSON body into v, refusing unknown fields.
func decode(c echo.Context, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(c.Response(), c.Request().Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return badRequest("invalid JSON body: " + err.Error())
	}
	return nil
}

func text(field, s string, limit int) (string, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return "", badRequest(field + " is required")
	case !utf8.ValidString(s):
		return "", badRequest(field + " is not valid UTF-8")
	case utf8.RuneCountInString(s) > limit:
		return "", badRequest(field + " is longer than " + strconv.Itoa(limit) + " characters")
	}
	return s, nil
}

func notFound(err error, what string) error {
	if errors.Is(err, ErrNotFound) {
		return echo.NewHTTPError(http.StatusNotFound, "no such "+what)
	}
	return err
}

func (a *App) createUser(c echo.Context) error {
	var body struct {
		Name string `json:"name"`
	}
	if err := decode(c, &body); err != nil {
		return err
	}
	name, err := text("name", body.Name, maxName)
	if err != nil {
		return err
	}
	id, err := a.CreateUser(c.Request().Context(), name)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, map[string]int64{"id": id})
}

func (a *App) getUser(c echo.Context) error {
	id, err := idParam(c, "id")
	if err != nil {
		return err
	}
	u, err := a.GetUser(c.Request().Context(), id)
	if err != nil {
		return notFound(err, "user")
	}
	return c.JSON(http.StatusOK, u)
}

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
	title, err := text("title", body.Title, maxTitle)
	if err != nil {
		return err
	}
	id, err := a.CreatePost(c.Request().Context(), body.Author, title)
	if err != nil {
		return notFound(err, "user")
	}
	return c.JSON(http.StatusCreated, map[string]int64{"id": id})
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
	id, err := idParam(c, "id")
	if err != nil {
		return err
	}
	p, err := a.ViewPost(c.Request().Context(), id)
	if err != nil {
		return notFound(err, "post")
	}
	return c.JSON(http.StatusOK, p)
}

// userBody is the {"user": id} body of likes and replies.
type userBody struct {
	User int64  `json:"user"`
	Text string `json:"text"`
}

// postAndUser reads the post id from the path and a {"user": id, ...}
// body.
func postAndUser(c echo.Context) (int64, userBody, error) {
	var body userBody
	id, err := idParam(c, "id")
	if err != nil {
		return 0, body, err
	}
	if err := decode(c, &body); err != nil {
		return 0, body, err
	}
	if body.User <= 0 {
		return 0, body, badRequest("user must be a positive user id")
	}
	return id, body, nil
}

func (a *App) like(c echo.Context) error {
	id, body, err := postAndUser(c)
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
	id, body, err := postAndUser(c)
	if err != nil {
		return err
	}
	msg, err := text("text", body.Text, maxReply)
	if err != nil {
		return err
	}
	rid, err := a.AddReply(c.Request().Context(), id, body.User, msg)
	if err != nil {
		return notFound(err, "post or user")
	}
	return c.JSON(http.StatusCreated, map[string]int64{"id": rid})
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
