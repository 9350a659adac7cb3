// Package dashtest is the fixture the dashboard's tests and the browser
// tests (internal/browsertest) share: a dashboard, mounted under
// /dashboard/ on a net/http app that pulsehttp counts, reading a real
// redis-server (internal/redistest) written by a real Recorder on a
// manual clock, with in-memory entity counters.
//
// New records KnownTraffic (hostile series names included) and leaves the
// clock at Now; Options turn parts off or change the dashboard's Config:
//
//	f := dashtest.New(t, dashtest.Options{})
//	r := dashtest.Get(t, f.Root+"api/series")
//	f.Record(t, dashtest.Hit{Name: "hits", At: 10 * time.Minute, N: 2})
//	ov := dashtest.GetOverview(t, f.Root+"api/overview?precision=5")
//
// Everything is stopped when the test ends. Only _test.go files import
// this package: it starts processes and fails tests, which no library
// code may do.
package dashtest
