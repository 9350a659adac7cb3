package pulsefiber_test

import (
	"bufio"
	"net"
	"net/http"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/gofiber/fiber/v2/middleware/recover"

	"github.com/pulse-dev/pulse/adapter/adaptertest"
	"github.com/pulse-dev/pulse/dashboard"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/pulsefiber"
	"github.com/pulse-dev/pulse/pulsefiber/mount"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// colonParams writes a route's {name} segments as Fiber does, :name.
func colonParams(path string) string {
	return regexp.MustCompile(`\{(\w+)\}`).ReplaceAllString(path, ":$1")
}

// handler is rt as a Fiber handler, every Kind native: no net/http in
// between.
func handler(rt adaptertest.Route) fiber.Handler {
	return func(c *fiber.Ctx) error {
		switch rt.Kind {
		case adaptertest.KindStatus:
			return c.SendStatus(rt.Status(c.Path()))
		case adaptertest.KindSkip:
			pulsefiber.Skip(c)
			return c.SendStatus(fiber.StatusNoContent)
		case adaptertest.KindPanic:
			panic("handler bug")
		case adaptertest.KindLatePanic:
			c.Status(fiber.StatusAccepted) // Fiber sends nothing before its handler returns
			panic("late bug")
		case adaptertest.KindHijack:
			c.Status(fiber.StatusSwitchingProtocols).Set(fiber.HeaderUpgrade, "echo")
			c.Set(fiber.HeaderConnection, "Upgrade")
			c.Context().Hijack(func(conn net.Conn) { rt.Echo(conn) })
		case adaptertest.KindStream:
			c.Context().SetBodyStreamWriter(func(w *bufio.Writer) { rt.Stream(w, w.Flush) })
		case adaptertest.KindSleep:
			rt.Sleep(c.Path())
		case adaptertest.KindError:
			if rt.Code != 0 {
				return fiber.NewError(rt.Code)
			}
			return rt.Err()
		}
		return nil
	}
}

// hooked is cfg with the table's config hooks, when it has some.
func hooked(cfg pulsefiber.HitsConfig, h *adaptertest.Hooks) pulsefiber.HitsConfig {
	if h != nil {
		get := func(c *fiber.Ctx) adaptertest.Header { return func(k string) string { return c.Get(k) } }
		cfg.SeriesName = func(c *fiber.Ctx) string { return h.SeriesName(get(c)) }
		cfg.VisitorID = func(c *fiber.Ctx) string { return h.VisitorID(get(c)) }
		cfg.Skipper = func(c *fiber.Ctx) bool { return h.Skipper(get(c)) }
	}
	return cfg
}

// build is the conformance table's app on Fiber, behind its recover.
func build(app adaptertest.App) (*fiber.App, error) {
	cfg := fiber.Config{DisableStartupMessage: true, RequestMethods: slices.Concat(fiber.DefaultMethods, []string{"PROPFIND"})}
	if code := app.ErrorStatus; code != 0 {
		cfg.ErrorHandler = func(c *fiber.Ctx, _ error) error { return c.SendStatus(code) }
	}
	a := fiber.New(cfg)
	a.Use(recover.New())
	for _, rec := range app.Recorders {
		mw, err := hooked(pulsefiber.HitsConfig{Recorder: rec, Routes: true, StatusClasses: true, HandleError: app.HandleError}, app.Hooks).ToMiddleware()
		if err != nil {
			return nil, err
		}
		a.Use(mw)
	}
	for _, rt := range app.Routes {
		a.Add(rt.Method, colonParams(rt.Path), handler(rt))
	}
	if d := app.Dashboard; d != nil {
		cfg := dashboard.Config{Store: d.Recorder.Store(), Health: d.Recorder}
		if err := mount.Dashboard(a, d.Prefix, cfg, fiberLogin(d.Login)...); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// fiberLogin is the dashboard's login, net/http middleware, as Fiber
// handlers: none for nil.
func fiberLogin(mw func(http.Handler) http.Handler) []fiber.Handler {
	if mw == nil {
		return nil
	}
	return []fiber.Handler{adaptor.HTTPMiddleware(mw)}
}

// server is a Fiber app on its own listener, fasthttp's.
type server struct {
	app    *fiber.App
	url    string
	served chan error
}

// start serves app on a loopback port.
func start(app adaptertest.App) (adaptertest.Server, error) {
	a, err := build(app)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &server{app: a, url: "http://" + ln.Addr().String(), served: make(chan error, 1)}
	go func() { s.served <- a.Listener(ln) }()
	return s, nil
}

func (s *server) URL() string { return s.url }

// Close shuts fasthttp down, which waits for every connection it serves,
// a streamed body included; a hijacked one is counted before it is taken.
func (s *server) Close() {
	_ = s.app.ShutdownWithTimeout(10 * time.Second)
	<-s.served
}

// The Fiber adapter passes the conformance table, natively: Fiber's
// handlers on fasthttp's listener.
func TestConformance(t *testing.T) {
	srv := redistest.Start(t)
	adaptertest.Run(t, srv.Pool(), adaptertest.Adapter{Name: "fiber v2", Template: colonParams, ReturnsErrors: true, StreamsAfterHandler: true, Start: start})
}
