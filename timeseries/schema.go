package timeseries

// Schema names the Redis keys of a set of series. The zero value gives
// exactly the keys of the original design: hashes
// "count:<precision>:<name>" and the sorted set "known:".
type Schema struct {
	// Prefix is put before every key, so several apps can share one Redis.
	Prefix string
	// Precisions are the bucket widths in seconds, each > 0, no repeats,
	// at most 16. Nil means those of the "Redis in Action" design: 5 s,
	// 1 min, 5 min, 1 h, 5 h and 1 day.
	Precisions []int
}
