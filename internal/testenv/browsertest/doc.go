// Package browsertest drives the dashboard's page in headless Chromium
// against a real redis-server. It is a module of its own so that chromedp
// stays out of the module graph of Pulse's users; it reaches the dashboard
// only through its exported API. Its fixture, shared with the dashboard's
// own tests, is internal/dashtest.
//
//	cd internal/browsertest && GOWORK=off go test -count=1 ./...
package browsertest
