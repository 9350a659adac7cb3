package adaptertest_test

import (
	"fmt"
	"net/http"

	"github.com/pulse-dev/pulse/adapter/adaptertest"
	"github.com/pulse-dev/pulse/pulsehttp"
)

// An adapter on net/http builds its app as an http.Handler; HTTP serves
// it on a loopback port. In the adapter's test, adaptertest.Run(t, pool,
// a) runs the table against it.
func ExampleHTTP() {
	a := adaptertest.Adapter{Name: "net/http", Start: adaptertest.HTTP(func(app adaptertest.App) (http.Handler, error) {
		mux := http.NewServeMux()
		for _, rt := range app.Routes {
			mux.Handle(rt.Method+" "+rt.Path, rt.HTTP())
		}
		var h http.Handler = mux
		for i := len(app.Recorders) - 1; i >= 0; i-- {
			cfg := pulsehttp.HitsConfig{Recorder: app.Recorders[i], Routes: true, StatusClasses: true}
			if hooks := app.Hooks; hooks != nil {
				cfg.SeriesName, cfg.VisitorID, cfg.Skipper = hooks.Request()
			}
			mw, err := cfg.ToMiddleware()
			if err != nil {
				return nil, err
			}
			h = mw(h)
		}
		return h, nil
	})}
	fmt.Println(a.Name, a.ReturnsErrors)
	// Output: net/http false
}

// A route's Status is what a KindStatus handler answers: its Code, or
// the number its path ends with.
func ExampleRoute_Status() {
	fixed := adaptertest.Route{Method: "POST", Path: "/items", Kind: adaptertest.KindStatus, Code: 201}
	param := adaptertest.Route{Method: "GET", Path: "/status/{code}", Kind: adaptertest.KindStatus}
	fmt.Println(fixed.Status("/items"), param.Status("/status/503"), param.Status("/status/x"))
	// Output: 201 503 400
}
