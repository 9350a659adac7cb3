package fromstore

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/forecast"
	"github.com/pulse-dev/pulse/internal/redisconn"
	"github.com/pulse-dev/pulse/timeseries"
)

// Record is an incident as kept in Redis: one per event (a root series
// and the related ones that broke with it), written by whichever Scanner
// first saw it and merged by the others. Its ID (start and root series)
// never changes; while it is open only its End, Open, Peak, Related and
// a Kind growing into a level shift do.
type Record struct {
	App       string               `json:"app"`
	Series    string               `json:"series"` // the root series
	Related   []string             `json:"related"`
	Precision int                  `json:"precision"` // seconds
	Kind      forecast.AnomalyKind `json:"kind"`
	Direction forecast.Direction   `json:"direction"`
	Start     int64                `json:"start"` // unix seconds of the first bucket out of band
	End       int64                `json:"end"`   // of the last bucket out of band so far
	Open      bool                 `json:"open"`
	Peak      Peak                 `json:"peak"`
}

// Peak is the bucket of an incident furthest out.
type Peak struct {
	Bucket   int64   `json:"bucket"`
	Observed float64 `json:"observed"`
	Expected float64 `json:"expected"`
	Lo95     float64 `json:"lo95"`
	Hi95     float64 `json:"hi95"`
	Score    float64 `json:"score"`
}

// ID is the record's field in its hash: start and root series, what
// makes two writes of one incident one record.
func (r Record) ID() string { return strconv.FormatInt(r.Start, 10) + ":" + r.Series }

// Has reports whether series is r's root or one of its related series.
func (r Record) Has(series string) bool {
	return r.Series == series || slices.Contains(r.Related, series)
}

// stored is a Record as its script merges it: flat, the related series
// one string, which Lua's JSON keeps as it is (an empty list would come
// back an object).
type stored struct {
	App       string  `json:"app"`
	Series    string  `json:"series"`
	Related   string  `json:"related"`
	Precision int     `json:"precision"`
	Kind      string  `json:"kind"`
	Direction string  `json:"direction"`
	Start     int64   `json:"start"`
	End       int64   `json:"end"`
	Open      bool    `json:"open"`
	Bucket    int64   `json:"bucket"`
	Observed  float64 `json:"observed"`
	Expected  float64 `json:"expected"`
	Lo95      float64 `json:"lo95"`
	Hi95      float64 `json:"hi95"`
	Score     float64 `json:"score"`
}

func (r Record) encode() string {
	p := r.Peak
	b, _ := json.Marshal(stored{App: r.App, Series: r.Series, Related: strings.Join(r.Related, "\n"), Precision: r.Precision,
		Kind: string(r.Kind), Direction: string(r.Direction), Start: r.Start, End: r.End, Open: r.Open,
		Bucket: p.Bucket, Observed: finite(p.Observed), Expected: finite(p.Expected), Lo95: finite(p.Lo95), Hi95: finite(p.Hi95), Score: finite(p.Score)})
	return string(b)
}

func decodeRecord(s string) (Record, error) {
	var st stored
	if err := json.Unmarshal([]byte(s), &st); err != nil {
		return Record{}, fmt.Errorf("forecast: incident record: %w", err)
	}
	r := Record{App: st.App, Series: st.Series, Related: []string{}, Precision: st.Precision, Kind: forecast.AnomalyKind(st.Kind),
		Direction: forecast.Direction(st.Direction), Start: st.Start, End: st.End, Open: st.Open,
		Peak: Peak{Bucket: st.Bucket, Observed: st.Observed, Expected: st.Expected, Lo95: st.Lo95, Hi95: st.Hi95, Score: st.Score}}
	if st.Related != "" {
		r.Related = strings.Split(st.Related, "\n")
	}
	return r, nil
}

// recordCache keeps records decoded by their text: a record changes only
// while its incident is open, so a list read again and again (a
// dashboard's history, a page of api/incidents) decodes each one once.
// The Related slices it hands out are shared: readers must not change
// them.
type recordCache struct {
	mu   sync.Mutex
	byJS map[string]Record
}

// maxCached bounds the cache: past it, it starts afresh.
const maxCached = 50000

var decoded recordCache

