package forum

import (
	"context"
	"errors"
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

// Register mounts the forum's pages and JSON API on e, and puts Protect in
// front of every route of e: security headers on every answer, no
// cross-origin writes, JSON-only bodies within DefaultBodyLimit, and the
// admin routes behind Config.AdminAuth (or off). Because the guards sit on
// e, routes added later, by the forum or next to it, are covered too.
// Call it after the middleware that must see every request, such as Hits.
func (a *App) Register(e *echo.Echo) {
	e.Use(ProtectWithConfig(ProtectConfig{AdminAuth: a.adminAuth}))

	// a.bounded goes on each route rather than on a group: a group's
	// middleware would turn the 405 of a known path into a 404.
	e.GET("/", a.homePage, a.bounded)
	e.GET("/posts", a.postsPage, a.bounded)
	e.GET("/posts/:id", a.postPage, a.bounded)
	e.GET("/forum.css", stylesheet)

	api := e.Group("/api")
	api.POST("/users", a.createUser, a.bounded)
	api.GET("/users/:id", a.getUser, a.bounded)
	api.POST("/users/:id/follow/:target", a.follow, a.bounded)
	api.GET("/users/:id/unread", a.unread, a.bounded)
	api.POST("/users/:id/unread/read", a.markRead, a.bounded)
	api.GET("/users/:id/feed", a.feedHandler, a.bounded)
	api.GET("/posts", a.listPosts, a.bounded)
	api.POST("/posts", a.createPost, a.bounded)
	api.GET("/posts/:id", a.getPost, a.bounded)
	api.POST("/posts/:id/like", a.like, a.bounded)
	api.POST("/posts/:id/replies", a.reply, a.bounded)

	// Admin work has its own, longer deadline (see Reconcile).
	admin := e.Group("/api/admin")
	admin.POST("/reconcile", a.reconcile)
	admin.POST("/notices", a.createNotice, a.bounded)
}

// bounded gives a request's database work one deadline, QueryTimeout from
// now, however many statements it runs: a stalled database costs a request
// that long and no more.
func (a *App) bounded(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx, cancel := context.WithTimeout(c.Request().Context(), a.timeout)
		defer cancel()
		c.SetRequest(c.Request().WithContext(ctx))
		return next(c)
	}
}

// ErrorHandler answers every error as JSON {"error": "..."}, with the
// status of an *echo.HTTPError. A database that does not answer in time,
// is locked or lost the connection gives 503 with Retry-After; other
// unexpected errors give 500 and their text is only logged.
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
		c.Response().Header().Set("Retry-After", "2")
		c.Logger().Warn(err)
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

func notFound(err error, what string) error {
	if errors.Is(err, ErrNotFound) {
		return echo.NewHTTPError(http.StatusNotFound, "no such "+what)
	}
	return err
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
