package fromstore

import (
	"context"
	"fmt"
	"math"
	"strconv"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/redisconn"
	"github.com/pulse-dev/pulse/timeseries"
)

// ScoreKey is the hash of the kept scores of the series name at
// precision p: a field per settled bucket (its start, as count hashes
// have), its score as a decimal of six significant digits.
func ScoreKey(schema timeseries.Schema, p int, name string) string {
	return schema.Prefix + "score:" + strconv.Itoa(p) + ":" + name
}

// scoreScript keeps the scores of one series' buckets that have none yet
// and returns the score kept for each: the first writer's, whichever
// instance it was. It trims the hash itself once it holds twice the
// window, so a series keeps no more than that whether a cleaner runs or
// not, and lets a series no longer scanned expire.
//
// KEYS: score hash. ARGV: oldest bucket to keep, seconds to live, then
// bucket and score pairs, an empty score asking only for the one kept.
// Returns the scores kept, in the pairs' order (empty where none is).
var scoreScript = redisconn.NewScript(`
local out = {}
for i = 3, #ARGV, 2 do
  if ARGV[i + 1] ~= '' then redis.call('HSETNX', KEYS[1], ARGV[i], ARGV[i + 1]) end
end
for i = 3, #ARGV, 2 do
  out[#out + 1] = redis.call('HGET', KEYS[1], ARGV[i])
end
if redis.call('HLEN', KEYS[1]) > ` + strconv.Itoa(2*Window) + ` then
  local cutoff = tonumber(ARGV[1])
  for _, f in ipairs(redis.call('HKEYS', KEYS[1])) do
    local t = tonumber(f)
    if t and t < cutoff then redis.call('HDEL', KEYS[1], f) end
  end
end
redis.call('EXPIRE', KEYS[1], ARGV[2])
return out
`)

// formatScore is how a score is kept: six significant digits, as every
// reader then sees it.
func formatScore(v float64) string {
	if math.IsNaN(v) {
		return ""
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// keepScores sends the scores of settled buckets, per series, and returns
// those Redis keeps, the first writer's: one script call per series, one
// round trip per node.
func keepScores(ctx context.Context, r *redisconn.Router, schema timeseries.Schema, p int, oldest int64,
	todo map[string]map[int64]float64) (map[string]map[int64]float64, error) {
	names := make([]string, 0, len(todo))
	cmds := make([]redisconn.Cmd, 0, len(todo))
	order := make([][]int64, 0, len(todo))
	ttl := int64(2*Window+2) * int64(p)
	for name, byBucket := range todo {
		args := make([]any, 0, 2+2*len(byBucket))
		args = append(args, oldest, ttl)
		buckets := make([]int64, 0, len(byBucket))
		for b, v := range byBucket {
			args = append(args, b, formatScore(v))
			buckets = append(buckets, b)
		}
		names = append(names, name)
		order = append(order, buckets)
		cmds = append(cmds, scoreScript.Cmd([]string{ScoreKey(schema, p, name)}, args...))
	}
	if len(cmds) == 0 {
		return nil, nil
	}
	out := make(map[string]map[int64]float64, len(cmds))
	var firstErr error
	for i, rep := range r.DoContext(ctx, cmds, redisconn.Options{Timeout: redisconn.ReadTimeout(ctx)}) {
		vals, err := redis.Strings(rep.Value, rep.Err)
		if err == nil && len(vals) != len(order[i]) {
			err = fmt.Errorf("%d scores for %d buckets", len(vals), len(order[i]))
		}
		if err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("forecast: keep the scores of %q at %d: %w", names[i], p, err)
			}
			continue
		}
		kept := make(map[int64]float64, len(vals))
		for j, v := range vals {
			if x, err := strconv.ParseFloat(v, 64); err == nil {
				kept[order[i][j]] = x
			}
		}
		out[names[i]] = kept
	}
	return out, firstErr
}