func (c *recordCache) get(s string) (Record, error) {
	c.mu.Lock()
	rec, ok := c.byJS[s]
	c.mu.Unlock()
	if ok {
		return rec, nil
	}
	rec, err := decodeRecord(s)
	if err != nil {
		return rec, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byJS == nil || len(c.byJS) >= maxCached {
		c.byJS = make(map[string]Record)
	}
	c.byJS[s] = rec
	return rec, nil
}

func finite(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}

// IncidentKeys are the keys of the incident record at precision p: a hash
// of records by ID, and a sorted set of their IDs by end. Both carry the
// hash tag {p}, so that one script reaches both on a Redis Cluster.
func IncidentKeys(schema timeseries.Schema, p int) (records, ends string) {
	records = schema.Prefix + "incidents:{" + strconv.Itoa(p) + "}"
	return records, records + ":ends"
}

// recordScript writes one record, merged with the one already kept under
// its ID: the later end (and its open state), the peak furthest out, a
// level shift once either says so, the related series of both; the
// start and root are the ID's. It is one command, however many instances
// write the same incident: the record is written once and then merged.
//
// KEYS: records hash, ends sorted set. ARGV: ID, record (JSON).
// Returns the record kept.
var recordScript = redisconn.NewScript(`
local new = cjson.decode(ARGV[2])
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if raw then
  local old = cjson.decode(raw)
  new.start, new.series = old.start, old.series
  if old['end'] > new['end'] then new['end'], new.open = old['end'], old.open end
  if math.abs(old.score) > math.abs(new.score) then
    new.bucket, new.observed, new.expected, new.lo95, new.hi95, new.score =
      old.bucket, old.observed, old.expected, old.lo95, old.hi95, old.score
  end
  if old.kind == 'level_shift' then new.kind = old.kind end
  local seen, all = {}, {}
  for s in string.gmatch(old.related .. '\n' .. new.related, '[^\n]+') do
    if not seen[s] and s ~= new.series then seen[s] = true; all[#all + 1] = s end
  end
  new.related = table.concat(all, '\n')
end
local out = cjson.encode(new)
redis.call('HSET', KEYS[1], ARGV[1], out)
redis.call('ZADD', KEYS[2], new['end'], ARGV[1])
return out
`)

// readScript reads the records whose end is within [ARGV[1], ARGV[2]].
//
// KEYS: records hash, ends sorted set. Returns the records found.
var readScript = redisconn.NewScript(`
local ids = redis.call('ZRANGEBYSCORE', KEYS[2], ARGV[1], ARGV[2])
local out = {}
for i = 1, #ids, 1000 do
  local vals = redis.call('HMGET', KEYS[1], unpack(ids, i, math.min(i + 999, #ids)))
  for j = 1, #vals do
    if vals[j] then out[#out + 1] = vals[j] end
  end
end
return out
`)

// Incidents reads the incidents kept at precision p (in seconds) whose
// end falls in [since, until], in one command: newest end first, the
// worst first among those that end together. It reads what Scanners with
// Keep set wrote. The records' Related slices may be shared with other
// reads: do not change them.
func Incidents(ctx context.Context, st *timeseries.Store, p int, since, until time.Time) ([]Record, error) {
	if err := st.Schema().CheckPrecision(p); err != nil {
		return nil, fmt.Errorf("forecast: incidents: %w", err)
	}
	return readIncidents(ctx, redisconn.NewRouter(st.Pool()), st.Schema(), p, since.Unix(), until.Unix())
}

func readIncidents(ctx context.Context, r *redisconn.Router, schema timeseries.Schema, p int, since, until int64) ([]Record, error) {
	records, ends := IncidentKeys(schema, p)
	rep := r.DoContext(ctx, []redisconn.Cmd{readScript.Cmd([]string{records, ends}, since, until)},
		redisconn.Options{Timeout: redisconn.ReadTimeout(ctx)})[0]
	vals, err := redis.Strings(rep.Value, rep.Err)
	if err != nil {
		return nil, fmt.Errorf("forecast: read incidents at %d: %w", p, err)
	}
	out := make([]Record, 0, len(vals))
	for _, v := range vals {
		rec, err := decoded.get(v)
		if err != nil {
			return nil, err
		}
		out = append(out, rec)
	}
	slices.SortFunc(out, func(a, b Record) int {
		if c := cmp.Compare(b.End, a.End); c != 0 {
			return c
		}
		if c := cmp.Compare(math.Abs(b.Peak.Score), math.Abs(a.Peak.Score)); c != 0 {
			return c
		}
		return strings.Compare(a.ID(), b.ID())
	})
	return out, nil
}
