package forum

import (
	"context"

	"github.com/labstack/echo/v4"
	echomw "github.com/labstack/echo/v4/middleware"
)

// Register mounts the forum's pages and JSON API on e, and puts Protect in
// front of every route of e: security headers on every answer, no
// cross-origin writes, JSON-only bodies within DefaultBodyLimit, and the
// admin routes behind Config.AdminAuth (or off). Because the guards sit on
// e, routes added later, by the forum or next to it, are covered too,
// but those ownGuard names (nil: none): routes with a login of their own
// that must answer before any other check, such as a mounted dashboard.
// Call it after the middleware that must see every request, such as Hits.
func (a *App) Register(e *echo.Echo, ownGuard echomw.Skipper) {
	e.Use(ProtectWithConfig(ProtectConfig{AdminAuth: a.adminAuth, Skipper: ownGuard}))

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
