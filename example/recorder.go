package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/pulse-dev/pulse/adapter"
	"github.com/pulse-dev/pulse/cleaner"
	"github.com/pulse-dev/pulse/timeseries"
)

// defaultSpillDir is where hits wait when Redis is unreachable at
// shutdown, relative to the working directory.
const defaultSpillDir = "pulse-spill"

// openRecorder connects to Redis and opens the recorder, counting the
// requests slower than each of slow, and the cleaner that trims its
// series; their closes are added to c. It returns the Redis pool too,
// for the forum's counters.
func openRecorder(opts options, slow []time.Duration, c *closers, logger *slog.Logger) (*timeseries.Recorder, timeseries.Pool, error) {
	if opts.SpillDir == "" {
		opts.SpillDir = defaultSpillDir
	}
	pool, closeRedis, err := openRedis(opts.RedisURL, opts.RedisServer, logger)
	if err != nil {
		return nil, nil, err
	}
	c.add(func(context.Context) error { closeRedis(); return nil })

	rec, err := timeseries.NewRecorder(timeseries.Config{Pool: pool, SpillDir: opts.SpillDir, SlowThresholds: slow, Clock: opts.clock})
	if err != nil {
		return nil, nil, err
	}
	// Added before everything but Redis, so it closes after them: no hit
	// recorded before shutdown is lost while Redis is up.
	c.add(func(ctx context.Context) error {
		err := rec.Close(ctx)
		logger.Info("recorder closed", adapter.DefaultHitsName, seriesTotal(rec, adapter.DefaultHitsName))
		return err
	})

	clean, err := cleaner.New(cleaner.Config{Recorder: rec})
	if err != nil {
		return nil, nil, err
	}
	c.add(clean.Close)
	return rec, pool, nil
}

// seriesTotal is the hits one series has recorded in this process.
func seriesTotal(rec *timeseries.Recorder, name string) int64 {
	for _, s := range rec.Totals() {
		if s.Name == name {
			return s.Hits
		}
	}
	return 0
}
