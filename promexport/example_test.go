package promexport_test

import (
	"log"
	"net/http"

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
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
}
