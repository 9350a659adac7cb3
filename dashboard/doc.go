// Package dashboard serves a live page of an app's traffic, drawn with
// go-echarts, and the JSON API it reads.
//
// # Mounting
//
// Register mounts everything on the root of an Echo group; put
// authentication in front with the group's middleware:
//
//	store, _ := timeseries.NewStore(pool, timeseries.Schema{}, nil)
//	err := dashboard.Register(e.Group("/dashboard", echomw.BasicAuth(check)), dashboard.Config{
//		Store:    store,
//		Health:   rec,      // *timeseries.Recorder: the status strip
//		Entities: counters, // optional: the entity panel
//		Title:    "My app",
//	})
//
// Handler returns the same as a net/http handler rooted at "/", for
// http.StripPrefix. Every URL the page uses is relative to its root, so it
// works behind a reverse proxy that adds a path prefix, and under HTTPS;
// the root without its trailing slash redirects to the root with it.
// Dashboard requests call middleware.Skip, so watching the page does not
// count as traffic. Only GET and HEAD are served: nothing changes state.
//
// # The page
//
// The page charts the busiest series over the last 120 buckets (10
// minutes of 5 s buckets, 2 hours of minutes, … 120 days of days: pick the
// bucket width at the top; 120 samples is what the cleaner keeps), each as
// a line in the viewer's local time with gaps drawn as zeros. The still-open bucket is a dashed segment ending in a hollow
// dot: its count is still growing. A searchable list of every series,
// with its total over the window, pins any series above the busiest ones.
// A status strip shows the recorder's health (Redis up or down, last
// flush, pending and dropped hits), and an entity panel, when Entities is
// set, lists the top entities of a kind by a field and looks one up by id.
//
// The page polls the API every Config.PollInterval and updates in place.
// When the API fails (the server restarts, Redis is down) it keeps the last
// data, shows a notice saying so, and clears it when a poll succeeds.
//
// # Offline assets
//
// The page needs no internet. echarts is fetched at build time from npm
// (the version is pinned in dashboard/assets/package.json) by `make
// assets`, into dashboard/static/echarts.min.js, and embedded with
// go:embed; the file is ignored by git. A binary built without it (a plain
// `go install`) loads echarts from go-echarts' assets host instead and
// says so on the page; EchartsEmbedded reports which one a binary has.
// Embedded files are served with a content hash in their URL and cached
// for good.
//
// # Security
//
// Series names are data: the page puts them into the document only as
// text, and draws tooltips on the canvas, never as HTML. The chart option
// built with go-echarts travels as JSON in a non-executable script element,
// escaped so that no value can close it, and the page's own script starts
// the charts; no inline script runs, so the page is served with a
// Content-Security-Policy that allows scripts from its own origin only
// (plus go-echarts' assets host when echarts is not embedded). Every
// answer carries X-Content-Type-Options: nosniff.
//
// # JSON API
//
// Paths are relative to the root; a series name is one URL-escaped path
// segment ("GET /posts/:id" is GET%20%2Fposts%2F%3Aid).
//
//	GET api/counters                  {"counters":[{"name":"hits","precisions":[5,60,…]}]}
//	GET api/counters/:name?precision=5[&from=&to=|&last=N][&fill=zero]
//	                                  {"name":"hits","precision":5,"samples":[{"time":…,"count":3}],"current":…}
//	GET api/overview?precision=5[&last=120][&n=6][&series=name…]
//	                                  the n busiest series over the last N buckets and the named
//	                                  ones, zero-filled, with the total of every series
//	GET api/health                    the recorder's timeseries.Health
//	GET api/entities                  {"kinds":[{"name":"post","fields":[…]}]}
//	GET api/entities/:kind/:id        {"kind":"post","id":"7","counts":{"views":12,…}}
//	GET api/entities/:kind?ids=1,2,3  {"kind":"post","entities":[{"id":"1","counts":{…}},…]}
//	GET api/entities/:kind/top?field=views[&n=10]
//	                                  {"kind":"post","field":"views","top":[{"id":"7","count":12},…]}
//
// Samples are sorted by time; "current" is the start of the still-open
// bucket. Bad input answers 4xx with {"error":"…"}: a missing, malformed
// or unkept precision, malformed from/to, from after to, or a range too
// large to zero-fill is 400; a series not in the known set, an unknown
// entity kind, or a feature not configured (health, entities) is 404; an
// unknown field, a malformed id, or more than MaxIDs ids is 400; other
// methods than GET and HEAD are 405. A failing backend answers 503.
package dashboard
