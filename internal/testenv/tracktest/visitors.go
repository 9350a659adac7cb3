package tracktest

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/testenv/harness"
	"github.com/pulse-dev/pulse/timeseries"
)

// Flusher is the part of a *timeseries.Recorder the visitor checks use.
type Flusher interface {
	Flush(ctx context.Context) error
}

// Flush flushes rec (the first flush also loads the day's salt, so a
// test flushes once before its requests).
func Flush(t testing.TB, rec Flusher) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), harness.Hang)
	defer cancel()
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

// dayVisitors is PFCOUNT of name's visitors in the 1-day bucket of unix
// second at, after a flush of rec.
func dayVisitors(t testing.TB, do func(cmd string, args ...any) any, rec Flusher, name string, at int64) int64 {
	t.Helper()
	Flush(t, rec)
	key, _ := timeseries.Schema{}.VisitorKey(86400, name, timeseries.BucketStart(at, 86400))
	n, err := redis.Int64(do("PFCOUNT", key), nil)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

const (
	forgedAgent = "same-browser/1.0"
	forgedUsers = 7
)

func forgedAddr(i int) string { return "203.0.113." + strconv.Itoa(i+1) }

// ForgedRequests are the requests of the visitor tests: one client (one
// connection address and User-Agent) forging a different public
// X-Forwarded-For address in each, and naming one of 7 app ids in
// ?user=.
func ForgedRequests(n int) []*http.Request {
	out := make([]*http.Request, n)
	for i := range out {
		req := httptest.NewRequest(http.MethodGet, "/?user="+strconv.Itoa(i%forgedUsers), nil)
		req.RemoteAddr = "127.0.0.1:40000"
		req.Header.Set("X-Forwarded-For", forgedAddr(i))
		req.Header.Set("User-Agent", forgedAgent)
		out[i] = req
	}
	return out
}

// ForgedClient is the one visitor of ForgedRequests when the app trusts
// no header: the connection's address.
func ForgedClient() []timeseries.Visitor {
	return []timeseries.Visitor{{Addr: "127.0.0.1", UserAgent: forgedAgent}}
}

// ForgedAddrs are the visitors of ForgedRequests(n) when the app trusts
// X-Forwarded-For: one per forged address.
func ForgedAddrs(n int) []timeseries.Visitor {
	out := make([]timeseries.Visitor, n)
	for i := range out {
		out[i] = timeseries.Visitor{Addr: forgedAddr(i), UserAgent: forgedAgent}
	}
	return out
}

// ForgedIDs are the visitors of ForgedRequests(n) when the app names
// them by ?user=.
func ForgedIDs(n int) []timeseries.Visitor {
	out := make([]timeseries.Visitor, min(n, forgedUsers))
	for i := range out {
		out[i] = timeseries.Visitor{ID: strconv.Itoa(i)}
	}
	return out
}

// AssertDayVisitors checks, after a flush of rec, that name's 1-day
// bucket of today counts want exactly: as many as a sketch of the same
// visitors, hashed under the day's salt that rec left in Redis, counts.
// A sketch is off the true count by a small random error, which the
// day's random salt draws anew each run: only a sketch of the same ids
// gives the exact figure.
func AssertDayVisitors(t testing.TB, do func(cmd string, args ...any) any, rec Flusher, name string, want []timeseries.Visitor) {
	t.Helper()
	// One reading of the clock names both the day's bucket and its salt.
	now := time.Now().Unix()
	got := dayVisitors(t, do, rec, name, now)
	if n := Sketched(t, do, now, want); got != n {
		t.Errorf("%s: %d visitors today, want %d, the count of a sketch of the %d expected", name, got, n, len(want))
	}
}

// Sketched is what a sketch of vs counts, hashed under the salt of the
// UTC day of unix second at, which a recorder left in Redis: the exact
// count a recorder's sketch of the same visitors must show. It hashes
// them as docs/visitors.md says a recorder does, builds the sketch in a
// key of the test's own, and deletes it.
func Sketched(t testing.TB, do func(cmd string, args ...any) any, at int64, vs []timeseries.Visitor) int64 {
	t.Helper()
	if len(vs) == 0 {
		return 0
	}
	day := timeseries.BucketStart(at, 86400)
	v, err := redis.String(do("GET", "pulse:salt:"+strconv.FormatInt(day, 10)), nil)
	if err != nil {
		t.Fatalf("the salt of day %d: %v", day, err)
	}
	salt, err := hex.DecodeString(v)
	if err != nil || len(salt) != 32 {
		t.Fatalf("the salt of day %d is not 64 hex digits: %q", day, v)
	}
	const key = "test:sketched"
	args := []any{key}
	for _, v := range vs {
		args = append(args, visitorID(salt, v))
	}
	do("DEL", key)
	do("PFADD", args...)
	n, err := redis.Int64(do("PFCOUNT", key), nil)
	if err != nil {
		t.Fatal(err)
	}
	do("DEL", key)
	return n
}

// visitorID is the 8 bytes a recorder adds to a sketch for v: the first
// 8 of SHA-256(salt ‖ kind ‖ length ‖ address ‖ length ‖ User-Agent),
// kind 1, or of the app's id with kind 2 and an empty second field,
// lengths as 4 bytes big-endian.
func visitorID(salt []byte, v timeseries.Visitor) []byte {
	kind, a, b := byte(1), v.Addr, v.UserAgent
	if v.ID != "" {
		kind, a, b = 2, v.ID, ""
	}
	in := append(append([]byte{}, salt...), kind)
	in = append(binary.BigEndian.AppendUint32(in, uint32(len(a))), a...)
	in = append(binary.BigEndian.AppendUint32(in, uint32(len(b))), b...)
	sum := sha256.Sum256(in)
	return sum[:8]
}

// HooksOnlyWithVisitors checks that a middleware works out a request's
// visitor (calls the app's visitor hooks) once a request over a Recorder
// that counts visitors, and never over one with them off. serve serves
// n requests through the middleware over a Recorder with visitors off or
// on, and returns how many times each of its hooks ran.
func HooksOnlyWithVisitors(t *testing.T, serve func(visitorsOff bool, n int) []int) {
	t.Helper()
	const n = 5
	for _, off := range []bool{false, true} {
		want := n
		if off {
			want = 0
		}
		for i, calls := range serve(off, n) {
			if calls != want {
				t.Errorf("DisableVisitors %v: hook %d ran %d times for %d requests, want %d", off, i, calls, n, want)
			}
		}
	}
}
