// Package series is package timeseries' rules for the series a Recorder
// writes: the names of their keys and known-set members, the checks on
// names and precisions, bucket arithmetic and zero-filling, and the
// recorder's defaults. Only timeseries imports it; the other packages
// read these rules through timeseries' Schema and functions, so each rule
// has one implementation.
//
// The names of one series at one precision:
//
//	s, _ := series.Keys{}.Normalize()      // the default precisions, no prefix
//	key := s.CountKey(60, "GET /posts/:id")  // "count:60:GET /posts/:id"
//	m := series.Member(60, "GET /posts/:id") // "60:GET /posts/:id", in s.KnownKey()
//	p, name, ok := series.ParseMember(m)     // 60, "GET /posts/:id", true
//
// Buckets, and a window zero-filled the way a chart draws it:
//
//	start := series.BucketStart(1700000007, 5)            // 1700000005
//	points := series.FillZero(samples, 5, from, to)       // one point per bucket
package series
