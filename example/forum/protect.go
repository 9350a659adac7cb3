package forum

import (
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"
	echomw "github.com/labstack/echo/v4/middleware"

	"github.com/pulse-dev/pulse/timeseries"
)

// DefaultBodyLimit is the largest request body the forum reads.
const DefaultBodyLimit = 64 << 10

// PageCSP is the Content-Security-Policy of the forum's HTML pages: no
// script at all, styles from the forum's own stylesheet only, and no
// framing by any site.
const PageCSP = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'"

// ProtectConfig configures Protect, the guards in front of every route of
// the Echo the forum is registered on.
type ProtectConfig struct {
	// Skipper skips every guard for a request. Default: none skipped.
	Skipper echomw.Skipper
	// AdminPrefix is the path under which every route is an admin route.
	// The rule matches the route a request was routed to, so admin routes
	// added later, on any group, are covered. Default "/api/admin".
	AdminPrefix string
	// AdminAuth authenticates requests to admin routes, e.g. the
	// dashboard's BasicAuth. Nil turns admin routes off: they answer 403
	// with AdminOffMessage.
	AdminAuth echo.MiddlewareFunc
	// AdminOffMessage is the error of a 403 for admin routes while they are
	// off; it should say how to turn them on.
	AdminOffMessage string
	// BodyLimit is the largest request body in bytes; a larger one gets
	// 413. Default DefaultBodyLimit.
	BodyLimit int64
	// TrustedOrigins may send state-changing requests from another origin,
	// as "scheme://host[:port]". Default: none.
	TrustedOrigins []string
	// ReferrerPolicy is sent on every answer. Default "same-origin".
	ReferrerPolicy string
}

// DefaultProtectConfig is the configuration Protect uses.
var DefaultProtectConfig = ProtectConfig{
	Skipper:         echomw.DefaultSkipper,
	AdminPrefix:     "/api/admin",
	AdminOffMessage: "admin routes are off: set DASHBOARD_USER and DASHBOARD_PASSWORD to turn them on behind the dashboard's login",
	BodyLimit:       DefaultBodyLimit,
	ReferrerPolicy:  "same-origin",
}

// Protect returns the guards with DefaultProtectConfig: admin routes off.
func Protect() echo.MiddlewareFunc { return ProtectWithConfig(DefaultProtectConfig) }

// ProtectWithConfig returns the guards for cfg; it panics if cfg is
// invalid (see ToMiddleware).
func ProtectWithConfig(cfg ProtectConfig) echo.MiddlewareFunc {
	mw, err := cfg.ToMiddleware()
	if err != nil {
		panic(err)
	}
	return mw
}

// ToMiddleware validates cfg once and returns the guards. For every
// request, in this order:
//
//   - security headers: X-Content-Type-Options nosniff, X-Frame-Options
//     DENY and Referrer-Policy, set before anything can answer, so 401s,
//     404s and 413s carry them too;
//   - a state-changing request (any method but GET, HEAD and OPTIONS) from
//     another origin, told by Sec-Fetch-Site or Origin against Host, gets
//     403: an HTML form on another site cannot post here;
//   - a state-changing request with a body must say Content-Type:
//     application/json, or gets 415; no form encoding a browser can send
//     cross-site without a preflight is accepted;
//   - a route under AdminPrefix goes through AdminAuth, or gets 403 when
//     there is none;
//   - a body over BodyLimit gets 413.
func (cfg ProtectConfig) ToMiddleware() (echo.MiddlewareFunc, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	cross := http.NewCrossOriginProtection()
	for _, o := range cfg.TrustedOrigins {
		if err := cross.AddTrustedOrigin(o); err != nil {
			return nil, fmt.Errorf("forum: protect: %w", err)
		}
	}
	g := &guards{
		cfg:   cfg,
		cross: cross,
		secure: echomw.SecureWithConfig(echomw.SecureConfig{
			// The X-XSS-Protection filter is gone from browsers and could
			// itself be abused where it remains; say so instead of
			// enabling it.
			XSSProtection:      "0",
			ContentTypeNosniff: "nosniff",
			XFrameOptions:      "DENY",
			ReferrerPolicy:     cfg.ReferrerPolicy,
		}),
		limit: echomw.BodyLimitWithConfig(echomw.BodyLimitConfig{Limit: strconv.FormatInt(cfg.BodyLimit, 10) + "B"}),
	}
	return g.wrap, nil
}

