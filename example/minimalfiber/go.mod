module github.com/pulse-dev/pulse/example/minimalfiber

go 1.26.0

require (
	github.com/gofiber/fiber/v2 v2.52.15
	github.com/gomodule/redigo v1.9.3
	github.com/pulse-dev/pulse v0.0.0-00010101000000-000000000000
	github.com/pulse-dev/pulse/pulsefiber v0.0.0-00010101000000-000000000000
)

require (
	github.com/andybalholm/brotli v1.1.0 // indirect
	github.com/go-echarts/go-echarts/v2 v2.6.7 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/klauspost/compress v1.17.9 // indirect
	github.com/mattn/go-colorable v0.1.13 // indirect
	github.com/mattn/go-isatty v0.0.20 // indirect
	github.com/mattn/go-runewidth v0.0.16 // indirect
	github.com/mna/redisc v1.4.0 // indirect
	github.com/rivo/uniseg v0.2.0 // indirect
	github.com/valyala/bytebufferpool v1.0.0 // indirect
	github.com/valyala/fasthttp v1.51.0 // indirect
	github.com/valyala/tcplisten v1.0.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.28.0 // indirect
)

replace (
	github.com/pulse-dev/pulse => ../../
	github.com/pulse-dev/pulse/pulsefiber => ../../pulsefiber
)
