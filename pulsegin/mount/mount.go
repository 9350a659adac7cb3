// Package mount serves the Pulse dashboard in a Gin app. It is apart from
// package pulsegin, the counting, so that an app that only counts links
// no dashboard.
package mount

import (
	"fmt"

	"github.com/gin-gonic/gin"

	"github.com/pulse-dev/pulse/dashboard"
)

// Dashboard serves the dashboard under prefix on r, behind the handlers
// login (the app's login, if any):
//
//	err := mount.Dashboard(r, "/dashboard", dashboard.Config{Store: rec.Store(), Health: rec},
//		gin.BasicAuth(gin.Accounts{"ops": password}))
//
// Every request under the prefix, of any method, goes to the dashboard,
// through dashboard.Guard before login: none is counted by a Pulse
// middleware, a refusal of login included, and every answer carries the
// dashboard's security headers. The prefix is a literal path below the
// root (see dashboard.Mount); without its trailing slash it redirects to
// the page.
func Dashboard(r *gin.Engine, prefix string, cfg dashboard.Config, login ...gin.HandlerFunc) error {
	m, err := dashboard.Mount(prefix, cfg)
	if err != nil {
		return fmt.Errorf("mount: %w", err)
	}
	serve := gin.WrapH(m.Handler)
	chain := append(append([]gin.HandlerFunc{guard}, login...), serve)
	r.Any(m.Prefix, chain...)
	r.Any(m.Prefix+"/*path", chain...)
	// Any routes nine methods; Gin answers any other with its 404, past
	// the routes. This runs the same chain for them instead, each handler
	// in turn until one aborts (as a login that refuses does).
	r.Use(func(c *gin.Context) {
		if c.FullPath() != "" || !m.Under(c.Request.URL.Path) {
			return
		}
		for _, h := range chain {
			if h(c); c.IsAborted() {
				return
			}
		}
		c.Abort()
	})
	return nil
}

// guard is the first handler of a mounted dashboard.
func guard(c *gin.Context) { dashboard.Guard(c.Writer) }
