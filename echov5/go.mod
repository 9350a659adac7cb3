module github.com/pulse-dev/pulse/echov5

go 1.26.0

require (
	github.com/gomodule/redigo v1.9.3
	github.com/labstack/echo/v5 v5.4.4
	github.com/pulse-dev/pulse v0.0.0-00010101000000-000000000000
)

require (
	github.com/go-echarts/go-echarts/v2 v2.6.7 // indirect
	github.com/mna/redisc v1.4.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/text v0.41.0 // indirect
	golang.org/x/time v0.15.0 // indirect
)

replace github.com/pulse-dev/pulse => ../