// withDefaults fills the zero fields of cfg from DefaultProtectConfig and
// checks the rest.
func (cfg ProtectConfig) withDefaults() (ProtectConfig, error) {
	d := DefaultProtectConfig
	if cfg.Skipper == nil {
		cfg.Skipper = d.Skipper
	}
	if cfg.AdminPrefix == "" {
		cfg.AdminPrefix = d.AdminPrefix
	}
	if !strings.HasPrefix(cfg.AdminPrefix, "/") || strings.HasSuffix(cfg.AdminPrefix, "/") {
		return cfg, fmt.Errorf("forum: protect: AdminPrefix %q must start with / and not end with one", cfg.AdminPrefix)
	}
	if cfg.AdminOffMessage == "" {
		cfg.AdminOffMessage = d.AdminOffMessage
	}
	if cfg.BodyLimit == 0 {
		cfg.BodyLimit = d.BodyLimit
	}
	if cfg.BodyLimit < 0 {
		return cfg, fmt.Errorf("forum: protect: BodyLimit %d is negative", cfg.BodyLimit)
	}
	if cfg.ReferrerPolicy == "" {
		cfg.ReferrerPolicy = d.ReferrerPolicy
	}
	return cfg, nil
}

// guards are Protect's checks, built once from a valid configuration.
type guards struct {
	cfg           ProtectConfig
	cross         *http.CrossOriginProtection
	secure, limit echo.MiddlewareFunc
}

// wrap puts the guards in front of next, in the order ToMiddleware gives.
func (g *guards) wrap(next echo.HandlerFunc) echo.HandlerFunc {
	limited := g.limit(next)
	adminChain := g.admin(limited)
	withHeaders := g.secure(func(c echo.Context) error {
		if err := g.checkWrite(c.Request()); err != nil {
			return err
		}
		if g.isAdmin(c.Path()) {
			return adminChain(c)
		}
		return limited(c)
	})
	return func(c echo.Context) error {
		if g.cfg.Skipper(c) {
			return next(c)
		}
		if g.isAdmin(c.Path()) {
			// Operators' calls behind the dashboard's login, refused or
			// not, are no more forum traffic than the dashboard's own.
			timeseries.Skip(c.Response())
		}
		return withHeaders(c)
	}
}

// checkWrite refuses a state-changing request from another origin (403)
// or with a body that is not JSON (415).
func (g *guards) checkWrite(r *http.Request) error {
	if safeMethod(r.Method) {
		return nil
	}
	if err := g.cross.Check(r); err != nil {
		return echo.NewHTTPError(http.StatusForbidden, "cross-origin request refused")
	}
	if hasBody(r) {
		return requireJSON(r)
	}
	return nil
}

// admin puts AdminAuth in front of next, or answers 403 when there is
// none.
func (g *guards) admin(next echo.HandlerFunc) echo.HandlerFunc {
	if g.cfg.AdminAuth == nil {
		return func(echo.Context) error {
			return echo.NewHTTPError(http.StatusForbidden, g.cfg.AdminOffMessage)
		}
	}
	return g.cfg.AdminAuth(next)
}

// isAdmin reports whether a route is under AdminPrefix.
func (g *guards) isAdmin(route string) bool {
	return route == g.cfg.AdminPrefix || strings.HasPrefix(route, g.cfg.AdminPrefix+"/")
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// hasBody reports whether a request carries a body or may: a chunked body
// has no declared length.
func hasBody(r *http.Request) bool {
	return r.ContentLength != 0 && r.Body != nil && r.Body != http.NoBody
}

var errNotJSON = echo.NewHTTPError(http.StatusUnsupportedMediaType, "the body must be JSON, sent as Content-Type: application/json")

// requireJSON accepts application/json, with no parameter but a UTF-8
// charset.
func requireJSON(r *http.Request) error {
	mt, params, err := mime.ParseMediaType(r.Header.Get(echo.HeaderContentType))
	if err != nil || mt != echo.MIMEApplicationJSON {
		return errNotJSON
	}
	for k, v := range params {
		if k != "charset" || !strings.EqualFold(v, "utf-8") {
			return errNotJSON
		}
	}
	return nil
}
