package forum

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"
)

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

// notFound turns ErrNotFound into a 404 that names what is missing.
func notFound(err error, what string) error {
	if errors.Is(err, ErrNotFound) {
		return echo.NewHTTPError(http.StatusNotFound, "no such "+what)
	}
	return err
}
