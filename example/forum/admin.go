package forum

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/pulse-dev/pulse/entity"
)

// adminAPI serves /api/admin, behind Config.AdminAuth: reconciling the
// counts and publishing notices.
type adminAPI struct{ app *App }

func (h adminAPI) reconcile(c echo.Context) error {
	fixes, err := h.app.Reconcile(c.Request().Context())
	if err != nil {
		return err
	}
	if fixes == nil {
		fixes = []entity.Fix{}
	}
	return c.JSON(http.StatusOK, map[string]any{"fixes": fixes})
}

// notice publishes a system notice: POST /api/admin/notices
// {"text":"..."} answers 201 {"id":N}.
func (h adminAPI) notice(c echo.Context) error {
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
	id, err := h.app.PublishNotice(c.Request().Context(), msg)
	if err != nil {
		return err
	}
	return created(c, id)
}
