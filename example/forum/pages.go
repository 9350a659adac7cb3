package forum

import (
	"embed"
	"html/template"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

//go:embed templates/*.html
var templateFS embed.FS

// The pages' styles are a file of their own so that their CSP can forbid
// inline styles as well as scripts.
//
//go:embed forum.css
var forumCSS []byte

var templates = template.Must(template.New("").Funcs(template.FuncMap{
	"date": func(unix int64) string { return time.Unix(unix, 0).UTC().Format("2 Jan 2006 15:04 UTC") },
}).ParseFS(templateFS, "templates/*.html"))

// render answers 200 with the page template name filled with data.
func render(c echo.Context, name string, data any) error {
	c.Response().Header().Set(echo.HeaderContentSecurityPolicy, PageCSP)
	c.Response().Header().Set(echo.HeaderContentType, echo.MIMETextHTMLCharsetUTF8)
	c.Response().WriteHeader(http.StatusOK)
	return templates.ExecuteTemplate(c.Response(), name, data)
}

func stylesheet(c echo.Context) error {
	c.Response().Header().Set(echo.HeaderCacheControl, "public, max-age=3600")
	return c.Blob(http.StatusOK, "text/css; charset=utf-8", forumCSS)
}

// site serves the forum's HTML pages.
type site struct{ app *App }

func (h site) home(c echo.Context) error {
	posts, err := h.app.Posts(c.Request().Context(), 5)
	if err != nil {
		return err
	}
	return render(c, "home.html", map[string]any{"Posts": posts})
}

func (h site) posts(c echo.Context) error {
	posts, err := h.app.Posts(c.Request().Context(), 50)
	if err != nil {
		return err
	}
	return render(c, "posts.html", map[string]any{"Posts": posts})
}

func (h site) post(c echo.Context) error {
	p, err := viewPost(c, h.app)
	if err != nil {
		return err
	}
	return render(c, "post.html", p)
}
