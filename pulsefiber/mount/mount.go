// Package mount serves the Pulse dashboard in a Fiber v2 app. It is apart
// from package pulsefiber, the counting, so that an app that only counts
// links no dashboard.
package mount

import (
	"fmt"
	"net/http"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"

	"github.com/pulse-dev/pulse/dashboard"
	"github.com/pulse-dev/pulse/pulsefiber"
)

// Dashboard serves the dashboard under prefix on app, behind the
// handlers login (the app's login, if any):
//
//	err := mount.Dashboard(app, "/dashboard", dashboard.Config{Store: rec.Store(), Health: rec},
//		basicauth.New(basicauth.Config{Users: map[string]string{"ops": password}}))
//
// Every request under the prefix, of every method Fiber serves, goes to
// the dashboard through a guard before login: none is counted by a
// pulsefiber middleware, a refusal of login included, and every answer
// carries the dashboard's security headers. The prefix is a literal path
// below the root (see dashboard.Mount); without its trailing slash it
// redirects to the page.
func Dashboard(app *fiber.App, prefix string, cfg dashboard.Config, login ...fiber.Handler) error {
	m, err := dashboard.Mount(prefix, cfg)
	if err != nil {
		return fmt.Errorf("mount: %w", err)
	}
	chain := append(append([]fiber.Handler{guard}, login...), adaptor.HTTPHandler(m.Handler))
	app.All(m.Prefix, chain...)
	app.All(m.Prefix+"/*", chain...)
	return nil
}

// guard is dashboard.Guard for Fiber, whose handlers have no
// http.ResponseWriter: the skip mark, and the security headers.
func guard(c *fiber.Ctx) error {
	pulsefiber.Skip(c)
	h := http.Header{}
	dashboard.SecurityHeaders(h)
	for k, v := range h {
		c.Set(k, v[0])
	}
	return c.Next()
}
