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
// A Meter counts a finished request, an atomic add per series, in:
//
//   - HitsConfig.HitsName ("hits"): every request, with its duration and
//     its visitor;
//   - with HitsConfig.Routes, RouteSeries: "<METHOD> <route template>" as
//     the router names the template ("GET /posts/:id", "GET /posts/{id}"),
//     never the raw path, with the duration. A method outside the
//     standard set is OtherMethod ("OTHER /posts/:id"); a request no
//     route matched (the router's own 404 and 405) counts in
//     HitsConfig.UnmatchedName ("unmatched"), and so does a template no
//     series name can hold;
//   - with HitsConfig.StatusClasses, StatusClassName of the status
//     ("status:2xx" … "status:5xx", "status:other"), and with both, the
//     route's class: "GET /posts/:id status:5xx", "unmatched status:4xx";
//   - an app-named series (a SeriesName hook).
//
// Names are checked once and cached (at most MaxCachedNames per method
// and for app-named series; past it they are still counted), and every
// name shares the Recorder's cap: a client cannot create keys. A name
// is copied once, when it is first cached, so a hook may return a view
// into a buffer its framework reuses (fasthttp's).
//
// # A request
//
// An adapter declares its config as a type of HitsConfig[C], C its
// framework's context, and builds a Meter from it once, with the Glue
// that reads a visitor's address and User-Agent through the framework
// (HTTP, for a context that holds an *http.Request). Per request, it:
//
//  1. asks Meter.Skip (the app's Skipper), and passes a request it skips
//     on untouched;
//  2. calls Meter.Begin, and puts a Writer (NewWriter) in the request's
//     writer chain: handed to the handler, or under the framework's own
//     response type where timeseries.Skip finds it through Unwrap (or
//     keeps the mark itself, as a framework without net/http writers
//     must);
//  3. runs the handler chain, recording in a deferred call, so that a
//     panic is counted too and goes on up untouched;
//  4. leaves out a request marked with timeseries.Skip (Writer.Skipped);
//     the mark is passed to the writers below, so nested adapters (two
//     Recorders) all leave it out;
//  5. takes the status the client was sent: Writer.Status, or the
//     framework's own record of it (Status). A panic with no status
//     written is 500, a connection hijacked before a status is 101, a
//     handler that wrote nothing is 200, an error returned with nothing
//     written is the status the framework's error handler gives it
//     (or, with HandleError, the one it wrote);
//  6. takes the route template the router matched, "" for none; a
//     router's own 404 or 405 handler is no route, a route whose handler
//     answers 404 is its route;
//  7. calls Meter.Count with the context, the method, the route, the
//     status and Meter.Elapsed(start), and releases the Writer. Count
//     calls the config's hooks for the series and the visitor.
//
// A request on a known route allocates nothing in Count. Configuration
// errors are found once, when the middleware is built (HitsConfig.Meter),
// and an adapter's HitsWithConfig panics on them (Must) while its
// ToMiddleware returns them, as Echo's own middleware does.
package adapter
