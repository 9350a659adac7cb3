// Package latency counts request durations in log-scale histograms that
// merge by adding: the bins, encoding and quantiles of the durations
// package timeseries records next to its hit counters. It does not talk
// to Redis; timeseries writes the fields and its internal/series reads them.
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
// # Bins
//
// The bins are base-2 exponential buckets on seconds, those of
// Prometheus native histograms and OpenTelemetry exponential histograms:
// at scale s, bin i holds the durations in (2^((i-1)/2^s), 2^(i/2^s)]
// seconds. The scale follows from Config.Accuracy: the coarsest whose
// bins keep every duration within α of its bin's value, scale 3 (ratio
// 2^(1/8), 4.3 %) for the default 5 %, 5 for 2 % and 6 for 1 %. Each
// bin's top is kept in whole nanoseconds, worked out exactly, so a
// histogram exports to either format bucket for bucket: Index is the
// Prometheus bucket index, and OpenTelemetry's is one less.
//
// # Accuracy
//
// Quantiles use the nearest rank (Rank): the q-quantile of n durations
// is the ⌈q·n⌉-th smallest, the smallest for q = 0. Quantile finds the
// bin holding that rank and reports the bin's value, so whatever the
// durations and however many buckets were merged, a quantile whose rank
// falls in a tracked bin is within the relative error α of the exact one
// (Config.Accuracy: 5 % by default, 1 % to 5 %). Rank 1 and rank n are
// the exact min and max.
//
// The bins from the one holding Config.Min (default 10 µs) to the one
// holding Config.Max (default 10 min) are tracked. Durations at or below
// the lower bound of Min's bin (negative ones as 0) count in the
// underflow bin u, the formats' zero bucket, whose threshold is that
// bound (Mapping.ZeroThreshold); those above the top of Max's bin count
// in the overflow bin o. They are in the count, sum, min and max like
// any other, but a quantile whose rank falls among them reports the
// threshold (the exact value is in [min, threshold]) or the top of Max's
// bin (it is in (top, max]): only these bounds hold there.
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
// series' count key (see series.Keys.LatKeyPrefix):
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
// BENCHMARKS.md has the memory per route as measured in Redis
// (timeseries.TestRouteMemoryAtFullDepth).
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
// those with P_b·N ≥ 1. TestMemoryEstimate works this out per precision
// from the listpack's bytes per field and the key's overhead, and
// TestExpectedBins checks the count of non-empty bins against drawn
// buckets. At 5 % a day bucket keeps fewer than 128 fields, so every
// bucket stays a listpack; at 2 % and 1 % buckets hold hundreds of bins
// and want hash-max-listpack-entries raised, or fewer buckets kept at
// the coarse precisions.
package latency
