module github.com/pulse-dev/pulse/example

go 1.26.0

require github.com/pulse-dev/pulse v0.0.0-00010101000000-000000000000

require github.com/pulse-dev/pulse/entity v0.0.0-00010101000000-000000000000

require github.com/pulse-dev/pulse/pulseecho v0.0.0-00010101000000-000000000000

require github.com/pulse-dev/pulse/promexport v0.0.0-00010101000000-000000000000

require github.com/pulse-dev/pulse/internal/testenv/mariadbtest v0.0.0-00010101000000-000000000000

require (
	github.com/alicebob/miniredis/v2 v2.40.0
	github.com/go-sql-driver/mysql v1.10.1
	github.com/gomodule/redigo v1.9.3
	github.com/jackc/pgx/v5 v5.12.0
	github.com/labstack/echo/v4 v4.16.0
	github.com/mna/redisc v1.4.0
	github.com/prometheus/client_golang v1.23.2
	github.com/pulse-dev/pulse/internal/testenv/pgtest v0.0.0-00010101000000-000000000000
	modernc.org/sqlite v1.61.1
)

require (
	filippo.io/edwards25519 v1.2.0 // indirect
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/dustin/go-humanize v1.1.0 // indirect
	github.com/go-echarts/go-echarts/v2 v2.6.7 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	github.com/kr/text v0.2.0 // indirect
	github.com/labstack/gommon v0.5.0 // indirect
	github.com/mattn/go-colorable v0.1.15 // indirect
	github.com/mattn/go-isatty v0.0.24 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/ncruces/go-strftime v1.1.0 // indirect
	github.com/prometheus/client_model v0.6.2 // indirect
	github.com/prometheus/common v0.67.5 // indirect
	github.com/prometheus/procfs v0.19.2 // indirect
	github.com/remyoudompheng/bigfft v0.0.0-20230129092748-24d4a6f8daec // indirect
	github.com/valyala/bytebufferpool v1.0.0 // indirect
	github.com/valyala/fasttemplate v1.2.2 // indirect
	github.com/yuin/gopher-lua v1.1.1 // indirect
	go.yaml.in/yaml/v2 v2.4.3 // indirect
	golang.org/x/crypto v0.53.0 // indirect
	golang.org/x/net v0.56.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.41.0 // indirect
	golang.org/x/time v0.15.0 // indirect
	google.golang.org/protobuf v1.36.11 // indirect
	modernc.org/libc v1.79.0 // indirect
	modernc.org/mathutil v1.7.1 // indirect
	modernc.org/memory v1.12.1 // indirect
)

replace github.com/pulse-dev/pulse => ..

replace github.com/pulse-dev/pulse/pulseecho => ../pulseecho

replace github.com/pulse-dev/pulse/promexport => ../promexport

replace github.com/pulse-dev/pulse/internal/testenv/mariadbtest => ../internal/testenv/mariadbtest

replace github.com/pulse-dev/pulse/internal/testenv/pgtest => ../internal/testenv/pgtest

replace github.com/pulse-dev/pulse/entity => ../entity
