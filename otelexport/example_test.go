package otelexport_test

import (
	"context"
	"log"

	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/sdk/metric"

	"github.com/pulse-dev/pulse/otelexport"
	"github.com/pulse-dev/pulse/timeseries"
)

// An app's recorder exported by OTLP/HTTP, to the endpoint the standard
// OTEL_EXPORTER_OTLP_* variables name, every minute.
func Example() {
	ctx := context.Background()
	var rec *timeseries.Recorder // the app's, from timeseries.NewRecorder
	exp, err := otlpmetrichttp.New(ctx)
	if err != nil {
		log.Fatal(err)
	}
	reader := metric.NewPeriodicReader(exp, metric.WithProducer(otelexport.NewProducer(rec)))
	provider := metric.NewMeterProvider(metric.WithReader(reader))
	defer func() { _ = provider.Shutdown(ctx) }()
	// The app's own instruments may share the provider.
}
