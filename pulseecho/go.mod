module github.com/pulse-dev/pulse/pulseecho

go 1.26.0

require (
	github.com/gomodule/redigo v1.9.3
	github.com/labstack/echo/v4 v4.16.0
	github.com/pulse-dev/pulse v0.0.0-00010101000000-000000000000
)

require (
	github.com/go-echarts/go-echarts/v2 v2.6.7 // indirect
	github.com/labstack/gommon v0.5.0 // indirect
	github.com/mattn/go-colorable v0.1.15 // indirect
	github.com/mattn/go-isatty v0.0.24 // indirect
	github.com/mna/redisc v1.4.0 // indirect
	github.com/valyala/bytebufferpool v1.0.0 // indirect
	github.com/valyala/fasttemplate v1.2.2 // indirect
	golang.org/x/crypto v0.53.0 // indirect
	golang.org/x/net v0.56.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.41.0 // indirect
	golang.org/x/time v0.15.0 // indirect
)

replace github.com/pulse-dev/pulse => ..
