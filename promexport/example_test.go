package promexport_test

import (
	"log"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/pulse-dev/pulse/promexport"
	"github.com/pulse-dev/pulse/timeseries"
)

// An app serves its recorder's metrics at /metrics.
func ExampleNewCollector() {
	var rec *timeseries.Recorder // the app's recorder
	reg := prometheus.NewRegistry()
	if err := reg.Register(promexport.NewCollector(rec)); err != nil {
		log.Fatal(err)
	}
	e := echo.New()
	e.GET("/metrics", echo.WrapHandler(promhttp.HandlerFor(reg, promhttp.HandlerOpts{})))
}
