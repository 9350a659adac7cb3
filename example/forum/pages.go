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

var pages = template.Must(template.New("").Funcs(template.FuncMap{
	"date": func(unix int64) string { return time.Unix(unix, 0).UTC().Format("2 Jan 2006 15:04 UTC") },
}).ParseFS(templateFS, "templates/*.html"))

func (a *App) render(c echo.Context, name string, data any) error {
	c.Response().Header().Set(echo.HeaderContentSecurityPolicy, PageCSP)
	c.Response().Header().Set(echo.HeaderContentType, echo.MIMETextHTMLCharsetUTF8)
	c.Response().WriteHeader(http.StatusOK)
	return pages.ExecuteTemplate(c.Response(), name, data)
}

func stylesheet(c echo.Context) error {
	c.Response().Header().Set(echo.HeaderCacheControl, "public, max-age=3600")
	return c.Blob(http.StatusOK, "text/css; charset=utf-8", forumCSS)
}

func (a *App) homePage(c echo.Context) error {
	posts, err := a.Posts(c.Request().Context(), 5)
	if err != nil {
		return err
	}
	return a.render(c, "home.html", map[string]any{"Posts": posts})
}

func (a *App) postsPage(c echo.Context) error {
	posts, err := a.Posts(c.Request().Context(), 50)
	if err != nil {
		return err
	}
	return a.render(c, "posts.html", map[string]any{"Posts": posts})
}

func (a *App) postPage(c echo.Context) error {
	p, err := a.viewPost(c)
	if err != nil {
		return err
	}
	return a.render(c, "post.html", p)
}
