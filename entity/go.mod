module github.com/pulse-dev/pulse/entity

go 1.26.0

require (
	github.com/gomodule/redigo v1.9.3
	github.com/mna/redisc v1.4.0
	github.com/pulse-dev/pulse v0.0.0-00010101000000-000000000000
	github.com/pulse-dev/pulse/internal/testenv/mariadbtest v0.0.0-00010101000000-000000000000
	github.com/pulse-dev/pulse/internal/testenv/pgtest v0.0.0-00010101000000-000000000000
	modernc.org/sqlite v1.61.1
)

require (
	filippo.io/edwards25519 v1.2.0 // indirect
	github.com/dustin/go-humanize v1.1.0 // indirect
	github.com/go-sql-driver/mysql v1.10.1 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/pgx/v5 v5.12.0 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	github.com/mattn/go-isatty v0.0.24 // indirect
	github.com/ncruces/go-strftime v1.1.0 // indirect
	github.com/remyoudompheng/bigfft v0.0.0-20230129092748-24d4a6f8daec // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.41.0 // indirect
	modernc.org/libc v1.79.0 // indirect
	modernc.org/mathutil v1.7.1 // indirect
	modernc.org/memory v1.12.1 // indirect
)

replace (
	github.com/pulse-dev/pulse => ../
	github.com/pulse-dev/pulse/internal/testenv/mariadbtest => ../internal/testenv/mariadbtest
	github.com/pulse-dev/pulse/internal/testenv/pgtest => ../internal/testenv/pgtest
)
