package adaptertest

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/pulse-dev/pulse/timeseries"
)

// HTTP is an Adapter's Start for a framework on net/http: build returns
// the app as an http.Handler (routes built with Route.HTTP, or the
// framework's own for KindError), and HTTP serves it on a loopback port.
// A panic that reaches the server is not logged.
//
//	adaptertest.Run(t, pool, adaptertest.Adapter{Name: "chi", Start: adaptertest.HTTP(func(app adaptertest.App) (http.Handler, error) {
//		r := chi.NewRouter()
//		… one counting middleware per app.Recorders, r.Method(rt.Method, rt.Path, rt.HTTP()) per app.Routes …
//		return r, nil
//	})})
func HTTP(build func(app App) (http.Handler, error)) func(App) (Server, error) {
	return func(app App) (Server, error) {
		h, err := build(app)
		if err != nil {
			return nil, err
		}
		s := &httpServer{}
		s.ts = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s.served.Add(1)
			defer s.served.Done()
			h.ServeHTTP(w, r)
		}))
		s.ts.Config.ErrorLog = log.New(io.Discard, "", 0)
		s.ts.Start()
		return s, nil
	}
}

// httpServer is HTTP's Server: the app behind a count of the requests in
// it, which a hijacked connection's handler leaves only when it returns.
type httpServer struct {
	ts     *httptest.Server
	served sync.WaitGroup
}

func (s *httpServer) URL() string { return s.ts.URL }

func (s *httpServer) Close() {
	s.ts.Close()
	s.served.Wait()
}

// served is an app the adapter serves for a row, with the row's client.
type served struct {
	Server
	client *http.Client
	once   sync.Once
}

// serve has the adapter serve app until wait or the end of the test.
func (k *kit) serve(t testing.TB, app App) *served {
	t.Helper()
	srv, err := k.adapter.Start(app)
	if err != nil {
		t.Fatal(err)
	}
	s := &served{Server: srv, client: &http.Client{
		Transport:     &http.Transport{MaxIdleConnsPerHost: 8},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
	t.Cleanup(s.wait)
	return s
}

// serveRoutes serves routes counted by recs.
func (k *kit) serveRoutes(t testing.TB, recs []*timeseries.Recorder, routes []Route) *served {
	t.Helper()
	return k.serve(t, App{Recorders: recs, Routes: routes})
}

// wait stops the server once every request sent has left the app, and
// so the adapter, which may record after the client has its answer:
// after a hijack, a panic, a streamed body.
func (s *served) wait() {
	s.once.Do(func() {
		s.client.CloseIdleConnections()
		s.Close()
	})
}

// do sends method and target with the header pairs, and returns the
// answer with its body read: nil when there was none (a panic's closed
// connection).
func (s *served) do(t testing.TB, method, target string, header ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, s.URL()+target, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// hit sends method and target and returns the status answered, 0 for
// none.
func (s *served) hit(t testing.TB, method, target string, header ...string) int {
	t.Helper()
	if resp := s.do(t, method, target, header...); resp != nil {
		return resp.StatusCode
	}
	return 0
}
