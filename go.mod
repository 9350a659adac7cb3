module github.com/pulse-dev/pulse

go 1.26.0

require (
	github.com/go-echarts/go-echarts/v2 v2.6.7
	github.com/gomodule/redigo v1.9.3
	github.com/mna/redisc v1.4.0
	golang.org/x/sync v0.24.0
)

require github.com/stretchr/testify v1.11.1 // indirect
