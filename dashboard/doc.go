// Package dashboard serves a live page of an app's traffic, drawn with
// go-echarts, and the JSON API it reads.
//
// # Mounting
//
// Handler returns the dashboard as a net/http handler rooted at "/". An
// app mounts it under a prefix with its framework's mount package, behind
// its own login if it has one: mount.Dashboard of
// github.com/pulse-dev/pulse/pulsehttp/mount (net/http and chi),
// pulseecho/mount (Echo v4) or echov5/mount (Echo v5). The mounts are apart from the counting packages, so that an app
// that only counts links no dashboard:
//
//	h, err := mount.Dashboard(mux, "/dashboard", dashboard.Config{
//		Store:    rec.Store(), // what the recorder writes; or timeseries.NewStore
//		Health:   rec,      // *timeseries.Recorder: the status strip and api/health
//		Entities: counters, // optional: the entity panel
//		Title:    "My app",
//	}, login)
//	if err != nil {
//		return err
//	}
//	srv := &http.Server{Handler: pulsehttp.Hits(rec)(h)}
//
// Every request the dashboard answers is marked with timeseries.Skip, so
// watching the page is not counted as traffic by any Pulse middleware.
// A mount runs Guard first, before the login: it marks every request
// under the prefix as not counted, so neither watching the page nor being
// refused by its login counts as traffic, and it sets the security
// headers on every answer, a 401 of the login included. Mount is what
// every framework's mount is built on.
//
// Every URL the page uses is relative to its root, so it works behind a
// reverse proxy that adds a path prefix, and under HTTPS; the root without
// its trailing slash redirects to the root with it. Only GET and HEAD are
// served: nothing changes state.
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
// flush, pending and dropped hits) and the unique visitors of the "hits"
// series over the window with its hits per visitor; the hits chart draws
// the visitors of each bucket as a second line (on the hits' axis when
// counting, on one of its own at the right in hits per second). At a
// precision that keeps no visitors (5 s), or when none were recorded, the
// strip says so. An entity panel, only when Entities is set, lists the
// top entities of a kind by a field and looks one up by id. When Alerts is
// set (an alert evaluator's Handler), a banner at the top lists the firing
// and pending alerts, their count shows in the header, and a click on one
// charts its series with the alert's window shaded. The charts zoom with the mouse wheel, all together, share
// one crosshair, and show either hits per bucket or hits per second. The
// precision, pinned series, zoomed window and that choice live in the
// page's URL, so a view can be bookmarked and shared.
//
// The page polls the API every Config.PollInterval and updates in place.
// When the API fails (the server restarts, Redis is down) it keeps the last
// data, shows a notice saying so, and clears it when a poll succeeds.
//
// # Offline assets
//
// echarts (EchartsVersion, pinned in dashboard/assets/package.json) is
// never committed. The page takes Config.Echarts when the app gives its
// own copy; else the copy `make assets` fetched from npm into
// dashboard/static/echarts.min.js before a build of this repository
// (EchartsEmbedded reports it); else it loads EchartsCDN, an immutable
// versioned URL, checked by the browser against EchartsIntegrity, and
// Handler logs one line saying so and how to embed. Served files carry a
// content hash in their URL and are cached for good.
//
// # Security
//
// Series names are data: the page puts them into the document only as
// text, and draws tooltips on the canvas, never as HTML. The page's
// settings travel as JSON in a non-executable script element, escaped so
// that no value can close it; they are data only. The page's own script
// is a set of ES modules in static/, one per part of the page (main.js
// loads the rest; options.js builds every echarts option, while go-echarts
// gives how each chart is initialised), loaded with <script type="module">
// from the dashboard, each import carrying the imported file's version. No
// inline script runs, so the page is served with a
// Content-Security-Policy that allows scripts from its own origin only
// (plus the CDN's origin when echarts is not embedded). Every answer
// carries X-Content-Type-Options: nosniff, X-Frame-Options: DENY and
// Referrer-Policy: same-origin. Failures answer a generic text; their
// details go to Config.Logger.
//
// Reads are bounded: last=N and a zero-filled from/to cover at most
// Config.MaxBuckets buckets, and at most Config.ConcurrentReads series
// reads run at once.
//
// api/overview and api/routes rank every series over their default
// window. The dashboard keeps that window of each series in memory
// between requests (9 bytes a bucket: 120 buckets of 20,000 series
// take 22 MB a precision), and a poll reads again only the buckets that
// may have changed since the last: the open one, those closed for less
// than a few flush intervals, and each series' oldest bucket kept, to see
// the cleaner trim it. Any failed read, a series new to the known set,
// the clock going back or past the window, and one window's span since
// the last full read, read every bucket again; so does a window other
// than the default. A write landing long after its bucket closed (a
// recorder catching up after an outage only it saw) shows at the next
// full read.
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
//	GET api/durations/:name?precision=5[&from=&to=|&last=N][&q=0.5,0.95,0.999]
//	                                  {"name":…,"precision":5,"from":…,"to":…,"current":…,
//	                                  "buckets":[{"time":…,"count":…,"mean":…,"min":…,"max":…,
//	                                  "p50":…,"p90":…,"p99":…}],"window":{"count":…,…}}
//	GET api/durations/:name?…&heatmap=1 the same and "heatmap":{"rows":[{"label":"< 1 ms","from":0,
//	                                  "to":1},…],"counts":[[…],…],"hits":[…],"errors_4xx":[…],
//	                                  "errors_5xx":[…]}, one entry per bucket
//	GET api/visitors/:name?precision=60[&from=&to=|&last=N]
//	                                  {"name":…,"precision":60,"from":…,"to":…,"current":…,
//	                                  "buckets":[{"time":…,"visitors":…}],"window":{"visitors":…,"hits":…}}
//	GET api/routes?precision=5[&last=120][&sort=hits|errors|p99][&n=100]
//	                                  {"precision":5,…,"routes":[{"name":"GET /posts/:id","hits":…,
//	                                  "errors_4xx":…,"errors_5xx":…,"timed":…,"mean":…,"p50":…,"p90":…,
//	                                  "p99":…,"max":…}]}
//	GET api/health                    the recorder's timeseries.Health with "ok" and "problem":
//	                                  503 when Redis does not answer or no flush succeeded for
//	                                  3 flush intervals while hits are pending
//	GET api/alerts[?state=firing][&transitions=20]
//	                                  what Config.Alerts answers: {"rules":[{"name":…,"alerts":[…]}],
//	                                  "transitions":[…],"health":{…}}; 404 when it is nil
//	GET api/entities                  {"kinds":[{"name":"post","fields":[…]}]}
//	GET api/entities/:kind/:id        {"kind":"post","id":"7","counts":{"views":12,…}}
//	GET api/entities/:kind?ids=1,2,3  {"kind":"post","entities":[{"id":"1","counts":{…}},…]}
//	GET api/entities/:kind/top?field=views[&n=10]
//	                                  {"kind":"post","field":"views","top":[{"id":"7","count":12},…]}
//
// Samples are sorted by time; "current" is the start of the still-open
// bucket.
//
// Durations are in milliseconds. api/durations answers every bucket of its
// window (at most MaxBuckets, default last=120), an empty one with zeros,
// and the window merged; quantiles are 0.5, 0.9 and 0.99 unless q names
// up to MaxQuantiles others in (0, 1], each keyed "p" and its percent to
// at most four decimals (p50, p95, p99.9, p100), in the order asked for.
// api/visitors answers a series' unique visitors, HyperLogLog estimates
// (about 0.81 % standard error): per bucket of the window (at most
// MaxBuckets, default last=120; 0 where none were recorded), and for the
// window as a whole the union of its buckets' sketches, each visitor
// counted once however many buckets saw them (not the sum of the
// buckets), with the window's hits beside it for hits per visitor. One
// read serves it: a PFCOUNT per bucket and one over all of them,
// pipelined to the one node that holds them. Visitors are kept at 1 min,
// 5 min, 1 h and 1 day (timeseries.Schema.VisitorPrecisions); another
// precision of the schema answers 400.
// api/routes is the RED table of the window: the route series ("<METHOD>
// /…", "OTHER /…", "unmatched") with their hits, the counts of their
// "<route> status:4xx" and "status:5xx" series, and their durations'
// quantiles; hits, status:* and app-named series are left out. It sorts
// largest first by hits (default), errors (4xx + 5xx) or p99, ties by
// hits then name, and keeps n in 1..MaxRoutes (default DefaultRoutes). Bad input answers 4xx with {"error":"…"}: a missing, malformed
// or unkept precision, malformed from/to, from after to, or a range too
// large to zero-fill is 400, and so is a precision that keeps no
// visitors for api/visitors; a series not in the known set, or whose
// name's braces keep it from keeping visitors, an unknown
// entity kind, or a feature not configured (health, entities) is 404; an
// unknown field, a malformed id, more than MaxIDs ids, a bad quantile,
// sort or n is 400; other
// methods than GET and HEAD are 405. A failing backend, or no turn among
// ConcurrentReads within Timeout, answers 503.
package dashboard
