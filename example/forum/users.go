package forum

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"
)

// usersAPI serves /api/users: creating and reading users, follows, and a
// user's unread counts and feed.
type usersAPI struct{ app *App }

func (h usersAPI) create(c echo.Context) error {
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
	id, err := h.app.CreateUser(c.Request().Context(), name)
	if err != nil {
		return err
	}
	return created(c, id)
}

func (h usersAPI) get(c echo.Context) error { return forUser(c, h.app.GetUser) }

func (h usersAPI) follow(c echo.Context) error {
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
	followed, err := h.app.Follow(c.Request().Context(), id, target)
	if err != nil {
		return notFound(err, "user")
	}
	return c.JSON(http.StatusOK, map[string]bool{"followed": followed})
}

func (h usersAPI) unread(c echo.Context) error { return forUser(c, h.app.Unread) }

func (h usersAPI) markRead(c echo.Context) error { return forUser(c, h.app.MarkRead) }

func (h usersAPI) feed(c echo.Context) error {
	return forUser(c, func(ctx context.Context, id int64) (map[string]any, error) {
		posts, err := h.app.Feed(ctx, id)
		return map[string]any{"user": id, "posts": posts}, err
	})
}
