module github.com/pulse-dev/pulse/internal/testenv/browsertest

go 1.26.0

require (
	github.com/chromedp/cdproto v0.159.0
	github.com/chromedp/chromedp v0.23.0
	github.com/gomodule/redigo v1.9.3
	github.com/pulse-dev/pulse v0.0.0-00010101000000-000000000000
)

require (
	github.com/go-echarts/go-echarts/v2 v2.6.7 // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	github.com/mna/redisc v1.4.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
)

replace github.com/pulse-dev/pulse => ../../..
