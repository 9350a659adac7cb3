// Package cleaner trims Pulse time series in Redis to their newest samples
// and forgets series that have become empty.
//
//	clean, err := cleaner.New(cleaner.Config{Pool: pool})
//	if err != nil { ... }
//	clean.Start(ctx)
//	defer clean.Close()
//
// # A pass
//
// A pass pages through the known set (known:) in lexical order, Config.PageSize
// members at a time. Paging by the last member seen rather than by index means
// members removed during the pass cannot make it skip others. Precision p is
// cleaned only every max(1, p/60) passes: a day-wide series gains one field a
// day and need not be looked at every minute.
//
// Each due series is cleaned by one Lua script, so the work of a whole page
// goes out in one pipeline: one Redis round trip per page, not several per
// series. The script deletes the fields older than the newest Config.Samples
// buckets (compared as numbers, never as strings), drops the oldest of the
// rest if more than Config.Samples remain (fields stamped ahead of this
// machine's clock, say), and removes the series from the known set once its
// hash is empty. Because the script runs atomically, a Recorder writing at the
// same time either writes first, so the hash is not empty and stays listed,
// or writes after, and its own ZADD lists the series again: the writer wins.
//
// Every instance of an app may run a cleaner. A short lock in Redis
// (pulse:cleaner:lock, held for one pass) keeps them from cleaning at once;
// an instance that finds it taken skips that pass. Should the lock expire in
// the middle of a long pass, two cleaners only repeat harmless work.
package cleaner
