package forum

import (
	"context"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"
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
func viewPost(c echo.Context, app *App) (Post, error) {
	id, err := idParam(c, "id")
	if err != nil {
		return Post{}, err
	}
	p, err := app.ViewPost(c.Request().Context(), id)
	if err != nil {
		return p, notFound(err, "post")
	}
	return p, nil
}
