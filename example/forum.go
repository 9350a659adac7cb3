package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pulse-dev/pulse/example/forum"
	"github.com/pulse-dev/pulse/timeseries"
)

// openForum opens the forum on the SQL database opts.DatabaseURL names,
// with pool caching its counts and queryTimeout bounding each request's
// database work, and seeds an empty one; its close is added to c. auth
// guards the admin routes, which are off without it.
func openForum(ctx context.Context, opts options, queryTimeout time.Duration, pool timeseries.Pool,
	auth echo.MiddlewareFunc, c *closers, logger *slog.Logger) (*forum.App, error) {
	app, err := forum.Open(ctx, forum.Config{
		DatabaseURL:  opts.DatabaseURL,
		Pool:         pool,
		Logger:       logger,
		QueryTimeout: queryTimeout,
		AdminAuth:    auth,
	})
	if err != nil {
		return nil, err
	}
	c.add(app.Close)
	if err := app.Seed(ctx); err != nil {
		return nil, err
	}
	return app, nil
}
