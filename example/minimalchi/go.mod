module github.com/pulse-dev/pulse/example/minimalchi

go 1.26.0

require (
	github.com/go-chi/chi/v5 v5.5.0
	github.com/gomodule/redigo v1.9.3
	github.com/pulse-dev/pulse v0.0.0-00010101000000-000000000000
	github.com/pulse-dev/pulse/pulsechi v0.0.0-00010101000000-000000000000
)

require (
	github.com/go-echarts/go-echarts/v2 v2.6.7 // indirect
	github.com/mna/redisc v1.4.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
)

replace (
	github.com/pulse-dev/pulse => ../..
	github.com/pulse-dev/pulse/pulsechi => ../../pulsechi
)
