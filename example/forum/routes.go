package forum

import (
	"context"
	"time"

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

	// bound goes on each route rather than on a group: a group's
	// middleware would turn the 405 of a known path into a 404.
	bound := bounded(a.store.timeout)
	pages, posts, users, admin := site{a}, postsAPI{a}, usersAPI{a}, adminAPI{a}
	e.GET("/", pages.home, bound)
	e.GET("/posts", pages.posts, bound)
	e.GET("/posts/:id", pages.post, bound)
	e.GET("/forum.css", stylesheet)

	api := e.Group("/api")
	api.POST("/users", users.create, bound)
	api.GET("/users/:id", users.get, bound)
	api.POST("/users/:id/follow/:target", users.follow, bound)
	api.GET("/users/:id/unread", users.unread, bound)
	api.POST("/users/:id/unread/read", users.markRead, bound)
	api.GET("/users/:id/feed", users.feed, bound)
	api.GET("/posts", posts.list, bound)
	api.POST("/posts", posts.create, bound)
	api.GET("/posts/:id", posts.get, bound)
	api.POST("/posts/:id/like", posts.like, bound)
	api.POST("/posts/:id/replies", posts.reply, bound)

	// Admin work has its own, longer deadline (see Reconcile).
	adminGroup := e.Group("/api/admin")
	adminGroup.POST("/reconcile", admin.reconcile)
	adminGroup.POST("/notices", admin.notice, bound)
}

// bounded gives a request's database work one deadline, timeout
// (QueryTimeout) from now, however many statements it runs: a stalled
// database costs a request that long and no more.
func bounded(timeout time.Duration) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			ctx, cancel := context.WithTimeout(c.Request().Context(), timeout)
			defer cancel()
			c.SetRequest(c.Request().WithContext(ctx))
			return next(c)
		}
	}
}
