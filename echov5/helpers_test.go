package echov5_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/labstack/echo/v5"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/internal/testenv/tracktest"
	"github.com/pulse-dev/pulse/timeseries"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// recorder returns a Recorder over a real redis-server, at the 5 s and
// 1 day precisions unless cfg names others, closed when the test ends.
func recorder(t testing.TB, srv *redistest.Server, cfg timeseries.Config) *timeseries.Recorder {
	t.Helper()
	if cfg.OnError == nil {
		cfg.OnError = func(error) {}
	}
	return tracktest.NewRecorder(t, srv.Pool(), cfg)
}

// seriesCounts flushes rec and returns every series' total at the 1-day
// precision.
func seriesCounts(t *testing.T, srv *redistest.Server, rec *timeseries.Recorder) map[string]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	members, err := redis.Strings(srv.Do("ZRANGE", "known:", 0, -1), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, m := range members {
		p, name, _ := timeseries.ParseKnownMember(m)
		if p == 86400 {
			out[name] = srv.HashSum("count:" + m)
		}
	}
	return out
}

// rateLimited is an app's own error type carrying its status the v5 way.
type rateLimited struct{}

func (rateLimited) Error() string   { return "slow down" }
func (rateLimited) StatusCode() int { return http.StatusTooManyRequests }

// forum is a small app with a route for each way a status comes about.
func forum(mw echo.MiddlewareFunc, extra ...echo.MiddlewareFunc) *echo.Echo {
	e := echo.New()
	e.Use(mw)
	e.Use(extra...)
	e.GET("/", func(c *echo.Context) error { return c.String(http.StatusOK, "home") })
	e.GET("/posts/:id", func(c *echo.Context) error {
		switch c.Param("id") {
		case "404":
			return c.String(http.StatusNotFound, "no such post")
		case "gone":
			return echo.ErrNotFound // the router's own sentinel, from a matched route
		}
		return c.String(http.StatusOK, "post")
	})
	e.POST("/posts", func(c *echo.Context) error { return echo.NewHTTPError(http.StatusBadRequest, "bad post") })
	e.GET("/boom", func(c *echo.Context) error { return errors.New("boom") })
	e.GET("/teapot", func(c *echo.Context) error { return echo.NewHTTPError(http.StatusTeapot, "") })
	e.GET("/forbidden", func(c *echo.Context) error { return fmt.Errorf("no: %w", echo.ErrForbidden) })
	e.GET("/slow", func(c *echo.Context) error { return rateLimited{} })
	e.GET("/wrapped", func(c *echo.Context) error {
		return echo.HTTPError{Code: http.StatusBadGateway}.Wrap(errors.New("upstream"))
	})
	e.GET("/late", func(c *echo.Context) error {
		_ = c.String(http.StatusCreated, "made")
		return errors.New("after the answer") // the 201 sent stands
	})
	e.GET("/panic", func(c *echo.Context) error { panic("handler bug") })
	e.Add("PROPFIND", "/posts/:id", func(c *echo.Context) error { return c.NoContent(http.StatusNoContent) })
	e.RouteNotFound("/files/*", func(c *echo.Context) error { return c.String(http.StatusNotFound, "no file") })
	admin := e.Group("/admin", func(next echo.HandlerFunc) echo.HandlerFunc { return next })
	admin.GET("/users", func(c *echo.Context) error { return c.String(http.StatusOK, "users") })
	e.GET("/dashboard/x", func(c *echo.Context) error {
		timeseries.Skip(c.Response())
		return c.String(http.StatusOK, "not counted")
	})
	return e
}

func serve(e *echo.Echo, method, target string) *httptest.ResponseRecorder {
	rr := httptest.NewRecorder()
	e.ServeHTTP(rr, httptest.NewRequest(method, target, nil))
	return rr
}

// load sends goroutines×perGoroutine GETs to url+path(i) and returns how
// many did not answer 200.
func load(t *testing.T, url string, goroutines, perGoroutine int, path func(i int) string) int64 {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: goroutines}, Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	var wg sync.WaitGroup
	var bad atomic.Int64
	for range goroutines {
		wg.Go(func() {
			for i := range perGoroutine {
				resp, err := client.Get(url + path(i))
				if err != nil || resp.StatusCode != http.StatusOK {
					bad.Add(1)
				}
				if resp != nil {
					resp.Body.Close()
				}
			}
		})
	}
	wg.Wait()
	return bad.Load()
}
