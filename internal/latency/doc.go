// Package latency counts request durations in log-scale histograms that
// merge by adding: the bins, encoding and quantiles of the durations
// package timeseries records next to its hit counters. It does not talk
// to Redis; timeseries writes the fields and internal/series reads them.
//
// # Use
//
// One Mapping per configuration. A histogram counts durations in its
// bins and gives them as hash fields to write:
//
//	m, err := latency.NewMapping(latency.Config{}) // 5 %, 10 µs to 10 min
//	h := latency.NewHistogram(m)
//	h.Add(time.Since(start))
//	for _, f := range h.Fields() {
//		// f.Op == latency.Add: HINCRBY key f.Name f.Value
//		// latency.Lower, latency.Raise: keep the smaller, the larger
//	}
//
// A reader decodes the hashes of the buckets it wants, merges them and
// asks for quantiles:
//
//	win := latency.NewHistogram(m)
//	for _, fields := range buckets { // HGETALL of each bucket
//		b, err := latency.Decode(m, fields)
//		...
//		win.Merge(b) // twelve 5 s buckets make exactly their minute
//	}
//	p99, mean := win.Quantile(0.99), win.Mean()
//
// # Accuracy
//
// Quantiles use the nearest rank (Rank): the q-quantile of n durations
// is the ⌈q·n⌉-th smallest, the smallest for q = 0. Quantile finds the
// bin holding that rank and reports the bin's value, so whatever the
// durations and however many buckets were merged, a quantile whose rank
// falls in a tracked bin is within the relative error α of the exact one
// (Config.Accuracy: 5 % by default, 1 % to 5 %). Rank 1 and rank n are
// the exact min and max. Bins grow by a factor of at most
// (1+α')/(1-α'), α' a hair below α so that rounding to whole nanoseconds
// stays inside α. The tests find at most 0.94 %, 1.91 % and 4.37 %
// against the exact quantiles of four distributions at 1, 2 and 5 %.
//
// Durations below Config.Min (default 10 µs, negative ones as 0) count
// in the underflow bin u, those above Config.Max (default 10 min) in the
// overflow bin o. They are in the count, sum, min and max like any
// other, but a quantile whose rank falls among them reports Config.Min
// (the exact value is in [min, Min)) or Config.Max (it is in
// (Max, max]): only these bounds hold there.
//
// # Merging
//
// A histogram is its bins' counts (integers), count, sum (nanoseconds),
// min and max. Bins of one Mapping are the same everywhere, so merging
// histograms of any instances and any run of buckets is adding counts,
// counts and sums and taking the min of mins and max of maxes; the merge
// is bin for bin the histogram of all the durations together. Mappings
// of another accuracy or range do not merge (ErrMapping).
//
// On the request path timeseries keeps its own per-stripe, per-second
// bins and asks only for a duration's slot (Mapping.Slot, a table lookup,
// no allocation); its flusher adds those bins to a histogram with
// AddSlots.
//
// # Keys in Redis
//
// One hash per series, precision and bucket, in the slot of the
// series' count key (see series.Schema.LatKeyPrefix):
//
//	lat:{count:<precision>:<name>}:<bucket start>
//
// with fields "0", "1", ... for the bins (k names bin lo+k, lo the bin
// of Config.Min), u and o for underflow and overflow, n the count, s the
// sum in nanoseconds, min and max. Bins, u, o, n and s are added with
// HINCRBY, as hits are. Min and max cannot be: the flush script already
// sent per batch does, for each,
//
//	local v = redis.call('HGET', key, 'min')
//	if not v or tonumber(v) > new then redis.call('HSET', key, 'min', new) end
//
// (max alike; Lua numbers are doubles, exact for durations up to 104
// days). Unlike HINCRBY this is idempotent, and the batch markers that
// make increments exactly-once cover it too. The flush script in fact
// reads the bins and n with one HMGET and writes them added with one
// HSET, so a key costs four commands whatever its bins. The same script
// sets EXPIREAT bucket start + 121 × precision, so old buckets go without
// a cleaner. A window is an HGETALL per bucket, pipelined.
//
// Measured (timeseries.TestRouteMemoryAtFullDepth, Redis 7.0, whose
// hash-max-listpack-entries is 512 by default, not the 128 assumed
// below): 447 KiB per route at 5 %, 1.0 MiB at 2 %, 2.2 MiB at 1 %,
// count hashes included.
//
// Why a hash per bucket: Redis keeps a hash of at most 128 fields
// (hash-max-listpack-entries) of short values as a listpack, a few bytes
// per field; a bigger one becomes a dict at some 64 bytes per field.
// A bucket of the default mapping has about 60 to 110 non-empty bins, so
// it stays a listpack. One hash per series and precision, with fields
// "<bucket>:<bin>", would hold 120 buckets of them and be a dict.
//
// # Memory per route
//
// The budget: 512 KiB per route at 6 precisions (5 s to 1 day) of 120
// buckets, fed 200 requests/s of log-normal durations, median 20 ms,
// σ = 1. A bucket of precision p holds N = 200·p durations. A bin b,
// which holds the fraction P_b of such durations, is empty with chance
// (1-P_b)^N, so a bucket has Σ_b 1-(1-P_b)^N non-empty bins: roughly
// those with P_b·N ≥ 1. A bin spans 0.099 in ln d, σ = 1, so a day
// (N = 17.3 M) fills about ±5.2 σ: 10.4/0.099 ≈ 105 bins. Bytes: a
// listpack field of a bin is its name (2 bytes below 128, else 3) and
// its count (2 bytes up to 127, 3 to 4095, 5 to 8 M, 6 beyond); n, s,
// min and max add about 40; rounded up to a jemalloc size class. Each
// key adds 144: its dict entry (32), object (16), name (48 for a 31-byte
// name), expiry entry (32) and two table slots (16). For the default
// mapping (TestMemoryEstimate, BenchmarkMemoryEstimate; the bin counts
// checked against drawn buckets by TestExpectedBins):
//
//	precision  N/bucket   bins  bytes/bucket  ×120
//	5 s            1000   58.3      464      55680
//	1 min         12000   73.9      528      63360
//	5 min         60000   82.3      592      71040
//	1 h          720000   93.9      784      94080
//	5 h         3600000  100.7      784      94080
//	1 day      17280000  106.9      912     109440
//	                                        487680 B = 476 KiB
//
// against 5.4 MiB for one hash per precision. The budget holds at 5 %
// only: at 2 % and 1 % a bucket has 130 to 260 and 230 to 500 bins,
// past 128; with hash-max-listpack-entries raised to 1024 a route
// takes about 1.0 and 1.9 MiB, without it 9 and 17 MiB. Finer accuracy
// wants fewer buckets at the coarse precisions.
package latency
