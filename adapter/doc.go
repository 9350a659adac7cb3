// Package adapter is what a Pulse adapter for a web framework is made
// of: every rule Pulse's own adapters (Echo v4 and v5, Gin, chi,
// net/http) count by, so that an adapter for another router is the
// router's glue and nothing else, and names, times and skips exactly as
// they do. The dashboard, timeseries.ParseRouteName and the exporters
// read series by these rules.
//
// An app never imports this package: it uses its framework's adapter.
// docs/adapters.md walks through writing one; package adaptertest holds
// the table every adapter passes, to run against a new one.
//
// # The series
//
// A Tracker counts a finished Request, an atomic add per series, in:
//
//   - Config.HitsName ("hits"): every request, with its duration and its
//     visitor;
//   - with Config.Routes, RouteSeries: "<METHOD> <route template>" as the
//     router names the template ("GET /posts/:id", "GET /posts/{id}"),
//     never the raw path, with the duration. A method outside the
//     standard set is OtherMethod ("OTHER /posts/:id"); a request no
//     route matched (the router's own 404 and 405) counts in
//     Config.UnmatchedName ("unmatched"), and so does a template no series
//     name can hold;
//   - with Config.StatusClasses, StatusClassName of the status
//     ("status:2xx" … "status:5xx", "status:other"), and with both, the
//     route's class: "GET /posts/:id status:5xx", "unmatched status:4xx";
//   - an app-named series (Request.Series, from a SeriesName hook).
//
// Names are checked once and cached (at most MaxCachedNames per method
// and for app-named series; past it they are still counted), and every
// name shares the Recorder's cap: a client cannot create keys.
//
// # A request
//
// Per request, an adapter:
//
//  1. asks its Skipper, if the app set one, and passes a request it
//     skips on untouched;
//  2. calls Tracker.Begin, and puts a Writer (NewWriter) in the
//     request's writer chain: handed to the handler, or under the
//     framework's own response type where timeseries.Skip finds it
//     through Unwrap;
//  3. runs the handler chain, recording in a deferred call, so that a
//     panic is counted too and goes on up untouched;
//  4. leaves out a request marked with timeseries.Skip (Writer.Skipped);
//     the mark is passed to the writers below, so nested adapters (two
//     Recorders) all leave it out;
//  5. takes the status the client was sent: Writer.Status, or the
//     framework's own record of it. A panic with no status written is
//     500, a connection hijacked before a status is 101, a handler that
//     wrote nothing is 200;
//  6. takes the route template the router matched, "" for none; a
//     router's own 404 or 405 handler is no route, a route whose handler
//     answers 404 is its route;
//  7. when Tracker.Visits, works out the visitor: the app's VisitorID
//     hook, or ClientVisitor with the app's trusted-proxy rule. Its Addr
//     is an IP address without a port (RemoteAddr): with the port each
//     connection of one client would be a visitor, and a forwarding
//     header is read only where the app trusts it;
//  8. calls Tracker.Record with the Request, Tracker.Elapsed(start) as
//     its Duration, and releases the Writer.
//
// A request on a known route allocates nothing in Record. Configuration
// errors are found once, when the middleware is built (New), and an
// adapter's HitsWithConfig panics on them (Must) while its ToMiddleware
// returns them, as Echo's own middleware does.
package adapter
